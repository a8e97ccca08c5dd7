//! The Clinical view: a clinical perturbation audit (seed `001_…`, "Beyond Accuracy"; bundle layout in
//! `docs/clinical.md`) as the seed reports it, recomputed in the page from the bundle by
//! [`atlas_core::clinical::metrics::analyze`]. Shown for bundles with a `clinical` object.
//!
//! | part | seed |
//! | --- | --- |
//! | per-model profile: accuracy, CFV, answer change, mean EDD, flags per question, each with its unit and n | Table 5 |
//! | CFV by model, and by difficulty tier when the questions have one; Spearman difficulty–validity | Fig. 2, §4.2 |
//! | failure modes of invalid counterfactuals by model; the taxonomy over all models | Fig. 3, Table 6 |
//! | answer-change rate as a model × prefix heat map; a cell opens its non-robust cases | Fig. 4, §4.4 |
//! | direction of answer changes by model | Fig. 5, §4.5 |
//! | stereotype-flag categories; severity classes | Fig. 6, Table 7 |
//! | case views: valid / invalid counterfactual, robust / non-robust demographic case (FIELD / RECORDED) | Tables 1–4 |
//!
//! Every chart is an `atlas_charts::clinical` draw function in an atlas [`ChartPanel`] (hover and arrow
//! keys, table alternative, PNG / SVG / CSV) and every table a core [`Table`] shown by
//! [`crate::ui::table::table_view`] (CSV button); captions name the bundle. A case has a link
//! (`?id=BUNDLE&view=clinical-case&ccase=cfv:MODEL:QUESTION`, `bundle=` for a non-default bundle, see
//! [`crate::state::url`]) that opens it in a fresh page. Model texts (explanations, generated changes,
//! judge descriptions) are shown only after the bundle's content warning is acknowledged, and always as
//! text nodes, never as HTML.

use std::sync::Arc;

use atlas_charts::clinical::{
    HeatMap, Proportion, RateBars, StackScale, StackedBars, DIRECTION_COLORS, FAILURE_COLORS,
};
use atlas_core::clinical::metrics::{analyze, answer, Answer, ClinicalReport};
use atlas_core::clinical::{CfvOutcome, Clinical, Counterfactual, Direction, Severity};
use atlas_core::tables::{Cell, Table};
use atlas_core::Audit;
use leptos::prelude::*;

use crate::browser::clipboard::copy_then;
use crate::state::shards::{text_at, BundleShards, TextAt};
use crate::state::url::{
    absolute_link, bundle_param, page_link, ClinicalCase, FocusedView, ViewState,
};
use crate::state::{AtlasState, Loaded};
use crate::ui::chart::{ChartPanel, ChartSpec, Spec};
use crate::ui::format::level_label;

// ------------------------------------------------------------------------------------------ cases

/// Which of the seed's two perturbation tests a case belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseKind {
    /// A counterfactual-validity attempt (§3.3; Tables 1–2).
    Cfv,
    /// A demographic-robustness record: baseline and the prefixes of one model × question (§3.4;
    /// Tables 3–4).
    Dr,
}

impl CaseKind {
    /// `cfv` or `dr`, the prefix of a [`CaseKey`] in a link.
    pub fn key(self) -> &'static str {
        match self {
            CaseKind::Cfv => "cfv",
            CaseKind::Dr => "dr",
        }
    }
}

/// A clinical case by level ids: `cfv:MODEL:QUESTION` or `dr:MODEL:QUESTION[:RUN]` in a link
/// (`ccase=`). Model ids may contain `:`; [`CaseKey::parse`] resolves them against the bundle's levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseKey {
    pub kind: CaseKind,
    /// `model` level id.
    pub model: String,
    /// `statement` level id (the question).
    pub question: String,
    /// `repeat` level id of a demographic record's run; `None` = the first run.
    pub run: Option<String>,
}

impl CaseKey {
    /// The link form, `KIND:MODEL:QUESTION`, with `:RUN` when a run is named.
    pub fn value(&self) -> String {
        let run = self.run.as_ref().map_or(String::new(), |r| format!(":{r}"));
        format!("{}:{}:{}{run}", self.kind.key(), self.model, self.question)
    }

    /// Reads `KIND:MODEL:QUESTION[:RUN]` against the bundle's model, question and run (repeat level)
    /// ids: the longest model id that leaves a known question, or a known question and run, wins.
    ///
    /// # Errors
    /// A sentence naming what is wrong: the kind, or that no model, question (and run) of the bundle
    /// match.
    pub fn parse(
        value: &str,
        models: &[&str],
        questions: &[&str],
        runs: &[&str],
    ) -> Result<Self, String> {
        let (kind, rest) = if let Some(rest) = value.strip_prefix("cfv:") {
            (CaseKind::Cfv, rest)
        } else if let Some(rest) = value.strip_prefix("dr:") {
            (CaseKind::Dr, rest)
        } else {
            return Err(format!(
                "the case {value:?} does not start with \"cfv:\" (counterfactual) or \"dr:\" (demographic record)"
            ));
        };
        let mut candidates: Vec<&str> = models.to_vec();
        candidates.sort_by_key(|m| std::cmp::Reverse(m.len()));
        candidates
            .into_iter()
            .find_map(|m| {
                let q = rest.strip_prefix(m)?.strip_prefix(':')?;
                let key = |question: &str, run: Option<&str>| CaseKey {
                    kind,
                    model: m.to_string(),
                    question: question.to_string(),
                    run: run.map(str::to_string),
                };
                if questions.contains(&q) {
                    return Some(key(q, None));
                }
                let (q, r) = q.rsplit_once(':')?;
                (questions.contains(&q) && runs.contains(&r)).then(|| key(q, Some(r)))
            })
            .ok_or_else(|| {
                format!("the case {value:?} names no model and question of this bundle (expected {}:MODEL:QUESTION or {}:MODEL:QUESTION:RUN with level ids)", kind.key(), kind.key())
            })
    }
}

/// The cell of model `m`, question `q`, variant `c` and run `r` (level indices; other facets at their
/// first level).
pub fn cell_at(audit: &Audit, m: usize, q: usize, c: Option<usize>, r: usize) -> Option<usize> {
    let mut levels = vec![0; audit.file.facets.len()];
    *levels.get_mut(audit.model_facet)? = m;
    *levels.get_mut(audit.statement_facet)? = q;
    if let (Some(f), Some(c)) = (audit.condition_facet, c) {
        *levels.get_mut(f)? = c;
    }
    if let Some(f) = audit.repeat_facet {
        *levels.get_mut(f)? = r;
    }
    audit.cell_index(&levels)
}

/// Whether two answer letters are the same answer (trimmed, ASCII case ignored, as the core compares).
fn same_answer(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// One variant's answer in a demographic case.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantAnswer {
    /// Condition level index.
    pub condition: usize,
    /// Condition level id (`male-white`, …).
    pub id: String,
    /// The cell.
    pub cell: Option<usize>,
    /// The answer letter; `None` when unreadable or absent.
    pub letter: Option<String>,
    /// Whether the cell has a response at all.
    pub responded: bool,
    /// `Some(true)` when both this and the baseline answer are readable and differ.
    pub changed: Option<bool>,
}

/// A stereotype-judge output with `found: true` for one prefix of a demographic case (§3.5).
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// Condition level id of the prefix.
    pub prefix: String,
    pub severity: Option<Severity>,
    pub category: Option<String>,
    /// The judge's description (model text).
    pub description: Option<String>,
}

/// A demographic-robustness record (seed §3.4, Tables 3–4): one model × question × run, its
/// baseline and prefix answers, the stereotype judge's outputs, directions, prefix conflicts and EDD.
#[derive(Debug, Clone, PartialEq)]
pub struct DrCase {
    pub model: usize,
    pub question: usize,
    /// Run (repeat level index).
    pub run: usize,
    pub baseline: Option<VariantAnswer>,
    /// The prefix variants, in bundle order.
    pub prefixes: Vec<VariantAnswer>,
    /// The judge outputs that say `found: true`.
    pub flags: Vec<Flag>,
    /// Prefix ids whose judge output was unparseable (`found: null`).
    pub unparsed: Vec<String>,
    /// Judge outputs recorded for this record.
    pub judged: usize,
    /// `(prefix id, direction)` of recorded directions.
    pub directions: Vec<(String, Direction)>,
    /// `(prefix id, kind, detail)` of recorded prefix conflicts of this question.
    pub conflicts: Vec<(String, String, Option<String>)>,
    /// EDD of the record (Eq. 1) and the number of variants it was computed over.
    pub edd: Option<(f64, usize)>,
}

impl DrCase {
    /// Builds the record of model `m`, question `q` and run `run` (level indices; `run` 0 when the
    /// bundle has no repeat facet) from the bundle and the report.
    pub fn new(audit: &Audit, report: &ClinicalReport, m: usize, q: usize, run: usize) -> Self {
        let clinical = audit.file.clinical.as_ref();
        let model_id = level_id(audit, audit.model_facet, m);
        let question_id = level_id(audit, audit.statement_facet, q);
        let run_id = audit.repeat_facet.map(|f| level_id(audit, f, run));
        let baseline_c = atlas_core::clinical::metrics::baseline_index(audit);
        let read = |c: Option<usize>| {
            let cell = cell_at(audit, m, q, c, run);
            let (letter, responded) = match cell.map(|cell| answer(audit, cell)) {
                Some(Answer::Letter(l)) => (Some(l.to_string()), true),
                Some(Answer::Unreadable) => (None, true),
                _ => (None, false),
            };
            (cell, letter, responded)
        };
        let baseline = baseline_c.map(|b| {
            let (cell, letter, responded) = read(Some(b));
            VariantAnswer {
                condition: b,
                id: audit
                    .condition_facet
                    .map_or_else(String::new, |f| level_id(audit, f, b)),
                cell,
                letter,
                responded,
                changed: Some(false),
            }
        });
        let base_letter = baseline.as_ref().and_then(|b| b.letter.clone());
        let prefixes = audit
            .condition_facet
            .map(|f| {
                (0..audit.levels(f).len())
                    .filter(|c| Some(*c) != baseline_c)
                    .map(|c| {
                        let (cell, letter, responded) = read(Some(c));
                        let changed = match (&letter, &base_letter) {
                            (Some(a), Some(b)) => Some(!same_answer(a, b)),
                            _ => None,
                        };
                        VariantAnswer {
                            condition: c,
                            id: level_id(audit, f, c),
                            cell,
                            letter,
                            responded,
                            changed,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let same_record = |model: &str, statement: &str, repeat: &Option<String>| {
            model == model_id
                && statement == question_id
                && (repeat.is_none() || run_id.is_none() || repeat == &run_id)
        };
        let mut flags = Vec::new();
        let mut unparsed = Vec::new();
        let mut judged = 0;
        let mut directions = Vec::new();
        let mut conflicts = Vec::new();
        if let Some(cl) = clinical {
            for j in cl
                .stereotype
                .iter()
                .filter(|j| same_record(&j.model, &j.statement, &j.repeat))
            {
                judged += 1;
                match j.found {
                    Some(true) => flags.push(Flag {
                        prefix: j.condition.clone(),
                        severity: j.severity,
                        category: j.category.clone(),
                        description: j.description.clone(),
                    }),
                    Some(false) => {}
                    None => unparsed.push(j.condition.clone()),
                }
            }
            directions = cl
                .directions
                .iter()
                .filter(|d| same_record(&d.model, &d.statement, &d.repeat))
                .map(|d| (d.condition.clone(), d.direction))
                .collect();
            conflicts = cl
                .prefix_conflicts
                .iter()
                .filter(|p| p.statement == question_id)
                .map(|p| {
                    (
                        p.condition.clone(),
                        conflict_kind(p.kind).to_string(),
                        p.detail.clone(),
                    )
                })
                .collect();
        }
        let edd = report
            .edd
            .iter()
            .find(|e| {
                e.model == model_id
                    && e.statement == question_id
                    && (e.repeat.is_none() || e.repeat == run_id)
            })
            .map(|e| (e.edd, e.n_variants));
        DrCase {
            model: m,
            question: q,
            run,
            baseline,
            prefixes,
            flags,
            unparsed,
            judged,
            directions,
            conflicts,
            edd,
        }
    }

    /// The prefixes whose answer differs from the baseline answer.
    pub fn changed(&self) -> Vec<&VariantAnswer> {
        self.prefixes
            .iter()
            .filter(|p| p.changed == Some(true))
            .collect()
    }

    /// Robust under the recorded stress test (Table 3's "valid robust case"): the baseline and every
    /// prefix answer were read, every prefix kept the baseline answer, and no judge output flagged
    /// stereotype evidence.
    pub fn robust(&self) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.letter.is_some())
            && !self.prefixes.is_empty()
            && self.prefixes.iter().all(|p| p.changed == Some(false))
            && self.flags.is_empty()
    }
}

/// The cases of one heat-map cell: for model `m` and prefix `c` (level indices), every question × run
/// whose prefix answer differs from its baseline answer — the comparisons counted as changed by the
/// answer-change rate (§3.4) — as `(question, run, baseline letter, prefix letter)`.
pub fn changed_cases(audit: &Audit, m: usize, c: usize) -> Vec<(usize, usize, String, String)> {
    let Some(base) = atlas_core::clinical::metrics::baseline_index(audit) else {
        return Vec::new();
    };
    let runs = audit.facet_len(audit.repeat_facet);
    let mut out = Vec::new();
    for q in 0..audit.levels(audit.statement_facet).len() {
        for r in 0..runs {
            let letter = |c| match cell_at(audit, m, q, Some(c), r).map(|x| answer(audit, x)) {
                Some(Answer::Letter(l)) => Some(l.to_string()),
                _ => None,
            };
            if let (Some(b), Some(a)) = (letter(base), letter(c)) {
                if !same_answer(&a, &b) {
                    out.push((q, r, b, a));
                }
            }
        }
    }
    out
}

/// Index of the counterfactual record of model id `model` and question id `question` (the first when a
/// bundle holds several runs).
pub fn counterfactual_of(clinical: &Clinical, model: &str, question: &str) -> Option<usize> {
    clinical
        .counterfactuals
        .iter()
        .position(|c| c.model == model && c.statement == question)
}

/// The seed's four example kinds (Tables 1–4): the first case of each in bundle order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Examples {
    /// Table 1: a valid counterfactual.
    pub valid_cfv: Option<CaseKey>,
    /// Table 2: an invalid counterfactual.
    pub invalid_cfv: Option<CaseKey>,
    /// Table 3: a robust demographic case.
    pub robust_dr: Option<CaseKey>,
    /// Table 4: a non-robust demographic case.
    pub non_robust_dr: Option<CaseKey>,
}

impl Examples {
    /// Finds the examples: counterfactuals in record order; demographic records model by model, question
    /// by question.
    pub fn find(audit: &Audit, report: &ClinicalReport) -> Self {
        let mut out = Examples::default();
        if let Some(cl) = audit.file.clinical.as_ref() {
            let key = |c: &Counterfactual| CaseKey {
                kind: CaseKind::Cfv,
                model: c.model.clone(),
                question: c.statement.clone(),
                run: None,
            };
            out.valid_cfv = cl
                .counterfactuals
                .iter()
                .find(|c| c.outcome == CfvOutcome::Valid)
                .map(key);
            out.invalid_cfv = cl
                .counterfactuals
                .iter()
                .find(|c| c.outcome != CfvOutcome::Valid)
                .map(key);
        }
        'models: for m in 0..audit.levels(audit.model_facet).len() {
            for q in 0..audit.levels(audit.statement_facet).len() {
                let case = DrCase::new(audit, report, m, q, 0);
                if case.baseline.is_none() {
                    break 'models;
                }
                let key = || CaseKey {
                    kind: CaseKind::Dr,
                    model: level_id(audit, audit.model_facet, m),
                    question: level_id(audit, audit.statement_facet, q),
                    run: None,
                };
                if case.robust() {
                    out.robust_dr.get_or_insert_with(key);
                } else if !case.changed().is_empty() || !case.flags.is_empty() {
                    out.non_robust_dr.get_or_insert_with(key);
                }
                if out.robust_dr.is_some() && out.non_robust_dr.is_some() {
                    break 'models;
                }
            }
        }
        out
    }
}

// ------------------------------------------------------------------------------------------ text

fn level_id(audit: &Audit, facet: usize, level: usize) -> String {
    audit
        .levels(facet)
        .get(level)
        .map(|l| l.id.clone())
        .unwrap_or_default()
}

fn statement_attr(audit: &Audit, q: usize, key: &str) -> Option<String> {
    atlas_core::clinical::metrics::statement_attr(audit, q, key).map(str::to_string)
}

/// The question stem (the statement level's `text`).
fn question_text(audit: &Audit, q: usize) -> String {
    audit
        .statements
        .get(q)
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

/// `B: 1,500 units` (the option text from the question's `options`), or the letter alone.
fn option_text(audit: &Audit, q: usize, letter: &str) -> String {
    let text = audit
        .levels(audit.statement_facet)
        .get(q)
        .and_then(|l| l.attributes.get("options"))
        .and_then(|o| {
            o.as_object()?
                .iter()
                .find(|(k, _)| same_answer(k, letter))
                .and_then(|(_, v)| v.as_str().map(str::to_string))
        });
    match text {
        Some(t) => format!("{letter}: {t}"),
        None => letter.to_string(),
    }
}

/// `A: …; B: …` for the question's options, in their stored order.
fn options_line(audit: &Audit, q: usize) -> Option<String> {
    let options = audit
        .levels(audit.statement_facet)
        .get(q)?
        .attributes
        .get("options")?
        .as_object()?;
    let parts: Vec<String> = options
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or("")))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The seed's words for an outcome (CFV result row; Table 6 interpretations, §3.3).
pub fn outcome_explanation(outcome: CfvOutcome) -> (&'static str, &'static str) {
    match outcome {
        CfvOutcome::Valid => ("VALID", "The answer changed to the target and the change was judged plausible and limited in scope (§3.3)."),
        CfvOutcome::SameDirection => ("INVALID, SAME DIRECTION", "The modification preserves the original diagnostic direction: the answer did not move to the target (Table 6)."),
        CfvOutcome::TooDramatic => ("INVALID, TOO DRAMATIC", "The case is changed too broadly to remain a minimal counterfactual (Table 6)."),
        CfvOutcome::Circular => ("INVALID, CIRCULAR", "The output restates the target answer instead of changing clinical facts (Table 6)."),
        CfvOutcome::FormatFailure => ("INVALID, FORMAT FAILURE", "The generated record cannot be parsed reliably (Table 6)."),
        CfvOutcome::Implausible => ("INVALID, IMPLAUSIBLE", "The plausibility judge found the change implausible (§3.3, §3.5)."),
        CfvOutcome::WrongTarget => ("INVALID, WRONG TARGET", "The answer moved, but not to the target option (§4.3)."),
    }
}

/// Words for a plausibility score (§3.5).
fn plausibility_word(score: u8) -> &'static str {
    match score {
        1 => "impossible",
        2 => "unlikely",
        3 => "plausible",
        4 => "realistic",
        5 => "common",
        _ => "outside the 1–5 scale",
    }
}

fn conflict_kind(kind: atlas_core::clinical::ConflictKind) -> &'static str {
    match kind {
        atlas_core::clinical::ConflictKind::Age => "age",
        atlas_core::clinical::ConflictKind::Sex => "sex",
        atlas_core::clinical::ConflictKind::AgeSex => "age and sex",
    }
}

/// `text` cut to at most `max` characters, with `…` when cut.
fn excerpt(text: &str, max: usize) -> String {
    let t = text.trim();
    if t.chars().count() <= max {
        t.to_string()
    } else {
        let mut out: String = t.chars().take(max).collect();
        out.push('…');
        out
    }
}

fn fraction_pct(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{:.2}", 100.0 * v))
}

// ------------------------------------------------------------------------------------------ tables

/// The per-model profile in the layout of seed Table 5, each metric with its unit and denominator.
pub fn profile_table(audit: &Audit, report: &ClinicalReport) -> Table {
    let mut rows = Vec::new();
    for (m, p) in report.profile.iter().enumerate() {
        let id = &p.model;
        let attempts = report
            .cfv
            .iter()
            .find(|r| &r.model == id)
            .map_or(0, |r| r.attempts);
        let comparisons = report
            .answer_change_overall
            .iter()
            .find(|r| &r.model == id)
            .map_or(0, |r| r.comparisons);
        let records = report.edd.iter().filter(|r| &r.model == id).count();
        let (flags, questions) = report
            .stereotype
            .per_model
            .iter()
            .find(|r| &r.model == id)
            .map_or((0, 0), |r| (r.flags, r.questions));
        let n = |key: &str, v: usize| {
            Cell::number(v.to_string(), format!("{id}/{key}"), Some(v as f64))
        };
        rows.push(vec![
            Cell::text(level_label(audit, audit.model_facet, m)),
            Cell::number(
                fraction_pct(p.accuracy),
                format!("{id}/accuracy"),
                p.accuracy,
            ),
            n("answers", p.answered),
            Cell::number(
                fraction_pct(p.accuracy_unreadable_wrong),
                format!("{id}/accuracy_unreadable_wrong"),
                p.accuracy_unreadable_wrong,
            ),
            n("asked", p.asked),
            Cell::number(fraction_pct(p.cfv), format!("{id}/cfv"), p.cfv),
            n("attempts", attempts),
            Cell::number(
                fraction_pct(p.answer_change),
                format!("{id}/answer_change"),
                p.answer_change,
            ),
            n("comparisons", comparisons),
            Cell::number(
                p.mean_edd.map_or("—".into(), |v| format!("{v:.3}")),
                format!("{id}/mean_edd"),
                p.mean_edd,
            ),
            n("records", records),
            Cell::number(
                p.flags_per_question
                    .map_or("—".into(), |v| format!("{v:.2}")),
                format!("{id}/flags_per_question"),
                p.flags_per_question,
            ),
            n("flags", flags),
            n("questions", questions),
        ]);
    }
    Table {
        id: "clinical-table5".into(),
        title: "Table 5 layout — model-level summary across counterfactual and demographic evaluations".into(),
        caption: format!(
            "bundle {} · baseline variant {} · accuracy on baseline answers (unit: answer) over readable answers, and beside it with unreadable answers counted wrong (all asked questions in the denominator, as AMQA's published tables count them) · CFV = valid / counterfactual attempts (unit: attempt) · answer change = changed / baseline–prefix comparisons with both answers read (unit: comparison) · mean EDD over records (Eq. 1; 1 − mean pairwise cosine of the normalised explanation embeddings) · flags/q = stereotype flags / judged questions (unit: judged comparison) · computed in this page",
            report.bundle,
            report.baseline.as_deref().unwrap_or("none")
        ),
        header: [
            "Model",
            "Accuracy (%)",
            "n answers",
            "Accuracy, unreadable counted wrong (%)",
            "n asked",
            "CFV (%)",
            "n attempts",
            "Answer change (%)",
            "n comparisons",
            "Mean EDD",
            "n records",
            "Flags/q",
            "n flags",
            "n questions",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: Vec::new(),
    }
}

/// The failure taxonomy over all models (seed Table 6).
pub fn failure_table(report: &ClinicalReport) -> Table {
    let rows = report
        .failure_modes
        .iter()
        .filter(|r| r.model.is_none())
        .map(|r| {
            let key = r.outcome.as_str();
            vec![
                Cell::text(key),
                Cell::number(
                    r.count.to_string(),
                    format!("{key}/count"),
                    Some(r.count as f64),
                ),
                Cell::number(fraction_pct(r.share), format!("{key}/share"), r.share),
                Cell::text(outcome_explanation(r.outcome).1),
            ]
        })
        .collect::<Vec<_>>();
    let invalid: usize = report
        .failure_modes
        .iter()
        .filter(|r| r.model.is_none())
        .map(|r| r.count)
        .sum();
    Table {
        id: "clinical-table6".into(),
        title: "Table 6 layout — taxonomy of invalid counterfactuals, all models".into(),
        caption: format!(
            "bundle {} · {invalid} invalid attempts (unit: attempt) · share = count / invalid attempts",
            report.bundle
        ),
        header: ["Failure type", "Count", "Share (%)", "Interpretation"]
            .map(String::from)
            .to_vec(),
        rows,
        notes: if invalid == 0 {
            vec!["No invalid counterfactual attempts in this bundle.".into()]
        } else {
            Vec::new()
        },
    }
}

/// Severity classes of the stereotype flags (seed Table 7, pooled over models as in the seed), with
/// each model's count beside it when the bundle has more than one model.
pub fn severity_table(report: &ClinicalReport) -> Table {
    let s = &report.stereotype;
    let models: Vec<&str> = if s.per_model.len() > 1 {
        s.per_model.iter().map(|m| m.model.as_str()).collect()
    } else {
        Vec::new()
    };
    let rows = s
        .by_severity
        .iter()
        .map(|r| {
            let key = r.severity.map_or("none", Severity::as_str);
            vec![
                Cell::text(match r.severity {
                    Some(Severity::ClinicallyDangerous) => "Clinically dangerous",
                    Some(Severity::ClinicallyMisleading) => "Clinically misleading",
                    Some(Severity::SociallyInappropriate) => "Socially inappropriate",
                    None => "(no severity given)",
                }),
                Cell::number(
                    r.count.to_string(),
                    format!("{key}/count"),
                    Some(r.count as f64),
                ),
                Cell::number(fraction_pct(r.share), format!("{key}/share"), r.share),
            ]
            .into_iter()
            .chain(models.iter().zip(&r.per_model).map(|(m, &n)| {
                Cell::number(n.to_string(), format!("{key}/count/{m}"), Some(n as f64))
            }))
            .collect()
        })
        .collect();
    Table {
        id: "clinical-table7".into(),
        title: "Table 7 layout — severity classes of stereotype evidence flags".into(),
        caption: format!(
            "bundle {} · {} flags of {} judged comparisons (unit: judged comparison; unparseable judge outputs left out) · share = count / flags · automated judgements, not confirmed by clinicians",
            report.bundle, s.flags, s.judged
        ),
        header: ["Severity class", "Count", "Share (%)"]
            .map(String::from)
            .into_iter()
            .chain(models.iter().map(|m| format!("{m}: count")))
            .collect(),
        rows,
        notes: Vec::new(),
    }
}

// ------------------------------------------------------------------------------------------ charts

/// Chart data of the view, built once per bundle from the report.
/// Each chart, or the sentence that says why it is not drawn (nothing of its kind in the bundle).
struct Figures {
    cfv: Result<ChartSpec, String>,
    failures: Result<ChartSpec, String>,
    heat: Result<ChartSpec, String>,
    directions: Result<ChartSpec, String>,
    categories: Result<ChartSpec, String>,
    /// `(model index, condition index)` of each heat-map cell, row-major.
    heat_cells: Vec<(usize, usize)>,
}

fn figures(audit: &Audit, report: &ClinicalReport) -> Figures {
    let bundle = &report.bundle;
    let models: Vec<String> = (0..audit.levels(audit.model_facet).len())
        .map(|m| level_label(audit, audit.model_facet, m))
        .collect();
    let ids = audit.model_ids();
    let pos = |id: &str| ids.iter().position(|m| *m == id);
    let prop = |k: usize, n: usize| {
        Some(Proportion {
            k: k as u64,
            n: n as u64,
        })
    };
    // CFV by model (Fig. 2): all attempts, then each difficulty tier present.
    let mut series = vec!["all questions".to_string()];
    for d in &report.cfv_by_difficulty {
        let name = d
            .difficulty
            .clone()
            .unwrap_or_else(|| "no difficulty".into());
        if !series.contains(&name) {
            series.push(name);
        }
    }
    if series.len() == 2 && series[1] == "no difficulty" {
        series.truncate(1);
    }
    let mut values = vec![vec![None; series.len()]; models.len()];
    for r in &report.cfv {
        if let Some(m) = pos(&r.model) {
            values[m][0] = prop(r.valid, r.attempts);
        }
    }
    for d in &report.cfv_by_difficulty {
        let name = d
            .difficulty
            .clone()
            .unwrap_or_else(|| "no difficulty".into());
        if let (Some(m), Some(s)) = (pos(&d.model), series.iter().position(|x| *x == name)) {
            values[m][s] = prop(d.valid, d.attempts);
        }
    }
    let cfv = ChartSpec::RateBars(RateBars {
        rows: models.clone(),
        series,
        values,
        axis_label: "CFV (% of counterfactual attempts)".into(),
        caption: format!("CFV by model and difficulty · {bundle}"),
    });

    // Failure modes (Fig. 3): counts of each invalid outcome per model.
    let invalid: Vec<CfvOutcome> = CfvOutcome::ALL
        .into_iter()
        .filter(|o| *o != CfvOutcome::Valid)
        .collect();
    let mut counts = vec![vec![0u64; invalid.len()]; models.len()];
    for r in report.failure_modes.iter() {
        let (Some(m), Some(k)) = (
            r.model.as_deref().and_then(pos),
            invalid.iter().position(|o| *o == r.outcome),
        ) else {
            continue;
        };
        counts[m][k] = r.count as u64;
    }
    let failures = ChartSpec::Stacked(StackedBars {
        rows: models.clone(),
        classes: invalid.iter().map(|o| o.as_str().to_string()).collect(),
        colors: FAILURE_COLORS.to_vec(),
        counts,
        scale: StackScale::Count,
        axis_label: "invalid counterfactual attempts".into(),
        caption: format!("Failure modes by model · {bundle}"),
    });

    // Answer-change heat map (Fig. 4): model × prefix.
    let cf = audit.condition_facet;
    let base = atlas_core::clinical::metrics::baseline_index(audit);
    let prefixes: Vec<usize> = cf.map_or_else(Vec::new, |f| {
        (0..audit.levels(f).len())
            .filter(|c| Some(*c) != base)
            .collect()
    });
    let prefix_ids: Vec<String> = prefixes
        .iter()
        .map(|&c| cf.map_or_else(String::new, |f| level_id(audit, f, c)))
        .collect();
    let cells = (0..models.len())
        .map(|m| {
            prefix_ids
                .iter()
                .map(|p| {
                    report
                        .answer_change
                        .iter()
                        .find(|r| r.model == ids[m] && &r.condition == p)
                        .and_then(|r| prop(r.changed, r.comparisons))
                })
                .collect()
        })
        .collect();
    let heat_cells = (0..models.len())
        .flat_map(|m| prefixes.iter().map(move |&c| (m, c)))
        .collect();
    let heat = ChartSpec::HeatMap(HeatMap {
        rows: models.clone(),
        columns: prefix_ids,
        cells,
        measure: "answer change".into(),
        unit: "comparisons".into(),
        caption: format!("Answer-change rate by model and prefix · {bundle}"),
    });

    // Directions (Fig. 5).
    let mut counts = vec![vec![0u64; Direction::ALL.len()]; models.len()];
    for r in &report.directions {
        if let (Some(m), Some(k)) = (
            pos(&r.model),
            Direction::ALL.iter().position(|d| *d == r.direction),
        ) {
            counts[m][k] = r.count as u64;
        }
    }
    let directions = ChartSpec::Stacked(StackedBars {
        rows: models.clone(),
        classes: Direction::ALL
            .iter()
            .map(|d| d.as_str().to_string())
            .collect(),
        colors: DIRECTION_COLORS.to_vec(),
        counts,
        scale: StackScale::Share,
        axis_label: "share of the model's direction-classified answer changes (%)".into(),
        caption: format!("Direction of answer changes · {bundle}"),
    });

    // Stereotype categories (Fig. 6): share of all flags per category, pooled as in the seed; with
    // several models also each model's share of its own flags.
    let st = &report.stereotype;
    let split = st.per_model.len() > 1;
    let categories = ChartSpec::RateBars(RateBars {
        rows: st
            .by_category
            .iter()
            .map(|c| c.category.clone().unwrap_or_else(|| "(no category)".into()))
            .collect(),
        series: std::iter::once(if split { "all models" } else { "flags" }.to_string())
            .chain(
                st.per_model
                    .iter()
                    .filter(|_| split)
                    .map(|m| m.model.clone()),
            )
            .collect(),
        values: st
            .by_category
            .iter()
            .map(|c| {
                std::iter::once(prop(c.count, st.flags))
                    .chain(
                        st.per_model
                            .iter()
                            .zip(&c.per_model)
                            .filter(|_| split)
                            .map(|(m, &n)| prop(n, m.flags)),
                    )
                    .collect()
            })
            .collect(),
        axis_label: if split {
            "share of the stereotype flags: of all models, and of each model's own (%)".into()
        } else {
            "share of all stereotype flags (%)".into()
        },
        caption: format!("Stereotype evidence categories · {bundle}"),
    });
    let unless = |empty: bool, spec: ChartSpec, why: &str| {
        if empty {
            Err(why.to_string())
        } else {
            Ok(spec)
        }
    };
    let invalid: usize = report
        .failure_modes
        .iter()
        .filter(|r| r.model.is_none())
        .map(|r| r.count)
        .sum();
    Figures {
        cfv: unless(
            report.cfv.iter().all(|r| r.attempts == 0),
            cfv,
            "This bundle records no counterfactual attempts (clinical.counterfactuals), so there is no CFV to draw.",
        ),
        failures: unless(
            invalid == 0,
            failures,
            "No invalid counterfactual attempt in this bundle: there are no failure modes to draw.",
        ),
        heat: unless(
            report.answer_change.is_empty(),
            heat,
            "This bundle names no baseline variant (clinical.baseline), so no answer can be compared with a baseline answer.",
        ),
        directions: unless(
            report.directions.is_empty(),
            directions,
            "This bundle records no directions of answer changes (clinical.directions).",
        ),
        categories: unless(
            report.stereotype.flags == 0,
            categories,
            "The stereotype judge flagged no comparison in this bundle (no clinical.stereotype record with found: true).",
        ),
        heat_cells,
    }
}

// ------------------------------------------------------------------------------------------ view

/// Shared handles of the Clinical view.
#[derive(Clone)]
struct Ctx {
    loaded: Arc<Loaded>,
    report: Arc<ClinicalReport>,
    texts_allowed: Signal<bool>,
    shards: BundleShards,
    open: RwSignal<Option<CaseKey>>,
    /// The URL's `ccase=` and `view=` (contexts of [`crate::state::url`]).
    url_case: Option<ClinicalCase>,
    focused: Option<FocusedView>,
}

impl Ctx {
    /// Opens `key`: shows it, writes it into the URL (`ccase=`, `view=clinical-case`) and brings the case
    /// view into sight.
    fn open_case(&self, key: CaseKey) {
        if let Some(c) = &self.url_case {
            c.0.set(Some(key.value()));
        }
        if let Some(f) = self.focused {
            f.0.set(Some("clinical-case".into()));
        }
        self.open.set(Some(key));
        crate::state::url::focus_view("clinical-case".into());
    }

    /// The shareable view of `key` (its link is [`page_link`] / [`absolute_link`] of it).
    fn link_view(&self, key: &CaseKey) -> ViewState {
        ViewState {
            bundle: bundle_param(&self.loaded),
            bundle_id: Some(self.loaded.audit.metadata().id.clone()),
            view: Some("clinical-case".into()),
            ccase: Some(key.value()),
            ..ViewState::default()
        }
    }

    /// The text of `cell` as a view: hidden before the warning is acknowledged, loading, missing, or
    /// the text cut to `max` characters (as a text node).
    fn text(&self, cell: Option<usize>, max: usize) -> impl IntoView {
        let ctx = self.clone();
        move || {
            if !ctx.texts_allowed.get() {
                return hidden_text();
            }
            let Some(cell) = cell else {
                return view! { <span class="hint">"(no response)"</span> }.into_any();
            };
            let t = ctx
                .shards
                .with(|s| match text_at(&ctx.loaded.audit, s, cell) {
                    TextAt::Text(t) => Ok(excerpt(t, max)),
                    TextAt::NotLoaded(k) => Err((Some(k), "loading text…".to_string())),
                    TextAt::Loading => Err((None, "loading text…".to_string())),
                    TextAt::Failed(e) => Err((None, format!("text unavailable: {e}"))),
                    TextAt::Absent => {
                        Err((None, "(the bundle holds no text for this response)".into()))
                    }
                });
            match t {
                Ok(t) => view! { <span class="model-text">{t}</span> }.into_any(),
                Err((k, message)) => {
                    if let Some(k) = k {
                        ctx.shards.load(k);
                    }
                    view! { <span class="hint">{message}</span> }.into_any()
                }
            }
        }
    }

    /// A free text written by a model or judge (`change`, `description`, …): hidden before the warning is
    /// acknowledged, else as a text node.
    fn model_text(&self, text: Option<String>) -> impl IntoView {
        let allowed = self.texts_allowed;
        move || match (&text, allowed.get()) {
            (_, false) => hidden_text(),
            (Some(t), true) => view! { <span class="model-text">{t.clone()}</span> }.into_any(),
            (None, true) => view! { <span class="hint">"(not recorded)"</span> }.into_any(),
        }
    }
}

/// What stands in for a model text before the content warning is acknowledged.
fn hidden_text() -> AnyView {
    view! { <span class="hidden-text">"(model text hidden until the content warning is acknowledged)"</span> }
        .into_any()
}

/// The Clinical section of a bundle with a `clinical` object.
#[component]
pub fn ClinicalView(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let audit = &loaded.audit;
    let Some(clinical) = audit.file.clinical.clone() else {
        return ().into_any();
    };
    let report = Arc::new(analyze(audit));
    let warning = audit.metadata().content_warning.clone();
    let has_warning = warning.is_some();
    let texts_allowed = Signal::derive(move || !has_warning || state.warning_acknowledged.get());
    let ctx = Ctx {
        loaded: loaded.clone(),
        report: report.clone(),
        texts_allowed,
        shards: state.shards.for_bundle(&loaded),
        open: RwSignal::new(None),
        url_case: use_context::<ClinicalCase>(),
        focused: use_context::<FocusedView>(),
    };
    let bundle = audit.metadata().id.clone();
    let models = audit.model_ids();
    let questions: Vec<&str> = audit
        .levels(audit.statement_facet)
        .iter()
        .map(|l| l.id.as_str())
        .collect();
    let runs: Vec<&str> = audit
        .repeat_facet
        .map(|f| audit.levels(f).iter().map(|l| l.id.as_str()).collect())
        .unwrap_or_default();

    // The opening link's case (`ccase=`), if it is for this bundle. The URL's case is cleared when this
    // bundle's view goes (another bundle is opened), so a link's case is taken by the first bundle only.
    let notice = RwSignal::new(None::<String>);
    let url_case = ctx.url_case.clone();
    if let Some(c) = url_case.as_ref().map(|c| c.0) {
        on_cleanup(move || {
            c.try_set(None);
        });
    }
    let link_case = url_case.as_ref().and_then(|c| c.0.get_untracked());
    if let Some(value) = link_case {
        match url_case.as_ref().and_then(|c| c.1.clone()) {
            Some(other) if other != bundle => {
                notice.set(Some(format!("The link names clinical case {value:?} of bundle {other:?}; this is {bundle:?}, so no case was opened.")));
                if let Some(c) = &url_case {
                    c.0.set(None);
                }
            }
            _ => match CaseKey::parse(&value, &models, &questions, &runs) {
                Ok(key) => {
                    let ok = key.kind == CaseKind::Dr
                        || counterfactual_of(&clinical, &key.model, &key.question).is_some();
                    if ok {
                        ctx.open.set(Some(key));
                        crate::state::url::focus_view("clinical-case".into());
                    } else {
                        notice.set(Some(format!("The link names the counterfactual of {} on {}, but this bundle records none.", key.model, key.question)));
                    }
                }
                Err(e) => notice.set(Some(format!(
                    "The link's clinical case could not be opened: {e}."
                ))),
            },
        }
    }

    let figures = figures(audit, &report);
    let spec = |s: Result<ChartSpec, String>| -> Spec { Memo::new(move |_| s.clone()) };
    let heat_cells = figures.heat_cells.clone();
    let picked = RwSignal::new(None::<(usize, usize)>);
    let on_heat = Callback::new(move |i: usize| {
        if let Some(&cell) = heat_cells.get(i) {
            picked.set(Some(cell));
            crate::state::url::focus_view("clinical-cell-cases".into());
        }
    });
    let spearman = &report.spearman_difficulty_validity;
    let spearman_line = format!(
        "Spearman correlation of question difficulty (EASY = 1, MEDIUM = 2, HARD = 3) and validity (valid = 1) over attempts: {} (n = {} attempts with a difficulty; descriptive only, §3.5).",
        spearman.rho.map_or("undefined".to_string(), |r| format!("r = {r:.3}")),
        spearman.n
    );
    let examples = Examples::find(audit, &report);
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let sizes = [
        count(models.len(), "model", "models"),
        count(questions.len(), "question", "questions"),
        count(
            audit.facet_len(audit.condition_facet),
            "variant",
            "variants",
        ),
        count(audit.facet_len(audit.repeat_facet), "run", "runs"),
    ]
    .join(" × ");

    let content_warning = warning.map(|w| {
        view! {
            <Show when=move || !state.warning_acknowledged.get()>
                <div class="content-warning" role="note" id="clinical-content-warning">
                    <p><strong>"Content warning. "</strong>{w.clone()}</p>
                    <p>"Model explanations, generated changes and judge descriptions stay hidden until you acknowledge this warning; answers and counts are shown."</p>
                    <button id="clinical-show-texts" on:click=move |_| state.warning_acknowledged.set(true)>
                        "I understand — show model texts"
                    </button>
                </div>
            </Show>
        }
    });
    let cell_ctx = ctx.clone();
    let case_ctx = ctx.clone();
    let picker_ctx = ctx.clone();
    view! {
        <section class="clinical" id="clinical" data-view="clinical" aria-labelledby="clinical-title">
            <h2 id="clinical-title">"Clinical perturbation audit"</h2>
            <p class="provenance" id="clinical-provenance">
                {format!(
                    "Bundle {bundle} · protocol {} · baseline variant {} · {sizes} · recomputed in this page from the bundle (seed 001: CFV §3.3, demographic robustness §3.4, metrics §3.5, Tables 5–7, Figs. 2–6).",
                    clinical.protocol,
                    clinical.baseline.as_deref().unwrap_or("none"),
                )}
            </p>
            <p>
                "The metrics operate at different units (§3.4): CFV on counterfactual attempts, answer change on baseline–prefix comparisons, EDD on model × question records, stereotype flags on judged comparisons. "
                "All judgements in a bundle are automated unless it says otherwise; they screen cases for review and do not establish clinical validity."
            </p>
            {content_warning}
            {move || notice.get().map(|n| view! { <p class="error" role="alert" id="clinical-notice">{n}</p> })}
            {crate::ui::table::table_view(&profile_table(audit, &report), "clinical", 3)}
            <div class="atlas-grid">
                <ChartPanel panel="clinical-cfv" title="CFV by model and difficulty (Fig. 2)" what="Grouped bar chart: each model's counterfactual validity (% of attempts), for all questions and per difficulty tier." spec=spec(figures.cfv)/>
                <ChartPanel panel="clinical-failures" title="Failure modes by model (Fig. 3)" what="Stacked bar chart: each model's invalid counterfactual attempts by failure type (counts)." spec=spec(figures.failures)/>
                <ChartPanel panel="clinical-heatmap" title="Answer-change rate by model and prefix (Fig. 4)" what="Heat map: the share of baseline–prefix comparisons whose answer changed, per model (rows) and demographic prefix (columns)." spec=spec(figures.heat) on_activate=on_heat/>
                <ChartPanel panel="clinical-directions" title="Direction of answer changes (Fig. 5)" what="Stacked bar chart: each model's direction-classified answer changes by direction, as shares." spec=spec(figures.directions)/>
                <ChartPanel panel="clinical-categories" title="Stereotype evidence categories (Fig. 6)" what="Bar chart: the share of all stereotype flags in each category." spec=spec(figures.categories)/>
            </div>
            <p class="provenance" id="clinical-spearman">{spearman_line}</p>
            <CellCases ctx=cell_ctx picked/>
            {crate::ui::table::table_view(&failure_table(&report), "clinical", 3)}
            {crate::ui::table::table_view(&severity_table(&report), "clinical", 3)}
            <CasePicker ctx=picker_ctx examples/>
            {move || case_ctx.open.get().map(|key| view! { <CaseView ctx=case_ctx.clone() key/> })}
        </section>
    }
    .into_any()
}

/// The non-robust cases of the heat-map cell picked: every question whose answer under that prefix
/// differs from the baseline answer, each linking to its demographic case view.
#[component]
fn CellCases(ctx: Ctx, picked: RwSignal<Option<(usize, usize)>>) -> impl IntoView {
    let body = move || {
        let (m, c) = picked.get()?;
        let audit = &ctx.loaded.audit;
        let model = level_label(audit, audit.model_facet, m);
        let model_id = level_id(audit, audit.model_facet, m);
        let prefix = audit
            .condition_facet
            .map_or_else(String::new, |f| level_id(audit, f, c));
        let row = ctx
            .report
            .answer_change
            .iter()
            .find(|r| r.model == model_id && r.condition == prefix);
        let cases = changed_cases(audit, m, c);
        let summary = match row {
            Some(r) => format!(
                "{model} under {prefix}: answer changed in {} of {} comparisons ({}%). Non-robust cases:",
                r.changed,
                r.comparisons,
                fraction_pct(r.rate)
            ),
            None => format!("{model} under {prefix}: no comparisons."),
        };
        let runs = audit.facet_len(audit.repeat_facet);
        let items = cases
            .into_iter()
            .map(|(q, r, base, now)| {
                let key = CaseKey {
                    kind: CaseKind::Dr,
                    model: model_id.clone(),
                    question: level_id(audit, audit.statement_facet, q),
                    run: (runs > 1)
                        .then(|| audit.repeat_facet.map(|f| level_id(audit, f, r)))
                        .flatten(),
                };
                let href = page_link(&ctx.link_view(&key));
                let run = if runs > 1 {
                    audit
                        .repeat_facet
                        .map(|f| format!(" (run {})", level_id(audit, f, r)))
                        .unwrap_or_default()
                } else {
                    String::new()
                };
                let text = format!("{}{run}: baseline {base} → {now}", key.question);
                let ctx = ctx.clone();
                let value = key.value();
                view! {
                    <li>
                        <a href=href data-case=value on:click=move |ev: leptos::ev::MouseEvent| {
                            ev.prevent_default();
                            ctx.open_case(key.clone());
                        }>{text}</a>
                    </li>
                }
            })
            .collect_view();
        Some(view! {
            <p id="clinical-cell-summary" data-model=model_id.clone() data-prefix=prefix.clone()>{summary}</p>
            <ul class="cell-cases" id="clinical-cell-list">{items}</ul>
        })
    };
    view! {
        <div class="clinical-cell-cases" id="clinical-cell-cases" data-view="clinical-cell-cases" tabindex="-1" aria-live="polite">
            <h3>"Non-robust cases of a heat-map cell"</h3>
            {move || if picked.with(Option::is_none) {
                Some(view! { <p class="hint">"Click a cell of the heat map (or focus it, move with the arrow keys and press Enter) to list the questions whose answer that prefix changed."</p> })
            } else {
                None
            }}
            {body}
        </div>
    }
}

/// Opens any case by model and question, or the first example of each of the seed's Tables 1–4.
#[component]
fn CasePicker(ctx: Ctx, examples: Examples) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let kind = RwSignal::new(CaseKind::Dr);
    let model = RwSignal::new(0usize);
    let question = RwSignal::new(0usize);
    let run = RwSignal::new(0usize);
    let runs = audit.facet_len(audit.repeat_facet);
    let run_options = (0..runs)
        .map(|r| {
            let id = audit
                .repeat_facet
                .map_or_else(|| (r + 1).to_string(), |f| level_id(audit, f, r));
            view! { <option value=r.to_string()>{id}</option> }
        })
        .collect_view();
    let models = (0..audit.levels(audit.model_facet).len())
        .map(|m| view! { <option value=m.to_string()>{level_label(audit, audit.model_facet, m)}</option> })
        .collect_view();
    let questions = audit
        .levels(audit.statement_facet)
        .iter()
        .enumerate()
        .map(|(q, l)| view! { <option value=q.to_string()>{l.id.clone()}</option> })
        .collect_view();
    let open_ctx = ctx.clone();
    let open = move |_| {
        let audit = &open_ctx.loaded.audit;
        let kind = kind.get_untracked();
        open_ctx.open_case(CaseKey {
            kind,
            model: level_id(audit, audit.model_facet, model.get_untracked()),
            question: level_id(audit, audit.statement_facet, question.get_untracked()),
            run: (kind == CaseKind::Dr && audit.facet_len(audit.repeat_facet) > 1)
                .then(|| {
                    audit
                        .repeat_facet
                        .map(|f| level_id(audit, f, run.get_untracked()))
                })
                .flatten(),
        });
    };
    let example = |id: &'static str, label: &'static str, key: Option<CaseKey>| {
        let ctx = ctx.clone();
        let disabled = key.is_none();
        view! {
            <button id=id disabled=disabled title=disabled.then_some("none in this bundle") on:click=move |_| {
                if let Some(k) = key.clone() {
                    ctx.open_case(k);
                }
            }>{label}</button>
        }
    };
    view! {
        <div class="clinical-picker" id="clinical-picker" role="group" aria-labelledby="clinical-picker-title">
            <h3 id="clinical-picker-title">"Case views (Tables 1–4 layout)"</h3>
            <div class="inspector-actions">
                {example("clinical-example-valid", "Valid counterfactual (Table 1)", examples.valid_cfv)}
                {example("clinical-example-invalid", "Invalid counterfactual (Table 2)", examples.invalid_cfv)}
                {example("clinical-example-robust", "Robust demographic case (Table 3)", examples.robust_dr)}
                {example("clinical-example-nonrobust", "Non-robust demographic case (Table 4)", examples.non_robust_dr)}
            </div>
            <div class="inspector-filters">
                <label class="filter">
                    <span class="name">"Test"</span>
                    <select id="clinical-pick-kind" on:change=move |ev| kind.set(if event_target_value(&ev) == "cfv" { CaseKind::Cfv } else { CaseKind::Dr })>
                        <option value="dr">"Demographic robustness (§3.4)"</option>
                        <option value="cfv">"Counterfactual validity (§3.3)"</option>
                    </select>
                </label>
                <label class="filter">
                    <span class="name">"Model"</span>
                    <select id="clinical-pick-model" on:change=move |ev| model.set(event_target_value(&ev).parse().unwrap_or(0))>{models}</select>
                </label>
                <label class="filter">
                    <span class="name">"Question"</span>
                    <select id="clinical-pick-question" on:change=move |ev| question.set(event_target_value(&ev).parse().unwrap_or(0))>{questions}</select>
                </label>
                {(runs > 1).then(|| view! {
                    <label class="filter">
                        <span class="name">"Run (demographic records)"</span>
                        <select id="clinical-pick-run" on:change=move |ev| run.set(event_target_value(&ev).parse().unwrap_or(0))>{run_options}</select>
                    </label>
                })}
                <button id="clinical-pick-open" on:click=open>"Open case"</button>
            </div>
        </div>
    }
}

/// One FIELD / RECORDED row.
fn field(name: &'static str, key: &'static str, value: impl IntoView + 'static) -> impl IntoView {
    view! { <tr data-field=key><th scope="row">{name}</th><td>{value}</td></tr> }
}

/// A case in the layout of the seed's Tables 1–4, with its link.
#[component]
fn CaseView(ctx: Ctx, key: CaseKey) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let models = audit.model_ids();
    let m = models.iter().position(|x| *x == key.model);
    let q = audit
        .levels(audit.statement_facet)
        .iter()
        .position(|l| l.id == key.question);
    let r = match (&key.run, audit.repeat_facet) {
        (None, _) => Some(0),
        (Some(id), Some(f)) => audit.levels(f).iter().position(|l| &l.id == id),
        (Some(_), None) => None,
    };
    let (Some(m), Some(q), Some(r)) = (m, q, r) else {
        return view! { <p class="error" role="alert" id="clinical-case-missing">{format!("No case {} in this bundle.", key.value())}</p> }.into_any();
    };
    let body = match key.kind {
        CaseKind::Cfv => cfv_rows(&ctx, m, q).into_any(),
        CaseKind::Dr => dr_rows(&ctx, m, q, r).into_any(),
    };
    let title = match key.kind {
        CaseKind::Cfv => format!(
            "Counterfactual validity case: {} on {}",
            level_label(audit, audit.model_facet, m),
            key.question
        ),
        CaseKind::Dr => format!(
            "Demographic robustness case: {} on {}",
            level_label(audit, audit.model_facet, m),
            key.question
        ),
    };
    let link = page_link(&ctx.link_view(&key));
    let absolute = absolute_link(&ctx.link_view(&key));
    let copied = RwSignal::new(None::<String>);
    let to_copy = absolute.clone();
    let local = ctx.loaded.base_url.is_none();
    view! {
        <article class="case clinical-case" id="clinical-case" data-view="clinical-case" data-case=key.value() aria-labelledby="clinical-case-title">
            <h3 id="clinical-case-title" tabindex="-1">{title}</h3>
            <div class="scroll">
                <table class="case-table clinical-case-table" id="clinical-case-table">
                    <thead><tr><th scope="col">"FIELD"</th><th scope="col">"RECORDED"</th></tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            <p class="case-link">
                "Link to this case: "
                <a id="clinical-case-link" href=link>{absolute}</a>
                " "
                <button id="clinical-case-copy" on:click=move |_| copy_then(to_copy.clone(), move |done| { copied.try_set(Some(match done { Ok(()) => "Link copied.".to_string(), Err(e) => format!("Could not copy ({e}); copy the link above by hand.") })); })>"Copy link"</button>
                {move || copied.get().map(|s| view! { <span class="status" role="status">{" "}{s}</span> })}
                {local.then_some(" (This bundle was opened from a local file: the link cannot name it, so it opens the case only where that bundle is loaded from the same address.)")}
            </p>
        </article>
    }
    .into_any()
}

/// Rows of a counterfactual case (Tables 1–2).
fn cfv_rows(ctx: &Ctx, m: usize, q: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let model_id = level_id(audit, audit.model_facet, m);
    let question_id = level_id(audit, audit.statement_facet, q);
    let Some(cl) = audit.file.clinical.as_ref() else {
        return view! { <tr><td colspan="2">"This bundle has no clinical object."</td></tr> }
            .into_any();
    };
    let Some(k) = counterfactual_of(cl, &model_id, &question_id) else {
        return view! { <tr><td colspan="2" id="clinical-case-none">{format!("No counterfactual attempt of {model_id} on {question_id} is recorded.")}</td></tr> }.into_any();
    };
    let c = cl.counterfactuals[k].clone();
    let letter = |l: &Option<String>| {
        l.as_deref()
            .map_or("(not recorded)".to_string(), |l| option_text(audit, q, l))
    };
    let source = format!(
        "{question_id}{}; {} ({model_id}); run {}; counterfactual record {k} of bundle {}",
        statement_attr(audit, q, "source_id").map_or(String::new(), |s| format!(" ({s})")),
        level_label(audit, audit.model_facet, m),
        c.repeat.as_deref().unwrap_or("—"),
        audit.metadata().id
    );
    let question = question_text(audit, q);
    let unchanged = match (&c.reanswer, &c.original) {
        (Some(a), Some(b)) if same_answer(a, b) => "; unchanged",
        _ => "",
    };
    let modified_answer = format!("{}{unchanged}", letter(&c.reanswer));
    let (label, why) = outcome_explanation(c.outcome);
    let result = match (&c.original, &c.target, &c.reanswer, c.outcome) {
        (Some(o), Some(t), Some(_), CfvOutcome::Valid) => {
            format!("{label}. The recorded answer changed from {o} to the target {t}.")
        }
        (Some(_), Some(t), Some(r), _) if same_answer(r, t) => {
            format!("{label}. The answer reached the target {t}, but the attempt was not valid.")
        }
        (Some(o), Some(t), Some(r), _) => {
            format!("{label}. The answer is {r} (original {o}) and did not reach the target {t}.")
        }
        _ => format!("{label}."),
    };
    let judge = c.plausibility.clone();
    let judge_head = judge.as_ref().map_or_else(
        || "No plausibility judgement recorded.".to_string(),
        |p| {
            format!(
                "Plausibility score {}/5 ({}){}. ",
                p.score,
                plausibility_word(p.score),
                p.judge
                    .as_deref()
                    .map_or(String::new(), |j| format!(", judge {j}"))
            )
        },
    );
    let justification = judge.and_then(|p| p.justification);
    let note = c.note.clone();
    view! {
        {field("Source record", "source", source)}
        {field("Original case", "original_case", question)}
        {field("Answer options", "options", options_line(audit, q).unwrap_or_else(|| "(not recorded)".into()))}
        {field("Original answer", "original_answer", letter(&c.original))}
        {field("Target answer", "target_answer", letter(&c.target))}
        {field("Generated change", "change", ctx.model_text(c.change.clone()))}
        {field("Modified case", "modified_case", ctx.model_text(c.modified_question.clone()))}
        {field("Explanation", "explanation", ctx.model_text(c.explanation.clone()))}
        {field("Modified answer", "modified_answer", modified_answer)}
        {field("Automated judge", "judge", view! { {judge_head} {ctx.model_text(justification)} })}
        {field("CFV result", "result", view! {
            <strong class="outcome" data-outcome=c.outcome.as_str()>{result}</strong>
            " " {why}
            {note.map(|n| view! { " Note: " {ctx.model_text(Some(n))} })}
        })}
    }
    .into_any()
}

/// Rows of a demographic-robustness case (Tables 3–4).
fn dr_rows(ctx: &Ctx, m: usize, q: usize, r: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let case = DrCase::new(audit, &ctx.report, m, q, r);
    let model_id = level_id(audit, audit.model_facet, m);
    let question_id = level_id(audit, audit.statement_facet, q);
    let cf = audit.condition_facet;
    let runs = audit.facet_len(audit.repeat_facet);
    let run = audit
        .repeat_facet
        .map_or("—".to_string(), |f| level_id(audit, f, case.run));
    let source = format!(
        "{question_id}{}; {} ({model_id}); run {run}{}; bundle {}",
        statement_attr(audit, q, "source_id").map_or(String::new(), |s| format!(" ({s})")),
        level_label(audit, audit.model_facet, m),
        if runs > 1 {
            format!(" (of {runs} runs)")
        } else {
            String::new()
        },
        audit.metadata().id
    );
    let question = question_text(audit, q);
    let prefix_of = |c: usize| {
        cf.and_then(|f| audit.levels(f).get(c))
            .and_then(|l| l.attributes.get("prefix"))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let prefixes = case
        .prefixes
        .iter()
        .map(|p| {
            let text =
                prefix_of(p.condition).unwrap_or_else(|| "(no prefix template recorded)".into());
            view! { <li data-prefix=p.id.clone()><code>{p.id.clone()}</code>": " {text}</li> }
        })
        .collect_view();
    let answer_text = |v: &VariantAnswer| match (&v.letter, v.responded) {
        (Some(l), _) => l.clone(),
        (None, true) => "unreadable (no ANSWER field could be read)".to_string(),
        (None, false) => "no response".to_string(),
    };
    let baseline_line = case.baseline.as_ref().map_or_else(
        || "This bundle names no baseline variant.".to_string(),
        |b| format!("{} = {}", b.id, answer_text(b)),
    );
    let baseline_cell = case.baseline.as_ref().and_then(|b| b.cell);
    let six = case
        .prefixes
        .iter()
        .map(|p| {
            let changed = p.changed == Some(true);
            view! {
                <li class:changed=changed data-prefix=p.id.clone() data-answer=p.letter.clone().unwrap_or_default() data-changed=match p.changed { Some(true) => "1", Some(false) => "0", None => "" }>
                    {format!("{} = {}", p.id, answer_text(p))}
                    {changed.then_some(" (changed)")}
                </li>
            }
        })
        .collect_view();
    let changed = case.changed();
    let base_letter = case.baseline.as_ref().and_then(|b| b.letter.clone());
    let change_line = match &base_letter {
        None => "The baseline answer could not be read, so no comparison is defined (no answer-change comparison counts this record).".to_string(),
        Some(_) if changed.is_empty() => format!(
            "No prefix changed the baseline answer ({} of {} prefix answers compared).",
            case.prefixes.iter().filter(|p| p.changed.is_some()).count(),
            case.prefixes.len()
        ),
        Some(b) => format!(
            "The answer changed from {b} {} ({} of {} prefixes).",
            changed
                .iter()
                .map(|p| format!("to {} for {}", p.letter.clone().unwrap_or_default(), p.id))
                .collect::<Vec<_>>()
                .join(", "),
            changed.len(),
            case.prefixes.len()
        ),
    };
    // Explanation examples: the changed prefixes first, else the first two.
    let mut shown: Vec<&VariantAnswer> = changed.clone();
    for p in &case.prefixes {
        if shown.len() >= 2 {
            break;
        }
        if !shown.iter().any(|s| s.id == p.id) {
            shown.push(p);
        }
    }
    shown.truncate(2);
    let examples = shown
        .into_iter()
        .map(|p| {
            view! { <p class="example" data-prefix=p.id.clone()><strong>{format!("{}: ", p.id)}</strong>{ctx.text(p.cell, 300)}</p> }
        })
        .collect_view();
    let flagged: Vec<String> = case.flags.iter().map(|f| f.prefix.clone()).collect();
    let stereotype_head = if case.judged == 0 {
        "No stereotype-judge output is recorded for this record.".to_string()
    } else {
        format!(
            "{} of {} prefixes flagged: {}.{}",
            flagged.len(),
            case.prefixes.len(),
            if flagged.is_empty() {
                "none".to_string()
            } else {
                flagged.join(", ")
            },
            if case.unparsed.is_empty() {
                String::new()
            } else {
                format!(
                    " Unparseable judge output for: {}.",
                    case.unparsed.join(", ")
                )
            }
        )
    };
    let flag_items = case
        .flags
        .iter()
        .map(|f| {
            let tags = [
                f.severity.map(|s| s.as_str().to_string()),
                f.category.clone(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
            view! {
                <li data-prefix=f.prefix.clone()>
                    <strong>{f.prefix.clone()}</strong>
                    {(!tags.is_empty()).then(|| format!(" ({tags})"))}
                    ": " {ctx.model_text(f.description.clone())}
                </li>
            }
        })
        .collect_view();
    let directions = (!case.directions.is_empty()).then(|| {
        let line = case
            .directions
            .iter()
            .map(|(p, d)| format!("{p}: {}", d.as_str().replace('_', " ")))
            .collect::<Vec<_>>()
            .join("; ");
        field("Direction of change", "directions", line)
    });
    let conflicts = (!case.conflicts.is_empty()).then(|| {
        let items = case
            .conflicts
            .iter()
            .map(|(p, kind, detail)| {
                let template = cf
                    .and_then(|f| audit.levels(f).iter().position(|l| &l.id == p))
                    .and_then(prefix_of)
                    .unwrap_or_default();
                view! {
                    <li data-prefix=p.clone()>
                        {format!("{p} ({kind}): {}", detail.clone().unwrap_or_default())}
                        {(!template.is_empty()).then(|| format!(" — the prefix “{template}” stands before “{}”", excerpt(&question_start(audit, q), 80)))}
                    </li>
                }
            })
            .collect_view();
        field(
            "Prefix interaction",
            "prefix_conflict",
            view! { <p>"The prefix conflicts with the vignette (§3.4: a stress test, not a clean causal intervention):"</p><ul>{items}</ul> },
        )
    });
    let edd = case.edd.map_or_else(
        || "No EDD: the record has fewer than two explanation embeddings.".to_string(),
        |(e, n)| {
            format!(
                "{e:.4} for this question across {n} explanation embeddings ({} pairs; Eq. 1).",
                n * n.saturating_sub(1) / 2
            )
        },
    );
    let robust = case.robust();
    let interpretation = if robust {
        "VALID ROBUST CASE. All prefixes preserved the baseline answer, all variants parsed, and the automated stereotype judge returned no flags. This is robustness under the recorded stress test, not clinician validation.".to_string()
    } else {
        let mut why = Vec::new();
        if !changed.is_empty() {
            why.push(format!(
                "the answer changed under {} prefix(es)",
                changed.len()
            ));
        }
        if case.prefixes.iter().any(|p| p.letter.is_none()) || base_letter.is_none() {
            why.push("some variants could not be read".to_string());
        }
        if !case.flags.is_empty() {
            why.push(format!(
                "the judge flagged stereotype evidence for {} prefix(es)",
                case.flags.len()
            ));
        }
        format!(
            "INVALID ROBUSTNESS CASE: {}. The record is an example of an audit failure in the saved automated judgements, not a clinical diagnosis or human adjudication.",
            why.join("; ")
        )
    };
    view! {
        {field("Source record", "source", source)}
        {field("Clinical case", "clinical_case", question)}
        {field("Prefix shown", "prefix", view! { <p>"Added before the original question, one per variant:"</p><ul class="prefixes">{prefixes}</ul> })}
        {conflicts}
        {field("Baseline answer", "baseline_answer", view! { <span id="clinical-baseline">{baseline_line}</span> "; reasoning excerpt: " {ctx.text(baseline_cell, 300)} })}
        {field("Prefix answers", "prefix_answers", view! { <ul class="prefix-answers" id="clinical-prefix-answers">{six}</ul> })}
        {field("Answer change", "answer_change", change_line)}
        {directions}
        {field("Explanation examples", "explanations", examples)}
        {field("Stereotype evidence", "stereotype", view! { <p id="clinical-stereotype">{stereotype_head}</p><ul>{flag_items}</ul> })}
        {field("EDD", "edd", view! { <span id="clinical-edd" data-edd=case.edd.map(|e| e.0.to_string()).unwrap_or_default()>{edd}</span> })}
        {field("DR interpretation", "interpretation", view! { <strong class="outcome" data-robust=robust.to_string()>{interpretation}</strong> })}
    }
    .into_any()
}

/// The question text's first characters with a lower-case first letter, as the variant reads on after
/// its prefix.
fn question_start(audit: &Audit, q: usize) -> String {
    let text = question_text(audit, q);
    let mut chars = text.trim().chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
