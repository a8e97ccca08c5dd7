//! Across task paradigms: the RQ1 ranking analysis with the **procedures as conditions** (seed `000_…`
//! §5.2 "Task paradigms reorder models", C.2, Table 11; the procedures of Table 10).
//!
//! A task-paradigm bundle (`atlas paradigms plan` → `atlas pilot bundle`, `docs/paradigms.md`) has one
//! condition per procedure (CLEAR, BBQ ambiguous, BBQ disambiguated, StereoSet, CrowS style), the
//! propositions as statements, and per procedure two templates — the two A/B orders — of which each
//! proposition is planned under exactly one. [`across_procedures`] computes, per procedure:
//!
//! - each model's **score**: the mean over propositions of the proposition's unit value, a fraction
//!   (share of its valid Selections that chose the stereotyped candidate, under the chosen
//!   [`RepeatPolicy`]; Abstain is missing, §B.2). A proposition's unit value pools the procedure's
//!   templates: the mean of the unit values of the templates that have one (for a paradigm bundle,
//!   the one template its order names). Each proposition thus counts once; this differs from
//!   [`crate::rq1::condition_reversals`], whose condition score is the mean over templates of the
//!   mean over statements (Eq. 4's inner means) and would weight the two order halves equally;
//! - each model's **rank** among the models (average ranks, rank 1 = best in the bundle's score
//!   direction, [`crate::direction`]);
//!
//! and per unordered model pair (`a < b` alphabetically ignoring case, Table 11) the difference
//! `δ = 100 (key_a − key_b)` in percentage points under every procedure (the ranking key is the score
//! itself unless the bundle declares another direction; `δ < 0`: model a ranks better), with a
//! **paired statement-cluster bootstrap** 95 % percentile interval: propositions drawn with
//! replacement, the same draw for every model and procedure ([`DrawStream::with_stream`]`(seed,`
//! [`ACROSS_STREAM`]`)`, [`cluster_bootstrap`]), each score recomputed with the drawn multiplicities.
//! Same seed, same numbers.
//!
//! A pair **reverses** when some procedure has `δ < 0` and another `δ > 0`. With a **tie zone** of ε
//! pp (1 and 2 pp, Table 11's columns), a δ with `|δ| ≤ ε` is a tie, not an order: the pair reverses
//! within the zone only when some `δ < −ε` and some `δ > +ε`. (Comparisons allow [`TIE_TOLERANCE_PP`]
//! of floating-point slack: a δ within 1e-9 pp of a boundary counts as on it.) The reversal is
//! **interval-supported** when one procedure's interval lies wholly below 0 and another's wholly
//! above.
//!
//! With one model there are no pairs; the report says so in [`AcrossReport::note`].
//!
//! ```
//! use atlas_core::across::{across_procedures, AcrossOptions};
//! use atlas_core::Audit;
//! let text = std::fs::read_to_string(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/fixtures/paradigm-across/bundle.json"
//! ))
//! .unwrap();
//! let audit = Audit::from_json(&text).unwrap();
//! let r = across_procedures(&audit, AcrossOptions { draws: 200, ..AcrossOptions::default() }).unwrap();
//! assert_eq!(r.pairs.len(), 6);
//! assert_eq!((r.reversing, r.reversing_1pp, r.reversing_2pp), (3, 2, 1));
//! ```

use serde::{Deserialize, Serialize};

use crate::bundle::Audit;
use crate::direction::ScoreDirection;
use crate::resample::{cluster_bootstrap, percentile_interval, DrawStream};
use crate::rq1::{PairDelta, Rq1Error};
use crate::stats::{unit_counts, RepeatPolicy, UnitCounts};

/// Stream id of the paired statement-cluster bootstrap (RQ1 uses 1–3, re-weighting 5).
pub const ACROSS_STREAM: u64 = 6;

/// The `sweep` of a task-paradigm bundle's conditions (the procedures; `atlas_pilot::paradigm` writes
/// it): what marks a bundle as one whose conditions are task paradigms.
pub const PARADIGM_SWEEP: &str = "Task paradigm";

/// Whether `audit` is a task-paradigm bundle: at least two Selection conditions of the
/// [`PARADIGM_SWEEP`] sweep (the app shows the across-paradigm panel only for such bundles).
///
/// ```
/// # use atlas_core::Audit;
/// let tiny = Audit::from_json(include_str!("../../../tests/fixtures/tiny-bundle.json")).unwrap();
/// assert!(!atlas_core::across::is_paradigm_bundle(&tiny));
/// ```
pub fn is_paradigm_bundle(audit: &Audit) -> bool {
    audit
        .conditions
        .iter()
        .filter(|c| c.has_selection && c.sweep.as_deref() == Some(PARADIGM_SWEEP))
        .count()
        >= 2
}

/// The tie zones of Table 11, percentage points.
pub const TIE_ZONES_PP: [f64; 2] = [1.0, 2.0];

/// Floating-point slack of every δ comparison, percentage points (module docs).
pub const TIE_TOLERANCE_PP: f64 = 1e-9;

/// Settings of [`across_procedures`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AcrossOptions {
    /// Bootstrap replicates per interval (Table 11: 10,000).
    pub draws: usize,
    /// Seed of the bootstrap ([`ACROSS_STREAM`]).
    pub seed: u64,
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
}

impl Default for AcrossOptions {
    fn default() -> Self {
        AcrossOptions {
            draws: 10_000,
            seed: 20_260_716,
            policy: RepeatPolicy::AllResponses,
        }
    }
}

/// One procedure (condition) column: every model's score and rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcedureColumn {
    /// Condition level id (e.g. `BBQ-ambig`).
    pub procedure: String,
    /// Its label, when the bundle gives one.
    pub label: Option<String>,
    /// Per model (declaration order): the score, a fraction; `None` without a valid proposition.
    pub scores: Vec<Option<f64>>,
    /// Per model: propositions with a valid unit value (the score's denominator).
    pub propositions: Vec<usize>,
    /// Per model: average rank among the models with a score (1 = best in the bundle's direction).
    pub ranks: Vec<Option<f64>>,
}

/// One unordered model pair across the procedures (a Table 11 row, reversing or not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairAcross {
    /// Model id, before `model_b` alphabetically ignoring case.
    pub model_a: String,
    /// Model id.
    pub model_b: String,
    /// δ and its interval under each procedure where both models have a score.
    pub deltas: Vec<PairDelta>,
    /// The most negative δ (first such procedure), when some δ is negative.
    pub negative: Option<PairDelta>,
    /// The most positive δ (first such procedure), when some δ is positive.
    pub positive: Option<PairDelta>,
    /// Some δ < 0 and some δ > 0.
    pub reverses: bool,
    /// Some δ < −1 pp and some δ > +1 pp (1-pp tie zone).
    pub reverses_1pp: bool,
    /// Some δ < −2 pp and some δ > +2 pp (2-pp tie zone).
    pub reverses_2pp: bool,
    /// One procedure's interval lies wholly below 0 and another's wholly above.
    pub ci_supported: bool,
}

/// What [`across_procedures`] computes (the JSON of `atlas paradigms across --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossReport {
    /// Bundle id.
    pub bundle: String,
    /// The options used.
    pub options: AcrossOptions,
    /// The bundle's score direction (what ranks and δ read).
    pub direction: ScoreDirection,
    /// Model ids in declaration order.
    pub models: Vec<String>,
    /// One column per procedure with a Selection readout, in declaration order.
    pub procedures: Vec<ProcedureColumn>,
    /// Per model: max − min score across procedures, pp.
    pub score_range_pp: Vec<Option<f64>>,
    /// Per model: best and worst rank across procedures.
    pub rank_range: Vec<Option<(f64, f64)>>,
    /// Every unordered pair with a δ under at least two procedures, in (model_a, model_b) order.
    pub pairs: Vec<PairAcross>,
    /// Pairs that reverse (strictly) / beyond the 1-pp / beyond the 2-pp tie zone.
    pub reversing: usize,
    /// Pairs whose reversal survives the 1-pp tie zone.
    pub reversing_1pp: usize,
    /// Pairs whose reversal survives the 2-pp tie zone.
    pub reversing_2pp: usize,
    /// A plain sentence on what the pairs show (e.g. that one model gives no pairs).
    pub note: String,
}

/// Per-model scores and ranks per procedure, and the model pairs whose order reverses across
/// procedures with 1- and 2-pp tie zones and paired statement-cluster bootstrap intervals (module
/// docs; seed `000_…` §5.2, C.2, Table 11).
///
/// Cost: `O(draws · models · procedures · propositions)`; the bootstrap is skipped with one model.
///
/// # Errors
/// [`Rq1Error::NoSelectionCondition`] when no condition has a Selection readout.
pub fn across_procedures(audit: &Audit, options: AcrossOptions) -> Result<AcrossReport, Rq1Error> {
    let units = unit_counts(audit, options.policy);
    let procedures: Vec<usize> = audit
        .conditions
        .iter()
        .enumerate()
        .filter(|(_, c)| c.has_selection)
        .map(|(c, _)| c)
        .collect();
    if procedures.is_empty() {
        return Err(Rq1Error::NoSelectionCondition);
    }
    let models = units.models;
    let statements = units.statements;
    // z[m][k][s]: the proposition's unit value under procedure k, pooled over its templates.
    let z: Vec<Vec<Vec<Option<f64>>>> = (0..models)
        .map(|m| {
            procedures
                .iter()
                .map(|&c| {
                    (0..statements)
                        .map(|s| pooled_value(audit, &units, m, c, s))
                        .collect()
                })
                .collect()
        })
        .collect();
    let score = |m: usize, k: usize, weights: Option<&[u32]>| -> (Option<f64>, usize) {
        let (mut sum, mut total, mut n) = (0.0, 0.0, 0usize);
        for (s, v) in z[m][k].iter().enumerate() {
            let w = weights.map_or(1.0, |w| f64::from(w[s]));
            if let (Some(v), true) = (v, w > 0.0) {
                sum += w * v;
                total += w;
                n += 1;
            }
        }
        ((total > 0.0).then(|| sum / total), n)
    };
    let direction = audit.direction;
    let condition_ids = audit.condition_ids();
    let model_ids: Vec<String> = audit.model_ids().iter().map(|s| s.to_string()).collect();
    let columns: Vec<ProcedureColumn> = procedures
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let (scores, propositions): (Vec<Option<f64>>, Vec<usize>) =
                (0..models).map(|m| score(m, k, None)).unzip();
            let ranks = direction.direction.ranks(&scores);
            let label = audit
                .condition_facet
                .and_then(|f| audit.levels(f).get(c))
                .and_then(|l| l.attributes.get("label"))
                .and_then(|v| v.as_str())
                .map(str::to_string);
            ProcedureColumn {
                procedure: condition_ids
                    .get(c)
                    .map_or_else(String::new, |s| s.to_string()),
                label,
                scores,
                propositions,
                ranks,
            }
        })
        .collect();
    let range = |v: Vec<f64>| -> Option<(f64, f64)> {
        (!v.is_empty()).then(|| {
            (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        })
    };
    let score_range_pp = (0..models)
        .map(|m| {
            range(columns.iter().filter_map(|c| c.scores[m]).collect())
                .map(|(lo, hi)| 100.0 * (hi - lo))
        })
        .collect();
    let rank_range = (0..models)
        .map(|m| range(columns.iter().filter_map(|c| c.ranks[m]).collect()))
        .collect();

    let replicates: Vec<Vec<Vec<Option<f64>>>> = if models < 2 || statements == 0 {
        Vec::new()
    } else {
        let mut stream = DrawStream::with_stream(options.seed, ACROSS_STREAM);
        cluster_bootstrap(statements as u32, options.draws, &mut stream, |drawn| {
            let mut weights = vec![0u32; statements];
            for &s in drawn {
                weights[s as usize] += 1;
            }
            (0..models)
                .map(|m| {
                    (0..procedures.len())
                        .map(|k| score(m, k, Some(&weights)).0)
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
    };

    let key = |s: f64| direction.direction.key(s);
    let mut order: Vec<usize> = (0..models).collect();
    order.sort_by(|&a, &b| {
        model_ids[a]
            .to_lowercase()
            .cmp(&model_ids[b].to_lowercase())
            .then(model_ids[a].cmp(&model_ids[b]))
    });
    let mut pairs = Vec::new();
    for (i, &a) in order.iter().enumerate() {
        for &b in &order[i + 1..] {
            let deltas: Vec<PairDelta> = procedures
                .iter()
                .enumerate()
                .filter_map(|(k, &c)| {
                    let (sa, sb) = (columns[k].scores[a]?, columns[k].scores[b]?);
                    let draws: Vec<f64> = replicates
                        .iter()
                        .filter_map(|r| Some(100.0 * (key(r[a][k]?) - key(r[b][k]?))))
                        .collect();
                    Some(PairDelta {
                        condition: c,
                        condition_id: columns[k].procedure.clone(),
                        delta_pp: 100.0 * (key(sa) - key(sb)),
                        ci_pp: percentile_interval(&draws, 0.95),
                    })
                })
                .collect();
            if deltas.len() < 2 {
                continue;
            }
            let beyond = |zone: f64| {
                deltas
                    .iter()
                    .any(|d| d.delta_pp < -(zone + TIE_TOLERANCE_PP))
                    && deltas.iter().any(|d| d.delta_pp > zone + TIE_TOLERANCE_PP)
            };
            let mut negative: Option<&PairDelta> = None;
            let mut positive: Option<&PairDelta> = None;
            for d in &deltas {
                if d.delta_pp < -TIE_TOLERANCE_PP
                    && negative.is_none_or(|n| d.delta_pp < n.delta_pp)
                {
                    negative = Some(d);
                }
                if d.delta_pp > TIE_TOLERANCE_PP && positive.is_none_or(|p| d.delta_pp > p.delta_pp)
                {
                    positive = Some(d);
                }
            }
            let below = deltas
                .iter()
                .any(|d| d.ci_pp.is_some_and(|(_, hi)| hi < 0.0));
            let above = deltas
                .iter()
                .any(|d| d.ci_pp.is_some_and(|(lo, _)| lo > 0.0));
            pairs.push(PairAcross {
                model_a: model_ids[a].clone(),
                model_b: model_ids[b].clone(),
                negative: negative.cloned(),
                positive: positive.cloned(),
                reverses: beyond(0.0),
                reverses_1pp: beyond(TIE_ZONES_PP[0]),
                reverses_2pp: beyond(TIE_ZONES_PP[1]),
                ci_supported: below && above,
                deltas,
            });
        }
    }
    let count = |f: fn(&PairAcross) -> bool| pairs.iter().filter(|p| f(p)).count();
    let (reversing, reversing_1pp, reversing_2pp) = (
        count(|p| p.reverses),
        count(|p| p.reverses_1pp),
        count(|p| p.reverses_2pp),
    );
    let note = if models < 2 {
        format!(
            "The bundle has {models} model(s): there are no model pairs, so no order can reverse across procedures. The scores and ranks per procedure are all it shows."
        )
    } else if procedures.len() < 2 {
        "The bundle has one procedure: nothing can reverse across procedures.".to_string()
    } else {
        format!(
            "{reversing} of {} model pair(s) reverse their order across the {} procedures at least once; {reversing_1pp} beyond a 1-pp tie zone, {reversing_2pp} beyond a 2-pp tie zone.",
            pairs.len(),
            procedures.len()
        )
    };
    Ok(AcrossReport {
        bundle: audit.metadata().id.clone(),
        options,
        direction,
        models: model_ids,
        procedures: columns,
        score_range_pp,
        rank_range,
        pairs,
        reversing,
        reversing_1pp,
        reversing_2pp,
        note,
    })
}

/// The unit value of proposition `s` under condition `c`, pooled over the condition's templates: the
/// mean of the template unit values present (module docs).
fn pooled_value(audit: &Audit, units: &UnitCounts, m: usize, c: usize, s: usize) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for t in 0..units.templates {
        let in_c = audit
            .templates
            .get(t)
            .is_none_or(|ti| ti.condition.is_none_or(|tc| tc == c));
        if !in_c {
            continue;
        }
        if let Some(v) = units.value(m, c, t, s) {
            sum += v;
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}
