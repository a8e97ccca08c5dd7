//! Descriptive variance components (η²) of Selection bias evidence over a full factorial grid of facets
//! (seed `000_…` §5.2 and C.3, Table 12).
//!
//! Rows are valid responses (`A ∈ {0, 1}`; Abstain and no-response cells are left out), every replicate
//! counted (as the seed's "valid-row" analysis). For a factor `F` with levels `l`:
//! `SS_F = Σ_l n_l (ȳ_l − ȳ)²`; for a pair `F × G` with cells `(l, m)`:
//! `SS_FG = Σ_{l,m} n_lm (ȳ_lm − ȳ)² − SS_F − SS_G`; `η² = SS / SS_total`, `SS_total = Σ (y − ȳ)²`.
//! With unequal cell counts these are descriptive effect sizes, not an ANOVA decomposition (the seed:
//! "descriptive effect sizes for purposefully selected levels, not row-independent ANOVA tests").
//!
//! The **complete-grid** variant keeps only the units — combinations of the unit facets (e.g. model ×
//! statement) — that have at least one valid response in every cell of the grid (Table 12's "balanced
//! sensitivity retains … model–statement units with all 24 cells").

use serde::Serialize;

use crate::bundle::{Audit, NO_RESPONSE_CODE};

/// One effect's η².
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Component {
    /// Facet ids of the effect: one (main effect) or two (two-way interaction).
    pub effect: Vec<String>,
    /// η² on all valid rows, a fraction of `SS_total` (`None` without valid rows or variance).
    pub eta_squared: Option<f64>,
    /// η² on the complete-grid subset (`None` when no unit is complete or the subset has no
    /// variance).
    pub eta_squared_complete: Option<f64>,
}

/// η² of every main effect and two-way interaction of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarianceComponents {
    /// Grid facets (the factors of the effects), by id.
    pub factors: Vec<String>,
    /// Unit facets (whose combinations are the units of the complete-grid variant), by id.
    pub units_by: Vec<String>,
    /// Valid rows used.
    pub rows: u64,
    /// Valid rows of the complete units.
    pub rows_complete: u64,
    /// Units with at least one valid response in every cell of the grid.
    pub units_complete: usize,
    /// Units with at least one valid response.
    pub units_seen: usize,
    /// Main effects first (in `factors` order), then pairs (lexicographic), each sorted as given.
    pub components: Vec<Component>,
}

/// Why the grid is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarianceError {
    /// A facet id (grid or unit facet) that the bundle does not declare.
    #[error("facet {0:?} is not declared in the bundle")]
    UnknownFacet(String),
    /// A facet id given twice, or as both a grid factor and a unit facet.
    #[error("facet {0:?} is both a grid factor and a unit facet, or listed twice")]
    RepeatedFacet(String),
    /// No grid factor given.
    #[error("at least one grid factor is needed")]
    NoFactor,
    /// The grid (product of the factors' level counts) has more than 1,000,000 cells.
    #[error("the grid has {0} cells; at most 1,000,000 are supported")]
    GridTooLarge(usize),
}

/// Sums of one group of rows.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    n: f64,
    s: f64,
}

/// η² of each main effect and two-way interaction of the `factors` grid (facet ids), with the
/// complete-grid subset defined over `units_by` (facet ids). See the module docs for the formulas.
///
/// # Errors
/// [`VarianceError`] for unknown or repeated facets, no factor, or a grid of more than 10⁶ cells.
pub fn variance_components(
    audit: &Audit,
    factors: &[&str],
    units_by: &[&str],
) -> Result<VarianceComponents, VarianceError> {
    if factors.is_empty() {
        return Err(VarianceError::NoFactor);
    }
    let facet_of = |id: &str| {
        audit
            .file
            .facets
            .iter()
            .position(|f| f.id == id)
            .ok_or_else(|| VarianceError::UnknownFacet(id.to_string()))
    };
    let factor_facets: Vec<usize> = factors
        .iter()
        .map(|id| facet_of(id))
        .collect::<Result<_, _>>()?;
    let unit_facets: Vec<usize> = units_by
        .iter()
        .map(|id| facet_of(id))
        .collect::<Result<_, _>>()?;
    let mut seen = std::collections::HashSet::new();
    for (&f, id) in factor_facets
        .iter()
        .chain(&unit_facets)
        .zip(factors.iter().chain(units_by))
    {
        if !seen.insert(f) {
            return Err(VarianceError::RepeatedFacet((*id).to_string()));
        }
    }
    let sizes: Vec<usize> = factor_facets
        .iter()
        .map(|&f| audit.levels(f).len())
        .collect();
    let grid: usize = sizes.iter().product();
    if grid > 1_000_000 {
        return Err(VarianceError::GridTooLarge(grid));
    }
    let unit_sizes: Vec<usize> = unit_facets.iter().map(|&f| audit.levels(f).len()).collect();
    let n_units: usize = unit_sizes.iter().product();
    let axis_pos = |f: usize| audit.axes.iter().position(|a| a.facet == f);
    let factor_axes: Vec<Option<usize>> = factor_facets.iter().map(|&f| axis_pos(f)).collect();
    let unit_axes: Vec<Option<usize>> = unit_facets.iter().map(|&f| axis_pos(f)).collect();
    let values = &audit.file.responses.selection.values;

    // Per (unit, grid cell) sums of valid rows.
    let mut by_unit_cell = vec![Sum::default(); n_units * grid];
    let mut coords = vec![0usize; audit.axes.len()];
    for &code in &audit.selection {
        if code != NO_RESPONSE_CODE {
            if let Some(e) = values.get(code as usize).and_then(|v| v.evidence) {
                let mixed = |axes: &[Option<usize>], sizes: &[usize]| {
                    axes.iter()
                        .zip(sizes)
                        .fold(0usize, |acc, (a, &n)| acc * n + a.map_or(0, |a| coords[a]))
                };
                let cell = mixed(&factor_axes, &sizes);
                let unit = mixed(&unit_axes, &unit_sizes);
                let sum = &mut by_unit_cell[unit * grid + cell];
                sum.n += 1.0;
                sum.s += f64::from(e);
            }
        }
        for k in (0..coords.len()).rev() {
            coords[k] += 1;
            if coords[k] < audit.axes[k].len {
                break;
            }
            coords[k] = 0;
        }
    }
    let complete: Vec<bool> = (0..n_units)
        .map(|u| {
            by_unit_cell[u * grid..(u + 1) * grid]
                .iter()
                .all(|s| s.n > 0.0)
        })
        .collect();
    let units_seen = (0..n_units)
        .filter(|&u| {
            by_unit_cell[u * grid..(u + 1) * grid]
                .iter()
                .any(|s| s.n > 0.0)
        })
        .count();
    let cells_all = fold_cells(&by_unit_cell, grid, |_| true);
    let cells_complete = fold_cells(&by_unit_cell, grid, |u| complete[u]);

    let mut effects: Vec<Vec<usize>> = (0..factors.len()).map(|i| vec![i]).collect();
    for i in 0..factors.len() {
        for j in i + 1..factors.len() {
            effects.push(vec![i, j]);
        }
    }
    let eta_all = eta_squared(&cells_all, &sizes, &effects);
    let eta_complete = eta_squared(&cells_complete, &sizes, &effects);
    let components = effects
        .iter()
        .enumerate()
        .map(|(k, e)| Component {
            effect: e.iter().map(|&i| factors[i].to_string()).collect(),
            eta_squared: eta_all.as_ref().map(|v| v[k]),
            eta_squared_complete: eta_complete.as_ref().map(|v| v[k]),
        })
        .collect();
    Ok(VarianceComponents {
        factors: factors.iter().map(|s| s.to_string()).collect(),
        units_by: units_by.iter().map(|s| s.to_string()).collect(),
        rows: cells_all.iter().map(|s| s.n).sum::<f64>() as u64,
        rows_complete: cells_complete.iter().map(|s| s.n).sum::<f64>() as u64,
        units_complete: complete.iter().filter(|&&c| c).count(),
        units_seen,
        components,
    })
}

fn fold_cells(by_unit_cell: &[Sum], grid: usize, keep: impl Fn(usize) -> bool) -> Vec<Sum> {
    let mut cells = vec![Sum::default(); grid];
    for (i, s) in by_unit_cell.iter().enumerate() {
        if keep(i / grid) {
            cells[i % grid].n += s.n;
            cells[i % grid].s += s.s;
        }
    }
    cells
}

/// η² of each effect from per-grid-cell sums of binary rows (`Σy² = Σy` since y ∈ {0, 1}).
fn eta_squared(cells: &[Sum], sizes: &[usize], effects: &[Vec<usize>]) -> Option<Vec<f64>> {
    let n: f64 = cells.iter().map(|c| c.n).sum();
    let s: f64 = cells.iter().map(|c| c.s).sum();
    if n == 0.0 {
        return None;
    }
    let mean = s / n;
    let ss_total = s - n * mean * mean;
    if ss_total <= 0.0 {
        return None;
    }
    // Level index of factor i in grid cell c (mixed radix, first factor slowest).
    let level = |c: usize, i: usize| (c / sizes[i + 1..].iter().product::<usize>()) % sizes[i];
    let between = |factors: &[usize]| -> f64 {
        let radix: Vec<usize> = factors.iter().map(|&i| sizes[i]).collect();
        let mut groups = vec![Sum::default(); radix.iter().product()];
        for (c, cell) in cells.iter().enumerate() {
            let g = factors
                .iter()
                .fold(0, |acc, &i| acc * sizes[i] + level(c, i));
            groups[g].n += cell.n;
            groups[g].s += cell.s;
        }
        groups
            .iter()
            .filter(|g| g.n > 0.0)
            .map(|g| g.n * (g.s / g.n - mean).powi(2))
            .sum()
    };
    let main: Vec<f64> = (0..sizes.len()).map(|i| between(&[i])).collect();
    Some(
        effects
            .iter()
            .map(|e| match e.as_slice() {
                [i] => main[*i] / ss_total,
                [i, j] => (between(&[*i, *j]) - main[*i] - main[*j]) / ss_total,
                _ => f64::NAN,
            })
            .collect(),
    )
}
