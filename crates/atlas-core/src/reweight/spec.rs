//! Weight presets and weight specs: the one way the re-weighting panel of the app and `atlas reweight`
//! name, read and write condition weights (seed `000_…` §3.5, Eq. 4 and its alternatives, §6).
//!
//! - [`PresetKind`]: the five presets as data — key (URL `preset=` and element ids), label (the panel's
//!   radio buttons) — and [`WeightPreset::kind`].
//! - [`WeightsRequest`]: the weights `atlas reweight` asks for: `--preset equal | baseline | sweep:NAME |
//!   per-sweep:NAME=W,…` or `--weights NAME=W,…`, parsed by [`WeightsRequest::parse_preset`] and
//!   [`WeightsRequest::parse_conditions`] and resolved against a bundle by [`WeightsRequest::weights`].
//! - [`WeightEntry`] and [`weights_from_entries`]: the weights the panel's fields and sliders describe, a
//!   typed text or a slider's number per condition and per sweep, kept as typed (a slider's value stays
//!   an `f64`, never a text read back).
//! - [`parse_weight`], [`parse_weight_list`], [`format_weight`], [`format_weight_list`]: one weight and a
//!   `NAME=W,…` list, read with [`WEIGHT`] and written as the shortest decimal that reads back to the
//!   same `f64`.
//!
//! Weights are unitless and relative (only their ratios matter; see [`ConditionWeights`]).

use std::fmt;

use crate::number::NumberError;

use super::{ConditionWeights, ReweightBasis, ReweightError, WeightPreset, WEIGHT};

/// The presets of the re-weighting panel, in the order it lists them (see [`WeightPreset`] for the
/// weights each builds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PresetKind {
    /// Eq. 4: equal weights on the reference conditions.
    Equal,
    /// The baseline sweep only (seed Table 6, B0).
    Baseline,
    /// One sweep only.
    Sweep,
    /// One weight per sweep, spread equally over its Selection conditions.
    PerSweep,
    /// One weight per condition.
    Custom,
}

impl PresetKind {
    /// All presets in the order the panel lists them.
    pub const ALL: [PresetKind; 5] = [
        PresetKind::Equal,
        PresetKind::Baseline,
        PresetKind::Sweep,
        PresetKind::PerSweep,
        PresetKind::Custom,
    ];

    /// The key of the URL (`preset=`) and of the panel's element ids: `equal`, `baseline`, `sweep`,
    /// `per_sweep`, `custom`.
    pub fn key(self) -> &'static str {
        match self {
            PresetKind::Equal => "equal",
            PresetKind::Baseline => "baseline",
            PresetKind::Sweep => "sweep",
            PresetKind::PerSweep => "per_sweep",
            PresetKind::Custom => "custom",
        }
    }

    /// The preset of a [`PresetKind::key`]; `None` for any other text.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == key)
    }

    /// The label readers see, e.g. `Equal weights (Eq. 4)`.
    pub fn label(self) -> &'static str {
        match self {
            PresetKind::Equal => "Equal weights (Eq. 4)",
            PresetKind::Baseline => "Baseline only",
            PresetKind::Sweep => "One sweep only",
            PresetKind::PerSweep => "Per sweep",
            PresetKind::Custom => "Custom",
        }
    }

    /// The kind of a [`WeightPreset`] (its data dropped).
    pub fn of(preset: &WeightPreset) -> Self {
        match preset {
            WeightPreset::Equal => PresetKind::Equal,
            WeightPreset::BaselineOnly => PresetKind::Baseline,
            WeightPreset::SweepOnly { .. } => PresetKind::Sweep,
            WeightPreset::PerSweep { .. } => PresetKind::PerSweep,
            WeightPreset::Custom => PresetKind::Custom,
        }
    }
}

impl WeightPreset {
    /// This preset's [`PresetKind`].
    pub fn kind(&self) -> PresetKind {
        PresetKind::of(self)
    }
}

/// What a typed weight belongs to, as an error names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WeightOf {
    /// A condition's weight field (its id): `condition "benign"`.
    Condition(String),
    /// A sweep's weight field (its display name): `sweep "role"`.
    Sweep(String),
    /// An entry `NAME=W` of a weight list, before `NAME` is matched: `"benign"`.
    Listed(String),
}

impl fmt::Display for WeightOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeightOf::Condition(id) => write!(f, "condition {id:?}"),
            WeightOf::Sweep(name) => write!(f, "sweep {name:?}"),
            WeightOf::Listed(name) => write!(f, "{name:?}"),
        }
    }
}

/// Why typed weights, a weight list or a preset name cannot be used. Each variant names the text,
/// condition or sweep at fault; the `Display` text is the message `atlas reweight` and the app show.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightSpecError {
    /// An entry of a weight list without `=`.
    #[error("weight {part:?}: expected NAME=WEIGHT")]
    NotAPair {
        /// The entry as given.
        part: String,
    },
    /// A weight that is not a number of 0 or more ([`WEIGHT`]).
    #[error("the weight of {of}: {problem}")]
    BadNumber {
        /// Whose weight it is.
        of: WeightOf,
        /// What is wrong with the text.
        problem: NumberError,
    },
    /// A listed condition id the bundle does not have.
    #[error("no condition {id:?} in the bundle (conditions: {})", .known.join(", "))]
    NoCondition {
        /// The id as listed.
        id: String,
        /// The bundle's condition ids, in bundle order.
        known: Vec<String>,
    },
    /// A listed sweep name the bundle does not have.
    #[error("no sweep {name:?} in the bundle (sweeps: {})", .known.join(", "))]
    NoSweep {
        /// The name as listed.
        name: String,
        /// The bundle's sweep display names, in the order of [`ReweightBasis::sweeps`].
        known: Vec<String>,
    },
    /// A preset text that is none of `equal`, `baseline`, `sweep:NAME`, `per-sweep:NAME=W,…`.
    #[error("unknown preset {preset:?}: use equal, baseline, sweep:NAME or per-sweep:NAME=W,…")]
    UnknownPreset {
        /// The preset as given (trimmed).
        preset: String,
    },
    /// The weights were read but are not valid for the bundle (negative, all zero, weight on a
    /// condition without a Selection readout, no baseline, …).
    #[error(transparent)]
    Reweight(#[from] ReweightError),
}

/// Reads one typed weight of `of` with [`WEIGHT`] (a decimal number of 0 or more: `0.5`, `.5`, `2.`,
/// `1e-3`).
///
/// # Errors
/// [`WeightSpecError::BadNumber`] naming `of` and the [`NumberError`] (empty, incomplete, decimal
/// comma, negative, not a number, not finite).
pub fn parse_weight(of: WeightOf, text: &str) -> Result<f64, WeightSpecError> {
    WEIGHT
        .value(text)
        .map_err(|problem| WeightSpecError::BadNumber { of, problem })
}

/// A weight as text: the shortest decimal that reads back to the same `f64` (`0.5`, `1`, `2.5`,
/// `0.1`), so that [`parse_weight`] of it returns `w` exactly. Used where a weight leaves as text only:
/// a field's shown value, the URL, captions.
pub fn format_weight(w: f64) -> String {
    w.to_string()
}

/// The `NAME=WEIGHT` entries of a comma-separated list (`benign=1,targeted=0.5`), in order. Empty
/// entries are skipped; names and weights are trimmed; a name may contain `=` (the weight follows the
/// last one).
///
/// # Errors
/// [`WeightSpecError::NotAPair`] for an entry without `=`, [`WeightSpecError::BadNumber`] (with
/// [`WeightOf::Listed`]) for a weight [`WEIGHT`] refuses — the first in list order.
pub fn parse_weight_list(spec: &str) -> Result<Vec<(String, f64)>, WeightSpecError> {
    spec.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|part| {
            let (name, value) = part
                .rsplit_once('=')
                .ok_or_else(|| WeightSpecError::NotAPair {
                    part: part.to_string(),
                })?;
            let name = name.trim().to_string();
            let value = parse_weight(WeightOf::Listed(name.clone()), value)?;
            Ok((name, value))
        })
        .collect()
}

/// The list `NAME=W,…` of `pairs` ([`format_weight`] for each weight); [`parse_weight_list`] reads it
/// back to the same names and `f64`s.
pub fn format_weight_list<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> String {
    pairs
        .into_iter()
        .map(|(name, w)| format!("{name}={}", format_weight(w)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The weights `atlas reweight` asks for, parsed but not yet matched to a bundle.
#[derive(Debug, Clone, PartialEq)]
pub enum WeightsRequest {
    /// `--preset equal` (or neither option): Eq. 4.
    Equal,
    /// `--preset baseline`.
    Baseline,
    /// `--preset sweep:NAME`.
    Sweep(String),
    /// `--preset per-sweep:NAME=W,…`: the listed sweeps' weights; unlisted sweeps weigh 1.
    PerSweep(Vec<(String, f64)>),
    /// `--weights NAME=W,…`: the listed conditions' weights; unlisted conditions keep their Eq. 4
    /// weight (1 in the reference, 0 outside it).
    Conditions(Vec<(String, f64)>),
}

impl WeightsRequest {
    /// Reads a preset: `equal`, `baseline`, `sweep:NAME` or `per-sweep:NAME=W,…` (spaces around the
    /// text and the sweep name are ignored).
    ///
    /// # Errors
    /// [`WeightSpecError::UnknownPreset`]; for `per-sweep:` those of [`parse_weight_list`].
    pub fn parse_preset(text: &str) -> Result<Self, WeightSpecError> {
        let preset = text.trim();
        match preset {
            "equal" => return Ok(WeightsRequest::Equal),
            "baseline" => return Ok(WeightsRequest::Baseline),
            _ => {}
        }
        if let Some(sweep) = preset.strip_prefix("sweep:") {
            return Ok(WeightsRequest::Sweep(sweep.trim().to_string()));
        }
        if let Some(spec) = preset.strip_prefix("per-sweep:") {
            return Ok(WeightsRequest::PerSweep(parse_weight_list(spec)?));
        }
        Err(WeightSpecError::UnknownPreset {
            preset: preset.to_string(),
        })
    }

    /// Reads a condition weight list `NAME=W,…` ([`parse_weight_list`]).
    ///
    /// # Errors
    /// Those of [`parse_weight_list`].
    pub fn parse_conditions(spec: &str) -> Result<Self, WeightSpecError> {
        Ok(WeightsRequest::Conditions(parse_weight_list(spec)?))
    }

    /// The validated weights this request describes against `basis`.
    ///
    /// # Errors
    /// [`WeightSpecError::NoCondition`] / [`WeightSpecError::NoSweep`] for the first listed name the
    /// bundle lacks, and every [`ReweightError`] of the [`ConditionWeights`] constructors
    /// ([`WeightSpecError::Reweight`]).
    pub fn weights(&self, basis: &ReweightBasis) -> Result<ConditionWeights, WeightSpecError> {
        Ok(match self {
            WeightsRequest::Equal => ConditionWeights::equal(basis),
            WeightsRequest::Baseline => ConditionWeights::baseline_only(basis)?,
            WeightsRequest::Sweep(sweep) => ConditionWeights::sweep_only(basis, sweep)?,
            WeightsRequest::PerSweep(listed) => {
                let sweeps = basis.sweeps();
                let mut values = vec![1.0; sweeps.len()];
                for (name, w) in listed {
                    let g = sweeps
                        .iter()
                        .position(|s| s.display_name() == name)
                        .ok_or_else(|| WeightSpecError::NoSweep {
                            name: name.clone(),
                            known: sweeps
                                .iter()
                                .map(|s| s.display_name().to_string())
                                .collect(),
                        })?;
                    values[g] = *w;
                }
                ConditionWeights::per_sweep(basis, &values)?
            }
            WeightsRequest::Conditions(listed) => {
                let conditions = basis.conditions();
                let mut values: Vec<f64> = conditions
                    .iter()
                    .map(|c| if c.in_reference { 1.0 } else { 0.0 })
                    .collect();
                for (id, w) in listed {
                    let c = conditions.iter().position(|c| c.id == *id).ok_or_else(|| {
                        WeightSpecError::NoCondition {
                            id: id.clone(),
                            known: conditions.iter().map(|c| c.id.clone()).collect(),
                        }
                    })?;
                    values[c] = *w;
                }
                ConditionWeights::custom(basis, values)?
            }
        })
    }
}

/// One weight as the panel holds it: the text typed into its field, or the number its slider (or a
/// preset) set. A number stays an `f64` from the control to the charts; only a text is read.
#[derive(Debug, Clone, PartialEq)]
pub enum WeightEntry {
    /// Typed into the field, kept exactly as typed (never rewritten while the reader types).
    Text(String),
    /// Set by the slider or taken over from a preset's weights.
    Value(f64),
}

impl WeightEntry {
    /// The text the field shows: a typed text as typed, a number by [`format_weight`].
    pub fn text(&self) -> String {
        match self {
            WeightEntry::Text(t) => t.clone(),
            WeightEntry::Value(w) => format_weight(*w),
        }
    }

    /// The weight: a number as set, a text read with [`parse_weight`] (`of` names it in the error).
    /// A number is not checked here; the [`ConditionWeights`] constructors refuse a negative or
    /// non-finite one.
    ///
    /// # Errors
    /// [`WeightSpecError::BadNumber`] for a text [`WEIGHT`] refuses.
    pub fn value(&self, of: WeightOf) -> Result<f64, WeightSpecError> {
        match self {
            WeightEntry::Text(t) => parse_weight(of, t),
            WeightEntry::Value(w) => Ok(*w),
        }
    }

    /// The weight if the entry holds one: a number as set, a text that [`WEIGHT`] reads; `None` for
    /// a text it refuses (the field then shows why).
    pub fn weight(&self) -> Option<f64> {
        match self {
            WeightEntry::Text(t) => WEIGHT.read(t).ok().flatten(),
            WeightEntry::Value(w) => Some(*w),
        }
    }

    /// Whether this is an empty (or all-space) typed text.
    pub fn is_blank(&self) -> bool {
        matches!(self, WeightEntry::Text(t) if t.trim().is_empty())
    }
}

/// The weights the re-weighting panel's inputs describe, against `basis`: the chosen `preset`; the
/// sweep of [`PresetKind::Sweep`]; one entry per condition (bundle order) for [`PresetKind::Custom`]
/// (a missing entry weighs 0; a blank one on a condition without a Selection readout, whose field is
/// disabled, weighs 0 too); one entry per sweep (order of [`ReweightBasis::sweeps`]) for
/// [`PresetKind::PerSweep`] (a missing entry weighs 1).
///
/// # Errors
/// The first entry that is not a weight ([`WeightSpecError::BadNumber`] naming the condition or
/// sweep, in order), then the [`ReweightError`] of the constructor ([`WeightSpecError::Reweight`]).
pub fn weights_from_entries(
    basis: &ReweightBasis,
    preset: PresetKind,
    sweep: &str,
    conditions: &[WeightEntry],
    sweeps: &[WeightEntry],
) -> Result<ConditionWeights, WeightSpecError> {
    Ok(match preset {
        PresetKind::Equal => ConditionWeights::equal(basis),
        PresetKind::Baseline => ConditionWeights::baseline_only(basis)?,
        PresetKind::Sweep => ConditionWeights::sweep_only(basis, sweep)?,
        PresetKind::PerSweep => {
            let values = basis
                .sweeps()
                .iter()
                .enumerate()
                .map(|(g, s)| match sweeps.get(g) {
                    Some(entry) => entry.value(WeightOf::Sweep(s.display_name().to_string())),
                    None => Ok(1.0),
                })
                .collect::<Result<Vec<f64>, _>>()?;
            ConditionWeights::per_sweep(basis, &values)?
        }
        PresetKind::Custom => {
            let values = basis
                .conditions()
                .iter()
                .enumerate()
                .map(|(c, cond)| match conditions.get(c) {
                    None => Ok(0.0),
                    Some(entry) if !cond.has_selection && entry.is_blank() => Ok(0.0),
                    Some(entry) => entry.value(WeightOf::Condition(cond.id.clone())),
                })
                .collect::<Result<Vec<f64>, _>>()?;
            ConditionWeights::custom(basis, values)?
        }
    })
}
