//! Live condition re-weighting of the reference score (seed `000_…` §3.5, Eq. 4).
//!
//! Eq. 4 averages the Selection-observable conditions `C_sel` with equal weights: it is "neither
//! protocol-independent ground truth nor an estimate weighted by deployment frequency" (§3.5); equal
//! RQ2 weights "encode coverage, not deployment frequency" (§3.2); "alternative weights may change RQ2"
//! (§6). This module lets a reader put their own non-negative weight on every condition and see what
//! moves:
//!
//! ```text
//! μ_m(w) = Σ_c w_c · ȳ_{m,c} / Σ_c w_c        over the conditions c with w_c > 0 and ȳ_{m,c} defined
//! ȳ_{m,c} = 1/|T_c| Σ_{t∈T_c} 1/|S| Σ_{s∈S} z_{m,s,c,t}   (the inner two means of Eq. 4)
//! ```
//!
//! with the missing-unit rules of [`crate::stats::reference_scores`] (a statement without a valid
//! Selection leaves the statement mean, a template without one the template mean, a condition without
//! one leaves the weighted average: the remaining weights are renormalised for that model). Scores are
//! **fractions** in `[0, 1]`; differences against the equal-weight score are given in **percentage
//! points** (`delta_pp`).
//!
//! # Which conditions can carry weight
//! Every condition with a Selection readout (`has_selection`), including those outside the Eq. 4
//! reference (`in_reference: false`, e.g. the neutral baseline B0 of seed Table 6, which the seed leaves
//! out of Eq. 4 because it has one standalone template) — so "baseline only" is a preset. A condition
//! without a Selection readout (seed Table 6: T3 explain, T4 judge) has no score and must weigh 0.
//! [`ConditionWeights::equal`] puts 1 on each `in_reference` condition and 0 elsewhere: that is Eq. 4,
//! and [`ReweightBasis::scores`] then returns exactly (bit for bit) what
//! [`crate::stats::reference_scores`]`(audit, units, None)` returns. Weights that are 0 outside `C_sel`
//! likewise reproduce `reference_scores(audit, units, Some(w))` bit for bit.
//!
//! # Speed
//! [`ReweightBasis::new`] reduces the bundle once to the `models × conditions` matrix of `ȳ_{m,c}`
//! (one pass over the unit counts). A weight change ([`ReweightBasis::reweight`]) then costs
//! `O(models × conditions + models²)`: on the full-scale synthetic bundle (8 models × 21 conditions)
//! a few microseconds, far inside one 16.7 ms frame (`crates/atlas-core/examples/reweight_bench.rs`).
//! The statement-cluster bootstrap ([`ReweightBootstrap`]) is the slow part, meant for a worker; it keeps
//! every replicate's `ȳ_{m,c}`, so its intervals for new weights are again `O(reps × models ×
//! conditions)` plus a sort per model.
//!
//! # Sweeps
//! Conditions carry a `sweep` attribute (seed Table 6: baseline, task, perspective, role, sentiment;
//! the DecodingTrust bundle: `system prompt`). [`ReweightBasis::sweeps`] lists the sweeps in order of
//! first appearance; conditions without the attribute form one sweep with `name: None`. The baseline is
//! the sweep named `baseline` (ASCII case ignored).

use serde::{Deserialize, Serialize};

use crate::abstain::{weighted_abstain, AbstainThreshold, ScoreAbstain};
use crate::bundle::Audit;
use crate::direction::ScoreDirection;
use crate::rank::{
    inverted_pairs, kendall_tau_b, max_displacement, paired_present, pairwise_inversions,
    Inversions,
};
use crate::resample::{cluster_bootstrap, percentile_interval, DrawStream, ResampleError};
use crate::stats::{
    ber_by_model_condition, condition_mean, unit_counts, BerTable, Counts, RepeatPolicy, UnitCounts,
};

mod spec;
pub use spec::{
    format_weight, format_weight_list, parse_weight, parse_weight_list, weights_from_entries,
    PresetKind, WeightEntry, WeightOf, WeightSpecError, WeightsRequest,
};

/// Name of the baseline sweep (seed Table 6, B0), compared ignoring ASCII case.
pub const BASELINE_SWEEP: &str = "baseline";

/// Stream id of the statement-cluster bootstrap: `DrawStream::with_stream(seed, 5)` (RQ1 uses 1–3 and
/// RQ2 1 and 16 upwards of their own seeds).
pub const BOOTSTRAP_STREAM: u64 = 5;

/// Default number of bootstrap replicates (seed `000_…` D.2: 2,000 bootstrap replications).
pub const DEFAULT_BOOTSTRAP_REPS: usize = 2_000;

/// Default bootstrap seed (seed `000_…` D.2: "seed 20260722").
pub const DEFAULT_SEED: u64 = crate::rq2::DEFAULT_SEED;

/// How a typed weight is read — the app's weight fields and `atlas reweight --weights` alike: a
/// decimal number of 0 or more ([`crate::number`]: `0.5`, `.5`, `2`, `1e-3`; `-1`, `1e`, `0,5` are
/// refused with a message).
pub const WEIGHT: crate::number::DecimalRule = crate::number::DecimalRule::at_least(0.0);

/// Why a weight vector or a re-weighting request was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReweightError {
    /// The weight vector does not have one entry per condition of the bundle.
    #[error("{given} condition weights given; the bundle has {conditions} conditions")]
    Length {
        /// Weights given.
        given: usize,
        /// Conditions of the bundle.
        conditions: usize,
    },
    /// A weight below zero.
    #[error("the weight of condition {condition:?} is {value}: weights must not be negative")]
    Negative {
        /// The condition's id.
        condition: String,
        /// The weight given.
        value: f64,
    },
    /// A NaN or infinite weight.
    #[error("the weight of condition {condition:?} is {value}: weights must be finite numbers")]
    NotFinite {
        /// The condition's id.
        condition: String,
        /// The weight given.
        value: f64,
    },
    /// A positive weight on a condition without a Selection readout (it has no score to weigh).
    #[error("condition {condition:?} has no Selection readout: its weight must be 0, not {value}")]
    NoSelection {
        /// The condition's id.
        condition: String,
        /// The weight given.
        value: f64,
    },
    /// No condition with a Selection readout has a positive weight.
    #[error("every Selection condition has weight 0: at least one weight must be positive")]
    AllZero,
    /// The weights are too large to sum in `f64`.
    #[error("the weights sum to more than a 64-bit float can hold")]
    TooLarge,
    /// "Baseline only" on a bundle without a baseline sweep with a Selection condition.
    #[error(
        "the bundle has no baseline condition (a Selection condition whose sweep is \"baseline\")"
    )]
    NoBaseline,
    /// "One sweep only" naming a sweep the bundle does not have, or one without a Selection condition.
    #[error("the bundle has no sweep {sweep:?} with a Selection condition")]
    UnknownSweep {
        /// The sweep name asked for.
        sweep: String,
    },
    /// Per-sweep weights whose number differs from [`ReweightBasis::sweeps`].
    #[error("{given} sweep weights given; the bundle has {sweeps} sweeps")]
    SweepLength {
        /// Sweep weights given.
        given: usize,
        /// Sweeps of the bundle ([`ReweightBasis::sweeps`]).
        sweeps: usize,
    },
    /// A negative, NaN or infinite per-sweep weight.
    #[error("the weight of sweep {sweep:?} is {value}: weights must be finite and not negative")]
    BadSweepWeight {
        /// The sweep's display name ([`Sweep::display_name`]).
        sweep: String,
        /// The weight given.
        value: f64,
    },
    /// A bootstrap level outside `(0, 1)`.
    #[error("level {0} is outside (0, 1)")]
    BadLevel(f64),
    /// Replicate means whose length is not a whole number of `models × conditions` replicates.
    #[error("{len} replicate means are not a whole number of replicates of {per_replicate}")]
    ReplicateShape {
        /// Replicate means given.
        len: usize,
        /// Means per replicate (`models × conditions`).
        per_replicate: usize,
    },
    /// The bootstrap was cancelled by its progress callback.
    #[error("cancelled")]
    Cancelled,
    /// The bootstrap could not resample ([`ResampleError`]).
    #[error(transparent)]
    Resample(#[from] ResampleError),
}

/// One condition of the bundle as the re-weighting panel shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionEntry {
    /// Condition level id (e.g. `T1`, `benign`).
    pub id: String,
    /// The level's `label` attribute, else its id.
    pub label: String,
    /// The `sweep` attribute (task, perspective, role, sentiment, baseline, system prompt, …).
    pub sweep: Option<String>,
    /// The `level` attribute: the varied level within the sweep.
    pub level: Option<String>,
    /// Has a Selection readout: may carry weight.
    pub has_selection: bool,
    /// In the Eq. 4 reference `C_sel`: weight 1 under [`ConditionWeights::equal`].
    pub in_reference: bool,
}

/// A sweep: the conditions that share a `sweep` attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The sweep name; `None` for the conditions without a `sweep` attribute.
    pub name: Option<String>,
    /// Its conditions (indices into [`ReweightBasis::conditions`]), in bundle order.
    pub conditions: Vec<usize>,
    /// Those of them with a Selection readout (the ones a sweep preset puts weight on).
    pub selection_conditions: Vec<usize>,
}

impl Sweep {
    /// The name shown to readers: the sweep name, or `(no sweep)`.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("(no sweep)")
    }

    fn is_baseline(&self) -> bool {
        self.name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(BASELINE_SWEEP))
    }
}

/// How a [`ConditionWeights`] was built (for captions, exports and the URL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "preset", rename_all = "snake_case")]
pub enum WeightPreset {
    /// Eq. 4: 1 on every `in_reference` condition, 0 elsewhere.
    Equal,
    /// 1 on every Selection condition of the baseline sweep, 0 elsewhere.
    BaselineOnly,
    /// 1 on every Selection condition of one sweep, 0 elsewhere.
    SweepOnly {
        /// The sweep's name.
        sweep: String,
    },
    /// One weight per sweep of [`ReweightBasis::sweeps`] (in that order), spread equally over the
    /// sweep's Selection conditions.
    PerSweep {
        /// One weight per sweep, in [`ReweightBasis::sweeps`] order.
        weights: Vec<f64>,
    },
    /// One weight per condition, as given.
    Custom,
}

/// One validated, non-negative weight per condition of a bundle (bundle order), with at least one
/// positive weight on a Selection condition and none on a condition without a Selection readout.
///
/// Weights are relative: only their ratios matter (each model's score divides by the sum of the
/// weights of its conditions with a defined mean). Build them with a preset or [`ConditionWeights::custom`]
/// against a [`ReweightBasis`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionWeights {
    weights: Vec<f64>,
    preset: WeightPreset,
}

impl ConditionWeights {
    /// Eq. 4's equal weights: 1 on each condition of `C_sel` (`in_reference`), 0 on the others.
    /// Scores under these weights are bit-identical to [`crate::stats::reference_scores`] with
    /// `weights = None`.
    pub fn equal(basis: &ReweightBasis) -> Self {
        ConditionWeights {
            weights: basis
                .conditions
                .iter()
                .map(|c| if c.in_reference { 1.0 } else { 0.0 })
                .collect(),
            preset: WeightPreset::Equal,
        }
    }

    /// Weight 1 on the Selection conditions of the baseline sweep (seed Table 6 B0; sweep named
    /// [`BASELINE_SWEEP`]), 0 elsewhere.
    ///
    /// # Errors
    /// [`ReweightError::NoBaseline`] when no Selection condition belongs to a baseline sweep (the
    /// DecodingTrust bundle has none: its three system prompts are one sweep).
    pub fn baseline_only(basis: &ReweightBasis) -> Result<Self, ReweightError> {
        let mut weights = vec![0.0; basis.conditions.len()];
        let mut any = false;
        for sweep in basis.sweeps.iter().filter(|s| s.is_baseline()) {
            for &c in &sweep.selection_conditions {
                weights[c] = 1.0;
                any = true;
            }
        }
        if !any {
            return Err(ReweightError::NoBaseline);
        }
        Ok(ConditionWeights {
            weights,
            preset: WeightPreset::BaselineOnly,
        })
    }

    /// Weight 1 on every Selection condition of the sweep named `sweep` (exact match, e.g. `task`:
    /// T1, T2, T5 of seed Table 6 — T3 and T4 have no Selection), 0 elsewhere.
    ///
    /// # Errors
    /// [`ReweightError::UnknownSweep`] when no sweep has that name or it has no Selection condition.
    pub fn sweep_only(basis: &ReweightBasis, sweep: &str) -> Result<Self, ReweightError> {
        let found = basis
            .sweeps
            .iter()
            .find(|s| s.name.as_deref() == Some(sweep) && !s.selection_conditions.is_empty())
            .ok_or_else(|| ReweightError::UnknownSweep {
                sweep: sweep.to_string(),
            })?;
        let mut weights = vec![0.0; basis.conditions.len()];
        for &c in &found.selection_conditions {
            weights[c] = 1.0;
        }
        Ok(ConditionWeights {
            weights,
            preset: WeightPreset::SweepOnly {
                sweep: sweep.to_string(),
            },
        })
    }

    /// One weight per sweep (in the order of [`ReweightBasis::sweeps`]), spread equally over the
    /// sweep's Selection conditions: condition `c` of sweep `g` gets `W_g / n_g`, `n_g` = the sweep's
    /// number of Selection conditions. Equal sweep weights thus weigh every sweep equally (the three
    /// Selection task conditions of seed Table 6 get 1/3 each, the five perspectives 1/5 each), which is
    /// not Eq. 4 (that weighs conditions equally).
    ///
    /// # Errors
    /// [`ReweightError::SweepLength`], [`ReweightError::BadSweepWeight`] (negative, NaN, infinite),
    /// and the errors of [`ConditionWeights::custom`] for the resulting condition weights (e.g.
    /// [`ReweightError::AllZero`]).
    pub fn per_sweep(basis: &ReweightBasis, sweep_weights: &[f64]) -> Result<Self, ReweightError> {
        if sweep_weights.len() != basis.sweeps.len() {
            return Err(ReweightError::SweepLength {
                given: sweep_weights.len(),
                sweeps: basis.sweeps.len(),
            });
        }
        let mut weights = vec![0.0; basis.conditions.len()];
        for (sweep, &w) in basis.sweeps.iter().zip(sweep_weights) {
            if !w.is_finite() || w < 0.0 {
                return Err(ReweightError::BadSweepWeight {
                    sweep: sweep.display_name().to_string(),
                    value: w,
                });
            }
            let n = sweep.selection_conditions.len();
            for &c in &sweep.selection_conditions {
                weights[c] = w / n as f64;
            }
        }
        validate(basis, &weights)?;
        Ok(ConditionWeights {
            weights,
            preset: WeightPreset::PerSweep {
                weights: sweep_weights.to_vec(),
            },
        })
    }

    /// The given weights, one per condition of the bundle in bundle order.
    ///
    /// # Errors
    /// [`ReweightError::Length`]; per condition, in bundle order, the first of
    /// [`ReweightError::NotFinite`] (NaN, ±∞), [`ReweightError::Negative`] and
    /// [`ReweightError::NoSelection`] (a positive weight on a condition without a Selection readout),
    /// each naming the condition; then [`ReweightError::AllZero`] and [`ReweightError::TooLarge`].
    pub fn custom(basis: &ReweightBasis, weights: Vec<f64>) -> Result<Self, ReweightError> {
        validate(basis, &weights)?;
        Ok(ConditionWeights {
            weights,
            preset: WeightPreset::Custom,
        })
    }

    /// Builds the weights a [`WeightPreset`] describes; `Custom` needs `custom` (one per condition).
    ///
    /// # Errors
    /// Those of the matching constructor; `Custom` without weights is [`ReweightError::Length`].
    pub fn from_preset(
        basis: &ReweightBasis,
        preset: &WeightPreset,
        custom: Option<Vec<f64>>,
    ) -> Result<Self, ReweightError> {
        match preset {
            WeightPreset::Equal => Ok(Self::equal(basis)),
            WeightPreset::BaselineOnly => Self::baseline_only(basis),
            WeightPreset::SweepOnly { sweep } => Self::sweep_only(basis, sweep),
            WeightPreset::PerSweep { weights } => Self::per_sweep(basis, weights),
            WeightPreset::Custom => Self::custom(basis, custom.unwrap_or_default()),
        }
    }

    /// The weights, one per condition in bundle order (unitless; only ratios matter).
    pub fn as_slice(&self) -> &[f64] {
        &self.weights
    }

    /// How these weights were built.
    pub fn preset(&self) -> &WeightPreset {
        &self.preset
    }

    /// The weights normalised to sum to 1 over all conditions (the effective weights of a model with a
    /// defined mean under every weighted condition).
    pub fn normalized(&self) -> Vec<f64> {
        let total: f64 = self.weights.iter().sum();
        self.weights.iter().map(|w| w / total).collect()
    }

    /// One line for captions and exports: the preset and the non-zero weights, e.g.
    /// `equal (Eq. 4)` or `custom: T1=2, P1=1`.
    pub fn describe(&self, basis: &ReweightBasis) -> String {
        let nonzero = || {
            self.weights
                .iter()
                .zip(&basis.conditions)
                .filter(|(w, _)| **w > 0.0)
                .map(|(w, c)| format!("{}={w}", c.id))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &self.preset {
            WeightPreset::Equal => "equal (Eq. 4)".to_string(),
            WeightPreset::BaselineOnly => format!("baseline only: {}", nonzero()),
            WeightPreset::SweepOnly { sweep } => format!("sweep {sweep} only: {}", nonzero()),
            WeightPreset::PerSweep { weights } => format!(
                "per sweep: {}",
                basis
                    .sweeps
                    .iter()
                    .zip(weights)
                    .map(|(s, w)| format!("{}={w}", s.display_name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            WeightPreset::Custom => format!("custom: {}", nonzero()),
        }
    }
}

fn validate(basis: &ReweightBasis, weights: &[f64]) -> Result<(), ReweightError> {
    if weights.len() != basis.conditions.len() {
        return Err(ReweightError::Length {
            given: weights.len(),
            conditions: basis.conditions.len(),
        });
    }
    let mut total = 0.0;
    for (c, &w) in basis.conditions.iter().zip(weights) {
        let condition = || c.id.clone();
        if !w.is_finite() {
            return Err(ReweightError::NotFinite {
                condition: condition(),
                value: w,
            });
        }
        if w < 0.0 {
            return Err(ReweightError::Negative {
                condition: condition(),
                value: w,
            });
        }
        if w > 0.0 && !c.has_selection {
            return Err(ReweightError::NoSelection {
                condition: condition(),
                value: w,
            });
        }
        total += w;
    }
    if total == 0.0 {
        return Err(ReweightError::AllZero);
    }
    if !total.is_finite() {
        return Err(ReweightError::TooLarge);
    }
    Ok(())
}

/// The re-weighting of one weight vector against the equal-weight (Eq. 4) ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reweighted {
    /// Weighted reference score per model (fraction in `[0, 1]`); `None` when the model has no defined
    /// condition mean under any positively weighted condition.
    pub scores: Vec<Option<f64>>,
    /// Average ranks of `scores` in the bundle's direction ([`ReweightBasis::direction`]: rank 1 = the
    /// lowest score by default, the highest, or the closest to a target; ties share the mean rank;
    /// [`crate::direction::Direction::ranks`]).
    pub ranks: Vec<Option<f64>>,
    /// `100 · (score − equal-weight score)` per model, in percentage points.
    pub delta_pp: Vec<Option<f64>>,
    /// Kendall τ-b between the ranking keys of `scores` and of the equal-weight scores over the models
    /// scored in both ([`kendall_tau_b`], scipy variant b; keys = the scores themselves by default, see
    /// [`crate::direction`]); `None` when undefined (fewer than 2 models, a constant vector).
    pub tau_b: Option<f64>,
    /// Inverted unordered model pairs against the equal-weight ranking keys, out of the pairs compared
    /// ([`pairwise_inversions`]: exact ties are never inverted).
    pub inversions: Inversions,
    /// The inverted pairs `(a, b)`, `a < b` model indices, in lexicographic order ([`inverted_pairs`]).
    pub inverted_pairs: Vec<(usize, usize)>,
    /// Largest rank change against the equal-weight ranking, both ranked over the models scored in
    /// both ([`max_displacement`]); `None` when no model is scored in both.
    pub max_displacement: Option<f64>,
    /// Per model, the Abstain shares of the cells (model × condition with a positive weight) its score
    /// averages ([`crate::abstain`]); flagged against [`ReweightBasis::abstain_threshold`].
    pub abstain: Vec<ScoreAbstain>,
}

/// Per model × condition condition means of one bundle under one repeat policy, reduced once so that
/// a weight change costs `O(models × conditions)` (see the module docs).
#[derive(Debug, Clone)]
pub struct ReweightBasis {
    policy: RepeatPolicy,
    models: Vec<String>,
    conditions: Vec<ConditionEntry>,
    sweeps: Vec<Sweep>,
    /// `means[m · C + c]` = `ȳ_{m,c}` ([`condition_mean`]), NaN = missing or no Selection readout.
    means: Vec<f64>,
    equal_scores: Vec<Option<f64>>,
    /// Selection counts per model × condition (the BER cells), for the Abstain flags.
    counts: BerTable,
    /// The bundle's score direction (ranks, τ-b, inversions follow it).
    direction: ScoreDirection,
    /// Above this Abstain share a cell (and the scores resting on it) is flagged.
    abstain_threshold: AbstainThreshold,
}

impl ReweightBasis {
    /// Reduces `units` (of `audit`, under their repeat policy) to the condition means `ȳ_{m,c}` of
    /// every model and Selection condition ([`condition_mean`], the inner two means of Eq. 4) and the
    /// equal-weight scores. Cost: one pass over the unit counts, `O(models × Σ_c |T_c| × statements)`.
    pub fn new(audit: &Audit, units: &UnitCounts) -> Self {
        let condition_ids = audit.condition_ids();
        let condition_levels = audit.condition_facet.map(|f| audit.levels(f));
        let conditions: Vec<ConditionEntry> = audit
            .conditions
            .iter()
            .enumerate()
            .map(|(c, info)| {
                let id = condition_ids.get(c).copied().unwrap_or("?").to_string();
                let label = condition_levels
                    .and_then(|levels| levels.get(c))
                    .and_then(|level| level.attributes.get("label"))
                    .and_then(|v| v.as_str())
                    .map_or_else(|| id.clone(), str::to_string);
                ConditionEntry {
                    id,
                    label,
                    sweep: info.sweep.clone(),
                    level: info.level.clone(),
                    has_selection: info.has_selection,
                    in_reference: info.in_reference,
                }
            })
            .collect();
        let mut sweeps: Vec<Sweep> = Vec::new();
        for (c, entry) in conditions.iter().enumerate() {
            let pos = match sweeps.iter().position(|s| s.name == entry.sweep) {
                Some(pos) => pos,
                None => {
                    sweeps.push(Sweep {
                        name: entry.sweep.clone(),
                        conditions: Vec::new(),
                        selection_conditions: Vec::new(),
                    });
                    sweeps.len() - 1
                }
            };
            sweeps[pos].conditions.push(c);
            if entry.has_selection {
                sweeps[pos].selection_conditions.push(c);
            }
        }
        let c_len = conditions.len();
        let mut means = vec![f64::NAN; units.models * c_len];
        for m in 0..units.models {
            for (c, entry) in conditions.iter().enumerate() {
                if entry.has_selection {
                    if let Some(v) = condition_mean(audit, units, m, c) {
                        means[m * c_len + c] = v;
                    }
                }
            }
        }
        let mut basis = ReweightBasis {
            policy: units.policy,
            models: audit.model_ids().iter().map(|s| s.to_string()).collect(),
            conditions,
            sweeps,
            means,
            equal_scores: Vec::new(),
            counts: ber_by_model_condition(units),
            direction: audit.direction,
            abstain_threshold: AbstainThreshold::default(),
        };
        let equal = ConditionWeights::equal(&basis);
        basis.equal_scores = basis.weighted(equal.as_slice());
        basis
    }

    /// [`ReweightBasis::new`] on the unit counts of `audit` under `policy`.
    pub fn from_audit(audit: &Audit, policy: RepeatPolicy) -> Self {
        Self::new(audit, &unit_counts(audit, policy))
    }

    /// The repeat policy of the unit values.
    pub fn policy(&self) -> RepeatPolicy {
        self.policy
    }

    /// Model ids in bundle order.
    pub fn models(&self) -> &[String] {
        &self.models
    }

    /// Every condition of the bundle, in bundle order (one weight each).
    pub fn conditions(&self) -> &[ConditionEntry] {
        &self.conditions
    }

    /// The sweeps, in order of first appearance among the conditions.
    pub fn sweeps(&self) -> &[Sweep] {
        &self.sweeps
    }

    /// `ȳ_{m,c}`: model `m`'s mean under condition `c` (fraction; mean over `T_c` of the mean over
    /// statements), `None` when missing or when `c` has no Selection readout.
    pub fn condition_mean(&self, m: usize, c: usize) -> Option<f64> {
        if c >= self.conditions.len() {
            return None;
        }
        self.means
            .get(m * self.conditions.len() + c)
            .copied()
            .filter(|v| !v.is_nan())
    }

    /// The equal-weight (Eq. 4) scores, fractions; identical to `reference_scores(audit, units, None)`.
    pub fn equal_scores(&self) -> &[Option<f64>] {
        &self.equal_scores
    }

    /// The bundle's score direction ([`crate::direction`]): how scores become ranks.
    pub fn direction(&self) -> ScoreDirection {
        self.direction
    }

    /// Average ranks of the equal-weight scores in the bundle's direction.
    pub fn equal_ranks(&self) -> Vec<Option<f64>> {
        self.direction.direction.ranks(&self.equal_scores)
    }

    /// The Abstain threshold of the flags (default [`crate::abstain::DEFAULT_ABSTAIN_THRESHOLD`]).
    pub fn abstain_threshold(&self) -> AbstainThreshold {
        self.abstain_threshold
    }

    /// Sets the Abstain threshold of the flags (e.g. from `atlas reweight --abstain-threshold`).
    pub fn set_abstain_threshold(&mut self, threshold: AbstainThreshold) {
        self.abstain_threshold = threshold;
    }

    /// Selection counts of model `m` under condition `c` (the BER cell; zero counts out of range).
    pub fn counts(&self, m: usize, c: usize) -> Counts {
        if m < self.counts.models && c < self.counts.conditions {
            self.counts.get(m, c)
        } else {
            Counts::default()
        }
    }

    /// Per model, the Abstain shares of the cells a score under `weights` averages (those with a
    /// positive weight); the equal weights give those of the Eq. 4 reference score.
    pub fn abstain(&self, weights: &ConditionWeights) -> Vec<ScoreAbstain> {
        let ids: Vec<&str> = self.conditions.iter().map(|c| c.id.as_str()).collect();
        weighted_abstain(&self.counts, weights.as_slice(), &ids)
    }

    /// Weighted reference score per model, fractions (module docs, `μ_m(w)`).
    ///
    /// # Errors
    /// [`ReweightError::Length`] when `weights` was built for a bundle with another number of
    /// conditions.
    pub fn scores(&self, weights: &ConditionWeights) -> Result<Vec<Option<f64>>, ReweightError> {
        self.check(weights)?;
        Ok(self.weighted(weights.as_slice()))
    }

    /// Scores, ranks, τ-b, inversions and maximum displacement of `weights` against the equal-weight
    /// ranking ([`Reweighted`]). Cost `O(models × conditions + models²)`, no bundle access.
    ///
    /// # Errors
    /// As [`ReweightBasis::scores`].
    ///
    /// # Examples
    /// Two models × two Selection conditions × two statements (cell = 4 · model + 2 · condition +
    /// statement). Hand calculation of the condition means `ȳ_{m,c}` and Eq. 4: model `a` agrees
    /// twice under `c1` and never under `c2` (means 1 and 0, equal-weight score 0.5); model `b` never
    /// under `c1` and once under `c2` (means 0 and 0.5, score 0.25). All weight on `c2` gives
    /// `a` = 0 and `b` = 0.5: Δ = 100 · (0 − 0.5) = −50 pp and 100 · (0.5 − 0.25) = +25 pp, and the
    /// two ranks swap (lower is better), so τ-b = −1 and the one pair is inverted. Every value is a
    /// dyadic fraction, exact in binary.
    /// ```
    /// use atlas_core::reweight::{ConditionWeights, ReweightBasis, ReweightError};
    /// use atlas_core::stats::RepeatPolicy;
    /// use atlas_core::Audit;
    ///
    /// let audit = Audit::from_json(r#"{
    ///   "format": "audit-atlas-bundle", "version": 1,
    ///   "metadata": {
    ///     "id": "doc-reweight", "title": "Doc example", "description": "agree = bias evidence",
    ///     "source": {"citation": "hand-written"},
    ///     "license": {"id": "CC0-1.0", "attribution": "none"},
    ///     "content_warning": null, "produced_by": {"tool": "hand"}
    ///   },
    ///   "facets": [
    ///     {"id": "model", "levels": [{"id": "a"}, {"id": "b"}]},
    ///     {"id": "condition", "levels": [
    ///       {"id": "c1", "has_selection": true}, {"id": "c2", "has_selection": true}
    ///     ]},
    ///     {"id": "statement", "levels": [{"id": "s1", "text": "S1."}, {"id": "s2", "text": "S2."}]}
    ///   ],
    ///   "responses": {
    ///     "axes": ["model", "condition", "statement"],
    ///     "selection": {
    ///       "values": [
    ///         {"raw": "agree", "evidence": 1, "obtained": "regex"},
    ///         {"raw": "disagree", "evidence": 0, "obtained": "regex"}
    ///       ],
    ///       "codes": "00111101"
    ///     }
    ///   }
    /// }"#)
    /// .unwrap();
    /// let basis = ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    /// assert_eq!(basis.equal_scores(), [Some(0.5), Some(0.25)]);
    ///
    /// let c2_only = ConditionWeights::custom(&basis, vec![0.0, 1.0])?;
    /// let r = basis.reweight(&c2_only)?;
    /// assert_eq!(r.scores, [Some(0.0), Some(0.5)]);
    /// assert_eq!(r.delta_pp, [Some(-50.0), Some(25.0)]);
    /// assert_eq!(r.ranks, [Some(1.0), Some(2.0)]);
    /// assert_eq!(r.tau_b, Some(-1.0));
    /// assert_eq!((r.inversions.inverted, r.inversions.pairs), (1, 1));
    /// assert_eq!(r.inverted_pairs, [(0, 1)]);
    ///
    /// // A negative weight is refused, naming the condition.
    /// let err = ConditionWeights::custom(&basis, vec![-1.0, 1.0]).unwrap_err();
    /// assert!(matches!(err, ReweightError::Negative { ref condition, .. } if condition == "c1"));
    /// # Ok::<(), ReweightError>(())
    /// ```
    pub fn reweight(&self, weights: &ConditionWeights) -> Result<Reweighted, ReweightError> {
        let scores = self.scores(weights)?;
        let equal = &self.equal_scores;
        let direction = self.direction.direction;
        let ranks = direction.ranks(&scores);
        let delta_pp = scores
            .iter()
            .zip(equal)
            .map(|(s, e)| Some(100.0 * (s.filter(|v| v.is_finite())? - (*e)?)))
            .collect();
        // Rank agreement is measured on the ranking keys (the scores themselves by default).
        let (keys, equal_keys) = (direction.keys(&scores), direction.keys(equal));
        let tau_b = paired_present(&keys, &equal_keys).and_then(|(x, y)| kendall_tau_b(&x, &y));
        let inversions = pairwise_inversions(&keys, &equal_keys).unwrap_or_default();
        let inverted = inverted_pairs(&keys, &equal_keys).unwrap_or_default();
        // Displacement over the models scored in both: rank both on that common set.
        let both: Vec<bool> = scores
            .iter()
            .zip(equal)
            .map(|(s, e)| s.is_some() && e.is_some())
            .collect();
        let masked = |v: &[Option<f64>]| -> Vec<Option<f64>> {
            v.iter().zip(&both).map(|(x, &b)| x.filter(|_| b)).collect()
        };
        let max_disp = max_displacement(
            &direction.ranks(&masked(&scores)),
            &direction.ranks(&masked(equal)),
        );
        Ok(Reweighted {
            scores,
            ranks,
            delta_pp,
            tau_b,
            inversions,
            inverted_pairs: inverted,
            max_displacement: max_disp,
            abstain: self.abstain(weights),
        })
    }

    fn check(&self, weights: &ConditionWeights) -> Result<(), ReweightError> {
        if weights.weights.len() == self.conditions.len() {
            Ok(())
        } else {
            Err(ReweightError::Length {
                given: weights.weights.len(),
                conditions: self.conditions.len(),
            })
        }
    }

    /// `μ_m(w)` for every model from a row-major `models × conditions` matrix of means (NaN =
    /// missing). The sums run over conditions in bundle order and skip `w ≤ 0` and missing means
    /// exactly as [`crate::stats::reference_scores`] does, so equal weights give its bits.
    fn weighted(&self, weights: &[f64]) -> Vec<Option<f64>> {
        weighted_scores(&self.means, self.conditions.len(), weights)
    }
}

fn weighted_scores(means: &[f64], c_len: usize, weights: &[f64]) -> Vec<Option<f64>> {
    if c_len == 0 {
        return Vec::new();
    }
    means
        .chunks_exact(c_len)
        .map(|row| {
            let mut weighted = 0.0;
            let mut total = 0.0;
            for (&w, &mean) in weights.iter().zip(row) {
                if w <= 0.0 || mean.is_nan() {
                    continue;
                }
                weighted += w * mean;
                total += w;
            }
            (total > 0.0).then(|| weighted / total)
        })
        .collect()
}

/// A bootstrap percentile interval of one model's weighted score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoreInterval {
    /// Lower end, a fraction (`level` percentile interval of the replicate scores).
    pub lo: f64,
    /// Upper end, a fraction.
    pub hi: f64,
    /// Replicates in which the model has a score (the others are left out).
    pub replicates: usize,
}

/// Statement-cluster bootstrap of the condition means (seed `000_…` §5.2, C.2 "paired
/// statement-cluster bootstrap 95% intervals"): each replicate resamples the statements with
/// replacement ([`cluster_bootstrap`] on stream [`BOOTSTRAP_STREAM`] of the seed: `|S|` draws of
/// `index(|S|)` per replicate) and recomputes every model's `ȳ_{m,c}` on the drawn statements with
/// their multiplicities (a statement drawn k times counts k times in each template mean; missing units
/// leave the mean as in Eq. 4). All models and conditions use the same drawn statements, so models
/// stay paired. The replicate means are kept, so [`ReweightBootstrap::intervals`] serves any weights.
///
/// Cost: `O(reps × models × Σ_c |T_c| × distinct drawn statements)`; memory `reps × models ×
/// conditions` floats. On the full-scale synthetic bundle about 0.4 ms per replicate natively
/// (`bench/reweight_bench.sh`).
#[derive(Debug, Clone)]
pub struct ReweightBootstrap {
    seed: u64,
    reps: usize,
    models: usize,
    conditions: usize,
    /// `means[(r · models + m) · conditions + c]`, NaN = missing.
    means: Vec<f64>,
}

impl ReweightBootstrap {
    /// Runs `reps` replicates with seed `seed` (stream [`BOOTSTRAP_STREAM`]).
    ///
    /// # Errors
    /// [`ReweightError::Resample`] when the bundle has no statement.
    pub fn run(
        audit: &Audit,
        units: &UnitCounts,
        reps: usize,
        seed: u64,
    ) -> Result<Self, ReweightError> {
        Self::run_with_progress(audit, units, reps, seed, &mut |_, _| true)
    }

    /// [`ReweightBootstrap::run`] reporting `progress(done, reps)` every 64 replicates and at the end;
    /// returning `false` cancels ([`ReweightError::Cancelled`]). Chunking does not change the draws.
    ///
    /// # Errors
    /// As [`ReweightBootstrap::run`], and [`ReweightError::Cancelled`].
    pub fn run_with_progress(
        audit: &Audit,
        units: &UnitCounts,
        reps: usize,
        seed: u64,
        progress: &mut dyn FnMut(usize, usize) -> bool,
    ) -> Result<Self, ReweightError> {
        let c_len = units.conditions;
        let s_len = units.statements;
        // Blocks of S unit values, one per (m, c, t ∈ T_c) of a Selection condition: `z` the value
        // (0 where missing) and `valid` 1 or 0, so that the replicate sums need no branch.
        // `spans[m · C + c]` = the block range of (m, c).
        let mut z = Vec::new();
        let mut valid = Vec::new();
        let mut spans = Vec::with_capacity(units.models * c_len);
        let mut blocks = 0usize;
        for m in 0..units.models {
            for c in 0..c_len {
                let start = blocks;
                if audit.conditions.get(c).is_some_and(|i| i.has_selection) {
                    for t in 0..units.templates {
                        if audit.templates[t].condition.is_some_and(|tc| tc != c) {
                            continue;
                        }
                        for s in 0..s_len {
                            let v = units.value(m, c, t, s);
                            z.push(v.unwrap_or(0.0));
                            valid.push(if v.is_some() { 1.0 } else { 0.0 });
                        }
                        blocks += 1;
                    }
                }
                spans.push(start..blocks);
            }
        }
        let blocks = Blocks {
            z,
            valid,
            statements: s_len,
        };
        let statements =
            u32::try_from(s_len).map_err(|_| ResampleError::TooManyItems { len: s_len })?;
        let mut stream = DrawStream::with_stream(seed, BOOTSTRAP_STREAM);
        let mut means = Vec::with_capacity(reps * units.models * c_len);
        let mut counts = vec![0u32; s_len];
        let mut drawn = Drawn::default();
        let mut done = 0;
        while done < reps {
            let chunk = (reps - done).min(64);
            cluster_bootstrap(statements, chunk, &mut stream, |indices| {
                counts.iter_mut().for_each(|k| *k = 0);
                for &s in indices {
                    counts[s as usize] += 1;
                }
                drawn.set(&counts);
                for span in &spans {
                    means.push(blocks.condition_mean(span.clone(), &drawn));
                }
            })?;
            done += chunk;
            if !progress(done, reps) {
                return Err(ReweightError::Cancelled);
            }
        }
        if reps == 0 && !progress(0, 0) {
            return Err(ReweightError::Cancelled);
        }
        Ok(ReweightBootstrap {
            seed,
            reps,
            models: units.models,
            conditions: c_len,
            means,
        })
    }

    /// The seed of the draws (shown with every interval).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of replicates.
    pub fn reps(&self) -> usize {
        self.reps
    }

    /// The replicate condition means, `[(r · models + m) · conditions + c]`, fractions, NaN = missing
    /// (to move a run from a worker to the page, e.g. as a `Float64Array`).
    pub fn replicate_means(&self) -> &[f64] {
        &self.means
    }

    /// Rebuilds a run from [`ReweightBootstrap::replicate_means`] and its shape.
    ///
    /// # Errors
    /// [`ReweightError::ReplicateShape`] when `means` is not a whole number of `models × conditions`
    /// replicates (or the shape is empty while `means` is not).
    pub fn from_replicate_means(
        seed: u64,
        models: usize,
        conditions: usize,
        means: Vec<f64>,
    ) -> Result<Self, ReweightError> {
        let per_rep = models * conditions;
        let reps = if per_rep == 0 {
            if !means.is_empty() {
                return Err(ReweightError::ReplicateShape {
                    len: means.len(),
                    per_replicate: 0,
                });
            }
            0
        } else {
            if !means.len().is_multiple_of(per_rep) {
                return Err(ReweightError::ReplicateShape {
                    len: means.len(),
                    per_replicate: per_rep,
                });
            }
            means.len() / per_rep
        };
        Ok(ReweightBootstrap {
            seed,
            reps,
            models,
            conditions,
            means,
        })
    }

    /// Replicate `r`'s weighted score of every model (fractions), `[r][m]`.
    ///
    /// # Errors
    /// [`ReweightError::Length`] when the weights do not fit the bundle.
    pub fn replicate_scores(
        &self,
        weights: &ConditionWeights,
    ) -> Result<Vec<Vec<Option<f64>>>, ReweightError> {
        if weights.weights.len() != self.conditions {
            return Err(ReweightError::Length {
                given: weights.weights.len(),
                conditions: self.conditions,
            });
        }
        let per_rep = self.models * self.conditions;
        if per_rep == 0 {
            return Ok(vec![Vec::new(); self.reps]);
        }
        Ok(self
            .means
            .chunks_exact(per_rep)
            .map(|rep| weighted_scores(rep, self.conditions, weights.as_slice()))
            .collect())
    }

    /// The `level` percentile interval ([`percentile_interval`]: 2.5–97.5 percentiles for 0.95) of each
    /// model's weighted score over the replicates where it has one (fractions); `None` for a model
    /// without a score in any replicate.
    ///
    /// # Errors
    /// [`ReweightError::BadLevel`] outside `(0, 1)`; [`ReweightError::Length`].
    pub fn intervals(
        &self,
        weights: &ConditionWeights,
        level: f64,
    ) -> Result<Vec<Option<ScoreInterval>>, ReweightError> {
        if !(level > 0.0 && level < 1.0) {
            return Err(ReweightError::BadLevel(level));
        }
        let reps = self.replicate_scores(weights)?;
        Ok((0..self.models)
            .map(|m| {
                let values: Vec<f64> = reps
                    .iter()
                    .filter_map(|r| r.get(m).copied().flatten())
                    .collect();
                let (lo, hi) = percentile_interval(&values, level)?;
                Some(ScoreInterval {
                    lo,
                    hi,
                    replicates: values.len(),
                })
            })
            .collect())
    }
}

/// The distinct drawn statements of a replicate (ascending) and their multiplicities.
#[derive(Debug, Default)]
struct Drawn {
    statements: Vec<usize>,
    counts: Vec<f64>,
}

impl Drawn {
    fn set(&mut self, counts: &[u32]) {
        self.statements.clear();
        self.counts.clear();
        for (s, &k) in counts.iter().enumerate() {
            if k > 0 {
                self.statements.push(s);
                self.counts.push(f64::from(k));
            }
        }
    }
}

/// Unit values of the bootstrap, block by block (see [`ReweightBootstrap::run_with_progress`]).
struct Blocks {
    z: Vec<f64>,
    valid: Vec<f64>,
    statements: usize,
}

impl Blocks {
    /// `ȳ_{m,c}` on resampled statements for the blocks `span` (one per template of `T_c`): the mean over
    /// templates with a valid drawn unit of `Σ k·z / Σ k` over the drawn statements with a valid unit
    /// (`k` = multiplicity); NaN when none. The sums run in four interleaved lanes (for speed), so a
    /// replicate that draws every statement once equals [`condition_mean`] up to rounding, not bit for bit.
    fn condition_mean(&self, span: std::ops::Range<usize>, drawn: &Drawn) -> f64 {
        let s_len = self.statements;
        let mut sum_t = 0.0;
        let mut n_t = 0usize;
        for b in span {
            let (Some(z), Some(valid)) = (
                self.z.get(b * s_len..(b + 1) * s_len),
                self.valid.get(b * s_len..(b + 1) * s_len),
            ) else {
                continue;
            };
            let mut sum = [0.0f64; 4];
            let mut total = [0.0f64; 4];
            let idx = drawn.statements.chunks_exact(4);
            let ks = drawn.counts.chunks_exact(4);
            let (idx_rest, ks_rest) = (idx.remainder(), ks.remainder());
            for (i, k) in idx.zip(ks) {
                for lane in 0..4 {
                    sum[lane] += k[lane] * z[i[lane]];
                    total[lane] += k[lane] * valid[i[lane]];
                }
            }
            for (&i, &k) in idx_rest.iter().zip(ks_rest) {
                sum[0] += k * z[i];
                total[0] += k * valid[i];
            }
            let sum = (sum[0] + sum[1]) + (sum[2] + sum[3]);
            let total = (total[0] + total[1]) + (total[2] + total[3]);
            if total > 0.0 {
                sum_t += sum / total;
                n_t += 1;
            }
        }
        if n_t > 0 {
            sum_t / n_t as f64
        } else {
            f64::NAN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replicate_that_draws_every_statement_once_gives_the_plain_condition_mean() {
        // Two templates of 5 statements, one unit missing: multiplicities of 1 give the plain means
        // (the identity replicate is the point estimate); a statement drawn twice counts twice.
        let nan = f64::NAN;
        let values = [0.5, nan, 1.0, 0.25, 0.0, 0.0, 0.25, 0.75, 1.0, 0.5];
        let blocks = Blocks {
            z: values
                .iter()
                .map(|v| if v.is_nan() { 0.0 } else { *v })
                .collect(),
            valid: values
                .iter()
                .map(|v| if v.is_nan() { 0.0 } else { 1.0 })
                .collect(),
            statements: 5,
        };
        let mut drawn = Drawn::default();
        drawn.set(&[1, 1, 1, 1, 1]);
        let expected =
            ((0.5 + 1.0 + 0.25 + 0.0) / 4.0 + (0.0 + 0.25 + 0.75 + 1.0 + 0.5) / 5.0) / 2.0;
        assert!(
            (blocks.condition_mean(0..2, &drawn) - expected).abs() < crate::tolerance::CLOSED_FORM
        );
        drawn.set(&[2, 0, 0, 1, 0]);
        let expected = ((2.0 * 0.5 + 0.25) / 3.0 + (2.0 * 0.0 + 1.0) / 3.0) / 2.0;
        assert!(
            (blocks.condition_mean(0..2, &drawn) - expected).abs() < crate::tolerance::CLOSED_FORM
        );
        drawn.set(&[0, 2, 0, 0, 0]);
        // Template 1 has no valid drawn unit and leaves the template mean.
        assert_eq!(blocks.condition_mean(0..2, &drawn), 0.25);
    }

    #[test]
    fn weights_that_are_zero_or_on_missing_means_leave_the_average() {
        // Model 0: means (0.2, NaN, 0.6); model 1: all missing.
        let means = [0.2, f64::NAN, 0.6, f64::NAN, f64::NAN, f64::NAN];
        let got = weighted_scores(&means, 3, &[1.0, 5.0, 3.0]);
        assert_eq!(got[0], Some((0.2 + 3.0 * 0.6) / 4.0));
        assert_eq!(got[1], None);
    }
}
