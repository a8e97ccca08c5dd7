//! Plan an audit (issue 17 §2): how large must an audit be, and spread how, before its scores and
//! ranking mean something? The loaded bundle is the **finite reference** (seed `000_…` §3.5, §5.3):
//! its reference scores (Eq. 4, or user condition weights) are the truth, and an audit of `B`
//! responses per model is simulated by drawing `B` of the bundle's own cells with one of the RQ2
//! designs ([`crate::rq2`]: concentrated, SRS, stratified, balanced, coverage over `K'` conditions).
//!
//! **What this predicts, and what it does not.** The planner predicts the error of an audit against
//! *this bundle's* conditions, templates and statements. It says nothing about conditions, wordings or
//! statements the bundle does not contain: an audit of unseen conditions can be further off than
//! predicted here ([`FINITE_REFERENCE_NOTE`], shown with every result).
//!
//! # One estimate
//! [`Planner::estimate`] runs `draws` audit draws of one design at one budget from
//! `DrawStream::with_stream(seed, design.audit_stream())` — exactly the audit draws of
//! [`crate::rq2::analyze_rq2`] for that design (its draws and scores, [`Rq2Matrix::draw`] and the
//! same scoring), summarised by [`crate::rq2::summarize_draws_in`]. So with every model chosen, an
//! estimate's score MAE, RMSE, τ-b and inversion rate (means, Monte Carlo SEs, ranges) and the
//! per-model MAE and exclusion counts are *identical* to RQ2's at the same design, budget, draws and
//! seed. (RQ2's repeat draws, which read a second stream, are not needed and not drawn.) With a subset
//! of models, the same draws are summarised over the chosen models only.
//!
//! Metrics, per design (errors in percentage points, pp, of the score, a fraction):
//! * score MAE: mean over models of the mean `|score − reference|` over draws (RQ2's `mae_pp`), with
//!   the central `level` (95 %) range of the **draw-level MAE** (the mean over the models scored in one
//!   draw) and its 95th percentile [`Estimate::mae_pp_p95`]: "the MAE of 95 % of audits is at most
//!   this";
//! * RMSE, τ-b against the reference ranking, the reference-relative inversion rate (fraction of the
//!   compared model pairs in the wrong order), as in RQ2;
//! * for a chosen pair `(A, B)`: the probability that an audit orders the pair as the reference does
//!   ([`PairEstimate`]): the fraction of **all** draws in which both models have a score and their
//!   ranking keys ([`crate::direction`]) are strictly in the reference's order. A draw where the two
//!   tie, or where either has no score, does not settle the order and counts as not right (both
//!   counted in the output).
//!
//! # A plan: curves and the smallest budget
//! [`plan_audit`] evaluates every chosen design at every budget of a grid (default
//! [`DEFAULT_BUDGETS`], 20 to 2,000; each budget uses the same seed and streams, so each point equals
//! RQ2 at that budget). A budget a design cannot read (concentrated above `|S|` statements,
//! stratified above `K·|S|`, …) is listed as skipped with the reason; the balanced design reads
//! `K × G` responses whatever the budget, so it has one point. For each target — score MAE ≤ `x` pp
//! in 95 % of audits (`mae_pp_p95 ≤ x`), mean inversion rate ≤ `y` %, the chosen pair's order right
//! in ≥ `z` % of audits — the answer per design is the **smallest grid budget at which the target
//! holds there and at every larger grid budget evaluated** (so a lucky dip of Monte Carlo noise below
//! the line does not count), or "not reached up to the largest budget evaluated".
//!
//! Pure and wasm32-safe: no clock, no threads, no I/O.

use std::ops::Range;

use serde::Serialize;

use crate::bundle::Audit;
use crate::direction::ScoreDirection;
use crate::resample::{percentile, DrawStream};
use crate::rq2::{
    summarize_draws_in, AuditDraw, Design, DesignDraws, DrawScratch, Metric, Rq2Error, Rq2Matrix,
    Scratch, DEFAULT_SEED,
};
use crate::stats::RepeatPolicy;

/// Draws per estimate (issue 17: "a planner estimate of 2,000 draws").
pub const DEFAULT_DRAWS: usize = 2_000;

/// The default budget grid (responses per model) of [`plan_audit`]: 20 to 2,000.
pub const DEFAULT_BUDGETS: [usize; 14] = [
    20, 30, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000,
];

/// Percentile of the draw-level MAE behind the MAE target ("in 95 % of audits").
pub const MAE_TARGET_PERCENTILE: f64 = 95.0;

/// The plain statement of what a plan predicts, carried by every [`PlanReport`].
pub const FINITE_REFERENCE_NOTE: &str = "Predicted error against this bundle's own conditions, \
templates and statements (the bundle is the finite reference, seed 000 §3.5, §5.3); it does not \
predict error against conditions or statements the bundle does not contain.";

/// Why a plan cannot be made. Every variant names the input at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// [`Planner::plan_report`] got estimates that are not one per job of its request, in order.
    #[error("the plan needs {jobs} estimates in the order of its request; {estimates} were given or they are of other designs or budgets")]
    EstimatesDoNotMatch {
        /// Estimates the request lists.
        jobs: usize,
        /// Estimates given.
        estimates: usize,
    },
    /// A chosen model id is not a model of the bundle.
    #[error("no model {model:?} in the bundle; its models are {known}")]
    UnknownModel {
        /// The id given.
        model: String,
        /// The bundle's model ids, comma-separated.
        known: String,
    },
    /// A model id chosen twice.
    #[error("model {0:?} is chosen twice")]
    DuplicateModel(String),
    /// The model list is empty.
    #[error("no model chosen")]
    NoModels,
    /// The pair names the same model twice.
    #[error("the pair needs two different models; {0:?} was given twice")]
    SamePairModel(String),
    /// A pair target without a pair.
    #[error("a pair target needs a pair of models (--pair A,B)")]
    PairTargetWithoutPair,
    /// The design list is empty.
    #[error("no design chosen")]
    NoDesigns,
    /// A coverage design over 0 or more than `K` conditions.
    #[error(
        "coverage design over {k} conditions: the bundle has {conditions} reference conditions"
    )]
    CoverageOutOfRange {
        /// Conditions asked for (`K'`).
        k: usize,
        /// Reference conditions of the bundle (`K`).
        conditions: usize,
    },
    /// The budget grid is empty.
    #[error("no budget given")]
    NoBudgets,
    /// A budget of 0.
    #[error("budget 0: the budget must be at least 1 response per model")]
    ZeroBudget,
    /// A budget above the observable matrix: no design can read that many distinct cells per model.
    #[error(
        "budget {budget} is above the {cells} cells of the bundle's observable matrix: \
         no audit of this bundle can read that many distinct responses per model"
    )]
    BudgetAboveCells {
        /// The budget given (responses per model).
        budget: usize,
        /// Cells of the observable matrix.
        cells: usize,
    },
    /// `draws` is 0.
    #[error("at least 1 draw is needed")]
    ZeroDraws,
    /// A draw range outside the estimate's draws ([`Planner::estimate_range`]).
    #[error("draws {start}..{end} are not inside the estimate's 0..{draws}")]
    DrawsOutOfRange {
        /// First draw asked for.
        start: usize,
        /// One past the last draw asked for.
        end: usize,
        /// Draws of the estimate.
        draws: usize,
    },
    /// Parts that do not make up one estimate ([`Planner::merge`]).
    #[error(
        "the parts ({parts}) do not cover draws 0..{draws} of {design} at budget {budget} in order"
    )]
    PartsDoNotCover {
        /// The estimate's design.
        design: String,
        /// Its budget.
        budget: usize,
        /// Its draws.
        draws: usize,
        /// The parts given, in words.
        parts: String,
    },
    /// `level` is not strictly between 0 and 1.
    #[error("level {0} is outside (0, 1)")]
    BadLevel(f64),
    /// A target value that is not a finite number in its range.
    #[error("target {name} = {value}: {why}")]
    BadTarget {
        /// Which target (`mae_pp`, `inversion_pct`, `pair_pct`).
        name: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range in words.
        why: &'static str,
    },
    /// One design cannot be drawn at one budget ([`Rq2Matrix::design_budget`]).
    #[error("{design} at budget {budget}: {source}")]
    Design {
        /// [`Design::key`] (with `K'` for coverage).
        design: String,
        /// The budget asked for.
        budget: usize,
        /// Why.
        source: Rq2Error,
    },
    /// The bundle has no observable matrix ([`Rq2Matrix::new`]).
    #[error(transparent)]
    Rq2(#[from] Rq2Error),
}

/// The name of a design in output and errors: `concentrated`, `srs`, `stratified`, `balanced`,
/// `coverage:K'`.
pub fn design_name(design: Design) -> String {
    match design {
        Design::Coverage(k) => format!("coverage:{k}"),
        d => d.key().to_string(),
    }
}

/// Parses a design name of [`design_name`] (`coverage-K'` and `coverage=K'` accepted too).
///
/// # Errors
/// A message naming the text and the accepted names.
pub fn parse_design(text: &str) -> Result<Design, String> {
    let t = text.trim().to_ascii_lowercase();
    match t.as_str() {
        "concentrated" => return Ok(Design::Concentrated),
        "srs" => return Ok(Design::Srs),
        "stratified" => return Ok(Design::Stratified),
        "balanced" => return Ok(Design::Balanced),
        _ => {}
    }
    if let Some(k) = t
        .strip_prefix("coverage")
        .and_then(|r| r.strip_prefix([':', '-', '=']))
    {
        if let Ok(k) = k.parse::<usize>() {
            return Ok(Design::Coverage(k));
        }
    }
    Err(format!(
        "unknown design {text:?}: use concentrated, srs, stratified, balanced or coverage:K \
         (K conditions)"
    ))
}

/// A target of the budget search. Each `None` is no target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Targets {
    /// Score MAE at most this many pp in 95 % of audits ([`Estimate::mae_pp_p95`] ≤ x).
    pub mae_pp: Option<f64>,
    /// Mean reference-relative inversion rate at most this many percent.
    pub inversion_pct: Option<f64>,
    /// The chosen pair in the reference's order in at least this many percent of audits.
    pub pair_pct: Option<f64>,
}

/// Settings of [`plan_audit`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanOptions {
    /// Designs to compare (default concentrated, SRS, stratified).
    #[serde(skip)]
    pub designs: Vec<Design>,
    /// Budget grid, responses per model (default [`DEFAULT_BUDGETS`]); evaluated in increasing order.
    pub budgets: Vec<usize>,
    /// Model ids to score (`None` = every model of the bundle, in bundle order).
    pub models: Option<Vec<String>>,
    /// Draws per estimate (default [`DEFAULT_DRAWS`]).
    pub draws: usize,
    /// Seed of every stream (default [`DEFAULT_SEED`], as RQ2).
    pub seed: u64,
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// Condition weights of the reference (one per bundle condition; `None` = Eq. 4).
    pub weights: Option<Vec<f64>>,
    /// Level of the ranges (0.95 = 2.5–97.5 percentiles).
    pub level: f64,
    /// Model ids `(A, B)` whose order the audit should get right.
    pub pair: Option<(String, String)>,
    /// Targets of the budget search.
    pub targets: Targets,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            designs: vec![Design::Concentrated, Design::Srs, Design::Stratified],
            budgets: DEFAULT_BUDGETS.to_vec(),
            models: None,
            draws: DEFAULT_DRAWS,
            seed: DEFAULT_SEED,
            policy: RepeatPolicy::AllResponses,
            weights: None,
            level: 0.95,
            pair: None,
            targets: Targets::default(),
        }
    }
}

/// What one estimate scores: the models (bundle indices) and an optional pair.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateOptions {
    /// Draws (default [`DEFAULT_DRAWS`]).
    pub draws: usize,
    /// Seed (default [`DEFAULT_SEED`]).
    pub seed: u64,
    /// Level of the ranges (default 0.95).
    pub level: f64,
    /// Bundle model indices to summarise, in output order (`None` = all, bundle order).
    pub models: Option<Vec<usize>>,
    /// Bundle model indices of the pair.
    pub pair: Option<(usize, usize)>,
}

impl Default for EstimateOptions {
    fn default() -> Self {
        EstimateOptions {
            draws: DEFAULT_DRAWS,
            seed: DEFAULT_SEED,
            level: 0.95,
            models: None,
            pair: None,
        }
    }
}

/// Per-model part of an [`Estimate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanModel {
    /// Model id.
    pub model: String,
    /// Reference score (fraction).
    pub reference: Option<f64>,
    /// `MAE_m` (pp) over the draws where the model has a score.
    pub mae_pp: Option<f64>,
    /// `RMSE_m` (pp).
    pub rmse_pp: Option<f64>,
    /// Draws in which the model has no valid unit (no score; left out of its MAE and of the pairs).
    pub excluded_draws: usize,
    /// Draws in which the model kept a score but lost a sampled condition (RQ2's partial drops).
    pub partial_drop_draws: usize,
    /// Sampled conditions lost over those draws.
    pub dropped_conditions: usize,
}

/// How often an audit orders a chosen pair as the reference does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairEstimate {
    /// First model id.
    pub a: String,
    /// Second model id.
    pub b: String,
    /// Whether the reference ranks `a` better (`"a"`), `b` better (`"b"`), or `None` when the
    /// reference ties them or one has no reference score (then no probability).
    pub reference_better: Option<&'static str>,
    /// Draws in which both have a score and are strictly in the reference's order.
    pub right_draws: usize,
    /// Draws in which both have a score but tie (order not settled; not right).
    pub tied_draws: usize,
    /// Draws in which either has no score (order not settled; not right).
    pub unscored_draws: usize,
    /// All draws.
    pub draws: usize,
    /// `right_draws / draws` (fraction); `None` when the reference does not order the pair.
    pub probability: Option<f64>,
    /// Binomial Monte Carlo SE of `probability`, `sqrt(p(1 − p)/draws)`.
    pub mc_se: Option<f64>,
}

/// One design at one budget: predicted error of an audit against the bundle (the finite reference).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// [`design_name`].
    pub design: String,
    /// Label as in RQ2's tables, e.g. "Stratified 200", "Coverage K=2".
    pub label: String,
    /// Conditions sampled per draw (`None` for SRS).
    pub conditions: Option<usize>,
    /// Responses per model the design reads ([`Rq2Matrix::design_budget`]; the balanced design's
    /// `K × G`).
    pub budget: usize,
    /// The budget asked for.
    pub requested_budget: usize,
    /// Draws.
    pub draws: usize,
    /// Seed.
    pub seed: u64,
    /// [`Design::audit_stream`], the stream of the draws.
    pub audit_stream: u64,
    /// Score MAE (pp): mean over models of `MAE_m`; `range` = `level` range of the draw-level MAE.
    pub mae_pp: Metric,
    /// 95th percentile of the draw-level MAE (pp): 95 % of audits have at most this MAE.
    pub mae_pp_p95: Option<f64>,
    /// Score RMSE (pp).
    pub rmse_pp: Metric,
    /// τ-b of the draw ranking against the reference ranking.
    pub tau_b: Metric,
    /// Reference-relative inversion rate (fraction of compared pairs).
    pub inversion_rate: Metric,
    /// The chosen pair, if any.
    pub pair: Option<PairEstimate>,
    /// Per chosen model.
    pub per_model: Vec<PlanModel>,
}

/// A budget of the grid a design cannot read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedBudget {
    /// The budget.
    pub budget: usize,
    /// Why ([`Rq2Error`] in words).
    pub reason: String,
}

/// One design over the budget grid: the curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignPlan {
    /// [`design_name`].
    pub design: String,
    /// [`Design::audit_stream`].
    pub audit_stream: u64,
    /// One estimate per distinct budget read, in increasing budget order.
    pub estimates: Vec<Estimate>,
    /// Grid budgets the design cannot read.
    pub skipped: Vec<SkippedBudget>,
}

/// The answer of one target for one design.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignAnswer {
    /// [`design_name`].
    pub design: String,
    /// Smallest grid budget (responses per model read) meeting the target there and at every larger
    /// budget evaluated; `None` = not reached.
    pub smallest_budget: Option<usize>,
    /// Largest budget evaluated for the design (`None`: no budget of the grid fits it).
    pub largest_budget: Option<usize>,
    /// The answer in words, e.g. "200 responses per model" or "not reached up to 384".
    pub answer: String,
}

/// One target's answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetAnswer {
    /// `mae_pp_p95`, `inversion_pct`, `pair_pct` or `all` (every target given at once).
    pub target: &'static str,
    /// The target in plain words.
    pub description: String,
    /// Per design, in the order of [`PlanReport::designs`].
    pub per_design: Vec<DesignAnswer>,
}

/// Everything [`plan_audit`] computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanReport {
    /// Bundle id.
    pub bundle: String,
    /// [`FINITE_REFERENCE_NOTE`].
    pub note: &'static str,
    /// Score direction of the rankings.
    pub direction: ScoreDirection,
    /// Seed.
    pub seed: u64,
    /// Draws per estimate.
    pub draws: usize,
    /// Repeat policy.
    pub policy: RepeatPolicy,
    /// Condition weights of the reference (`None` = Eq. 4's equal weights).
    pub weights: Option<Vec<f64>>,
    /// Level of the ranges.
    pub level: f64,
    /// The budget grid evaluated (sorted, distinct).
    pub budgets: Vec<usize>,
    /// Whether the grid is [`DEFAULT_BUDGETS`].
    pub default_grid: bool,
    /// Chosen model ids.
    pub models: Vec<String>,
    /// Their reference scores (fraction).
    pub reference: Vec<Option<f64>>,
    /// The pair, if any.
    pub pair: Option<(String, String)>,
    /// The targets.
    pub targets: Targets,
    /// Statements of the bundle `|S|`.
    pub statements: usize,
    /// Reference conditions `K`.
    pub reference_conditions: usize,
    /// Cells of the observable matrix.
    pub observable_cells: usize,
    /// One per chosen design.
    pub designs: Vec<DesignPlan>,
    /// One per target given, then `all` when more than one.
    pub answers: Vec<TargetAnswer>,
}

/// What a plan needs computed ([`Planner::plan_request`]): the checked options of every estimate
/// and the estimates themselves, one per design and distinct budget actually read, in design order
/// then increasing budget. Hand the estimates, in `jobs` order, to [`Planner::plan_report`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// The options every estimate of the plan uses (models as bundle indices, pair, draws, seed).
    pub estimate_options: EstimateOptions,
    /// The budget grid, sorted and without duplicates.
    pub budgets: Vec<usize>,
    /// The scored models, bundle indices in output order.
    pub models: Vec<usize>,
    /// `(design, requested budget)` of each estimate to compute.
    pub jobs: Vec<(Design, usize)>,
    /// How many of `jobs` belong to each entry of [`PlanOptions::designs`], in order.
    pub per_design: Vec<usize>,
    /// Per entry of [`PlanOptions::designs`]: the budgets the design cannot read, with the reason.
    pub skipped: Vec<Vec<SkippedBudget>>,
}

/// The not yet summarised audit draws `draws` of one estimate ([`Planner::estimate_range`]): what
/// one worker computes when an estimate is split by draw ranges; [`Planner::merge`] puts the parts
/// together. Per draw, over the chosen models in [`EstimateOptions::models`] order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimatePart {
    /// [`design_name`].
    pub design: String,
    /// The budget asked for.
    pub budget: usize,
    /// The draws of this part (indices into `0..draws` of the whole estimate).
    pub draws: Range<usize>,
    /// Per draw: each chosen model's score (fraction; `None` = no valid unit in the draw).
    pub scores: Vec<Vec<Option<f64>>>,
    /// Per draw: each chosen model's sampled conditions lost (RQ2's partial drops).
    pub dropped: Vec<Vec<u32>>,
    /// Per draw: the draw-level MAE (pp, mean over the models scored in the draw; `None` = none).
    pub draw_mae: Vec<Option<f64>>,
    /// Draws of this part with the pair in the reference's order.
    pub right_draws: usize,
    /// Draws of this part where the pair ties.
    pub tied_draws: usize,
    /// Draws of this part where either model of the pair has no score.
    pub unscored_draws: usize,
}

/// `draws` split into `parts` contiguous ranges in order, sizes differing by at most one (the first
/// `draws mod parts` one longer); `parts` is taken as at least 1. How the app splits an estimate
/// across its Web Workers.
///
/// ```
/// assert_eq!(atlas_core::plan::split_draws(10, 3), vec![0..4, 4..7, 7..10]);
/// ```
pub fn split_draws(draws: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let (q, r) = (draws / parts, draws % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = q + usize::from(i < r);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

fn describe_parts(parts: &[EstimatePart]) -> String {
    if parts.is_empty() {
        return "none".to_string();
    }
    parts
        .iter()
        .map(|p| {
            format!(
                "{} {} draws {}..{}",
                p.design, p.budget, p.draws.start, p.draws.end
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What [`Planner::prepare`] checks and derives once per estimate.
struct Prepared {
    chosen: Vec<usize>,
    reference: Vec<Option<f64>>,
    names: Vec<String>,
    used: usize,
    pair_ref: Option<std::cmp::Ordering>,
}

/// The finite reference of a bundle, built once ([`Rq2Matrix`]); estimates are cheap.
#[derive(Debug, Clone)]
pub struct Planner {
    matrix: Rq2Matrix,
    models: Vec<String>,
    direction: ScoreDirection,
    bundle: String,
}

impl Planner {
    /// Builds the observable matrix of `audit` under `policy` (and reference `weights`).
    ///
    /// # Errors
    /// Those of [`Rq2Matrix::new`], as [`PlanError::Rq2`].
    pub fn new(
        audit: &Audit,
        policy: RepeatPolicy,
        weights: Option<&[f64]>,
    ) -> Result<Self, PlanError> {
        Ok(Planner {
            matrix: Rq2Matrix::new(audit, policy, weights)?,
            models: audit.model_ids().iter().map(|s| s.to_string()).collect(),
            direction: audit.direction,
            bundle: audit.metadata().id.clone(),
        })
    }

    /// The bundle's model ids, in bundle order.
    pub fn model_ids(&self) -> &[String] {
        &self.models
    }

    /// The observable matrix.
    pub fn matrix(&self) -> &Rq2Matrix {
        &self.matrix
    }

    /// The bundle index of model `id`.
    ///
    /// # Errors
    /// [`PlanError::UnknownModel`] naming `id` and the bundle's models.
    pub fn model_index(&self, id: &str) -> Result<usize, PlanError> {
        self.models
            .iter()
            .position(|m| m == id.trim())
            .ok_or_else(|| PlanError::UnknownModel {
                model: id.to_string(),
                known: self.models.join(", "),
            })
    }

    fn check_design(&self, design: Design) -> Result<(), PlanError> {
        let k_all = self.matrix.reference_conditions().len();
        match design {
            Design::Coverage(k) if k == 0 || k > k_all => Err(PlanError::CoverageOutOfRange {
                k,
                conditions: k_all,
            }),
            _ => Ok(()),
        }
    }

    /// One estimate: `options.draws` audit draws of `design` at `budget` (see the module docs).
    /// Cost `O(draws · (budget · models + models²))`. Equal, bit for bit, to
    /// [`Planner::merge`] of [`Planner::estimate_range`] over any split of `0..options.draws`
    /// ([`split_draws`]).
    ///
    /// # Errors
    /// [`PlanError::ZeroDraws`], [`PlanError::BadLevel`], [`PlanError::CoverageOutOfRange`],
    /// [`PlanError::UnknownModel`] for an index out of range, [`PlanError::DuplicateModel`],
    /// [`PlanError::NoModels`], [`PlanError::SamePairModel`], and [`PlanError::Design`] when the design
    /// cannot read `budget` (budget 0, above the statements of a template, …).
    pub fn estimate(
        &self,
        design: Design,
        budget: usize,
        options: &EstimateOptions,
    ) -> Result<Estimate, PlanError> {
        let part = self.estimate_range(design, budget, options, 0..options.draws)?;
        self.merge(design, budget, options, &[part])
    }

    fn prepare(
        &self,
        design: Design,
        budget: usize,
        options: &EstimateOptions,
    ) -> Result<Prepared, PlanError> {
        if options.draws == 0 {
            return Err(PlanError::ZeroDraws);
        }
        if !(options.level > 0.0 && options.level < 1.0) {
            return Err(PlanError::BadLevel(options.level));
        }
        self.check_design(design)?;
        let m_all = self.matrix.models();
        let chosen: Vec<usize> = match &options.models {
            Some(v) => v.clone(),
            None => (0..m_all).collect(),
        };
        if chosen.is_empty() {
            return Err(PlanError::NoModels);
        }
        for (i, &m) in chosen.iter().enumerate() {
            if m >= m_all {
                return Err(PlanError::UnknownModel {
                    model: format!("#{m}"),
                    known: self.models.join(", "),
                });
            }
            if chosen[..i].contains(&m) {
                return Err(PlanError::DuplicateModel(self.models[m].clone()));
            }
        }
        if let Some((a, b)) = options.pair {
            for m in [a, b] {
                if m >= m_all {
                    return Err(PlanError::UnknownModel {
                        model: format!("#{m}"),
                        known: self.models.join(", "),
                    });
                }
            }
            if a == b {
                return Err(PlanError::SamePairModel(self.models[a].clone()));
            }
        }
        let used = self
            .matrix
            .design_budget(design, budget)
            .map_err(|source| PlanError::Design {
                design: design_name(design),
                budget,
                source,
            })?;
        let direction = self.direction.direction;
        let all_reference = self.matrix.reference();
        let pair_ref = options.pair.and_then(|(a, b)| {
            let ka = all_reference[a].filter(|v| v.is_finite())?;
            let kb = all_reference[b].filter(|v| v.is_finite())?;
            let order = direction.key(ka).partial_cmp(&direction.key(kb))?;
            (order != std::cmp::Ordering::Equal).then_some(order)
        });
        Ok(Prepared {
            reference: chosen.iter().map(|&m| all_reference[m]).collect(),
            names: chosen.iter().map(|&m| self.models[m].clone()).collect(),
            chosen,
            used,
            pair_ref,
        })
    }

    /// The audit draws `draws` (a sub-range of `0..options.draws`) of one estimate, not yet
    /// summarised: what one Web Worker computes when an estimate is split across several. Draw `i`
    /// reads [`crate::resample::DrawStream::for_draw`]`(seed, design.audit_stream(), i)`, so a draw's
    /// numbers do not depend on which range it is computed in; [`Planner::merge`] of the parts of
    /// any split of `0..options.draws` ([`split_draws`]) equals [`Planner::estimate`] bit for bit.
    ///
    /// # Errors
    /// Those of [`Planner::estimate`], and [`PlanError::DrawsOutOfRange`] when `draws` is not inside
    /// `0..options.draws`.
    pub fn estimate_range(
        &self,
        design: Design,
        budget: usize,
        options: &EstimateOptions,
        draws: Range<usize>,
    ) -> Result<EstimatePart, PlanError> {
        let p = self.prepare(design, budget, options)?;
        if draws.start > draws.end || draws.end > options.draws {
            return Err(PlanError::DrawsOutOfRange {
                start: draws.start,
                end: draws.end,
                draws: options.draws,
            });
        }
        let direction = self.direction.direction;
        let design_error = |source| PlanError::Design {
            design: design_name(design),
            budget,
            source,
        };
        let m_all = self.matrix.models();
        let n = draws.len();
        let mut stream = DrawStream::with_stream(options.seed, design.audit_stream());
        let mut scratch = Scratch::new(m_all);
        let mut buf = vec![f64::NAN; m_all];
        let mut dropped_buf = vec![0u32; m_all];
        let mut draw_scratch = DrawScratch::default();
        let mut draw = AuditDraw::default();
        let mut part = EstimatePart {
            design: design_name(design),
            budget,
            draws: draws.clone(),
            scores: Vec::with_capacity(n),
            dropped: Vec::with_capacity(n),
            draw_mae: Vec::with_capacity(n),
            right_draws: 0,
            tied_draws: 0,
            unscored_draws: 0,
        };
        for i in draws {
            stream.seek_draw(i as u64);
            self.matrix
                .draw_into(design, budget, &mut stream, &mut draw_scratch, &mut draw)
                .map_err(design_error)?;
            self.matrix
                .score_into(&draw, &mut scratch, &mut buf, &mut dropped_buf);
            let scores: Vec<Option<f64>> = p
                .chosen
                .iter()
                .map(|&m| Some(buf[m]).filter(|v| v.is_finite()))
                .collect();
            let (mut sum, mut k) = (0.0, 0usize);
            for (s, r) in scores.iter().zip(&p.reference) {
                if let (Some(s), Some(r)) = (s, r.filter(|v| v.is_finite())) {
                    sum += (100.0 * (s - r)).abs();
                    k += 1;
                }
            }
            part.draw_mae.push((k > 0).then(|| sum / k as f64));
            part.scores.push(scores);
            part.dropped
                .push(p.chosen.iter().map(|&m| dropped_buf[m]).collect());
            if let Some((a, b)) = options.pair {
                let (x, y) = (buf[a], buf[b]);
                if !(x.is_finite() && y.is_finite()) {
                    part.unscored_draws += 1;
                } else {
                    match direction.key(x).partial_cmp(&direction.key(y)) {
                        Some(std::cmp::Ordering::Equal) | None => part.tied_draws += 1,
                        Some(o) if Some(o) == p.pair_ref => part.right_draws += 1,
                        Some(_) => {}
                    }
                }
            }
        }
        Ok(part)
    }

    /// Merges the parts of one estimate ([`Planner::estimate_range`]) into the [`Estimate`]: the
    /// parts' draws are put back in draw order (concatenated as given) and summarised once, so the
    /// result equals [`Planner::estimate`] bit for bit whatever the split.
    ///
    /// # Errors
    /// Those of [`Planner::estimate`], and [`PlanError::PartsDoNotCover`] when the parts are not of
    /// this design and budget or their ranges do not follow each other from 0 to `options.draws`.
    pub fn merge(
        &self,
        design: Design,
        budget: usize,
        options: &EstimateOptions,
        parts: &[EstimatePart],
    ) -> Result<Estimate, PlanError> {
        let p = self.prepare(design, budget, options)?;
        let mut next = 0usize;
        for part in parts {
            if part.design != design_name(design)
                || part.budget != budget
                || part.draws.start != next
                || part.scores.len() != part.draws.len()
                || part.dropped.len() != part.draws.len()
                || part.draw_mae.len() != part.draws.len()
            {
                return Err(PlanError::PartsDoNotCover {
                    design: design_name(design),
                    budget,
                    draws: options.draws,
                    parts: describe_parts(parts),
                });
            }
            next = part.draws.end;
        }
        if next != options.draws {
            return Err(PlanError::PartsDoNotCover {
                design: design_name(design),
                budget,
                draws: options.draws,
                parts: describe_parts(parts),
            });
        }
        let main: Vec<Vec<Option<f64>>> = parts.iter().flat_map(|q| q.scores.clone()).collect();
        let dropped: Vec<Vec<u32>> = parts.iter().flat_map(|q| q.dropped.clone()).collect();
        let draw_mae: Vec<f64> = parts
            .iter()
            .flat_map(|q| q.draw_mae.iter().flatten().copied())
            .collect();
        let right: usize = parts.iter().map(|q| q.right_draws).sum();
        let tied: usize = parts.iter().map(|q| q.tied_draws).sum();
        let unscored: usize = parts.iter().map(|q| q.unscored_draws).sum();
        let used = p.used;
        let pair_ref = p.pair_ref;
        let summary = summarize_draws_in(
            self.direction.direction,
            &p.names,
            &p.reference,
            &DesignDraws {
                main: &main,
                repeat: &[],
                dropped: &dropped,
                repeat_dropped: &[],
            },
            options.level,
        );
        let pair = options.pair.map(|(a, b)| {
            let p = pair_ref.map(|_| right as f64 / options.draws as f64);
            PairEstimate {
                a: self.models[a].clone(),
                b: self.models[b].clone(),
                reference_better: pair_ref.map(|o| {
                    if o == std::cmp::Ordering::Less {
                        "a"
                    } else {
                        "b"
                    }
                }),
                right_draws: right,
                tied_draws: tied,
                unscored_draws: unscored,
                draws: options.draws,
                probability: p,
                mc_se: p.map(|p| (p * (1.0 - p) / options.draws as f64).sqrt()),
            }
        });
        let k_all = self.matrix.reference_conditions().len();
        let (label, conditions) = match design {
            Design::Concentrated => (format!("Concentrated {used}"), Some(1)),
            Design::Srs => (format!("SRS {used}"), None),
            Design::Stratified => (format!("Stratified {used}"), Some(k_all)),
            Design::Balanced => (format!("Balanced {used}"), Some(k_all)),
            Design::Coverage(k) => (format!("Coverage K={k} {used}"), Some(k)),
        };
        let per_model = summary
            .per_model
            .iter()
            .map(|m| PlanModel {
                model: m.model.clone(),
                reference: m.reference,
                mae_pp: m.mae_pp,
                rmse_pp: m.rmse_pp,
                excluded_draws: m.excluded_draws,
                partial_drop_draws: m.partial_drop_draws,
                dropped_conditions: m.dropped_conditions,
            })
            .collect();
        Ok(Estimate {
            design: design_name(design),
            label,
            conditions,
            budget: used,
            requested_budget: budget,
            draws: options.draws,
            seed: options.seed,
            audit_stream: design.audit_stream(),
            mae_pp: summary.mae_pp,
            mae_pp_p95: percentile(&draw_mae, MAE_TARGET_PERCENTILE),
            rmse_pp: summary.rmse_pp,
            tau_b: summary.tau_b,
            inversion_rate: summary.inversion_rate,
            pair,
            per_model,
        })
    }

    /// The full plan of `options` (its `policy` and `weights` are those this planner was built with;
    /// they are only echoed). See [`plan_audit`]. Equal to [`Planner::plan_request`], one
    /// [`Planner::estimate`] per [`PlanRequest::jobs`] entry, then [`Planner::plan_report`].
    ///
    /// # Errors
    /// Those of [`plan_audit`] except the bundle's.
    pub fn plan(&self, options: &PlanOptions) -> Result<PlanReport, PlanError> {
        let request = self.plan_request(options)?;
        let estimates = request
            .jobs
            .iter()
            .map(|&(design, budget)| self.estimate(design, budget, &request.estimate_options))
            .collect::<Result<Vec<_>, _>>()?;
        self.plan_report(options, &request, estimates)
    }

    /// Checks `options` and lists the estimates a plan needs, without computing any: what the app
    /// hands, one estimate at a time, to its pool of Web Workers ([`Planner::estimate_range`] per
    /// worker, [`Planner::merge`] on the page), before [`Planner::plan_report`] assembles the report.
    ///
    /// # Errors
    /// Those of [`Planner::plan`].
    pub fn plan_request(&self, options: &PlanOptions) -> Result<PlanRequest, PlanError> {
        if options.draws == 0 {
            return Err(PlanError::ZeroDraws);
        }
        if !(options.level > 0.0 && options.level < 1.0) {
            return Err(PlanError::BadLevel(options.level));
        }
        if options.designs.is_empty() {
            return Err(PlanError::NoDesigns);
        }
        for &d in &options.designs {
            self.check_design(d)?;
        }
        if options.budgets.is_empty() {
            return Err(PlanError::NoBudgets);
        }
        let cells = self.matrix.cells();
        for &b in &options.budgets {
            if b == 0 {
                return Err(PlanError::ZeroBudget);
            }
            if b > cells {
                return Err(PlanError::BudgetAboveCells { budget: b, cells });
            }
        }
        let mut budgets = options.budgets.clone();
        budgets.sort_unstable();
        budgets.dedup();
        let models: Vec<usize> = match &options.models {
            None => (0..self.matrix.models()).collect(),
            Some(ids) => {
                let mut v = Vec::with_capacity(ids.len());
                for id in ids {
                    let m = self.model_index(id)?;
                    if v.contains(&m) {
                        return Err(PlanError::DuplicateModel(id.clone()));
                    }
                    v.push(m);
                }
                v
            }
        };
        if models.is_empty() {
            return Err(PlanError::NoModels);
        }
        let pair = match &options.pair {
            Some((a, b)) => Some((self.model_index(a)?, self.model_index(b)?)),
            None => None,
        };
        let t = options.targets;
        let check = |name, v: Option<f64>, lo: f64, hi: f64, why| match v {
            Some(x) if !(x.is_finite() && x >= lo && x <= hi) => Err(PlanError::BadTarget {
                name,
                value: x,
                why,
            }),
            _ => Ok(()),
        };
        check(
            "mae_pp",
            t.mae_pp,
            0.0,
            100.0,
            "a score MAE in percentage points, 0 to 100",
        )?;
        check(
            "inversion_pct",
            t.inversion_pct,
            0.0,
            100.0,
            "a percentage of pairs, 0 to 100",
        )?;
        check(
            "pair_pct",
            t.pair_pct,
            0.0,
            100.0,
            "a percentage of audits, 0 to 100",
        )?;
        if t.pair_pct.is_some() && pair.is_none() {
            return Err(PlanError::PairTargetWithoutPair);
        }

        let est_options = EstimateOptions {
            draws: options.draws,
            seed: options.seed,
            level: options.level,
            models: Some(models.clone()),
            pair,
        };
        let mut jobs = Vec::new();
        let mut per_design = Vec::with_capacity(options.designs.len());
        let mut skipped = Vec::with_capacity(options.designs.len());
        for &design in &options.designs {
            let mut used_budgets: Vec<usize> = Vec::new();
            let mut design_skipped = Vec::new();
            for &b in &budgets {
                match self.matrix.design_budget(design, b) {
                    Err(e) => design_skipped.push(SkippedBudget {
                        budget: b,
                        reason: skip_reason(design, &e),
                    }),
                    Ok(used) if used_budgets.contains(&used) => {}
                    Ok(used) => {
                        used_budgets.push(used);
                        jobs.push((design, b));
                    }
                }
            }
            per_design.push(used_budgets.len());
            skipped.push(design_skipped);
        }
        Ok(PlanRequest {
            estimate_options: est_options,
            budgets,
            models,
            jobs,
            per_design,
            skipped,
        })
    }

    /// The plan report of `options` from the estimates of `request`'s jobs, in job order (as
    /// [`Planner::estimate`] or [`Planner::merge`] return them).
    ///
    /// # Errors
    /// [`PlanError::EstimatesDoNotMatch`] when `estimates` are not one per job, of the job's design
    /// and budget, in order.
    pub fn plan_report(
        &self,
        options: &PlanOptions,
        request: &PlanRequest,
        estimates: Vec<Estimate>,
    ) -> Result<PlanReport, PlanError> {
        if estimates.len() != request.jobs.len()
            || request
                .jobs
                .iter()
                .zip(&estimates)
                .any(|(&(d, b), e)| e.design != design_name(d) || e.requested_budget != b)
        {
            return Err(PlanError::EstimatesDoNotMatch {
                jobs: request.jobs.len(),
                estimates: estimates.len(),
            });
        }
        let t = options.targets;
        let cells = self.matrix.cells();
        let budgets = request.budgets.clone();
        let models = &request.models;
        let mut estimates = estimates.into_iter();
        let mut designs = Vec::with_capacity(options.designs.len());
        for (i, &design) in options.designs.iter().enumerate() {
            let n = request.per_design.get(i).copied().unwrap_or(0);
            designs.push(DesignPlan {
                design: design_name(design),
                audit_stream: design.audit_stream(),
                estimates: estimates.by_ref().take(n).collect(),
                skipped: request.skipped.get(i).cloned().unwrap_or_default(),
            });
        }

        type Rule = Box<dyn Fn(&Estimate) -> bool>;
        let mut rules: Vec<(&'static str, String, Rule)> = Vec::new();
        if let Some(x) = t.mae_pp {
            rules.push((
                "mae_pp_p95",
                format!("score MAE ≤ {x} pp in 95 % of audits"),
                Box::new(move |e: &Estimate| e.mae_pp_p95.is_some_and(|v| v <= x)),
            ));
        }
        if let Some(y) = t.inversion_pct {
            rules.push((
                "inversion_pct",
                format!("mean inversion rate ≤ {y} % of model pairs"),
                Box::new(move |e: &Estimate| e.inversion_rate.mean.is_some_and(|r| 100.0 * r <= y)),
            ));
        }
        if let (Some(z), Some((a, b))) = (t.pair_pct, &options.pair) {
            rules.push((
                "pair_pct",
                format!("order of {a} and {b} right in ≥ {z} % of audits"),
                Box::new(move |e: &Estimate| {
                    e.pair
                        .as_ref()
                        .and_then(|p| p.probability)
                        .is_some_and(|p| 100.0 * p >= z)
                }),
            ));
        }
        let mut answers: Vec<TargetAnswer> = rules
            .iter()
            .map(|(key, description, rule)| TargetAnswer {
                target: key,
                description: description.clone(),
                per_design: designs.iter().map(|d| answer(d, rule.as_ref())).collect(),
            })
            .collect();
        if rules.len() > 1 {
            let all = |e: &Estimate| rules.iter().all(|(_, _, r)| r(e));
            answers.push(TargetAnswer {
                target: "all",
                description: rules
                    .iter()
                    .map(|(_, d, _)| d.as_str())
                    .collect::<Vec<_>>()
                    .join("; and "),
                per_design: designs.iter().map(|d| answer(d, &all)).collect(),
            });
        }

        Ok(PlanReport {
            bundle: self.bundle.clone(),
            note: FINITE_REFERENCE_NOTE,
            direction: self.direction,
            seed: options.seed,
            draws: options.draws,
            policy: options.policy,
            weights: options.weights.clone(),
            level: options.level,
            default_grid: budgets == DEFAULT_BUDGETS,
            budgets,
            reference: models.iter().map(|&m| self.matrix.reference()[m]).collect(),
            models: models.iter().map(|&m| self.models[m].clone()).collect(),
            pair: options.pair.clone(),
            targets: t,
            statements: self.matrix.statements(),
            reference_conditions: self.matrix.reference_conditions().len(),
            observable_cells: cells,
            designs,
            answers,
        })
    }
}

/// Why `design` cannot read a budget, in words naming the design (RQ2's own message says "a
/// concentrated audit" for every design that reads too many statements of one template).
fn skip_reason(design: Design, e: &Rq2Error) -> String {
    match e {
        Rq2Error::BudgetExceedsStatements { budget, statements } => format!(
            "{} would read {budget} statements of one template; the bundle has {statements}",
            design_name(design)
        ),
        Rq2Error::BudgetBelowConditions { budget, conditions } => format!(
            "{} reads at least one statement in each of {conditions} conditions; budget {budget} is \
             too small",
            design_name(design)
        ),
        other => other.to_string(),
    }
}

/// The smallest budget of `plan` from which `rule` holds at every larger budget evaluated.
fn answer(plan: &DesignPlan, rule: &dyn Fn(&Estimate) -> bool) -> DesignAnswer {
    let largest = plan.estimates.last().map(|e| e.budget);
    let mut smallest = None;
    for e in plan.estimates.iter().rev() {
        if rule(e) {
            smallest = Some(e.budget);
        } else {
            break;
        }
    }
    let answer = match (smallest, largest) {
        (Some(b), _) => format!("{b} responses per model"),
        (None, Some(l)) => format!("not reached up to the largest budget evaluated, {l}"),
        (None, None) => "no budget of the grid fits this design".to_string(),
    };
    DesignAnswer {
        design: plan.design.clone(),
        smallest_budget: smallest,
        largest_budget: largest,
        answer,
    }
}

/// Plans an audit of `audit` (module docs): per design, the predicted error at every budget of the
/// grid and the smallest budget meeting each target. Cost: one [`Planner::estimate`] per design and
/// distinct budget.
///
/// # Errors
/// [`PlanError::ZeroDraws`], [`PlanError::BadLevel`], [`PlanError::NoDesigns`],
/// [`PlanError::CoverageOutOfRange`], [`PlanError::NoBudgets`], [`PlanError::ZeroBudget`],
/// [`PlanError::BudgetAboveCells`], [`PlanError::UnknownModel`], [`PlanError::DuplicateModel`],
/// [`PlanError::NoModels`], [`PlanError::SamePairModel`], [`PlanError::BadTarget`],
/// [`PlanError::PairTargetWithoutPair`], and [`PlanError::Rq2`] for a bundle without an observable
/// matrix.
///
/// # Examples
/// Two models × four statements (one implicit condition and template): model `a` shows bias evidence
/// on `s1`, `s2` (reference 0.5), `b` on `s1` (0.25). A concentrated audit of `B` statements reads
/// `B` of the four without replacement. The draw MAE (mean of the two models' errors) is, by hand:
/// `B = 4`: 0 in every draw; `B = 3` (one statement left out): 20.8 pp when `s1` is left out (`a`
/// 16.7, `b` 25), else 12.5 pp, so its 95th percentile is 20.8; `B = 2`: 37.5 pp for `{s1, s2}` and
/// `{s3, s4}` (probability 1/3), else 12.5, 95th percentile 37.5; `B = 1`: 62.5 or 37.5. So the
/// smallest budget with a score MAE ≤ 25 pp in 95 % of audits is 3.
/// ```
/// use atlas_core::plan::{plan_audit, PlanOptions, Targets};
/// use atlas_core::Audit;
///
/// let audit = Audit::from_json(r#"{
///   "format": "audit-atlas-bundle", "version": 1,
///   "metadata": {
///     "id": "doc-plan", "title": "Doc example", "description": "agree = bias evidence",
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
/// let options = PlanOptions {
///     budgets: vec![1, 2, 3, 4],
///     targets: Targets { mae_pp: Some(25.0), ..Targets::default() },
///     ..PlanOptions::default()
/// };
/// let report = plan_audit(&audit, &options)?;
/// let concentrated = &report.answers[0].per_design[0];
/// assert_eq!(concentrated.design, "concentrated");
/// assert_eq!(concentrated.smallest_budget, Some(3));
/// assert_eq!(report.designs[0].estimates[3].mae_pp.mean, Some(0.0));
/// # Ok::<(), atlas_core::plan::PlanError>(())
/// ```
pub fn plan_audit(audit: &Audit, options: &PlanOptions) -> Result<PlanReport, PlanError> {
    let planner = Planner::new(audit, options.policy, options.weights.as_deref())?;
    planner.plan(options)
}
