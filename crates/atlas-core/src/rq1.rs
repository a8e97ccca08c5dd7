//! RQ1 — how much audit conclusions change when the same content is evaluated under different input
//! conditions (seed `000_…` §3.4, §5.1, §5.2, C.1, C.2, Tables 8, 9 and 11).
//!
//! Three analyses on a loaded bundle:
//!
//! - [`wording_sensitivity`] (§5.1, C.1, Table 8): per model × condition × statement unit, whether the
//!   Selection changes across equivalent wordings (templates), the matched comparison of every k-of-n
//!   wording subset with k identical repeats on the same units, pairwise disagreement rates, and the
//!   unit-bootstrap and statement-cluster-bootstrap 95% intervals of the paired difference;
//! - [`wording_rank_stability`] (§5.1, Table 9, Figure 3): per-model score and rank ranges across
//!   wordings, and each wording's Kendall τ-b, inversion rate and maximum displacement against the
//!   pooled ranking;
//! - [`condition_reversals`] (§5.2, C.2, Table 11): the unordered model pairs whose ordering reverses
//!   across conditions, with 1-pp and 2-pp tie zones and paired statement-cluster bootstrap intervals.
//!
//! [`analyze_rq1`] runs all three into one [`Rq1Report`] (the CLI's JSON and the app's worker).
//!
//! # Reading the bundle
//! A **unit** is one model × condition × statement, over the conditions with a Selection readout. Its
//! **wordings** are the condition's templates `T_c` (a template nested in a condition belongs to it
//! only; crossed templates belong to every condition), taken by position: wording `j` is the `j`-th
//! template of `T_c` in declaration order, and `n = min_c |T_c|`. For the wording comparison each
//! wording is read at **repeat 0** (one call per prompt); the identical-call control reads repeats
//! `0..k` of the control wording (default: wording 0). Any facet other than model, condition, template,
//! statement and repeat is read at its level 0. A comparison uses only units whose compared Selections
//! are all valid (Abstain is missing, §B.2).
//!
//! Scores in [`wording_rank_stability`] and [`condition_reversals`] use the unit values of the chosen
//! [`RepeatPolicy`] (see [`crate::stats`]); their ranks, τ-b, inversions and reversal δ read the
//! ranking keys of the bundle's score direction ([`crate::direction`]; the scores themselves by
//! default). All rates are fractions; fields named `_pp` are percentage
//! points.

use serde::{Deserialize, Serialize};

use crate::abstain::{reference_abstain, ScoreAbstain};
use crate::bundle::{Audit, NO_RESPONSE_CODE};
use crate::direction::ScoreDirection;
use crate::rank::{
    kendall_tau_b, max_displacement, pairwise_inversions, pairwise_inversions_with_tie_zone,
    Inversions,
};
use crate::resample::{bootstrap_mean, cluster_bootstrap, percentile_interval, DrawStream};
use crate::stats::{
    ber_by_model_condition, condition_mean, reference_scores, unit_counts, RepeatPolicy, UnitCounts,
};

/// Settings of the RQ1 analyses. Defaults follow the seed (C.1: 20,000 unit-bootstrap resamples;
/// Table 11: 10,000 statement-cluster draws).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rq1Options {
    /// Subset size `k` of the matched comparison (C.1 uses 3 of 5); clamped to `n`.
    pub k: usize,
    /// Position of the wording whose repeats form the identical-call control.
    pub control_wording: usize,
    /// Unit-bootstrap resamples for the paired difference (C.1: 20,000).
    pub unit_bootstrap_reps: usize,
    /// Statement-cluster bootstrap draws (C.1 statement binding; Table 11: 10,000).
    pub cluster_bootstrap_reps: usize,
    /// Seed of every draw ([`DrawStream`]); stream 1 is the unit bootstrap, stream 2 the statement
    /// bootstrap of the wording difference, stream 3 the reversal bootstrap.
    pub seed: u64,
    /// How repeats enter the scores of the rank and reversal analyses.
    pub policy: RepeatPolicy,
}

impl Default for Rq1Options {
    fn default() -> Self {
        Rq1Options {
            k: 3,
            control_wording: 0,
            unit_bootstrap_reps: 20_000,
            cluster_bootstrap_reps: 10_000,
            seed: 20_260_716,
            policy: RepeatPolicy::AllResponses,
        }
    }
}

/// Why an RQ1 analysis cannot run on a bundle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rq1Error {
    /// Fewer than two wordings per condition: nothing to compare.
    #[error("the bundle has {0} wording(s) per Selection condition; at least 2 are needed")]
    TooFewWordings(usize),
    /// No condition with a Selection readout.
    #[error("the bundle has no condition with a Selection readout")]
    NoSelectionCondition,
    /// Fewer than two models.
    #[error("the bundle has {0} model(s); at least 2 are needed to compare orderings")]
    TooFewModels(usize),
}

/// Reads binary Selections of the dense matrix by role coordinates.
struct Grid<'a> {
    audit: &'a Audit,
    /// Strides of model, condition, template, statement, repeat (0 when the facet is absent).
    stride: [usize; 5],
    /// Per Selection condition, its template indices in declaration order (`T_c`).
    wordings: Vec<(usize, Vec<usize>)>,
    n_wordings: usize,
    models: usize,
    statements: usize,
    repeats: usize,
}

impl<'a> Grid<'a> {
    fn new(audit: &'a Audit) -> Result<Self, Rq1Error> {
        let stride_of = |facet: Option<usize>| {
            facet
                .and_then(|f| audit.axes.iter().find(|a| a.facet == f))
                .map_or(0, |a| a.stride)
        };
        let stride = [
            stride_of(Some(audit.model_facet)),
            stride_of(audit.condition_facet),
            stride_of(audit.template_facet),
            stride_of(Some(audit.statement_facet)),
            stride_of(audit.repeat_facet),
        ];
        let wordings: Vec<(usize, Vec<usize>)> = audit
            .conditions
            .iter()
            .enumerate()
            .filter(|(_, c)| c.has_selection)
            .map(|(c, _)| {
                let ts = (0..audit.templates.len())
                    .filter(|&t| audit.templates[t].condition.is_none_or(|tc| tc == c))
                    .collect();
                (c, ts)
            })
            .collect();
        if wordings.is_empty() {
            return Err(Rq1Error::NoSelectionCondition);
        }
        let n_wordings = wordings.iter().map(|(_, ts)| ts.len()).min().unwrap_or(0);
        let models = audit.facet_len(Some(audit.model_facet));
        if models < 2 {
            return Err(Rq1Error::TooFewModels(models));
        }
        Ok(Grid {
            audit,
            stride,
            wordings,
            n_wordings,
            models,
            statements: audit.facet_len(Some(audit.statement_facet)),
            repeats: audit.facet_len(audit.repeat_facet),
        })
    }

    /// Bias evidence of (model, condition, template, statement, repeat): `Some(true/false)`, or `None`
    /// for Abstain or no response.
    fn evidence(&self, m: usize, c: usize, t: usize, s: usize, r: usize) -> Option<bool> {
        let index = m * self.stride[0]
            + c * self.stride[1]
            + t * self.stride[2]
            + s * self.stride[3]
            + r * self.stride[4];
        let code = *self.audit.selection.get(index)?;
        if code == NO_RESPONSE_CODE {
            return None;
        }
        let value = self
            .audit
            .file
            .responses
            .selection
            .values
            .get(code as usize)?;
        value.evidence.map(|e| e == 1)
    }
}

/// Changed-unit count of one k-of-n wording subset (Table 8).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubsetChange {
    /// Wording positions in the subset.
    pub wordings: Vec<usize>,
    /// Matched units whose Selection differs between at least two wordings of the subset.
    pub changed: usize,
    /// `changed / matched units`, a fraction.
    pub rate: f64,
}

/// Disagreement of one pair of observations (two wordings, or two identical calls).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairDisagreement {
    /// First observation: a wording position (template position within the condition) or a repeat
    /// index.
    pub a: usize,
    /// Second observation, of the same kind, `a < b`.
    pub b: usize,
    /// Fraction of matched units whose two Selections differ.
    pub rate: f64,
}

/// Summary of a list of rates: mean, min, max (fractions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateRange {
    /// Mean of the rates.
    pub mean: f64,
    /// Smallest rate.
    pub min: f64,
    /// Largest rate.
    pub max: f64,
}

fn rate_range(rates: impl Iterator<Item = f64>) -> Option<RateRange> {
    let v: Vec<f64> = rates.collect();
    if v.is_empty() {
        return None;
    }
    Some(RateRange {
        mean: v.iter().sum::<f64>() / v.len() as f64,
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Wording sensitivity of Selections (seed `000_…` §5.1, C.1, Table 8).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WordingSensitivity {
    /// Wordings per condition (`n`) and subset size (`k`).
    pub wordings: usize,
    /// Wordings per subset (`k`, the number of identical calls of the control).
    pub k: usize,
    /// Units (model × Selection condition × statement) valid at repeat 0 under all `n` wordings.
    pub units: usize,
    /// Of those, units whose Selection changes at least once across the `n` wordings.
    pub changed_any: usize,
    /// `changed_any / units`.
    pub changed_any_rate: f64,
    /// The matched comparison; `None` when the bundle has fewer than `k` repeats (no control).
    pub matched: Option<MatchedComparison>,
}

/// The equal-observation comparison of k-of-n wording subsets with k identical calls (C.1, Table 8).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchedComparison {
    /// Control wording position; its repeats `0..k` are the identical calls.
    pub control_wording: usize,
    /// Units valid under all `n` wordings (repeat 0) and all `k` control calls.
    pub units: usize,
    /// Every k-of-n wording subset, in lexicographic order.
    pub subsets: Vec<SubsetChange>,
    /// Mean, min and max of the subsets' changed-unit rates.
    pub subset_rates: RateRange,
    /// Units whose `k` identical calls do not all agree, and their rate.
    pub control_changed: usize,
    /// `control_changed / units`, a fraction.
    pub control_rate: f64,
    /// Mean subset rate minus control rate, in percentage points.
    pub difference_pp: f64,
    /// Unit-bootstrap 95% interval of the paired difference (pp), `unit_bootstrap_reps` resamples.
    pub unit_bootstrap_ci_pp: Option<(f64, f64)>,
    /// Statement-cluster bootstrap 95% interval (all models and conditions of a statement resampled
    /// together), `cluster_bootstrap_reps` draws.
    pub statement_bootstrap_ci_pp: Option<(f64, f64)>,
    /// Pairwise disagreement across wording pairs and across identical-call pairs.
    pub wording_pairs: Vec<PairDisagreement>,
    /// Mean, min and max of [`MatchedComparison::wording_pairs`]' rates.
    pub wording_pair_rates: RateRange,
    /// Disagreement of every pair of the `k` identical calls (repeat indices) of the control wording.
    pub repeat_pairs: Vec<PairDisagreement>,
    /// Mean, min and max of [`MatchedComparison::repeat_pairs`]' rates.
    pub repeat_pair_rates: RateRange,
}

/// All k-subsets of `0..n` in lexicographic order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if k == 0 || k > n {
        return out;
    }
    let mut current: Vec<usize> = (0..k).collect();
    loop {
        out.push(current.clone());
        let Some(i) = (0..k).rev().find(|&i| current[i] != i + n - k) else {
            return out;
        };
        current[i] += 1;
        for j in i + 1..k {
            current[j] = current[j - 1] + 1;
        }
    }
}

fn changed(values: &[bool]) -> bool {
    values.iter().any(|&v| v != values[0])
}

/// Wording sensitivity of Selections (seed `000_…` §5.1, C.1, Table 8). See the module docs for how
/// units, wordings and the identical-call control are read.
///
/// # Errors
/// [`Rq1Error`] when the bundle has fewer than two models or wordings, or no Selection condition.
pub fn wording_sensitivity(
    audit: &Audit,
    options: &Rq1Options,
) -> Result<WordingSensitivity, Rq1Error> {
    let grid = Grid::new(audit)?;
    let n = grid.n_wordings;
    if n < 2 {
        return Err(Rq1Error::TooFewWordings(n));
    }
    let k = options.k.clamp(2, n);
    let control = options.control_wording.min(n - 1);
    let has_control = grid.repeats >= k;

    // Per unit: the n wording Selections at repeat 0, the k control calls, and the statement.
    struct Unit {
        statement: usize,
        wordings: Vec<bool>,
        calls: Option<Vec<bool>>,
    }
    let mut units = Vec::new();
    for m in 0..grid.models {
        for (c, ts) in &grid.wordings {
            for s in 0..grid.statements {
                let wordings: Option<Vec<bool>> = ts[..n]
                    .iter()
                    .map(|&t| grid.evidence(m, *c, t, s, 0))
                    .collect();
                let Some(wordings) = wordings else {
                    continue;
                };
                let calls: Option<Vec<bool>> = if has_control {
                    (0..k)
                        .map(|r| grid.evidence(m, *c, ts[control], s, r))
                        .collect()
                } else {
                    None
                };
                units.push(Unit {
                    statement: s,
                    wordings,
                    calls,
                });
            }
        }
    }
    let changed_any = units.iter().filter(|u| changed(&u.wordings)).count();
    let n_units = units.len();
    let matched = if has_control {
        let matched: Vec<&Unit> = units.iter().filter(|u| u.calls.is_some()).collect();
        let m_units = matched.len();
        let all_subsets = subsets(n, k);
        let frac = |count: usize| {
            if m_units == 0 {
                f64::NAN
            } else {
                count as f64 / m_units as f64
            }
        };
        let subset_results: Vec<SubsetChange> = all_subsets
            .iter()
            .map(|sub| {
                let count = matched
                    .iter()
                    .filter(|u| {
                        let picked: Vec<bool> = sub.iter().map(|&j| u.wordings[j]).collect();
                        changed(&picked)
                    })
                    .count();
                SubsetChange {
                    wordings: sub.clone(),
                    changed: count,
                    rate: frac(count),
                }
            })
            .collect();
        let control_changed = matched
            .iter()
            .filter(|u| u.calls.as_deref().is_some_and(changed))
            .count();
        // Per-unit paired difference: mean over subsets of the changed indicator minus the control's.
        let diffs: Vec<f64> = matched
            .iter()
            .map(|u| {
                let subset_mean = all_subsets
                    .iter()
                    .filter(|sub| {
                        let picked: Vec<bool> = sub.iter().map(|&j| u.wordings[j]).collect();
                        changed(&picked)
                    })
                    .count() as f64
                    / all_subsets.len() as f64;
                let control = f64::from(u8::from(u.calls.as_deref().is_some_and(changed)));
                100.0 * (subset_mean - control)
            })
            .collect();
        let subset_rates = rate_range(subset_results.iter().map(|s| s.rate)).unwrap_or(RateRange {
            mean: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        });
        let control_rate = frac(control_changed);
        let mut unit_stream = DrawStream::with_stream(options.seed, 1);
        let unit_ci = bootstrap_mean(&diffs, options.unit_bootstrap_reps, &mut unit_stream)
            .ok()
            .and_then(|draws| percentile_interval(&draws, 0.95));
        // Statement clusters: units grouped by statement.
        let mut by_statement: Vec<(f64, usize)> = vec![(0.0, 0); grid.statements];
        for (u, d) in matched.iter().zip(&diffs) {
            by_statement[u.statement].0 += d;
            by_statement[u.statement].1 += 1;
        }
        let mut cluster_stream = DrawStream::with_stream(options.seed, 2);
        let statement_ci = cluster_bootstrap(
            grid.statements as u32,
            options.cluster_bootstrap_reps,
            &mut cluster_stream,
            |drawn| {
                let (sum, count) = drawn.iter().fold((0.0, 0usize), |acc, &s| {
                    let (d, c) = by_statement[s as usize];
                    (acc.0 + d, acc.1 + c)
                });
                if count == 0 {
                    f64::NAN
                } else {
                    sum / count as f64
                }
            },
        )
        .ok()
        .and_then(|draws| {
            let finite: Vec<f64> = draws.into_iter().filter(|d| d.is_finite()).collect();
            percentile_interval(&finite, 0.95)
        });
        let pair_rate = |get: &dyn Fn(&Unit, usize) -> bool, a: usize, b: usize| {
            frac(matched.iter().filter(|u| get(u, a) != get(u, b)).count())
        };
        let wording_get = |u: &Unit, j: usize| u.wordings[j];
        let call_get = |u: &Unit, r: usize| u.calls.as_ref().is_some_and(|c| c[r]);
        let wording_pairs: Vec<PairDisagreement> = subsets(n, 2)
            .into_iter()
            .map(|p| PairDisagreement {
                a: p[0],
                b: p[1],
                rate: pair_rate(&wording_get, p[0], p[1]),
            })
            .collect();
        let repeat_pairs: Vec<PairDisagreement> = subsets(k, 2)
            .into_iter()
            .map(|p| PairDisagreement {
                a: p[0],
                b: p[1],
                rate: pair_rate(&call_get, p[0], p[1]),
            })
            .collect();
        let nan_range = RateRange {
            mean: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        };
        Some(MatchedComparison {
            control_wording: control,
            units: m_units,
            subset_rates,
            difference_pp: 100.0 * (subset_rates.mean - control_rate),
            subsets: subset_results,
            control_changed,
            control_rate,
            unit_bootstrap_ci_pp: unit_ci,
            statement_bootstrap_ci_pp: statement_ci,
            wording_pair_rates: rate_range(wording_pairs.iter().map(|p| p.rate))
                .unwrap_or(nan_range),
            wording_pairs,
            repeat_pair_rates: rate_range(repeat_pairs.iter().map(|p| p.rate)).unwrap_or(nan_range),
            repeat_pairs,
        })
    } else {
        None
    };
    Ok(WordingSensitivity {
        wordings: n,
        k,
        units: n_units,
        changed_any,
        changed_any_rate: if n_units == 0 {
            f64::NAN
        } else {
            changed_any as f64 / n_units as f64
        },
        matched,
    })
}

/// Per-model sensitivity and ranking stability across wordings (seed `000_…` §5.1, Table 9).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WordingRankStability {
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// The bundle's score direction: ranks, τ-b, inversions and displacement use its ranking keys
    /// ([`crate::direction`]; scores and ranges stay scores).
    pub direction: ScoreDirection,
    /// Pooled (all-wording) reference score per model (Eq. 4), a fraction.
    pub pooled: Vec<Option<f64>>,
    /// Average rank of each pooled score (1 = best in the bundle's direction).
    pub pooled_ranks: Vec<Option<f64>>,
    /// Per model, the Abstain shares of the cells (model × reference condition) the pooled score
    /// averages ([`crate::abstain`]).
    pub pooled_abstain: Vec<ScoreAbstain>,
    /// `scores[j][m]`: model `m`'s score under wording `j` alone — the mean over reference conditions
    /// of the mean over statements of the unit values at the condition's `j`-th template.
    pub scores: Vec<Vec<Option<f64>>>,
    /// `abstain[j][m]`: the Abstain shares of the cells (model × reference condition at its `j`-th
    /// template) that `scores[j][m]` averages.
    pub abstain: Vec<Vec<ScoreAbstain>>,
    /// `ranks[j][m]`: average ranks under wording `j` (rank 1 = best in the bundle's direction).
    pub ranks: Vec<Vec<Option<f64>>>,
    /// Per model: max − min score across wordings (pp), and the lowest and highest rank.
    pub score_range_pp: Vec<Option<f64>>,
    /// Lowest and highest rank of each model across wordings.
    pub rank_range: Vec<Option<(f64, f64)>>,
    /// Per wording, against the pooled ranking: Kendall τ-b, inversions over unordered model pairs,
    /// maximum rank displacement.
    pub tau_b: Vec<Option<f64>>,
    /// Per wording: inversions over unordered model pairs against the pooled ranking.
    pub inversions: Vec<Option<Inversions>>,
    /// Per wording: the largest displacement of a model's rank from its pooled rank.
    pub max_displacement: Vec<Option<f64>>,
}

/// Per-model score and rank ranges across wordings, and each wording's τ-b, inversion rate and maximum
/// displacement against the pooled ranking (seed `000_…` §5.1, Table 9, Figure 3c).
///
/// # Errors
/// As [`wording_sensitivity`].
pub fn wording_rank_stability(
    audit: &Audit,
    policy: RepeatPolicy,
) -> Result<WordingRankStability, Rq1Error> {
    let grid = Grid::new(audit)?;
    let n = grid.n_wordings;
    if n < 2 {
        return Err(Rq1Error::TooFewWordings(n));
    }
    let units = unit_counts(audit, policy);
    let direction = audit.direction;
    let pooled = reference_scores(audit, &units, None);
    let pooled_ranks = direction.direction.ranks(&pooled);
    let condition_ids = audit.condition_ids();
    let reference: Vec<bool> = audit.conditions.iter().map(|c| c.in_reference).collect();
    let pooled_abstain =
        reference_abstain(&ber_by_model_condition(&units), &reference, &condition_ids);
    let abstain: Vec<Vec<ScoreAbstain>> = (0..n)
        .map(|j| {
            (0..grid.models)
                .map(|m| {
                    ScoreAbstain::of(
                        grid.wordings
                            .iter()
                            .filter(|(c, _)| audit.conditions[*c].in_reference)
                            .map(|(c, ts)| {
                                let mut k = crate::stats::Counts::default();
                                for s in 0..units.statements {
                                    let u = units.counts[units.index(m, *c, ts[j], s)];
                                    k.bias += u.bias;
                                    k.valid += u.valid;
                                    k.abstain += u.abstain;
                                }
                                (condition_ids.get(*c).copied().unwrap_or("?"), k)
                            }),
                    )
                })
                .collect()
        })
        .collect();
    let scores: Vec<Vec<Option<f64>>> = (0..n)
        .map(|j| {
            (0..grid.models)
                .map(|m| {
                    let means: Vec<f64> = grid
                        .wordings
                        .iter()
                        .filter(|(c, _)| audit.conditions[*c].in_reference)
                        .filter_map(|(c, ts)| statement_mean(&units, m, *c, ts[j], None))
                        .collect();
                    (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64)
                })
                .collect()
        })
        .collect();
    let ranks: Vec<Vec<Option<f64>>> = scores
        .iter()
        .map(|s| direction.direction.ranks(s))
        .collect();
    let score_range_pp = (0..grid.models)
        .map(|m| {
            let v: Vec<f64> = scores.iter().filter_map(|s| s[m]).collect();
            (!v.is_empty()).then(|| {
                100.0
                    * (v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                        - v.iter().copied().fold(f64::INFINITY, f64::min))
            })
        })
        .collect();
    let rank_range = (0..grid.models)
        .map(|m| {
            let v: Vec<f64> = ranks.iter().filter_map(|r| r[m]).collect();
            (!v.is_empty()).then(|| {
                (
                    v.iter().copied().fold(f64::INFINITY, f64::min),
                    v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                )
            })
        })
        .collect();
    let (mut tau_b, mut inversions, mut displacement) = (Vec::new(), Vec::new(), Vec::new());
    let pooled_keys = direction.direction.keys(&pooled);
    for j in 0..n {
        let keys = direction.direction.keys(&scores[j]);
        let (x, y): (Vec<f64>, Vec<f64>) = keys
            .iter()
            .zip(&pooled_keys)
            .filter_map(|(a, b)| Some(((*a)?, (*b)?)))
            .unzip();
        tau_b.push(kendall_tau_b(&x, &y));
        inversions.push(pairwise_inversions(&keys, &pooled_keys));
        displacement.push(max_displacement(&ranks[j], &pooled_ranks));
    }
    Ok(WordingRankStability {
        policy,
        direction,
        pooled,
        pooled_ranks,
        pooled_abstain,
        scores,
        abstain,
        ranks,
        score_range_pp,
        rank_range,
        tau_b,
        inversions,
        max_displacement: displacement,
    })
}

/// Mean over statements of the unit values of (m, c, t), with optional statement multiplicities
/// (bootstrap weights); `None` when no statement has a valid unit value.
fn statement_mean(
    units: &UnitCounts,
    m: usize,
    c: usize,
    t: usize,
    weights: Option<&[u32]>,
) -> Option<f64> {
    let mut sum = 0.0;
    let mut total = 0.0;
    for s in 0..units.statements {
        let w = weights.map_or(1.0, |w| f64::from(w[s]));
        if w == 0.0 {
            continue;
        }
        if let Some(z) = units.value(m, c, t, s) {
            sum += w * z;
            total += w;
        }
    }
    (total > 0.0).then(|| sum / total)
}

/// One procedure's (condition's) paired difference for a model pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairDelta {
    /// Condition index and id.
    pub condition: usize,
    /// Condition id (level id).
    pub condition_id: String,
    /// `δ = 100 (key_a − key_b)` in pp, with the ranking key of the bundle's direction
    /// ([`crate::direction`]): the score itself by default, so `δ = 100 (score_a − score_b)` (condition
    /// score = mean over templates of the mean over statements, the inner means of Eq. 4); `δ < 0`
    /// always means model a ranks better under the condition.
    pub delta_pp: f64,
    /// Paired statement-cluster bootstrap 95% interval of δ (pp).
    pub ci_pp: Option<(f64, f64)>,
}

/// A model pair whose ordering reverses across conditions (Table 11 row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reversal {
    /// Model ids, `a < b` alphabetically ignoring case (Table 11: "model_a < model_b alphabetically").
    pub model_a: String,
    /// Model id, after `model_a` alphabetically ignoring case.
    pub model_b: String,
    /// The most negative and the most positive δ with their intervals.
    pub negative: PairDelta,
    /// The most positive δ with its interval.
    pub positive: PairDelta,
    /// The reversal survives a 1-pp / 2-pp tie zone (some δ < −ε and some δ > +ε).
    pub survives_1pp: bool,
    /// The reversal survives a 2-pp tie zone.
    pub survives_2pp: bool,
    /// At least two conditions have bootstrap intervals on opposite sides of zero.
    pub ci_supported: bool,
    /// Every condition's δ.
    pub deltas: Vec<PairDelta>,
}

/// Reversals of model orderings across conditions (seed `000_…` §5.2, C.2, Table 11).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionReversals {
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// The score direction whose ranking keys δ compares.
    pub direction: ScoreDirection,
    /// Seed of the bootstrap streams.
    pub seed: u64,
    /// Bootstrap replicates of each interval.
    pub draws: usize,
    /// Unordered model pairs with a score under at least two conditions.
    pub pairs: usize,
    /// The reversing pairs, in (model_a, model_b) order.
    pub reversals: Vec<Reversal>,
}

/// The unordered model pairs whose Selection ordering reverses at least once across the Selection
/// conditions, with tie zones and paired statement-cluster bootstrap intervals (seed `000_…` §5.2, C.2,
/// Table 11). A pair reverses when some condition has `δ < 0` and another `δ > 0` (strictly). The
/// bootstrap resamples statements with replacement (`draws` replicates, stream 3 of `seed`), the same
/// statements for every model and condition, and recomputes every condition score with the statement
/// multiplicities.
///
/// # Errors
/// [`Rq1Error`] when the bundle has fewer than two models or no Selection condition.
pub fn condition_reversals(
    audit: &Audit,
    policy: RepeatPolicy,
    draws: usize,
    seed: u64,
) -> Result<ConditionReversals, Rq1Error> {
    let grid = Grid::new(audit)?;
    let units = unit_counts(audit, policy);
    let direction = audit.direction;
    let key = |s: f64| direction.direction.key(s);
    let conditions: Vec<usize> = grid.wordings.iter().map(|(c, _)| *c).collect();
    let score = |m: usize, c: usize, weights: Option<&[u32]>| -> Option<f64> {
        let ts = &grid.wordings.iter().find(|(cc, _)| *cc == c)?.1;
        let means: Vec<f64> = ts
            .iter()
            .filter_map(|&t| statement_mean(&units, m, c, t, weights))
            .collect();
        (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64)
    };
    debug_assert!(conditions.iter().all(|&c| {
        (0..grid.models).all(|m| score(m, c, None) == condition_mean(audit, &units, m, c))
    }));
    let point: Vec<Vec<Option<f64>>> = (0..grid.models)
        .map(|m| conditions.iter().map(|&c| score(m, c, None)).collect())
        .collect();

    // Bootstrap: per replicate, every model's score under every condition on the drawn statements.
    let mut stream = DrawStream::with_stream(seed, 3);
    let replicates: Vec<Vec<Vec<Option<f64>>>> =
        cluster_bootstrap(grid.statements as u32, draws, &mut stream, |drawn| {
            let mut weights = vec![0u32; grid.statements];
            for &s in drawn {
                weights[s as usize] += 1;
            }
            (0..grid.models)
                .map(|m| {
                    conditions
                        .iter()
                        .map(|&c| score(m, c, Some(&weights)))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();

    let ids: Vec<String> = audit.model_ids().iter().map(|s| s.to_string()).collect();
    let mut order: Vec<usize> = (0..grid.models).collect();
    // Alphabetical, ignoring case (then byte order to break ties).
    order.sort_by(|&a, &b| {
        ids[a]
            .to_lowercase()
            .cmp(&ids[b].to_lowercase())
            .then(ids[a].cmp(&ids[b]))
    });
    let condition_ids = audit.condition_ids();
    let mut pairs = 0;
    let mut reversals = Vec::new();
    for (i, &a) in order.iter().enumerate() {
        for &b in &order[i + 1..] {
            let deltas: Vec<PairDelta> = conditions
                .iter()
                .enumerate()
                .filter_map(|(k, &c)| {
                    let delta = 100.0 * (key(point[a][k]?) - key(point[b][k]?));
                    let draws_k: Vec<f64> = replicates
                        .iter()
                        .filter_map(|r| Some(100.0 * (key(r[a][k]?) - key(r[b][k]?))))
                        .collect();
                    Some(PairDelta {
                        condition: c,
                        condition_id: condition_ids
                            .get(c)
                            .map_or_else(String::new, |s| s.to_string()),
                        delta_pp: delta,
                        ci_pp: percentile_interval(&draws_k, 0.95),
                    })
                })
                .collect();
            if deltas.len() < 2 {
                continue;
            }
            pairs += 1;
            let (Some(neg), Some(pos)) = (
                deltas
                    .iter()
                    .min_by(|x, y| x.delta_pp.total_cmp(&y.delta_pp)),
                deltas
                    .iter()
                    .max_by(|x, y| x.delta_pp.total_cmp(&y.delta_pp)),
            ) else {
                continue;
            };
            if !(neg.delta_pp < 0.0 && pos.delta_pp > 0.0) {
                continue;
            }
            // Tie zones through the shared inversion rule: the pair is inverted between its most
            // negative and most positive condition once differences within ε count as ties.
            let survives = |zone: f64| {
                pairwise_inversions_with_tie_zone(
                    &[Some(neg.delta_pp / 100.0), Some(0.0)],
                    &[Some(pos.delta_pp / 100.0), Some(0.0)],
                    zone,
                )
                .is_some_and(|inv| inv.inverted == 1)
            };
            let below = deltas
                .iter()
                .any(|d| d.ci_pp.is_some_and(|(_, hi)| hi < 0.0));
            let above = deltas
                .iter()
                .any(|d| d.ci_pp.is_some_and(|(lo, _)| lo > 0.0));
            reversals.push(Reversal {
                model_a: ids[a].clone(),
                model_b: ids[b].clone(),
                negative: neg.clone(),
                positive: pos.clone(),
                survives_1pp: survives(0.01),
                survives_2pp: survives(0.02),
                ci_supported: below && above,
                deltas: deltas.clone(),
            });
        }
    }
    Ok(ConditionReversals {
        policy,
        direction,
        seed,
        draws,
        pairs,
        reversals,
    })
}

/// Everything the three RQ1 analyses compute for one bundle and one set of options (the JSON of
/// `atlas analyze-rq1 --json`, and what the app's worker sends back).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rq1Report {
    /// Bundle id.
    pub bundle: String,
    /// The options the report was computed with.
    pub options: Rq1Options,
    /// Wording sensitivity (§5.1, C.1, Table 8).
    pub wording_sensitivity: WordingSensitivity,
    /// Ranking stability across wordings (§5.1, Table 9).
    pub rank_stability: WordingRankStability,
    /// Reversals across conditions (§5.2, C.2, Table 11).
    pub reversals: ConditionReversals,
    /// Descriptive η² over the condition × template grid with model × statement units (seed C.3,
    /// Table 12; [`crate::variance`]), when the bundle declares both facets.
    pub variance: Option<crate::variance::VarianceComponents>,
}

/// Runs [`wording_sensitivity`], [`wording_rank_stability`] and [`condition_reversals`] with one set
/// of options, and the condition × template variance components.
///
/// # Errors
/// [`Rq1Error`] when the bundle cannot support them (fewer than two models or wordings, no Selection
/// condition).
pub fn analyze_rq1(audit: &Audit, options: Rq1Options) -> Result<Rq1Report, Rq1Error> {
    analyze_rq1_with_progress(audit, options, &mut |_, _| {})
}

/// [`analyze_rq1`] reporting progress: `progress(done, 3)` before each of the three analyses
/// (`done` = analyses finished) and `progress(3, 3)` at the end.
///
/// # Errors
/// As [`analyze_rq1`].
pub fn analyze_rq1_with_progress(
    audit: &Audit,
    options: Rq1Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Rq1Report, Rq1Error> {
    progress(0, 3);
    let wording_sensitivity = wording_sensitivity(audit, &options)?;
    progress(1, 3);
    let rank_stability = wording_rank_stability(audit, options.policy)?;
    progress(2, 3);
    let reversals = condition_reversals(
        audit,
        options.policy,
        options.cluster_bootstrap_reps,
        options.seed,
    )?;
    let variance = crate::variance::variance_components(
        audit,
        &["condition", "template"],
        &["model", "statement"],
    )
    .ok();
    progress(3, 3);
    Ok(Rq1Report {
        bundle: audit.metadata().id.clone(),
        options,
        wording_sensitivity,
        rank_stability,
        reversals,
        variance,
    })
}
