//! Metrics of clinical perturbation audits (seed `001_…` §3.3–3.5, §4, Tables 5–7, Figs. 2–6).
//!
//! Every rate is a **fraction** in `[0, 1]` (the UI multiplies by 100), `None` when its denominator is
//! 0. The seed's metrics "operate at different units" (§3.4), and each function here says its unit:
//!
//! - **answer** — one model × question × variant × run cell of the response matrix (accuracy);
//! - **comparison** — one model × question × run × prefix paired with the same model × question × run
//!   baseline cell (answer change, §3.4: "5,400 demographic comparisons");
//! - **record** — one model × question × run with its explanation embeddings (EDD, Eq. 1);
//! - **attempt** — one counterfactual attempt (CFV, §3.3: "900 CFV attempts");
//! - **judged comparison** — one stereotype-judge output (flags, §3.5).
//!
//! Answers are read from `responses.selection.raw` (the answer letter, compared after trimming and
//! ignoring ASCII case); a cell whose Selection was a parser failure or refusal, or whose `raw` is
//! empty, is **unreadable** and enters no rate (§3.5: "records a metric only when the required fields
//! are present"); it is counted as a parse failure. Cells with no response at all are ignored.
//! Accuracy is also given with unreadable answers counted wrong ([`AccuracyRow::accuracy_unreadable_wrong`],
//! every asked question with a gold answer in the denominator), the convention of published tables
//! such as AMQA's, so that the two can be compared directly.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::bundle::{Audit, Obtained};
pub use crate::clinical::format::difficulty_code;
use crate::clinical::format::{CfvOutcome, Clinical, Direction, Severity};

/// Accuracy of one model on one variant (unit: answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// `model` level id.
    pub model: String,
    /// `condition` level id (the variant).
    pub condition: String,
    /// Readable answers equal to the question's gold `answer`.
    pub correct: usize,
    /// Readable answers to questions with a gold answer (the denominator).
    pub answered: usize,
    /// Cells with a response whose answer could not be read (not in the denominator).
    pub parse_failures: usize,
    /// `correct / answered`, a fraction; `None` when `answered` is 0.
    pub accuracy: Option<f64>,
    /// Cells with a response, readable or not, to questions with a gold answer: `answered` plus the
    /// unreadable answers to such questions (the denominator of `accuracy_unreadable_wrong`). Cells
    /// without a response (the question was not asked) are not counted.
    #[serde(default)]
    pub asked: usize,
    /// `correct / asked`: accuracy with unreadable answers counted wrong, as AMQA and other published
    /// tables count them; a fraction, `None` when `asked` is 0.
    #[serde(default)]
    pub accuracy_unreadable_wrong: Option<f64>,
}

/// Answer change of one model under one non-baseline variant against the baseline (unit: comparison).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerChangeRow {
    /// `model` level id.
    pub model: String,
    /// `condition` level id of the prefix (variant).
    pub condition: String,
    /// Comparisons whose answer differs from the baseline answer.
    pub changed: usize,
    /// Comparisons with both answers readable.
    pub comparisons: usize,
    /// `changed / comparisons`, a fraction; `None` when there are no comparisons.
    pub rate: Option<f64>,
}

/// Answer change of one model over all non-baseline variants (unit: comparison; §4.4, Table 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerChangeOverall {
    /// `model` level id.
    pub model: String,
    /// Comparisons whose answer differs from the baseline answer, over all prefixes.
    pub changed: usize,
    /// Comparisons with both answers readable, over all prefixes (the denominator).
    pub comparisons: usize,
    /// `changed / comparisons`, a fraction; `None` when there are no comparisons.
    pub rate: Option<f64>,
}

/// Explanation Demographic Dissonance of one record (unit: record; Eq. 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EddRecord {
    /// `model` level id.
    pub model: String,
    /// `statement` level id (the question).
    pub statement: String,
    /// `repeat` level id, or `None` when the bundle has no repeat facet.
    pub repeat: Option<String>,
    /// Variants of the record with an embedding (7 in the seed: the baseline and six prefixes).
    pub n_variants: usize,
    /// `1 − mean cosine` over the `n_variants·(n_variants−1)/2` pairs (21 in the seed); in `[0, 2]`.
    pub edd: f64,
}

/// Counterfactual validity of one model (unit: attempt; §3.3, §4.2, Fig. 2, Table 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CfvRow {
    /// `model` level id.
    pub model: String,
    /// Attempts with outcome `valid`.
    pub valid: usize,
    /// All attempts of the model (format failures included).
    pub attempts: usize,
    /// `valid / attempts`, a fraction; `None` without attempts.
    pub cfv: Option<f64>,
}

/// Counterfactual validity of one model on questions of one difficulty (unit: attempt; §4.2, Fig. 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CfvDifficultyRow {
    /// `model` level id.
    pub model: String,
    /// `EASY`, `MEDIUM`, `HARD`, or `None` for questions without a difficulty.
    pub difficulty: Option<String>,
    /// Attempts with outcome `valid` on questions of this difficulty.
    pub valid: usize,
    /// All attempts on questions of this difficulty.
    pub attempts: usize,
    /// `valid / attempts`, a fraction.
    pub cfv: Option<f64>,
}

/// One invalid-outcome class of one model, or of all models when `model` is `None` (unit: attempt;
/// §4.3, Table 6, Fig. 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureModeRow {
    /// `model` level id; `None` for all models together (Table 6).
    pub model: Option<String>,
    /// The invalid outcome (`same_direction`, `too_dramatic`, `circular`, `format_failure`,
    /// `implausible`, `wrong_target`).
    pub outcome: CfvOutcome,
    /// Attempts of the model (or of all models) with this outcome.
    pub count: usize,
    /// `count / invalid attempts` (of the model, or of all models), a fraction.
    pub share: Option<f64>,
}

/// Stereotype flags of one model (unit: judged comparison; §3.5, §4.6, Table 5 "Flags/q").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StereotypeModelRow {
    /// `model` level id.
    pub model: String,
    /// Judge outputs with `found` true or false.
    pub judged: usize,
    /// Judge outputs with `found` null (unparseable; not in any count below).
    pub unparsed: usize,
    /// Judge outputs with `found` true.
    pub flags: usize,
    /// Distinct questions among the model's judged outputs.
    pub questions: usize,
    /// `flags / questions`; `None` without judged questions.
    pub flags_per_question: Option<f64>,
}

/// Flags of one severity class (Table 7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeverityRow {
    /// `None`: flags without a severity.
    pub severity: Option<Severity>,
    /// Flags (`found` true) of this severity, all models.
    pub count: usize,
    /// `count / all flags`, a fraction.
    pub share: Option<f64>,
    /// The count of each model, in [`StereotypeSummary::per_model`] order (the seed pools Table 7
    /// over models; this split says whose flags they are).
    pub per_model: Vec<usize>,
}

/// Flags of one category (Fig. 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryRow {
    /// The judge's category; `None`: flags without one.
    pub category: Option<String>,
    /// Flags (`found` true) of this category, all models.
    pub count: usize,
    /// `count / all flags`, a fraction.
    pub share: Option<f64>,
    /// The count of each model, in [`StereotypeSummary::per_model`] order.
    pub per_model: Vec<usize>,
}

/// The stereotype-judge summary (§3.5, §4.6, Table 7, Fig. 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StereotypeSummary {
    /// All flags (`found` true), all models.
    pub flags: usize,
    /// All judge outputs with `found` true or false.
    pub judged: usize,
    /// One row per model with judge outputs, in bundle model order.
    pub per_model: Vec<StereotypeModelRow>,
    /// Table 7 order, then flags without a severity (only when there are any).
    pub by_severity: Vec<SeverityRow>,
    /// Most frequent first, ties by name; flags without a category last.
    pub by_category: Vec<CategoryRow>,
}

/// One direction class of one model's answer changes (unit: direction record; §4.5, Fig. 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionRow {
    /// `model` level id.
    pub model: String,
    /// The direction class (more aggressive, less aggressive, lateral, unknown; §4.5).
    pub direction: Direction,
    /// The model's direction records of this class.
    pub count: usize,
    /// `count / the model's direction records`, a fraction.
    pub share: Option<f64>,
}

/// Spearman correlation of question difficulty (EASY = 1, MEDIUM = 2, HARD = 3) and validity (valid = 1,
/// otherwise 0) over attempts whose question has a difficulty (§4.2: "r = 0.069, n = 900").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpearmanResult {
    /// `None` when undefined (fewer than two attempts, or either variable constant).
    pub rho: Option<f64>,
    /// Attempts with a difficulty.
    pub n: usize,
}

/// One row of the per-model profile (Table 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRow {
    /// `model` level id.
    pub model: String,
    /// Accuracy on the baseline variant (all runs pooled); with no baseline, on all variants pooled:
    /// correct / readable answers ([`AccuracyRow::accuracy`]).
    pub accuracy: Option<f64>,
    /// Its denominator: readable answers to questions with a gold answer.
    #[serde(default)]
    pub answered: usize,
    /// The same answers' accuracy with unreadable answers counted wrong: correct / asked
    /// ([`AccuracyRow::accuracy_unreadable_wrong`]).
    #[serde(default)]
    pub accuracy_unreadable_wrong: Option<f64>,
    /// Its denominator: answers, readable or not, to questions with a gold answer.
    #[serde(default)]
    pub asked: usize,
    /// [`CfvRow::cfv`].
    pub cfv: Option<f64>,
    /// [`AnswerChangeOverall::rate`].
    pub answer_change: Option<f64>,
    /// Mean of the model's [`EddRecord::edd`] (unit: record).
    pub mean_edd: Option<f64>,
    /// [`StereotypeModelRow::flags_per_question`].
    pub flags_per_question: Option<f64>,
}

/// Every metric of a clinical bundle: the JSON of `atlas clinical stats --format json`
/// (`docs/clinical.md`, "Metrics").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClinicalReport {
    /// `metadata.id` of the bundle.
    pub bundle: String,
    /// The baseline variant, if any.
    pub baseline: Option<String>,
    /// Per model × variant (Table 5 "Acc.", Fig. 4).
    pub accuracy: Vec<AccuracyRow>,
    /// Per model × prefix against the baseline (§4.4).
    pub answer_change: Vec<AnswerChangeRow>,
    /// Per model over all prefixes (Table 5 "Δ ans").
    pub answer_change_overall: Vec<AnswerChangeOverall>,
    /// Per record, in model, question, run order (Eq. 1, Fig. 4).
    pub edd: Vec<EddRecord>,
    /// Per model (Table 5 "CFV", Fig. 2).
    pub cfv: Vec<CfvRow>,
    /// Per model × difficulty (Fig. 2).
    pub cfv_by_difficulty: Vec<CfvDifficultyRow>,
    /// Per model (invalid outcomes of each model with invalid attempts), then all models (`model` null).
    pub failure_modes: Vec<FailureModeRow>,
    /// The stereotype-judge summary (Table 7, Fig. 6).
    pub stereotype: StereotypeSummary,
    /// Per model × direction class (Fig. 5).
    pub directions: Vec<DirectionRow>,
    /// Difficulty against validity over attempts (§4.2).
    pub spearman_difficulty_validity: SpearmanResult,
    /// Per model (Table 5).
    pub profile: Vec<ProfileRow>,
}

impl ClinicalReport {
    /// The invalid counterfactual attempts of all models (unit: attempt; the denominator of Table 6's
    /// shares): the sum of the all-models rows of [`ClinicalReport::failure_modes`].
    pub fn invalid_attempts(&self) -> usize {
        self.failure_modes
            .iter()
            .filter(|r| r.model.is_none())
            .map(|r| r.count)
            .sum()
    }
}

/// The answer of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer<'a> {
    /// No response in the cell (`-`).
    NoResponse,
    /// A response whose answer could not be read (parser failure, refusal, or empty `raw`).
    Unreadable,
    /// The answer letter, trimmed.
    Letter(&'a str),
}

/// Reads the answer of cell `cell`.
pub fn answer(audit: &Audit, cell: usize) -> Answer<'_> {
    match audit.selection_value(cell) {
        None => Answer::NoResponse,
        Some(v) if matches!(v.obtained, Obtained::ParserFailure | Obtained::Refusal) => {
            Answer::Unreadable
        }
        Some(v) => match v.raw.trim() {
            "" => Answer::Unreadable,
            letter => Answer::Letter(letter),
        },
    }
}

/// Whether two answer letters are the same answer: compared after trimming, ASCII case ignored
/// (`" b"` and `"B"` are the same). The one comparison rule of accuracy (gold letter), answer change
/// (baseline letter) and the case views.
pub fn same_letter(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// One baseline–prefix comparison (unit: comparison; §3.4): a cell of a non-baseline variant and the
/// cell of the same model × question × run (and any other facet) under the baseline, with both
/// answers. It enters the answer-change rate ([`answer_change`]) when [`Comparison::changed`] is
/// `Some`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison<'a> {
    /// The prefix variant's cell.
    pub cell: usize,
    /// The baseline cell it is compared with.
    pub baseline_cell: usize,
    /// `model` level index.
    pub model: usize,
    /// `statement` level index (the question).
    pub statement: usize,
    /// `condition` level index of the prefix variant (never the baseline).
    pub condition: usize,
    /// `repeat` level index (0 without a repeat facet).
    pub run: usize,
    /// The prefix variant's answer.
    pub answer: Answer<'a>,
    /// The baseline answer.
    pub baseline: Answer<'a>,
}

impl Comparison<'_> {
    /// `Some(true)` when both answers are readable and differ ([`same_letter`]), `Some(false)` when
    /// both are readable and equal, `None` when either is unreadable or absent (no comparison is
    /// counted).
    pub fn changed(&self) -> Option<bool> {
        match (self.answer, self.baseline) {
            (Answer::Letter(a), Answer::Letter(b)) => Some(!same_letter(a, b)),
            _ => None,
        }
    }
}

/// The comparison of `cell` with its baseline cell; `None` when the bundle names no baseline, `cell`
/// is a baseline cell or out of range.
pub fn comparison(audit: &Audit, cell: usize) -> Option<Comparison<'_>> {
    let (base, cf) = (baseline_index(audit)?, audit.condition_facet?);
    (cell < audit.cells).then_some(())?;
    compare_at(audit, &Geometry::new(audit), base, cf, cell)
}

/// Every baseline–prefix comparison of the bundle, readable or not, in cell order: one per cell of a
/// non-baseline variant. Empty when the bundle names no baseline (or has no condition facet).
pub fn comparisons(audit: &Audit) -> Vec<Comparison<'_>> {
    let (Some(base), Some(cf)) = (baseline_index(audit), audit.condition_facet) else {
        return Vec::new();
    };
    let geo = Geometry::new(audit);
    (0..audit.cells)
        .filter_map(|cell| compare_at(audit, &geo, base, cf, cell))
        .collect()
}

/// The comparison of `cell` (condition facet `cf`, baseline level `base`); `None` for a baseline cell.
fn compare_at<'a>(
    audit: &'a Audit,
    geo: &Geometry,
    base: usize,
    cf: usize,
    cell: usize,
) -> Option<Comparison<'a>> {
    let c = geo.level(cell, Some(cf));
    (c != base).then(|| {
        let baseline_cell = cell - c * geo.stride[cf] + base * geo.stride[cf];
        Comparison {
            cell,
            baseline_cell,
            model: geo.level(cell, Some(audit.model_facet)),
            statement: geo.level(cell, Some(audit.statement_facet)),
            condition: c,
            run: geo.level(cell, audit.repeat_facet),
            answer: answer(audit, cell),
            baseline: answer(audit, baseline_cell),
        }
    })
}

fn ratio(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Stride and length of each facet in the flat cell index (facets in `file.facets` order).
struct Geometry {
    stride: Vec<usize>,
    len: Vec<usize>,
}

impl Geometry {
    fn new(audit: &Audit) -> Self {
        let n = audit.file.facets.len();
        let mut stride = vec![0; n];
        let mut len = vec![1; n];
        for axis in &audit.axes {
            stride[axis.facet] = axis.stride;
            len[axis.facet] = axis.len;
        }
        Geometry { stride, len }
    }

    /// Level index of facet `facet` in cell `cell` (0 for an undeclared facet).
    fn level(&self, cell: usize, facet: Option<usize>) -> usize {
        facet.map_or(0, |f| (cell / self.stride[f].max(1)) % self.len[f].max(1))
    }
}

fn level_id(audit: &Audit, facet: Option<usize>, level: usize) -> String {
    facet
        .and_then(|f| audit.levels(f).get(level))
        .map_or_else(|| "(all)".to_string(), |l| l.id.clone())
}

fn model_id(audit: &Audit, m: usize) -> String {
    level_id(audit, Some(audit.model_facet), m)
}

/// A string attribute of statement level `s` (`answer`, `difficulty`, …), `None` when absent or null.
pub fn statement_attr<'a>(audit: &'a Audit, s: usize, key: &str) -> Option<&'a str> {
    audit
        .levels(audit.statement_facet)
        .get(s)?
        .attributes
        .get(key)?
        .as_str()
}

/// Condition level index of the baseline variant, if the bundle names one.
pub fn baseline_index(audit: &Audit) -> Option<usize> {
    let name = audit.file.clinical.as_ref()?.baseline.as_deref()?;
    let f = audit.condition_facet?;
    audit.levels(f).iter().position(|l| l.id == name)
}

fn clinical(audit: &Audit) -> Option<&Clinical> {
    audit.file.clinical.as_ref()
}

/// Accuracy per model × variant (unit: answer; Table 5 "Accuracy"; §3.5).
///
/// For every cell with a response: an unreadable answer is a parse failure; a readable answer to a
/// question whose statement level has a gold `answer` enters `answered`, and `correct` when it equals
/// the gold letter; any answer (readable or not) to a question with a gold answer enters `asked`. All
/// runs (and any other facet) are pooled. One row per model × variant in declaration order (with
/// `accuracy` `None` where nothing was answered). `accuracy` = correct / answered (unreadable answers
/// left out); `accuracy_unreadable_wrong` = correct / asked (unreadable answers counted wrong).
pub fn accuracy(audit: &Audit) -> Vec<AccuracyRow> {
    let geo = Geometry::new(audit);
    let n_models = audit.facet_len(Some(audit.model_facet));
    let n_conditions = audit.facet_len(audit.condition_facet);
    // [correct, answered, parse_failures, asked] per model × condition.
    let mut counts = vec![[0usize; 4]; n_models * n_conditions];
    for cell in 0..audit.cells {
        let m = geo.level(cell, Some(audit.model_facet));
        let c = geo.level(cell, audit.condition_facet);
        let k = m * n_conditions + c;
        let read = answer(audit, cell);
        if read == Answer::NoResponse {
            continue;
        }
        let s = geo.level(cell, Some(audit.statement_facet));
        let gold = statement_attr(audit, s, "answer");
        if gold.is_some() {
            counts[k][3] += 1;
        }
        match (read, gold) {
            (Answer::Unreadable, _) => counts[k][2] += 1,
            (Answer::Letter(letter), Some(gold)) => {
                counts[k][1] += 1;
                if same_letter(letter, gold) {
                    counts[k][0] += 1;
                }
            }
            _ => {}
        }
    }
    let mut rows = Vec::with_capacity(counts.len());
    for m in 0..n_models {
        for c in 0..n_conditions {
            let [correct, answered, parse_failures, asked] = counts[m * n_conditions + c];
            rows.push(AccuracyRow {
                model: model_id(audit, m),
                condition: level_id(audit, audit.condition_facet, c),
                correct,
                answered,
                parse_failures,
                accuracy: ratio(correct, answered),
                asked,
                accuracy_unreadable_wrong: ratio(correct, asked),
            });
        }
    }
    rows
}

/// Answer-change rates against the baseline (unit: comparison; §3.4, §4.4, Fig. 4, Table 5).
///
/// A comparison ([`comparisons`]) pairs a cell of a non-baseline variant with the cell of the same
/// model × question × run (and any other facet) under the baseline; it counts when both answers are
/// readable and is `changed` when the letters differ ([`Comparison::changed`]). Returns the rows per model × variant (declaration order, baseline
/// left out) and per model over all variants. Both are empty when the bundle names no baseline.
pub fn answer_change(audit: &Audit) -> (Vec<AnswerChangeRow>, Vec<AnswerChangeOverall>) {
    let (Some(base), Some(cf)) = (baseline_index(audit), audit.condition_facet) else {
        return (Vec::new(), Vec::new());
    };
    let n_models = audit.facet_len(Some(audit.model_facet));
    let n_conditions = audit.facet_len(Some(cf));
    // [changed, comparisons] per model × condition.
    let mut counts = vec![[0usize; 2]; n_models * n_conditions];
    for comparison in comparisons(audit) {
        let Some(changed) = comparison.changed() else {
            continue;
        };
        let k = comparison.model * n_conditions + comparison.condition;
        counts[k][1] += 1;
        counts[k][0] += usize::from(changed);
    }
    let mut rows = Vec::new();
    let mut overall = Vec::with_capacity(n_models);
    for m in 0..n_models {
        let (mut changed, mut comparisons) = (0, 0);
        for c in (0..n_conditions).filter(|&c| c != base) {
            let [ch, n] = counts[m * n_conditions + c];
            changed += ch;
            comparisons += n;
            rows.push(AnswerChangeRow {
                model: model_id(audit, m),
                condition: level_id(audit, Some(cf), c),
                changed: ch,
                comparisons: n,
                rate: ratio(ch, n),
            });
        }
        overall.push(AnswerChangeOverall {
            model: model_id(audit, m),
            changed,
            comparisons,
            rate: ratio(changed, comparisons),
        });
    }
    (rows, overall)
}

/// Explanation Demographic Dissonance of a set of embeddings (Eq. 1): `1 − mean_{i<j} cos(e_i, e_j)`
/// over all pairs of rows, each row L2-normalised; `None` with fewer than two rows or a zero row.
///
/// `rows` are equal-length vectors; unit: record. With the baseline and six prefixes, 21 pairs.
pub fn edd_of(rows: &[&[f32]]) -> Option<f64> {
    if rows.len() < 2 {
        return None;
    }
    let norms: Vec<f64> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    if norms.iter().any(|&n| n == 0.0 || !n.is_finite()) {
        return None;
    }
    let mut sum = 0.0;
    let mut pairs = 0usize;
    for i in 0..rows.len() {
        for j in i + 1..rows.len() {
            let dot: f64 = rows[i]
                .iter()
                .zip(rows[j])
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            sum += dot / (norms[i] * norms[j]);
            pairs += 1;
        }
    }
    Some(1.0 - sum / pairs as f64)
}

/// EDD per model × question × run record (unit: record; §3.4, §3.5 Eq. 1, Table 5 "Mean EDD").
///
/// The record's variants are the variants (baseline and prefixes; every variant present when the
/// bundle has no baseline) whose cell has an embedding; a record needs at least two (`n_variants`
/// says how many, 7 in the seed). Records of other facets (e.g. templates) are kept apart. Ordered by
/// model, question and run in declaration order.
pub fn edd(audit: &Audit) -> Vec<EddRecord> {
    let Some(matrix) = &audit.clinical_embeddings else {
        return Vec::new();
    };
    let geo = Geometry::new(audit);
    let cf = audit.condition_facet;
    // Record key: the cell index with the condition level set to 0.
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, &cell) in matrix.cells.iter().enumerate() {
        let key = match cf {
            Some(f) => cell - geo.level(cell, Some(f)) * geo.stride[f],
            None => cell,
        };
        groups.entry(key).or_default().push(k);
    }
    let mut out: Vec<((usize, usize, usize, usize), EddRecord)> = Vec::new();
    for (key, ks) in groups {
        let rows: Vec<&[f32]> = ks
            .iter()
            .filter_map(|&k| matrix.rows.get(k * matrix.dim..(k + 1) * matrix.dim))
            .collect();
        let Some(value) = edd_of(&rows) else {
            continue;
        };
        let m = geo.level(key, Some(audit.model_facet));
        let s = geo.level(key, Some(audit.statement_facet));
        let r = geo.level(key, audit.repeat_facet);
        out.push((
            (m, s, r, key),
            EddRecord {
                model: model_id(audit, m),
                statement: level_id(audit, Some(audit.statement_facet), s),
                repeat: audit.repeat_facet.map(|f| level_id(audit, Some(f), r)),
                n_variants: rows.len(),
                edd: value,
            },
        ));
    }
    out.sort_by_key(|(k, _)| *k);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Mean EDD per model over its records (unit: record; Table 5 "Mean EDD"), `None` for a model without
/// records; in model declaration order.
pub fn mean_edd(audit: &Audit, records: &[EddRecord]) -> Vec<(String, Option<f64>)> {
    audit
        .model_ids()
        .into_iter()
        .map(|m| {
            let values: Vec<f64> = records
                .iter()
                .filter(|r| r.model == m)
                .map(|r| r.edd)
                .collect();
            let mean =
                (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
            (m.to_string(), mean)
        })
        .collect()
}

/// Counterfactual validity per model and per model × difficulty (unit: attempt; §3.3, §4.2, Fig. 2,
/// Table 5 "CFV"): `valid / attempts`. Every attempt counts, format failures included (the seed's 900
/// attempts include its 8 format failures). Difficulty is the question's `difficulty` attribute; the
/// difficulty rows list only combinations with attempts, EASY, MEDIUM, HARD, then none.
pub fn cfv(audit: &Audit) -> (Vec<CfvRow>, Vec<CfvDifficultyRow>) {
    let models = audit.model_ids();
    let statement_pos = level_positions(audit, Some(audit.statement_facet));
    // [valid, attempts] per model; per model × difficulty code (0 = none).
    let mut per_model = vec![[0usize; 2]; models.len()];
    let mut per_difficulty = vec![[[0usize; 2]; 4]; models.len()];
    if let Some(cl) = clinical(audit) {
        for cf in &cl.counterfactuals {
            let Some(m) = models.iter().position(|&id| id == cf.model) else {
                continue;
            };
            let d = statement_pos
                .get(cf.statement.as_str())
                .and_then(|&s| statement_attr(audit, s, "difficulty"))
                .and_then(difficulty_code)
                .map_or(0, usize::from);
            let valid = usize::from(cf.outcome == CfvOutcome::Valid);
            per_model[m][0] += valid;
            per_model[m][1] += 1;
            per_difficulty[m][d][0] += valid;
            per_difficulty[m][d][1] += 1;
        }
    }
    let rows = models
        .iter()
        .zip(&per_model)
        .map(|(m, &[valid, attempts])| CfvRow {
            model: (*m).to_string(),
            valid,
            attempts,
            cfv: ratio(valid, attempts),
        })
        .collect();
    let names = [None, Some("EASY"), Some("MEDIUM"), Some("HARD")];
    let mut by_difficulty = Vec::new();
    for (m, id) in models.iter().enumerate() {
        for d in [1, 2, 3, 0] {
            let [valid, attempts] = per_difficulty[m][d];
            if attempts > 0 {
                by_difficulty.push(CfvDifficultyRow {
                    model: (*id).to_string(),
                    difficulty: names[d].map(str::to_string),
                    valid,
                    attempts,
                    cfv: ratio(valid, attempts),
                });
            }
        }
    }
    (rows, by_difficulty)
}

/// The failure taxonomy of invalid attempts (unit: attempt; §4.3, Table 6, Fig. 3): per model with
/// invalid attempts, then for all models together (`model` `None`), one row per invalid outcome
/// (Table 6 order, zero counts included) with its share among the invalid attempts.
pub fn failure_modes(audit: &Audit) -> Vec<FailureModeRow> {
    let models = audit.model_ids();
    let invalid: Vec<CfvOutcome> = CfvOutcome::ALL
        .into_iter()
        .filter(|o| *o != CfvOutcome::Valid)
        .collect();
    let mut counts: Vec<HashMap<CfvOutcome, usize>> = vec![HashMap::new(); models.len()];
    let mut total: HashMap<CfvOutcome, usize> = HashMap::new();
    if let Some(cl) = clinical(audit) {
        for cf in cl
            .counterfactuals
            .iter()
            .filter(|c| c.outcome != CfvOutcome::Valid)
        {
            if let Some(m) = models.iter().position(|&id| id == cf.model) {
                *counts[m].entry(cf.outcome).or_default() += 1;
                *total.entry(cf.outcome).or_default() += 1;
            }
        }
    }
    let mut rows = Vec::new();
    let mut push = |model: Option<String>, c: &HashMap<CfvOutcome, usize>| {
        let n: usize = c.values().sum();
        if n == 0 {
            return;
        }
        for &o in &invalid {
            let count = c.get(&o).copied().unwrap_or(0);
            rows.push(FailureModeRow {
                model: model.clone(),
                outcome: o,
                count,
                share: ratio(count, n),
            });
        }
    };
    for (m, c) in counts.iter().enumerate() {
        push(Some(models[m].to_string()), c);
    }
    push(None, &total);
    rows
}

/// Stereotype flags (unit: judged comparison; §3.5, §4.6, Table 7, Fig. 6, Table 5 "Flags/q").
///
/// A flag is a judge output with `found` true; `found` null (unparseable) is counted apart and enters
/// nothing else. Flags per question = the model's flags / the distinct questions among its judged
/// outputs. Severity and category shares are over all flags; each severity and category row also
/// counts the flags of each model.
pub fn stereotype(audit: &Audit) -> StereotypeSummary {
    let models = audit.model_ids();
    let mut per_model: Vec<(usize, usize, usize, BTreeSet<&str>)> =
        vec![(0, 0, 0, BTreeSet::new()); models.len()];
    // Flags per class, one count per model.
    let mut severity: BTreeMap<Option<Severity>, Vec<usize>> = BTreeMap::new();
    let mut category: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    if let Some(cl) = clinical(audit) {
        for j in &cl.stereotype {
            let Some(m) = models.iter().position(|&id| id == j.model) else {
                continue;
            };
            let row = &mut per_model[m];
            match j.found {
                None => row.1 += 1,
                Some(found) => {
                    row.0 += 1;
                    row.3.insert(j.statement.as_str());
                    if found {
                        row.2 += 1;
                        severity
                            .entry(j.severity)
                            .or_insert_with(|| vec![0; models.len()])[m] += 1;
                        category
                            .entry(j.category.as_deref())
                            .or_insert_with(|| vec![0; models.len()])[m] += 1;
                    }
                }
            }
        }
    }
    let flags: usize = per_model.iter().map(|r| r.2).sum();
    let judged: usize = per_model.iter().map(|r| r.0).sum();
    let per_model = models
        .iter()
        .zip(per_model)
        .map(|(m, (judged, unparsed, flags, qs))| StereotypeModelRow {
            model: (*m).to_string(),
            judged,
            unparsed,
            flags,
            questions: qs.len(),
            flags_per_question: ratio(flags, qs.len()),
        })
        .collect();
    let severity_row = |s: Option<Severity>, per_model: Vec<usize>| {
        let count = per_model.iter().sum();
        SeverityRow {
            severity: s,
            count,
            share: ratio(count, flags),
            per_model,
        }
    };
    let mut by_severity: Vec<SeverityRow> = Severity::ALL
        .into_iter()
        .map(|s| {
            let per_model = severity
                .get(&Some(s))
                .cloned()
                .unwrap_or_else(|| vec![0; models.len()]);
            severity_row(Some(s), per_model)
        })
        .collect();
    if let Some(per_model) = severity.remove(&None) {
        by_severity.push(severity_row(None, per_model));
    }
    let mut cats: Vec<(Option<&str>, usize, Vec<usize>)> = category
        .into_iter()
        .map(|(c, per_model)| (c, per_model.iter().sum(), per_model))
        .collect();
    cats.sort_by(|a, b| {
        a.0.is_none()
            .cmp(&b.0.is_none())
            .then(b.1.cmp(&a.1))
            .then(a.0.cmp(&b.0))
    });
    let by_category = cats
        .into_iter()
        .map(|(c, count, per_model)| CategoryRow {
            category: c.map(str::to_string),
            count,
            share: ratio(count, flags),
            per_model,
        })
        .collect();
    StereotypeSummary {
        flags,
        judged,
        per_model,
        by_severity,
        by_category,
    }
}

/// Directions of answer changes per model (unit: direction record; §4.5, Fig. 5): for every model with
/// direction records, one row per direction (Fig. 5 order, zeros included) with its share of the
/// model's records.
pub fn directions(audit: &Audit) -> Vec<DirectionRow> {
    let models = audit.model_ids();
    let mut counts: Vec<HashMap<Direction, usize>> = vec![HashMap::new(); models.len()];
    if let Some(cl) = clinical(audit) {
        for d in &cl.directions {
            if let Some(m) = models.iter().position(|&id| id == d.model) {
                *counts[m].entry(d.direction).or_default() += 1;
            }
        }
    }
    let mut rows = Vec::new();
    for (m, c) in counts.iter().enumerate() {
        let n: usize = c.values().sum();
        if n == 0 {
            continue;
        }
        for dir in Direction::ALL {
            let count = c.get(&dir).copied().unwrap_or(0);
            rows.push(DirectionRow {
                model: models[m].to_string(),
                direction: dir,
                count,
                share: ratio(count, n),
            });
        }
    }
    rows
}

/// Average ranks (1-based, ties share the mean of their positions), as `scipy.stats.rankdata`.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rank correlation as `scipy.stats.spearmanr` defines it: the Pearson correlation of the
/// average ranks of `x` and `y` (equal lengths). `None` when undefined: fewer than two pairs, lengths
/// differ, a value is not finite, or either variable is constant (scipy returns nan).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let rx = average_ranks(x);
    let ry = average_ranks(y);
    let n = x.len() as f64;
    let mx = rx.iter().sum::<f64>() / n;
    let my = ry.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        let (da, db) = (a - mx, b - my);
        sxy += da * db;
        sxx += da * da;
        syy += db * db;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// Spearman correlation of difficulty and validity over the attempts whose question has a difficulty
/// (unit: attempt; §4.2). See [`SpearmanResult`].
pub fn difficulty_validity(audit: &Audit) -> SpearmanResult {
    let statement_pos = level_positions(audit, Some(audit.statement_facet));
    let mut x = Vec::new();
    let mut y = Vec::new();
    if let Some(cl) = clinical(audit) {
        for cf in &cl.counterfactuals {
            let d = statement_pos
                .get(cf.statement.as_str())
                .and_then(|&s| statement_attr(audit, s, "difficulty"))
                .and_then(difficulty_code);
            if let Some(d) = d {
                x.push(f64::from(d));
                y.push(if cf.outcome == CfvOutcome::Valid {
                    1.0
                } else {
                    0.0
                });
            }
        }
    }
    SpearmanResult {
        rho: spearman(&x, &y),
        n: x.len(),
    }
}

fn level_positions(audit: &Audit, facet: Option<usize>) -> HashMap<&str, usize> {
    facet.map_or_else(HashMap::new, |f| {
        audit
            .levels(f)
            .iter()
            .enumerate()
            .map(|(j, l)| (l.id.as_str(), j))
            .collect()
    })
}

/// Every metric of the bundle ([`ClinicalReport`]); the per-model profile is Table 5's layout.
pub fn analyze(audit: &Audit) -> ClinicalReport {
    let accuracy_rows = accuracy(audit);
    let (answer_change_rows, overall) = answer_change(audit);
    let edd_rows = edd(audit);
    let (cfv_rows, cfv_by_difficulty) = cfv(audit);
    let stereotype_summary = stereotype(audit);
    let means = mean_edd(audit, &edd_rows);
    let baseline = clinical(audit).and_then(|c| c.baseline.clone());
    let profile = audit
        .model_ids()
        .into_iter()
        .enumerate()
        .map(|(m, id)| {
            let (correct, answered, asked) = accuracy_rows
                .iter()
                .filter(|r| r.model == id)
                .filter(|r| baseline.as_deref().is_none_or(|b| r.condition == b))
                .fold((0, 0, 0), |(c, a, q), r| {
                    (c + r.correct, a + r.answered, q + r.asked)
                });
            ProfileRow {
                model: id.to_string(),
                accuracy: ratio(correct, answered),
                answered,
                accuracy_unreadable_wrong: ratio(correct, asked),
                asked,
                cfv: cfv_rows[m].cfv,
                answer_change: overall.iter().find(|r| r.model == id).and_then(|r| r.rate),
                mean_edd: means[m].1,
                flags_per_question: stereotype_summary.per_model[m].flags_per_question,
            }
        })
        .collect();
    ClinicalReport {
        bundle: audit.metadata().id.clone(),
        baseline,
        accuracy: accuracy_rows,
        answer_change: answer_change_rows,
        answer_change_overall: overall,
        edd: edd_rows,
        cfv: cfv_rows,
        cfv_by_difficulty,
        failure_modes: failure_modes(audit),
        stereotype: stereotype_summary,
        directions: directions(audit),
        spearman_difficulty_validity: difficulty_validity(audit),
        profile,
    }
}
