//! RQ2 — equal-budget audits (seed `000_…` §3.5, §4.4, §5.3, D.1, D.2; Tables 2, 13, 14, 15): how well
//! an audit that reads only `B` existing responses per model recovers the condition-balanced reference
//! score (Eq. 4) and its ranking, depending on how the `B` cells are spread over the matrix.
//!
//! # The observable matrix
//! The unit values `z_{m,s,c,t}` are those of [`crate::stats::unit_counts`] under a [`RepeatPolicy`]
//! (default `all_responses`), the reference is [`crate::stats::reference_scores`] (Eq. 4, or user
//! condition weights). Both are restricted to the conditions with `in_reference` (`C_sel`, K of them).
//! The **observable matrix** is the set of (condition, template, statement) cells with `c ∈ C_sel`,
//! `t ∈ T_c` (the templates of `c`, as in [`crate::stats::condition_mean`]) and `s ∈ S`. Cells are
//! numbered `offset_k + t_pos · |S| + s`: reference conditions in bundle order, then the templates of
//! `T_c` in bundle order (`t_pos` = position in `T_c`), then statements in bundle order.
//!
//! # Designs (one draw serves every model: the same cells for all models, §3.5 "shared across models")
//! * **Concentrated** (§3.5 "single-condition audit"): one reference condition uniformly, one of its
//!   templates uniformly, `B` statements uniformly without replacement (`B > |S|` is an error).
//! * **SRS** (D.1): `B` distinct cells uniformly without replacement from the observable matrix.
//! * **Stratified** (D.1): every reference condition, one template each uniformly; `B = qK + r`: `r`
//!   conditions chosen uniformly without replacement get `q + 1` statements, the others `q`; within a
//!   condition the `n` statements are stratified by statement `category` with **systematic
//!   proportional rounding**: with category sizes `N_1..N_G` (categories in byte order of their
//!   names, statements without a category last as one stratum), cumulative sizes `C_g`, and an offset
//!   `j` uniform in `0..|S|`, category `g` gets `n_g = ⌊(n·C_g + j)/|S|⌋ − ⌊(n·C_{g−1} + j)/|S|⌋`
//!   statements (uniform without replacement within the category). So `Σ n_g = n`, each `n_g` is
//!   `⌊n·N_g/|S|⌋` or `⌈n·N_g/|S|⌉`, and `E[n_g] = n·N_g/|S|` exactly (Hermite's identity), i.e. every
//!   statement of the condition is included with probability `n/|S|`. Condition means weigh equally.
//! * **Balanced** (§3.5 "180-response sensitivity design"): every reference condition, one template
//!   each uniformly, one statement uniformly from each category; budget `K × G` (not `B`).
//! * **Coverage K'** (Table 14): `K'` reference conditions uniformly without replacement, one template
//!   each uniformly, `B` statements split `⌊B/K'⌋`/`⌈B/K'⌉` over them (the conditions with the extra
//!   statement uniformly), statements uniform without replacement within a condition (no category
//!   stratification: `K' = 1` is the concentrated design, `K' = K` differs from the stratified design
//!   only by it). Condition means weigh equally.
//!
//! # A draw's score and missing units
//! A model's score in a draw is the design estimate of its reference score: concentrated and SRS, the
//! mean of the sampled unit values; stratified, balanced, coverage, the mean over the sampled
//! conditions of the mean over that condition's sampled statements. A unit without a valid Selection
//! (Abstain is missing, §B.2) leaves the mean it belongs to; a sampled condition with no valid unit for
//! that model leaves the condition average; a draw in which the model has no valid unit at all gives
//! the model **no score** in that draw: the draw is left out of that model's MAE/RMSE (and repeat
//! difference), and the model's pairs are left out of that draw's τ-b and inversion counts. Such draws
//! are counted per model ([`ModelResult::excluded_draws`]). A draw in which the model keeps a score but
//! loses one or more sampled conditions (a **partial drop**: the remaining conditions' means are
//! averaged) is counted too ([`ModelResult::partial_drop_draws`], with the conditions lost in
//! [`ModelResult::dropped_conditions`]); only the designs that average condition means (stratified,
//! balanced, coverage `K' ≥ 2`) can have one, since concentrated, SRS and coverage `K' = 1` average a
//! single mean ([`DesignResult::averages_conditions`]).
//!
//! # Metrics (over the draws of a design, against the reference)
//! Errors are in percentage points (pp). Per model `m`: `MAE_m` = mean of `|score − μ_m|` over its
//! scored draws, `RMSE_m` = root of the mean squared error; the design's MAE and RMSE are the means over
//! models (Table 15 gives `MAE_m`). τ-b ([`crate::rank::kendall_tau_b`]) of the draw's scores against
//! the reference (both as ranking keys of the bundle's score direction, [`crate::direction`]; the
//! scores themselves by default), and the reference-relative inversion rate ([`crate::rank::pairwise_inversions`]),
//! are computed per draw over the models scored in the draw and averaged over the draws where they
//! are defined. The repeat metrics compare each draw with an independent second draw of the same
//! design: mean absolute score difference (per model, then over models), τ-b and inversion rate
//! between the two draws. Ranges are the `level` percentile intervals
//! ([`crate::resample::percentile_interval`]) of the draw-level values (MAE and RMSE of one draw:
//! over the models scored in it). Monte Carlo standard errors are given for every mean.
//!
//! # Randomness (reproducible bit for bit)
//! Everything comes from [`DrawStream::with_stream`]`(seed, id)`; see [`Design::audit_stream`],
//! [`Design::repeat_stream`] and [`CONTRAST_STREAM`]. Each design reads its own two streams in the
//! per-draw layout of [`DrawStream::for_draw`]: draw `i` starts at keystream word `i · 2³²` of the
//! stream and consumes words exactly as [`Rq2Matrix::draw`] documents. So any range of draws can be
//! computed on its own (another Web Worker) and gives the same draws as the unsplit run
//! ([`crate::plan::Planner::estimate_range`]).

use std::num::NonZeroU32;

use serde::Serialize;

use crate::bundle::Audit;
use crate::direction::{Direction, ScoreDirection};
use crate::rank::{kendall_tau_b, paired_present, pairwise_inversions};
use crate::resample::{bootstrap_mean, percentile_interval, DrawStream, ResampleError};
use crate::stats::{reference_scores, unit_counts, RepeatPolicy};

/// Seed of seed `000_…` D.2 ("seed 20260722").
pub const DEFAULT_SEED: u64 = 20_260_722;

/// Stream id of the Monte Carlo bootstrap of the design contrasts: `DrawStream::with_stream(seed, 1)`,
/// consumed by four [`bootstrap_mean`] calls in the order of [`Rq2Report::contrasts`].
pub const CONTRAST_STREAM: u64 = 1;

/// Settings of [`analyze_rq2`]. Defaults follow seed `000_…` D.2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rq2Options {
    /// Draws per design (D.2: 10,000).
    pub draws: usize,
    /// Responses per model per audit `B` (§3.5: 200).
    pub budget: usize,
    /// Seed of every stream.
    pub seed: u64,
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// Condition weights of the reference (one per condition of the bundle, `None` = Eq. 4's equal
    /// weights); see [`reference_scores`]. They change the target only, not the designs.
    pub weights: Option<Vec<f64>>,
    /// Bootstrap replicates of the contrast intervals (D.2: 2,000).
    pub bootstrap_reps: usize,
    /// Level of the percentile ranges and contrast intervals (0.95 = 2.5–97.5 percentiles).
    pub level: f64,
}

impl Default for Rq2Options {
    fn default() -> Self {
        Rq2Options {
            draws: 10_000,
            budget: 200,
            seed: DEFAULT_SEED,
            policy: RepeatPolicy::AllResponses,
            weights: None,
            bootstrap_reps: 2_000,
            level: 0.95,
        }
    }
}

/// Why an RQ2 analysis cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rq2Error {
    /// No condition has `in_reference`, so the observable matrix is empty.
    #[error("the bundle has no condition with in_reference: there is no observable matrix")]
    NoReferenceCondition,
    /// A reference condition with no template (`T_c` empty).
    #[error("reference condition {condition:?} has no template")]
    NoTemplate {
        /// The condition's id.
        condition: String,
    },
    /// [`Rq2Options::budget`] is 0.
    #[error("the budget must be at least 1 response per model")]
    ZeroBudget,
    /// [`Rq2Options::draws`] is 0.
    #[error("at least 1 draw is needed")]
    ZeroDraws,
    /// A design reads more distinct statements of one template than the bundle has: concentrated
    /// `B`, stratified `⌈B/K⌉`, coverage `⌈B/K'⌉`.
    #[error("budget {budget} exceeds the {statements} statements a concentrated audit can read from one template")]
    BudgetExceedsStatements {
        /// Statements the design reads from one template.
        budget: usize,
        /// Statements of the bundle `|S|`.
        statements: usize,
    },
    /// A design that reads at least one statement per sampled condition (stratified: every reference
    /// condition; coverage: `K'` of them) has a smaller budget than conditions.
    #[error("budget {budget} is below the {conditions} reference conditions a stratified audit must cover")]
    BudgetBelowConditions {
        /// Responses per model per audit `B`.
        budget: usize,
        /// Conditions the design must cover (`K` or `K'`).
        conditions: usize,
    },
    /// A coverage design over `k` conditions with `k` = 0 or `k` > `K`.
    #[error(
        "coverage design with {k} conditions: the bundle has {conditions} reference conditions"
    )]
    CoverageOutOfRange {
        /// Conditions the coverage design asks for (`K'`).
        k: usize,
        /// Reference conditions of the bundle `K`.
        conditions: usize,
    },
    /// [`Rq2Options::weights`] does not have one weight per condition of the bundle.
    #[error("{given} condition weights given; the bundle has {conditions} conditions")]
    WeightsLength {
        /// Weights given.
        given: usize,
        /// Conditions of the bundle (all of them, not only the reference conditions).
        conditions: usize,
    },
    /// A condition weight is negative, infinite or NaN.
    #[error("condition weight {index} is {value}: weights must be finite and not negative")]
    BadWeight {
        /// Position of the weight (bundle condition order).
        index: usize,
        /// The weight given.
        value: f64,
    },
    /// [`Rq2Options::level`] is not strictly between 0 and 1.
    #[error("level {0} is outside (0, 1)")]
    BadLevel(f64),
    /// The observable matrix has more than `u32::MAX` cells (draws address cells as `u32`).
    #[error("the observable matrix has too many cells for 32-bit draws")]
    TooManyCells,
    /// The progress callback of [`analyze_rq2_with_progress`] returned `false`.
    #[error("cancelled")]
    Cancelled,
    /// An SRS budget above the observable cells ([`ResampleError::SampleTooLarge`]), or a contrast
    /// bootstrap that cannot run.
    #[error(transparent)]
    Resample(#[from] ResampleError),
}

/// An audit design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Design {
    /// One reference condition, one of its templates, `B` statements (§3.5 "single-condition audit").
    Concentrated,
    /// `B` distinct cells by simple random sampling from the observable matrix (D.1).
    Srs,
    /// Every reference condition, `B` statements split over them and stratified by category (D.1).
    Stratified,
    /// Every reference condition, one statement per category (§3.5 "180-response sensitivity design").
    Balanced,
    /// The fixed-budget coverage design over this many conditions (Table 14).
    Coverage(usize),
}

impl Design {
    /// Short name used in JSON and CSV: `concentrated`, `srs`, `stratified`, `balanced`, `coverage`.
    pub fn key(self) -> &'static str {
        match self {
            Design::Concentrated => "concentrated",
            Design::Srs => "srs",
            Design::Stratified => "stratified",
            Design::Balanced => "balanced",
            Design::Coverage(_) => "coverage",
        }
    }

    fn base_stream(self) -> u64 {
        match self {
            Design::Concentrated => 16,
            Design::Srs => 32,
            Design::Stratified => 48,
            Design::Balanced => 64,
            Design::Coverage(k) => 16 * (16 + k as u64),
        }
    }

    /// Stream id of the design's audit draws: concentrated 16, SRS 32, stratified 48, balanced 64,
    /// coverage with `K'` conditions `16 · (16 + K')`. Draw `i` is
    /// [`DrawStream::for_draw`]`(seed, audit_stream, i)`.
    pub fn audit_stream(self) -> u64 {
        self.base_stream()
    }

    /// Stream id of the independent second draws (repeat metrics): [`Design::audit_stream`] + 1.
    pub fn repeat_stream(self) -> u64 {
        self.base_stream() + 1
    }
}

/// One cell of the observable matrix, as bundle level indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Cell {
    /// Bundle condition index.
    pub condition: usize,
    /// Bundle template index (a template of `T_c`).
    pub template: usize,
    /// Bundle statement index.
    pub statement: usize,
}

/// The cells of one audit draw, as flat cell numbers (see the module docs), grouped by the unit over
/// which the estimate averages first: one group per sampled condition (stratified, balanced,
/// coverage), or a single group (concentrated, SRS). Within a group, cells are in draw order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditDraw {
    /// Cell numbers, one group per averaging unit.
    pub groups: Vec<Vec<u32>>,
}

impl AuditDraw {
    /// Every cell of the draw, in group order.
    pub fn cells(&self) -> impl Iterator<Item = u32> + '_ {
        self.groups.iter().flatten().copied()
    }
}

/// A statement category (stratum) of the stratified and balanced designs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Category {
    /// The statements' `category`; `None` = statements without one (one stratum, ordered last).
    pub name: Option<String>,
    /// Statement indices, in bundle order.
    pub statements: Vec<u32>,
}

/// The observable matrix of a bundle under a repeat policy: unit values of the reference conditions,
/// the reference scores, and the strata. Built once; draws and scores are cheap.
#[derive(Debug, Clone)]
pub struct Rq2Matrix {
    models: usize,
    /// Reference score per model (fraction).
    reference: Vec<Option<f64>>,
    /// Bundle condition index of each reference condition `k`.
    conditions: Vec<usize>,
    /// `T_c` of each reference condition (bundle template indices, bundle order).
    templates: Vec<Vec<usize>>,
    statements: u32,
    categories: Vec<Category>,
    /// First flat cell of reference condition `k`.
    offsets: Vec<u32>,
    cells: u32,
    /// Unit values, `z[cell · models + m]`, NaN = missing.
    z: Vec<f64>,
    /// What the scoring reads per sampled cell, one record per cell for all models ([`PackedCells`]).
    packed: PackedCells,
}

/// The unit values of the observable matrix as the scoring reads them: one contiguous record per
/// cell holding every model's value, so a sampled cell is one gather.
///
/// The bundle's unit values are few distinct fractions (evidence / valid responses of a unit), so
/// they are normally stored as **codes**: one byte per model (0 = missing, `c ≥ 1` = the `c`-th
/// distinct value), 8 bytes per cell for 8 models — one cache line holds 8 cells, and the whole
/// 72,000-cell matrix of the default bundle is 576 KB instead of 9.2 MB of f64 rows. The scoring
/// looks each code up in two 256-entry tables (the value with missing as 0.0, and the valid flag as
/// 1.0 / 0.0), so it adds exactly the same f64 numbers in the same order as the f64 rows did: the
/// sums are the same bit for bit. With more than 255 distinct values the f64 rows are kept.
#[derive(Debug, Clone)]
enum PackedCells {
    /// `codes[cell · models + m]`; `value[c]` the code's value; code 0 is a missing unit (value
    /// 0.0), every other code a valid one.
    Coded {
        codes: Vec<u8>,
        value: Box<[f64; 256]>,
    },
    /// Per cell `2 · models` numbers: the unit values with missing as 0, then 1 (valid) / 0 (missing)
    /// per model.
    Rows(Vec<f64>),
}

impl PackedCells {
    fn new(z: &[f64], models: usize) -> Self {
        let mut value = Box::new([0.0f64; 256]);
        let mut seen: std::collections::HashMap<u64, u8> = Default::default();
        let mut codes = Vec::with_capacity(z.len());
        let mut next = 1usize;
        for &v in z {
            if v.is_nan() {
                codes.push(0);
                continue;
            }
            let code = match seen.get(&v.to_bits()) {
                Some(&c) => c,
                None if next < 256 => {
                    let c = next as u8;
                    value[next] = v;
                    seen.insert(v.to_bits(), c);
                    next += 1;
                    c
                }
                None => return PackedCells::rows(z, models),
            };
            codes.push(code);
        }
        PackedCells::Coded { codes, value }
    }

    fn rows(z: &[f64], models: usize) -> Self {
        PackedCells::Rows(
            z.chunks(models.max(1))
                .flat_map(|row| {
                    let values = row.iter().map(|v| if v.is_nan() { 0.0 } else { *v });
                    let valid = row.iter().map(|v| if v.is_nan() { 0.0 } else { 1.0 });
                    values.chain(valid).collect::<Vec<f64>>()
                })
                .collect(),
        )
    }
}

fn to_u32(n: usize) -> Result<u32, Rq2Error> {
    u32::try_from(n).map_err(|_| Rq2Error::TooManyCells)
}

/// A uniform draw from `0..n` for an `n ≥ 1` guaranteed by construction.
fn below(stream: &mut DrawStream, n: u32) -> u32 {
    stream.index_nonzero(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
}

impl Rq2Matrix {
    /// Builds the observable matrix of `audit` under `policy`; `weights` (one per bundle condition)
    /// change only the reference scores.
    ///
    /// # Errors
    /// [`Rq2Error::NoReferenceCondition`], [`Rq2Error::NoTemplate`] naming the condition,
    /// [`Rq2Error::WeightsLength`] / [`Rq2Error::BadWeight`] for unusable weights, and
    /// [`Rq2Error::TooManyCells`].
    pub fn new(
        audit: &Audit,
        policy: RepeatPolicy,
        weights: Option<&[f64]>,
    ) -> Result<Self, Rq2Error> {
        let units = unit_counts(audit, policy);
        if let Some(w) = weights {
            if w.len() != units.conditions {
                return Err(Rq2Error::WeightsLength {
                    given: w.len(),
                    conditions: units.conditions,
                });
            }
            if let Some((index, &value)) = w
                .iter()
                .enumerate()
                .find(|(_, v)| !v.is_finite() || **v < 0.0)
            {
                return Err(Rq2Error::BadWeight { index, value });
            }
        }
        let reference = reference_scores(audit, &units, weights);
        let condition_ids = audit.condition_ids();
        let conditions: Vec<usize> = (0..units.conditions)
            .filter(|&c| audit.conditions[c].in_reference)
            .collect();
        if conditions.is_empty() {
            return Err(Rq2Error::NoReferenceCondition);
        }
        let mut templates = Vec::with_capacity(conditions.len());
        for &c in &conditions {
            let t_c: Vec<usize> = (0..units.templates)
                .filter(|&t| audit.templates[t].condition.is_none_or(|tc| tc == c))
                .collect();
            if t_c.is_empty() {
                return Err(Rq2Error::NoTemplate {
                    condition: condition_ids.get(c).copied().unwrap_or("?").to_string(),
                });
            }
            templates.push(t_c);
        }
        let s_len = units.statements;
        let statements = to_u32(s_len)?;
        let mut offsets = Vec::with_capacity(conditions.len());
        let mut total = 0usize;
        for t_c in &templates {
            offsets.push(to_u32(total)?);
            total += t_c.len() * s_len;
        }
        let cells = to_u32(total)?;

        // Strata: named categories in byte order, then the statements without a category.
        let mut named: std::collections::BTreeMap<&str, Vec<u32>> = Default::default();
        let mut unnamed = Vec::new();
        for (s, info) in audit.statements.iter().enumerate().take(s_len) {
            match &info.category {
                Some(name) => named.entry(name.as_str()).or_default().push(s as u32),
                None => unnamed.push(s as u32),
            }
        }
        let mut categories: Vec<Category> = named
            .into_iter()
            .map(|(name, statements)| Category {
                name: Some(name.to_string()),
                statements,
            })
            .collect();
        if !unnamed.is_empty() {
            categories.push(Category {
                name: None,
                statements: unnamed,
            });
        }

        let models = units.models;
        let mut z = Vec::with_capacity(total * models);
        for (k, &c) in conditions.iter().enumerate() {
            for &t in &templates[k] {
                for s in 0..s_len {
                    for m in 0..models {
                        z.push(units.value(m, c, t, s).unwrap_or(f64::NAN));
                    }
                }
            }
        }
        let packed = PackedCells::new(&z, models);
        Ok(Rq2Matrix {
            packed,
            models,
            reference,
            conditions,
            templates,
            statements,
            categories,
            offsets,
            cells,
            z,
        })
    }

    /// Number of models.
    pub fn models(&self) -> usize {
        self.models
    }

    /// Reference score of each model (fractions; Eq. 4 or the given weights).
    pub fn reference(&self) -> &[Option<f64>] {
        &self.reference
    }

    /// Bundle condition index of each reference condition, in bundle order.
    pub fn reference_conditions(&self) -> &[usize] {
        &self.conditions
    }

    /// `T_c` of each reference condition (bundle template indices).
    pub fn templates(&self) -> &[Vec<usize>] {
        &self.templates
    }

    /// Number of statements `|S|`.
    pub fn statements(&self) -> usize {
        self.statements as usize
    }

    /// The strata of the stratified and balanced designs, in the order the draws visit them.
    pub fn categories(&self) -> &[Category] {
        &self.categories
    }

    /// Number of cells of the observable matrix.
    pub fn cells(&self) -> usize {
        self.cells as usize
    }

    /// The (condition, template, statement) of flat cell `flat`; `None` when `flat >= cells()`.
    pub fn cell(&self, flat: u32) -> Option<Cell> {
        if flat >= self.cells {
            return None;
        }
        let k = self
            .offsets
            .partition_point(|&o| o <= flat)
            .saturating_sub(1);
        let within = flat - self.offsets.get(k)?;
        Some(Cell {
            condition: *self.conditions.get(k)?,
            template: *self
                .templates
                .get(k)?
                .get((within / self.statements) as usize)?,
            statement: (within % self.statements) as usize,
        })
    }

    /// Unit value of model `m` in flat cell `flat` (fraction), `None` when the unit is missing.
    /// `None` also for an `m` or `flat` out of range.
    pub fn value(&self, m: usize, flat: u32) -> Option<f64> {
        if m >= self.models {
            return None;
        }
        let v = *self.z.get(flat as usize * self.models + m)?;
        (!v.is_nan()).then_some(v)
    }

    fn flat(&self, k: usize, t_pos: u32, s: u32) -> u32 {
        self.offsets[k] + t_pos * self.statements + s
    }

    /// Checks that `design` can be drawn with `budget`; the budget it actually uses (the balanced
    /// design uses `K × G` whatever `budget` is).
    ///
    /// # Errors
    /// [`Rq2Error::ZeroBudget`], [`Rq2Error::BudgetExceedsStatements`] (concentrated, stratified,
    /// coverage), [`Rq2Error::BudgetBelowConditions`] (stratified, coverage),
    /// [`Rq2Error::CoverageOutOfRange`], [`Rq2Error::Resample`] (an SRS budget above the observable
    /// cells).
    pub fn design_budget(&self, design: Design, budget: usize) -> Result<usize, Rq2Error> {
        let k_all = self.conditions.len();
        if budget == 0 {
            return Err(Rq2Error::ZeroBudget);
        }
        let s = self.statements as usize;
        match design {
            Design::Concentrated if budget > s => Err(Rq2Error::BudgetExceedsStatements {
                budget,
                statements: s,
            }),
            Design::Srs if budget > self.cells as usize => {
                Err(Rq2Error::Resample(ResampleError::SampleTooLarge {
                    n: self.cells,
                    k: to_u32(budget)?,
                }))
            }
            Design::Stratified if budget < k_all => Err(Rq2Error::BudgetBelowConditions {
                budget,
                conditions: k_all,
            }),
            Design::Stratified if budget.div_ceil(k_all) > s => {
                Err(Rq2Error::BudgetExceedsStatements {
                    budget: budget.div_ceil(k_all),
                    statements: s,
                })
            }
            Design::Balanced => Ok(k_all * self.categories.len()),
            Design::Coverage(k) if k == 0 || k > k_all => Err(Rq2Error::CoverageOutOfRange {
                k,
                conditions: k_all,
            }),
            Design::Coverage(k) if budget < k => Err(Rq2Error::BudgetBelowConditions {
                budget,
                conditions: k,
            }),
            Design::Coverage(k) if budget.div_ceil(k) > s => {
                Err(Rq2Error::BudgetExceedsStatements {
                    budget: budget.div_ceil(k),
                    statements: s,
                })
            }
            _ => Ok(budget),
        }
    }

    /// One audit draw of `design` with `budget` responses per model, from `stream`. Words consumed,
    /// in order (`index(n)` = [`DrawStream::index`], `swor(n, k)` =
    /// [`DrawStream::sample_without_replacement`]; `K` reference conditions, `|S|` statements):
    ///
    /// * concentrated: `k = index(K)`; `t = index(|T_k|)`; `swor(|S|, B)` = the statements.
    /// * SRS: `swor(cells, B)` = the flat cells.
    /// * stratified: `swor(K, B mod K)` = the conditions with `⌈B/K⌉` statements; then for each
    ///   condition `k` in order: `t = index(|T_k|)`, `j = index(|S|)` (rounding offset), and for each
    ///   category `g` in order `swor(N_g, n_g)` = positions in the category's statement list.
    /// * balanced: for each condition `k` in order: `t = index(|T_k|)`; for each category `g` in
    ///   order: `index(N_g)` = position in the category's statement list.
    /// * coverage `K'`: `swor(K, K')` = the conditions, in draw order; `swor(K', B mod K')` = the
    ///   positions (in that order) with `⌈B/K'⌉` statements; then for each position:
    ///   `t = index(|T|)` and `swor(|S|, n)` = the statements.
    ///
    /// `swor(n, 0)` consumes nothing.
    ///
    /// # Errors
    /// Those of [`Rq2Matrix::design_budget`].
    pub fn draw(
        &self,
        design: Design,
        budget: usize,
        stream: &mut DrawStream,
    ) -> Result<AuditDraw, Rq2Error> {
        let mut out = AuditDraw::default();
        self.draw_into(
            design,
            budget,
            stream,
            &mut DrawScratch::default(),
            &mut out,
        )?;
        Ok(out)
    }

    /// [`Rq2Matrix::draw`] into `out` (its groups are reused), with reusable `scratch`: the same
    /// words consumed and the same cells in the same order, without allocating per draw once the
    /// buffers have grown ([`DrawStream::sample_without_replacement_into`]). On error `out` is
    /// unspecified.
    ///
    /// # Errors
    /// Those of [`Rq2Matrix::design_budget`].
    pub fn draw_into(
        &self,
        design: Design,
        budget: usize,
        stream: &mut DrawStream,
        scratch: &mut DrawScratch,
        out: &mut AuditDraw,
    ) -> Result<(), Rq2Error> {
        let used = self.design_budget(design, budget)?;
        let b = to_u32(used)?;
        let k_all = self.conditions.len() as u32;
        let s_len = self.statements;
        let groups_needed = match design {
            Design::Concentrated | Design::Srs => 1,
            Design::Stratified | Design::Balanced => k_all as usize,
            Design::Coverage(kk) => kk,
        };
        out.groups.resize_with(groups_needed, Vec::new);
        out.groups.truncate(groups_needed);
        out.groups.iter_mut().for_each(Vec::clear);
        let DrawScratch {
            sample,
            picks,
            counts,
            chosen,
        } = scratch;
        match design {
            Design::Concentrated => {
                let k = below(stream, k_all) as usize;
                let t = below(stream, self.templates[k].len() as u32);
                picks.clear();
                stream.sample_without_replacement_into(s_len, b, sample, picks)?;
                out.groups[0].extend(picks.iter().map(|&s| self.flat(k, t, s)));
            }
            Design::Srs => {
                stream.sample_without_replacement_into(self.cells, b, sample, &mut out.groups[0])?
            }
            Design::Stratified => {
                let q = b / k_all;
                counts.clear();
                counts.resize(k_all as usize, q);
                picks.clear();
                stream.sample_without_replacement_into(k_all, b % k_all, sample, picks)?;
                for &k in picks.iter() {
                    counts[k as usize] += 1;
                }
                for (k, &n) in counts.iter().enumerate() {
                    let t = below(stream, self.templates[k].len() as u32);
                    let j = u64::from(below(stream, s_len));
                    let cells = &mut out.groups[k];
                    cells.reserve(n as usize);
                    let mut cum = 0u64;
                    let s64 = u64::from(s_len);
                    for cat in &self.categories {
                        let before = (u64::from(n) * cum + j) / s64;
                        cum += cat.statements.len() as u64;
                        let after = (u64::from(n) * cum + j) / s64;
                        let n_g = (after - before) as u32;
                        picks.clear();
                        stream.sample_without_replacement_into(
                            cat.statements.len() as u32,
                            n_g,
                            sample,
                            picks,
                        )?;
                        for &p in picks.iter() {
                            cells.push(self.flat(k, t, cat.statements[p as usize]));
                        }
                    }
                }
            }
            Design::Balanced => {
                for k in 0..k_all as usize {
                    let t = below(stream, self.templates[k].len() as u32);
                    let cells = &mut out.groups[k];
                    for cat in &self.categories {
                        let p = below(stream, cat.statements.len() as u32);
                        cells.push(self.flat(k, t, cat.statements[p as usize]));
                    }
                }
            }
            Design::Coverage(kk) => {
                let kk = kk as u32;
                chosen.clear();
                stream.sample_without_replacement_into(k_all, kk, sample, chosen)?;
                let q = b / kk;
                counts.clear();
                counts.resize(kk as usize, q);
                picks.clear();
                stream.sample_without_replacement_into(kk, b % kk, sample, picks)?;
                for &p in picks.iter() {
                    counts[p as usize] += 1;
                }
                for (g, (&k, &n)) in chosen.iter().zip(counts.iter()).enumerate() {
                    let k = k as usize;
                    let t = below(stream, self.templates[k].len() as u32);
                    picks.clear();
                    stream.sample_without_replacement_into(s_len, n, sample, picks)?;
                    out.groups[g].extend(picks.iter().map(|&s| self.flat(k, t, s)));
                }
            }
        }
        Ok(())
    }

    /// Every model's score in `draw` (fractions): the mean over groups of the mean over the group's
    /// valid unit values; a missing unit leaves its group mean, a group without a valid unit leaves the
    /// average over groups, and a model without any valid unit gets `None` (module docs).
    pub fn score(&self, draw: &AuditDraw) -> Vec<Option<f64>> {
        self.score_with_drops(draw).0
    }

    /// [`Rq2Matrix::score`] and, per model, the number of groups of `draw` (sampled conditions, for
    /// the designs that average condition means) in which the model has no valid unit and which
    /// therefore leave its average. A model without any score has every group counted.
    pub fn score_with_drops(&self, draw: &AuditDraw) -> (Vec<Option<f64>>, Vec<u32>) {
        let mut out = vec![f64::NAN; self.models];
        let mut dropped = vec![0; self.models];
        let mut scratch = Scratch::new(self.models);
        self.score_into(draw, &mut scratch, &mut out, &mut dropped);
        let scores = out
            .into_iter()
            .map(|v| (!v.is_nan()).then_some(v))
            .collect();
        (scores, dropped)
    }

    pub(crate) fn score_into(
        &self,
        draw: &AuditDraw,
        sc: &mut Scratch,
        out: &mut [f64],
        dropped: &mut [u32],
    ) {
        dropped.iter_mut().for_each(|v| *v = 0);
        let m_len = self.models;
        sc.group_sum.iter_mut().for_each(|v| *v = 0.0);
        sc.group_n.iter_mut().for_each(|v| *v = 0);
        for group in &draw.groups {
            sc.sum.iter_mut().for_each(|v| *v = 0.0);
            sc.n.iter_mut().for_each(|v| *v = 0);
            // One gather per cell for all models (`PackedCells`): the cell's record holds every
            // model's value (missing = 0) and whether it is valid, so the loop has no branch. Adding
            // 0.0 for a missing unit leaves the sum bit for bit as skipping it would (the sums start
            // at +0.0 and the values are not negative), and the valid count is an integer. Cells outside
            // the matrix (only possible in a hand-made draw) are skipped.
            match &self.packed {
                PackedCells::Coded { codes, value } => {
                    for &cell in group {
                        let start = cell as usize * m_len;
                        let Some(row) = codes.get(start..start + m_len) else {
                            continue;
                        };
                        for ((sum, n), &c) in sc.sum.iter_mut().zip(sc.n.iter_mut()).zip(row) {
                            *sum += value[c as usize];
                            *n += u32::from(c != 0);
                        }
                    }
                }
                PackedCells::Rows(packed) => {
                    let width = 2 * m_len;
                    for &cell in group {
                        let Some(row) =
                            packed.get(cell as usize * width..(cell as usize + 1) * width)
                        else {
                            continue;
                        };
                        let (values, valid) = row.split_at(m_len);
                        for ((sum, n), (v, ok)) in sc
                            .sum
                            .iter_mut()
                            .zip(sc.n.iter_mut())
                            .zip(values.iter().zip(valid))
                        {
                            *sum += v;
                            *n += u32::from(*ok != 0.0);
                        }
                    }
                }
            }
            for (m, lost) in dropped.iter_mut().enumerate().take(m_len) {
                if sc.n[m] > 0 {
                    sc.group_sum[m] += sc.sum[m] / f64::from(sc.n[m]);
                    sc.group_n[m] += 1;
                } else {
                    *lost += 1;
                }
            }
        }
        for (m, o) in out.iter_mut().enumerate() {
            *o = if sc.group_n[m] > 0 {
                sc.group_sum[m] / sc.group_n[m] as f64
            } else {
                f64::NAN
            };
        }
    }
}

pub(crate) struct Scratch {
    sum: Vec<f64>,
    /// Valid units per model (an integer count: the mean divides by it as f64, exactly as before,
    /// when the count was kept as f64).
    n: Vec<u32>,
    group_sum: Vec<f64>,
    group_n: Vec<u32>,
}

impl Scratch {
    pub(crate) fn new(models: usize) -> Self {
        Scratch {
            sum: vec![0.0; models],
            n: vec![0; models],
            group_sum: vec![0.0; models],
            group_n: vec![0; models],
        }
    }
}

/// Reusable memory of [`Rq2Matrix::draw_into`].
#[derive(Debug, Clone, Default)]
pub struct DrawScratch {
    sample: crate::resample::SampleScratch,
    picks: Vec<u32>,
    counts: Vec<u32>,
    chosen: Vec<u32>,
}

/// The mean of a metric over draws with its Monte Carlo standard error and percentile range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metric {
    /// The headline value (see [`DrawSummary`] for each metric's definition); `None` when undefined.
    pub mean: Option<f64>,
    /// Monte Carlo standard error of `mean` (sample standard deviation of the draw-level
    /// contributions / √draws); `None` with fewer than 2 draws.
    pub mc_se: Option<f64>,
    /// `level` percentile interval of the draw-level values (2.5–97.5 percentiles for 0.95).
    pub range: Option<[f64; 2]>,
    /// Draws with a draw-level value.
    pub draws: usize,
}

/// Per-model results of one design (Table 15).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelResult {
    /// Model id.
    pub model: String,
    /// Reference score (fraction).
    pub reference: Option<f64>,
    /// Mean of the model's draw scores (fraction) over its scored draws.
    pub mean_score: Option<f64>,
    /// `MAE_m` in pp over the draws where the model has a score.
    pub mae_pp: Option<f64>,
    /// Monte Carlo standard error of `mae_pp`.
    pub mae_mc_se: Option<f64>,
    /// `RMSE_m` in pp.
    pub rmse_pp: Option<f64>,
    /// Mean absolute difference (pp) between the model's scores in a draw and in its repeat draw, over
    /// the draws where both exist.
    pub repeat_mad_pp: Option<f64>,
    /// Draws in which the model has no valid unit (no score; excluded).
    pub excluded_draws: usize,
    /// Repeat draws in which the model has no valid unit.
    pub excluded_repeat_draws: usize,
    /// Partial drops: draws in which the model has a score but at least one sampled condition had no
    /// valid unit for it and left the draw's condition average (module docs). Always 0 for designs
    /// that average a single mean (concentrated, SRS, coverage `K' = 1`).
    pub partial_drop_draws: usize,
    /// Sampled conditions left out of the model's condition average, summed over its partial-drop
    /// draws (a draw that loses two conditions counts 2; excluded draws do not count here).
    pub dropped_conditions: usize,
    /// [`ModelResult::partial_drop_draws`] of the repeat draws.
    pub partial_drop_repeat_draws: usize,
    /// [`ModelResult::dropped_conditions`] of the repeat draws.
    pub dropped_repeat_conditions: usize,
}

/// The metrics of one design over its draws (Table 13 column, Table 14 row, Table 15 column).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrawSummary {
    /// Mean over models of `MAE_m` (pp). Draw-level value: mean over the models scored in the draw.
    pub mae_pp: Metric,
    /// Mean over models of `RMSE_m` (pp). Draw-level value: root mean square over the models scored.
    pub rmse_pp: Metric,
    /// Mean over draws of τ-b(draw scores, reference) over the models scored in the draw.
    pub tau_b: Metric,
    /// Mean over draws of the reference-relative inversion rate (fraction of the compared pairs).
    pub inversion_rate: Metric,
    /// Mean over models of the mean absolute difference between draw and repeat draw (pp).
    pub repeat_mad_pp: Metric,
    /// Mean over draws of τ-b(draw scores, repeat draw scores).
    pub repeat_tau_b: Metric,
    /// Mean over draws of the inversion rate between draw and repeat draw.
    pub repeat_inversion_rate: Metric,
    /// [`ModelResult`] per model, in bundle model order.
    pub per_model: Vec<ModelResult>,
    /// Draw-level contributions whose plain mean over all draws is `mae_pp.mean` (module docs of
    /// [`summarize_draws`]); used for the contrast bootstrap.
    #[serde(skip)]
    pub mae_contributions: Vec<f64>,
    /// Same for `inversion_rate.mean` (in pp of rate).
    #[serde(skip)]
    pub inversion_contributions: Vec<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Sample standard deviation (ddof 1) / √n.
fn std_error(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let mu = mean(v)?;
    let ss: f64 = v.iter().map(|x| (x - mu) * (x - mu)).sum();
    Some((ss / (v.len() - 1) as f64).sqrt() / (v.len() as f64).sqrt())
}

pub(crate) fn range(v: &[f64], level: f64) -> Option<[f64; 2]> {
    percentile_interval(v, level).map(|(lo, hi)| [lo, hi])
}

/// A metric whose headline is the plain mean of the draw-level values.
fn plain_metric(values: &[f64], level: f64) -> Metric {
    Metric {
        mean: mean(values),
        mc_se: std_error(values),
        range: range(values, level),
        draws: values.len(),
    }
}

fn present(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// Per-model absolute errors and the draw-level values of a score comparison.
struct Comparison {
    /// Per model: (draw index, error in pp) over the draws where both sides exist.
    errors: Vec<Vec<(usize, f64)>>,
}

impl Comparison {
    fn new(a: &[Vec<Option<f64>>], b: impl Fn(usize, usize) -> Option<f64>, models: usize) -> Self {
        let mut errors = vec![Vec::new(); models];
        for (i, draw) in a.iter().enumerate() {
            for (m, e) in errors.iter_mut().enumerate() {
                if let (Some(x), Some(y)) = (present(draw.get(m).copied().flatten()), b(i, m)) {
                    e.push((i, 100.0 * (x - y)));
                }
            }
        }
        Comparison { errors }
    }

    /// Per-model mean absolute error (pp), `None` without a compared draw.
    fn mae(&self) -> Vec<Option<f64>> {
        self.errors
            .iter()
            .map(|e| {
                (!e.is_empty())
                    .then(|| e.iter().map(|(_, x)| x.abs()).sum::<f64>() / e.len() as f64)
            })
            .collect()
    }

    /// Draw-level mean absolute error over the models compared in the draw, for each draw with one.
    fn draw_mae(&self, draws: usize) -> Vec<f64> {
        let (sum, n) = self.draw_sums(draws, |x| x.abs());
        sum.iter()
            .zip(&n)
            .filter(|(_, &n)| n > 0)
            .map(|(s, &n)| s / n as f64)
            .collect()
    }

    fn draw_sums(&self, draws: usize, f: impl Fn(f64) -> f64) -> (Vec<f64>, Vec<usize>) {
        let mut sum = vec![0.0; draws];
        let mut n = vec![0usize; draws];
        for e in &self.errors {
            for &(i, x) in e {
                sum[i] += f(x);
                n[i] += 1;
            }
        }
        (sum, n)
    }

    /// Draw-level contributions `v_i = (1/M') Σ_m (N / n_m) · f(e_{m,i})` over the `M'` models with
    /// `n_m > 0` compared draws, so that `mean_i v_i = mean_m mean_{i ∈ D_m} f(e_{m,i})`.
    fn contributions(&self, draws: usize, f: impl Fn(usize, f64) -> f64) -> Vec<f64> {
        let active = self.errors.iter().filter(|e| !e.is_empty()).count();
        let mut v = vec![0.0; draws];
        if active == 0 {
            return v;
        }
        for (m, e) in self.errors.iter().enumerate() {
            if e.is_empty() {
                continue;
            }
            let w = draws as f64 / e.len() as f64 / active as f64;
            for &(i, x) in e {
                v[i] += w * f(m, x);
            }
        }
        v
    }

    /// The per-model-then-over-models mean absolute error with its Monte Carlo SE and draw range.
    fn mae_metric(&self, draws: usize, level: f64) -> (Metric, Vec<f64>) {
        let per_model: Vec<f64> = self.mae().into_iter().flatten().collect();
        let contributions = self.contributions(draws, |_, x| x.abs());
        let draw_level = self.draw_mae(draws);
        (
            Metric {
                mean: mean(&per_model),
                mc_se: std_error(&contributions),
                range: range(&draw_level, level),
                draws: draw_level.len(),
            },
            contributions,
        )
    }
}

/// Summarises the draws of one design (see [`DrawSummary`] for each metric).
///
/// `main[i][m]` is model `m`'s score (fraction) in draw `i`, `repeat[i][m]` in the independent second
/// draw `i` (the same length as `main`); `reference[m]` the reference score. `None` (or a non-finite
/// value) is a model without a score: it leaves that draw's MAE/RMSE, τ-b and inversion counts and is
/// counted in [`ModelResult::excluded_draws`]. `dropped[i][m]` (and `repeat_dropped`) is the number of
/// sampled conditions of draw `i` without a valid unit for model `m`
/// ([`Rq2Matrix::score_with_drops`]); a draw where the model has a score and that number is positive
/// is a partial drop ([`ModelResult::partial_drop_draws`]). A missing row or entry counts 0 (pass
/// `&[]` when the design averages a single mean).
///
/// Monte Carlo standard errors: for τ-b and the inversion rates (plain means over the draws where they
/// are defined), sd / √n. For the per-model-then-averaged MAE, the draw-level contributions
/// `v_i = (1/M') Σ_m (N / n_m) · |e_{m,i}|` (`M'` models with a score in any draw, `n_m` draws where
/// model `m` has one, the term absent where it has none; `mean_i v_i` = the MAE exactly; `v_i` is the
/// draw's MAE when nothing is excluded) give sd(v) / √N; the RMSE uses the linearisation
/// `ψ_i = (1/M') Σ_m (N / n_m) (e²_{m,i} − RMSE_m²) / (2 RMSE_m)`. The repeat MAD is computed as the
/// MAE with the repeat draw in place of the reference.
pub fn summarize_draws(
    models: &[String],
    reference: &[Option<f64>],
    main: &[Vec<Option<f64>>],
    repeat: &[Vec<Option<f64>>],
    dropped: &[Vec<u32>],
    repeat_dropped: &[Vec<u32>],
    level: f64,
) -> DrawSummary {
    let draws = DesignDraws {
        main,
        repeat,
        dropped,
        repeat_dropped,
    };
    summarize_draws_in(Direction::Lower, models, reference, &draws, level)
}

/// The draws of one design as [`summarize_draws`] reads them: scores of the main and the repeat
/// draws (`[draw][model]`, fractions) and the sampled conditions each dropped (`[draw][model]`).
#[derive(Debug, Clone, Copy)]
pub struct DesignDraws<'a> {
    /// `main[i][m]`: model `m`'s score in draw `i`.
    pub main: &'a [Vec<Option<f64>>],
    /// `repeat[i][m]`: model `m`'s score in the independent second draw `i`.
    pub repeat: &'a [Vec<Option<f64>>],
    /// Sampled conditions of main draw `i` without a valid unit for model `m` (`&[]`: none).
    pub dropped: &'a [Vec<u32>],
    /// The same for the repeat draws.
    pub repeat_dropped: &'a [Vec<u32>],
}

/// [`summarize_draws`] for a bundle whose score direction is `direction` ([`crate::direction`]):
/// τ-b and the inversion rates compare the ranking keys of the scores (for `lower` the scores
/// themselves, so the two functions agree); score errors stay score differences.
pub fn summarize_draws_in(
    direction: Direction,
    models: &[String],
    reference: &[Option<f64>],
    draws: &DesignDraws<'_>,
    level: f64,
) -> DrawSummary {
    let DesignDraws {
        main,
        repeat,
        dropped,
        repeat_dropped,
    } = *draws;
    let n = main.len();
    let m_len = reference.len();
    let vs_ref = Comparison::new(main, |_, m| present(reference[m]), m_len);
    let vs_repeat = Comparison::new(
        main,
        |i, m| {
            repeat
                .get(i)
                .and_then(|d| present(d.get(m).copied().flatten()))
        },
        m_len,
    );

    let (mae_pp, mae_contributions) = vs_ref.mae_metric(n, level);
    let mae_per_model = vs_ref.mae();

    // RMSE: per model, then over models.
    let rmse_per_model: Vec<Option<f64>> = vs_ref
        .errors
        .iter()
        .map(|e| {
            (!e.is_empty())
                .then(|| (e.iter().map(|(_, x)| x * x).sum::<f64>() / e.len() as f64).sqrt())
        })
        .collect();
    let rmse_present: Vec<f64> = rmse_per_model.iter().flatten().copied().collect();
    let psi = vs_ref.contributions(n, |m, x| match rmse_per_model[m] {
        Some(r) if r > 0.0 => (x * x - r * r) / (2.0 * r),
        _ => 0.0,
    });
    let (sq_sum, sq_n) = vs_ref.draw_sums(n, |x| x * x);
    let rmse_draws: Vec<f64> = sq_sum
        .iter()
        .zip(&sq_n)
        .filter(|(_, &k)| k > 0)
        .map(|(s, &k)| (s / k as f64).sqrt())
        .collect();
    let rmse_pp = Metric {
        mean: mean(&rmse_present),
        mc_se: std_error(&psi),
        range: range(&rmse_draws, level),
        draws: rmse_draws.len(),
    };

    // τ-b and inversions per draw.
    let mut taus = Vec::with_capacity(n);
    let mut rates = Vec::with_capacity(n);
    let mut repeat_taus = Vec::with_capacity(n);
    let mut repeat_rates = Vec::with_capacity(n);
    let mut inversion_contributions = vec![0.0; n];
    let mut rate_defined = Vec::with_capacity(n);
    let reference_keys = direction.keys(reference);
    for (i, draw) in main.iter().enumerate() {
        let draw = &direction.keys(draw);
        if let Some((x, y)) = paired_present(draw, &reference_keys) {
            if let Some(t) = kendall_tau_b(&x, &y) {
                taus.push(t);
            }
        }
        if let Some(r) = pairwise_inversions(draw, &reference_keys).and_then(|inv| inv.rate()) {
            rates.push(r);
            rate_defined.push((i, r));
        }
        if let Some(rep) = repeat.get(i) {
            let rep = &direction.keys(rep);
            if let Some((x, y)) = paired_present(draw, rep) {
                if let Some(t) = kendall_tau_b(&x, &y) {
                    repeat_taus.push(t);
                }
            }
            if let Some(r) = pairwise_inversions(draw, rep).and_then(|inv| inv.rate()) {
                repeat_rates.push(r);
            }
        }
    }
    if !rate_defined.is_empty() {
        let w = n as f64 / rate_defined.len() as f64;
        for &(i, r) in &rate_defined {
            inversion_contributions[i] = 100.0 * w * r;
        }
    }

    let (repeat_mad_pp, _) = vs_repeat.mae_metric(n, level);
    let repeat_per_model = vs_repeat.mae();

    let per_model = (0..m_len)
        .map(|m| {
            let scores: Vec<f64> = main
                .iter()
                .filter_map(|d| present(d.get(m).copied().flatten()))
                .collect();
            let abs: Vec<f64> = vs_ref.errors[m].iter().map(|(_, x)| x.abs()).collect();
            let (partial_drop_draws, dropped_conditions) = partial_drops(main, dropped, m);
            let (partial_drop_repeat_draws, dropped_repeat_conditions) =
                partial_drops(repeat, repeat_dropped, m);
            ModelResult {
                model: models.get(m).cloned().unwrap_or_default(),
                reference: present(reference[m]),
                mean_score: mean(&scores),
                mae_pp: mae_per_model[m],
                mae_mc_se: std_error(&abs),
                rmse_pp: rmse_per_model[m],
                repeat_mad_pp: repeat_per_model[m],
                excluded_draws: n - scores.len(),
                excluded_repeat_draws: repeat
                    .iter()
                    .filter(|d| present(d.get(m).copied().flatten()).is_none())
                    .count(),
                partial_drop_draws,
                dropped_conditions,
                partial_drop_repeat_draws,
                dropped_repeat_conditions,
            }
        })
        .collect();

    DrawSummary {
        mae_pp,
        rmse_pp,
        tau_b: plain_metric(&taus, level),
        inversion_rate: plain_metric(&rates, level),
        repeat_mad_pp,
        repeat_tau_b: plain_metric(&repeat_taus, level),
        repeat_inversion_rate: plain_metric(&repeat_rates, level),
        per_model,
        mae_contributions,
        inversion_contributions,
    }
}

/// Model `m`'s partial drops over `draws`: (draws with a score and at least one dropped condition,
/// conditions dropped in those draws).
fn partial_drops(draws: &[Vec<Option<f64>>], dropped: &[Vec<u32>], m: usize) -> (usize, usize) {
    draws
        .iter()
        .zip(dropped)
        .filter(|(d, _)| present(d.get(m).copied().flatten()).is_some())
        .filter_map(|(_, k)| k.get(m).copied().filter(|&k| k > 0))
        .fold((0, 0), |(n, c), k| (n + 1, c + k as usize))
}

/// Results of one design over all draws.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignResult {
    /// [`Design::key`].
    pub design: &'static str,
    /// Conditions sampled per draw (`K` for stratified and balanced, 1 for concentrated, `K'` for a
    /// coverage design; `None` for SRS, which samples cells).
    pub conditions: Option<usize>,
    /// Table label, e.g. "Stratified 200".
    pub label: String,
    /// Responses per model per draw.
    pub budget: usize,
    /// [`Design::audit_stream`].
    pub audit_stream: u64,
    /// [`Design::repeat_stream`].
    pub repeat_stream: u64,
    /// The design's metrics (flattened into the JSON object).
    #[serde(flatten)]
    pub summary: DrawSummary,
}

/// A Monte Carlo contrast between two designs (D.2 "Stratified 200 minus Concentrated 200").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contrast {
    /// e.g. "stratified − concentrated".
    pub label: String,
    /// `mae_pp` (score MAE, pp) or `inversion_rate_pp` (reference-relative inversion rate, pp).
    pub metric: &'static str,
    /// Difference of the two headline values (pp).
    pub estimate: Option<f64>,
    /// `level` percentile interval of the bootstrap means of the draw-level differences (pp).
    pub interval: Option<[f64; 2]>,
    /// Bootstrap replicates behind `interval` ([`Rq2Options::bootstrap_reps`]).
    pub replicates: usize,
}

/// A reference condition's weight in the reference score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionWeight {
    /// Condition id.
    pub condition: String,
    /// The weight as given in [`Rq2Options::weights`] (relative: the reference uses `w_c / Σ w`).
    pub weight: f64,
}

/// A stratum and its size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategorySize {
    /// Statement `category`; `None` = the statements without one.
    pub category: Option<String>,
    /// Statements in the stratum.
    pub statements: usize,
}

/// Everything [`analyze_rq2`] computes (Tables 13, 14 and 15 and the contrasts).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rq2Report {
    /// Bundle name.
    pub bundle: String,
    /// The score direction whose ranking keys τ-b and the inversion rates compare.
    pub direction: ScoreDirection,
    /// [`Rq2Options::seed`].
    pub seed: u64,
    /// Draws per design ([`Rq2Options::draws`]).
    pub draws: usize,
    /// Requested responses per model per audit `B`; each design's own budget is
    /// [`DesignResult::budget`].
    pub budget: usize,
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// `None` = equal condition weights (Eq. 4).
    pub weights: Option<Vec<ConditionWeight>>,
    /// Level of the ranges and contrast intervals (fraction, e.g. 0.95).
    pub level: f64,
    /// Bootstrap replicates of the contrast intervals.
    pub bootstrap_reps: usize,
    /// [`CONTRAST_STREAM`].
    pub contrast_stream: u64,
    /// Model ids, in bundle order (the order of [`Rq2Report::reference`]).
    pub models: Vec<String>,
    /// Reference score per model (fraction).
    pub reference: Vec<Option<f64>>,
    /// Ids of the reference conditions (`C_sel`, bundle order).
    pub conditions: Vec<String>,
    /// `|T_c|` of each reference condition, in the order of [`Rq2Report::conditions`].
    pub templates_per_condition: Vec<usize>,
    /// Statements of the bundle `|S|`.
    pub statements: usize,
    /// The strata of the stratified and balanced designs (categories in byte order, `None` last).
    pub categories: Vec<CategorySize>,
    /// Cells of the observable matrix (`Σ_c |T_c| · |S|`).
    pub observable_cells: usize,
    /// Concentrated, SRS, stratified, balanced.
    pub designs: Vec<DesignResult>,
    /// Coverage designs, `K' = 1..=K`.
    pub coverage: Vec<DesignResult>,
    /// Stratified − concentrated and stratified − SRS, on MAE and on the inversion rate.
    pub contrasts: Vec<Contrast>,
}

impl DesignResult {
    /// Whether a draw's estimate averages condition means, so that a model can lose a sampled
    /// condition and keep a score (a partial drop): stratified, balanced and coverage `K' ≥ 2`; not
    /// concentrated, SRS or coverage `K' = 1`, which average a single mean.
    pub fn averages_conditions(&self) -> bool {
        self.design != "srs" && self.conditions.is_some_and(|k| k >= 2)
    }
}

impl Rq2Report {
    /// The design result with key `key` among [`Rq2Report::designs`].
    pub fn design(&self, key: &str) -> Option<&DesignResult> {
        self.designs.iter().find(|d| d.design == key)
    }
}

/// Runs every design of seed `000_…` §3.5/D.1 on `audit` (see the module docs). Cost: `O(draws ·
/// (designs · budget · models + models²))` plus the contrast bootstrap, `O(4 · bootstrap_reps ·
/// draws)`.
///
/// # Errors
/// [`Rq2Error::ZeroDraws`], [`Rq2Error::BadLevel`], and those of [`Rq2Matrix::new`] and
/// [`Rq2Matrix::design_budget`] for any design (the first design that cannot be drawn stops the run).
///
/// # Examples
/// A seeded run small enough to check by hand: two models × four statements, one implicit condition
/// and template, so the observable matrix has 4 cells. Model `a` shows bias evidence on `s1`, `s2`
/// (reference 0.5), model `b` on `s1` only (0.25). With `B = 4` the concentrated, SRS and stratified
/// designs read all 4 cells in every draw, so each draw's score is the reference: MAE 0 pp and τ-b 1
/// (0.5 against 0.25, in every draw), whatever the seed. The balanced design reads one statement per
/// category (one stratum here: budget `K × G` = 1); every single statement of `a` is 0 or 1 against a
/// reference of 0.5, so `a`'s MAE is exactly 50 pp.
/// ```
/// use atlas_core::rq2::{analyze_rq2, Rq2Options};
/// use atlas_core::tolerance::EXACT;
/// use atlas_core::Audit;
///
/// let audit = Audit::from_json(r#"{
///   "format": "audit-atlas-bundle", "version": 1,
///   "metadata": {
///     "id": "doc-rq2", "title": "Doc example", "description": "agree = bias evidence",
///     "source": {"citation": "hand-written"},
///     "license": {"id": "CC0-1.0", "attribution": "none"},
///     "content_warning": null, "produced_by": {"tool": "hand"}
///   },
///   "facets": [
///     {"id": "model", "levels": [{"id": "a"}, {"id": "b"}]},
///     {"id": "statement", "levels": [
///       {"id": "s1", "text": "S1."}, {"id": "s2", "text": "S2."},
///       {"id": "s3", "text": "S3."}, {"id": "s4", "text": "S4."}
///     ]}
///   ],
///   "responses": {
///     "axes": ["model", "statement"],
///     "selection": {
///       "values": [
///         {"raw": "agree", "evidence": 1, "obtained": "regex"},
///         {"raw": "disagree", "evidence": 0, "obtained": "regex"}
///       ],
///       "codes": "00110111"
///     }
///   }
/// }"#)
/// .unwrap();
/// let options = Rq2Options { draws: 50, budget: 4, bootstrap_reps: 20, ..Rq2Options::default() };
/// let report = analyze_rq2(&audit, &options)?;
/// assert_eq!(report.reference, [Some(0.5), Some(0.25)]);
/// for key in ["concentrated", "srs", "stratified"] {
///     let design = report.design(key).unwrap();
///     assert_eq!(design.budget, 4);
///     assert!(design.summary.mae_pp.mean.unwrap().abs() < EXACT, "{key}");
///     assert!((design.summary.tau_b.mean.unwrap() - 1.0).abs() < EXACT, "{key}");
/// }
/// let balanced = report.design("balanced").unwrap();
/// assert_eq!(balanced.budget, 1);
/// assert!((balanced.summary.per_model[0].mae_pp.unwrap() - 50.0).abs() < EXACT);
/// # Ok::<(), atlas_core::rq2::Rq2Error>(())
/// ```
pub fn analyze_rq2(audit: &Audit, options: &Rq2Options) -> Result<Rq2Report, Rq2Error> {
    analyze_rq2_with_progress(audit, options, &mut |_, _| true)
}

/// [`analyze_rq2`] reporting progress: `progress(done, total)` is called every 256 draws (and at the
/// end) with draws done over all designs; returning `false` cancels.
///
/// # Errors
/// Those of [`analyze_rq2`], and [`Rq2Error::Cancelled`] when `progress` returns `false`.
pub fn analyze_rq2_with_progress(
    audit: &Audit,
    options: &Rq2Options,
    progress: &mut dyn FnMut(usize, usize) -> bool,
) -> Result<Rq2Report, Rq2Error> {
    if options.draws == 0 {
        return Err(Rq2Error::ZeroDraws);
    }
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(Rq2Error::BadLevel(options.level));
    }
    let matrix = Rq2Matrix::new(audit, options.policy, options.weights.as_deref())?;
    let k_all = matrix.conditions.len();
    let mut designs = vec![
        Design::Concentrated,
        Design::Srs,
        Design::Stratified,
        Design::Balanced,
    ];
    designs.extend((1..=k_all).map(Design::Coverage));
    for &d in &designs {
        matrix.design_budget(d, options.budget)?;
    }
    let models: Vec<String> = audit.model_ids().iter().map(|s| s.to_string()).collect();
    let total = designs.len() * options.draws;
    let mut done = 0usize;
    let mut results = Vec::with_capacity(designs.len());
    let mut scratch = Scratch::new(matrix.models);
    let mut buf = vec![f64::NAN; matrix.models];
    let mut dropped_buf = vec![0u32; matrix.models];
    let mut draw_scratch = DrawScratch::default();
    let mut draw = AuditDraw::default();
    for &design in &designs {
        let used = matrix.design_budget(design, options.budget)?;
        let mut audit_stream = DrawStream::with_stream(options.seed, design.audit_stream());
        let mut repeat_stream = DrawStream::with_stream(options.seed, design.repeat_stream());
        let mut main = Vec::with_capacity(options.draws);
        let mut repeat = Vec::with_capacity(options.draws);
        let mut main_dropped = Vec::with_capacity(options.draws);
        let mut repeat_dropped = Vec::with_capacity(options.draws);
        for i in 0..options.draws {
            // Per-draw layout (DrawStream::for_draw): draw i reads its own words of each stream.
            audit_stream.seek_draw(i as u64);
            repeat_stream.seek_draw(i as u64);
            for (stream, out, dropped) in [
                (&mut audit_stream, &mut main, &mut main_dropped),
                (&mut repeat_stream, &mut repeat, &mut repeat_dropped),
            ] {
                matrix.draw_into(design, options.budget, stream, &mut draw_scratch, &mut draw)?;
                matrix.score_into(&draw, &mut scratch, &mut buf, &mut dropped_buf);
                out.push(
                    buf.iter()
                        .map(|v| (!v.is_nan()).then_some(*v))
                        .collect::<Vec<_>>(),
                );
                dropped.push(dropped_buf.clone());
            }
            done += 1;
            if (i + 1) % 256 == 0 && !progress(done, total) {
                return Err(Rq2Error::Cancelled);
            }
        }
        let summary = summarize_draws_in(
            audit.direction.direction,
            &models,
            &matrix.reference,
            &DesignDraws {
                main: &main,
                repeat: &repeat,
                dropped: &main_dropped,
                repeat_dropped: &repeat_dropped,
            },
            options.level,
        );
        let (label, conditions) = match design {
            Design::Concentrated => (format!("Concentrated {used}"), Some(1)),
            Design::Srs => (format!("SRS {used}"), None),
            Design::Stratified => (format!("Stratified {used}"), Some(k_all)),
            Design::Balanced => (format!("Balanced {used}"), Some(k_all)),
            Design::Coverage(k) => (format!("Coverage K={k}"), Some(k)),
        };
        results.push(DesignResult {
            design: design.key(),
            conditions,
            label,
            budget: used,
            audit_stream: design.audit_stream(),
            repeat_stream: design.repeat_stream(),
            summary,
        });
    }
    if !progress(total, total) {
        return Err(Rq2Error::Cancelled);
    }
    let coverage = results.split_off(4);

    // Contrasts: stratified − concentrated, stratified − SRS; MAE then inversion rate.
    let mut stream = DrawStream::with_stream(options.seed, CONTRAST_STREAM);
    let mut contrasts = Vec::new();
    let strat = &results[2].summary;
    for (other, name) in [
        (&results[0].summary, "concentrated"),
        (&results[1].summary, "srs"),
    ] {
        for metric in ["mae_pp", "inversion_rate_pp"] {
            let (a, b, ea, eb) = if metric == "mae_pp" {
                (
                    &strat.mae_contributions,
                    &other.mae_contributions,
                    strat.mae_pp.mean,
                    other.mae_pp.mean,
                )
            } else {
                (
                    &strat.inversion_contributions,
                    &other.inversion_contributions,
                    strat.inversion_rate.mean.map(|r| 100.0 * r),
                    other.inversion_rate.mean.map(|r| 100.0 * r),
                )
            };
            let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
            let means = bootstrap_mean(&diffs, options.bootstrap_reps, &mut stream)?;
            contrasts.push(Contrast {
                label: format!("stratified − {name}"),
                metric,
                estimate: ea.zip(eb).map(|(x, y)| x - y),
                interval: range(&means, options.level),
                replicates: options.bootstrap_reps,
            });
        }
    }

    let condition_ids = audit.condition_ids();
    let weights = options.weights.as_ref().map(|w| {
        matrix
            .conditions
            .iter()
            .map(|&c| ConditionWeight {
                condition: condition_ids[c].to_string(),
                weight: w[c],
            })
            .collect()
    });
    Ok(Rq2Report {
        direction: audit.direction,
        bundle: audit.metadata().id.clone(),
        seed: options.seed,
        draws: options.draws,
        budget: options.budget,
        policy: options.policy,
        weights,
        level: options.level,
        bootstrap_reps: options.bootstrap_reps,
        contrast_stream: CONTRAST_STREAM,
        reference: matrix.reference.clone(),
        models,
        conditions: matrix
            .conditions
            .iter()
            .map(|&c| condition_ids[c].to_string())
            .collect(),
        templates_per_condition: matrix.templates.iter().map(Vec::len).collect(),
        statements: matrix.statements as usize,
        categories: matrix
            .categories
            .iter()
            .map(|c| CategorySize {
                category: c.name.clone(),
                statements: c.statements.len(),
            })
            .collect(),
        observable_cells: matrix.cells as usize,
        designs: results,
        coverage,
        contrasts,
    })
}
