//! High-Abstain flags: which Selection scores rest on cells whose Abstain share is above a
//! threshold.
//!
//! An Abstain Selection is missing, never recoded as non-bias (seed `000_…` §B.2, "Missingness rule").
//! A BER therefore rests on the valid Selections only, and a model whose answers are mostly Abstain can
//! get a low BER — and rank first — from the few answers it did give. Such a number is not "least
//! biased": it is mostly unobserved. Every BER cell (model × condition) whose **Abstain share**
//!
//! ```text
//! share = Abstain / (valid + Abstain)        (responses, or units under unit_majority)
//! ```
//!
//! exceeds a threshold (default [`DEFAULT_ABSTAIN_THRESHOLD`] = 50 %: most of the cell's answers are
//! missing) is flagged, and so is every score — a reference score (Eq. 4), a re-weighted score, a
//! wording's score — that averages such a cell, with the rank built on it. A flag never changes a number;
//! it marks it, with the share, in tables, charts and exports. The threshold and its reasons are in
//! `docs/statistics.md` ("High-Abstain flags").

use serde::{Deserialize, Serialize};

use crate::stats::{BerTable, Counts};

/// Default threshold of the Abstain share above which a cell is flagged: 0.5 (50 %), i.e. a cell in
/// which most answers are Abstain (missing, seed `000_…` §B.2). See `docs/statistics.md`.
pub const DEFAULT_ABSTAIN_THRESHOLD: f64 = 0.5;

/// A validated threshold of the Abstain share: a fraction in `[0, 1]`. A cell is flagged when its
/// share is **strictly above** it (so 1 flags nothing, 0 flags every cell with an Abstain).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct AbstainThreshold(f64);

impl Default for AbstainThreshold {
    fn default() -> Self {
        AbstainThreshold(DEFAULT_ABSTAIN_THRESHOLD)
    }
}

/// A threshold outside `[0, 1]` (or NaN).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the Abstain threshold is {0}; it is a fraction in [0, 1] (0.5 = 50 %)")]
pub struct BadAbstainThreshold(pub f64);

impl AbstainThreshold {
    /// # Errors
    /// [`BadAbstainThreshold`] when `t` is NaN, infinite or outside `[0, 1]`.
    pub fn new(t: f64) -> Result<Self, BadAbstainThreshold> {
        if t.is_finite() && (0.0..=1.0).contains(&t) {
            Ok(AbstainThreshold(t))
        } else {
            Err(BadAbstainThreshold(t))
        }
    }

    /// The threshold, a fraction.
    pub fn value(self) -> f64 {
        self.0
    }

    /// Whether a share (a fraction; `None` = no response) is above the threshold.
    pub fn flags(self, share: Option<f64>) -> bool {
        share.is_some_and(|s| s > self.0)
    }

    /// `Abstain share above 50 %`.
    pub fn describe(self) -> String {
        format!(
            "Abstain share above {}",
            crate::direction::percent_text(self.0)
        )
    }
}

impl Counts {
    /// Responses (or units) with a Selection value: valid + Abstain.
    pub fn responses(&self) -> u64 {
        self.valid + self.abstain
    }

    /// Abstain share `abstain / (valid + abstain)`, a fraction; `None` when the cell has no response.
    pub fn abstain_share(&self) -> Option<f64> {
        let n = self.responses();
        (n > 0).then(|| self.abstain as f64 / n as f64)
    }
}

/// One cell a score averages, with its Abstain share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellShare {
    /// Condition level id of the cell (the model is the score's).
    pub condition: String,
    /// Its Abstain share (fraction); `None` when the cell has no response.
    pub share: Option<f64>,
}

/// The Abstain shares behind one model's score: the pooled share over every cell it averages and each
/// cell's share. Thresholds are applied when shown ([`ScoreAbstain::flagged`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ScoreAbstain {
    /// Σ Abstain / Σ (valid + Abstain) over the cells below, a fraction; `None` without responses.
    pub share: Option<f64>,
    /// The cells the score averages (conditions with a positive weight, bundle order).
    pub cells: Vec<CellShare>,
}

impl ScoreAbstain {
    /// Builds the record from `(condition id, counts)` of the cells a score averages.
    pub fn of<'a>(cells: impl IntoIterator<Item = (&'a str, Counts)>) -> Self {
        let mut abstain = 0u64;
        let mut responses = 0u64;
        let cells = cells
            .into_iter()
            .map(|(id, k)| {
                abstain += k.abstain;
                responses += k.responses();
                CellShare {
                    condition: id.to_string(),
                    share: k.abstain_share(),
                }
            })
            .collect();
        ScoreAbstain {
            share: (responses > 0).then(|| abstain as f64 / responses as f64),
            cells,
        }
    }

    /// The largest cell share (`None` when no cell has a response).
    pub fn max_share(&self) -> Option<f64> {
        self.cells.iter().filter_map(|c| c.share).reduce(f64::max)
    }

    /// The cells above `threshold`, in bundle order. The score "rests on" them: it is flagged when
    /// this is not empty. A cell whose answers are all Abstain is among them although it leaves the
    /// score's average (Eq. 4 missingness): the score then rests on the other conditions only.
    pub fn flagged(&self, threshold: AbstainThreshold) -> Vec<&CellShare> {
        self.cells
            .iter()
            .filter(|c| threshold.flags(c.share))
            .collect()
    }

    /// Whether any cell is above `threshold`.
    pub fn is_flagged(&self, threshold: AbstainThreshold) -> bool {
        self.cells.iter().any(|c| threshold.flags(c.share))
    }

    /// The flag as text (empty when not flagged): `⚠ Abstain 80.8 % (untargeted), 89.3 % (targeted)`.
    pub fn flag_text(&self, threshold: AbstainThreshold) -> String {
        let cells = self.flagged(threshold);
        if cells.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = cells
            .iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    share_text(c.share.unwrap_or(f64::NAN)),
                    c.condition
                )
            })
            .collect();
        format!("{FLAG} Abstain {}", parts.join(", "))
    }

    /// The flagged cells as `condition=share` joined by `;` (full-precision shares), for CSV.
    pub fn flagged_csv(&self, threshold: AbstainThreshold) -> String {
        self.flagged(threshold)
            .iter()
            .map(|c| {
                format!(
                    "{}={}",
                    c.condition,
                    c.share.map_or_else(String::new, |s| s.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// The text mark of a flagged number (with the share beside it: never colour alone).
pub const FLAG: &str = "⚠";

/// A share as `80.8 %` (one decimal).
pub fn share_text(share: f64) -> String {
    format!("{:.1} %", 100.0 * share)
}

/// The Abstain record of every model's **equal-weight reference score** (Eq. 4): the cells of the
/// `in_reference` conditions (`in_reference[c]`, one per condition of `table`; `ids[c]` their ids).
pub fn reference_abstain(
    table: &BerTable,
    in_reference: &[bool],
    ids: &[&str],
) -> Vec<ScoreAbstain> {
    let weights: Vec<f64> = in_reference
        .iter()
        .map(|&r| if r { 1.0 } else { 0.0 })
        .collect();
    weighted_abstain(table, &weights, ids)
}

/// The Abstain record of every model's score under condition `weights` (one per condition of `table`;
/// a condition enters when its weight is positive).
pub fn weighted_abstain(table: &BerTable, weights: &[f64], ids: &[&str]) -> Vec<ScoreAbstain> {
    (0..table.models)
        .map(|m| {
            ScoreAbstain::of((0..table.conditions).filter_map(|c| {
                let w = weights.get(c).copied().unwrap_or(0.0);
                (w > 0.0).then(|| (ids.get(c).copied().unwrap_or("?"), table.get(m, c)))
            }))
        })
        .collect()
}

/// How many BER cells of `table` are above `threshold` (cells with a response only), and how many
/// cells have a response.
pub fn flagged_cells(table: &BerTable, threshold: AbstainThreshold) -> (usize, usize) {
    let with_response = table.cells.iter().filter(|k| k.responses() > 0).count();
    let flagged = table
        .cells
        .iter()
        .filter(|k| threshold.flags(k.abstain_share()))
        .count();
    (flagged, with_response)
}

/// The caption sentence of a ranking: how many cells and ranks are flagged, e.g. `⚠ = Abstain share
/// above 50 % (seed 000 §B.2: an Abstain is missing, so the rate rests on the other answers): 9 of 24
/// BER cells flagged; 4 of 8 ranks rest on a flagged cell.`
pub fn caption(
    threshold: AbstainThreshold,
    cells: (usize, usize),
    ranks_flagged: usize,
    ranked: usize,
) -> String {
    format!(
        "{FLAG} = {} (the BiAxisBias paper §B.2: an Abstain is missing, so the rate rests on the other answers): {} of {} BER cells flagged; {} of {} ranks rest on a flagged cell.",
        threshold.describe(),
        cells.0,
        cells.1,
        ranks_flagged,
        ranked
    )
}

/// The legend of a flag in a table of scores: `⚠ = Abstain share above 50 % in a cell the score
/// averages (seed 000 §B.2: an Abstain is missing, so the rate rests on the other answers).`
pub fn caption_short(threshold: AbstainThreshold) -> String {
    format!(
        "{FLAG} = {} in a cell the score averages (the BiAxisBias paper §B.2: an Abstain is missing, so the rate rests on the other answers).",
        threshold.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_exactly_at_the_threshold_is_not_flagged() {
        let t = AbstainThreshold::default();
        assert!(!t.flags(Some(0.5)));
        assert!(t.flags(Some(0.500_001)));
        assert!(!t.flags(None));
        assert!(AbstainThreshold::new(1.5).is_err());
        assert!(AbstainThreshold::new(f64::NAN).is_err());
    }
}
