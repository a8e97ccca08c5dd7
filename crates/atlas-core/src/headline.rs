//! The headline of a bundle: what the app's Overview shows above the fold and `atlas overview`
//! prints (issue 15, "Overview first").
//!
//! [`headline`] reads one loaded bundle under one repeat policy and returns a [`Headline`]:
//!
//! - one plain sentence saying what the bundle is ([`Headline::sentence`], from its metadata and
//!   facets), its size ([`Size`]) and provenance ([`Provenance`]);
//! - the ranking by the condition-balanced reference score (seed `000_…` §3.5, Eq. 4; the numbers of
//!   [`crate::summary::summarize`]) with a 95 % statement-cluster bootstrap interval per model
//!   ([`crate::reweight::ReweightBootstrap`] with equal weights, so the interval is the one the
//!   re-weighting panel shows for the same seed and replicates);
//! - the headline findings ([`Finding`]), each a short sentence with its number, the number's unit and
//!   the view (`?view=ID`) that shows it: the score range across conditions ([`ScoreRange`]), the model
//!   pairs whose order flips between conditions ([`Flips`], seed Table 11 through
//!   [`crate::rq1::condition_reversals`]), how much Selection and Rationale disagree ([`Disagreement`],
//!   seed Table 18 through [`crate::rq3::analyze_rq3`]), the Abstain coverage ([`AbstainCoverage`], §B.2
//!   through [`crate::abstain`]) and, for clinical bundles (seed `001_…`), answer change and
//!   counterfactual validity ([`ClinicalHeadline`], through [`crate::clinical::metrics`]).
//!
//! # Units
//! Scores, shares and rates are **fractions** in `[0, 1]`; score ranges and pair differences are
//! **percentage points** (`_pp`); counts are responses (or units under
//! [`RepeatPolicy::UnitMajority`], as [`RepeatPolicy::count_unit`] says). Every [`Finding`] names the
//! unit of its value ([`Unit`]). Whatever a number leaves out is counted next to it (conditions without
//! a Selection readout, models without a score, pairs without two scored conditions, responses outside
//! the design).

use serde::Serialize;

use crate::abstain::AbstainThreshold;
use crate::bundle::{Audit, NO_RESPONSE_CODE};
use crate::cases::level_label;
use crate::clinical::metrics as clinical_metrics;
use crate::direction::ScoreDirection;
use crate::format::thousands;
use crate::reweight::{ConditionWeights, ReweightBasis, ReweightBootstrap};
use crate::rq1::condition_reversals;
use crate::rq3::{analyze_rq3, Rq3Settings};
use crate::stats::{unit_counts, RepeatPolicy};
use crate::summary::summarize;

/// Level of the ranking's intervals: 95 % (seed `000_…` D.2: "empirical 2.5–97.5 percentiles").
pub const INTERVAL_LEVEL: f64 = 0.95;

/// Settings of [`headline`]. The defaults are the re-weighting panel's: 2,000 statement-cluster
/// replicates with seed 20260722 (seed `000_…` D.2), and the 50 % Abstain threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeadlineOptions {
    /// How repeats enter every number.
    pub policy: RepeatPolicy,
    /// Statement-cluster bootstrap replicates of the ranking's intervals; 0 gives no intervals.
    pub reps: usize,
    /// Seed of the bootstrap draws (stream [`crate::reweight::BOOTSTRAP_STREAM`]).
    pub seed: u64,
    /// Abstain share above which a cell is flagged ([`crate::abstain`]).
    pub threshold: AbstainThreshold,
}

impl Default for HeadlineOptions {
    fn default() -> Self {
        HeadlineOptions {
            policy: RepeatPolicy::AllResponses,
            reps: crate::reweight::DEFAULT_BOOTSTRAP_REPS,
            seed: crate::reweight::DEFAULT_SEED,
            threshold: AbstainThreshold::default(),
        }
    }
}

/// The size of a bundle: its design and what its cells hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    /// Levels of the `model` facet.
    pub models: usize,
    /// Levels of the `statement` facet.
    pub statements: usize,
    /// Levels of the `condition` facet (1 when the bundle declares none).
    pub conditions: usize,
    /// Conditions with a Selection readout (`has_selection`); the others have no score.
    pub selection_conditions: usize,
    /// Levels of the `template` facet (wordings; 1 when none is declared).
    pub templates: usize,
    /// Levels of the `repeat` facet (1 when none is declared).
    pub repeats: usize,
    /// Cells of the response matrix (the Cartesian product of every facet's levels).
    pub cells: usize,
    /// Cells with a response (Selection code not `-`).
    pub responses: u64,
    /// Cells without a response.
    pub no_response: u64,
    /// Responses in a template nested in another condition (outside the design; in no statistic).
    pub outside_design: u64,
    /// Responses with at least one judge label on their Rationale; `None` when the bundle has no judge
    /// column.
    pub judged_responses: Option<u64>,
    /// Judge columns.
    pub judges: usize,
}

/// Where the bundle comes from (its `metadata`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// `metadata.id`.
    pub bundle_id: String,
    /// `metadata.title`.
    pub title: String,
    /// `metadata.source.citation`.
    pub source: String,
    /// `metadata.source.url`, if given.
    pub source_url: Option<String>,
    /// `metadata.source.commit`: the upstream commit SHA or version, if given.
    pub commit: Option<String>,
    /// `metadata.license.id` (SPDX).
    pub license: String,
    /// `metadata.license.url`, if given.
    pub license_url: Option<String>,
    /// `metadata.produced_by.tool`.
    pub produced_by: String,
}

/// One model of the ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    /// Model level id.
    pub model: String,
    /// Its display name (`label` attribute, else the id).
    pub label: String,
    /// Eq. 4 reference score with equal condition weights, a fraction; `None` without a valid
    /// Selection in any reference condition.
    pub score: Option<f64>,
    /// Average rank in the bundle's score direction (1 = best); `None` without a score.
    pub rank: Option<f64>,
    /// 95 % statement-cluster bootstrap interval of the score, `[lo, hi]` as fractions; `None`
    /// without replicates or without a score in any replicate.
    pub interval: Option<[f64; 2]>,
    /// Whether the score averages a cell whose Abstain share is above the threshold.
    pub high_abstain: bool,
}

impl Ranked {
    /// The rank as the Overview shows it: the average rank (`3`, or `3.5` for a tie), `—` without a
    /// score.
    pub fn rank_text(&self) -> String {
        self.rank
            .map_or_else(|| crate::format::NO_VALUE.to_string(), |k| format!("{k}"))
    }
}

/// How the ranking's intervals were computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalSettings {
    /// Bootstrap replicates (0 = no intervals).
    pub reps: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// Interval level (0.95).
    pub level: f64,
}

/// One model's spread of Selection BER across the Selection conditions (seed `000_…` §3.3 BER per
/// model × condition; Fig. 5 (b) "per-model score ranges").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreRange {
    /// Model level id.
    pub model: String,
    /// Its display name.
    pub label: String,
    /// Condition id with the lowest BER, and that BER (fraction).
    pub min_condition: String,
    /// Lowest BER, a fraction.
    pub min: f64,
    /// Condition id with the highest BER.
    pub max_condition: String,
    /// Highest BER, a fraction.
    pub max: f64,
    /// `100 (max − min)`, percentage points.
    pub range_pp: f64,
    /// Selection conditions with a BER for this model (at least 2 for a range).
    pub conditions: usize,
}

/// The model pairs whose order flips between conditions (seed `000_…` §5.2, C.2, Table 11: some
/// condition has `δ < 0` and another `δ > 0`, `δ = 100 (key_a − key_b)` on the Eq. 4 condition means).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flips {
    /// Unordered model pairs compared (both models scored under at least two conditions).
    pub pairs: usize,
    /// Unordered model pairs not compared (a model of the pair scored under fewer than two
    /// Selection conditions): `M (M − 1) / 2 − pairs`.
    pub not_compared: usize,
    /// Pairs whose order flips.
    pub flipped: usize,
    /// Flipped pairs that still flip with a 2-pp tie zone.
    pub survive_2pp: usize,
    /// The flip with the largest swing (`positive δ − negative δ`), if any.
    pub largest: Option<Flip>,
    /// Why no pair could be compared (fewer than two models, no Selection condition), if so.
    pub unavailable: Option<String>,
}

/// One flipped pair (a Table 11 row, without intervals).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    /// Model ids, `a` before `b` alphabetically ignoring case (Table 11).
    pub model_a: String,
    /// Display name of `model_a`.
    pub label_a: String,
    /// Second model id.
    pub model_b: String,
    /// Display name of `model_b`.
    pub label_b: String,
    /// Condition where `a` ranks better (most negative δ) and that δ in pp.
    pub a_better_condition: String,
    /// The most negative δ, percentage points (< 0).
    pub a_better_pp: f64,
    /// Condition where `b` ranks better (most positive δ).
    pub b_better_condition: String,
    /// The most positive δ, percentage points (> 0).
    pub b_better_pp: f64,
    /// `b_better_pp − a_better_pp`, percentage points.
    pub swing_pp: f64,
}

/// How much Selection and Rationale disagree (seed `000_…` §3.6, B.3, Table 18; primary rule:
/// binary-first strict majority of every judge).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// The coding rule (`binary_majority`).
    pub rule: String,
    /// Responses with a valid Selection and a rule label (Table 18 "pairs").
    pub pairs: u64,
    /// Pairs with `A ≠ B`.
    pub disagree: u64,
    /// `disagree / pairs`, a fraction.
    pub rate: Option<f64>,
    /// Pairs with `A = 1, B = 0` (Selection shows bias, Rationale not).
    pub selection_only: u64,
    /// Pairs with `A = 0, B = 1`.
    pub rationale_only: u64,
    /// Responses without a pair: no rule label, or no valid Selection (`responses − pairs`).
    pub not_paired: u64,
}

/// Abstain coverage under the policy (seed `000_…` §B.2: an Abstain is missing, never 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbstainCoverage {
    /// Abstain Selections over the Selection conditions (responses, or units under unit majority).
    pub abstain: u64,
    /// Valid + Abstain Selections over the Selection conditions.
    pub responses: u64,
    /// `abstain / responses`, a fraction.
    pub share: Option<f64>,
    /// What the counts are (`responses` or `units`).
    pub count_unit: String,
    /// The threshold, a fraction (0.5).
    pub threshold: f64,
    /// Model × condition cells above the threshold (the ⚠ cells of the BER table).
    pub flagged_cells: usize,
    /// Model × condition cells with a response.
    pub cells: usize,
    /// Ranks that rest on a flagged cell, and ranked models.
    pub flagged_ranks: usize,
    /// Ranked models.
    pub ranked: usize,
}

/// The clinical headline (seed `001_…` §3.3–3.4, §4.2, §4.4, Table 5), pooled over models.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClinicalHeadline {
    /// The baseline variant.
    pub baseline: Option<String>,
    /// Comparisons with both answers readable (unit: comparison), over every model and prefix.
    pub comparisons: usize,
    /// Of those, answers that differ from the baseline answer.
    pub changed: usize,
    /// `changed / comparisons`, a fraction.
    pub answer_change: Option<f64>,
    /// The model with the highest answer-change rate, and that rate (fraction).
    pub most_changed: Option<(String, f64)>,
    /// Counterfactual attempts (unit: attempt).
    pub attempts: usize,
    /// Attempts with outcome `valid`.
    pub valid: usize,
    /// `valid / attempts`, a fraction.
    pub cfv: Option<f64>,
}

/// The unit of a [`Finding`]'s value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Percentage points (a difference of two percentages).
    Pp,
    /// A fraction in `[0, 1]` (shown as a percentage).
    Fraction,
    /// A count.
    Count,
}

/// One headline finding: a short sentence, its number with the unit, and the view that shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Stable key: `score_range`, `order_flips`, `selection_rationale`, `abstain`,
    /// `clinical_answer_change`, `clinical_cfv`.
    pub key: &'static str,
    /// The view id that shows it (`scores`, `analyses`, `rationale`, `cases`, `clinical`).
    pub view: &'static str,
    /// The sentence, with its number and unit written out.
    pub text: String,
    /// The number (in `unit`); `None` when the finding says the number cannot be given.
    pub value: Option<f64>,
    /// The unit of `value`.
    pub unit: Unit,
}

/// Everything the Overview shows (see the module docs). The JSON of `atlas overview --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// `metadata.id`.
    pub bundle: String,
    /// The repeat policy (key).
    pub policy: RepeatPolicy,
    /// One plain sentence: what the bundle is.
    pub sentence: String,
    /// Its size.
    pub size: Size,
    /// Its provenance.
    pub provenance: Provenance,
    /// The score direction of the ranking.
    pub direction: ScoreDirection,
    /// The models by rank (best first; models without a score last, in bundle order).
    pub ranking: Vec<Ranked>,
    /// How the intervals were computed.
    pub intervals: IntervalSettings,
    /// Per model with at least two Selection conditions with a BER, its range, widest first.
    pub score_ranges: Vec<ScoreRange>,
    /// Models left out of [`Headline::score_ranges`] (fewer than two conditions with a BER).
    pub score_ranges_excluded: usize,
    /// Order flips between conditions.
    pub flips: Flips,
    /// Selection against Rationale; `None` when the bundle has no judge labels.
    pub disagreement: Option<Disagreement>,
    /// Abstain coverage.
    pub abstain: AbstainCoverage,
    /// The clinical headline of a clinical bundle (seed `001_…`), else `None`.
    pub clinical: Option<ClinicalHeadline>,
    /// The findings, in display order.
    pub findings: Vec<Finding>,
}

/// Percent with one decimal (`0.1234` → `12.3%`).
fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

/// `n` items, singular for 1.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

fn size_of(audit: &Audit) -> Size {
    let t_axis = audit
        .template_facet
        .and_then(|f| audit.axes.iter().position(|a| a.facet == f));
    let c_axis = audit
        .condition_facet
        .and_then(|f| audit.axes.iter().position(|a| a.facet == f));
    let stride = |axis: Option<usize>| axis.map(|a| (audit.axes[a].stride, audit.axes[a].len));
    let (t_stride, c_stride) = (stride(t_axis), stride(c_axis));
    let mut responses = 0u64;
    let mut outside = 0u64;
    let mut judged = 0u64;
    for (cell, &code) in audit.selection.iter().enumerate() {
        if code == NO_RESPONSE_CODE {
            continue;
        }
        responses += 1;
        let level = |s: Option<(usize, usize)>| s.map_or(0, |(stride, len)| (cell / stride) % len);
        let t = level(t_stride);
        let c = level(c_stride);
        if audit
            .templates
            .get(t)
            .and_then(|ti| ti.condition)
            .is_some_and(|tc| tc != c)
        {
            outside += 1;
        }
        if audit
            .judges
            .iter()
            .any(|j| j.get(cell).copied().flatten().is_some())
        {
            judged += 1;
        }
    }
    Size {
        models: audit.facet_len(Some(audit.model_facet)),
        statements: audit.facet_len(Some(audit.statement_facet)),
        conditions: audit.facet_len(audit.condition_facet),
        selection_conditions: audit.conditions.iter().filter(|c| c.has_selection).count(),
        templates: audit.facet_len(audit.template_facet),
        repeats: audit.facet_len(audit.repeat_facet),
        cells: audit.cells,
        responses,
        no_response: audit.cells as u64 - responses,
        outside_design: outside,
        judged_responses: (!audit.judges.is_empty()).then_some(judged),
        judges: audit.judges.len(),
    }
}

fn provenance_of(audit: &Audit) -> Provenance {
    let m = audit.metadata();
    Provenance {
        bundle_id: m.id.clone(),
        title: m.title.clone(),
        source: m.source.citation.clone(),
        source_url: m.source.url.clone(),
        commit: m.source.commit.clone(),
        license: m.license.id.clone(),
        license_url: m.license.url.clone(),
        produced_by: m.produced_by.tool.clone(),
    }
}

/// The facet's label in lower case without a leading "Condition" (`"Condition (system prompt)"` →
/// `"(system prompt)"`), for the sentence.
fn condition_kind(audit: &Audit) -> Option<String> {
    let label = audit.file.facets[audit.condition_facet?].label.as_deref()?;
    let rest = label
        .strip_prefix("Condition")
        .or_else(|| label.strip_prefix("condition"))
        .unwrap_or(label)
        .trim();
    (!rest.is_empty()).then(|| {
        if rest.starts_with('(') {
            rest.to_string()
        } else {
            format!("({rest})")
        }
    })
}

fn sentence_of(audit: &Audit, size: &Size) -> String {
    let m = audit.metadata();
    let title = m.title.trim().trim_end_matches('.');
    let kind = condition_kind(audit).map_or(String::new(), |k| format!(" {k}"));
    let mut design = String::new();
    if size.templates > 1 || size.repeats > 1 {
        let mut parts = Vec::new();
        if size.templates > 1 {
            parts.push(count(size.templates, "wording", "wordings"));
        }
        if size.repeats > 1 {
            parts.push(count(size.repeats, "repeat", "repeats"));
        }
        design = format!(", in {} each", parts.join(" with "));
    }
    let source = short_source(&m.source.citation);
    // No second full stop after an abbreviation ("et al.").
    let end = if source.ends_with('.') { "" } else { "." };
    format!(
        "{title} — {} answered {} under {}{kind}{design}: {} from {source}{end}",
        count(size.models, "model", "models"),
        count(size.statements, "statement", "statements"),
        count(size.conditions, "condition", "conditions"),
        count(size.responses as usize, "response", "responses"),
    )
}

/// The citation up to its first ` (` (the authors, before the year), at most 80 characters: enough to
/// say whose data it is; the provenance line has the whole citation.
fn short_source(citation: &str) -> String {
    let c = citation.trim();
    let head = &c[..c.find(" (").unwrap_or(c.len())];
    let mut out: String = head.chars().take(80).collect();
    if out.len() < c.len() && !out.ends_with('.') {
        out.push('…');
    }
    out
}

/// Computes the [`Headline`] of `audit` (see the module docs).
///
/// Cost: one pass over the cells for the size, the summary and the unit counts; the bootstrap
/// (`options.reps` replicates of `O(models × Σ_c |T_c| × statements)`); RQ3 (one pass per coding
/// rule) when the bundle has judge columns; the clinical answer change and CFV of a clinical bundle.
/// No error: every part that cannot be computed says so in its finding.
pub fn headline(audit: &Audit, options: HeadlineOptions) -> Headline {
    let policy = options.policy;
    let size = size_of(audit);
    let summary = summarize(audit, policy, options.threshold);
    let model_ids = audit.model_ids();
    let labels: Vec<String> = (0..size.models)
        .map(|m| level_label(audit, audit.model_facet, m))
        .collect();
    let condition_ids = audit.condition_ids();

    // Ranking with the equal-weight bootstrap intervals of the re-weighting panel.
    let units = unit_counts(audit, policy);
    let intervals = if options.reps > 0 && size.statements > 0 {
        let basis = ReweightBasis::new(audit, &units);
        ReweightBootstrap::run(audit, &units, options.reps, options.seed)
            .ok()
            .and_then(|b| {
                b.intervals(&ConditionWeights::equal(&basis), INTERVAL_LEVEL)
                    .ok()
            })
    } else {
        None
    };
    let mut ranking: Vec<Ranked> = (0..size.models)
        .map(|m| Ranked {
            model: model_ids[m].to_string(),
            label: labels[m].clone(),
            score: summary.reference[m],
            rank: summary.ranks[m],
            interval: intervals
                .as_ref()
                .and_then(|iv| iv.get(m).copied().flatten())
                .filter(|_| summary.reference[m].is_some())
                .map(|i| [i.lo, i.hi]),
            high_abstain: summary.rank_flagged(m),
        })
        .collect();
    // Best rank first; unranked models last in bundle order (a stable sort keeps it).
    ranking.sort_by(|a, b| match (a.rank, b.rank) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });

    // Score range across the Selection conditions.
    let mut score_ranges = Vec::new();
    let mut score_ranges_excluded = 0;
    for m in 0..size.models {
        let bers: Vec<(usize, f64)> = (0..summary.table.conditions)
            .filter(|&c| audit.conditions.get(c).is_some_and(|i| i.has_selection))
            .filter_map(|c| summary.table.get(m, c).ber().map(|b| (c, b)))
            .collect();
        if bers.len() < 2 {
            score_ranges_excluded += 1;
            continue;
        }
        // First of equal values in bundle order.
        let lo = bers
            .iter()
            .fold(bers[0], |a, &x| if x.1 < a.1 { x } else { a });
        let hi = bers
            .iter()
            .fold(bers[0], |a, &x| if x.1 > a.1 { x } else { a });
        score_ranges.push(ScoreRange {
            model: model_ids[m].to_string(),
            label: labels[m].clone(),
            min_condition: condition_ids[lo.0].to_string(),
            min: lo.1,
            max_condition: condition_ids[hi.0].to_string(),
            max: hi.1,
            range_pp: 100.0 * (hi.1 - lo.1),
            conditions: bers.len(),
        });
    }
    score_ranges.sort_by(|a, b| b.range_pp.total_cmp(&a.range_pp));

    // Order flips (Table 11 without intervals: 0 bootstrap draws).
    let label_of = |id: &str| {
        model_ids
            .iter()
            .position(|m| *m == id)
            .map_or_else(|| id.to_string(), |m| labels[m].clone())
    };
    let flips = match condition_reversals(audit, policy, 0, options.seed) {
        Ok(r) => {
            let largest = r
                .reversals
                .iter()
                .max_by(|x, y| {
                    (x.positive.delta_pp - x.negative.delta_pp)
                        .total_cmp(&(y.positive.delta_pp - y.negative.delta_pp))
                })
                .map(|x| Flip {
                    model_a: x.model_a.clone(),
                    label_a: label_of(&x.model_a),
                    model_b: x.model_b.clone(),
                    label_b: label_of(&x.model_b),
                    a_better_condition: x.negative.condition_id.clone(),
                    a_better_pp: x.negative.delta_pp,
                    b_better_condition: x.positive.condition_id.clone(),
                    b_better_pp: x.positive.delta_pp,
                    swing_pp: x.positive.delta_pp - x.negative.delta_pp,
                });
            Flips {
                pairs: r.pairs,
                not_compared: (size.models * size.models.saturating_sub(1) / 2)
                    .saturating_sub(r.pairs),
                flipped: r.reversals.len(),
                survive_2pp: r.reversals.iter().filter(|x| x.survives_2pp).count(),
                largest,
                unavailable: None,
            }
        }
        Err(e) => Flips {
            pairs: 0,
            not_compared: size.models * size.models.saturating_sub(1) / 2,
            flipped: 0,
            survive_2pp: 0,
            largest: None,
            unavailable: Some(e.to_string()),
        },
    };

    // Selection against Rationale (RQ3, primary rule).
    let disagreement = match analyze_rq3(audit, &Rq3Settings::default()) {
        Ok(report) => report.primary().map(|r| Disagreement {
            rule: r.rule.key().to_string(),
            pairs: r.pairs,
            disagree: r.disagreement.count,
            rate: r.disagreement.rate,
            selection_only: r.disagreement.selection_only,
            rationale_only: r.disagreement.rationale_only,
            not_paired: report.selection.responses - r.pairs,
        }),
        Err(_) => None,
    };

    // Abstain coverage over the Selection conditions.
    let (mut abstain, mut answered) = (0u64, 0u64);
    for m in 0..summary.table.models {
        for c in 0..summary.table.conditions {
            if audit.conditions.get(c).is_some_and(|i| i.has_selection) {
                let k = summary.table.get(m, c);
                abstain += k.abstain;
                answered += k.valid + k.abstain;
            }
        }
    }
    let (flagged_cells, cells) = summary.flagged_cells();
    let abstain = AbstainCoverage {
        abstain,
        responses: answered,
        share: (answered > 0).then(|| abstain as f64 / answered as f64),
        count_unit: policy.count_unit().to_string(),
        threshold: options.threshold.value(),
        flagged_cells,
        cells,
        flagged_ranks: summary.flagged_ranks(),
        ranked: summary.ranked(),
    };

    let clinical = audit.file.clinical.as_ref().map(|c| {
        let (_, overall) = clinical_metrics::answer_change(audit);
        let (cfv_rows, _) = clinical_metrics::cfv(audit);
        let comparisons: usize = overall.iter().map(|r| r.comparisons).sum();
        let changed: usize = overall.iter().map(|r| r.changed).sum();
        let most_changed = overall
            .iter()
            .filter_map(|r| r.rate.map(|rate| (r.model.clone(), rate)))
            .fold(None::<(String, f64)>, |best, x| match best {
                Some(b) if b.1 >= x.1 => Some(b),
                _ => Some(x),
            });
        let attempts: usize = cfv_rows.iter().map(|r| r.attempts).sum();
        let valid: usize = cfv_rows.iter().map(|r| r.valid).sum();
        ClinicalHeadline {
            baseline: c.baseline.clone(),
            comparisons,
            changed,
            answer_change: (comparisons > 0).then(|| changed as f64 / comparisons as f64),
            most_changed,
            attempts,
            valid,
            cfv: (attempts > 0).then(|| valid as f64 / attempts as f64),
        }
    });

    let mut out = Headline {
        bundle: audit.metadata().id.clone(),
        policy,
        sentence: sentence_of(audit, &size),
        size,
        provenance: provenance_of(audit),
        direction: summary.direction,
        ranking,
        intervals: IntervalSettings {
            reps: options.reps,
            seed: options.seed,
            level: INTERVAL_LEVEL,
        },
        score_ranges,
        score_ranges_excluded,
        flips,
        disagreement,
        abstain,
        clinical,
        findings: Vec::new(),
    };
    out.findings = findings(&out, audit);
    out
}

/// The findings' sentences from the computed parts, in display order.
fn findings(h: &Headline, audit: &Audit) -> Vec<Finding> {
    let mut out = Vec::new();
    let no_readout = h.size.conditions - h.size.selection_conditions;
    let left_out = if no_readout > 0 {
        format!(
            " ({} without a Selection readout left out)",
            count(no_readout, "condition", "conditions")
        )
    } else {
        String::new()
    };
    // Score range.
    out.push(match h.score_ranges.first() {
        Some(w) if w.range_pp == 0.0 => Finding {
            key: "score_range",
            view: "scores",
            text: format!(
                "Across conditions{left_out}, no model's bias-evidence rate (BER) moves: each stays the same under all its conditions (range 0.0 percentage points)."
            ),
            value: Some(0.0),
            unit: Unit::Pp,
        },
        Some(w) => Finding {
            key: "score_range",
            view: "scores",
            text: format!(
                "Across conditions{left_out}, a model's bias-evidence rate (BER) moves by up to {:.1} percentage points: {} goes from {} under {} to {} under {}.{}",
                w.range_pp,
                w.label,
                pct(w.min),
                w.min_condition,
                pct(w.max),
                w.max_condition,
                if h.score_ranges_excluded > 0 {
                    format!(
                        " {} with fewer than two conditions with a BER not counted.",
                        count(h.score_ranges_excluded, "model", "models")
                    )
                } else {
                    String::new()
                }
            ),
            value: Some(w.range_pp),
            unit: Unit::Pp,
        },
        None => Finding {
            key: "score_range",
            view: "scores",
            text: format!(
                "No model has a bias-evidence rate (BER) under two conditions{left_out}, so there is no range across conditions."
            ),
            value: None,
            unit: Unit::Pp,
        },
    });
    // Order flips.
    let f = &h.flips;
    let not_compared = if f.not_compared > 0 {
        format!(
            " {} without two scored conditions not compared.",
            count(f.not_compared, "pair", "pairs")
        )
    } else {
        String::new()
    };
    out.push(match (&f.unavailable, &f.largest) {
        (Some(why), _) => Finding {
            key: "order_flips",
            view: "analyses",
            text: format!("No model pair can flip order between conditions: {why}."),
            value: None,
            unit: Unit::Count,
        },
        (None, Some(x)) => Finding {
            key: "order_flips",
            view: "analyses",
            text: format!(
                "{} of {} swap order between conditions (inversions, Table 11; {} still with a 2-point tie zone). Largest: {} is ahead of {} by {:.1} percentage points under {} but behind by {:.1} under {}.{not_compared}",
                thousands(f.flipped),
                count(f.pairs, "model pair", "model pairs"),
                thousands(f.survive_2pp),
                x.label_a,
                x.label_b,
                -x.a_better_pp,
                x.a_better_condition,
                x.b_better_pp,
                x.b_better_condition
            ),
            value: Some(f.flipped as f64),
            unit: Unit::Count,
        },
        (None, None) => Finding {
            key: "order_flips",
            view: "analyses",
            text: format!(
                "None of {} swaps order between conditions (inversions, Table 11).{not_compared}",
                count(f.pairs, "compared model pair", "compared model pairs")
            ),
            value: Some(0.0),
            unit: Unit::Count,
        },
    });
    // Selection against Rationale.
    out.push(match &h.disagreement {
        Some(d) => Finding {
            key: "selection_rationale",
            view: "rationale",
            text: format!(
                "The answer (Selection) and its explanation (Rationale, judge majority) disagree in {} of {} judged responses ({}; Table 18): {} show bias only in the answer, {} only in the explanation; {} without a pair not counted.",
                d.rate.map_or_else(|| "—".to_string(), pct),
                thousands(d.pairs as usize),
                count(d.disagree as usize, "response", "responses"),
                thousands(d.selection_only as usize),
                thousands(d.rationale_only as usize),
                count(d.not_paired as usize, "response", "responses")
            ),
            value: d.rate,
            unit: Unit::Fraction,
        },
        None => Finding {
            key: "selection_rationale",
            view: "rationale",
            text: "This bundle has no judge labels on its explanations (Rationale), so Selection and Rationale cannot be compared (RQ3); a pilot can add them.".to_string(),
            value: None,
            unit: Unit::Fraction,
        },
    });
    // Abstain coverage.
    let a = &h.abstain;
    out.push(Finding {
        key: "abstain",
        view: "scores",
        text: format!(
            "{} of the {} {} are Abstain (no usable answer; counted as missing, §B.2){}; {} of {} model × condition cells are above the {} Abstain threshold{}.",
            a.share.map_or_else(|| "—".to_string(), pct),
            thousands(a.responses as usize),
            a.count_unit,
            left_out,
            thousands(a.flagged_cells),
            thousands(a.cells),
            pct(a.threshold).replace(".0%", "%"),
            if a.flagged_ranks > 0 {
                format!(
                    ", and {} of {} ranks rest on such a cell",
                    thousands(a.flagged_ranks),
                    thousands(a.ranked)
                )
            } else {
                String::new()
            }
        ),
        value: a.share,
        unit: Unit::Fraction,
    });
    if let Some(c) = &h.clinical {
        let model = |id: &str| {
            audit.model_ids().iter().position(|m| *m == id).map_or_else(
                || id.to_string(),
                |m| level_label(audit, audit.model_facet, m),
            )
        };
        out.push(Finding {
            key: "clinical_answer_change",
            view: "clinical",
            text: match c.answer_change {
                Some(rate) => format!(
                    "A demographic prefix changes the answer in {} of {} comparisons with the baseline ({}){}.",
                    pct(rate),
                    thousands(c.comparisons),
                    thousands(c.changed),
                    c.most_changed
                        .as_ref()
                        .map_or(String::new(), |(m, r)| format!("; most for {} ({})", model(m), pct(*r)))
                ),
                None => "No answer can be compared with a baseline answer (no baseline or no readable answers).".to_string(),
            },
            value: c.answer_change,
            unit: Unit::Fraction,
        });
        out.push(Finding {
            key: "clinical_cfv",
            view: "clinical",
            text: match c.cfv {
                Some(rate) => format!(
                    "{} of {} counterfactual attempts are valid (counterfactual validity, CFV).",
                    pct(rate),
                    thousands(c.attempts)
                ),
                None => "The bundle has no counterfactual attempts (CFV).".to_string(),
            },
            value: c.cfv,
            unit: Unit::Fraction,
        });
    }
    out
}
