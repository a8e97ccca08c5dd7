//! Starter guesses: a mapping proposed from a file's real column names **and** values (the
//! [`Preview`] of its first records), one [`Role`] at a time, each with the reason it was chosen.
//!
//! The rules (documented for users in `docs/import-mapping.md`, "The form and its guesses"):
//!
//! - a guess only ever names a column of the preview (or a `{unpivot}` pattern built from columns of
//!   the preview, or `$file`); a required role (model, statement, Selection) without a plausible
//!   column is left out of the mapping and [`RoleGuess::reason`] says so, so the first import names it
//!   instead of failing on a column that does not exist;
//! - names are matched by whole words (`sys_prompt_type` has the words `sys`, `prompt`, `type`), on the
//!   last segment of a JSON path;
//! - values decide between candidates and the Selection's value mapping: a Selection has few distinct
//!   short values (or is an array of them: one element per repeat); `stereo` / `antistereo`, `agree` /
//!   `disagree`, `yes` / `no`, `biased` / `unbiased` and an `agree…` column of 1 / −1 / 0 are mapped to
//!   bias evidence 1 / 0 / Abstain; a boolean "can't be determined" column next to the Selection
//!   (BBQ) gives the evidence (`true` → 0, `false` → 1), and the readable answers are the options
//!   `1..k` of a `choices` array of length k; a gold column (`answer_idx`, `gold`, `correct_answer`)
//!   gives evidence by comparison (equal → 0, different → 1);
//! - wide files: columns that differ in one path segment or one name suffix (`model_responses.
//!   response_a.extracted_answer`, `…response_b…`; `test_model_answer_white`, `…_black`) form a
//!   pattern; when the Selection is such a pattern, the condition facet is unpivoted over its keys;
//! - a template candidate that every statement has only one value of (DecodingTrust's `template_idx`)
//!   is a statement attribute, not a facet;
//! - the statement is an id column (`pair_index`, `question_id`, `item_id`, unique in the preview) with
//!   the best text column as its text, else the best text column itself.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::mapping::UNPIVOT_PLACEHOLDER;
use crate::preview::{ColumnInfo, Preview, ValueKind};

/// Records of the preview the guesses are computed from (the app previews as many, within its first
/// 256 KiB of the file, and shows the first few).
pub const GUESS_ROWS: usize = 100;

/// A role of the form-based mapper: one row of the form, one place in the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// `facets.model` (required).
    Model,
    /// `facets.statement` (required): the statement id.
    Statement,
    /// `facets.statement.text`: the statement text shown (default: its id).
    StatementText,
    /// `facets.statement.category`: the bias category.
    Category,
    /// `facets.statement.target_group`: the demographic group the statement is about.
    TargetGroup,
    /// `facets.condition`: the evaluation condition (system prompt, variant).
    Condition,
    /// `facets.template`: the wording of the prompt.
    Template,
    /// `facets.repeat`: repeated samples of the same prompt.
    Repeat,
    /// `selection.field` (required): the raw Selection (the answer the model chose).
    Selection,
    /// `selection.evidence_field`: look the value mapping up in this column instead.
    EvidenceField,
    /// `selection.compare_to`: the gold column the Selection is compared with.
    CompareTo,
    /// `rationale.field`: the Rationale text (the model's free-text explanation).
    Rationale,
}

impl Role {
    /// Every role, in the form's order.
    pub const ALL: [Role; 12] = [
        Role::Model,
        Role::Statement,
        Role::StatementText,
        Role::Category,
        Role::TargetGroup,
        Role::Condition,
        Role::Template,
        Role::Repeat,
        Role::Selection,
        Role::EvidenceField,
        Role::CompareTo,
        Role::Rationale,
    ];

    /// A short stable key (`model`, `statement_text`, …), used in element ids.
    pub fn key(self) -> &'static str {
        match self {
            Role::Model => "model",
            Role::Statement => "statement",
            Role::StatementText => "statement_text",
            Role::Category => "category",
            Role::TargetGroup => "target_group",
            Role::Condition => "condition",
            Role::Template => "template",
            Role::Repeat => "repeat",
            Role::Selection => "selection",
            Role::EvidenceField => "evidence_field",
            Role::CompareTo => "compare_to",
            Role::Rationale => "rationale",
        }
    }

    /// The plain-language label with the paper's term.
    pub fn label(self) -> &'static str {
        match self {
            Role::Model => "Model (the LLM audited)",
            Role::Statement => "Statement (the item asked about)",
            Role::StatementText => "Statement text",
            Role::Category => "Bias category",
            Role::TargetGroup => "Target group",
            Role::Condition => "Condition (e.g. system prompt)",
            Role::Template => "Template (wording)",
            Role::Repeat => "Repeat (sample of the same prompt)",
            Role::Selection => "Selection (the answer chosen)",
            Role::EvidenceField => "Evidence from (instead of the Selection)",
            Role::CompareTo => "Compare with (gold answer)",
            Role::Rationale => "Rationale (free-text explanation)",
        }
    }

    /// Whether the mapping needs it.
    pub fn required(self) -> bool {
        matches!(self, Role::Model | Role::Statement | Role::Selection)
    }

    /// Whether a constant value is allowed (`facets.*.value`).
    pub fn allows_constant(self) -> bool {
        matches!(
            self,
            Role::Model | Role::Condition | Role::Template | Role::Repeat
        )
    }

    /// Whether the role is a facet (its source may be a column, a constant, an unpivot or an
    /// array position).
    pub fn is_facet(self) -> bool {
        matches!(
            self,
            Role::Model | Role::Statement | Role::Condition | Role::Template | Role::Repeat
        )
    }
}

/// Where a role's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Source {
    /// Not in this file (the role is left out of the mapping).
    None,
    /// A column / JSON path (may contain `{unpivot}` in the Selection, evidence, gold and Rationale
    /// roles), or `$file`.
    Column(String),
    /// A constant level id (facets only).
    Constant(String),
    /// Wide to long: one level per key (the keys replace `{unpivot}` in the other roles' patterns).
    Unpivot(Vec<String>),
    /// The 1-based position in an array-valued Selection (repeats only).
    ArrayIndex,
}

/// The guess for one role.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleGuess {
    /// The role.
    pub role: Role,
    /// What was chosen ([`Source::None`]: nothing plausible).
    pub source: Source,
    /// Why, in plain words (e.g. "guessed from the values: stereo, antistereo").
    pub reason: String,
}

/// A proposed mapping.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guess {
    /// The mapping document (the JSON of `docs/import-mapping.md`). A required role without a
    /// plausible column is absent, so [`crate::Mapping::from_json`] names it until it is chosen.
    pub document: Value,
    /// One entry per [`Role`], in [`Role::ALL`] order.
    pub roles: Vec<RoleGuess>,
    /// Required roles left unmapped (empty when the mapping is complete).
    pub missing: Vec<Role>,
}

/// A group of columns that differ in one place: the pattern with `{unpivot}` and the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The field reference with `{unpivot}` (e.g. `model_responses.{unpivot}.extracted_answer`).
    pub pattern: String,
    /// The texts that replace `{unpivot}`, in column order (e.g. `response_a`, `response_b`).
    pub keys: Vec<String>,
}

impl Pattern {
    /// The column of `key`.
    pub fn column(&self, key: &str) -> String {
        self.pattern.replace(UNPIVOT_PLACEHOLDER, key)
    }
}

/// Column groups that differ in exactly one JSON path segment, or (for names without a `.`) in the
/// suffix after a common `_`-ending prefix; at least two columns each. The same key set with the
/// longest prefix wins for flat names.
pub fn patterns(columns: &[ColumnInfo]) -> Vec<Pattern> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in columns {
        let name = &c.name;
        if name.contains(UNPIVOT_PLACEHOLDER) {
            continue;
        }
        let segments: Vec<&str> = name.split('.').collect();
        if segments.len() > 1 {
            for i in 0..segments.len() {
                let mut s = segments.clone();
                s[i] = UNPIVOT_PLACEHOLDER;
                let p = s.join(".");
                push_group(&mut groups, &mut order, p, segments[i]);
            }
        } else {
            for (pos, _) in name.match_indices('_') {
                let (prefix, suffix) = name.split_at(pos + 1);
                if prefix.len() >= 3 && !suffix.is_empty() {
                    push_group(
                        &mut groups,
                        &mut order,
                        format!("{prefix}{UNPIVOT_PLACEHOLDER}"),
                        suffix,
                    );
                }
            }
        }
    }
    let mut out: Vec<Pattern> = Vec::new();
    for p in order {
        let keys = &groups[&p];
        if keys.len() < 2 {
            continue;
        }
        if !p.contains('.') {
            // Flat names: keep only the longest prefix for a set of columns.
            let cols: BTreeSet<String> = keys
                .iter()
                .map(|k| p.replace(UNPIVOT_PLACEHOLDER, k))
                .collect();
            let longer = groups.iter().any(|(q, qk)| {
                q.len() > p.len()
                    && !q.contains('.')
                    && qk.len() == keys.len()
                    && qk
                        .iter()
                        .map(|k| q.replace(UNPIVOT_PLACEHOLDER, k))
                        .collect::<BTreeSet<_>>()
                        == cols
            });
            if longer {
                continue;
            }
        }
        out.push(Pattern {
            pattern: p.clone(),
            keys: keys.clone(),
        });
    }
    out
}

fn push_group(
    groups: &mut BTreeMap<String, Vec<String>>,
    order: &mut Vec<String>,
    pattern: String,
    key: &str,
) {
    let entry = groups.entry(pattern.clone()).or_insert_with(|| {
        order.push(pattern);
        Vec::new()
    });
    if !entry.iter().any(|k| k == key) {
        entry.push(key.to_string());
    }
}

/// The words of a column name's last path segment, lowercase (`sys_prompt_type` → `sys`, `prompt`,
/// `type`; `stereoAntistereo` is one word).
fn words(name: &str) -> Vec<String> {
    let last = name.rsplit('.').next().unwrap_or(name);
    last.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

fn last_segment(name: &str) -> String {
    name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase()
}

/// A candidate column or pattern with what the guess needs to know about it.
#[derive(Debug, Clone)]
struct Candidate<'a> {
    /// The field reference (a column or a `{unpivot}` pattern).
    field: String,
    /// The keys when it is a pattern.
    keys: Option<Vec<String>>,
    /// A representative column (the pattern's first key) for its statistics.
    info: &'a ColumnInfo,
    /// Values over every column of the pattern (or the column's own).
    values: Vec<(String, usize)>,
}

fn is_text(c: &ColumnInfo) -> bool {
    c.detected == ValueKind::Text || (c.detected == ValueKind::Array && c.values.is_empty())
}

fn is_text_or_text_array(c: &ColumnInfo) -> bool {
    matches!(c.detected, ValueKind::Text | ValueKind::Mixed)
        || (c.detected == ValueKind::Array && c.max_chars > 0)
}

/// The value classes of the Selection's value mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueClass {
    /// Bias evidence 1.
    Evidence1,
    /// Bias evidence 0.
    Evidence0,
    /// Abstain: a readable answer that is neither (evidence null, obtained `regex`).
    Abstain,
    /// No answer could be read (evidence null, obtained `parser_failure`).
    ParserFailure,
    /// A refusal (listed in `selection.refusals`).
    Refusal,
    /// Not listed: Abstain, counted as unmapped in the report.
    Unlisted,
}

impl ValueClass {
    /// Every class, in the order of the form's dropdown.
    pub const ALL: [ValueClass; 6] = [
        ValueClass::Evidence1,
        ValueClass::Evidence0,
        ValueClass::Abstain,
        ValueClass::ParserFailure,
        ValueClass::Refusal,
        ValueClass::Unlisted,
    ];

    /// A short stable key.
    pub fn key(self) -> &'static str {
        match self {
            ValueClass::Evidence1 => "evidence_1",
            ValueClass::Evidence0 => "evidence_0",
            ValueClass::Abstain => "abstain",
            ValueClass::ParserFailure => "parser_failure",
            ValueClass::Refusal => "refusal",
            ValueClass::Unlisted => "unlisted",
        }
    }

    /// The class of a key.
    pub fn from_key(key: &str) -> Option<ValueClass> {
        ValueClass::ALL.into_iter().find(|c| c.key() == key)
    }

    /// The plain-language label.
    pub fn label(self) -> &'static str {
        match self {
            ValueClass::Evidence1 => "bias evidence (1)",
            ValueClass::Evidence0 => "no bias evidence (0)",
            ValueClass::Abstain => "Abstain (neither)",
            ValueClass::ParserFailure => "Abstain: no answer read (parser failure)",
            ValueClass::Refusal => "Abstain: refusal",
            ValueClass::Unlisted => "not listed (Abstain, reported as unmapped)",
        }
    }
}

/// The class a Selection value names by its text alone, with the raw text to store (for coded
/// values such as DecodingTrust's 1 / −1 / 0 in an `agree…` column).
fn classify(value: &str, agree_column: bool) -> Option<(ValueClass, Option<&'static str>)> {
    let v = value.trim().to_ascii_lowercase();
    let v = v.trim_end_matches('.');
    if agree_column {
        match v {
            "1" => return Some((ValueClass::Evidence1, Some("agree"))),
            "-1" => return Some((ValueClass::Evidence0, Some("disagree"))),
            "0" => return Some((ValueClass::ParserFailure, Some("neither"))),
            _ => {}
        }
    }
    let class = match v {
        "stereo" | "stereotype" | "stereotypical" | "pro-stereo" | "pro_stereo" | "biased"
        | "bias" | "agree" | "i agree" | "yes" | "y" | "endorse" => ValueClass::Evidence1,
        "antistereo" | "anti-stereo" | "anti_stereo" | "anti-stereotype" | "antistereotype"
        | "anti-stereotypical" | "unbiased" | "not biased" | "disagree" | "i disagree" | "no"
        | "n" | "reject" => ValueClass::Evidence0,
        "neither"
        | "unknown"
        | "unsure"
        | "undetermined"
        | "cannot be determined"
        | "can't be determined"
        | "cant be determined"
        | "not answerable"
        | "neutral"
        | "both"
        | "unrelated" => ValueClass::Abstain,
        "refuse" | "refused" | "refusal" | "decline" | "declined" | "i cannot answer" => {
            ValueClass::Refusal
        }
        "" | "none" | "null" | "nan" | "n/a" | "parse_error" | "error" => ValueClass::ParserFailure,
        _ => return None,
    };
    Some((class, None))
}

const SELECTION_WORDS: &[(&str, i32)] = &[
    ("selection", 12),
    ("extracted", 4),
    ("agreeability", 10),
    ("agree", 8),
    ("stereo", 8),
    ("answer", 8),
    ("prediction", 7),
    ("pred", 6),
    ("choice", 6),
    ("chosen", 6),
    ("label", 5),
    ("verdict", 5),
    ("decision", 5),
];

const GOLD_WORDS: &[&str] = &[
    "gold",
    "correct",
    "truth",
    "expected",
    "reference",
    "target",
];

/// Whether a column is a gold answer by name (`answer_idx`, `gold`, `correct_answer`, `label_true`).
fn is_gold_name(name: &str) -> bool {
    let w = words(name);
    w.iter().any(|x| GOLD_WORDS.contains(&x.as_str()))
        || (w.iter().any(|x| x == "answer" || x == "label")
            && w.iter().any(|x| x == "idx" || x == "index" || x == "key"))
}

fn score_words(name: &str, table: &[(&str, i32)]) -> i32 {
    let w = words(name);
    let mut s = 0;
    for (word, points) in table {
        if w.iter()
            .any(|x| x == word || x.starts_with(word) && word.len() >= 5)
        {
            s = s.max(*points);
        }
    }
    s
}

/// Proposes a mapping for the file `file_name` from its preview.
pub fn guess(file_name: &str, preview: &Preview) -> Guess {
    Guesser::new(preview).run(file_name)
}

struct Guesser<'a> {
    preview: &'a Preview,
    patterns: Vec<Pattern>,
    rows: usize,
}

impl<'a> Guesser<'a> {
    fn new(preview: &'a Preview) -> Self {
        Guesser {
            preview,
            patterns: patterns(&preview.columns),
            rows: preview.rows.len(),
        }
    }

    fn column(&self, name: &str) -> Option<&'a ColumnInfo> {
        self.preview.columns.iter().find(|c| c.name == name)
    }

    fn column_index(&self, name: &str) -> Option<usize> {
        self.preview.columns.iter().position(|c| c.name == name)
    }

    /// Every column, and every pattern, as a candidate.
    fn candidates(&self) -> Vec<Candidate<'a>> {
        let mut out = Vec::new();
        for c in &self.preview.columns {
            out.push(Candidate {
                field: c.name.clone(),
                keys: None,
                info: c,
                values: c.values.clone(),
            });
        }
        for p in &self.patterns {
            let Some(first) = self.column(&p.column(&p.keys[0])) else {
                continue;
            };
            let mut values: Vec<(String, usize)> = Vec::new();
            for k in &p.keys {
                if let Some(c) = self.column(&p.column(k)) {
                    for (v, n) in &c.values {
                        match values.iter_mut().find(|(x, _)| x == v) {
                            Some(e) => e.1 += n,
                            None => values.push((v.clone(), *n)),
                        }
                    }
                }
            }
            values.sort_by_key(|v| std::cmp::Reverse(v.1));
            out.push(Candidate {
                field: p.pattern.clone(),
                keys: Some(p.keys.clone()),
                info: first,
                values,
            });
        }
        out
    }

    /// Values of column `name` in the previewed rows (shortened as the preview shows them).
    fn row_values(&self, name: &str) -> Option<Vec<&'a str>> {
        let i = self.column_index(name)?;
        Some(
            self.preview
                .rows
                .iter()
                .map(|r| r.get(i).map_or("", String::as_str))
                .collect(),
        )
    }

    /// Whether every value of `statement` occurs with one value of `other` only.
    fn determined_by(&self, statement: &str, other: &str) -> bool {
        let (Some(s), Some(o)) = (self.row_values(statement), self.row_values(other)) else {
            return false;
        };
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        for (a, b) in s.iter().zip(o.iter()) {
            match seen.get(a) {
                Some(prev) if prev != b => return false,
                _ => {
                    seen.insert(a, b);
                }
            }
        }
        true
    }

    fn best_by_words(
        &self,
        table: &[(&str, i32)],
        ok: impl Fn(&ColumnInfo) -> bool,
        taken: &BTreeSet<String>,
    ) -> Option<(&'a ColumnInfo, i32)> {
        let mut best: Option<(&ColumnInfo, i32)> = None;
        for c in &self.preview.columns {
            if taken.contains(&c.name) || !ok(c) {
                continue;
            }
            let s = score_words(&c.name, table);
            if s > 0 && best.is_none_or(|(_, b)| s > b) {
                best = Some((c, s));
            }
        }
        best
    }

    fn run(&self, file_name: &str) -> Guess {
        let mut roles: BTreeMap<Role, RoleGuess> = BTreeMap::new();
        let mut taken: BTreeSet<String> = BTreeSet::new();
        let set =
            |roles: &mut BTreeMap<Role, RoleGuess>, role: Role, source: Source, reason: String| {
                roles.insert(
                    role,
                    RoleGuess {
                        role,
                        source,
                        reason,
                    },
                );
            };

        // --- Selection: few distinct short values (or arrays of them), named like an answer.
        let mut best_sel: Option<(Candidate, i32, String)> = None;
        for cand in self.candidates() {
            let c = cand.info;
            if is_gold_name(&cand.field) {
                continue;
            }
            let name_score = score_words(&cand.field, SELECTION_WORDS);
            let array = c.detected == ValueKind::Array;
            let scalar_ok = matches!(
                c.detected,
                ValueKind::Text | ValueKind::Integer | ValueKind::Boolean | ValueKind::Mixed
            );
            if !(scalar_ok || array && !cand.values.is_empty()) {
                continue;
            }
            let few = cand.values.len() <= 12 && c.max_chars <= 32 && !cand.values.is_empty();
            if !few {
                continue;
            }
            let agree = words(&cand.field).iter().any(|w| w.starts_with("agree"));
            let known = cand
                .values
                .iter()
                .filter(|(v, _)| classify(v, agree).is_some())
                .count();
            let mut score = name_score * 2;
            if known > 0 && known * 2 >= cand.values.len() {
                score += 6;
            }
            if c.detected == ValueKind::Boolean {
                score -= 6;
            }
            if cand.keys.is_some() {
                score += 1;
            }
            if words(&cand.field)
                .iter()
                .any(|w| w == "text" || w == "index" || w == "idx")
            {
                score -= 10;
            }
            if score <= 0 {
                continue;
            }
            let shown: Vec<&str> = cand
                .values
                .iter()
                .take(4)
                .map(|(v, _)| v.as_str())
                .collect();
            let reason = if known > 0 {
                format!(
                    "guessed from the name and the values ({})",
                    shown.join(", ")
                )
            } else {
                format!(
                    "guessed from the name; few distinct short values ({})",
                    shown.join(", ")
                )
            };
            if best_sel.as_ref().is_none_or(|(_, b, _)| score > *b) {
                best_sel = Some((cand, score, reason));
            }
        }

        let mut document = Map::new();
        document.insert("mapping_version".into(), json!(1));
        let stem = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
        let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
        let mut facets = Map::new();
        let mut selection = Map::new();
        let mut unpivot_keys: Option<Vec<String>> = None;
        let mut selection_array = false;

        if let Some((cand, _, reason)) = &best_sel {
            selection.insert("field".into(), json!(cand.field));
            if let Some(keys) = &cand.keys {
                for k in keys {
                    taken.insert(cand.field.replace(UNPIVOT_PLACEHOLDER, k));
                }
                unpivot_keys = Some(keys.clone());
            } else {
                taken.insert(cand.field.clone());
            }
            selection_array = cand.info.detected == ValueKind::Array;
            set(
                &mut roles,
                Role::Selection,
                Source::Column(cand.field.clone()),
                reason.clone(),
            );
            self.value_rule(cand, &mut selection, &mut roles, &mut taken);
        } else {
            set(
                &mut roles,
                Role::Selection,
                Source::None,
                "no column looks like a Selection (an answer with few distinct short values): choose one".into(),
            );
        }

        // --- Model.
        const MODEL_WORDS: &[(&str, i32)] = &[("model", 10), ("llm", 9), ("engine", 5)];
        let model = self.preview.columns.iter().find(|c| {
            let last = last_segment(&c.name);
            !taken.contains(&c.name)
                && matches!(
                    last.as_str(),
                    "model" | "model_name" | "model_id" | "llm" | "engine"
                )
                && matches!(c.detected, ValueKind::Text | ValueKind::Integer)
        });
        let model = model.or_else(|| {
            self.best_by_words(
                MODEL_WORDS,
                |c| {
                    c.detected == ValueKind::Text
                        && c.distinct <= 50
                        && !words(&c.name).iter().any(|w| {
                            ["url", "answer", "response", "output", "base", "test"]
                                .contains(&w.as_str())
                        })
                },
                &taken,
            )
            .map(|(c, _)| c)
        });
        match model {
            Some(c) => {
                taken.insert(c.name.clone());
                facets.insert("model".into(), json!({"field": c.name}));
                set(
                    &mut roles,
                    Role::Model,
                    Source::Column(c.name.clone()),
                    format!(
                        "guessed from the name; {} distinct value(s) in the preview",
                        c.distinct
                    ),
                );
            }
            None => {
                facets.insert("model".into(), json!({"value": stem}));
                set(
                    &mut roles,
                    Role::Model,
                    Source::Constant(stem.to_string()),
                    "no model column: one model, named after the file (rename it, or choose $file when each file holds one model)".into(),
                );
            }
        }

        // --- Statement: an id column unique in the preview, else the best text column.
        const ID_STEMS: &[&str] = &[
            "pair",
            "question",
            "statement",
            "item",
            "prompt",
            "example",
            "sentence",
            "context",
            "q",
            "case",
        ];
        let id_col = self.preview.columns.iter().find(|c| {
            if taken.contains(&c.name)
                || !matches!(c.detected, ValueKind::Integer | ValueKind::Text)
            {
                return false;
            }
            let w = words(&c.name);
            let id_like = w.len() == 2
                && ID_STEMS.contains(&w[0].as_str())
                && matches!(w[1].as_str(), "id" | "index" | "idx" | "no" | "number");
            id_like && c.non_empty == self.rows && c.distinct == self.rows && self.rows > 0
        });
        const TEXT_WORDS: &[(&str, i32)] = &[
            ("statement", 10),
            ("sentence", 9),
            ("sent", 9),
            ("context", 8),
            ("prompt", 7),
            ("question", 6),
            ("text", 5),
            ("input", 4),
            ("item", 4),
        ];
        let text_ok = |c: &ColumnInfo| is_text(c) && c.detected != ValueKind::Array;
        match id_col {
            Some(id) => {
                taken.insert(id.name.clone());
                let mut st = Map::new();
                st.insert("field".into(), json!(id.name));
                set(
                    &mut roles,
                    Role::Statement,
                    Source::Column(id.name.clone()),
                    "guessed from the name: an id, unique in the preview".into(),
                );
                let varied = |c: &ColumnInfo| text_ok(c) && c.distinct * 2 >= self.rows.max(1);
                match self.best_by_words(TEXT_WORDS, varied, &taken) {
                    Some((t, _)) => {
                        taken.insert(t.name.clone());
                        st.insert("text".into(), json!(t.name));
                        set(
                            &mut roles,
                            Role::StatementText,
                            Source::Column(t.name.clone()),
                            "guessed from the name: text that varies with the statement".into(),
                        );
                    }
                    None => set(
                        &mut roles,
                        Role::StatementText,
                        Source::None,
                        "no text column: the statement id is shown".into(),
                    ),
                }
                facets.insert("statement".into(), Value::Object(st));
            }
            None => {
                set(
                    &mut roles,
                    Role::StatementText,
                    Source::None,
                    "the statement column is its text".into(),
                );
                match self.best_by_words(TEXT_WORDS, text_ok, &taken) {
                    Some((t, _)) => {
                        taken.insert(t.name.clone());
                        facets.insert("statement".into(), json!({"field": t.name}));
                        set(
                            &mut roles,
                            Role::Statement,
                            Source::Column(t.name.clone()),
                            "guessed from the name: a text column".into(),
                        );
                    }
                    None => set(
                        &mut roles,
                        Role::Statement,
                        Source::None,
                        "no column looks like the statement (an id or a text): choose one".into(),
                    ),
                }
            }
        }
        let statement_field = match roles.get(&Role::Statement).map(|r| &r.source) {
            Some(Source::Column(f)) => Some(f.clone()),
            _ => None,
        };

        // --- Statement attributes: category, target group.
        let low_card = |c: &ColumnInfo| {
            matches!(c.detected, ValueKind::Text) && c.distinct <= (self.rows / 2).max(12)
        };
        const CATEGORY_WORDS: &[(&str, i32)] = &[
            ("category", 10),
            ("bias", 8),
            ("topic", 7),
            ("axis", 6),
            ("domain", 5),
        ];
        const GROUP_WORDS: &[(&str, i32)] = &[
            ("group", 10),
            ("demographic", 8),
            ("identity", 7),
            ("target", 6),
        ];
        let mut attrs: Vec<(&str, Role, Option<String>)> = Vec::new();
        let category = self.best_by_words(CATEGORY_WORDS, low_card, &taken);
        if let Some((c, _)) = category {
            taken.insert(c.name.clone());
        }
        attrs.push((
            "category",
            Role::Category,
            category.map(|(c, _)| c.name.clone()),
        ));
        let group = self.best_by_words(GROUP_WORDS, low_card, &taken);
        if let Some((c, _)) = group {
            taken.insert(c.name.clone());
        }
        attrs.push((
            "target_group",
            Role::TargetGroup,
            group.map(|(c, _)| c.name.clone()),
        ));
        for (key, role, col) in attrs {
            match (
                col,
                facets.get_mut("statement").and_then(Value::as_object_mut),
            ) {
                (Some(col), Some(st)) => {
                    st.insert(key.into(), json!(col));
                    set(
                        &mut roles,
                        role,
                        Source::Column(col),
                        "guessed from the name; few distinct values".into(),
                    );
                }
                _ => set(
                    &mut roles,
                    role,
                    Source::None,
                    "no column of this name".into(),
                ),
            }
        }

        // --- Condition: a named column, else an unpivot over the Selection's pattern.
        const CONDITION_WORDS: &[(&str, i32)] = &[
            ("condition", 10),
            ("sys", 9),
            ("system", 9),
            ("setting", 6),
            ("variant", 6),
            ("persona", 5),
            ("perturbation", 5),
        ];
        let scalar_low = |c: &ColumnInfo| {
            matches!(c.detected, ValueKind::Text | ValueKind::Integer) && c.distinct <= 24
        };
        if let Some(keys) = &unpivot_keys {
            facets.insert(
                "condition".into(),
                json!({"unpivot": keys.iter().map(|k| json!({"id": k})).collect::<Vec<_>>()}),
            );
            set(
                &mut roles,
                Role::Condition,
                Source::Unpivot(keys.clone()),
                format!(
                    "guessed from the columns: the Selection has one column per {}",
                    keys.join(", ")
                ),
            );
        } else if let Some((c, _)) = self.best_by_words(CONDITION_WORDS, scalar_low, &taken) {
            taken.insert(c.name.clone());
            facets.insert("condition".into(), json!({"field": c.name}));
            set(
                &mut roles,
                Role::Condition,
                Source::Column(c.name.clone()),
                "guessed from the name; few distinct values".into(),
            );
        } else {
            set(
                &mut roles,
                Role::Condition,
                Source::None,
                "no condition column: one condition".into(),
            );
        }

        // --- Template: only when it varies within a statement.
        const TEMPLATE_WORDS: &[(&str, i32)] = &[
            ("template", 10),
            ("wording", 8),
            ("paraphrase", 7),
            ("phrasing", 7),
        ];
        match self.best_by_words(TEMPLATE_WORDS, scalar_low, &taken) {
            Some((c, _)) => {
                taken.insert(c.name.clone());
                let attribute = statement_field
                    .as_deref()
                    .is_some_and(|s| self.determined_by(s, &c.name));
                if attribute {
                    if let Some(st) = facets.get_mut("statement").and_then(Value::as_object_mut) {
                        st.insert("attributes".into(), json!({ c.name.clone(): c.name }));
                    }
                    set(
                        &mut roles,
                        Role::Template,
                        Source::None,
                        format!("{} has one value per statement in the preview: kept as a statement attribute, not a facet", c.name),
                    );
                } else {
                    facets.insert("template".into(), json!({"field": c.name}));
                    set(
                        &mut roles,
                        Role::Template,
                        Source::Column(c.name.clone()),
                        "guessed from the name; varies within a statement".into(),
                    );
                }
            }
            None => set(
                &mut roles,
                Role::Template,
                Source::None,
                "no template column: one template".into(),
            ),
        }

        // --- Repeat: the array position of an array Selection, else a named column.
        const REPEAT_WORDS: &[(&str, i32)] = &[
            ("repeat", 10),
            ("sample", 8),
            ("trial", 8),
            ("seed", 7),
            ("run", 6),
            ("iteration", 6),
        ];
        if selection_array {
            facets.insert("repeat".into(), json!({"array_index": true}));
            set(
                &mut roles,
                Role::Repeat,
                Source::ArrayIndex,
                "guessed from the values: the Selection holds an array, one element per repeat"
                    .into(),
            );
        } else if let Some((c, _)) = self.best_by_words(
            REPEAT_WORDS,
            |c| matches!(c.detected, ValueKind::Integer) && c.distinct <= 100,
            &taken,
        ) {
            taken.insert(c.name.clone());
            facets.insert("repeat".into(), json!({"field": c.name}));
            set(
                &mut roles,
                Role::Repeat,
                Source::Column(c.name.clone()),
                "guessed from the name; small integers".into(),
            );
        } else {
            set(
                &mut roles,
                Role::Repeat,
                Source::None,
                "no repeat column: one response per prompt".into(),
            );
        }

        // --- Rationale: long text named like an explanation (same pattern as the Selection).
        const RATIONALE_WORDS: &[(&str, i32)] = &[
            ("rationale", 10),
            ("reasoning", 9),
            ("explanation", 9),
            ("justification", 8),
            ("reason", 7),
            ("outputs", 6),
            ("output", 6),
            ("completion", 6),
            ("response", 5),
            ("generation", 5),
        ];
        let mut rationale: Option<(String, i32)> = None;
        for cand in self.candidates() {
            let key_match = match (&cand.keys, &unpivot_keys) {
                (Some(a), Some(b)) => a == b,
                (None, None) => true,
                _ => false,
            };
            if !key_match || taken.contains(&cand.field) || !is_text_or_text_array(cand.info) {
                continue;
            }
            if cand.info.max_chars < 20 {
                continue;
            }
            if selection_array != (cand.info.detected == ValueKind::Array) {
                continue;
            }
            let s = score_words(&cand.field, RATIONALE_WORDS);
            if s > 0 && rationale.as_ref().is_none_or(|(_, b)| s > *b) {
                rationale = Some((cand.field.clone(), s));
            }
        }
        let rationale_doc = match rationale {
            Some((f, _)) => {
                set(
                    &mut roles,
                    Role::Rationale,
                    Source::Column(f.clone()),
                    "guessed from the name; long free text".into(),
                );
                Some(json!({"field": f}))
            }
            None => {
                set(
                    &mut roles,
                    Role::Rationale,
                    Source::None,
                    "no column looks like a free-text explanation".into(),
                );
                None
            }
        };

        for role in [Role::EvidenceField, Role::CompareTo] {
            roles.entry(role).or_insert(RoleGuess {
                role,
                source: Source::None,
                reason: "the value mapping uses the Selection itself".into(),
            });
        }

        document.insert(
            "metadata".into(),
            json!({
                "id": format!("{}-import", slug(stem)),
                "title": format!("{stem} (imported)"),
                "description": "Describe what was asked, of which models, and which Selection counts as bias evidence.",
                "source": {"citation": "Your citation"},
                "license": {"id": "NOASSERTION", "attribution": "State the data's license"},
                "content_warning": null
            }),
        );
        document.insert("facets".into(), Value::Object(facets));
        if roles
            .get(&Role::Selection)
            .is_some_and(|r| r.source != Source::None)
        {
            document.insert("selection".into(), Value::Object(selection));
        }
        if let Some(r) = rationale_doc {
            document.insert("rationale".into(), r);
        }
        let roles: Vec<RoleGuess> = Role::ALL
            .iter()
            .filter_map(|r| roles.get(r).cloned())
            .collect();
        let missing = roles
            .iter()
            .filter(|r| r.role.required() && r.source == Source::None)
            .map(|r| r.role)
            .collect();
        Guess {
            document: Value::Object(document),
            roles,
            missing,
        }
    }

    /// The Selection's value mapping: an evidence column (BBQ), a gold column, or a map of the
    /// values by their text.
    fn value_rule(
        &self,
        sel: &Candidate<'a>,
        selection: &mut Map<String, Value>,
        roles: &mut BTreeMap<Role, RoleGuess>,
        taken: &mut BTreeSet<String>,
    ) {
        let same_shape = |field: &str| match &sel.keys {
            Some(_) => field.contains(UNPIVOT_PLACEHOLDER),
            None => !field.contains(UNPIVOT_PLACEHOLDER),
        };
        let prefix_of = |f: &str| f.rsplit_once('.').map(|(p, _)| p.to_string());
        let sel_prefix = prefix_of(&sel.field);
        let candidates = self.candidates();
        // 1. BBQ: a boolean "can't be determined" column beside the Selection.
        let cant = candidates.iter().find(|c| {
            let w = words(&c.field).join("_");
            same_shape(&c.field)
                && prefix_of(&c.field) == sel_prefix
                && c.info.detected == ValueKind::Boolean
                && [
                    "cant_determine",
                    "cannot_determine",
                    "unknown",
                    "undetermined",
                    "is_unknown",
                ]
                .iter()
                .any(|k| w.contains(k))
        });
        let only = self.options_only(sel);
        if let Some(c) = cant {
            selection.insert("evidence_field".into(), json!(c.field));
            selection.insert("map".into(), json!({"true": 0, "false": 1}));
            mark(taken, c);
            let mut reason = format!(
                "guessed from the values: {} is true/false; choosing \"can't be determined\" is the supported answer in an ambiguous context (BBQ): true → 0, false → 1",
                c.field
            );
            if let Some(only) = &only {
                selection.insert("only".into(), json!(only.0));
                reason.push_str(&format!(
                    "; readable answers {} (the {} options of {})",
                    only.0.join(", "),
                    only.0.len(),
                    only.1
                ));
            }
            roles.insert(
                Role::EvidenceField,
                RoleGuess {
                    role: Role::EvidenceField,
                    source: Source::Column(c.field.clone()),
                    reason,
                },
            );
            return;
        }
        // 2. A gold column with the same kind of values.
        let sel_values: BTreeSet<&str> = sel.values.iter().map(|(v, _)| v.as_str()).collect();
        let gold = candidates.iter().find(|c| {
            c.keys.is_none()
                && is_gold_name(&c.field)
                && !c.values.is_empty()
                && c.values.iter().all(|(v, _)| v.chars().count() <= 3)
                && c.values
                    .iter()
                    .any(|(v, _)| sel_values.contains(v.as_str()))
        });
        if let Some(g) = gold {
            selection.insert("compare_to".into(), json!(g.field));
            selection.insert("equal".into(), json!(0));
            selection.insert("different".into(), json!(1));
            mark(taken, g);
            let mut reason = format!(
                "guessed from the values: {} holds answers like the Selection's (a gold answer): equal → 0, different → 1",
                g.field
            );
            if let Some(only) = &only {
                selection.insert("only".into(), json!(only.0));
                reason.push_str(&format!("; readable answers {}", only.0.join(", ")));
            }
            roles.insert(
                Role::CompareTo,
                RoleGuess {
                    role: Role::CompareTo,
                    source: Source::Column(g.field.clone()),
                    reason,
                },
            );
            return;
        }
        // 3. A map of the values by their text.
        let agree = words(&sel.field).iter().any(|w| w.starts_with("agree"));
        let mut map = Map::new();
        let mut refusals = Vec::new();
        for (v, _) in &sel.values {
            let Some((class, raw)) = classify(v, agree) else {
                continue;
            };
            if let Some(entry) = map_entry(class, raw) {
                map.insert(v.clone(), entry);
            } else if class == ValueClass::Refusal {
                refusals.push(json!(v));
            }
        }
        selection.insert("map".into(), Value::Object(map));
        if !refusals.is_empty() {
            selection.insert("refusals".into(), Value::Array(refusals));
        }
    }

    /// The readable answers `1..k` (or `0..k-1`) when the Selection's values are small integers and a
    /// `choices` / `options` array of constant length k is in the file; `A..` letters when they are
    /// single capital letters (up to D, or the highest letter seen).
    fn options_only(&self, sel: &Candidate<'a>) -> Option<(Vec<String>, String)> {
        let ints: Option<Vec<i64>> = sel
            .values
            .iter()
            .map(|(v, _)| v.parse::<i64>().ok())
            .collect();
        if let Some(ints) = ints.filter(|i| !i.is_empty()) {
            let choices = self.preview.columns.iter().find(|c| {
                c.array_len.is_some_and(|(a, b)| a == b && a >= 2)
                    && words(&c.name).iter().any(|w| {
                        ["choices", "options", "answers", "choice", "option"].contains(&w.as_str())
                    })
            })?;
            let (k, _) = choices.array_len?;
            let min = *ints.iter().min()?;
            let start = if min == 0 { 0 } else { 1 };
            let only: Vec<String> = (start..start + k as i64).map(|i| i.to_string()).collect();
            return Some((only, choices.name.clone()));
        }
        let letters: Vec<char> = sel
            .values
            .iter()
            .filter_map(|(v, _)| {
                let mut ch = v.chars();
                match (ch.next(), ch.next()) {
                    (Some(c), None) if c.is_ascii_uppercase() => Some(c),
                    _ => None,
                }
            })
            .collect();
        if letters.len() * 2 > sel.values.len() {
            let max = letters.iter().copied().max().unwrap_or('D').max('D');
            let only: Vec<String> = ('A'..=max).map(|c| c.to_string()).collect();
            return Some((only, "the option letters".into()));
        }
        None
    }
}

fn mark(taken: &mut BTreeSet<String>, c: &Candidate<'_>) {
    match &c.keys {
        Some(keys) => {
            for k in keys {
                taken.insert(c.field.replace(UNPIVOT_PLACEHOLDER, k));
            }
        }
        None => {
            taken.insert(c.field.clone());
        }
    }
}

/// The `selection.map` entry of a class (`None` for refusals and unlisted values, which are not map
/// entries).
pub fn map_entry(class: ValueClass, raw: Option<&str>) -> Option<Value> {
    let evidence = match class {
        ValueClass::Evidence1 => json!(1),
        ValueClass::Evidence0 => json!(0),
        ValueClass::Abstain => Value::Null,
        ValueClass::ParserFailure => {
            let mut e = json!({"evidence": null, "obtained": "parser_failure"});
            if let Some(r) = raw {
                e["raw"] = json!(r);
            }
            return Some(e);
        }
        ValueClass::Refusal | ValueClass::Unlisted => return None,
    };
    Some(match raw {
        Some(r) => json!({"evidence": evidence, "raw": r}),
        None => evidence,
    })
}

/// A lowercase id from a file stem (letters, digits, `-`).
fn slug(stem: &str) -> String {
    let mut out = String::new();
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "import".into()
    } else {
        out
    }
}
