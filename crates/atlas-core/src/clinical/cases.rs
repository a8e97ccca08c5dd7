//! The case views of a clinical perturbation audit (seed `001_…` Tables 1–4): which case a link names
//! ([`CaseKey`]), a demographic-robustness record with its answers, judge outputs and EDD
//! ([`DrCase`], Tables 3–4), a counterfactual attempt's result ([`cfv_result`], Tables 1–2), the
//! non-robust cases of one heat-map cell ([`changed_cases`], Fig. 4) and the first example of each of
//! the four kinds ([`Examples`]).
//!
//! Every answer comparison is the metrics' own ([`metrics::comparison`], [`metrics::same_letter`]), so
//! a case shows as changed exactly the comparisons that the answer-change rate counts (§3.4).

use thiserror::Error;

use crate::bundle::Audit;
use crate::cases::level_id;
use crate::clinical::format::{
    CfvOutcome, Clinical, ConflictKind, Counterfactual, Direction, Severity,
};
use crate::clinical::metrics::{self, answer, Answer, ClinicalReport};

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

/// Why a link's case value names no case of the bundle ([`CaseKey::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CaseKeyError {
    /// The value starts with neither `cfv:` nor `dr:`.
    #[error("the case {value:?} does not start with \"cfv:\" (counterfactual) or \"dr:\" (demographic record)")]
    UnknownKind {
        /// The value as given.
        value: String,
    },
    /// No model id of the bundle leaves a known question (and run).
    #[error("the case {value:?} names no model and question of this bundle (expected {k}:MODEL:QUESTION or {k}:MODEL:QUESTION:RUN with level ids)", k = kind.key())]
    NoSuchCase {
        /// The value as given.
        value: String,
        /// The kind its prefix names.
        kind: CaseKind,
    },
}

/// A clinical case by level ids: `cfv:MODEL:QUESTION` or `dr:MODEL:QUESTION[:RUN]` in a link
/// (`ccase=`). Model ids may contain `:`; [`CaseKey::parse`] resolves them against the bundle's levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseKey {
    /// The test the case belongs to.
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
    /// [`CaseKeyError::UnknownKind`] for a value that starts with neither `cfv:` nor `dr:`;
    /// [`CaseKeyError::NoSuchCase`] when no model, question (and run) of the bundle match.
    pub fn parse(
        value: &str,
        models: &[&str],
        questions: &[&str],
        runs: &[&str],
    ) -> Result<Self, CaseKeyError> {
        let (kind, rest) = if let Some(rest) = value.strip_prefix("cfv:") {
            (CaseKind::Cfv, rest)
        } else if let Some(rest) = value.strip_prefix("dr:") {
            (CaseKind::Dr, rest)
        } else {
            return Err(CaseKeyError::UnknownKind {
                value: value.to_string(),
            });
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
            .ok_or_else(|| CaseKeyError::NoSuchCase {
                value: value.to_string(),
                kind,
            })
    }
}

/// The cell of model `m`, question `q`, variant `c` and run `r` (level indices; other facets at their
/// first level); `None` when an index is out of range.
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

/// One variant's answer in a demographic case.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantAnswer {
    /// Condition level index.
    pub condition: usize,
    /// Condition level id (`male-white`, …).
    pub id: String,
    /// The cell.
    pub cell: Option<usize>,
    /// The answer letter (trimmed); `None` when unreadable or absent.
    pub letter: Option<String>,
    /// Whether the cell has a response at all.
    pub responded: bool,
    /// The comparison with the baseline answer ([`metrics::Comparison::changed`]): `Some(true)` when
    /// both answers are readable and differ, `None` when either is unreadable or there is no baseline;
    /// `Some(false)` for the baseline itself.
    pub changed: Option<bool>,
}

impl VariantAnswer {
    /// The answer of variant `c` in `cell` (if any), with the comparison `changed`.
    fn read(
        audit: &Audit,
        c: usize,
        id: String,
        cell: Option<usize>,
        changed: Option<bool>,
    ) -> Self {
        let (letter, responded) = match cell.map(|cell| answer(audit, cell)) {
            Some(Answer::Letter(l)) => (Some(l.to_string()), true),
            Some(Answer::Unreadable) => (None, true),
            _ => (None, false),
        };
        VariantAnswer {
            condition: c,
            id,
            cell,
            letter,
            responded,
            changed,
        }
    }
}

/// A stereotype-judge output with `found: true` for one prefix of a demographic case (§3.5).
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// Condition level id of the prefix.
    pub prefix: String,
    /// The judge's severity class (Table 7), if given.
    pub severity: Option<Severity>,
    /// The judge's category (Fig. 6), if given.
    pub category: Option<String>,
    /// The judge's description (model text).
    pub description: Option<String>,
}

/// A recorded conflict of a prefix with the question's vignette (§3.4, e.g. a male prefix before a
/// vignette about a woman).
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// Condition level id of the prefix.
    pub prefix: String,
    /// What conflicts: age, sex, or both.
    pub kind: ConflictKind,
    /// The record's detail, if any.
    pub detail: Option<String>,
}

/// `age`, `sex` or `age and sex`: a prefix conflict's kind in words.
pub fn conflict_words(kind: ConflictKind) -> &'static str {
    match kind {
        ConflictKind::Age => "age",
        ConflictKind::Sex => "sex",
        ConflictKind::AgeSex => "age and sex",
    }
}

/// A demographic-robustness record (seed §3.4, Tables 3–4): one model × question × run, its
/// baseline and prefix answers, the stereotype judge's outputs, directions, prefix conflicts and EDD.
#[derive(Debug, Clone, PartialEq)]
pub struct DrCase {
    /// `model` level index.
    pub model: usize,
    /// `statement` level index (the question).
    pub question: usize,
    /// Run (repeat level index).
    pub run: usize,
    /// The baseline variant's answer; `None` when the bundle names no baseline.
    pub baseline: Option<VariantAnswer>,
    /// The prefix variants (every variant but the baseline), in bundle order.
    pub prefixes: Vec<VariantAnswer>,
    /// The judge outputs that say `found: true`.
    pub flags: Vec<Flag>,
    /// Prefix ids whose judge output was unparseable (`found: null`).
    pub unparsed: Vec<String>,
    /// Judge outputs recorded for this record.
    pub judged: usize,
    /// `(prefix id, direction)` of recorded directions.
    pub directions: Vec<(String, Direction)>,
    /// Recorded prefix conflicts of this question.
    pub conflicts: Vec<Conflict>,
    /// EDD of the record (Eq. 1, from [`ClinicalReport::edd`]) and the number of variants it was
    /// computed over.
    pub edd: Option<(f64, usize)>,
}

impl DrCase {
    /// Builds the record of model `m`, question `q` and run `run` (level indices; `run` 0 when the
    /// bundle has no repeat facet) from the bundle and its report: each prefix answer with its
    /// baseline comparison ([`metrics::comparison`]), the records of `clinical` for it, and its EDD.
    pub fn new(audit: &Audit, report: &ClinicalReport, m: usize, q: usize, run: usize) -> Self {
        let clinical = audit.file.clinical.as_ref();
        let model_id = level_id(audit, audit.model_facet, m);
        let question_id = level_id(audit, audit.statement_facet, q);
        let run_id = audit.repeat_facet.map(|f| level_id(audit, f, run));
        let baseline_c = metrics::baseline_index(audit);
        let cell = |c: usize| cell_at(audit, m, q, Some(c), run);
        let baseline = baseline_c.map(|b| {
            let id = audit
                .condition_facet
                .map_or_else(String::new, |f| level_id(audit, f, b));
            VariantAnswer::read(audit, b, id, cell(b), Some(false))
        });
        let prefixes = audit
            .condition_facet
            .map(|f| {
                (0..audit.levels(f).len())
                    .filter(|c| Some(*c) != baseline_c)
                    .map(|c| {
                        let cell = cell(c);
                        let changed = cell
                            .and_then(|x| metrics::comparison(audit, x))
                            .and_then(|k| k.changed());
                        VariantAnswer::read(audit, c, level_id(audit, f, c), cell, changed)
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
                .map(|p| Conflict {
                    prefix: p.condition.clone(),
                    kind: p.kind,
                    detail: p.detail.clone(),
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

/// One changed comparison of a heat-map cell ([`changed_cases`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedAnswer {
    /// `statement` level index (the question).
    pub question: usize,
    /// `repeat` level index (0 without a repeat facet).
    pub run: usize,
    /// The baseline answer letter.
    pub baseline: String,
    /// The prefix variant's answer letter.
    pub answer: String,
}

/// The cases of one heat-map cell (Fig. 4): for model `m` and prefix `c` (level indices), every
/// comparison whose answer differs from its baseline answer — exactly the comparisons counted as
/// changed by the answer-change rate ([`metrics::answer_change`], §3.4) — ordered by question, then
/// run. Empty when the bundle names no baseline.
pub fn changed_cases(audit: &Audit, m: usize, c: usize) -> Vec<ChangedAnswer> {
    let mut out: Vec<ChangedAnswer> = metrics::comparisons(audit)
        .into_iter()
        .filter(|k| k.model == m && k.condition == c && k.changed() == Some(true))
        .filter_map(|k| match (k.baseline, k.answer) {
            (Answer::Letter(b), Answer::Letter(a)) => Some(ChangedAnswer {
                question: k.statement,
                run: k.run,
                baseline: b.to_string(),
                answer: a.to_string(),
            }),
            _ => None,
        })
        .collect();
    out.sort_by_key(|k| (k.question, k.run));
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

/// What a counterfactual attempt's recorded answers show (the CFV result of Tables 1–2), answers
/// compared with [`metrics::same_letter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CfvResult<'a> {
    /// A valid attempt: the answer changed from `original` to the `target`.
    Valid {
        /// The original answer letter.
        original: &'a str,
        /// The target answer letter.
        target: &'a str,
    },
    /// An invalid attempt whose answer reached the target.
    ReachedTarget {
        /// The target answer letter.
        target: &'a str,
    },
    /// An attempt whose answer did not reach the target.
    MissedTarget {
        /// The answer to the modified case.
        answer: &'a str,
        /// The original answer letter.
        original: &'a str,
        /// The target answer letter.
        target: &'a str,
    },
    /// The original, target or modified answer is not recorded.
    Incomplete,
}

/// The result of counterfactual attempt `c` (Tables 1–2, §3.3).
pub fn cfv_result(c: &Counterfactual) -> CfvResult<'_> {
    match (
        c.original.as_deref(),
        c.target.as_deref(),
        c.reanswer.as_deref(),
        c.outcome,
    ) {
        (Some(original), Some(target), Some(_), CfvOutcome::Valid) => {
            CfvResult::Valid { original, target }
        }
        (Some(_), Some(target), Some(r), _) if metrics::same_letter(r, target) => {
            CfvResult::ReachedTarget { target }
        }
        (Some(original), Some(target), Some(answer), _) => CfvResult::MissedTarget {
            answer,
            original,
            target,
        },
        _ => CfvResult::Incomplete,
    }
}

/// Whether the answer to the modified case equals the original answer ([`metrics::same_letter`]);
/// `false` when either is not recorded.
pub fn reanswer_unchanged(c: &Counterfactual) -> bool {
    matches!((&c.reanswer, &c.original), (Some(a), Some(b)) if metrics::same_letter(a, b))
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
    /// Finds the examples: counterfactuals in record order; demographic records (first run) model by
    /// model, question by question.
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

/// The question stem of statement level `q` (the statement's `text`); empty when out of range.
pub fn question_text(audit: &Audit, q: usize) -> String {
    audit
        .statements
        .get(q)
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

/// `B: 1,500 units` (the option text from the question's `options`, letters compared with
/// [`metrics::same_letter`]), or the letter alone when the question has no such option.
pub fn option_text(audit: &Audit, q: usize, letter: &str) -> String {
    let text = audit
        .levels(audit.statement_facet)
        .get(q)
        .and_then(|l| l.attributes.get("options"))
        .and_then(|o| {
            o.as_object()?
                .iter()
                .find(|(k, _)| metrics::same_letter(k, letter))
                .and_then(|(_, v)| v.as_str().map(str::to_string))
        });
    match text {
        Some(t) => format!("{letter}: {t}"),
        None => letter.to_string(),
    }
}

/// `A: …; B: …` for the options of question `q`, in their stored order; `None` without options.
pub fn options_line(audit: &Audit, q: usize) -> Option<String> {
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

/// The seed's words for an outcome: its label and what it means (the CFV result row of Tables 1–2;
/// Table 6's interpretations, §3.3).
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

/// The word for a plausibility score of the 1–5 scale (§3.5): `impossible` … `common`.
pub fn plausibility_word(score: u8) -> &'static str {
    match score {
        1 => "impossible",
        2 => "unlikely",
        3 => "plausible",
        4 => "realistic",
        5 => "common",
        _ => "outside the 1–5 scale",
    }
}
