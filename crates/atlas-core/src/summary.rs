//! The summary of one bundle under one repeat policy: Selection BER per model × condition with its
//! valid and Abstain counts (seed `000_…` §3.3), the condition-balanced reference score per model with
//! equal condition weights (§3.5, Eq. 4), its average rank in the bundle's score direction
//! ([`crate::direction`]), and the high-Abstain flags of the cells and of the scores that average them
//! (§B.2: an Abstain is missing; [`crate::abstain`]).
//!
//! It is the table `atlas stats` prints and the app's summary table and BER chart show: both read
//! [`summarize`], so they show the same numbers and the same flags.

use crate::abstain::{caption, flagged_cells, reference_abstain, AbstainThreshold, ScoreAbstain};
use crate::bundle::Audit;
use crate::direction::ScoreDirection;
use crate::stats::{ber_by_model_condition, reference_scores, unit_counts, BerTable, RepeatPolicy};

/// The statistics of one bundle under one repeat policy (see the module docs). Vectors are indexed by
/// model in bundle order (`Audit::model_ids`).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The repeat policy every number was computed under.
    pub policy: RepeatPolicy,
    /// Selection BER per model × condition with its counts (fractions; §3.3).
    pub table: BerTable,
    /// Eq. 4 reference score per model with equal condition weights (fraction); `None` for a model
    /// without a valid Selection in any reference condition.
    pub reference: Vec<Option<f64>>,
    /// Average ranks of [`Summary::reference`] in [`Summary::direction`] (1 = best, ties share the
    /// average rank); `None` where the score is `None`.
    pub ranks: Vec<Option<f64>>,
    /// The bundle's score direction (declared, or the default lower is better).
    pub direction: ScoreDirection,
    /// Per model, the Abstain shares of the reference cells its score averages.
    pub abstain: Vec<ScoreAbstain>,
    /// The Abstain share above which a cell, and a score or rank averaging it, is flagged.
    pub threshold: AbstainThreshold,
}

/// Computes the [`Summary`] of `audit` under `policy`: BER per model × condition
/// ([`crate::stats::ber_by_model_condition`]), Eq. 4 reference scores with equal condition weights
/// ([`crate::stats::reference_scores`] with `None`), average ranks in the bundle's direction, and the
/// Abstain shares behind each score ([`crate::abstain::reference_abstain`]), flagged above `threshold`.
///
/// Cost: one pass over the cells plus `O(models × conditions × templates × statements)`.
pub fn summarize(audit: &Audit, policy: RepeatPolicy, threshold: AbstainThreshold) -> Summary {
    let units = unit_counts(audit, policy);
    let table = ber_by_model_condition(&units);
    let reference = reference_scores(audit, &units, None);
    let direction = audit.direction;
    let ranks = direction.direction.ranks(&reference);
    let in_reference: Vec<bool> = audit.conditions.iter().map(|c| c.in_reference).collect();
    let abstain = reference_abstain(&table, &in_reference, &audit.condition_ids());
    Summary {
        policy,
        table,
        reference,
        ranks,
        direction,
        abstain,
        threshold,
    }
}

impl Summary {
    /// Whether model `m` has a rank that rests on a reference cell above the Abstain threshold
    /// (`false` for a model without a rank, or an index past the last model).
    pub fn rank_flagged(&self, m: usize) -> bool {
        self.ranks.get(m).copied().flatten().is_some()
            && self
                .abstain
                .get(m)
                .is_some_and(|a| a.is_flagged(self.threshold))
    }

    /// `(flagged, with a response)`: how many BER cells are above the threshold, and how many cells
    /// have a response ([`crate::abstain::flagged_cells`]).
    pub fn flagged_cells(&self) -> (usize, usize) {
        flagged_cells(&self.table, self.threshold)
    }

    /// How many models have a rank.
    pub fn ranked(&self) -> usize {
        self.ranks.iter().filter(|r| r.is_some()).count()
    }

    /// How many ranks rest on a flagged cell ([`Summary::rank_flagged`]).
    pub fn flagged_ranks(&self) -> usize {
        (0..self.ranks.len())
            .filter(|&m| self.rank_flagged(m))
            .count()
    }

    /// The ranking caption's count of flags ([`crate::abstain::caption`]), e.g. `⚠ = Abstain share
    /// above 50 % (…): 1 of 6 BER cells flagged; 1 of 3 ranks rest on a flagged cell.`
    pub fn flag_caption(&self) -> String {
        caption(
            self.threshold,
            self.flagged_cells(),
            self.flagged_ranks(),
            self.ranked(),
        )
    }
}
