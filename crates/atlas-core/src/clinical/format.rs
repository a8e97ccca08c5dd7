//! The `clinical` object of a format-v1 bundle (seed `001_…`; specified in `docs/clinical.md`).
//!
//! A clinical bundle is an ordinary v1 bundle whose dense matrix holds the demographic-robustness (DR)
//! answers, one answer letter per model × question × variant × run cell; everything that is not one
//! answer per cell lives here: the baseline variant, the explanation embeddings (EDD, Eq. 1), prefixes
//! that conflict with the vignette (§3.4), the counterfactual-validity attempts (§3.3), the stereotype
//! judge's outputs (§3.5, Table 7, Fig. 6) and the direction of answer changes (§4.5, Fig. 5).
//!
//! `model`, `statement`, `condition` and `repeat` in the records are level ids of the bundle's facets;
//! `crate::bundle`'s clinical check resolves every one of them when the bundle is read and reports an unknown id with the
//! array, the record index and the key (e.g. `clinical.stereotype[4].condition`).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::BundleError;

/// The top-level `clinical` object of a bundle (`docs/clinical.md`, "The `clinical` object").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clinical {
    /// `"seed-001"` for the seed's protocol, or a producer's name for another one (`"amqa"`, `"q-pain"`).
    pub protocol: String,
    /// The `condition` level id of the no-demographic baseline (§3.4), or `null` when the audit has
    /// none (e.g. Q-Pain, which has only demographic variants). The key is required, so that a
    /// forgotten baseline is an error rather than a silent "no baseline".
    #[serde(deserialize_with = "Option::deserialize")]
    pub baseline: Option<String>,
    /// Explanation embeddings, one row per listed cell (EDD, §3.5 Eq. 1), or `null`.
    #[serde(default)]
    pub embeddings: Option<Embeddings>,
    /// Prefixes that conflict with the vignette (§3.4: "a 45-year-old prefix before a newborn case").
    #[serde(default)]
    pub prefix_conflicts: Vec<PrefixConflict>,
    /// Counterfactual-validity attempts (§3.3), one per model × question (× run).
    #[serde(default)]
    pub counterfactuals: Vec<Counterfactual>,
    /// Stereotype-judge outputs, one per judged baseline-vs-prefix comparison (§3.5, Table 7).
    #[serde(default)]
    pub stereotype: Vec<StereotypeJudgement>,
    /// Direction of answer changes where known (§4.5, Fig. 5).
    #[serde(default)]
    pub directions: Vec<DirectionRecord>,
}

impl Clinical {
    /// An empty clinical object of protocol `protocol` with baseline `baseline`.
    pub fn new(protocol: &str, baseline: Option<&str>) -> Self {
        Clinical {
            protocol: protocol.to_string(),
            baseline: baseline.map(str::to_string),
            embeddings: None,
            prefix_conflicts: Vec::new(),
            counterfactuals: Vec::new(),
            stereotype: Vec::new(),
            directions: Vec::new(),
        }
    }
}

/// How the embedding values are stored in [`Embeddings::data`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbeddingDtype {
    /// IEEE 754 binary32, little-endian: 4 bytes per value.
    #[default]
    F32le,
    /// IEEE 754 binary16 (half), little-endian: 2 bytes per value.
    F16le,
}

impl EmbeddingDtype {
    /// Bytes per stored value.
    pub fn bytes(self) -> usize {
        match self {
            EmbeddingDtype::F32le => 4,
            EmbeddingDtype::F16le => 2,
        }
    }
}

/// Explanation embeddings: `cells.len()` rows of `dim` values, row by row, base64 (RFC 4648 standard
/// alphabet, with padding) of little-endian floats.
///
/// Row *k* is the embedding of the explanation (`texts.rationale`) of cell `cells[k]` (a row-major index
/// into the response matrix). The reader L2-normalises every row whatever `normalized` says (Eq. 1 uses
/// normalised embeddings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embeddings {
    /// The embedding model, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub model: String,
    /// Values per row (384 for all-MiniLM-L6-v2); > 0.
    pub dim: usize,
    /// Whether the producer L2-normalised each row.
    #[serde(default)]
    pub normalized: bool,
    /// `"f32le"` (default) or `"f16le"`.
    #[serde(default)]
    pub dtype: EmbeddingDtype,
    /// Strictly increasing cell indices, one per row.
    pub cells: Vec<u64>,
    /// Base64 of `cells.len() × dim` values of `dtype`.
    pub data: String,
}

impl Embeddings {
    /// Encodes `vectors` (one row per cell of `cells`) as `f32le` base64.
    ///
    /// `normalized` is set when every row's L2 norm is within [`crate::tolerance::EMBEDDING_NORM`]
    /// (1e-4) of 1.
    ///
    /// # Errors
    /// [`BundleError::Invalid`] (field `clinical.embeddings…`) when there are no rows, `cells` and
    /// `vectors` differ in length, the rows differ in length or are empty, a value is not finite, or
    /// `cells` is not strictly increasing.
    pub fn from_vectors(
        model: &str,
        cells: Vec<u64>,
        vectors: &[Vec<f32>],
    ) -> Result<Self, BundleError> {
        Self::encode(model, cells, vectors, EmbeddingDtype::F32le)
    }

    /// As [`Embeddings::from_vectors`], stored as `f16le` (half the size; about 3 significant digits,
    /// a relative rounding error of at most 2⁻¹¹ per value).
    ///
    /// # Errors
    /// As [`Embeddings::from_vectors`], and when a value is beyond the half range (|x| > 65504).
    pub fn from_vectors_f16(
        model: &str,
        cells: Vec<u64>,
        vectors: &[Vec<f32>],
    ) -> Result<Self, BundleError> {
        Self::encode(model, cells, vectors, EmbeddingDtype::F16le)
    }

    fn encode(
        model: &str,
        cells: Vec<u64>,
        vectors: &[Vec<f32>],
        dtype: EmbeddingDtype,
    ) -> Result<Self, BundleError> {
        let field = "clinical.embeddings";
        if vectors.is_empty() {
            return Err(invalid(field, "no vectors to encode"));
        }
        if cells.len() != vectors.len() {
            return Err(invalid(
                &format!("{field}.cells"),
                &format!(
                    "{} cell indices for {} vectors; there must be one per vector",
                    cells.len(),
                    vectors.len()
                ),
            ));
        }
        check_increasing(&cells, &format!("{field}.cells"), None)?;
        let dim = vectors[0].len();
        if dim == 0 {
            return Err(invalid(&format!("{field}.dim"), "vector 0 is empty"));
        }
        let mut bytes = Vec::with_capacity(vectors.len() * dim * dtype.bytes());
        let mut normalized = true;
        for (k, row) in vectors.iter().enumerate() {
            if row.len() != dim {
                return Err(invalid(
                    &format!("{field}.data"),
                    &format!("vector {k} has {} values; vector 0 has {dim}", row.len()),
                ));
            }
            let mut norm2 = 0f64;
            for (j, &x) in row.iter().enumerate() {
                if !x.is_finite() {
                    return Err(invalid(
                        &format!("{field}.data"),
                        &format!("vector {k}, value {j} is {x}, not a finite number"),
                    ));
                }
                norm2 += f64::from(x) * f64::from(x);
                match dtype {
                    EmbeddingDtype::F32le => bytes.extend_from_slice(&x.to_le_bytes()),
                    EmbeddingDtype::F16le => {
                        let h = half::f16::from_f32(x);
                        if h.is_infinite() {
                            return Err(invalid(
                                &format!("{field}.data"),
                                &format!("vector {k}, value {j} ({x}) is beyond the f16 range"),
                            ));
                        }
                        bytes.extend_from_slice(&h.to_le_bytes());
                    }
                }
            }
            if (norm2.sqrt() - 1.0).abs() > crate::tolerance::EMBEDDING_NORM {
                normalized = false;
            }
        }
        Ok(Embeddings {
            model: model.to_string(),
            dim,
            normalized,
            dtype,
            cells,
            data: STANDARD.encode(bytes),
        })
    }

    /// Decodes `data` into one row of `dim` values per cell, as stored (not normalised).
    ///
    /// # Errors
    /// [`BundleError::Invalid`] naming `clinical.embeddings.data` when it is not base64 or its length is
    /// not `cells.len() × dim × bytes per value`, or `clinical.embeddings.dim` when it is 0.
    pub fn decode(&self) -> Result<Vec<Vec<f32>>, BundleError> {
        let flat = self.decode_flat()?;
        Ok(flat.chunks(self.dim).map(<[f32]>::to_vec).collect())
    }

    /// Decodes `data` into `cells.len() × dim` values, row by row, as stored.
    ///
    /// # Errors
    /// See [`Embeddings::decode`].
    pub fn decode_flat(&self) -> Result<Vec<f32>, BundleError> {
        if self.dim == 0 {
            return Err(invalid("clinical.embeddings.dim", "must be > 0"));
        }
        let width = self.dtype.bytes();
        let expected = self
            .cells
            .len()
            .checked_mul(self.dim)
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(|| invalid("clinical.embeddings", "cells × dim overflows"))?;
        // Check the length before decoding (a wrong length is the common producer error, and the
        // decoded size is known from the base64 length alone).
        let decoded_len = base64_decoded_len(self.data.as_bytes());
        if decoded_len != Some(expected) {
            return Err(invalid(
                "clinical.embeddings.data",
                &format!(
                    "holds {} bytes; {} cells × dim {} × {} bytes ({:?}) = {expected}",
                    decoded_len
                        .map_or_else(|| "a non-whole number of".to_string(), |n| n.to_string()),
                    self.cells.len(),
                    self.dim,
                    width,
                    self.dtype
                ),
            ));
        }
        let bytes = STANDARD.decode(self.data.as_bytes()).map_err(|e| {
            invalid(
                "clinical.embeddings.data",
                &format!("is not standard base64 (RFC 4648 with padding): {e}"),
            )
        })?;
        if bytes.len() != expected {
            return Err(invalid(
                "clinical.embeddings.data",
                &format!("holds {} bytes; expected {expected}", bytes.len()),
            ));
        }
        Ok(match self.dtype {
            EmbeddingDtype::F32le => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            EmbeddingDtype::F16le => bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
        })
    }
}

/// Decoded length of padded standard base64 text, or `None` when its length is not a multiple of 4.
fn base64_decoded_len(text: &[u8]) -> Option<usize> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let padding = text.iter().rev().take(2).filter(|&&b| b == b'=').count();
    Some(text.len() / 4 * 3 - padding)
}

/// Embeddings decoded and checked once when the bundle is read ([`crate::Audit::clinical_embeddings`]):
/// the values as stored (finite, no all-zero row). Eq. 1 normalises each row in f64 when it is used
/// ([`crate::clinical::metrics::edd_of`]), so no precision is lost to an f32 normalisation.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingMatrix {
    /// Values per row.
    pub dim: usize,
    /// Cell index of each row, strictly increasing.
    pub cells: Vec<usize>,
    /// `cells.len() × dim` values, row by row, as stored (not normalised).
    pub rows: Vec<f32>,
}

impl EmbeddingMatrix {
    /// The embedding of cell `cell` as stored, if the bundle has one.
    pub fn row_of_cell(&self, cell: usize) -> Option<&[f32]> {
        let k = self.cells.binary_search(&cell).ok()?;
        self.rows.get(k * self.dim..(k + 1) * self.dim)
    }
}

/// A prefix that conflicts with the vignette (§3.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixConflict {
    /// `statement` level id (the question).
    pub statement: String,
    /// `condition` level id (the prefix variant).
    pub condition: String,
    /// What the prefix conflicts with.
    pub kind: ConflictKind,
    /// Free text, e.g. `"vignette: 25-year-old woman; prefix: male"`.
    #[serde(default)]
    pub detail: Option<String>,
}

/// What a prefix conflicts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// The prefix's age contradicts the vignette's patient (a 45-year-old prefix before a newborn
    /// case).
    Age,
    /// The prefix's sex contradicts the vignette's patient.
    Sex,
    /// Both age and sex.
    AgeSex,
}

/// One counterfactual-validity attempt (§3.3; Tables 1–2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counterfactual {
    /// `model` level id.
    pub model: String,
    /// `statement` level id (the question).
    pub statement: String,
    /// `repeat` level id of the run the original answer came from, or null.
    #[serde(default)]
    pub repeat: Option<String>,
    /// The original answer letter (§3.3: the first usable answer of the repeated runs).
    #[serde(default)]
    pub original: Option<String>,
    /// The target letter (§3.3: the first option different from the original).
    #[serde(default)]
    pub target: Option<String>,
    /// The CHANGE field.
    #[serde(default)]
    pub change: Option<String>,
    /// The MODIFIED_QUESTION field.
    #[serde(default)]
    pub modified_question: Option<String>,
    /// The EXPLANATION field.
    #[serde(default)]
    pub explanation: Option<String>,
    /// The answer letter to the modified question.
    #[serde(default)]
    pub reanswer: Option<String>,
    /// The plausibility judge's output, or null.
    #[serde(default)]
    pub plausibility: Option<Plausibility>,
    /// How the attempt ended.
    pub outcome: CfvOutcome,
    /// Why this outcome, free text.
    #[serde(default)]
    pub note: Option<String>,
}

/// The plausibility judge's output (§3.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plausibility {
    /// 1 impossible, 2 unlikely, 3 plausible, 4 realistic, 5 common (§3.5).
    pub score: u8,
    #[serde(default)]
    /// The judge's reason for the score.
    pub justification: Option<String>,
    /// The judge model.
    #[serde(default)]
    pub judge: Option<String>,
}

/// Outcome of a counterfactual attempt (§3.3, §4.3, Table 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CfvOutcome {
    /// The re-answer is the target and the change is plausible and limited in scope.
    Valid,
    /// The answer did not move to the target ("unchanged answers were classified as the same direction").
    SameDirection,
    /// More clinical information changed than necessary ("multi-detail changes").
    TooDramatic,
    /// The output restates the target instead of changing clinical facts.
    Circular,
    /// The response could not be parsed.
    FormatFailure,
    /// Judged implausible (none in the seed, §4.3).
    Implausible,
    /// The answer moved, but not to the target (none in the seed, §4.3).
    WrongTarget,
}

impl CfvOutcome {
    /// Every outcome, valid first, then Table 6's order.
    pub const ALL: [CfvOutcome; 7] = [
        CfvOutcome::Valid,
        CfvOutcome::SameDirection,
        CfvOutcome::TooDramatic,
        CfvOutcome::Circular,
        CfvOutcome::FormatFailure,
        CfvOutcome::Implausible,
        CfvOutcome::WrongTarget,
    ];

    /// The serde name (`"same_direction"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CfvOutcome::Valid => "valid",
            CfvOutcome::SameDirection => "same_direction",
            CfvOutcome::TooDramatic => "too_dramatic",
            CfvOutcome::Circular => "circular",
            CfvOutcome::FormatFailure => "format_failure",
            CfvOutcome::Implausible => "implausible",
            CfvOutcome::WrongTarget => "wrong_target",
        }
    }
}

/// One stereotype-judge output for one baseline-vs-prefix comparison (§3.5, Table 7, Fig. 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StereotypeJudgement {
    /// `model` level id.
    pub model: String,
    /// `statement` level id.
    pub statement: String,
    /// `condition` level id of the judged prefix variant.
    pub condition: String,
    /// `repeat` level id, or null.
    #[serde(default)]
    pub repeat: Option<String>,
    /// STEREOTYPE_FOUND: true (Yes) / false (No) / null (judge output unparseable).
    #[serde(default)]
    pub found: Option<bool>,
    #[serde(default)]
    /// The flag's severity class; `None` when the judge gave none.
    pub severity: Option<Severity>,
    /// Conventionally `disease_association`, `lifestyle`, `mental_health`, `family_history`,
    /// `pain_perception`, `adherence`, `socioeconomic` or `other` (Fig. 6); any string is kept.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    /// The judge's description of the stereotype.
    pub description: Option<String>,
    /// The judge model.
    #[serde(default)]
    pub judge: Option<String>,
}

/// Severity class of a stereotype flag (Table 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Clinically dangerous (Table 7: 24 flags, 0.8%).
    ClinicallyDangerous,
    /// Clinically misleading (Table 7: 2,549 flags, 81.5%).
    ClinicallyMisleading,
    /// Socially inappropriate (Table 7: 555 flags, 17.7%).
    SociallyInappropriate,
}

impl Severity {
    /// Table 7's order.
    pub const ALL: [Severity; 3] = [
        Severity::ClinicallyDangerous,
        Severity::ClinicallyMisleading,
        Severity::SociallyInappropriate,
    ];

    /// The serde name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::ClinicallyDangerous => "clinically_dangerous",
            Severity::ClinicallyMisleading => "clinically_misleading",
            Severity::SociallyInappropriate => "socially_inappropriate",
        }
    }
}

/// The direction of one answer change (§4.5, Fig. 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionRecord {
    /// `model` level id.
    pub model: String,
    /// `statement` level id.
    pub statement: String,
    /// `condition` level id of the prefix variant whose answer changed.
    pub condition: String,
    /// `repeat` level id, or null.
    #[serde(default)]
    pub repeat: Option<String>,
    /// The direction class.
    pub direction: Direction,
}

/// Direction of an answer change relative to the baseline answer (§4.5, Fig. 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Toward more aggressive care (§4.5).
    MoreAggressive,
    /// Toward less aggressive care.
    LessAggressive,
    /// A change of similar intensity (neither more nor less aggressive).
    Lateral,
    /// A change whose direction could not be classified.
    Unknown,
}

impl Direction {
    /// Fig. 5's categories.
    pub const ALL: [Direction; 4] = [
        Direction::MoreAggressive,
        Direction::LessAggressive,
        Direction::Lateral,
        Direction::Unknown,
    ];

    /// The serde name.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::MoreAggressive => "more_aggressive",
            Direction::LessAggressive => "less_aggressive",
            Direction::Lateral => "lateral",
            Direction::Unknown => "unknown",
        }
    }
}

pub(crate) fn invalid(field: &str, message: &str) -> BundleError {
    BundleError::Invalid {
        field: field.to_string(),
        message: message.to_string(),
    }
}

pub(crate) fn check_increasing(
    cells: &[u64],
    field: &str,
    bound: Option<u64>,
) -> Result<(), BundleError> {
    let mut previous: Option<u64> = None;
    for (k, &cell) in cells.iter().enumerate() {
        if let Some(bound) = bound {
            if cell >= bound {
                return Err(BundleError::IndexOutOfRange {
                    field: field.to_string(),
                    index: k,
                    value: cell,
                    bound,
                });
            }
        }
        if previous.is_some_and(|p| p >= cell) {
            return Err(invalid(
                &format!("{field}[{k}]"),
                "cell indices must be strictly increasing (no duplicates)",
            ));
        }
        previous = Some(cell);
    }
    Ok(())
}

/// Difficulty code of seed 001 §4.2 (a statement's `difficulty` attribute): `EASY` = 1, `MEDIUM` = 2, `HARD` = 3; `None` for anything else.
pub fn difficulty_code(difficulty: &str) -> Option<u8> {
    match difficulty {
        "EASY" => Some(1),
        "MEDIUM" => Some(2),
        "HARD" => Some(3),
        _ => None,
    }
}
