//! Bundle format v1: the frozen result of one LLM bias audit (see `docs/bundle-format.md` and
//! `docs/bundle-v1.schema.json`).
//!
//! A bundle declares its **facets** (model, statement, condition, template, repeat, and any other) with
//! their levels, then stores the response matrix **densely**: the Cartesian product of the facets' levels,
//! in the order given by `responses.axes` (row-major, last axis fastest), one character per cell. Texts
//! (Rationales) live apart from the labels, inline or in shard files loaded on demand.
//!
//! [`BundleFile`] is the serde image of the JSON; [`Audit`] is a validated bundle with the dense columns
//! decoded, which every statistic in [`crate::stats`] reads.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::BundleError;

/// Value of the top-level `format` field of a bundle.
pub const FORMAT_NAME: &str = "audit-atlas-bundle";
/// Value of the top-level `format` field of a text shard.
pub const SHARD_FORMAT_NAME: &str = "audit-atlas-text-shard";
/// The bundle format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Largest response matrix (cells) a bundle may declare; 78× the seed's full matrix (641,600).
pub const MAX_CELLS: usize = 50_000_000;
/// Code characters of `responses.selection.codes`: the character at position *k* selects
/// `responses.selection.values[k]`.
pub const CODE_ALPHABET: &[u8; 62] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Code of a cell with no response at all (not run, or not part of the design, e.g. a template nested
/// in another condition). Different from Abstain, which is a response whose Selection is missing.
pub const NO_RESPONSE: char = '-';
/// In-memory marker of [`NO_RESPONSE`] in [`Audit::selection`].
pub const NO_RESPONSE_CODE: u8 = u8::MAX;

mod clinical_check;

/// Facet ids with a meaning in the format. Any other facet id is allowed and treated as a further
/// axis over which responses are pooled.
pub mod facet_ids {
    /// The audited LLMs. Required.
    pub const MODEL: &str = "model";
    /// Stereotype statements / propositions (seed `000_…` §3.2). Required.
    pub const STATEMENT: &str = "statement";
    /// Evaluation conditions (seed `000_…` §3.2, Table 6). Optional; a single implicit condition if absent.
    pub const CONDITION: &str = "condition";
    /// Templates (wordings) realising a condition. Optional; a single implicit template if absent.
    pub const TEMPLATE: &str = "template";
    /// Repeated samples of the same prompt.
    pub const REPEAT: &str = "repeat";
}

/// The JSON image of a bundle (format v1). Field docs are in `docs/bundle-format.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleFile {
    /// Optional URL of the JSON Schema, for editors (`docs/bundle-v1.schema.json`); ignored by the reader.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// Always [`FORMAT_VERSION`].
    pub version: u32,
    /// What the audit is, where it comes from, its license and content warning.
    pub metadata: Metadata,
    /// The declared facets, each with its levels.
    pub facets: Vec<Facet>,
    /// The dense response matrix: axes, Selection codes, judge and human label columns.
    pub responses: Responses,
    /// Free texts (Rationales), kept apart from the labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texts: Option<Texts>,
    /// Clinical perturbation audits (seed `001_…`): baseline, embeddings, counterfactuals, stereotype
    /// judgements, directions (`docs/clinical.md`). Absent in other bundles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clinical: Option<crate::clinical::Clinical>,
}

/// Audit metadata: what the audit is, where it comes from, under which license.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    /// Stable identifier of this bundle (names every exported result).
    pub id: String,
    /// Short human-readable title.
    pub title: String,
    /// What was asked, of whom, and how the Selection maps to bias evidence.
    pub description: String,
    /// Where the audited data comes from.
    pub source: Source,
    /// License of the bundle's content.
    pub license: License,
    /// Shown before any model text is displayed; `null` when the bundle holds no offensive text. The key
    /// is required: a producer must say `null` explicitly.
    #[serde(deserialize_with = "Option::deserialize")]
    pub content_warning: Option<String>,
    /// How the bundle was produced (tool, command, notes).
    pub produced_by: Production,
}

/// Where the audited data comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Human-readable citation of the upstream work.
    pub citation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Link to the upstream work.
    pub url: Option<String>,
    /// Upstream commit or version the data was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// License of the bundle's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct License {
    /// SPDX identifier, e.g. `CC-BY-SA-4.0`.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Link to the license text.
    pub url: Option<String>,
    /// The attribution text the license requires.
    pub attribution: String,
}

/// How the bundle was produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Production {
    /// Producing tool and version, e.g. `atlas 0.1.0 convert decodingtrust`.
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The command line that produced the bundle.
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How labels were derived and what was dropped.
    pub notes: Option<String>,
}

/// One facet of the audit design with its levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facet {
    /// Facet id; see [`facet_ids`] for the ids with a defined meaning.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Display name of the facet, e.g. `"Condition (system prompt)"`.
    pub label: Option<String>,
    /// The facet's levels, in bundle order (level index = position).
    pub levels: Vec<Level>,
}

/// One level of a facet: an id plus free attributes (`text`, `category`, `has_selection`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// Level id, unique within its facet.
    pub id: String,
    /// Attributes of the level. Known attributes of known facets are type-checked by [`Audit`].
    #[serde(flatten)]
    pub attributes: BTreeMap<String, Value>,
}

/// The dense response matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Responses {
    /// Facet ids in storage order (row-major, last fastest); every declared facet exactly once.
    pub axes: Vec<String>,
    /// The Selection of every cell.
    pub selection: SelectionColumn,
    /// Rationale labels, one column per judge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeColumn>,
    /// Human labels, one column per annotator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub human: Vec<HumanColumn>,
    /// Likelihood readouts (teacher-forced log-probabilities of given candidates, seed `000_…` §4.3,
    /// C.2), kept apart from the Selection. Optional: absent in bundles without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likelihood: Option<LikelihoodColumn>,
}

/// Likelihood readouts per cell (`responses.likelihood`, `docs/bundle-format.md` "Likelihood
/// readouts"): for each cell, the summed log-probability (natural log, ≤ 0) of each of `candidates`
/// candidate continuations, optionally their token counts (so the mean per token, §C.2, is
/// available), and which candidate is the stereotyped one.
///
/// Dense like the other columns: `stereotyped` has one character per cell; `logprob_sum` and
/// `token_count` have `cells × candidates` entries, cell-major (entry `cell * candidates + k` is
/// candidate `k` of cell `cell`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LikelihoodColumn {
    /// What was scored (which tool, which prefix, how candidates were ordered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Candidates per cell, 2 to 10 (CrowS-Pairs: 2; StereoSet: 3; BBQ: 3).
    pub candidates: usize,
    /// One character per cell: the index (`0`–`9`) of the stereotyped candidate, or `-` for a cell
    /// without a likelihood readout.
    pub stereotyped: String,
    /// Summed log-probability of each candidate's continuation tokens (natural log, finite, ≤ 0);
    /// `null` where not recorded (and in every entry of a `-` cell).
    pub logprob_sum: Vec<Option<f64>>,
    /// Number of continuation tokens each sum covers (integer ≥ 1), or `null`; absent = the producer
    /// recorded no token counts (then only the summed log-probability can be compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_count: Option<Vec<Option<u32>>>,
}

/// Most candidates a likelihood readout may hold (one code digit).
pub const MAX_LIKELIHOOD_CANDIDATES: usize = 10;

/// The Selection of every cell: a dictionary of distinct (raw, evidence, obtained) values and one code
/// character per cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionColumn {
    /// Whether a lower Selection score (BER, Eq. 4) is better, a higher one, or a target value
    /// (`docs/bundle-format.md`, "Score direction"). Optional: absent = lower is better, the seed's rule,
    /// shown as the default. Validated into [`Audit::direction`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<crate::direction::DirectionSpec>,
    /// At most 62 distinct values, addressed by [`CODE_ALPHABET`].
    pub values: Vec<SelectionValue>,
    /// One character per cell: a [`CODE_ALPHABET`] character or [`NO_RESPONSE`].
    pub codes: String,
}

/// One distinct Selection outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionValue {
    /// The Selection as read from the response (e.g. `agree`).
    pub raw: String,
    /// Mapped bias evidence: `1`, `0`, or `null` = Abstain (missing; never recoded as 0, seed `000_…` §B.2).
    /// The key is required, so that a forgotten mapping is an error rather than a silent Abstain.
    #[serde(deserialize_with = "Option::deserialize")]
    pub evidence: Option<u8>,
    /// How the Selection was obtained (seed `000_…` §3.3).
    pub obtained: Obtained,
}

/// How a Selection was obtained from the response text (seed `000_…` §3.3: "Regular expressions handle
/// conforming responses; fallbacks, parser failures, and refusals are recorded").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Obtained {
    /// Read from the structured field by the primary regular expression / string match.
    Regex,
    /// Recovered by a documented fallback rule.
    Fallback,
    /// No Selection could be read.
    ParserFailure,
    /// The model refused.
    Refusal,
}

/// Rationale labels of one judge: one character per cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeColumn {
    /// Judge id, unique among the judges.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The judge model.
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The rubric or prompt the judge used.
    pub rubric: Option<String>,
    /// `E`, `Q` (= QE), `N`, `D`, `R` or `.` (no label) per cell (seed `000_…` §3.3).
    pub labels: String,
}

/// Labels of one human annotator: one character per cell in each present column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanColumn {
    /// Annotator id.
    pub annotator: String,
    /// `1`, `0`, `A` (Abstain) or `.` (not annotated) per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<String>,
    /// `E`, `Q`, `N`, `D`, `R` or `.` per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

/// Texts kept apart from the labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Texts {
    /// The Rationale text of responses (for audits without a separate Rationale field, the whole
    /// response text; the field's `description` says which).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<TextField>,
}

/// Where the texts of one field live: inline and/or in shard files next to the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextField {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// What the texts are (which sample, which field, what was stripped).
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Shard files holding texts, loaded on demand ([`TextShard`]).
    pub shards: Vec<ShardRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Texts stored in the bundle itself.
    pub inline: Option<TextCells>,
}

/// A shard file holding some of a field's texts, loaded on demand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardRef {
    /// Path relative to the bundle file.
    pub path: String,
    /// Number of texts in the shard.
    pub count: usize,
    /// Smallest and largest cell index in the shard (lets a reader pick the shard of a cell).
    pub first_cell: u64,
    /// Largest cell index in the shard (`first_cell ≤ last_cell <` number of cells).
    pub last_cell: u64,
}

/// Texts addressed by cell index (row-major index into the response matrix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextCells {
    /// Strictly increasing cell indices.
    pub cells: Vec<u64>,
    /// `texts[k]` belongs to `cells[k]`.
    pub texts: Vec<String>,
}

/// The JSON image of a text shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextShardFile {
    /// Always [`SHARD_FORMAT_NAME`].
    pub format: String,
    /// Always `1` (the shard format version, as [`FORMAT_VERSION`]).
    pub version: u32,
    /// `metadata.id` of the bundle the shard belongs to.
    pub bundle: String,
    /// Field name, e.g. `rationale`.
    pub field: String,
    #[serde(flatten)]
    /// The shard's texts, by cell index.
    pub data: TextCells,
}

/// Typed attributes of a `condition` level (seed `000_…` Table 6).
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionInfo {
    /// Sweep the condition belongs to (task, perspective, role, sentiment, system prompt, …).
    pub sweep: Option<String>,
    /// The varied level within its sweep.
    pub level: Option<String>,
    /// Whether the condition has a comparable discrete Selection readout.
    pub has_selection: bool,
    /// Whether it enters the condition-balanced reference (Eq. 4); defaults to `has_selection`.
    pub in_reference: bool,
}

/// Typed attributes of a `template` level.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateInfo {
    /// The template's wording (`text` attribute), if given.
    pub text: Option<String>,
    /// Index of the condition this template realises (nested design, seed `000_…` §3.5 `T_c`), or
    /// `None` when the template is crossed with every condition.
    pub condition: Option<usize>,
}

/// Typed attributes of a `statement` level.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementInfo {
    /// The statement (`text` attribute, required).
    pub text: String,
    /// Bias category (`category` attribute), e.g. `age`; strata of the RQ2 stratified design.
    pub category: Option<String>,
    /// The group the statement is about (`target_group` attribute), e.g. `old people`.
    pub target_group: Option<String>,
}

/// One axis of the dense response matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// Index into [`BundleFile::facets`].
    pub facet: usize,
    /// Number of levels.
    pub len: usize,
    /// Distance between consecutive levels in the flat cell index.
    pub stride: usize,
}

/// Rationale label of a judge or an annotator (seed `000_…` §3.3): endorsement, qualified endorsement,
/// neutral analysis, denial, refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RationaleLabel {
    /// Endorsement (`E`): bias evidence.
    E,
    /// Qualified endorsement (`Q` in label columns): bias evidence.
    QE,
    /// Neutral analysis (`N`): no bias evidence.
    N,
    /// Denial (`D`): no bias evidence.
    D,
    /// Refusal (`R`): no bias evidence.
    R,
}

impl RationaleLabel {
    /// Decodes a column character: `E`, `Q`, `N`, `D`, `R` give a label; `.` and `-` (no label) and any
    /// other character give `None` (columns are checked for foreign characters when a bundle is read).
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            b'E' => Self::E,
            b'Q' => Self::QE,
            b'N' => Self::N,
            b'D' => Self::D,
            b'R' => Self::R,
            _ => return None,
        })
    }

    /// Binary bias evidence: `{E, QE}` → true, `{N, D, R}` → false (seed `000_…` §3.3).
    pub fn is_bias_evidence(self) -> bool {
        matches!(self, Self::E | Self::QE)
    }
}

/// A validated bundle with its dense columns decoded.
///
/// Built by [`Audit::from_json`] or [`Audit::from_file`]; immutable afterwards. The dense code strings are
/// moved out of [`Audit::file`] into the decoded vectors, so the bundle is held in memory once.
#[derive(Debug, Clone)]
pub struct Audit {
    /// The bundle as read, with `responses.selection.codes`, judge and human columns emptied.
    pub file: BundleFile,
    /// Axes in storage order.
    pub axes: Vec<Axis>,
    /// Facet index of `model`, `statement`, and (if declared) `condition`, `template`, `repeat`.
    pub model_facet: usize,
    /// Facet index of `statement`.
    pub statement_facet: usize,
    /// Facet index of `condition`, if declared.
    pub condition_facet: Option<usize>,
    /// Facet index of `template`, if declared.
    pub template_facet: Option<usize>,
    /// Facet index of `repeat`, if declared.
    pub repeat_facet: Option<usize>,
    /// One entry per condition level (a single implicit, Selection-bearing condition if none declared).
    pub conditions: Vec<ConditionInfo>,
    /// One entry per template level (a single implicit template if none declared).
    pub templates: Vec<TemplateInfo>,
    /// One entry per statement level.
    pub statements: Vec<StatementInfo>,
    /// Per cell: index into `file.responses.selection.values`, or [`NO_RESPONSE_CODE`].
    pub selection: Vec<u8>,
    /// Per judge column: per cell label.
    pub judges: Vec<Vec<Option<RationaleLabel>>>,
    /// Number of cells of the response matrix.
    pub cells: usize,
    /// `clinical.embeddings` decoded and checked once (seed `001_…` Eq. 1), or `None`.
    pub clinical_embeddings: Option<crate::clinical::EmbeddingMatrix>,
    /// The score direction every ranking uses (`responses.selection.direction`, or the default lower
    /// is better, marked as not declared).
    pub direction: crate::direction::ScoreDirection,
}

#[derive(Deserialize)]
struct Header {
    format: Option<Value>,
    version: Option<Value>,
}

impl Audit {
    /// Parses and validates a bundle from its JSON text.
    ///
    /// # Errors
    /// A [`BundleError`] naming the problem and where it is (JSON position, field path, or record index
    /// with its facet levels). Never panics.
    pub fn from_json(text: &str) -> Result<Self, BundleError> {
        Self::from_json_deferred(text).map_err(|failure| failure.explain(text))
    }

    /// [`Audit::from_json`] without its second reading of a document the parser refused: such a
    /// document comes back as [`Deferred::Refused`] (the parser's own error, a line and column), and
    /// [`Deferred::explain`] of the same text gives exactly the error `from_json` gives (a wrong
    /// `format` or `version`, or the field path of the first problem). The browser app parses with this
    /// and explains in a module it downloads only then, which keeps the path-tracking reader out of
    /// its first wasm.
    ///
    /// ```
    /// use atlas_core::bundle::{Audit, Deferred};
    /// let text = r#"{"format": "audit-atlas-bundle", "version": 1, "metadata": 7}"#;
    /// let failure = Audit::from_json_deferred(text).unwrap_err();
    /// assert!(matches!(failure, Deferred::Refused(_)));
    /// assert_eq!(failure.explain(text), Audit::from_json(text).unwrap_err());
    /// ```
    ///
    /// # Errors
    /// [`Deferred::Refused`] for a document the parser refused; [`Deferred::Invalid`] with the
    /// [`BundleError`] for empty input and for a parsed document that fails validation.
    pub fn from_json_deferred(text: &str) -> Result<Self, Deferred> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(Deferred::Invalid(BundleError::EmptyInput));
        }
        let file: BundleFile = serde_json::from_str(text).map_err(Deferred::Refused)?;
        Self::from_file(file).map_err(Deferred::Invalid)
    }

    /// Validates a [`BundleFile`] and decodes its dense columns.
    ///
    /// # Errors
    /// See [`Audit::from_json`].
    pub fn from_file(mut file: BundleFile) -> Result<Self, BundleError> {
        if file.format != FORMAT_NAME {
            return Err(BundleError::WrongFormat {
                found: file.format.clone(),
                expected: FORMAT_NAME,
            });
        }
        if file.version != FORMAT_VERSION {
            return Err(BundleError::UnsupportedVersion {
                found: u64::from(file.version),
                supported: FORMAT_VERSION,
            });
        }
        if file.metadata.id.trim().is_empty() {
            return Err(invalid("metadata.id", "must not be empty"));
        }
        if file.facets.is_empty() {
            return Err(BundleError::NoFacets);
        }
        let mut facet_pos: HashMap<&str, usize> = HashMap::new();
        for (i, facet) in file.facets.iter().enumerate() {
            if facet.id.is_empty() {
                return Err(invalid(&format!("facets[{i}].id"), "must not be empty"));
            }
            if let Some(first) = facet_pos.insert(facet.id.as_str(), i) {
                return Err(BundleError::DuplicateId {
                    field: "facets".into(),
                    id: facet.id.clone(),
                    first,
                    second: i,
                });
            }
            if facet.levels.is_empty() {
                return Err(BundleError::EmptyFacet {
                    index: i,
                    id: facet.id.clone(),
                });
            }
            let mut seen: HashMap<&str, usize> = HashMap::new();
            for (j, level) in facet.levels.iter().enumerate() {
                if let Some(first) = seen.insert(level.id.as_str(), j) {
                    return Err(BundleError::DuplicateId {
                        field: format!("facets[{i}].levels"),
                        id: level.id.clone(),
                        first,
                        second: j,
                    });
                }
            }
        }
        let required = |id: &str| {
            facet_pos
                .get(id)
                .copied()
                .ok_or_else(|| BundleError::MissingFacet(id.to_string()))
        };
        let model_facet = required(facet_ids::MODEL)?;
        let statement_facet = required(facet_ids::STATEMENT)?;
        let condition_facet = facet_pos.get(facet_ids::CONDITION).copied();
        let template_facet = facet_pos.get(facet_ids::TEMPLATE).copied();
        let repeat_facet = facet_pos.get(facet_ids::REPEAT).copied();

        // Axes: a permutation of the declared facets.
        let axes = build_axes(&file, &facet_pos)?;
        let cells = axes.iter().map(|a| a.len).product::<usize>();

        let conditions = match condition_facet {
            Some(f) => condition_infos(&file.facets[f], f)?,
            None => vec![ConditionInfo {
                sweep: None,
                level: None,
                has_selection: true,
                in_reference: true,
            }],
        };
        let templates = match template_facet {
            Some(f) => {
                template_infos(&file.facets[f], f, condition_facet.map(|c| &file.facets[c]))?
            }
            None => vec![TemplateInfo {
                text: None,
                condition: None,
            }],
        };
        let statements = statement_infos(&file.facets[statement_facet], statement_facet)?;

        // Selection dictionary and codes.
        let values = &file.responses.selection.values;
        if values.len() > CODE_ALPHABET.len() {
            return Err(invalid(
                "responses.selection.values",
                &format!(
                    "{} distinct values; at most {} fit the code alphabet",
                    values.len(),
                    CODE_ALPHABET.len()
                ),
            ));
        }
        for (k, v) in values.iter().enumerate() {
            if let Some(e) = v.evidence {
                if e > 1 {
                    return Err(invalid(
                        &format!("responses.selection.values[{k}].evidence"),
                        &format!("is {e}; bias evidence is 1, 0, or null (Abstain)"),
                    ));
                }
                if matches!(v.obtained, Obtained::ParserFailure | Obtained::Refusal) {
                    return Err(invalid(
                        &format!("responses.selection.values[{k}]"),
                        "a parser failure or refusal has no Selection: its evidence must be null (Abstain)",
                    ));
                }
            }
        }
        let direction = crate::direction::ScoreDirection::from_spec(
            file.responses.selection.direction.as_ref(),
            "responses.selection.direction",
        )?;
        let codes = std::mem::take(&mut file.responses.selection.codes);
        let mut lookup = [NOT_A_CODE; 256];
        for (k, &c) in CODE_ALPHABET.iter().enumerate().take(values.len()) {
            lookup[c as usize] = k as u8;
        }
        lookup[NO_RESPONSE as usize] = NO_RESPONSE_CODE;
        let selection = match translate_column(codes.as_bytes(), &lookup, cells) {
            Some(selection) => selection,
            None => {
                return Err(selection_code_error(
                    &file,
                    &axes,
                    &codes,
                    &lookup,
                    cells,
                    values.len(),
                ))
            }
        };

        let mut judges = Vec::with_capacity(file.responses.judges.len());
        let mut judge_ids: HashMap<String, usize> = HashMap::new();
        for j in 0..file.responses.judges.len() {
            let id = file.responses.judges[j].id.clone();
            if let Some(first) = judge_ids.insert(id.clone(), j) {
                return Err(BundleError::DuplicateId {
                    field: "responses.judges".into(),
                    id,
                    first,
                    second: j,
                });
            }
            let labels = std::mem::take(&mut file.responses.judges[j].labels);
            let field = format!("responses.judges[{j}].labels");
            judges.push(decode_rationale(&file, &axes, &field, &labels, cells)?);
        }
        for h in 0..file.responses.human.len() {
            if let Some(sel) = file.responses.human[h].selection.as_deref() {
                let field = format!("responses.human[{h}].selection");
                check_column(&file, &axes, &field, sel, cells, b"10A.-")?;
            }
            if let Some(rat) = file.responses.human[h].rationale.as_deref() {
                let field = format!("responses.human[{h}].rationale");
                check_column(&file, &axes, &field, rat, cells, b"EQNDR.-")?;
            }
        }
        if let Some(texts) = &file.texts {
            if let Some(field) = &texts.rationale {
                if let Some(inline) = &field.inline {
                    check_text_cells(inline, cells, "texts.rationale.inline")?;
                }
                for (k, shard) in field.shards.iter().enumerate() {
                    if shard.first_cell > shard.last_cell {
                        return Err(invalid(
                            &format!("texts.rationale.shards[{k}]"),
                            &format!(
                                "first_cell {} is after last_cell {}",
                                shard.first_cell, shard.last_cell
                            ),
                        ));
                    }
                    if shard.last_cell >= cells as u64 {
                        return Err(BundleError::IndexOutOfRange {
                            field: format!("texts.rationale.shards[{k}].last_cell"),
                            index: k,
                            value: shard.last_cell,
                            bound: cells as u64,
                        });
                    }
                }
            }
        }
        if let Some(likelihood) = &file.responses.likelihood {
            check_likelihood(&file, &axes, likelihood, cells)?;
        }
        let clinical_embeddings = clinical_check::check(&file, cells)?;
        Ok(Audit {
            file,
            axes,
            model_facet,
            statement_facet,
            condition_facet,
            template_facet,
            repeat_facet,
            conditions,
            templates,
            statements,
            selection,
            judges,
            cells,
            clinical_embeddings,
            direction,
        })
    }

    /// The bundle's metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.file.metadata
    }

    /// Levels of facet `facet` (index into `file.facets`).
    pub fn levels(&self, facet: usize) -> &[Level] {
        &self.file.facets[facet].levels
    }

    /// Model level ids in declaration order.
    pub fn model_ids(&self) -> Vec<&str> {
        self.levels(self.model_facet)
            .iter()
            .map(|l| l.id.as_str())
            .collect()
    }

    /// Condition level ids in declaration order (`["(all)"]` when the bundle has no condition facet).
    pub fn condition_ids(&self) -> Vec<&str> {
        match self.condition_facet {
            Some(f) => self.levels(f).iter().map(|l| l.id.as_str()).collect(),
            None => vec!["(all)"],
        }
    }

    /// Number of levels of the facet with id `facet_id`, or 1 when the facet is not declared.
    pub fn facet_len(&self, facet: Option<usize>) -> usize {
        facet.map_or(1, |f| self.file.facets[f].levels.len())
    }

    /// The Selection value of cell `index`, or `None` when the cell has no response.
    pub fn selection_value(&self, index: usize) -> Option<&SelectionValue> {
        let code = *self.selection.get(index)?;
        if code == NO_RESPONSE_CODE {
            return None;
        }
        self.file.responses.selection.values.get(code as usize)
    }

    /// Level index of every axis for cell `index`, in `axes` order.
    pub fn coordinates(&self, index: usize) -> Vec<usize> {
        self.axes
            .iter()
            .map(|a| (index / a.stride) % a.len)
            .collect()
    }

    /// Flat cell index for per-facet level indices given in `file.facets` order.
    pub fn cell_index(&self, levels_by_facet: &[usize]) -> Option<usize> {
        let mut index = 0;
        for axis in &self.axes {
            let level = *levels_by_facet.get(axis.facet)?;
            if level >= axis.len {
                return None;
            }
            index += level * axis.stride;
        }
        Some(index)
    }

    /// `facet=level` pairs of cell `index`, for messages and case views.
    pub fn describe_cell(&self, index: usize) -> String {
        describe_cell(&self.file, &self.axes, index)
    }

    /// The Rationale text of cell `index` if the bundle holds it inline.
    pub fn inline_rationale(&self, index: usize) -> Option<&str> {
        let inline = self
            .file
            .texts
            .as_ref()?
            .rationale
            .as_ref()?
            .inline
            .as_ref()?;
        let pos = inline.cells.binary_search(&(index as u64)).ok()?;
        inline.texts.get(pos).map(String::as_str)
    }

    /// The shard (index into `texts.rationale.shards`) whose cell range covers `index`.
    pub fn rationale_shard_for(&self, index: usize) -> Option<usize> {
        let field = self.file.texts.as_ref()?.rationale.as_ref()?;
        field
            .shards
            .iter()
            .position(|s| s.first_cell <= index as u64 && index as u64 <= s.last_cell)
    }
}

/// A validated text shard.
#[derive(Debug, Clone, PartialEq)]
pub struct TextShard {
    /// The shard as read.
    pub file: TextShardFile,
}

impl TextShard {
    /// Parses a shard and checks it against the audit it belongs to.
    ///
    /// # Errors
    /// [`BundleError`] when the shard is malformed, belongs to another bundle, or addresses cells outside
    /// the audit's response matrix.
    pub fn from_json(text: &str, audit: &Audit) -> Result<Self, BundleError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(BundleError::EmptyInput);
        }
        let file: TextShardFile = parse_document(text, SHARD_FORMAT_NAME)?;
        if file.bundle != audit.file.metadata.id {
            return Err(invalid(
                "bundle",
                &format!(
                    "the shard belongs to bundle {:?}, not to the loaded {:?}",
                    file.bundle, audit.file.metadata.id
                ),
            ));
        }
        check_text_cells(&file.data, audit.cells, "cells")?;
        Ok(TextShard { file })
    }

    /// The text of cell `index`, if the shard holds it.
    pub fn text(&self, index: usize) -> Option<&str> {
        let pos = self.file.data.cells.binary_search(&(index as u64)).ok()?;
        self.file.data.texts.get(pos).map(String::as_str)
    }
}

/// Checks `responses.likelihood` (rules in [`LikelihoodColumn`]); errors name the field, the entry
/// and the cell's facet levels.
fn check_likelihood(
    file: &BundleFile,
    axes: &[Axis],
    l: &LikelihoodColumn,
    cells: usize,
) -> Result<(), BundleError> {
    let k = l.candidates;
    if !(2..=MAX_LIKELIHOOD_CANDIDATES).contains(&k) {
        return Err(invalid(
            "responses.likelihood.candidates",
            &format!(
                "is {k}; a likelihood readout has 2 to {MAX_LIKELIHOOD_CANDIDATES} candidates"
            ),
        ));
    }
    let marks = l.stereotyped.as_bytes();
    if marks.len() != cells {
        return Err(BundleError::LengthMismatch {
            field: "responses.likelihood.stereotyped".into(),
            found: marks.len(),
            expected: cells,
        });
    }
    let entries = cells.saturating_mul(k);
    let lengths = [
        ("responses.likelihood.logprob_sum", l.logprob_sum.len()),
        (
            "responses.likelihood.token_count",
            l.token_count.as_ref().map_or(entries, Vec::len),
        ),
    ];
    for (field, found) in lengths {
        if found != entries {
            return Err(invalid(
                field,
                &format!(
                    "has {found} entries; expected cells × candidates = {cells} × {k} = {entries}"
                ),
            ));
        }
    }
    for (cell, &mark) in marks.iter().enumerate() {
        let at = |field: &str, entry: Option<usize>, message: &str| {
            let name = match entry {
                Some(e) => format!("responses.likelihood.{field}[{e}]"),
                None => format!("responses.likelihood.{field}"),
            };
            invalid(
                &name,
                &format!(
                    "{message} (cell {cell}: {})",
                    describe_cell(file, axes, cell)
                ),
            )
        };
        let present = match mark {
            b'-' => false,
            b'0'..=b'9' if usize::from(mark - b'0') < k => true,
            _ => {
                return Err(at(
                    "stereotyped",
                    None,
                    &format!(
                    "character {:?} at position {cell} is neither `-` nor a candidate index 0–{}",
                    char::from(mark),
                    k - 1
                ),
                ))
            }
        };
        for c in 0..k {
            let e = cell * k + c;
            let sum = l.logprob_sum.get(e).copied().flatten();
            let tokens = l
                .token_count
                .as_ref()
                .and_then(|t| t.get(e).copied().flatten());
            if !present && (sum.is_some() || tokens.is_some()) {
                return Err(at(
                    if sum.is_some() {
                        "logprob_sum"
                    } else {
                        "token_count"
                    },
                    Some(e),
                    "a cell without a likelihood readout (`-`) must have null entries",
                ));
            }
            if let Some(v) = sum {
                if !v.is_finite() || v > 0.0 {
                    return Err(at(
                        "logprob_sum",
                        Some(e),
                        &format!("is {v}; a summed log-probability is finite and ≤ 0"),
                    ));
                }
            }
            if tokens == Some(0) {
                return Err(at(
                    "token_count",
                    Some(e),
                    "is 0; a scored continuation has at least one token",
                ));
            }
        }
    }
    Ok(())
}

fn invalid(field: &str, message: &str) -> BundleError {
    BundleError::Invalid {
        field: field.to_string(),
        message: message.to_string(),
    }
}

/// Parses a whole JSON document (bundle or shard) in one pass. Only when that fails is the text read
/// again ([`explain_document`]) to report the most useful error.
fn parse_document<T: serde::de::DeserializeOwned>(
    text: &str,
    expected: &'static str,
) -> Result<T, BundleError> {
    serde_json::from_str::<T>(text).map_err(|plain| explain_document::<T>(text, expected, plain))
}

/// The error for a document `text` the plain parse refused with `plain`: first a wrong `format` or
/// `version` (so that a bundle of another version is reported as such rather than as a list of
/// unknown fields), then the field path of the first problem (serde_path_to_error), else `plain`.
fn explain_document<T: serde::de::DeserializeOwned>(
    text: &str,
    expected: &'static str,
    plain: serde_json::Error,
) -> BundleError {
    if let Err(e) = check_header(text, expected) {
        return e;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = match serde_path_to_error::deserialize(&mut de) {
        Ok(value) => value,
        Err(e) => return BundleError::from_serde(e),
    };
    match de.end() {
        Err(e) => BundleError::Syntax {
            line: e.line(),
            column: e.column(),
            message: "trailing characters after the document".to_string(),
        },
        // The path-tracking pass accepted what the plain pass refused: report the plain error.
        Ok(()) => {
            drop(value);
            BundleError::Syntax {
                line: plain.line(),
                column: plain.column(),
                message: plain.to_string(),
            }
        }
    }
}

/// Why [`Audit::from_json_deferred`] (or [`Audit::from_bytes_deferred`]) returned no bundle.
#[derive(Debug)]
pub enum Deferred {
    /// The document could not be parsed: the parser's error (line and column). Not yet the error to
    /// show — [`Deferred::explain`] reads the text again for it.
    Refused(serde_json::Error),
    /// Anything else (empty input, not UTF-8, a parsed bundle that fails validation): the error to
    /// show, as [`Audit::from_json`] gives it.
    Invalid(BundleError),
}

impl Deferred {
    /// The error [`Audit::from_json`] gives for `text` (the same text this came from).
    pub fn explain(self, text: &str) -> BundleError {
        match self {
            Deferred::Invalid(e) => e,
            Deferred::Refused(plain) => {
                let text = text.strip_prefix('\u{feff}').unwrap_or(text);
                explain_document::<BundleFile>(text, FORMAT_NAME, plain)
            }
        }
    }

    /// The error [`Audit::from_bytes`] gives for `bytes` (the same bytes this came from).
    pub fn explain_bytes(self, bytes: &[u8]) -> BundleError {
        match (self, crate::decode::utf8_text(bytes)) {
            (Deferred::Invalid(e), _) | (_, Err(e)) => e,
            (refused, Ok(text)) => refused.explain(text),
        }
    }
}

/// Checks `format` and `version` before the full parse, so that a bundle of another version is reported
/// as such rather than as a list of unknown fields.
fn check_header(text: &str, expected: &'static str) -> Result<(), BundleError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let header: Header = match serde_path_to_error::deserialize(&mut de) {
        Ok(h) => h,
        Err(e) => return Err(BundleError::from_serde(e)),
    };
    match header.format {
        Some(Value::String(s)) if s == expected => {}
        Some(Value::String(s)) => {
            return Err(BundleError::WrongFormat { found: s, expected });
        }
        Some(other) => {
            return Err(BundleError::Field {
                path: "format".into(),
                message: format!("expected the string {expected:?}, found {other}"),
            })
        }
        None => {
            return Err(BundleError::Field {
                path: "format".into(),
                message: "missing field `format`".into(),
            })
        }
    }
    match header.version {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v == u64::from(FORMAT_VERSION) => Ok(()),
            Some(v) => Err(BundleError::UnsupportedVersion {
                found: v,
                supported: FORMAT_VERSION,
            }),
            None => Err(BundleError::Field {
                path: "version".into(),
                message: format!("expected a positive integer, found {n}"),
            }),
        },
        Some(other) => Err(BundleError::Field {
            path: "version".into(),
            message: format!("expected an integer, found {other}"),
        }),
        None => Err(BundleError::Field {
            path: "version".into(),
            message: "missing field `version`".into(),
        }),
    }
}

fn build_axes(
    file: &BundleFile,
    facet_pos: &HashMap<&str, usize>,
) -> Result<Vec<Axis>, BundleError> {
    let declared = &file.responses.axes;
    let mut seen = vec![None; file.facets.len()];
    let mut facets = Vec::with_capacity(declared.len());
    for (k, id) in declared.iter().enumerate() {
        let Some(&f) = facet_pos.get(id.as_str()) else {
            return Err(invalid(
                &format!("responses.axes[{k}]"),
                &format!("{id:?} is not a declared facet"),
            ));
        };
        if let Some(first) = seen[f].replace(k) {
            return Err(BundleError::DuplicateId {
                field: "responses.axes".into(),
                id: id.clone(),
                first,
                second: k,
            });
        }
        facets.push(f);
    }
    if let Some(missing) = seen.iter().position(Option::is_none) {
        return Err(invalid(
            "responses.axes",
            &format!(
                "facet {:?} is declared but is not an axis; every facet must be an axis",
                file.facets[missing].id
            ),
        ));
    }
    // Saturating: 128 facets of two levels already overflow u128 (a panic in debug builds, a wrapped
    // and possibly tiny product in release); u128::MAX then stands for "more than any limit".
    let mut total: u128 = 1;
    for &f in &facets {
        total = total.saturating_mul(file.facets[f].levels.len() as u128);
    }
    if total > MAX_CELLS as u128 {
        return Err(BundleError::TooLarge {
            cells: total,
            limit: MAX_CELLS,
        });
    }
    let mut axes = vec![
        Axis {
            facet: 0,
            len: 0,
            stride: 0
        };
        facets.len()
    ];
    let mut stride = 1usize;
    for (k, &f) in facets.iter().enumerate().rev() {
        let len = file.facets[f].levels.len();
        axes[k] = Axis {
            facet: f,
            len,
            stride,
        };
        stride *= len;
    }
    Ok(axes)
}

fn describe_cell(file: &BundleFile, axes: &[Axis], index: usize) -> String {
    axes.iter()
        .map(|a| {
            let level = (index / a.stride.max(1)) % a.len.max(1);
            let facet = &file.facets[a.facet];
            let id = facet.levels.get(level).map_or("?", |l| l.id.as_str());
            format!("{}={}", facet.id, id)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn attr_string(level: &Level, key: &str, field: &str) -> Result<Option<String>, BundleError> {
    match level.attributes.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(
            &format!("{field}.{key}"),
            &format!("expected a string, found {other}"),
        )),
    }
}

fn attr_bool(level: &Level, key: &str, field: &str) -> Result<Option<bool>, BundleError> {
    match level.attributes.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(invalid(
            &format!("{field}.{key}"),
            &format!("expected true or false, found {other}"),
        )),
    }
}

fn condition_infos(facet: &Facet, f: usize) -> Result<Vec<ConditionInfo>, BundleError> {
    facet
        .levels
        .iter()
        .enumerate()
        .map(|(j, level)| {
            let field = format!("facets[{f}].levels[{j}]");
            let has_selection = attr_bool(level, "has_selection", &field)?.ok_or_else(|| {
                invalid(
                    &format!("{field}.has_selection"),
                    "missing: every condition must say whether it has a Selection readout",
                )
            })?;
            let in_reference = attr_bool(level, "in_reference", &field)?.unwrap_or(has_selection);
            if in_reference && !has_selection {
                return Err(invalid(
                    &format!("{field}.in_reference"),
                    "a condition without a Selection readout cannot enter the reference score",
                ));
            }
            Ok(ConditionInfo {
                sweep: attr_string(level, "sweep", &field)?,
                level: attr_string(level, "level", &field)?,
                has_selection,
                in_reference,
            })
        })
        .collect()
}

fn template_infos(
    facet: &Facet,
    f: usize,
    conditions: Option<&Facet>,
) -> Result<Vec<TemplateInfo>, BundleError> {
    facet
        .levels
        .iter()
        .enumerate()
        .map(|(j, level)| {
            let field = format!("facets[{f}].levels[{j}]");
            let condition = match attr_string(level, "condition", &field)? {
                None => None,
                Some(id) => {
                    let pos = conditions
                        .and_then(|c| c.levels.iter().position(|l| l.id == id))
                        .ok_or_else(|| {
                            invalid(
                                &format!("{field}.condition"),
                                &format!("{id:?} is not a level of the condition facet"),
                            )
                        })?;
                    Some(pos)
                }
            };
            Ok(TemplateInfo {
                text: attr_string(level, "text", &field)?,
                condition,
            })
        })
        .collect()
}

fn statement_infos(facet: &Facet, f: usize) -> Result<Vec<StatementInfo>, BundleError> {
    facet
        .levels
        .iter()
        .enumerate()
        .map(|(j, level)| {
            let field = format!("facets[{f}].levels[{j}]");
            let text = attr_string(level, "text", &field)?.ok_or_else(|| {
                invalid(
                    &format!("{field}.text"),
                    "missing: every statement needs its text",
                )
            })?;
            Ok(StatementInfo {
                text,
                category: attr_string(level, "category", &field)?,
                target_group: attr_string(level, "target_group", &field)?,
            })
        })
        .collect()
}

/// Marks a byte that is not a code of the column in a [`translate_column`] lookup table.
const NOT_A_CODE: u8 = u8::MAX - 1;

/// Bytes per call of [`translate_chunk`].
const TRANSLATE_CHUNK: usize = 1 << 12;

/// Translates a dense one-character-per-cell column through `lookup` (byte → code, [`NOT_A_CODE`] for
/// anything else, including every non-ASCII byte), or `None` when the column is not exactly `cells`
/// ASCII codes. `None` sends the caller to its exact (slower) error report.
///
/// The work goes through [`translate_chunk`] in 4 KiB pieces: a small non-inlined function that
/// returns often, so that a WebAssembly engine which starts with a baseline compiler (V8's Liftoff)
/// can switch to optimised code between calls on a large bundle instead of running the whole column
/// in baseline code.
fn translate_column(bytes: &[u8], lookup: &[u8; 256], cells: usize) -> Option<Vec<u8>> {
    if bytes.len() != cells {
        return None;
    }
    let mut out = vec![0u8; cells];
    for (src, dst) in bytes
        .chunks(TRANSLATE_CHUNK)
        .zip(out.chunks_mut(TRANSLATE_CHUNK))
    {
        if !translate_chunk(src, dst, lookup) {
            return None;
        }
    }
    Some(out)
}

/// `dst[i] = lookup[src[i]]`; false when any byte maps to [`NOT_A_CODE`]. Branch-free in the loop.
#[inline(never)]
fn translate_chunk(src: &[u8], dst: &mut [u8], lookup: &[u8; 256]) -> bool {
    let mut bad = 0u8;
    for (d, &s) in dst.iter_mut().zip(src) {
        let c = lookup[usize::from(s)];
        bad |= u8::from(c == NOT_A_CODE);
        *d = c;
    }
    bad == 0
}

/// The exact error for a `responses.selection.codes` column that [`translate_column`] refused: its
/// length in characters, then the first character that is not a code (a known code letter beyond the
/// dictionary is an index out of range; anything else an unknown code, with its cell's levels).
fn selection_code_error(
    file: &BundleFile,
    axes: &[Axis],
    codes: &str,
    lookup: &[u8; 256],
    cells: usize,
    dictionary_len: usize,
) -> BundleError {
    let field = "responses.selection.codes";
    let found = codes.chars().count();
    if found != cells {
        return BundleError::LengthMismatch {
            field: field.into(),
            expected: cells,
            found,
        };
    }
    for (i, ch) in codes.chars().enumerate() {
        let known = ch.is_ascii() && lookup[ch as usize] != NOT_A_CODE;
        if known {
            continue;
        }
        if let Some(pos) = CODE_ALPHABET.iter().position(|&c| char::from(c) == ch) {
            return BundleError::IndexOutOfRange {
                field: field.into(),
                index: i,
                value: pos as u64,
                bound: dictionary_len as u64,
            };
        }
        return BundleError::UnknownCode {
            field: field.into(),
            index: i,
            code: ch,
            cell: describe_cell(file, axes, i),
        };
    }
    invalid(field, "could not be decoded")
}

fn check_column(
    file: &BundleFile,
    axes: &[Axis],
    field: &str,
    column: &str,
    cells: usize,
    allowed: &[u8],
) -> Result<(), BundleError> {
    let mut lookup = [NOT_A_CODE; 256];
    for &b in allowed {
        lookup[usize::from(b)] = b;
    }
    if translate_column(column.as_bytes(), &lookup, cells).is_some() {
        return Ok(());
    }
    let found = column.chars().count();
    if found != cells {
        return Err(BundleError::LengthMismatch {
            field: field.to_string(),
            expected: cells,
            found,
        });
    }
    for (i, ch) in column.chars().enumerate() {
        if !ch.is_ascii() || !allowed.contains(&(ch as u8)) {
            return Err(BundleError::UnknownCode {
                field: field.to_string(),
                index: i,
                code: ch,
                cell: describe_cell(file, axes, i),
            });
        }
    }
    Ok(())
}

fn decode_rationale(
    file: &BundleFile,
    axes: &[Axis],
    field: &str,
    column: &str,
    cells: usize,
) -> Result<Vec<Option<RationaleLabel>>, BundleError> {
    check_column(file, axes, field, column, cells, b"EQNDR.-")?;
    Ok(column
        .as_bytes()
        .iter()
        .map(|&b| RationaleLabel::from_code(b))
        .collect())
}

fn check_text_cells(data: &TextCells, cells: usize, field: &str) -> Result<(), BundleError> {
    if data.cells.len() != data.texts.len() {
        return Err(invalid(
            &format!("{field}.texts"),
            &format!(
                "{} texts for {} cell indices; there must be one text per cell index",
                data.texts.len(),
                data.cells.len()
            ),
        ));
    }
    let mut previous: Option<u64> = None;
    for (k, &cell) in data.cells.iter().enumerate() {
        if cell >= cells as u64 {
            return Err(BundleError::IndexOutOfRange {
                field: format!("{field}.cells"),
                index: k,
                value: cell,
                bound: cells as u64,
            });
        }
        if previous.is_some_and(|p| p >= cell) {
            return Err(invalid(
                &format!("{field}.cells[{k}]"),
                "cell indices must be strictly increasing (no duplicates)",
            ));
        }
        previous = Some(cell);
    }
    Ok(())
}

/// Encodes selection-value indices (or [`NO_RESPONSE_CODE`]) as a `codes` string.
///
/// # Errors
/// `Invalid` when an index is not below 62.
pub fn encode_selection_codes(codes: &[u8]) -> Result<String, BundleError> {
    codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            if c == NO_RESPONSE_CODE {
                Ok(NO_RESPONSE)
            } else {
                CODE_ALPHABET
                    .get(c as usize)
                    .map(|&b| b as char)
                    .ok_or_else(|| {
                        invalid(
                            &format!("responses.selection.codes[{i}]"),
                            "more than 62 distinct Selection values",
                        )
                    })
            }
        })
        .collect()
}
