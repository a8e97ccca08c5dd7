//! What a bundle's design says about its cells ([`CaseIndex`]), a set of cells ([`CellSet`]) and the
//! judges' five-class majority of one cell.

use crate::bundle::{Axis, RationaleLabel};
use crate::rq3::{cell_readings, CellReadings, Rq3Settings, SelectionReadout};
use crate::Audit;

/// A set of cells of one bundle as a bitset (e.g. the matches of a text search).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CellSet {
    words: Vec<u64>,
    len: usize,
}

impl CellSet {
    /// An empty set for cells `0..cells`.
    pub fn new(cells: usize) -> Self {
        CellSet {
            words: vec![0; cells.div_ceil(64)],
            len: 0,
        }
    }

    /// Adds `cell` (ignored when out of range).
    pub fn insert(&mut self, cell: usize) {
        if let Some(w) = self.words.get_mut(cell / 64) {
            let bit = 1u64 << (cell % 64);
            if *w & bit == 0 {
                *w |= bit;
                self.len += 1;
            }
        }
    }

    /// Whether `cell` is in the set.
    pub fn contains(&self, cell: usize) -> bool {
        self.words
            .get(cell / 64)
            .is_some_and(|w| w & (1u64 << (cell % 64)) != 0)
    }

    /// Number of cells in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What the bundle's design says about its cells, computed once per bundle.
#[derive(Debug)]
pub struct CaseIndex {
    /// `A` and `B` of every cell ([`cell_readings`] with the default panel, [`Rq3Settings::default`]).
    pub readings: CellReadings,
    /// Per facet (in `file.facets` order): its axis.
    pub(super) facet_axes: Vec<Axis>,
    /// Distinct statement categories, in first-seen order.
    pub categories: Vec<String>,
    /// Per statement level: index into `categories`.
    statement_category: Vec<Option<usize>>,
    /// The cells that are responses, ascending.
    pub responses: Vec<u32>,
    /// Why `B` is unavailable, when the default panel cannot be read.
    pub readings_error: Option<String>,
}

impl CaseIndex {
    /// Reads `audit` once: readings, axes, categories and the list of responses. A bundle whose default
    /// panel cannot be read (e.g. no judge columns) gets empty readings and the reason in
    /// [`CaseIndex::readings_error`]; its responses are then the cells with a Selection value.
    pub fn new(audit: &Audit) -> Self {
        let (readings, readings_error) = match cell_readings(audit, &Rq3Settings::default()) {
            Ok(r) => (r, None),
            Err(e) => (
                CellReadings {
                    selection: Vec::new(),
                    rationale: Vec::new(),
                    judges: Vec::new(),
                },
                Some(e.to_string()),
            ),
        };
        let mut facet_axes = vec![
            Axis {
                facet: 0,
                len: 1,
                stride: 1
            };
            audit.file.facets.len()
        ];
        for a in &audit.axes {
            if let Some(slot) = facet_axes.get_mut(a.facet) {
                *slot = *a;
            }
        }
        let mut categories: Vec<String> = Vec::new();
        let statement_category = audit
            .statements
            .iter()
            .map(|s| {
                let c = s.category.as_ref()?;
                Some(match categories.iter().position(|x| x == c) {
                    Some(i) => i,
                    None => {
                        categories.push(c.clone());
                        categories.len() - 1
                    }
                })
            })
            .collect();
        let responses = if readings.selection.is_empty() {
            (0..audit.cells)
                .filter(|&c| audit.selection_value(c).is_some())
                .map(|c| c as u32)
                .collect()
        } else {
            readings
                .selection
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_some())
                .map(|(c, _)| c as u32)
                .collect()
        };
        CaseIndex {
            readings,
            facet_axes,
            categories,
            statement_category,
            responses,
            readings_error,
        }
    }

    /// Level index of facet `facet` (index into `file.facets`) at cell `cell` (0 for a facet the
    /// bundle's axes do not name).
    pub fn level(&self, facet: usize, cell: usize) -> usize {
        self.facet_axes
            .get(facet)
            .map_or(0, |a| (cell / a.stride.max(1)) % a.len.max(1))
    }

    /// The statement category of cell `cell` (index into [`CaseIndex::categories`]); `None` for a
    /// statement without a category.
    pub fn category(&self, audit: &Audit, cell: usize) -> Option<usize> {
        let s = self.level(audit.statement_facet, cell);
        self.statement_category.get(s).copied().flatten()
    }

    /// The Selection readout `A` of `cell` (`None` for a cell that is not a response).
    pub fn selection(&self, cell: usize) -> Option<SelectionReadout> {
        self.readings.selection.get(cell).copied().flatten()
    }

    /// The cell with the levels of `cell` except the facets given in `replace` (`(facet, level)`);
    /// `None` when a facet or level is out of range.
    pub fn with_levels(
        &self,
        audit: &Audit,
        cell: usize,
        replace: &[(usize, usize)],
    ) -> Option<usize> {
        let mut levels: Vec<usize> = (0..audit.file.facets.len())
            .map(|f| self.level(f, cell))
            .collect();
        for &(f, l) in replace {
            *levels.get_mut(f)? = l;
        }
        audit.cell_index(&levels)
    }
}

/// The five-class label that more than half of the judge columns give `cell` (a column without a label
/// counts in the denominator); `None` without one. Seed `000_…` Table 22 shows this "three-judge
/// five-class Rationale majority".
pub fn five_class_majority(audit: &Audit, cell: usize) -> Option<RationaleLabel> {
    let labels: Vec<Option<RationaleLabel>> = audit
        .judges
        .iter()
        .map(|col| col.get(cell).copied().flatten())
        .collect();
    let n = labels.len();
    labels
        .iter()
        .flatten()
        .find(|l| 2 * labels.iter().filter(|x| **x == Some(**l)).count() > n)
        .copied()
}
