//! The import mapping: a small JSON file that says which column (or JSON path) holds which facet, the
//! Selection, the Rationale and judge labels, and how raw Selections map to bias evidence. The file
//! format is documented in `docs/import-mapping.md`; every object rejects unknown keys.

use std::collections::BTreeMap;

use atlas_core::bundle::{facet_ids, License, Obtained, Source};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ImportError;
use crate::Format;

/// The placeholder replaced by an unpivot level's `key` in field references.
pub const UNPIVOT_PLACEHOLDER: &str = "{unpivot}";

/// Version of the mapping file format.
pub const MAPPING_VERSION: u32 = 1;

/// A whole mapping file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// Always 1.
    pub mapping_version: u32,
    /// Input format and CSV delimiter; the format may also come from the file name or the caller.
    #[serde(default)]
    pub input: InputSpec,
    /// The bundle's metadata (`produced_by` is filled in by the importer).
    pub metadata: MetadataSpec,
    /// Where each facet's level comes from.
    pub facets: FacetsSpec,
    /// The Selection and its mapping to bias evidence.
    pub selection: SelectionSpec,
    /// The Rationale text (stored inline in the bundle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<TextSpec>,
    /// Judge label columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeSpec>,
    /// Likelihood readouts (`responses.likelihood` of the bundle): where the candidates'
    /// log-probabilities are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likelihood: Option<LikelihoodSpec>,
    /// When true, every skipped record, skipped value and duplicate cell is an error instead of a
    /// report entry.
    #[serde(default)]
    pub strict: bool,
}

/// `input`: how to read the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `csv`, `tsv`, `jsonl` or `json`; absent = from the command line, else the file extension.
    pub format: Option<Format>,
    /// CSV/TSV delimiter (one ASCII character); default `,` for CSV and a tab for TSV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<char>,
}

/// `metadata`: the bundle metadata that the importer cannot know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetadataSpec {
    /// The bundle's `metadata.id`.
    pub id: String,
    /// The bundle's `metadata.title`.
    pub title: String,
    /// The bundle's `metadata.description`: what was asked, of whom, how the Selection maps to
    /// bias evidence.
    pub description: String,
    /// The bundle's `metadata.source` (citation, url, commit).
    pub source: Source,
    /// The bundle's `metadata.license` (id, url, attribution).
    pub license: License,
    /// Required key: `null` when the data holds no offensive text.
    #[serde(deserialize_with = "Option::deserialize")]
    pub content_warning: Option<String>,
    /// How labels were derived; copied in front of the importer's own notes in `produced_by.notes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// `facets`: the five known facets plus any other (`other`, keyed by facet id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FacetsSpec {
    /// The audited LLMs (required).
    pub model: FacetSpec,
    /// The statements (required); `text` becomes the statement text (default: its id).
    pub statement: FacetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The evaluation conditions; absent = one implicit condition.
    pub condition: Option<FacetSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The templates (wordings); absent = one implicit template.
    pub template: Option<FacetSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Repeated samples of the same prompt.
    pub repeat: Option<FacetSpec>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    /// Further facets, keyed by facet id (pooled like repeats).
    pub other: BTreeMap<String, FacetSpec>,
}

/// Level order of a facet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LevelOrder {
    /// In the order the values first appear in the input.
    FirstSeen,
    /// Numbers first, in numeric order, then the other ids in byte order.
    Natural,
}

/// Where one facet's level comes from: exactly one of `field`, `fields`, `value`, `unpivot`,
/// `array_index`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FacetSpec {
    /// A column / JSON path whose value is the level id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Several columns / paths whose values, joined by `join`, are the level id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<String>>,
    /// Separator for `fields` (default `/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<String>,
    /// A constant level id for every record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Wide to long: the facet's levels are given here, one per group of columns; field references
    /// elsewhere in the mapping contain `{unpivot}`, replaced by each level's `key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpivot: Option<Vec<UnpivotLevel>>,
    /// The level is the 1-based position in an array-valued Selection (one array element per repeat).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub array_index: bool,
    /// Display name of the facet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Renames values to level ids (values not listed keep their value).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rename: BTreeMap<String, String>,
    /// The allowed level ids, in this order; a record with another value is skipped and reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<String>>,
    /// Level order when `levels` is not given (default `first_seen`; `natural` for `array_index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<LevelOrder>,
    /// Level attribute `text` (statement text, template text) from this column / path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Level attribute `category` (statement category) from this column / path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Level attribute `target_group` from this column / path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group: Option<String>,
    /// Further level attributes: attribute name → column / path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

/// One level of an unpivoted facet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnpivotLevel {
    /// The level id.
    pub id: String,
    /// The text that replaces `{unpivot}` in field references (default: the id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Constant level attributes (e.g. `label`, `sweep`, `level`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, Value>,
}

/// What a raw Selection that the map does not list becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unmapped {
    /// Abstain (evidence null, obtained `regex`): a readable answer outside the mapping.
    #[default]
    Abstain,
    /// Stop the import with an error naming the record and the value.
    Error,
}

/// A value of `selection.map`: an evidence (`1`, `0`, `null`) or an object that may also set the
/// stored raw text and how the Selection was obtained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MapEntry {
    /// Just the evidence: `1`, `0` or `null` (Abstain); the value read is stored as the raw Selection.
    Evidence(Option<u8>),
    /// The object form, which may also set the stored raw text and how the Selection was obtained.
    Full(MapEntryFull),
}

/// The object form of a [`MapEntry`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapEntryFull {
    #[serde(deserialize_with = "Option::deserialize")]
    /// Bias evidence: `1`, `0` or `null` = Abstain (required key).
    pub evidence: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How the Selection was obtained; absent = `regex`.
    pub obtained: Option<Obtained>,
    /// The raw text stored in the bundle instead of the value read (e.g. `"1"` → `"agree"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

/// `selection`: where the Selection is and how it maps to bias evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionSpec {
    /// Column / path of the raw Selection (may contain `{unpivot}`; may hold an array of repeats).
    pub field: String,
    /// Raw value (or `evidence_field` value) → evidence. Exactly one of `map` and `compare_to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<BTreeMap<String, MapEntry>>,
    /// Look the map up with this field's value instead of the raw Selection (the raw Selection is
    /// still what the bundle stores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_field: Option<String>,
    /// Evidence by comparison with this field (e.g. the gold answer): `equal` / `different`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare_to: Option<String>,
    /// Evidence when the raw Selection equals the `compare_to` value (`1`, `0` or `null`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub equal: Option<Option<u8>>,
    /// Evidence when it differs.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub different: Option<Option<u8>>,
    /// The readable answers: a raw value outside this list is Abstain (and counted as unmapped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
    /// Raw values that are refusals (evidence null, obtained `refusal`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<String>,
    /// What an unmapped value becomes (default Abstain).
    #[serde(default)]
    pub unmapped: Unmapped,
    /// Store every unmapped raw value as one dictionary entry `(unmapped)` (their real values and
    /// counts stay in the report), so that free-text Selections do not overflow the 62 codes.
    #[serde(default)]
    pub collapse_unmapped: bool,
    /// The score direction the bundle declares (`responses.selection.direction`,
    /// `docs/bundle-format.md`): `{"better": "lower" | "higher"}` or `{"better": "target", "target":
    /// 0.5}`, with an optional `note`. Absent = the bundle declares none (lower is better, shown as the
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<atlas_core::direction::DirectionSpec>,
}

/// `rationale`: where the Rationale text is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextSpec {
    /// Column / path of the Rationale text.
    pub field: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// What the texts are (`texts.rationale.description`).
    pub description: Option<String>,
}

/// `likelihood`: where a record's likelihood readout is (`docs/import-mapping.md`, "Likelihood
/// readouts"). A record whose Selection field is absent but whose readout is present gives a cell
/// with a likelihood readout and no Selection (`-`), so that Selection statistics never see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LikelihoodSpec {
    /// Candidates per readout (2 to 10): the length of the arrays read.
    pub candidates: usize,
    /// JSON path of an array of `candidates` summed log-probabilities (numbers ≤ 0, natural log;
    /// `null` for a candidate not scored).
    pub logprob: String,
    /// JSON path of an array of `candidates` token counts (integers ≥ 1 or `null`); absent = not
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<String>,
    /// JSON path of the stereotyped candidate's index (an integer `0 ≤ i < candidates`).
    pub stereotyped: String,
    /// What was scored (`responses.likelihood.description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One judge column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSpec {
    /// Judge id (`responses.judges[].id`), unique among the judges.
    pub id: String,
    /// Column / path of the judge's raw label.
    pub field: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The judge model.
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The rubric or prompt the judge used.
    pub rubric: Option<String>,
    /// Raw value → label `E`, `QE` (or `Q`), `N`, `D`, `R`; unlisted values get `.` (no label) and
    /// are counted in the report.
    pub map: BTreeMap<String, String>,
}

impl Mapping {
    /// Parses a mapping from JSON text (a UTF-8 byte-order mark is allowed) and checks its rules.
    ///
    /// # Errors
    /// [`ImportError::MappingJson`] for JSON or shape errors (with line and column),
    /// [`ImportError::Mapping`] for rule violations.
    pub fn from_json(text: &str) -> Result<Self, ImportError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mapping: Mapping =
            serde_json::from_str(text).map_err(|e| ImportError::MappingJson(e.to_string()))?;
        mapping.check()?;
        Ok(mapping)
    }

    /// The facet specs in bundle axis order: model, condition, statement, template, the `other`
    /// facets by id, repeat (last, so that the repeats of one prompt are adjacent).
    pub fn facet_specs(&self) -> Vec<(String, &FacetSpec)> {
        let f = &self.facets;
        let mut out = vec![(facet_ids::MODEL.to_string(), &f.model)];
        if let Some(c) = &f.condition {
            out.push((facet_ids::CONDITION.to_string(), c));
        }
        out.push((facet_ids::STATEMENT.to_string(), &f.statement));
        if let Some(t) = &f.template {
            out.push((facet_ids::TEMPLATE.to_string(), t));
        }
        for (id, spec) in &f.other {
            out.push((id.clone(), spec));
        }
        if let Some(r) = &f.repeat {
            out.push((facet_ids::REPEAT.to_string(), r));
        }
        out
    }

    /// The unpivot levels, if a facet is unpivoted.
    pub fn unpivot(&self) -> Option<(String, &[UnpivotLevel])> {
        self.facet_specs()
            .into_iter()
            .find_map(|(id, s)| s.unpivot.as_deref().map(|u| (id, u)))
    }

    /// Checks the rules that serde cannot express.
    ///
    /// # Errors
    /// [`ImportError::Mapping`] naming the key.
    pub fn check(&self) -> Result<(), ImportError> {
        let bad = |field: &str, message: &str| ImportError::Mapping {
            field: field.to_string(),
            message: message.to_string(),
        };
        if self.mapping_version != MAPPING_VERSION {
            return Err(bad(
                "mapping_version",
                &format!(
                    "is {}; this build reads mapping version {MAPPING_VERSION}",
                    self.mapping_version
                ),
            ));
        }
        if self.metadata.id.trim().is_empty() {
            return Err(bad("metadata.id", "must not be empty"));
        }
        if let Some(d) = self.input.delimiter {
            if !d.is_ascii() || matches!(d, '"' | '\n' | '\r') {
                return Err(bad(
                    "input.delimiter",
                    "must be one ASCII character other than a quote or a line break",
                ));
            }
        }
        let mut unpivots = 0;
        let mut arrays = 0;
        for (id, spec) in self.facet_specs() {
            let key = format!("facets.{id}");
            if id.is_empty() {
                return Err(bad("facets.other", "a facet id must not be empty"));
            }
            if self.facets.other.contains_key(&id)
                && [
                    facet_ids::MODEL,
                    facet_ids::STATEMENT,
                    facet_ids::CONDITION,
                    facet_ids::TEMPLATE,
                    facet_ids::REPEAT,
                ]
                .contains(&id.as_str())
            {
                return Err(bad(
                    &key,
                    "a known facet must be given under its own key, not under `other`",
                ));
            }
            let sources = [
                spec.field.is_some(),
                spec.fields.is_some(),
                spec.value.is_some(),
                spec.unpivot.is_some(),
                spec.array_index,
            ]
            .iter()
            .filter(|&&b| b)
            .count();
            if sources != 1 {
                return Err(bad(
                    &key,
                    "give exactly one of `field`, `fields`, `value`, `unpivot`, `array_index`",
                ));
            }
            if spec.join.is_some() && spec.fields.is_none() {
                return Err(bad(&format!("{key}.join"), "only with `fields`"));
            }
            if let Some(fields) = &spec.fields {
                if fields.is_empty() {
                    return Err(bad(&format!("{key}.fields"), "must not be empty"));
                }
            }
            if let Some(v) = &spec.value {
                if v.is_empty() {
                    return Err(bad(&format!("{key}.value"), "must not be empty"));
                }
            }
            if let Some(levels) = &spec.unpivot {
                unpivots += 1;
                if levels.is_empty() {
                    return Err(bad(&format!("{key}.unpivot"), "needs at least one level"));
                }
                let mut seen = std::collections::HashSet::new();
                for (i, l) in levels.iter().enumerate() {
                    if l.id.is_empty() || !seen.insert(l.id.as_str()) {
                        return Err(bad(
                            &format!("{key}.unpivot[{i}].id"),
                            "level ids must be non-empty and unique",
                        ));
                    }
                }
                if spec.levels.is_some() || spec.order.is_some() || !spec.rename.is_empty() {
                    return Err(bad(
                        &key,
                        "an unpivoted facet takes its levels from `unpivot`; `levels`, `order` and `rename` do not apply",
                    ));
                }
            }
            if spec.array_index {
                arrays += 1;
            }
            if let Some(levels) = &spec.levels {
                let mut seen = std::collections::HashSet::new();
                if levels.is_empty() || levels.iter().any(|l| l.is_empty() || !seen.insert(l)) {
                    return Err(bad(
                        &format!("{key}.levels"),
                        "must list non-empty, unique level ids",
                    ));
                }
            }
            let mut attrs = std::collections::HashSet::new();
            for (attr, _) in spec_attribute_refs(spec) {
                if attr == "id" || attr.is_empty() {
                    return Err(bad(
                        &format!("{key}.attributes"),
                        "`id` and the empty name are not attributes",
                    ));
                }
                if !attrs.insert(attr) {
                    return Err(bad(
                        &format!("{key}.attributes.{attr}"),
                        "given twice (as a shortcut key and in `attributes`)",
                    ));
                }
            }
        }
        if unpivots > 1 {
            return Err(bad("facets", "at most one facet can be unpivoted"));
        }
        if arrays > 1 {
            return Err(bad("facets", "at most one facet can be `array_index`"));
        }
        if let Some(l) = &self.likelihood {
            if !(2..=atlas_core::bundle::MAX_LIKELIHOOD_CANDIDATES).contains(&l.candidates) {
                return Err(bad(
                    "likelihood.candidates",
                    &format!(
                        "is {}; a likelihood readout has 2 to {} candidates",
                        l.candidates,
                        atlas_core::bundle::MAX_LIKELIHOOD_CANDIDATES
                    ),
                ));
            }
            if unpivots > 0 || arrays > 0 {
                return Err(bad(
                    "likelihood",
                    "likelihood readouts are read once per record: not with an unpivoted or `array_index` facet",
                ));
            }
        }
        if let Err(e) = atlas_core::direction::ScoreDirection::from_spec(
            self.selection.direction.as_ref(),
            "selection.direction",
        ) {
            let (field, message) = match e {
                atlas_core::BundleError::Invalid { field, message } => (field, message),
                other => ("selection.direction".to_string(), other.to_string()),
            };
            return Err(bad(&field, &message));
        }
        let has_unpivot = unpivots == 1;
        let mut refs: Vec<(String, &str)> = vec![("selection.field".into(), &self.selection.field)];
        if let Some(f) = &self.selection.evidence_field {
            refs.push(("selection.evidence_field".into(), f));
        }
        if let Some(f) = &self.selection.compare_to {
            refs.push(("selection.compare_to".into(), f));
        }
        if let Some(r) = &self.rationale {
            refs.push(("rationale.field".into(), &r.field));
        }
        for (j, judge) in self.judges.iter().enumerate() {
            refs.push((format!("judges[{j}].field"), &judge.field));
        }
        for (name, r) in &refs {
            if r.is_empty() {
                return Err(bad(name, "must not be empty"));
            }
            if r.contains(UNPIVOT_PLACEHOLDER) && !has_unpivot {
                return Err(bad(
                    name,
                    "uses {unpivot} but no facet is unpivoted (`\"unpivot\": [...]`)",
                ));
            }
        }
        if has_unpivot && !self.selection.field.contains(UNPIVOT_PLACEHOLDER) {
            return Err(bad(
                "selection.field",
                "a facet is unpivoted, so the Selection field must contain {unpivot}",
            ));
        }
        for (id, spec) in self.facet_specs() {
            let mut facet_refs: Vec<&String> = spec.field.iter().collect();
            facet_refs.extend(spec.fields.iter().flatten());
            for (_, r) in spec_attribute_refs(spec) {
                facet_refs.push(r);
            }
            if facet_refs.iter().any(|r| r.contains(UNPIVOT_PLACEHOLDER)) {
                return Err(bad(
                    &format!("facets.{id}"),
                    "facet values and attributes are read once per record and cannot use {unpivot}",
                ));
            }
        }
        let sel = &self.selection;
        match (&sel.map, &sel.compare_to) {
            (Some(map), None) => {
                if sel.equal.is_some() || sel.different.is_some() {
                    return Err(bad(
                        "selection",
                        "`equal` and `different` go with `compare_to`, not with `map`",
                    ));
                }
                for (raw, entry) in map {
                    let (evidence, obtained) = match entry {
                        MapEntry::Evidence(e) => (*e, None),
                        MapEntry::Full(f) => (f.evidence, f.obtained),
                    };
                    if evidence.is_some_and(|e| e > 1) {
                        return Err(bad(
                            &format!("selection.map.{raw}"),
                            "evidence is 1, 0 or null (Abstain)",
                        ));
                    }
                    if evidence.is_some()
                        && matches!(obtained, Some(Obtained::ParserFailure | Obtained::Refusal))
                    {
                        return Err(bad(
                            &format!("selection.map.{raw}"),
                            "a parser failure or refusal has no Selection: its evidence must be null",
                        ));
                    }
                }
            }
            (None, Some(_)) => {
                if sel.evidence_field.is_some() {
                    return Err(bad(
                        "selection.evidence_field",
                        "only with `map` (with `compare_to` the raw Selection is compared)",
                    ));
                }
                for (name, v) in [("equal", sel.equal), ("different", sel.different)] {
                    match v {
                        None => {
                            return Err(bad(
                                &format!("selection.{name}"),
                                "required with `compare_to` (1, 0 or null)",
                            ))
                        }
                        Some(Some(e)) if e > 1 => {
                            return Err(bad(
                                &format!("selection.{name}"),
                                "evidence is 1, 0 or null (Abstain)",
                            ))
                        }
                        _ => {}
                    }
                }
            }
            _ => {
                return Err(bad(
                    "selection",
                    "give exactly one of `map` (value → evidence) and `compare_to` (a field to compare with)",
                ))
            }
        }
        let mut judge_ids = std::collections::HashSet::new();
        for (j, judge) in self.judges.iter().enumerate() {
            if judge.id.is_empty() || !judge_ids.insert(judge.id.as_str()) {
                return Err(bad(
                    &format!("judges[{j}].id"),
                    "judge ids must be non-empty and unique",
                ));
            }
            for (raw, label) in &judge.map {
                if label_code(label).is_none() {
                    return Err(bad(
                        &format!("judges[{j}].map.{raw}"),
                        &format!("{label:?} is not a label; use E, QE (or Q), N, D or R"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The attribute references of a facet spec: (attribute name, column / path).
pub(crate) fn spec_attribute_refs(spec: &FacetSpec) -> Vec<(&str, &String)> {
    let mut out: Vec<(&str, &String)> = Vec::new();
    if let Some(t) = &spec.text {
        out.push(("text", t));
    }
    if let Some(c) = &spec.category {
        out.push(("category", c));
    }
    if let Some(g) = &spec.target_group {
        out.push(("target_group", g));
    }
    for (name, r) in &spec.attributes {
        out.push((name.as_str(), r));
    }
    out
}

/// A key that is present deserializes to `Some(value)`, so `"equal": null` is `Some(None)`
/// (Abstain), distinct from a missing key (`None`).
fn present<'de, D>(deserializer: D) -> Result<Option<Option<u8>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<u8>::deserialize(deserializer).map(Some)
}

/// The column code of a judge label, or `None` if it is not one.
pub(crate) fn label_code(label: &str) -> Option<u8> {
    Some(match label {
        "E" => b'E',
        "QE" | "Q" => b'Q',
        "N" => b'N',
        "D" => b'D',
        "R" => b'R',
        _ => return None,
    })
}
