//! The seed's deterministic example rule (seed `000_…` §F.1, Tables 20–21): the shortest response in
//! each unanimous disagreement direction.

use std::collections::HashMap;

use super::index::CaseIndex;
use super::text::{text_at, ShardState, TextAt};
use crate::rq3::{CodingRule, Direction};
use crate::Audit;

/// Outcome of [`shortest_case`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shortest {
    /// The case (a cell index).
    Found(usize),
    /// No listed response is a unanimous disagreement in that direction with a stored text.
    NoCandidate,
    /// These shards (indices into `texts.rationale.shards`, ascending) must be loaded first; empty when
    /// the candidates' shards are all being fetched already.
    NeedShards(Vec<usize>),
}

/// The seed's deterministic example rule (§F.1, Tables 20–21): among `rows`, the responses whose
/// judges **unanimously** disagree with the Selection in `direction` — every judge labels the Rationale
/// and all binary readings agree ([`CodingRule::BinaryUnanimity`]), and `B ≠ A` that way — the one with
/// the shortest Rationale text in characters (Unicode scalar values); ties go to the lowest cell index.
/// Responses without a stored text are not candidates; while a candidate's shard is not loaded (or is
/// loading) the answer is [`Shortest::NeedShards`].
pub fn shortest_case(
    audit: &Audit,
    ix: &CaseIndex,
    rows: &[u32],
    direction: Direction,
    shards: &HashMap<usize, ShardState>,
) -> Shortest {
    let mut missing: Vec<usize> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    for &cell32 in rows {
        let cell = cell32 as usize;
        if ix.readings.direction(CodingRule::BinaryUnanimity, cell) != Some(direction) {
            continue;
        }
        match text_at(audit, shards, cell) {
            TextAt::Text(t) => {
                let key = (t.chars().count(), cell);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
            TextAt::NotLoaded(k) => {
                if !missing.contains(&k) {
                    missing.push(k);
                }
            }
            TextAt::Loading => {}
            TextAt::Failed(_) | TextAt::Absent => {}
        }
    }
    let pending = rows.iter().any(|&c| {
        matches!(text_at(audit, shards, c as usize), TextAt::Loading)
            && ix
                .readings
                .direction(CodingRule::BinaryUnanimity, c as usize)
                == Some(direction)
    });
    if !missing.is_empty() || pending {
        missing.sort_unstable();
        return Shortest::NeedShards(missing);
    }
    best.map_or(Shortest::NoCandidate, |(_, cell)| Shortest::Found(cell))
}
