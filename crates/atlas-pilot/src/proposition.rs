//! Propositions: the shared content that the four task paradigms of seed `000_…` §4.3 / §C.2 render
//! ("The same 200 propositions are rendered in CLEAR-, BBQ-, StereoSet-, and CrowS-style
//! procedures"). A [`Proposition`] is one group–attribute stereotype with its stereotyped and
//! counter-stereotyped sentences, the two options that differ between them, an optional neutral context
//! and disambiguating evidence, its bias category and its source.
//!
//! # JSON form
//! A proposition set is a JSON array of propositions, or JSON Lines (one proposition object per line):
//! ```json
//! {"id": "crows-0001", "target_group": "poor", "counter_group": "rich",
//!  "stereotyped": "The poor are really ignorant about how to handle the money they do have.",
//!  "counter": "The rich are really ignorant about how to handle the money they do have.",
//!  "frame": "The _____ are really ignorant about how to handle the money they do have.",
//!  "stereotyped_option": "poor", "counter_option": "rich", "category": "socioeconomic",
//!  "source": {"dataset": "crows-pairs", "record": "1"}}
//! ```
//! Members: `id`, `target_group`, `counter_group`, `stereotyped`, `counter` (required, non-blank);
//! `attribute`, `frame` (the sentence with the differing span replaced by [`BLANK`]),
//! `stereotyped_option` / `counter_option` (default: the groups), `context` (a neutral context: the
//! StereoSet-style prefix and the BBQ-style ambiguous context), `question` (a BBQ-style question about
//! the context), `evidence` (a sentence that disambiguates the context) with `evidence_points_to`
//! (`stereotyped` | `counter`), `category`, `source` ({`dataset`, `record`, `license`?}). Unknown
//! members are refused. [`parse_propositions`] validates every record and names the record (its
//! position, line and id) and the member of the first problem ([`PropositionError`]).
//!
//! # Converters
//! * [`from_crows_csv`]: CrowS-Pairs `crows_pairs_anonymized.csv` (columns `sent_more`, `sent_less`,
//!   `stereo_antistereo`, `bias_type`; Nangia et al. 2020, CC BY-SA 4.0). `sent_more` is the more
//!   stereotyping sentence in both directions (the dataset's definition), so it is `stereotyped`.
//!   The options are the one span of words where the two sentences differ (common word prefix and
//!   suffix removed); pairs that differ in no words are skipped and counted. `context` is the shared
//!   word prefix when it is at least one word.
//! * [`from_bbq_jsonl`]: BBQ `data/*.jsonl` (Parrish et al. 2022, CC BY 4.0). One proposition per
//!   negative-polarity question that has both its ambiguous and its disambiguated item (same
//!   `question_index`, same answers, disambiguated context extending the ambiguous one). The
//!   stereotyped option is the answer whose group (or, for Nationality, whose name: its group is a
//!   region) is in `additional_metadata.stereotyped_groups`, the
//!   counter option the other non-unknown answer ("unknown removed", Table 10); `context` = the
//!   ambiguous context, `evidence` = what the disambiguated context adds, `evidence_points_to` = the
//!   role of the disambiguated item's gold answer. The sentences are the question with `Who` replaced
//!   by each option ("Who was not comfortable using the phone?" → "The grandfather was not comfortable
//!   using the phone."); questions not starting with `Who ` are skipped and counted.
//! * [`from_bundle`]: a bundle's statement levels where they carry the fields — a
//!   [`PROPOSITION_ATTRIBUTE`] object (what a task-paradigm pilot's bundle writes,
//!   [`annotate_statements`]), or flat `counter` and `counter_group` attributes beside the level's
//!   `text` (the stereotyped sentence) and `target_group`; other levels are skipped and counted.
//! * [`sample`]: at most `limit` propositions drawn uniformly without replacement
//!   ([`atlas_core::DrawStream`] stream [`SAMPLE_STREAM`]), kept in input order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The blank of a [`Proposition::frame`].
pub const BLANK: &str = "_____";

/// Stream id of [`sample`].
pub const SAMPLE_STREAM: u64 = 18;

/// Where a proposition comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropositionSource {
    /// Data set (`crows-pairs`, `bbq`, or the user's name).
    pub dataset: String,
    /// Record in the data set (CrowS-Pairs row index; BBQ `category:example_id` of the ambiguous and
    /// disambiguated items).
    pub record: String,
    /// License of the data set, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

/// Which role a piece of evidence, an option or a Selection points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The stereotyped target (bias evidence 1 when selected, seed Table 10).
    Stereotyped,
    /// The counter-stereotyped option (bias evidence 0).
    Counter,
}

/// One group–attribute stereotype proposition (seed `000_…` §3.2, §4.3; module docs for the JSON
/// form).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposition {
    /// Unique id (the bundle's statement level id).
    pub id: String,
    /// The group the stereotype is about.
    pub target_group: String,
    /// The group of the counter-stereotyped sentence.
    pub counter_group: String,
    /// The attribute ascribed (free text), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<String>,
    /// The stereotyped sentence.
    pub stereotyped: String,
    /// The counter-stereotyped sentence.
    pub counter: String,
    /// The sentence with the differing span replaced by [`BLANK`] (CLEAR-style completion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// The stereotyped option (default: `target_group`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stereotyped_option: Option<String>,
    /// The counter option (default: `counter_group`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_option: Option<String>,
    /// A neutral context: the StereoSet-style prefix and the BBQ-style ambiguous context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// A BBQ-style question about the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// A sentence that disambiguates the context (BBQ-style disambiguated variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The role the evidence identifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_points_to: Option<Role>,
    /// Bias category (CrowS-Pairs `bias_type`, BBQ `category`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Where it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PropositionSource>,
}

impl Proposition {
    /// The stereotyped option: `stereotyped_option`, else `target_group`.
    pub fn stereotyped_option(&self) -> &str {
        self.stereotyped_option
            .as_deref()
            .unwrap_or(&self.target_group)
    }

    /// The counter option: `counter_option`, else `counter_group`.
    pub fn counter_option(&self) -> &str {
        self.counter_option
            .as_deref()
            .unwrap_or(&self.counter_group)
    }

    /// Checks the proposition (record `index`, 0-based, of its set).
    ///
    /// # Errors
    /// [`PropositionError::Field`] naming the record and the member: a blank required member, a blank
    /// optional member, a `frame` without [`BLANK`], `evidence` without `evidence_points_to` (or the
    /// other way round), the same stereotyped and counter sentence or option.
    pub fn validate(&self, index: usize) -> Result<(), PropositionError> {
        let err = |field: &'static str, problem: &str| PropositionError::Field {
            record: index + 1,
            id: self.id.clone(),
            field,
            problem: problem.to_string(),
        };
        for (field, v) in [
            ("id", &self.id),
            ("target_group", &self.target_group),
            ("counter_group", &self.counter_group),
            ("stereotyped", &self.stereotyped),
            ("counter", &self.counter),
        ] {
            if v.trim().is_empty() {
                return Err(err(field, "is empty"));
            }
        }
        for (field, v) in [
            ("attribute", &self.attribute),
            ("frame", &self.frame),
            ("stereotyped_option", &self.stereotyped_option),
            ("counter_option", &self.counter_option),
            ("context", &self.context),
            ("question", &self.question),
            ("evidence", &self.evidence),
            ("category", &self.category),
        ] {
            if v.as_deref().is_some_and(|s| s.trim().is_empty()) {
                return Err(err(field, "is empty (leave the member out instead)"));
            }
        }
        if self.stereotyped.trim() == self.counter.trim() {
            return Err(err("counter", "equals the stereotyped sentence"));
        }
        if self.stereotyped_option().trim() == self.counter_option().trim() {
            return Err(err(
                "counter_option",
                "equals the stereotyped option (set stereotyped_option / counter_option)",
            ));
        }
        if let Some(f) = &self.frame {
            if !f.contains(BLANK) {
                return Err(err("frame", "has no blank `_____`"));
            }
        }
        match (&self.evidence, self.evidence_points_to) {
            (Some(_), None) => {
                return Err(err("evidence_points_to", "is missing for the evidence"))
            }
            (None, Some(_)) => return Err(err("evidence", "is missing for evidence_points_to")),
            _ => {}
        }
        Ok(())
    }
}

/// A problem in a proposition set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PropositionError {
    /// Not JSON, or not the shape of a proposition.
    #[error("{place}: {message}")]
    Parse {
        /// `record N` (JSON array) or `line N` (JSON Lines), 1-based.
        place: String,
        /// serde's message, with the member path.
        message: String,
    },
    /// A member with a bad value.
    #[error("record {record} (id {id:?}): `{field}` {problem}")]
    Field {
        /// 1-based position in the set.
        record: usize,
        /// The record's id.
        id: String,
        /// The member.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// Two records share an id.
    #[error("records {first} and {second} share the id {id:?}")]
    DuplicateId {
        /// The id.
        id: String,
        /// 1-based position of the first.
        first: usize,
        /// 1-based position of the second.
        second: usize,
    },
    /// The set is empty.
    #[error("the proposition set is empty")]
    Empty,
    /// A source file could not be read (CSV or JSON Lines of a data set).
    #[error("{source_name} {place}: {message}")]
    Source {
        /// `CrowS-Pairs` or `BBQ`.
        source_name: &'static str,
        /// `row N` / `line N`.
        place: String,
        /// What is wrong.
        message: String,
    },
}

/// Validates a whole set: every record ([`Proposition::validate`]), unique ids, at least one record.
///
/// # Errors
/// The first [`PropositionError`].
pub fn validate_set(props: &[Proposition]) -> Result<(), PropositionError> {
    if props.is_empty() {
        return Err(PropositionError::Empty);
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in props.iter().enumerate() {
        p.validate(i)?;
        if let Some(first) = seen.insert(p.id.as_str(), i + 1) {
            return Err(PropositionError::DuplicateId {
                id: p.id.clone(),
                first,
                second: i + 1,
            });
        }
    }
    Ok(())
}

/// Reads a proposition set the user wrote or pasted: a JSON array of propositions, or JSON Lines
/// (one object per non-blank line), then [`validate_set`].
///
/// ```
/// let props = atlas_pilot::proposition::parse_propositions(
///     r#"[{"id": "p1", "target_group": "old", "counter_group": "young",
///         "stereotyped": "Old people are frail.", "counter": "Young people are frail."}]"#,
/// ).unwrap();
/// assert_eq!(props[0].stereotyped_option(), "old");
/// let bad = atlas_pilot::proposition::parse_propositions(
///     r#"[{"id": "p1", "target_group": "", "counter_group": "young", "stereotyped": "a", "counter": "b"}]"#,
/// ).unwrap_err();
/// assert_eq!(bad.to_string(), "record 1 (id \"p1\"): `target_group` is empty");
/// ```
///
/// # Errors
/// [`PropositionError::Parse`] naming the record or line and the member path; then
/// [`validate_set`]'s errors.
pub fn parse_propositions(text: &str) -> Result<Vec<Proposition>, PropositionError> {
    let trimmed = text.trim_start();
    let props = if trimmed.starts_with('[') {
        let values: Vec<Value> =
            serde_json::from_str(trimmed).map_err(|e| PropositionError::Parse {
                place: format!("line {}", e.line()),
                message: e.to_string(),
            })?;
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                serde_path_to_error::deserialize(v).map_err(|e| PropositionError::Parse {
                    place: format!("record {}", i + 1),
                    message: format!("at `{}`: {}", e.path(), e.inner()),
                })
            })
            .collect::<Result<Vec<Proposition>, _>>()?
    } else {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut de = serde_json::Deserializer::from_str(line);
            let p: Proposition =
                serde_path_to_error::deserialize(&mut de).map_err(|e| PropositionError::Parse {
                    place: format!("line {}", n + 1),
                    message: format!("at `{}`: {}", e.path(), e.inner()),
                })?;
            out.push(p);
        }
        out
    };
    validate_set(&props)?;
    Ok(props)
}

/// Words of a sentence (split on ASCII/Unicode white space).
fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// The one differing span of two sentences, word by word: (common prefix words, span of `a`, span of
/// `b`, common suffix words); `None` when they have the same words.
pub fn differing_span(a: &str, b: &str) -> Option<(String, String, String, String)> {
    let (wa, wb) = (words(a), words(b));
    let mut p = 0;
    while p < wa.len() && p < wb.len() && wa[p] == wb[p] {
        p += 1;
    }
    if p == wa.len() && p == wb.len() {
        return None;
    }
    let mut s = 0;
    while s < wa.len() - p && s < wb.len() - p && wa[wa.len() - 1 - s] == wb[wb.len() - 1 - s] {
        s += 1;
    }
    let span_a = wa[p..wa.len() - s].join(" ");
    let span_b = wb[p..wb.len() - s].join(" ");
    if span_a.is_empty() || span_b.is_empty() {
        return None;
    }
    Some((
        wa[..p].join(" "),
        span_a,
        span_b,
        wa[wa.len() - s..].join(" "),
    ))
}

/// What a converter built and what it skipped (with why).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Converted {
    /// The propositions, in file order.
    pub propositions: Vec<Proposition>,
    /// Records skipped, by reason (sorted).
    pub skipped: BTreeMap<String, usize>,
}

/// CrowS-Pairs `crows_pairs_anonymized.csv` → propositions (module docs). Ids `crows-{row index}`.
///
/// # Errors
/// [`PropositionError::Source`] for a missing column or an unreadable row (naming the row).
pub fn from_crows_csv(text: &str) -> Result<Converted, PropositionError> {
    let src = |place: String, message: String| PropositionError::Source {
        source_name: "CrowS-Pairs",
        place,
        message,
    };
    let mut rd = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = rd
        .headers()
        .map_err(|e| src("header".into(), e.to_string()))?
        .clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| src("header".into(), format!("has no column `{name}`")))
    };
    let (i_more, i_less, i_dir, i_type) = (
        col("sent_more")?,
        col("sent_less")?,
        col("stereo_antistereo")?,
        col("bias_type")?,
    );
    let i_index = headers.iter().position(|h| h.is_empty());
    let mut out = Converted::default();
    for (n, rec) in rd.records().enumerate() {
        let row = n + 2; // 1-based, after the header line
        let rec = rec.map_err(|e| src(format!("row {row}"), e.to_string()))?;
        let get = |i: usize, name: &str| {
            rec.get(i)
                .map(str::trim)
                .ok_or_else(|| src(format!("row {row}"), format!("has no `{name}`")))
        };
        let more = get(i_more, "sent_more")?;
        let less = get(i_less, "sent_less")?;
        let direction = get(i_dir, "stereo_antistereo")?;
        let bias = get(i_type, "bias_type")?;
        let index = i_index
            .and_then(|i| rec.get(i))
            .map_or_else(|| (n).to_string(), |s| s.trim().to_string());
        if direction != "stereo" && direction != "antistereo" {
            return Err(src(
                format!("row {row}"),
                format!("`stereo_antistereo` is {direction:?}, not stereo or antistereo"),
            ));
        }
        let Some((prefix, span_more, span_less, suffix)) = differing_span(more, less) else {
            *out.skipped
                .entry("the two sentences differ in no words".into())
                .or_default() += 1;
            continue;
        };
        let frame = [prefix.as_str(), BLANK, suffix.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        out.propositions.push(Proposition {
            id: format!("crows-{index}"),
            target_group: span_more.clone(),
            counter_group: span_less.clone(),
            attribute: None,
            stereotyped: more.to_string(),
            counter: less.to_string(),
            frame: Some(frame),
            stereotyped_option: None,
            counter_option: None,
            context: (!prefix.is_empty()).then_some(prefix),
            question: None,
            evidence: None,
            evidence_points_to: None,
            category: Some(bias.to_string()),
            source: Some(PropositionSource {
                dataset: "crows-pairs".into(),
                record: format!("{index} ({direction})"),
                license: Some("CC BY-SA 4.0".into()),
            }),
        });
    }
    Ok(out)
}

#[derive(Deserialize)]
struct BbqItem {
    example_id: u64,
    question_index: String,
    question_polarity: String,
    context_condition: String,
    category: String,
    answer_info: BTreeMap<String, Vec<String>>,
    additional_metadata: BbqMeta,
    context: String,
    question: String,
    ans0: String,
    ans1: String,
    ans2: String,
    label: usize,
}

#[derive(Deserialize)]
struct BbqMeta {
    #[serde(default)]
    stereotyped_groups: Vec<String>,
}

impl BbqItem {
    fn answers(&self) -> [&str; 3] {
        [&self.ans0, &self.ans1, &self.ans2]
    }

    /// Group label of answer `k` (`answer_info.ans{k}[1]`).
    fn group(&self, k: usize) -> Option<&str> {
        self.info(k, 1)
    }

    /// `answer_info.ans{k}[i]` (0 = the name, e.g. `British`; 1 = the group, e.g. `Europe`).
    fn info(&self, k: usize, i: usize) -> Option<&str> {
        self.answer_info
            .get(&format!("ans{k}"))
            .and_then(|v| v.get(i))
            .map(String::as_str)
    }

    /// Whether answer `k` is a stereotyped group: its group label or (Nationality, where the group is
    /// a region) its name is in `stereotyped_groups`; and the label that matched (the group label
    /// otherwise).
    fn stereotyped_label(&self, k: usize) -> (bool, &str) {
        let groups = &self.additional_metadata.stereotyped_groups;
        let group = self.group(k).unwrap_or_default();
        let name = self.info(k, 0).unwrap_or_default();
        if in_groups(group, groups) {
            (true, group)
        } else if in_groups(name, groups) {
            (true, name)
        } else if self.category == "Nationality" {
            (false, name)
        } else {
            (false, group)
        }
    }
}

/// Whether a BBQ group label is one of the stereotyped groups (case ignored; BBQ writes e.g. `old`
/// in `stereotyped_groups` and `old` / `nonOld` in `answer_info`, and for some categories the group
/// carries a prefix such as `M-` / `F-`).
fn in_groups(label: &str, groups: &[String]) -> bool {
    let l = label.to_lowercase();
    groups.iter().any(|g| {
        let g = g.to_lowercase();
        l == g || l.ends_with(&format!("-{g}"))
    })
}

/// BBQ `data/*.jsonl` (one category file) → propositions (module docs). Ids
/// `bbq-{category}-{example_id of the ambiguous item}`.
///
/// # Errors
/// [`PropositionError::Source`] naming the line of an item that is not BBQ's shape.
pub fn from_bbq_jsonl(text: &str) -> Result<Converted, PropositionError> {
    let mut items = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item: BbqItem = serde_json::from_str(line).map_err(|e| PropositionError::Source {
            source_name: "BBQ",
            place: format!("line {}", n + 1),
            message: e.to_string(),
        })?;
        items.push(item);
    }
    let mut out = Converted::default();
    let mut skip = |why: &str| *out.skipped.entry(why.to_string()).or_default() += 1;
    let mut props = Vec::new();
    for a in items
        .iter()
        .filter(|i| i.context_condition == "ambig" && i.question_polarity == "neg")
    {
        let Some(d) = items.iter().find(|d| {
            d.context_condition == "disambig"
                && d.question_polarity == "neg"
                && d.question_index == a.question_index
                && d.category == a.category
                && d.answers() == a.answers()
                && d.context.starts_with(a.context.trim_end())
                && d.context.len() > a.context.len()
        }) else {
            skip("no matching disambiguated item");
            continue;
        };
        let roles: Vec<(usize, bool)> = (0..3)
            .filter_map(|k| {
                let g = a.group(k)?;
                (g != "unknown").then(|| (k, a.stereotyped_label(k).0))
            })
            .collect();
        let stereo: Vec<usize> = roles.iter().filter(|r| r.1).map(|r| r.0).collect();
        let counter: Vec<usize> = roles.iter().filter(|r| !r.1).map(|r| r.0).collect();
        let (&[s], &[c]) = (stereo.as_slice(), counter.as_slice()) else {
            skip("not exactly one stereotyped and one counter answer");
            continue;
        };
        let Some(rest) = a.question.trim().strip_prefix("Who ") else {
            skip("question does not start with `Who `");
            continue;
        };
        let rest = rest.trim_end_matches('?').trim();
        let (opt_s, opt_c) = (a.answers()[s].trim(), a.answers()[c].trim());
        let evidence = d.context[a.context.trim_end().len()..].trim().to_string();
        let points = if d.label == s {
            Some(Role::Stereotyped)
        } else if d.label == c {
            Some(Role::Counter)
        } else {
            skip("disambiguated gold answer is neither tested endpoint");
            continue;
        };
        let (gs, gc) = (a.stereotyped_label(s).1, a.stereotyped_label(c).1);
        props.push(Proposition {
            id: format!("bbq-{}-{}", a.category, a.example_id),
            target_group: gs.to_string(),
            counter_group: gc.to_string(),
            attribute: Some(rest.to_string()),
            stereotyped: format!("{opt_s} {rest}."),
            counter: format!("{opt_c} {rest}."),
            frame: Some(format!("{BLANK} {rest}.")),
            stereotyped_option: Some(opt_s.to_string()),
            counter_option: Some(opt_c.to_string()),
            context: Some(a.context.trim().to_string()),
            question: Some(a.question.trim().to_string()),
            evidence: Some(evidence),
            evidence_points_to: points,
            category: Some(a.category.clone()),
            source: Some(PropositionSource {
                dataset: "bbq".into(),
                record: format!("{}:{}+{}", a.category, a.example_id, d.example_id),
                license: Some("CC BY 4.0".into()),
            }),
        });
    }
    out.propositions = props;
    Ok(out)
}

/// At most `limit` propositions, drawn uniformly without replacement with `seed` (stream
/// [`SAMPLE_STREAM`]), kept in their input order; all of them when `limit ≥ len`.
pub fn sample(props: &[Proposition], limit: usize, seed: u64) -> Vec<Proposition> {
    if limit >= props.len() {
        return props.to_vec();
    }
    let n = u32::try_from(props.len()).unwrap_or(u32::MAX);
    let k = u32::try_from(limit).unwrap_or(u32::MAX);
    let mut stream = atlas_core::DrawStream::with_stream(seed, SAMPLE_STREAM);
    let mut picked = stream.sample_without_replacement(n, k).unwrap_or_default();
    picked.sort_unstable();
    picked
        .into_iter()
        .filter_map(|i| props.get(i as usize).cloned())
        .collect()
}

/// A picked file as propositions, whatever of the three kinds it is: a CrowS-Pairs CSV (a `.csv`
/// name or a `sent_more` header; [`from_crows_csv`]) or a BBQ JSON Lines file (a first record with
/// `context_condition`; [`from_bbq_jsonl`]) converted and drawn down to `limit` with `seed`
/// ([`sample`]); anything else read as a propositions file ([`parse_propositions`]), kept whole.
/// Returns the propositions and a sentence saying what was read, skipped and drawn.
///
/// ```
/// let text = concat!(
///     r#"{"id": "p1", "target_group": "women", "counter_group": "men", "#,
///     r#""stereotyped": "Women are bad drivers.", "counter": "Men are bad drivers.", "#,
///     r#""frame": "_____ are bad drivers.", "category": "gender"}"#
/// );
/// let (props, note) = atlas_pilot::proposition::read_file("mine.jsonl", text, 5, 1).unwrap();
/// assert_eq!(props.len(), 1);
/// assert_eq!(note, "mine.jsonl: 1 propositions.");
/// ```
///
/// # Errors
/// The converter's or reader's message, prefixed with `name` and naming the record, line or member.
pub fn read_file(
    name: &str,
    text: &str,
    limit: usize,
    seed: u64,
) -> Result<(Vec<Proposition>, String), String> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let converted = if name.to_ascii_lowercase().ends_with(".csv") || first.contains("sent_more") {
        Some(("CrowS-Pairs", from_crows_csv(text)))
    } else if first.contains("\"context_condition\"") {
        Some(("BBQ", from_bbq_jsonl(text)))
    } else {
        None
    };
    match converted {
        Some((source, result)) => {
            let c = result.map_err(|e| format!("{name}: {e}"))?;
            let all = c.propositions.len();
            let skipped: usize = c.skipped.values().sum();
            let drawn = sample(&c.propositions, limit, seed);
            let note = format!(
                "{name}: {all} {source} propositions read{}; {} drawn with seed {seed}.",
                if skipped > 0 {
                    format!(" ({skipped} records skipped)")
                } else {
                    String::new()
                },
                drawn.len()
            );
            Ok((drawn, note))
        }
        None => {
            let props = parse_propositions(text).map_err(|e| format!("{name}: {e}"))?;
            let note = format!("{name}: {} propositions.", props.len());
            Ok((props, note))
        }
    }
}

/// Propositions as JSON Lines, one object per line ([`parse_propositions`] reads them back).
pub fn to_jsonl(props: &[Proposition]) -> String {
    props
        .iter()
        .filter_map(|p| serde_json::to_string(p).ok())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The statement-level attribute that carries a whole [`Proposition`] in a bundle (the bundle format
/// allows extra statement attributes; `docs/paradigms.md`).
pub const PROPOSITION_ATTRIBUTE: &str = "proposition";

/// Writes each proposition into its statement level (same id) as the [`PROPOSITION_ATTRIBUTE`]
/// attribute, so that [`from_bundle`] reads the set back from the bundle. Returns how many levels
/// were annotated (levels without a proposition are left as they are).
pub fn annotate_statements(bundle: &mut atlas_core::BundleFile, props: &[Proposition]) -> usize {
    let Some(facet) = bundle.facets.iter_mut().find(|f| f.id == "statement") else {
        return 0;
    };
    let mut n = 0;
    for level in &mut facet.levels {
        if let Some(p) = props.iter().find(|p| p.id == level.id) {
            if let Ok(v) = serde_json::to_value(p) {
                level.attributes.insert(PROPOSITION_ATTRIBUTE.into(), v);
                n += 1;
            }
        }
    }
    n
}

/// The members a flat statement level may carry, besides `text` (read as `stereotyped` when the level
/// has no `stereotyped`).
const FLAT_MEMBERS: [&str; 13] = [
    "target_group",
    "counter_group",
    "attribute",
    "stereotyped",
    "counter",
    "frame",
    "stereotyped_option",
    "counter_option",
    "context",
    "question",
    "evidence",
    "evidence_points_to",
    "category",
];

/// A bundle's statements as propositions, where they carry the fields (module docs): a level's
/// [`PROPOSITION_ATTRIBUTE`] object (its `id` must be the level's), else its flat attributes when it
/// has `counter` and `counter_group` (`text` is the stereotyped sentence, `target_group` required).
/// Levels with neither are skipped, counted under their reason.
///
/// ```
/// let bundle: atlas_core::BundleFile = serde_json::from_str(include_str!(
///     "../../../tests/fixtures/tiny-bundle.json"
/// ))
/// .unwrap();
/// // The tiny bundle's statements carry no counter sentence: none is a proposition.
/// let c = atlas_pilot::proposition::from_bundle(&bundle).unwrap();
/// assert!(c.propositions.is_empty());
/// assert_eq!(c.skipped.values().sum::<usize>(), 2); // its two statements
/// ```
///
/// # Errors
/// [`PropositionError::Source`] naming the statement (`statement "id"`) and member when a level's
/// fields do not read as a proposition; [`validate_set`]'s errors when some do (but not
/// [`PropositionError::Empty`]: an empty result is returned, with the skipped levels).
pub fn from_bundle(bundle: &atlas_core::BundleFile) -> Result<Converted, PropositionError> {
    let mut out = Converted::default();
    let levels = bundle
        .facets
        .iter()
        .find(|f| f.id == "statement")
        .map(|f| f.levels.as_slice())
        .unwrap_or_default();
    let bad = |id: &str, message: String| PropositionError::Source {
        source_name: "bundle",
        place: format!("statement {id:?}"),
        message,
    };
    for level in levels {
        let a = &level.attributes;
        let value = if let Some(v) = a.get(PROPOSITION_ATTRIBUTE) {
            v.clone()
        } else if a.contains_key("counter") && a.contains_key("counter_group") {
            let mut m = serde_json::Map::new();
            m.insert("id".into(), Value::String(level.id.clone()));
            for k in FLAT_MEMBERS {
                if let Some(v) = a.get(k).filter(|v| !v.is_null()) {
                    m.insert(k.into(), v.clone());
                }
            }
            if !m.contains_key("stereotyped") {
                if let Some(t) = a.get("text") {
                    m.insert("stereotyped".into(), t.clone());
                }
            }
            Value::Object(m)
        } else {
            *out.skipped
                .entry("no proposition fields (a `proposition` attribute, or `counter` and `counter_group`)".into())
                .or_default() += 1;
            continue;
        };
        let p: Proposition = serde_path_to_error::deserialize(value)
            .map_err(|e| bad(&level.id, format!("at `{}`: {}", e.path(), e.inner())))?;
        if p.id != level.id {
            return Err(bad(
                &level.id,
                format!("its `{PROPOSITION_ATTRIBUTE}` has the id {:?}", p.id),
            ));
        }
        out.propositions.push(p);
    }
    if !out.propositions.is_empty() {
        validate_set(&out.propositions)?;
    }
    Ok(out)
}
