//! The case list's filters ([`FilterSet`]) and the responses that pass them ([`matching_rows`]).

use super::index::{CaseIndex, CellSet};
use crate::bundle::{Obtained, RationaleLabel};
use crate::rq3::{CodingRule, SelectionReadout};
use crate::Audit;

/// A filter on one judge's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelFilter {
    /// The judge gave this five-class label.
    Label(RationaleLabel),
    /// The judge gave no label.
    NoLabel,
}

/// A filter on the Rationale reading `B` under the list's coding rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadingFilter {
    /// `B = 1`: bias evidence.
    Bias,
    /// `B = 0`: no bias evidence.
    NoBias,
    /// No reading under the rule (Rationale Abstain).
    Abstain,
}

/// A filter on the direction of divergence between `A` and `B` under the list's coding rule (seed
/// `000_…` §F.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectionFilter {
    /// `A = 1, B = 0`.
    SelectionOnly,
    /// `A = 0, B = 1`.
    RationaleOnly,
    /// A pair with `A = B`.
    Agree,
    /// Not a pair (Selection or Rationale missing).
    NoPair,
}

impl DirectionFilter {
    /// Key used in the page (`selection_only`, `rationale_only`, `agree`, `no_pair`).
    pub fn key(self) -> &'static str {
        match self {
            DirectionFilter::SelectionOnly => "selection_only",
            DirectionFilter::RationaleOnly => "rationale_only",
            DirectionFilter::Agree => "agree",
            DirectionFilter::NoPair => "no_pair",
        }
    }

    /// Parses [`DirectionFilter::key`]; `None` for any other text.
    pub fn from_key(key: &str) -> Option<Self> {
        [
            DirectionFilter::SelectionOnly,
            DirectionFilter::RationaleOnly,
            DirectionFilter::Agree,
            DirectionFilter::NoPair,
        ]
        .into_iter()
        .find(|d| d.key() == key)
    }
}

/// Every filter of the case list; `None` = any.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FilterSet {
    /// Per facet (`file.facets` order): the level kept.
    pub levels: Vec<Option<usize>>,
    /// Statement category (index into [`CaseIndex::categories`]).
    pub category: Option<usize>,
    /// Selection dictionary value (index into `responses.selection.values`).
    pub selection: Option<usize>,
    /// How the Selection was obtained.
    pub obtained: Option<Obtained>,
    /// Per judge column: its label.
    pub judges: Vec<Option<LabelFilter>>,
    /// The Rationale reading `B` under the rule.
    pub reading: Option<ReadingFilter>,
    /// The direction of divergence under the rule.
    pub direction: Option<DirectionFilter>,
}

/// The responses of `ix` (ascending cells) that pass every filter of `f` under coding rule `rule`, and
/// are in `search` when given. A facet level or judge filter beyond the bundle's facets or judges is
/// ignored; `B` and the direction are read from [`CaseIndex::readings`] under `rule`.
pub fn matching_rows(
    audit: &Audit,
    ix: &CaseIndex,
    f: &FilterSet,
    rule: CodingRule,
    search: Option<&CellSet>,
) -> Vec<u32> {
    let facets: Vec<(usize, usize, usize)> = f
        .levels
        .iter()
        .enumerate()
        .filter_map(|(facet, l)| {
            let a = ix.facet_axes.get(facet)?;
            l.map(|l| (a.stride.max(1), a.len.max(1), l))
        })
        .collect();
    let values = &audit.file.responses.selection.values;
    let rule_index = CodingRule::ALL.iter().position(|&r| r == rule).unwrap_or(0);
    let rationale = ix.readings.rationale.get(rule_index);
    let judges: Vec<(usize, LabelFilter)> = f
        .judges
        .iter()
        .enumerate()
        .filter_map(|(j, l)| l.map(|l| (j, l)))
        .collect();
    let needs_b = f.reading.is_some() || f.direction.is_some();
    ix.responses
        .iter()
        .copied()
        .filter(|&cell32| {
            let cell = cell32 as usize;
            if !facets
                .iter()
                .all(|&(stride, len, l)| (cell / stride) % len == l)
            {
                return false;
            }
            if let Some(c) = f.category {
                if ix.category(audit, cell) != Some(c) {
                    return false;
                }
            }
            let code = audit.selection.get(cell).copied().unwrap_or(u8::MAX);
            if let Some(v) = f.selection {
                if usize::from(code) != v {
                    return false;
                }
            }
            if let Some(o) = f.obtained {
                if values.get(usize::from(code)).map(|v| v.obtained) != Some(o) {
                    return false;
                }
            }
            for &(j, want) in &judges {
                let label = audit
                    .judges
                    .get(j)
                    .and_then(|col| col.get(cell))
                    .copied()
                    .flatten();
                let ok = match want {
                    LabelFilter::Label(l) => label == Some(l),
                    LabelFilter::NoLabel => label.is_none(),
                };
                if !ok {
                    return false;
                }
            }
            if let Some(s) = search {
                if !s.contains(cell) {
                    return false;
                }
            }
            if needs_b {
                let b = rationale.and_then(|r| r.get(cell)).copied().flatten();
                if let Some(want) = f.reading {
                    let ok = match want {
                        ReadingFilter::Bias => b == Some(true),
                        ReadingFilter::NoBias => b == Some(false),
                        ReadingFilter::Abstain => b.is_none(),
                    };
                    if !ok {
                        return false;
                    }
                }
                if let Some(want) = f.direction {
                    let a = match ix.selection(cell) {
                        Some(SelectionReadout::Valid(a)) => Some(a),
                        _ => None,
                    };
                    let ok = match (want, a, b) {
                        (DirectionFilter::SelectionOnly, Some(true), Some(false)) => true,
                        (DirectionFilter::RationaleOnly, Some(false), Some(true)) => true,
                        (DirectionFilter::Agree, Some(a), Some(b)) => a == b,
                        (DirectionFilter::NoPair, a, b) => a.is_none() || b.is_none(),
                        _ => false,
                    };
                    if !ok {
                        return false;
                    }
                }
            }
            true
        })
        .collect()
}
