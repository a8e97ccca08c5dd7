//! The data of the Clinical view's figures (seed `001_…` Figs. 2–6) from the clinical metrics
//! ([`ClinicalReport`]): each figure's chart input for the draw functions of [`crate::clinical`], or
//! why it is not drawn ([`NotDrawn`]). Rates stay counts ([`Proportion`]) so that the charts and their
//! tables say each denominator in the seed's unit.

use std::fmt;

use atlas_core::cases::level_label;
use atlas_core::clinical::metrics::{baseline_index, ClinicalReport};
use atlas_core::clinical::{CfvOutcome, Direction};
use atlas_core::Audit;

use super::{
    HeatMap, Proportion, RateBars, StackScale, StackedBars, DIRECTION_COLORS, FAILURE_COLORS,
};

/// Why a clinical figure is not drawn: the bundle records nothing of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotDrawn {
    /// No counterfactual attempts (`clinical.counterfactuals`): no CFV (Fig. 2).
    NoAttempts,
    /// No invalid counterfactual attempt: no failure modes (Fig. 3).
    NoInvalidAttempts,
    /// No baseline variant (`clinical.baseline`): no answer change (Fig. 4).
    NoBaseline,
    /// No direction records (`clinical.directions`): no directions (Fig. 5).
    NoDirections,
    /// No stereotype flag (`clinical.stereotype` with `found: true`): no categories (Fig. 6).
    NoFlags,
}

impl NotDrawn {
    /// The sentence the page shows in place of the figure.
    pub fn reason(self) -> &'static str {
        match self {
            NotDrawn::NoAttempts => "This bundle records no counterfactual attempts (clinical.counterfactuals), so there is no CFV to draw.",
            NotDrawn::NoInvalidAttempts => "No invalid counterfactual attempt in this bundle: there are no failure modes to draw.",
            NotDrawn::NoBaseline => "This bundle names no baseline variant (clinical.baseline), so no answer can be compared with a baseline answer.",
            NotDrawn::NoDirections => "This bundle records no directions of answer changes (clinical.directions).",
            NotDrawn::NoFlags => "The stereotype judge flagged no comparison in this bundle (no clinical.stereotype record with found: true).",
        }
    }
}

impl fmt::Display for NotDrawn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// The five clinical figures of a bundle, each its chart input or why it is not drawn. Rows are the
/// models' labels in bundle order; captions name the bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct ClinicalFigures {
    /// Fig. 2: CFV by model, for all questions and per difficulty tier present (`k` valid of `n`
    /// attempts).
    pub cfv: Result<RateBars, NotDrawn>,
    /// Fig. 3: each model's invalid attempts by failure type (counts, Table 6 order).
    pub failures: Result<StackedBars, NotDrawn>,
    /// Fig. 4: the answer-change rate per model × prefix (`k` changed of `n` comparisons).
    pub heat: Result<HeatMap, NotDrawn>,
    /// Fig. 5: each model's direction-classified answer changes by direction (shares).
    pub directions: Result<StackedBars, NotDrawn>,
    /// Fig. 6: the share of all flags per category; with several models also each model's share of
    /// its own flags.
    pub categories: Result<RateBars, NotDrawn>,
    /// `(model level index, condition level index)` of each heat-map cell, row-major (the order of
    /// the heat map's hover regions).
    pub heat_cells: Vec<(usize, usize)>,
}

fn prop(k: usize, n: usize) -> Option<Proportion> {
    Some(Proportion {
        k: k as u64,
        n: n as u64,
    })
}

/// `Ok(data)` unless `empty`.
fn unless<T>(empty: bool, data: T, why: NotDrawn) -> Result<T, NotDrawn> {
    if empty {
        Err(why)
    } else {
        Ok(data)
    }
}

impl ClinicalFigures {
    /// Builds the figures of `audit` from its report ([`atlas_core::clinical::metrics::analyze`]).
    pub fn new(audit: &Audit, report: &ClinicalReport) -> Self {
        let models: Vec<String> = (0..audit.levels(audit.model_facet).len())
            .map(|m| level_label(audit, audit.model_facet, m))
            .collect();
        let invalid = report.invalid_attempts();
        let (heat, heat_cells) = heat_map(audit, report, &models);
        ClinicalFigures {
            cfv: unless(
                report.cfv.iter().all(|r| r.attempts == 0),
                cfv_bars(audit, report, &models),
                NotDrawn::NoAttempts,
            ),
            failures: unless(
                invalid == 0,
                failure_bars(audit, report, &models),
                NotDrawn::NoInvalidAttempts,
            ),
            heat: unless(report.answer_change.is_empty(), heat, NotDrawn::NoBaseline),
            directions: unless(
                report.directions.is_empty(),
                direction_bars(audit, report, &models),
                NotDrawn::NoDirections,
            ),
            categories: unless(
                report.stereotype.flags == 0,
                category_bars(report),
                NotDrawn::NoFlags,
            ),
            heat_cells,
        }
    }
}

/// Position of model id `id` among the bundle's models.
fn position(audit: &Audit, id: &str) -> Option<usize> {
    audit.model_ids().iter().position(|m| *m == id)
}

/// Fig. 2: all attempts, then each difficulty tier present (`no difficulty` only beside a tier).
fn cfv_bars(audit: &Audit, report: &ClinicalReport, models: &[String]) -> RateBars {
    let tier = |d: &Option<String>| d.clone().unwrap_or_else(|| "no difficulty".into());
    let mut series = vec!["all questions".to_string()];
    for d in &report.cfv_by_difficulty {
        let name = tier(&d.difficulty);
        if !series.contains(&name) {
            series.push(name);
        }
    }
    if series.len() == 2 && series[1] == "no difficulty" {
        series.truncate(1);
    }
    let mut values = vec![vec![None; series.len()]; models.len()];
    for r in &report.cfv {
        if let Some(v) = position(audit, &r.model).and_then(|m| values.get_mut(m)) {
            v[0] = prop(r.valid, r.attempts);
        }
    }
    for d in &report.cfv_by_difficulty {
        let name = tier(&d.difficulty);
        let s = series.iter().position(|x| *x == name);
        if let (Some(v), Some(s)) = (position(audit, &d.model).and_then(|m| values.get_mut(m)), s) {
            v[s] = prop(d.valid, d.attempts);
        }
    }
    RateBars {
        rows: models.to_vec(),
        series,
        values,
        axis_label: "CFV (% of counterfactual attempts)".into(),
        caption: format!("CFV by model and difficulty · {}", report.bundle),
    }
}

/// Fig. 3: counts of each invalid outcome per model.
fn failure_bars(audit: &Audit, report: &ClinicalReport, models: &[String]) -> StackedBars {
    let invalid: Vec<CfvOutcome> = CfvOutcome::ALL
        .into_iter()
        .filter(|o| *o != CfvOutcome::Valid)
        .collect();
    let mut counts = vec![vec![0u64; invalid.len()]; models.len()];
    for r in &report.failure_modes {
        let m = r.model.as_deref().and_then(|id| position(audit, id));
        let k = invalid.iter().position(|o| *o == r.outcome);
        if let (Some(row), Some(k)) = (m.and_then(|m| counts.get_mut(m)), k) {
            row[k] = r.count as u64;
        }
    }
    StackedBars {
        rows: models.to_vec(),
        classes: invalid.iter().map(|o| o.as_str().to_string()).collect(),
        colors: FAILURE_COLORS.to_vec(),
        counts,
        scale: StackScale::Count,
        axis_label: "invalid counterfactual attempts".into(),
        caption: format!("Failure modes by model · {}", report.bundle),
    }
}

/// Fig. 4: model × prefix (every variant but the baseline), and the level indices of each cell.
fn heat_map(
    audit: &Audit,
    report: &ClinicalReport,
    models: &[String],
) -> (HeatMap, Vec<(usize, usize)>) {
    let cf = audit.condition_facet;
    let base = baseline_index(audit);
    let prefixes: Vec<usize> = cf.map_or_else(Vec::new, |f| {
        (0..audit.levels(f).len())
            .filter(|c| Some(*c) != base)
            .collect()
    });
    let prefix_ids: Vec<String> = prefixes
        .iter()
        .map(|&c| {
            cf.and_then(|f| audit.levels(f).get(c))
                .map_or_else(String::new, |l| l.id.clone())
        })
        .collect();
    let ids = audit.model_ids();
    let cells = ids
        .iter()
        .map(|id| {
            prefix_ids
                .iter()
                .map(|p| {
                    report
                        .answer_change
                        .iter()
                        .find(|r| r.model == *id && &r.condition == p)
                        .and_then(|r| prop(r.changed, r.comparisons))
                })
                .collect()
        })
        .collect();
    let heat_cells = (0..models.len())
        .flat_map(|m| prefixes.iter().map(move |&c| (m, c)))
        .collect();
    let heat = HeatMap {
        rows: models.to_vec(),
        columns: prefix_ids,
        cells,
        measure: "answer change".into(),
        unit: "comparisons".into(),
        caption: format!("Answer-change rate by model and prefix · {}", report.bundle),
    };
    (heat, heat_cells)
}

/// Fig. 5: direction records per model and direction, drawn as shares.
fn direction_bars(audit: &Audit, report: &ClinicalReport, models: &[String]) -> StackedBars {
    let mut counts = vec![vec![0u64; Direction::ALL.len()]; models.len()];
    for r in &report.directions {
        let k = Direction::ALL.iter().position(|d| *d == r.direction);
        if let (Some(row), Some(k)) = (position(audit, &r.model).and_then(|m| counts.get_mut(m)), k)
        {
            row[k] = r.count as u64;
        }
    }
    StackedBars {
        rows: models.to_vec(),
        classes: Direction::ALL
            .iter()
            .map(|d| d.as_str().to_string())
            .collect(),
        colors: DIRECTION_COLORS.to_vec(),
        counts,
        scale: StackScale::Share,
        axis_label: "share of the model's direction-classified answer changes (%)".into(),
        caption: format!("Direction of answer changes · {}", report.bundle),
    }
}

/// Fig. 6: share of all flags per category, pooled as in the seed; with several models also each
/// model's share of its own flags.
fn category_bars(report: &ClinicalReport) -> RateBars {
    let st = &report.stereotype;
    let split = st.per_model.len() > 1;
    RateBars {
        rows: st
            .by_category
            .iter()
            .map(|c| c.category.clone().unwrap_or_else(|| "(no category)".into()))
            .collect(),
        series: std::iter::once(if split { "all models" } else { "flags" }.to_string())
            .chain(
                st.per_model
                    .iter()
                    .filter(|_| split)
                    .map(|m| m.model.clone()),
            )
            .collect(),
        values: st
            .by_category
            .iter()
            .map(|c| {
                std::iter::once(prop(c.count, st.flags))
                    .chain(
                        st.per_model
                            .iter()
                            .zip(&c.per_model)
                            .filter(|_| split)
                            .map(|(m, &n)| prop(n, m.flags)),
                    )
                    .collect()
            })
            .collect(),
        axis_label: if split {
            "share of the stereotype flags: of all models, and of each model's own (%)".into()
        } else {
            "share of all stereotype flags (%)".into()
        },
        caption: format!("Stereotype evidence categories · {}", report.bundle),
    }
}
