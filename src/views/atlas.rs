//! The evidence atlas (seed `000_…` Figure 4 and Table 14) as live views on the loaded bundle: each
//! panel is one `atlas_charts::atlas` draw function on a `<canvas>` (plotters-canvas), redrawn when its
//! data change, with the value under the pointer (or under the keyboard focus: arrow keys step through
//! the marks) in a tooltip (`role=status`), a table alternative, and PNG / SVG / CSV exports.
//!
//! | panel | fed by |
//! | --- | --- |
//! | (a) score per wording, (b) score ranges | the last RQ1 run (Analyses, right after the RQ1 results) |
//! | (c) rank paths across conditions | the re-weighting basis (condition means), Eq. 4 and the chosen weights |
//! | (d) pair flips | the pairs the chosen weights invert against equal weights |
//! | (c) / (d) across task paradigms | the last "Does the task format reorder models?" run (a task-paradigm bundle's Analyses, right after its results) |
//! | (e) / (f) per-draw error and inversions per design, coverage curve | the last RQ2 run (right after the RQ2 results) |
//! | (g) Selection vs Rationale BER, (h) Rationale composition | the bundle's first judge column on the RQ3 responses and pairs (`atlas_core::rq3::judge_by_model`), when it has one |

use std::sync::Arc;

use atlas_charts::atlas::{CoverageCurve, DesignDistributions, DEFAULT_STRIP_POINTS};
use atlas_charts::panels;
use atlas_core::across::AcrossOptions;
use atlas_core::rq1::WordingRankStability;
use atlas_core::rq3::judge_by_model;
use atlas_worker::{Charts, Request};
use leptos::prelude::*;

use crate::state::reweighting::{ExplorerModel, Finished};
use crate::ui::chart::{ChartPanel, ChartSpec, Spec};

/// The RQ1 run's rank stability for panels (a) and (b), if it carried chart data.
fn rq1_stability(f: &Finished) -> Option<WordingRankStability> {
    match (&f.outcome.charts, f.request) {
        (Some(Charts::Rq1(c)), Request::Rq1(s)) => Some(c.stability(s.policy)),
        _ => None,
    }
}

/// Which panels of the atlas a section shows: each app-shell view holds the panels that draw its
/// results (all panels' data are memos, computed only when a shown panel reads them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtlasGroup {
    /// (c), (d): follow the weights (`scores` view; section `#atlas`, the id older links name).
    Weights,
    /// (a), (b): the last RQ1 run, drawn right after the RQ1 results in the Analyses view
    /// (`#atlas-analyses`, the id older links name).
    Rq1,
    /// (e), (f) and the coverage curve: the last RQ2 run, right after the RQ2 results
    /// (`#atlas-rq2`).
    Rq2,
    /// (g), (h): Selection vs Rationale (`rationale` view).
    Rationale,
    /// (c), (d) across task paradigms: the last across-paradigm run, right after its results in the
    /// Analyses view (`#atlas-across`).
    Across,
}

/// One atlas section holding the panels of `group`: a `<section>` of its own for the weights and the
/// Rationale panels, a block inside the analysis panel (after its results) for RQ1 and RQ2.
#[component]
pub fn EvidenceAtlas(group: AtlasGroup) -> impl IntoView {
    let model = expect_context::<ExplorerModel>();
    let loaded = model.loaded.get_value();
    let bundle = loaded.audit.metadata().id.clone();
    let ids: Vec<String> = loaded
        .audit
        .model_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    const NEEDS_RQ1: &str = "Run RQ1 above to draw this panel (it shows the last RQ1 run).";
    const NEEDS_RQ2: &str = "Run RQ2 above to draw this panel (it shows the last RQ2 run).";

    let ids_a = ids.clone();
    let rq1_caption = move |f: &Finished| match f.request {
        Request::Rq1(s) => format!("RQ1, random seed {}, {}", s.seed, s.policy.key()),
        _ => String::new(),
    };
    let panel_a: Spec = Memo::new(move |_| {
        let f = model.results.rq1.get().ok_or(NEEDS_RQ1.to_string())?;
        let r = rq1_stability(&f).ok_or("The RQ1 run carried no chart data.")?;
        let shown = model.shown_models.get();
        Ok(panels::wording_scores(
            &ids_a,
            &r,
            format!("(a) score per wording · {}", rq1_caption(&f)),
            &shown,
        ))
    });
    let ids_b = ids.clone();
    let panel_b: Spec = Memo::new(move |_| {
        let f = model.results.rq1.get().ok_or(NEEDS_RQ1.to_string())?;
        let r = rq1_stability(&f).ok_or("The RQ1 run carried no chart data.")?;
        let shown = model.shown_models.get();
        Ok(panels::score_ranges(
            &ids_b,
            &r,
            format!("(b) score range across wordings · {}", rq1_caption(&f)),
            &shown,
        ))
    });
    let bundle_c = bundle.clone();
    let panel_c: Spec = Memo::new(move |_| {
        let basis = model.basis.get().0;
        let view = model.view.get().ok_or("No weights applied yet.")?;
        let shown_m = model.shown_models.get();
        let shown_c = model.shown_conditions.get();
        Ok(panels::rank_paths(
            &basis,
            &view.weights,
            &view.result,
            &shown_m,
            &shown_c,
            format!(
                "(c) ranks per condition · {bundle_c} · {}",
                basis.policy().key()
            ),
        ))
    });
    let bundle_d = bundle.clone();
    let panel_d: Spec = Memo::new(move |_| {
        let basis = model.basis.get().0;
        let view = model.view.get().ok_or("No weights applied yet.")?;
        let shown = model.shown_models.get();
        Ok(panels::pair_flips(
            &basis,
            &view.result,
            &shown,
            format!("(d) pairs inverted vs equal weights · {bundle_d}"),
        ))
    });
    let rq2_caption = |f: &Finished| match f.request {
        Request::Rq2(s) => format!(
            "random seed {}, {} draws, B = {}",
            s.seed, s.draws, s.budget
        ),
        _ => String::new(),
    };
    let rq2 = move || -> Result<(Finished, atlas_worker::Rq2Charts), String> {
        let f = model.results.rq2.get().ok_or(NEEDS_RQ2.to_string())?;
        match &f.outcome.charts {
            Some(Charts::Rq2(c)) => {
                let c = c.clone();
                Ok((f, c))
            }
            _ => Err("The RQ2 run carried no chart data.".into()),
        }
    };
    let panel_e: Spec = Memo::new(move |_| {
        let (f, c) = rq2()?;
        Ok(ChartSpec::Distributions(DesignDistributions {
            designs: c.designs.clone(),
            values: c.mae_pp.clone(),
            axis_label: "score MAE per draw (pp)".into(),
            strip_points: DEFAULT_STRIP_POINTS,
            caption: format!(
                "(e) score error per design · {} · {}",
                rq2_caption(&f),
                c.exclusions
            ),
        }))
    });
    let panel_f: Spec = Memo::new(move |_| {
        let (f, c) = rq2()?;
        Ok(ChartSpec::Distributions(DesignDistributions {
            designs: c.designs.clone(),
            values: c.inversions_pct.clone(),
            axis_label: "inversions vs reference per draw (% of pairs)".into(),
            strip_points: DEFAULT_STRIP_POINTS,
            caption: format!(
                "(f) inversions per design · {} · {}",
                rq2_caption(&f),
                c.exclusions
            ),
        }))
    });
    let panel_k: Spec = Memo::new(move |_| {
        let (f, c) = rq2()?;
        Ok(ChartSpec::Coverage(CoverageCurve {
            k: c.coverage.iter().map(|p| p.k).collect(),
            mean: c.coverage.iter().map(|p| p.mae_pp).collect(),
            range: c.coverage.iter().map(|p| p.mae_range).collect(),
            axis_label: "score MAE (pp)".into(),
            caption: format!(
                "coverage curve · {} · {}",
                rq2_caption(&f),
                c.coverage_exclusions
            ),
        }))
    });
    const NEEDS_ACROSS: &str =
        "Run the comparison above to draw this panel (it shows the last run).";
    let across = move || -> Result<(AcrossOptions, atlas_core::across::AcrossReport), String> {
        let f = model.results.across.get().ok_or(NEEDS_ACROSS.to_string())?;
        match (&f.outcome.charts, f.request) {
            (Some(Charts::Across(r)), Request::Across(o)) => Ok((o, r.clone())),
            _ => Err("The run carried no chart data.".into()),
        }
    };
    let across_caption = |o: &AcrossOptions, r: &atlas_core::across::AcrossReport| {
        format!(
            "{} · random seed {}, {} draws, {}",
            r.bundle,
            o.seed,
            o.draws,
            o.policy.key()
        )
    };
    let panel_c_across: Spec = Memo::new(move |_| {
        let (o, r) = across()?;
        let shown = model.shown_models.get();
        Ok(panels::across_rank_paths(
            &r,
            format!("(c) ranks per procedure · {}", across_caption(&o, &r)),
            &shown,
        ))
    });
    let panel_d_across: Spec = Memo::new(move |_| {
        let (o, r) = across()?;
        let shown = model.shown_models.get();
        Ok(panels::across_pair_flips(
            &r,
            format!(
                "(d) pairs whose order reverses across procedures · {}",
                across_caption(&o, &r)
            ),
            &shown,
        ))
    });
    // (g) and (h): the first judge column, computed once per bundle.
    let judge = loaded
        .audit
        .file
        .responses
        .judges
        .first()
        .map(|j| j.id.clone());
    let no_judge = "This bundle has no judge Rationale labels (responses.judges), so panels (g) and (h) cannot be drawn: its Selection is the only readout.".to_string();
    // Only the Rationale section draws (g) and (h): the others skip the computation.
    let rationale = Arc::new(match judge.as_deref() {
        _ if group != AtlasGroup::Rationale => Err(no_judge),
        Some(id) => judge_by_model(&loaded.audit, id).map_err(|e| e.to_string()),
        None => Err(no_judge),
    });
    let (ids_g, rationale_g) = (ids.clone(), rationale.clone());
    let panel_g: Spec = Memo::new(move |_| {
        let judge = rationale_g.as_ref().as_ref().map_err(String::clone)?;
        let shown = model.shown_models.get();
        Ok(panels::selection_vs_rationale(&ids_g, judge, &shown))
    });
    let (ids_h, rationale_h) = (ids.clone(), rationale.clone());
    let panel_h: Spec = Memo::new(move |_| {
        let judge = rationale_h.as_ref().as_ref().map_err(String::clone)?;
        let shown = model.shown_models.get();
        Ok(panels::rationale_composition(&ids_h, judge, &shown))
    });

    let (id, title, intro) = match group {
        AtlasGroup::Weights => ("atlas", "Evidence atlas: how the weights move the ranking", "Panels (c) and (d) of the BiAxisBias paper's Figure 4, live on this bundle: they follow the weights above."),
        AtlasGroup::Rq1 => ("atlas-analyses", "Charts of this RQ1 run: score per wording and score ranges", "Panels (a) and (b) of the BiAxisBias paper's Figure 4: they show the last RQ1 run above."),
        AtlasGroup::Rq2 => ("atlas-rq2", "Charts of this RQ2 run: error and inversions per audit design, coverage", "Panels (e) and (f) of the BiAxisBias paper's Figure 4 and the coverage curve (Table 14): they show the last RQ2 run above."),
        AtlasGroup::Across => ("atlas-across", "Charts of this comparison: ranks per procedure, pairs that reverse", "Panels (c) and (d) of the BiAxisBias paper's Figure 4 with the task formats (procedures) as the steps: they show the last comparison above."),
        AtlasGroup::Rationale => ("atlas-rationale", "Evidence atlas: Selection vs Rationale panels", "Panels (g) and (h) of the BiAxisBias paper's Figure 4: they need the bundle's judge Rationale labels."),
    };
    let (title_id, labelled_by) = (format!("{id}-title"), format!("{id}-title"));
    let panels = match group {
        AtlasGroup::Weights => view! {
                <ChartPanel panel="atlas-c" title="(c) Rank paths across conditions" what="Line chart: each model's rank (1 = lowest score) under each condition alone, under Eq. 4 and under the chosen weights." spec=panel_c/>
                <ChartPanel panel="atlas-d" title="(d) Model pairs whose order the weights flip" what="Triangle matrix of model pairs: coloured cells are pairs whose order under the chosen weights is inverted against equal weights." spec=panel_d/>
        }.into_any(),
        AtlasGroup::Rq1 => view! {
                <ChartPanel panel="atlas-a" title="(a) Selection score per wording per model" what="Dot plot: one row per model, one dot per wording's score (%), a cross at the pooled Eq. 4 score." spec=panel_a/>
                <ChartPanel panel="atlas-b" title="(b) Per-model score range across wordings" what="Range bars: each model's lowest to highest score across wordings (%), a cross at the pooled score." spec=panel_b/>
        }.into_any(),
        AtlasGroup::Rq2 => view! {
                <ChartPanel panel="atlas-e" title="(e) Score error per draw, by audit design (RQ2)" what="Box plots with a strip of draws: the score MAE (pp) of each equal-budget audit design." spec=panel_e/>
                <ChartPanel panel="atlas-f" title="(f) Ranking inversions per draw, by audit design (RQ2)" what="Box plots with a strip of draws: the share of model pairs inverted against the reference, per design." spec=panel_f/>
                <ChartPanel panel="atlas-coverage" title="Coverage curve: error against conditions covered (Table 14)" what="Line chart of the score MAE (pp) of a fixed-budget audit against the number of conditions it covers, with 2.5–97.5% ranges." spec=panel_k/>
        }.into_any(),
        AtlasGroup::Across => view! {
                <ChartPanel panel="atlas-c-across" title="(c) Rank paths across task formats" what="Line chart: each model's rank under each procedure (CLEAR-, BBQ-, StereoSet-, CrowS-style)." spec=panel_c_across/>
                <ChartPanel panel="atlas-d-across" title="(d) Model pairs whose order reverses across task formats" what="Triangle matrix of model pairs: coloured cells are pairs whose order reverses between two procedures, darker beyond the 1- and 2-pp tie zones; a dot marks interval support." spec=panel_d_across/>
        }.into_any(),
        AtlasGroup::Rationale => view! {
                <ChartPanel panel="atlas-g" title="(g) Selection vs Rationale BER per model" what="Scatter plot of each model's Selection BER (x) against its Rationale BER (y), with the equality diagonal." spec=panel_g/>
                <ChartPanel panel="atlas-h" title="(h) Rationale composition per model" what="Stacked bars: each model's judge labels by class (E endorses, QE endorses with qualifications, N neutral, D denies, R refuses), as shares." spec=panel_h/>
        }.into_any(),
    };
    const HOW: &str = " Point at a mark (or focus a chart and use the arrow keys) to read its value; every chart has its table below it.";
    if matches!(
        group,
        AtlasGroup::Rq1 | AtlasGroup::Rq2 | AtlasGroup::Across
    ) {
        return view! {
            <div class="atlas atlas-inline" id=id data-view=id aria-labelledby=labelled_by>
                <h4 id=title_id>{title}" "<span class="paper-ref">"BiAxisBias paper Figure 4"</span></h4>
                <p>{intro}{HOW}</p>
                <div class="atlas-grid">{panels}</div>
            </div>
        }
        .into_any();
    }
    view! {
        <section class="atlas" id=id data-view=id aria-labelledby=labelled_by>
            <h2 id=title_id>{title}" "<span class="paper-ref">"BiAxisBias paper Figure 4"</span></h2>
            <p>{intro}{HOW}</p>
            <div class="atlas-grid">{panels}</div>
        </section>
    }
    .into_any()
}
