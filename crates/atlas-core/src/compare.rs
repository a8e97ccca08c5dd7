//! Compare models (issue 17, item 1): is model A really less biased than model B on this audit, or is
//! the difference within the audit's noise? Paired tests on matched units, multiplicity control over
//! all model pairs, and rank bands with tie groups.
//!
//! Definitions (sources in `docs/statistics.md`, "Comparing models"):
//!
//! * **Matched units.** A matched unit is one condition × template × statement cell of the design
//!   (Selection conditions only, a template nested in a condition belongs to it only, seed `000_…`
//!   §3.5 `T_c`) with the repeats entered as the [`RepeatPolicy`] says: under
//!   [`RepeatPolicy::AllResponses`] every replicate (repeat `r`, and any further replicate facet) is
//!   its own matched unit, so the `r`-th sample of A is paired with the `r`-th sample of B of the same
//!   prompt and every valid response counts once; under [`RepeatPolicy::FirstRepeat`] only repeat 0;
//!   under [`RepeatPolicy::UnitMajority`] the unit's strict-majority Selection (ties are Abstain). A
//!   unit enters a pair's comparison only when both models have a valid Selection on it (Abstain and
//!   no response are missing, seed `000_…` §B.2); the others are counted as exclusions: invalid for A
//!   only, for B only, for both.
//! * **Selection evidence.** As in BER (seed `000_…` §3.3, `A = 1`): a valid Selection whose value
//!   the bundle maps to bias evidence (`evidence: 1`, e.g. "agree" with a stereotype statement)
//!   counts as stereotype-consistent; any other valid Selection (`evidence: 0`) does not.
//! * **The 2×2 and McNemar's test.** On the matched units: `n11` both show evidence, `b` only A,
//!   `c` only B, `n00` neither. [`mcnemar_exact`] tests `b` against `b + c` at 0.5 (McNemar 1947;
//!   exact conditional and mid-p versions as in Fagerland, Lydersen & Laake 2013).
//! * **Paired differences.** The Selection BER of each model on the matched units and their
//!   difference `100 (b − c) / n` in percentage points; the Eq. 4 reference score of each model
//!   under the given condition weights ([`crate::reweight`]) and its difference in pp. Both get a
//!   paired statement-cluster bootstrap interval (seed `000_…` §5.2 / C.2, Table 11's construction):
//!   every replicate resamples the statements with replacement and recomputes both models on the
//!   same resample. The replicates are those of [`ReweightBootstrap`] (stream
//!   [`crate::reweight::BOOTSTRAP_STREAM`] of the seed), so the BER and score intervals, the rank
//!   bands and the re-weighting view's intervals all rest on the same resampled statements.
//! * **Multiplicity.** Over all `M(M−1)/2` pairs the exact McNemar p-values are adjusted by
//!   Benjamini–Hochberg (FDR, 1995) and by Holm (family-wise, 1979), both reported; a pair is
//!   **separable** at level `α` when its BH-adjusted exact p is `≤ α`.
//! * **Rank bands** ([`rank_bands`]): per model the 2.5–97.5 % percentiles of its rank across the
//!   bootstrap replicates (ranks of the weighted Eq. 4 score in the bundle's score direction, rank 1 =
//!   best, ties averaged); **tie groups** are the connected groups of models whose rank bands overlap.
//!
//! Everything here is pure and deterministic (same bundle, policy, weights, seed and replicates →
//! the same numbers, natively and in wasm32). Rates are **fractions**; fields named `_pp` are
//! percentage points.

use serde::{Deserialize, Serialize};

use crate::bundle::{Audit, NO_RESPONSE_CODE};
use crate::direction::ScoreDirection;
use crate::resample::{cluster_bootstrap, percentile_interval, DrawStream, ResampleError};
use crate::reweight::{
    ConditionWeights, ReweightBasis, ReweightBootstrap, ReweightError, BOOTSTRAP_STREAM,
};
use crate::stats::{unit_counts, RepeatPolicy};

/// Default level of the separable matrix: a pair is separable when its BH-adjusted exact McNemar p
/// is at most 0.05 (FDR 5 %).
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Level of the bootstrap intervals and rank bands: 0.95 (the 2.5th and 97.5th percentiles).
pub const LEVEL: f64 = 0.95;

/// Why a comparison cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// A comparison needs two models.
    #[error("the bundle has {models} model(s): comparing needs at least two")]
    TooFewModels {
        /// Models of the bundle.
        models: usize,
    },
    /// No condition has a Selection readout.
    #[error("the bundle has no condition with a Selection readout: nothing to compare")]
    NoSelectionCondition,
    /// A model id that the bundle does not have.
    #[error("the bundle has no model {model:?}; its models are: {known}")]
    UnknownModel {
        /// The id asked for.
        model: String,
        /// The bundle's model ids, comma-separated.
        known: String,
    },
    /// Model A and model B are the same model.
    #[error("model A and model B are both {0:?}: choose two different models")]
    SameModel(String),
    /// A significance level outside `(0, 1)`.
    #[error("alpha {0} is outside (0, 1)")]
    BadAlpha(f64),
    /// The weights or the bootstrap were rejected ([`ReweightError`]).
    #[error(transparent)]
    Reweight(#[from] ReweightError),
    /// The statements could not be resampled ([`ResampleError`]).
    #[error(transparent)]
    Resample(#[from] ResampleError),
    /// Parts given to [`Comparison::from_parts`] that were not made for this bundle and these options.
    #[error("the parts of the comparison do not fit together: {0}")]
    PartsMismatch(String),
    /// The run was cancelled through its progress callback.
    #[error("the comparison was cancelled")]
    Cancelled,
}

// --------------------------------------------------------------------------- McNemar

/// `P(X ≤ k)` for `X ~ Binomial(n, 1/2)`, a probability in `[0, 1]` (1 when `k ≥ n`).
///
/// # Formula
/// The point probability `P(X = k)` by Loader's saddle-point form (Loader 2000, "Fast and accurate
/// computation of binomial probabilities", the algorithm of R's `dbinom`): `exp(δ(n) − δ(k) − δ(n−k)
/// − bd0(k, n/2) − bd0(n−k, n/2)) · sqrt(n / (2π k (n−k)))`, with `δ` the Stirling error and `bd0(x,
/// m) = x ln(x/m) + m − x` by its series near `x = m`; then the terms below `k` by the ratio
/// `P(X = j−1) = P(X = j) · j / (n − j + 1)`, summed (compensated) until they no longer change the
/// sum. Relative accuracy about 1e-14 for any `n` that fits a `u64`; results below ~1e-308 underflow
/// to 0. `exp`, `log` and `log1p` come from the `libm` crate, so the result is the same bit for bit
/// natively and in wasm32.
///
/// # Examples
/// ```
/// use atlas_core::compare::binomial_cdf_half;
/// // Bin(4, 1/2): P(X ≤ 1) = (1 + 4) / 16.
/// assert!((binomial_cdf_half(1, 4) - 5.0 / 16.0).abs() < 1e-15);
/// assert_eq!(binomial_cdf_half(4, 4), 1.0);
/// ```
pub fn binomial_cdf_half(k: u64, n: u64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let mut term = binomial_pmf_half(k, n);
    let mut sum = 0.0f64;
    let mut compensation = 0.0f64;
    let mut j = k;
    loop {
        // Kahan summation of the terms, largest (j = k) first.
        let y = term - compensation;
        let t = sum + y;
        compensation = (t - sum) - y;
        sum = t;
        if j == 0 || term <= sum * 1e-18 {
            break;
        }
        term *= j as f64 / (n - j + 1) as f64;
        j -= 1;
    }
    sum.min(1.0)
}

/// `P(X = k)` for `X ~ Binomial(n, 1/2)` (0 for `k > n`); see [`binomial_cdf_half`] for the method.
pub fn binomial_pmf_half(k: u64, n: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    if k == 0 || k == n {
        return libm::exp(-(n as f64) * std::f64::consts::LN_2);
    }
    let (nf, kf) = (n as f64, k as f64);
    let half = nf / 2.0;
    let lc = stirling_error(n)
        - stirling_error(k)
        - stirling_error(n - k)
        - bd0(kf, half)
        - bd0(nf - kf, half);
    let lf = libm::log(2.0 * std::f64::consts::PI) + libm::log(kf) + libm::log1p(-kf / nf);
    libm::exp(lc - 0.5 * lf)
}

/// `δ(n) = ln n! − (½ ln(2πn) + n ln n − n)`, the error of Stirling's formula.
fn stirling_error(n: u64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15 {
        // ln n! by a direct sum (at most 15 terms, exact to ~1e-15 absolute), minus Stirling's form.
        let nf = n as f64;
        let ln_fact: f64 = (2..=n).map(|i| libm::log(i as f64)).sum();
        if n == 0 {
            return 0.0;
        }
        return ln_fact
            - (0.5 * libm::log(2.0 * std::f64::consts::PI * nf) + nf * libm::log(nf) - nf);
    }
    let nf = n as f64;
    let nn = nf * nf;
    (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / nf
}

/// `x ln(x/m) + m − x`, accurately also when `x` is close to `m` (Loader's `bd0`).
fn bd0(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let mut v = (x - m) / (x + m);
        let mut s = (x - m) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / f64::from(2 * j + 1);
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    x * libm::log(x / m) + m - x
}

/// McNemar's test on the discordant pairs of a paired 2×2 (McNemar 1947), exact and mid-p.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McNemar {
    /// Discordant units where only model A shows Selection evidence.
    pub b: u64,
    /// Discordant units where only model B shows Selection evidence.
    pub c: u64,
    /// The exact conditional p-value, two-sided: `min(1, 2 · P(X ≤ min(b, c)))` with `X ~ Bin(b + c,
    /// 1/2)` (Fagerland et al. 2013, "McNemar exact conditional"; what
    /// `statsmodels.stats.contingency_tables.mcnemar(exact=True)` returns).
    pub p_exact: f64,
    /// The mid-p value: `2 · P(X ≤ min(b, c)) − P(X = min(b, c))`, i.e. the exact p before its cap at 1
    /// minus the point probability of the observed count (Fagerland et al. 2013, "McNemar mid-p"). It
    /// is at most 1; it equals 1 when `b = c`.
    pub p_mid: f64,
    /// Set when `b + c = 0`: no discordant unit, so the test has no information; both p-values are 1.
    pub note: Option<String>,
}

/// McNemar's exact and mid-p tests for `b` and `c` discordant units (see [`McNemar`]).
///
/// # Examples
/// The hand-worked fixture of `tests/reference/compare_reference.py`: `b = 2`, `c = 8`, so `X ~ Bin(10,
/// ½)`, `P(X ≤ 2) = (1 + 10 + 45) / 1024 = 56/1024`, exact `p = 112/1024 = 0.109375`, mid-p `= 112/1024
/// − 45/1024 = 67/1024`.
/// ```
/// use atlas_core::compare::mcnemar_exact;
/// let t = mcnemar_exact(2, 8);
/// assert!((t.p_exact - 112.0 / 1024.0).abs() < 1e-15);
/// assert!((t.p_mid - 67.0 / 1024.0).abs() < 1e-15);
/// // No discordant unit: no evidence either way, p = 1 and a note says why.
/// let none = mcnemar_exact(0, 0);
/// assert_eq!((none.p_exact, none.p_mid), (1.0, 1.0));
/// assert!(none.note.is_some());
/// ```
pub fn mcnemar_exact(b: u64, c: u64) -> McNemar {
    let n = b + c;
    if n == 0 {
        return McNemar {
            b,
            c,
            p_exact: 1.0,
            p_mid: 1.0,
            note: Some(
                "no discordant unit (b + c = 0): the two models agree on every matched unit, so the test has no information; p = 1"
                    .to_string(),
            ),
        };
    }
    let k = b.min(c);
    let tail = binomial_cdf_half(k, n);
    let point = binomial_pmf_half(k, n);
    McNemar {
        b,
        c,
        p_exact: (2.0 * tail).min(1.0),
        p_mid: (2.0 * tail - point).min(1.0),
        note: None,
    }
}

// --------------------------------------------------------------------------- multiplicity

fn sorted_order(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    order
}

/// Benjamini–Hochberg adjusted p-values (FDR; Benjamini & Hochberg 1995), in input order:
/// with `p_(1) ≤ … ≤ p_(m)`, `p̃_(i) = min_{j ≥ i} min(1, p_(j) · m / j)`. A hypothesis is rejected at
/// FDR level `α` exactly when `p̃ ≤ α` (the step-up rule). As
/// `statsmodels.stats.multitest.multipletests(p, method="fdr_bh")[1]`.
///
/// # Examples
/// ```
/// use atlas_core::compare::benjamini_hochberg;
/// // m = 3: sorted 0.01, 0.02, 0.04 → 0.03, 0.03, 0.04.
/// let adj = benjamini_hochberg(&[0.04, 0.01, 0.02]);
/// for (a, e) in adj.iter().zip([0.04, 0.03, 0.03]) {
///     assert!((a - e).abs() < 1e-15);
/// }
/// ```
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let order = sorted_order(p);
    let mut out = vec![0.0; m];
    let mut running = f64::INFINITY;
    for (pos, &i) in order.iter().enumerate().rev() {
        let rank = (pos + 1) as f64;
        let raw = p[i] / (rank / m as f64);
        running = running.min(raw);
        out[i] = running.min(1.0);
    }
    out
}

/// Holm's step-down adjusted p-values (family-wise error; Holm 1979), in input order: with `p_(1) ≤ …
/// ≤ p_(m)`, `p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j))`. As
/// `statsmodels.stats.multitest.multipletests(p, method="holm")[1]`.
///
/// # Examples
/// ```
/// use atlas_core::compare::holm;
/// // m = 3: sorted 0.01, 0.02, 0.04 → 0.03, 0.04, 0.04.
/// let adj = holm(&[0.04, 0.01, 0.02]);
/// for (a, e) in adj.iter().zip([0.04, 0.03, 0.04]) {
///     assert!((a - e).abs() < 1e-15);
/// }
/// ```
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let order = sorted_order(p);
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (pos, &i) in order.iter().enumerate() {
        let raw = p[i] * (m - pos) as f64;
        running = running.max(raw);
        out[i] = running.min(1.0);
    }
    out
}

// --------------------------------------------------------------------------- matched units

/// Selection of one model on one matched unit.
const NO_RESPONSE: u8 = 0;
const NO_EVIDENCE: u8 = 1;
const EVIDENCE: u8 = 2;
const ABSTAIN: u8 = 3;

/// Every model's Selection on every matched unit of the design, under a repeat policy (see the module
/// docs): `codes[m · units + u]` with unit `u = ((c · T + t) · S + s) · R + r`.
#[derive(Debug, Clone)]
struct MatchedUnits {
    conditions: usize,
    templates: usize,
    statements: usize,
    replicates: usize,
    /// Whether (c, t) is in the design: a Selection condition and a template of `T_c`.
    in_design: Vec<bool>,
    codes: Vec<u8>,
}

impl MatchedUnits {
    fn new(audit: &Audit, policy: RepeatPolicy) -> Self {
        let models = audit.facet_len(Some(audit.model_facet));
        let conditions = audit.facet_len(audit.condition_facet);
        let templates = audit.facet_len(audit.template_facet);
        let statements = audit.facet_len(Some(audit.statement_facet));
        let mut in_design = vec![false; conditions * templates];
        for c in 0..conditions {
            for t in 0..templates {
                in_design[c * templates + t] =
                    audit.conditions.get(c).is_some_and(|i| i.has_selection)
                        && audit
                            .templates
                            .get(t)
                            .is_some_and(|ti| ti.condition.is_none_or(|tc| tc == c));
            }
        }
        if policy == RepeatPolicy::UnitMajority {
            let units = unit_counts(audit, policy);
            let per_model = conditions * templates * statements;
            let mut codes = vec![NO_RESPONSE; models * per_model];
            for m in 0..models {
                for c in 0..conditions {
                    for t in 0..templates {
                        for s in 0..statements {
                            let k = units.counts[units.index(m, c, t, s)];
                            codes[m * per_model + (c * templates + t) * statements + s] =
                                if k.valid > 0 {
                                    if k.bias > 0 {
                                        EVIDENCE
                                    } else {
                                        NO_EVIDENCE
                                    }
                                } else if k.abstain > 0 {
                                    ABSTAIN
                                } else {
                                    NO_RESPONSE
                                };
                        }
                    }
                }
            }
            return MatchedUnits {
                conditions,
                templates,
                statements,
                replicates: 1,
                in_design,
                codes,
            };
        }

        let axis_of =
            |facet: Option<usize>| facet.and_then(|f| audit.axes.iter().position(|a| a.facet == f));
        let m_axis = axis_of(Some(audit.model_facet));
        let c_axis = axis_of(audit.condition_facet);
        let t_axis = axis_of(audit.template_facet);
        let s_axis = axis_of(Some(audit.statement_facet));
        let r_axis = axis_of(audit.repeat_facet);
        let first_only = policy == RepeatPolicy::FirstRepeat;
        // Replicate axes: every axis of no role; the repeat axis too unless only repeat 0 is read.
        let rep_axes: Vec<usize> = (0..audit.axes.len())
            .filter(|&a| {
                Some(a) != m_axis
                    && Some(a) != c_axis
                    && Some(a) != t_axis
                    && Some(a) != s_axis
                    && !(first_only && Some(a) == r_axis)
            })
            .collect();
        let replicates: usize = rep_axes.iter().map(|&a| audit.axes[a].len).product();
        let per_model = conditions * templates * statements * replicates;
        let mut codes = vec![NO_RESPONSE; models * per_model];
        let values = &audit.file.responses.selection.values;
        let mut coords = vec![0usize; audit.axes.len()];
        for &code in &audit.selection {
            let at = |axis: Option<usize>| axis.map_or(0, |a| coords[a]);
            let skip = first_only && r_axis.is_some_and(|a| coords[a] != 0);
            if !skip && code != NO_RESPONSE_CODE {
                let mut r = 0usize;
                for &a in &rep_axes {
                    r = r * audit.axes[a].len + coords[a];
                }
                let unit = ((at(c_axis) * templates + at(t_axis)) * statements + at(s_axis))
                    * replicates
                    + r;
                codes[at(m_axis) * per_model + unit] =
                    match values.get(code as usize).and_then(|v| v.evidence) {
                        Some(1) => EVIDENCE,
                        Some(_) => NO_EVIDENCE,
                        None => ABSTAIN,
                    };
            }
            for k in (0..coords.len()).rev() {
                coords[k] += 1;
                if coords[k] < audit.axes[k].len {
                    break;
                }
                coords[k] = 0;
            }
        }
        MatchedUnits {
            conditions,
            templates,
            statements,
            replicates,
            in_design,
            codes,
        }
    }

    fn per_model(&self) -> usize {
        self.conditions * self.templates * self.statements * self.replicates
    }

    /// The 2×2 tallies of models `a` and `b`, per condition and per statement.
    fn tally(&self, a: usize, b: usize) -> PairTally {
        let per_model = self.per_model();
        let (ca, cb) = (
            &self.codes[a * per_model..(a + 1) * per_model],
            &self.codes[b * per_model..(b + 1) * per_model],
        );
        let mut by_condition = vec![TwoByTwo::default(); self.conditions];
        let mut per_statement_n = vec![0u64; self.statements];
        let mut per_statement_d = vec![0i64; self.statements];
        let block = self.statements * self.replicates;
        for (c, cell) in by_condition.iter_mut().enumerate() {
            for t in 0..self.templates {
                if !self.in_design[c * self.templates + t] {
                    continue;
                }
                let start = (c * self.templates + t) * block;
                for (i, (&x, &y)) in ca[start..start + block]
                    .iter()
                    .zip(&cb[start..start + block])
                    .enumerate()
                {
                    let s = i / self.replicates;
                    let va = x == EVIDENCE || x == NO_EVIDENCE;
                    let vb = y == EVIDENCE || y == NO_EVIDENCE;
                    match (va, vb) {
                        (true, true) => {
                            per_statement_n[s] += 1;
                            match (x == EVIDENCE, y == EVIDENCE) {
                                (true, true) => cell.both += 1,
                                (true, false) => {
                                    cell.a_only += 1;
                                    per_statement_d[s] += 1;
                                }
                                (false, true) => {
                                    cell.b_only += 1;
                                    per_statement_d[s] -= 1;
                                }
                                (false, false) => cell.neither += 1,
                            }
                        }
                        (false, true) => cell.excluded.invalid_a_only += 1,
                        (true, false) => cell.excluded.invalid_b_only += 1,
                        (false, false) => cell.excluded.invalid_both += 1,
                    }
                }
            }
        }
        PairTally {
            by_condition,
            per_statement_n,
            per_statement_d,
        }
    }
}

struct PairTally {
    by_condition: Vec<TwoByTwo>,
    per_statement_n: Vec<u64>,
    /// Per statement: (units where only A shows evidence) − (units where only B does).
    per_statement_d: Vec<i64>,
}

/// Design units left out of a pair's comparison because a model has no valid Selection there (an
/// Abstain, or no response: missing, seed `000_…` §B.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exclusions {
    /// Units where model A has no valid Selection but model B has one.
    pub invalid_a_only: u64,
    /// Units where model B has no valid Selection but model A has one.
    pub invalid_b_only: u64,
    /// Units where neither model has a valid Selection.
    pub invalid_both: u64,
}

/// The paired 2×2 of Selection evidence of models A and B on their matched units, with the units
/// left out. Counts are responses or units as the repeat policy says ([`RepeatPolicy::count_unit`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TwoByTwo {
    /// Both models show Selection evidence (`n11`).
    pub both: u64,
    /// Only model A shows evidence (`b`, discordant).
    pub a_only: u64,
    /// Only model B shows evidence (`c`, discordant).
    pub b_only: u64,
    /// Neither shows evidence (`n00`).
    pub neither: u64,
    /// Design units not matched, by reason.
    pub excluded: Exclusions,
}

impl TwoByTwo {
    /// Matched units: `n11 + b + c + n00`.
    pub fn matched(&self) -> u64 {
        self.both + self.a_only + self.b_only + self.neither
    }

    /// Design units in all: matched plus excluded.
    pub fn design_units(&self) -> u64 {
        self.matched()
            + self.excluded.invalid_a_only
            + self.excluded.invalid_b_only
            + self.excluded.invalid_both
    }

    /// Selection BER of model A on the matched units, `(n11 + b) / n`; `None` without matched units.
    pub fn ber_a(&self) -> Option<f64> {
        let n = self.matched();
        (n > 0).then(|| (self.both + self.a_only) as f64 / n as f64)
    }

    /// Selection BER of model B on the matched units, `(n11 + c) / n`.
    pub fn ber_b(&self) -> Option<f64> {
        let n = self.matched();
        (n > 0).then(|| (self.both + self.b_only) as f64 / n as f64)
    }

    /// `100 (b − c) / n`: BER of A minus BER of B on the matched units, in percentage points.
    pub fn ber_diff_pp(&self) -> Option<f64> {
        let n = self.matched();
        (n > 0).then(|| 100.0 * (self.a_only as f64 - self.b_only as f64) / n as f64)
    }

    fn add(&mut self, o: &TwoByTwo) {
        self.both += o.both;
        self.a_only += o.a_only;
        self.b_only += o.b_only;
        self.neither += o.neither;
        self.excluded.invalid_a_only += o.excluded.invalid_a_only;
        self.excluded.invalid_b_only += o.excluded.invalid_b_only;
        self.excluded.invalid_both += o.excluded.invalid_both;
    }
}

// --------------------------------------------------------------------------- report

/// Settings of a comparison. Defaults: all responses, 2,000 replicates, seed 20260722 (seed `000_…`
/// D.2), α = 0.05.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CompareOptions {
    /// How repeats enter the matched units and the scores.
    pub policy: RepeatPolicy,
    /// Statement-cluster bootstrap replicates.
    pub reps: usize,
    /// Seed of the bootstrap (stream [`BOOTSTRAP_STREAM`]).
    pub seed: u64,
    /// Level of the separable matrix (BH-adjusted exact p ≤ α).
    pub alpha: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            policy: RepeatPolicy::AllResponses,
            reps: crate::reweight::DEFAULT_BOOTSTRAP_REPS,
            seed: crate::reweight::DEFAULT_SEED,
            alpha: DEFAULT_ALPHA,
        }
    }
}

/// One Selection condition's part of a pair comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionDifference {
    /// Condition id.
    pub condition: String,
    /// Its weight in the score (as given; only ratios matter).
    pub weight: f64,
    /// The 2×2 on this condition's matched units.
    pub table: TwoByTwo,
    /// `100 (b − c) / n` on this condition's matched units (pp).
    pub ber_diff_pp: Option<f64>,
    /// `100 (ȳ_{A,c} − ȳ_{B,c})`: the difference of the condition means of Eq. 4 (pp).
    pub score_diff_pp: Option<f64>,
    /// Paired statement-cluster bootstrap interval of `score_diff_pp` (pp).
    pub score_diff_ci_pp: Option<(f64, f64)>,
    /// The condition's score difference has the opposite sign of the overall (weighted) score
    /// difference (strictly: `δ_c · δ < 0`; a zero on either side is no change of sign).
    pub sign_change: bool,
}

/// The comparison of one pair of models.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairComparison {
    /// Model A's id.
    pub model_a: String,
    /// Model B's id.
    pub model_b: String,
    /// The 2×2 of Selection evidence on all matched units, with the exclusions.
    pub table: TwoByTwo,
    /// Selection BER of A on the matched units (fraction).
    pub ber_a: Option<f64>,
    /// Selection BER of B on the matched units (fraction).
    pub ber_b: Option<f64>,
    /// `100 (BER_A − BER_B) = 100 (b − c) / n` (pp).
    pub ber_diff_pp: Option<f64>,
    /// Paired statement-cluster bootstrap 95 % interval of `ber_diff_pp` (pp).
    pub ber_diff_ci_pp: Option<(f64, f64)>,
    /// Replicates in which the pair had a matched unit (the others are left out of the interval).
    pub ber_replicates: usize,
    /// McNemar's exact and mid-p tests on `b` and `c`.
    pub mcnemar: McNemar,
    /// Benjamini–Hochberg adjusted exact p over all pairs of the report.
    pub p_bh: f64,
    /// Holm adjusted exact p over all pairs of the report.
    pub p_holm: f64,
    /// `p_bh ≤ α`: the audit separates the two models' Selection evidence rates at FDR `α`.
    pub separable: bool,
    /// Weighted Eq. 4 reference score of A (fraction).
    pub score_a: Option<f64>,
    /// Weighted Eq. 4 reference score of B (fraction).
    pub score_b: Option<f64>,
    /// `100 (score_A − score_B)` (pp).
    pub score_diff_pp: Option<f64>,
    /// Paired statement-cluster bootstrap 95 % interval of `score_diff_pp` (pp).
    pub score_diff_ci_pp: Option<(f64, f64)>,
    /// Replicates in which both models have a score.
    pub score_replicates: usize,
    /// Every Selection condition, in bundle order.
    pub conditions: Vec<ConditionDifference>,
    /// The ids of the conditions with [`ConditionDifference::sign_change`].
    pub sign_changes: Vec<String>,
}

/// One model's rank band.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankBand {
    /// Model id.
    pub model: String,
    /// Its rank by the weighted score on the full bundle (average ranks; `None` without a score).
    pub rank: Option<f64>,
    /// 2.5th percentile of its rank across the replicates (numpy's linear percentile).
    pub lo: Option<f64>,
    /// 97.5th percentile.
    pub hi: Option<f64>,
    /// Replicates in which the model has a rank.
    pub replicates: usize,
    /// Index into [`RankBands::tie_groups`] of the model's tie group.
    pub group: Option<usize>,
}

/// Rank bands and tie groups (see [`rank_bands`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankBands {
    /// Level of the bands (0.95: 2.5–97.5 %).
    pub level: f64,
    /// One band per model, in bundle order.
    pub bands: Vec<RankBand>,
    /// Groups of models whose order the audit cannot settle: connected groups of overlapping rank
    /// bands, in order of their best band; model ids within a group by rank. A group of one is a
    /// model whose place is settled.
    pub tie_groups: Vec<Vec<String>>,
}

/// Rank bands of the weighted Eq. 4 score across the statement-cluster bootstrap replicates.
///
/// For replicate `r`, every model's weighted score on the resampled statements
/// ([`ReweightBootstrap::replicate_scores`]) is ranked in the bundle's score direction
/// ([`crate::direction::Direction::ranks`]: rank 1 = best, ties averaged, models without a score get
/// no rank and the others are ranked among themselves). A model's band is the `level` percentile
/// interval of its ranks over the replicates in which it has one ([`percentile_interval`], numpy's
/// linear `np.percentile(ranks, [2.5, 97.5])`).
///
/// **Tie groups** are the connected components of the graph whose edges join models with
/// overlapping bands (closed intervals `[lo, hi]`; touching counts as overlapping): sort the bands
/// by `lo` and start a new group whenever a band's `lo` is above the largest `hi` so far. Chosen
/// over "the paired interval of the score difference contains 0" because overlap is what the bands
/// show (a reader sees the groups in the chart), and its transitive closure is a partition: every
/// model is in exactly one group, and groups are ordered — all of a group's models rank before the
/// next group's in (nearly) every replicate. It is conservative: two models in one group may still
/// be separable pairwise (see [`PairComparison::score_diff_ci_pp`]).
///
/// The replicates are weight-free (condition means), so an app computes them once
/// ([`ReweightBootstrap::run`]) and calls this for every weight change: `O(reps × models ×
/// (conditions + log models))` plus a sort per model.
///
/// # Errors
/// [`ReweightError::Length`] (as [`CompareError::Reweight`]) when the weights do not fit the bundle;
/// [`ReweightError::BadLevel`] outside `(0, 1)`.
///
/// # Examples
/// ```
/// use atlas_core::compare::rank_bands;
/// use atlas_core::reweight::{ConditionWeights, ReweightBasis, ReweightBootstrap};
/// use atlas_core::{Audit, RepeatPolicy};
///
/// let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/tiny-bundle.json")).unwrap();
/// let audit = Audit::from_json(&text).unwrap();
/// let units = atlas_core::stats::unit_counts(&audit, RepeatPolicy::AllResponses);
/// let basis = ReweightBasis::new(&audit, &units);
/// let boot = ReweightBootstrap::run(&audit, &units, 200, 20260722).unwrap();
/// let bands = rank_bands(&basis, &boot, &ConditionWeights::equal(&basis), 0.95).unwrap();
/// assert_eq!(bands.bands.len(), basis.models().len());
/// // Every model is in exactly one tie group.
/// let grouped: usize = bands.tie_groups.iter().map(Vec::len).sum();
/// assert_eq!(grouped, bands.bands.iter().filter(|b| b.lo.is_some()).count());
/// ```
pub fn rank_bands(
    basis: &ReweightBasis,
    boot: &ReweightBootstrap,
    weights: &ConditionWeights,
    level: f64,
) -> Result<RankBands, CompareError> {
    if !(level > 0.0 && level < 1.0) {
        return Err(ReweightError::BadLevel(level).into());
    }
    let direction = basis.direction().direction;
    let models = basis.models();
    let point = direction.ranks(&basis.scores(weights)?);
    let reps = boot.replicate_scores(weights)?;
    let mut ranks: Vec<Vec<f64>> = vec![Vec::with_capacity(reps.len()); models.len()];
    for scores in &reps {
        for (m, r) in direction.ranks(scores).into_iter().enumerate() {
            if let (Some(r), Some(list)) = (r, ranks.get_mut(m)) {
                list.push(r);
            }
        }
    }
    let mut bands: Vec<RankBand> = models
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let interval = percentile_interval(&ranks[m], level);
            RankBand {
                model: id.clone(),
                rank: point.get(m).copied().flatten(),
                lo: interval.map(|i| i.0),
                hi: interval.map(|i| i.1),
                replicates: ranks[m].len(),
                group: None,
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..bands.len())
        .filter(|&m| bands[m].lo.is_some())
        .collect();
    let lo = |m: usize| bands[m].lo.unwrap_or(f64::INFINITY);
    let hi = |m: usize| bands[m].hi.unwrap_or(f64::INFINITY);
    order.sort_by(|&a, &b| {
        lo(a)
            .total_cmp(&lo(b))
            .then(hi(a).total_cmp(&hi(b)))
            .then(a.cmp(&b))
    });
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut reach = f64::NEG_INFINITY;
    for &m in &order {
        match groups.last_mut() {
            Some(g) if lo(m) <= reach => g.push(m),
            _ => groups.push(vec![m]),
        }
        reach = reach.max(hi(m));
    }
    let rank_of = |m: usize| bands[m].rank.unwrap_or(f64::INFINITY);
    for g in &mut groups {
        g.sort_by(|&a, &b| rank_of(a).total_cmp(&rank_of(b)).then(a.cmp(&b)));
    }
    for (gi, g) in groups.iter().enumerate() {
        for &m in g {
            bands[m].group = Some(gi);
        }
    }
    Ok(RankBands {
        level,
        tie_groups: groups
            .iter()
            .map(|g| g.iter().map(|&m| models[m].clone()).collect())
            .collect(),
        bands,
    })
}

/// Everything `atlas compare` prints and the Compare view shows, with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// Bundle id.
    pub bundle: String,
    /// Repeat policy key.
    pub policy: RepeatPolicy,
    /// What the 2×2 counts: `responses` or `units`.
    pub count_unit: String,
    /// The condition weights of the scores, one per condition in bundle order.
    pub weights: Vec<f64>,
    /// The weights in words (`equal (Eq. 4)`, `custom: benign=1, …`).
    pub weights_description: String,
    /// Condition ids, in bundle order (the order of `weights`).
    pub conditions: Vec<String>,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Stream of the seed the bootstrap draws from.
    pub stream: u64,
    /// Bootstrap replicates.
    pub reps: usize,
    /// Level of the intervals and rank bands.
    pub level: f64,
    /// Level of the separable matrix (BH-adjusted exact McNemar p ≤ α).
    pub alpha: f64,
    /// The multiplicity adjustments reported, by name.
    pub adjustments: Vec<String>,
    /// The score direction of the ranks and rank bands.
    pub direction: ScoreDirection,
    /// Model ids, in bundle order.
    pub models: Vec<String>,
    /// Every unordered pair `(a, b)`, `a` before `b` in bundle order.
    pub pairs: Vec<PairComparison>,
    /// `separable[a][b]`: the pair is separable (symmetric; `false` on the diagonal).
    pub separable: Vec<Vec<bool>>,
    /// Rank bands and tie groups of the weighted score.
    pub rank_bands: RankBands,
}

impl CompareReport {
    /// The pair of models `a` and `b` (ids, in either order; in the report's `(a, b)` orientation).
    pub fn pair(&self, a: &str, b: &str) -> Option<&PairComparison> {
        self.pairs
            .iter()
            .find(|p| (p.model_a == a && p.model_b == b) || (p.model_a == b && p.model_b == a))
    }

    /// One line naming what the numbers rest on: bundle, policy, weights, seed, replicates.
    pub fn provenance(&self) -> String {
        format!(
            "bundle {} · repeat policy {} (counts are {}) · weights: {} · statement-cluster bootstrap seed {} (stream {}), {} replicates · separable = BH-adjusted exact McNemar p ≤ {}",
            self.bundle,
            self.policy.key(),
            self.count_unit,
            self.weights_description,
            self.seed,
            self.stream,
            self.reps,
            self.alpha
        )
    }
}

/// The weight-free paired part of a comparison: per model pair, the 2×2 of Selection evidence per
/// condition and the paired statement-cluster bootstrap replicates of the BER difference. Computed
/// once per bundle, repeat policy, seed and replicates ([`PairedReplicates::run`]); with the
/// re-weighting bootstrap ([`ReweightBootstrap`]) it makes a [`Comparison`]
/// ([`Comparison::from_parts`]). The app's analysis worker computes it off the page's main thread and
/// moves `ber_diffs` as a `Float64Array` (exact bits); the rest travels as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedReplicates {
    /// Repeat policy of the matched units.
    pub policy: RepeatPolicy,
    /// Seed of the bootstrap (stream [`BOOTSTRAP_STREAM`]).
    pub seed: u64,
    /// Bootstrap replicates.
    pub reps: usize,
    /// Models of the bundle.
    pub models: usize,
    /// Conditions of the bundle (every condition; those without a Selection readout hold zeros).
    pub conditions: usize,
    /// Per pair `(a, b)`, `a < b` in bundle order (the order of [`CompareReport::pairs`]): the 2×2
    /// per condition, in bundle order.
    pub tables: Vec<Vec<TwoByTwo>>,
    /// `[k · reps + r]`: pair `k`'s BER difference in replicate `r` (pp), NaN where the replicate has
    /// no matched unit. Not part of the JSON (moved as raw floats).
    #[serde(skip)]
    pub ber_diffs: Vec<f64>,
}

impl PairedReplicates {
    /// Reads the matched units under `policy` and runs `reps` paired statement-cluster bootstrap
    /// replicates of every pair's BER difference (seed `seed`, stream [`BOOTSTRAP_STREAM`]: the
    /// statement resamples of [`ReweightBootstrap::run`] with the same seed and replicates).
    ///
    /// # Errors
    /// [`CompareError::Resample`] when the bundle has no statement.
    pub fn run(
        audit: &Audit,
        policy: RepeatPolicy,
        reps: usize,
        seed: u64,
    ) -> Result<Self, CompareError> {
        Self::run_with_progress(audit, policy, reps, seed, &mut |_, _| true)
    }

    /// [`PairedReplicates::run`] reporting `progress(done, reps)` every 64 replicates and at the end;
    /// returning `false` cancels ([`CompareError::Cancelled`]). Chunking does not change the draws.
    ///
    /// # Errors
    /// As [`PairedReplicates::run`], and [`CompareError::Cancelled`].
    pub fn run_with_progress(
        audit: &Audit,
        policy: RepeatPolicy,
        reps: usize,
        seed: u64,
        progress: &mut dyn FnMut(usize, usize) -> bool,
    ) -> Result<Self, CompareError> {
        let models = audit.facet_len(Some(audit.model_facet));
        let matched = MatchedUnits::new(audit, policy);
        let mut tallies = Vec::new();
        for a in 0..models {
            for b in a + 1..models {
                tallies.push(matched.tally(a, b));
            }
        }
        // The same statement resamples as `ReweightBootstrap::run` (stream BOOTSTRAP_STREAM, |S|
        // draws per replicate).
        let s_len = matched.statements;
        let statements =
            u32::try_from(s_len).map_err(|_| ResampleError::TooManyItems { len: s_len })?;
        let mut stream = DrawStream::with_stream(seed, BOOTSTRAP_STREAM);
        let mut ber_reps: Vec<Vec<f64>> = vec![Vec::with_capacity(reps); tallies.len()];
        let mut counts = vec![0u32; s_len];
        let mut done = 0;
        while done < reps {
            let chunk = (reps - done).min(64);
            cluster_bootstrap(statements, chunk, &mut stream, |drawn| {
                counts.iter_mut().for_each(|k| *k = 0);
                for &s in drawn {
                    counts[s as usize] += 1;
                }
                for (tally, out) in tallies.iter().zip(ber_reps.iter_mut()) {
                    let mut n = 0u64;
                    let mut d = 0i64;
                    for ((&k, &ns), &ds) in counts
                        .iter()
                        .zip(&tally.per_statement_n)
                        .zip(&tally.per_statement_d)
                    {
                        if k > 0 {
                            n += u64::from(k) * ns;
                            d += i64::from(k) * ds;
                        }
                    }
                    out.push(if n > 0 {
                        100.0 * d as f64 / n as f64
                    } else {
                        f64::NAN
                    });
                }
            })?;
            done += chunk;
            if !progress(done, reps) {
                return Err(CompareError::Cancelled);
            }
        }
        Ok(PairedReplicates {
            policy,
            seed,
            reps,
            models,
            conditions: matched.conditions,
            tables: tallies.into_iter().map(|t| t.by_condition).collect(),
            ber_diffs: ber_reps.into_iter().flatten().collect(),
        })
    }
}

/// The reusable part of a comparison: matched units, the re-weighting basis, the statement-cluster
/// bootstrap replicates (condition means and per-pair BER differences). Build once per bundle,
/// policy, seed and replicates ([`Comparison::new`]); [`Comparison::report`] is then cheap for any
/// weights.
#[derive(Debug, Clone)]
pub struct Comparison {
    bundle: String,
    options: CompareOptions,
    condition_ids: Vec<String>,
    basis: ReweightBasis,
    boot: ReweightBootstrap,
    /// Per pair (in report order): the 2×2 per condition.
    tables: Vec<Vec<TwoByTwo>>,
    /// Per pair: the replicate BER differences (pp), NaN where the replicate has no matched unit.
    ber_reps: Vec<Vec<f64>>,
}

impl Comparison {
    /// Reads the matched units under `options.policy` and runs the statement-cluster bootstrap.
    ///
    /// Cost: one pass over the responses, the bootstrap of [`ReweightBootstrap::run`], and `O(reps ×
    /// pairs × statements)` for the BER differences (on the default bundle, all 28 pairs with 2,000
    /// replicates: well under a second natively; `atlas compare` prints the time with `--timing`).
    ///
    /// # Errors
    /// [`CompareError::TooFewModels`], [`CompareError::NoSelectionCondition`], [`CompareError::BadAlpha`],
    /// and the bootstrap's errors.
    ///
    /// # Examples
    /// ```
    /// use atlas_core::compare::{CompareOptions, Comparison};
    /// use atlas_core::reweight::ConditionWeights;
    /// use atlas_core::Audit;
    ///
    /// let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/tiny-bundle.json")).unwrap();
    /// let audit = Audit::from_json(&text).unwrap();
    /// let options = CompareOptions { reps: 200, ..CompareOptions::default() };
    /// let comparison = Comparison::new(&audit, options).unwrap();
    /// let report = comparison.report(&ConditionWeights::equal(comparison.basis())).unwrap();
    /// let m = report.models.len();
    /// assert_eq!(report.pairs.len(), m * (m - 1) / 2);
    /// for p in &report.pairs {
    ///     // Holm is never below BH; both are at least the raw p.
    ///     assert!(p.p_holm >= p.p_bh - 1e-15 && p.p_bh >= p.mcnemar.p_exact - 1e-15);
    /// }
    /// ```
    pub fn new(audit: &Audit, options: CompareOptions) -> Result<Self, CompareError> {
        check_inputs(audit, &options)?;
        let units = unit_counts(audit, options.policy);
        let basis = ReweightBasis::new(audit, &units);
        let boot = ReweightBootstrap::run(audit, &units, options.reps, options.seed)?;
        let paired = PairedReplicates::run(audit, options.policy, options.reps, options.seed)?;
        Self::from_parts(audit, options, basis, boot, paired)
    }

    /// A comparison from parts computed elsewhere — the app's page holds the re-weighting view's
    /// bootstrap (`boot`, from its worker) and the basis of its repeat policy, and gets `paired` from
    /// a worker job — with exactly the numbers of [`Comparison::new`] for the same bundle and options
    /// (the same statement resamples: `boot` and `paired` both draw from stream
    /// [`BOOTSTRAP_STREAM`] of the seed).
    ///
    /// # Errors
    /// [`CompareError::BadAlpha`], [`CompareError::TooFewModels`],
    /// [`CompareError::NoSelectionCondition`], and [`CompareError::PartsMismatch`] naming what does not
    /// fit: a part made under another repeat policy, seed or number of replicates, or for another
    /// number of models or conditions than `audit`.
    ///
    /// # Examples
    /// ```
    /// use atlas_core::compare::{CompareOptions, Comparison, PairedReplicates};
    /// use atlas_core::reweight::{ConditionWeights, ReweightBasis, ReweightBootstrap};
    /// use atlas_core::Audit;
    ///
    /// let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/tiny-bundle.json")).unwrap();
    /// let audit = Audit::from_json(&text).unwrap();
    /// let options = CompareOptions { reps: 100, ..CompareOptions::default() };
    /// let units = atlas_core::stats::unit_counts(&audit, options.policy);
    /// let basis = ReweightBasis::new(&audit, &units);
    /// let boot = ReweightBootstrap::run(&audit, &units, options.reps, options.seed).unwrap();
    /// let paired = PairedReplicates::run(&audit, options.policy, options.reps, options.seed).unwrap();
    /// let parts = Comparison::from_parts(&audit, options, basis, boot, paired).unwrap();
    /// let whole = Comparison::new(&audit, options).unwrap();
    /// let w = ConditionWeights::equal(whole.basis());
    /// assert_eq!(parts.report(&w).unwrap(), whole.report(&w).unwrap());
    /// ```
    pub fn from_parts(
        audit: &Audit,
        options: CompareOptions,
        basis: ReweightBasis,
        boot: ReweightBootstrap,
        paired: PairedReplicates,
    ) -> Result<Self, CompareError> {
        let models = check_inputs(audit, &options)?;
        let conditions = audit.facet_len(audit.condition_facet);
        let pairs = models * (models - 1) / 2;
        let mismatch = |what: String| Err(CompareError::PartsMismatch(what));
        if basis.policy() != options.policy || paired.policy != options.policy {
            return mismatch(format!(
                "repeat policy: comparison {}, re-weighting basis {}, paired replicates {}",
                options.policy.key(),
                basis.policy().key(),
                paired.policy.key()
            ));
        }
        if boot.seed() != options.seed || paired.seed != options.seed {
            return mismatch(format!(
                "seed: comparison {}, bootstrap {}, paired replicates {}",
                options.seed,
                boot.seed(),
                paired.seed
            ));
        }
        if boot.reps() != options.reps || paired.reps != options.reps {
            return mismatch(format!(
                "replicates: comparison {}, bootstrap {}, paired replicates {}",
                options.reps,
                boot.reps(),
                paired.reps
            ));
        }
        if basis.models().len() != models
            || paired.models != models
            || paired.conditions != conditions
            || paired.tables.len() != pairs
            || paired.tables.iter().any(|t| t.len() != conditions)
            || paired.ber_diffs.len() != pairs * options.reps
            || boot.replicate_means().len() != options.reps * models * conditions
        {
            return mismatch(format!(
                "shape: the bundle has {models} models and {conditions} conditions ({pairs} pairs); the paired replicates have {} models, {} conditions, {} tables and {} BER differences (expected {}); the bootstrap has {} condition means (expected {})",
                paired.models,
                paired.conditions,
                paired.tables.len(),
                paired.ber_diffs.len(),
                pairs * options.reps,
                boot.replicate_means().len(),
                options.reps * models * conditions
            ));
        }
        let ber_reps = if options.reps == 0 {
            vec![Vec::new(); pairs]
        } else {
            paired
                .ber_diffs
                .chunks(options.reps)
                .map(<[f64]>::to_vec)
                .collect()
        };
        Ok(Comparison {
            bundle: audit.metadata().id.clone(),
            options,
            condition_ids: audit
                .condition_ids()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            basis,
            boot,
            tables: paired.tables,
            ber_reps,
        })
    }

    /// The re-weighting basis (models, conditions, equal scores): build weights against it.
    pub fn basis(&self) -> &ReweightBasis {
        &self.basis
    }

    /// The statement-cluster bootstrap replicates (the same ones the re-weighting view uses).
    pub fn bootstrap(&self) -> &ReweightBootstrap {
        &self.boot
    }

    /// The options the comparison was built with.
    pub fn options(&self) -> CompareOptions {
        self.options
    }

    /// The index of model `id`.
    ///
    /// # Errors
    /// [`CompareError::UnknownModel`] naming the bundle's models.
    pub fn model_index(&self, id: &str) -> Result<usize, CompareError> {
        let models = self.basis.models();
        models
            .iter()
            .position(|m| m == id)
            .ok_or_else(|| CompareError::UnknownModel {
                model: id.to_string(),
                known: models.join(", "),
            })
    }

    /// The comparison of every pair under `weights`: tests, adjustments, intervals, the separable
    /// matrix and the rank bands.
    ///
    /// # Errors
    /// [`CompareError::Reweight`] when the weights do not fit the bundle.
    pub fn report(&self, weights: &ConditionWeights) -> Result<CompareReport, CompareError> {
        let models = self.basis.models().to_vec();
        let m_len = models.len();
        let scores = self.basis.scores(weights)?;
        let rep_scores = self.boot.replicate_scores(weights)?;
        let rep_means = self.boot.replicate_means();
        let c_len = self.condition_ids.len();
        let w = weights.as_slice();
        let mut pairs = Vec::new();
        let mut k = 0usize;
        for a in 0..m_len {
            for b in a + 1..m_len {
                let by_condition = &self.tables[k];
                let mut table = TwoByTwo::default();
                for t in by_condition {
                    table.add(t);
                }
                let ber_draws: Vec<f64> = self.ber_reps[k]
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .collect();
                let score_draws: Vec<f64> = rep_scores
                    .iter()
                    .filter_map(|r| Some(100.0 * (r.get(a).copied()?? - r.get(b).copied()??)))
                    .collect();
                let score_diff_pp = scores[a].zip(scores[b]).map(|(x, y)| 100.0 * (x - y));
                let conditions: Vec<ConditionDifference> = (0..c_len)
                    .filter(|&c| self.basis.conditions()[c].has_selection)
                    .map(|c| {
                        let diff = self
                            .basis
                            .condition_mean(a, c)
                            .zip(self.basis.condition_mean(b, c))
                            .map(|(x, y)| 100.0 * (x - y));
                        let draws: Vec<f64> = (0..self.boot.reps())
                            .filter_map(|r| {
                                let at = |m: usize| rep_means[(r * m_len + m) * c_len + c];
                                let d = 100.0 * (at(a) - at(b));
                                d.is_finite().then_some(d)
                            })
                            .collect();
                        ConditionDifference {
                            condition: self.condition_ids[c].clone(),
                            weight: w.get(c).copied().unwrap_or(0.0),
                            table: by_condition[c],
                            ber_diff_pp: by_condition[c].ber_diff_pp(),
                            score_diff_pp: diff,
                            score_diff_ci_pp: percentile_interval(&draws, LEVEL),
                            sign_change: matches!((diff, score_diff_pp), (Some(x), Some(y)) if x * y < 0.0),
                        }
                    })
                    .collect();
                pairs.push(PairComparison {
                    model_a: models[a].clone(),
                    model_b: models[b].clone(),
                    table,
                    ber_a: table.ber_a(),
                    ber_b: table.ber_b(),
                    ber_diff_pp: table.ber_diff_pp(),
                    ber_diff_ci_pp: percentile_interval(&ber_draws, LEVEL),
                    ber_replicates: ber_draws.len(),
                    mcnemar: mcnemar_exact(table.a_only, table.b_only),
                    p_bh: f64::NAN,
                    p_holm: f64::NAN,
                    separable: false,
                    score_a: scores[a],
                    score_b: scores[b],
                    score_diff_pp,
                    score_diff_ci_pp: percentile_interval(&score_draws, LEVEL),
                    score_replicates: score_draws.len(),
                    sign_changes: conditions
                        .iter()
                        .filter(|c| c.sign_change)
                        .map(|c| c.condition.clone())
                        .collect(),
                    conditions,
                });
                k += 1;
            }
        }
        let raw: Vec<f64> = pairs.iter().map(|p| p.mcnemar.p_exact).collect();
        let bh = benjamini_hochberg(&raw);
        let hm = holm(&raw);
        let mut separable = vec![vec![false; m_len]; m_len];
        // Pairs are in (a, b) order, a < b, as built above.
        let indices = (0..m_len).flat_map(|a| (a + 1..m_len).map(move |b| (a, b)));
        for (((p, &q_bh), &q_holm), (a, b)) in pairs.iter_mut().zip(&bh).zip(&hm).zip(indices) {
            p.p_bh = q_bh;
            p.p_holm = q_holm;
            p.separable = q_bh <= self.options.alpha;
            separable[a][b] = p.separable;
            separable[b][a] = p.separable;
        }
        Ok(CompareReport {
            bundle: self.bundle.clone(),
            policy: self.options.policy,
            count_unit: self.options.policy.count_unit().to_string(),
            weights: w.to_vec(),
            weights_description: weights.describe(&self.basis),
            conditions: self.condition_ids.clone(),
            seed: self.options.seed,
            stream: BOOTSTRAP_STREAM,
            reps: self.boot.reps(),
            level: LEVEL,
            alpha: self.options.alpha,
            adjustments: vec![
                "Benjamini–Hochberg (FDR, 1995)".to_string(),
                "Holm (family-wise, 1979)".to_string(),
            ],
            direction: self.basis.direction(),
            models,
            pairs,
            separable,
            rank_bands: rank_bands(&self.basis, &self.boot, weights, LEVEL)?,
        })
    }
}

// --------------------------------------------------------------------------- CSV

/// Columns of [`pairs_csv`].
pub const PAIRS_CSV_COLUMNS: [&str; 33] = [
    "bundle",
    "policy",
    "count_unit",
    "weights",
    "seed",
    "replicates",
    "model_a",
    "model_b",
    "matched",
    "both_evidence",
    "a_only_evidence_b",
    "b_only_evidence_c",
    "neither_evidence",
    "invalid_a_only",
    "invalid_b_only",
    "invalid_both",
    "ber_a",
    "ber_b",
    "ber_diff_pp",
    "ber_diff_ci_lo_pp",
    "ber_diff_ci_hi_pp",
    "mcnemar_exact_p",
    "mcnemar_mid_p",
    "p_bh_fdr",
    "p_holm",
    "alpha",
    "separable_bh",
    "score_a",
    "score_b",
    "score_diff_pp",
    "score_diff_ci_lo_pp",
    "score_diff_ci_hi_pp",
    "sign_change_conditions",
];

/// The pairs of `report` as CSV (one row per pair, `pairs` = indices into [`CompareReport::pairs`]),
/// every row naming the bundle, policy, weights, seed and replicates. Rates are fractions, `_pp`
/// columns percentage points; a missing value is an empty field.
pub fn pairs_csv(report: &CompareReport, pairs: &[usize]) -> String {
    let num = |v: Option<f64>| crate::tables::csv_number(v);
    let mut out = line(&PAIRS_CSV_COLUMNS);
    for p in pairs.iter().filter_map(|&i| report.pairs.get(i)) {
        let t = &p.table;
        let fields = [
            report.bundle.clone(),
            report.policy.key().to_string(),
            report.count_unit.clone(),
            report.weights_description.clone(),
            report.seed.to_string(),
            report.reps.to_string(),
            p.model_a.clone(),
            p.model_b.clone(),
            t.matched().to_string(),
            t.both.to_string(),
            t.a_only.to_string(),
            t.b_only.to_string(),
            t.neither.to_string(),
            t.excluded.invalid_a_only.to_string(),
            t.excluded.invalid_b_only.to_string(),
            t.excluded.invalid_both.to_string(),
            num(p.ber_a),
            num(p.ber_b),
            num(p.ber_diff_pp),
            num(p.ber_diff_ci_pp.map(|i| i.0)),
            num(p.ber_diff_ci_pp.map(|i| i.1)),
            num(Some(p.mcnemar.p_exact)),
            num(Some(p.mcnemar.p_mid)),
            num(Some(p.p_bh)),
            num(Some(p.p_holm)),
            num(Some(report.alpha)),
            p.separable.to_string(),
            num(p.score_a),
            num(p.score_b),
            num(p.score_diff_pp),
            num(p.score_diff_ci_pp.map(|i| i.0)),
            num(p.score_diff_ci_pp.map(|i| i.1)),
            p.sign_changes.join(";"),
        ];
        out.push_str(&line(&fields));
    }
    out
}

/// Columns of [`rank_bands_csv`].
pub const RANK_BANDS_CSV_COLUMNS: [&str; 11] = [
    "bundle",
    "policy",
    "weights",
    "seed",
    "replicates",
    "model",
    "rank",
    "rank_band_lo",
    "rank_band_hi",
    "replicates_ranked",
    "tie_group",
];

/// The rank bands of `report` as CSV, one row per model (tie groups numbered from 1).
pub fn rank_bands_csv(report: &CompareReport) -> String {
    let num = |v: Option<f64>| crate::tables::csv_number(v);
    let mut out = line(&RANK_BANDS_CSV_COLUMNS);
    for b in &report.rank_bands.bands {
        let fields = [
            report.bundle.clone(),
            report.policy.key().to_string(),
            report.weights_description.clone(),
            report.seed.to_string(),
            report.reps.to_string(),
            b.model.clone(),
            num(b.rank),
            num(b.lo),
            num(b.hi),
            b.replicates.to_string(),
            b.group.map_or_else(String::new, |g| (g + 1).to_string()),
        ];
        out.push_str(&line(&fields));
    }
    out
}

fn line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut s = fields
        .iter()
        .map(|f| crate::tables::csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

/// The checks [`Comparison::new`] makes before any resampling and [`Comparison::from_parts`] makes
/// before joining: a significance level in (0, 1), at least two models, a condition with a Selection.
/// Returns the number of models.
fn check_inputs(audit: &Audit, options: &CompareOptions) -> Result<usize, CompareError> {
    if !(options.alpha > 0.0 && options.alpha < 1.0) {
        return Err(CompareError::BadAlpha(options.alpha));
    }
    let models = audit.facet_len(Some(audit.model_facet));
    if models < 2 {
        return Err(CompareError::TooFewModels { models });
    }
    if !audit.conditions.iter().any(|c| c.has_selection) {
        return Err(CompareError::NoSelectionCondition);
    }
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tail_matches_exact_rationals_for_small_n() {
        // Bin(20, ½): P(X ≤ k) = Σ_{j ≤ k} C(20, j) / 2^20, by integer arithmetic.
        let n = 20u64;
        let mut c = 1u64;
        let mut cum = 0u64;
        for k in 0..=n {
            cum += c;
            let exact = cum as f64 / (1u64 << n) as f64;
            let got = binomial_cdf_half(k, n);
            assert!(
                (got - exact).abs() <= 1e-14 * exact,
                "k={k}: {got} vs {exact}"
            );
            let pmf = c as f64 / (1u64 << n) as f64;
            assert!(
                (binomial_pmf_half(k, n) - pmf).abs() <= 1e-14 * pmf,
                "pmf k={k}"
            );
            c = c * (n - k) / (k + 1);
        }
    }

    #[test]
    fn stirling_error_is_continuous_at_the_switch_from_direct_sum_to_series() {
        // δ(15) by the direct sum and δ(16) by the series differ by about δ'(n) ≈ −1/(12 n²).
        let d15 = stirling_error(15);
        let d16 = stirling_error(16);
        let series15 = {
            let nf = 15.0f64;
            let nn = nf * nf;
            (1.0 / 12.0
                - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0 - 1.0 / 1188.0 / nn) / nn) / nn)
                    / nn)
                / nf
        };
        assert!((d15 - series15).abs() < 1e-13, "{d15} vs {series15}");
        assert!(d16 < d15);
    }

    #[test]
    fn bh_and_holm_give_tied_p_values_the_same_adjustment() {
        let p = [0.02, 0.02, 0.5, 0.001];
        let bh = benjamini_hochberg(&p);
        let hm = holm(&p);
        assert_eq!(bh[0], bh[1]);
        assert_eq!(hm[0], hm[1]);
        // Hand: sorted 0.001, 0.02, 0.02, 0.5; BH: 0.004, 0.02·4/3 (both), 0.5 → [0.02666…, …, 0.5, 0.004].
        assert!((bh[0] - 0.08 / 3.0).abs() < 1e-15);
        assert!((bh[3] - 0.004).abs() < 1e-15);
        // Holm: 4·0.001, 3·0.02, max(0.06, 2·0.02), max(0.06, 0.5).
        assert!((hm[3] - 0.004).abs() < 1e-15);
        assert!((hm[0] - 0.06).abs() < 1e-15 && (hm[1] - 0.06).abs() < 1e-15);
        assert!((hm[2] - 0.5).abs() < 1e-15);
    }
}
