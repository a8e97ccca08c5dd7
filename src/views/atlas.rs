//! The evidence atlas (seed `000_…` Figure 4 and Table 14) as live views on the loaded bundle: each
//! panel is one `atlas_charts::atlas` draw function on a `<canvas>` (plotters-canvas), redrawn when its
//! data change, with the value under the pointer (or under the keyboard focus: arrow keys step through
//! the marks) in a tooltip (`role=status`), a table alternative, and PNG / SVG / CSV exports.
//!
//! | panel | fed by |
//! | --- | --- |
//! | (a) score per wording, (b) score ranges | the last RQ1 run (Analyses) |
//! | (c) rank paths across conditions | the re-weighting basis (condition means), Eq. 4 and the chosen weights |
//! | (d) pair flips | the pairs the chosen weights invert against equal weights |
//! | (e) / (f) per-draw error and inversions per design, coverage curve | the last RQ2 run |
//! | (g) Selection vs Rationale BER, (h) Rationale composition | the bundle's first judge column (response level), when it has one |

use crate::ui::chart::{keep, shorten, ChartPanel, ChartSpec, Spec};
use std::sync::Arc;

use atlas_charts::atlas::{
    CoverageCurve, DesignDistributions, PairFlips, RankPaths, RationaleComposition, ScoreRanges,
    SelectionVsRationale, WordingScores, DEFAULT_STRIP_POINTS, RATIONALE_CLASSES,
};
use atlas_core::rq1::WordingRankStability;
use atlas_core::Audit;
use atlas_worker::{Charts, Request};
use leptos::prelude::*;

use crate::state::reweighting::{ExplorerModel, Finished};

/// The model index of cell `i`.
fn model_of(audit: &Audit, i: usize) -> usize {
    audit
        .axes
        .iter()
        .find(|a| a.facet == audit.model_facet)
        .map_or(0, |a| (i / a.stride.max(1)) % a.len.max(1))
}

/// Per model: Selection BER, Rationale BER (fractions), and judge label counts per class.
type RationaleData = (Vec<Option<f64>>, Vec<Option<f64>>, Vec<Vec<u64>>);

/// Response-level Selection and Rationale BER per model on the cells with both a valid Selection and a
/// label of judge `j`, and the class counts of judge `j`'s labels per model.
fn rationale_data(audit: &Audit, j: usize) -> RationaleData {
    let n = audit.model_ids().len();
    let mut both = vec![(0u64, 0u64, 0u64); n];
    let mut counts = vec![vec![0u64; RATIONALE_CLASSES.len()]; n];
    if let Some(labels) = audit.judges.get(j) {
        for (i, label) in labels.iter().enumerate() {
            let Some(label) = label else { continue };
            let m = model_of(audit, i).min(n.saturating_sub(1));
            let k = match label {
                atlas_core::bundle::RationaleLabel::E => 0,
                atlas_core::bundle::RationaleLabel::QE => 1,
                atlas_core::bundle::RationaleLabel::N => 2,
                atlas_core::bundle::RationaleLabel::D => 3,
                atlas_core::bundle::RationaleLabel::R => 4,
            };
            counts[m][k] += 1;
            if let Some(e) = audit.selection_value(i).and_then(|v| v.evidence) {
                let b = &mut both[m];
                b.0 += 1;
                b.1 += u64::from(e == 1);
                b.2 += u64::from(label.is_bias_evidence());
            }
        }
    }
    let rate = |k: u64, n: u64| (n > 0).then(|| k as f64 / n as f64);
    (
        both.iter().map(|b| rate(b.1, b.0)).collect(),
        both.iter().map(|b| rate(b.2, b.0)).collect(),
        counts,
    )
}

fn rq1_stability(f: &Finished) -> Option<WordingRankStability> {
    let Some(Charts::Rq1(c)) = &f.outcome.charts else {
        return None;
    };
    let policy = match f.request {
        Request::Rq1(s) => s.policy,
        _ => return None,
    };
    Some(WordingRankStability {
        policy,
        direction: c.direction,
        pooled: c.pooled.clone(),
        pooled_ranks: c.pooled_ranks.clone(),
        pooled_abstain: c.pooled_abstain.clone(),
        abstain: c.abstain.clone(),
        scores: c.scores.clone(),
        ranks: c.ranks.clone(),
        score_range_pp: Vec::new(),
        rank_range: Vec::new(),
        tau_b: Vec::new(),
        inversions: Vec::new(),
        max_displacement: Vec::new(),
    })
}

/// The atlas section.
#[component]
pub fn EvidenceAtlas() -> impl IntoView {
    let model = expect_context::<ExplorerModel>();
    let loaded = model.loaded.get_value();
    let bundle = loaded.audit.metadata().id.clone();
    let ids: Vec<String> = loaded
        .audit
        .model_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    const NEEDS_RQ1: &str =
        "Run RQ1 in the Analyses section above to draw this panel (it shows the last RQ1 run).";
    const NEEDS_RQ2: &str =
        "Run RQ2 in the Analyses section above to draw this panel (it shows the last RQ2 run).";

    let ids_a = ids.clone();
    let rq1_caption = move |f: &Finished| match f.request {
        Request::Rq1(s) => format!("RQ1, seed {}, {}", s.seed, s.policy.key()),
        _ => String::new(),
    };
    let panel_a: Spec = Memo::new(move |_| {
        let f = model.results.rq1.get().ok_or(NEEDS_RQ1.to_string())?;
        let r = rq1_stability(&f).ok_or("The RQ1 run carried no chart data.")?;
        let shown = model.shown_models.get();
        let mut d = WordingScores::from_rq1(
            &ids_a,
            &r,
            format!("(a) score per wording · {}", rq1_caption(&f)),
        );
        d.models = keep(&d.models, &shown);
        d.scores = d.scores.iter().map(|s| keep(s, &shown)).collect();
        d.pooled = keep(&d.pooled, &shown);
        d.flags = d.flags.iter().map(|s| keep(s, &shown)).collect();
        d.pooled_flags = keep(&d.pooled_flags, &shown);
        Ok(ChartSpec::WordingScores(d))
    });
    let ids_b = ids.clone();
    let panel_b: Spec = Memo::new(move |_| {
        let f = model.results.rq1.get().ok_or(NEEDS_RQ1.to_string())?;
        let r = rq1_stability(&f).ok_or("The RQ1 run carried no chart data.")?;
        let shown = model.shown_models.get();
        let mut d = ScoreRanges::from_rq1(
            &ids_b,
            &r,
            format!("(b) score range across wordings · {}", rq1_caption(&f)),
        );
        d.models = keep(&d.models, &shown);
        d.min = keep(&d.min, &shown);
        d.max = keep(&d.max, &shown);
        d.pooled = keep(&d.pooled, &shown);
        d.flags = keep(&d.flags, &shown);
        d.pooled_flags = keep(&d.pooled_flags, &shown);
        Ok(ChartSpec::ScoreRanges(d))
    });
    let bundle_c = bundle.clone();
    let panel_c: Spec = Memo::new(move |_| {
        let basis = model.basis.get().0;
        let view = model.view.get().ok_or("No weights applied yet.")?;
        let shown_m = model.shown_models.get();
        let shown_c = model.shown_conditions.get();
        let mut d = RankPaths::across_conditions(
            &basis,
            format!(
                "(c) ranks per condition · {bundle_c} · {}",
                basis.policy().key()
            ),
        );
        if !matches!(
            view.weights.preset(),
            atlas_core::reweight::WeightPreset::Equal
        ) {
            d.steps.push("your weights".into());
            d.ranks.push(view.result.ranks.clone());
            d.flags.push(atlas_charts::atlas::flags_of(
                &view.result.abstain,
                basis.abstain_threshold(),
            ));
        }
        // Steps of hidden conditions leave; Eq. 4 and the chosen weights stay.
        let hidden: Vec<&str> = basis
            .conditions()
            .iter()
            .zip(&shown_c)
            .filter(|(_, s)| !**s)
            .map(|(c, _)| c.id.as_str())
            .collect();
        let keep_step: Vec<bool> = d
            .steps
            .iter()
            .map(|s| !hidden.contains(&s.as_str()))
            .collect();
        d.steps = keep(&d.steps, &keep_step);
        d.ranks = keep(&d.ranks, &keep_step)
            .iter()
            .map(|r| keep(r, &shown_m))
            .collect();
        d.flags = keep(&d.flags, &keep_step)
            .iter()
            .map(|r| keep(r, &shown_m))
            .collect();
        d.models = keep(&d.models, &shown_m);
        Ok(ChartSpec::RankPaths(d))
    });
    let bundle_d = bundle.clone();
    let panel_d: Spec = Memo::new(move |_| {
        let basis = model.basis.get().0;
        let view = model.view.get().ok_or("No weights applied yet.")?;
        let shown = model.shown_models.get();
        // Short labels: the matrix has one column per model (full ids are in the table).
        let short: Vec<String> = basis.models().iter().map(|m| shorten(m, 12)).collect();
        let d = PairFlips::from_reweighted(
            &short,
            &view.result,
            format!("(d) pairs inverted vs equal weights · {bundle_d}"),
        );
        // Re-index the pairs among the models shown.
        let index: Vec<Option<usize>> = {
            let mut next = 0;
            (0..d.models.len())
                .map(|m| {
                    shown.get(m).copied().unwrap_or(true).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect()
        };
        let pairs = d
            .pairs
            .iter()
            .filter_map(|p| {
                let mut p = p.clone();
                p.a = index.get(p.a).copied().flatten()?;
                p.b = index.get(p.b).copied().flatten()?;
                Some(p)
            })
            .collect();
        Ok(ChartSpec::PairFlips(
            PairFlips {
                models: keep(&d.models, &shown),
                pairs,
                caption: d.caption,
            },
            keep(basis.models(), &shown),
        ))
    });
    let rq2_caption = |f: &Finished| match f.request {
        Request::Rq2(s) => format!("seed {}, {} draws, B = {}", s.seed, s.draws, s.budget),
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
    // (g) and (h): the first judge column, computed once per bundle.
    let judge = loaded
        .audit
        .file
        .responses
        .judges
        .first()
        .map(|j| j.id.clone());
    let rationale = Arc::new(judge.as_ref().map(|_| rationale_data(&loaded.audit, 0)));
    let no_judge = "This bundle has no judge Rationale labels (responses.judges), so panels (g) and (h) cannot be drawn: its Selection is the only readout.".to_string();
    let (ids_g, rationale_g, judge_g, no_judge_g) = (
        ids.clone(),
        rationale.clone(),
        judge.clone(),
        no_judge.clone(),
    );
    let panel_g: Spec = Memo::new(move |_| {
        let (sel, rat, _) = rationale_g.as_ref().as_ref().ok_or(no_judge_g.clone())?;
        let shown = model.shown_models.get();
        Ok(ChartSpec::SelectionVsRationale(SelectionVsRationale {
            models: keep(&ids_g, &shown),
            selection: keep(sel, &shown),
            rationale: keep(rat, &shown),
            caption: format!(
                "(g) Selection vs Rationale BER · judge {}",
                judge_g.clone().unwrap_or_default()
            ),
        }))
    });
    let (ids_h, rationale_h) = (ids.clone(), rationale.clone());
    let panel_h: Spec = Memo::new(move |_| {
        let (_, _, counts) = rationale_h.as_ref().as_ref().ok_or(no_judge.clone())?;
        let shown = model.shown_models.get();
        Ok(ChartSpec::Composition(RationaleComposition {
            models: keep(&ids_h, &shown),
            classes: RATIONALE_CLASSES.iter().map(|c| c.to_string()).collect(),
            counts: keep(counts, &shown),
            caption: format!(
                "(h) Rationale classes · judge {}",
                judge.clone().unwrap_or_default()
            ),
        }))
    });

    view! {
        <section class="atlas" id="atlas" data-view="atlas" aria-labelledby="atlas-title">
            <h2 id="atlas-title">"Evidence atlas"</h2>
            <p>
                "The panels of the seed's Figure 4 as live views on this bundle. (c) and (d) follow the weights above; (a), (b), (e), (f) and the coverage curve show the last RQ1 / RQ2 run of the Analyses section; (g) and (h) need judge Rationale labels. "
                "Point at a mark (or focus a chart and use the arrow keys) to read its value; every chart has its table below it."
            </p>
            <div class="atlas-grid">
                <ChartPanel panel="atlas-a" title="(a) Selection score per wording per model" what="Dot plot: one row per model, one dot per wording's score (%), a cross at the pooled Eq. 4 score." spec=panel_a/>
                <ChartPanel panel="atlas-b" title="(b) Per-model score range across wordings" what="Range bars: each model's lowest to highest score across wordings (%), a cross at the pooled score." spec=panel_b/>
                <ChartPanel panel="atlas-c" title="(c) Rank paths across conditions" what="Line chart: each model's rank (1 = lowest score) under each condition alone, under Eq. 4 and under the chosen weights." spec=panel_c/>
                <ChartPanel panel="atlas-d" title="(d) Model pairs whose order the weights flip" what="Triangle matrix of model pairs: coloured cells are pairs whose order under the chosen weights is inverted against equal weights." spec=panel_d/>
                <ChartPanel panel="atlas-e" title="(e) Score error per draw, by audit design (RQ2)" what="Box plots with a strip of draws: the score MAE (pp) of each equal-budget audit design." spec=panel_e/>
                <ChartPanel panel="atlas-f" title="(f) Ranking inversions per draw, by audit design (RQ2)" what="Box plots with a strip of draws: the share of model pairs inverted against the reference, per design." spec=panel_f/>
                <ChartPanel panel="atlas-g" title="(g) Selection vs Rationale BER per model" what="Scatter plot of each model's Selection BER (x) against its Rationale BER (y), with the equality diagonal." spec=panel_g/>
                <ChartPanel panel="atlas-h" title="(h) Rationale composition per model" what="Stacked bars: each model's judge labels by class (E, QE, N, D, R), as shares." spec=panel_h/>
                <ChartPanel panel="atlas-coverage" title="Coverage curve: error against conditions covered (Table 14)" what="Line chart of the score MAE (pp) of a fixed-budget audit against the number of conditions it covers, with 2.5–97.5% ranges." spec=panel_k/>
            </div>
        </section>
    }
}
