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

use std::sync::Arc;

use atlas_charts::atlas::{
    draw_coverage_curve, draw_design_distributions, draw_pair_flips, draw_rank_paths,
    draw_rationale_composition, draw_score_ranges, draw_selection_vs_rationale,
    draw_wording_scores, BoxStats, CoverageCurve, DesignDistributions, FlipStatus, PairFlips,
    RankPaths, RationaleComposition, ScoreRanges, SelectionVsRationale, WordingScores,
    DEFAULT_STRIP_POINTS, RATIONALE_CLASSES,
};
use atlas_charts::clinical::{
    draw_heat_map, draw_rate_bars, draw_stacked_bars, HeatMap, Proportion, RateBars, StackedBars,
};
use atlas_charts::{hit_index, hit_test, HitRegion, HitResult};
use atlas_core::rq1::WordingRankStability;
use atlas_core::tables::csv_field;
use atlas_core::Audit;
use atlas_worker::{Charts, Request};
use leptos::prelude::*;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend, IntoDrawingArea, SVGBackend};
use plotters_canvas::CanvasBackend;

use crate::explorer::{ExplorerModel, Finished};
use crate::export::{download_canvas_png, download_text};

/// The data of one atlas panel.
#[derive(Debug, Clone, PartialEq)]
pub enum ChartSpec {
    /// (a) score per wording per model.
    WordingScores(WordingScores),
    /// (b) per-model score range.
    ScoreRanges(ScoreRanges),
    /// (c) rank paths.
    RankPaths(RankPaths),
    /// The matrix (short labels) and the full model names for its table.
    PairFlips(PairFlips, Vec<String>),
    /// (e) / (f) per-draw distributions per design.
    Distributions(DesignDistributions),
    /// (g) Selection vs Rationale BER.
    SelectionVsRationale(SelectionVsRationale),
    /// (h) Rationale composition.
    Composition(RationaleComposition),
    /// The K-condition coverage curve.
    Coverage(CoverageCurve),
    /// Clinical (seed `001_…`): grouped rate bars (CFV by model and difficulty, Fig. 2).
    RateBars(RateBars),
    /// Clinical: stacked bars (failure modes Fig. 3, directions Fig. 5, stereotype categories Fig. 6).
    Stacked(StackedBars),
    /// Clinical: the answer-change heat map, model × prefix (Fig. 4).
    HeatMap(HeatMap),
}

/// A chart's table alternative (and CSV export): a header and rows of text.
#[derive(Debug, Clone, PartialEq)]
pub struct DataTable {
    /// Column headings.
    pub header: Vec<String>,
    /// One row per line of the table; the first cell is the row header.
    pub rows: Vec<Vec<String>>,
}

impl DataTable {
    /// The table as CSV (RFC 4180 quoting).
    pub fn csv(&self) -> String {
        let line = |fields: &[String]| {
            let mut l = fields
                .iter()
                .map(|f| csv_field(f))
                .collect::<Vec<_>>()
                .join(",");
            l.push('\n');
            l
        };
        let mut out = line(&self.header);
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{:.2}", 100.0 * x))
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map_or(String::new(), |x| format!("{x:.decimals$}"))
}

impl ChartSpec {
    /// Draws the panel on any plotters backend and returns its hover regions.
    ///
    /// # Errors
    /// Whatever the backend reports.
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> HitResult<DB> {
        match self {
            ChartSpec::WordingScores(d) => draw_wording_scores(area, d),
            ChartSpec::ScoreRanges(d) => draw_score_ranges(area, d),
            ChartSpec::RankPaths(d) => draw_rank_paths(area, d),
            ChartSpec::PairFlips(d, _) => draw_pair_flips(area, d),
            ChartSpec::Distributions(d) => draw_design_distributions(area, d),
            ChartSpec::SelectionVsRationale(d) => draw_selection_vs_rationale(area, d),
            ChartSpec::Composition(d) => draw_rationale_composition(area, d),
            ChartSpec::Coverage(d) => draw_coverage_curve(area, d),
            ChartSpec::RateBars(d) => draw_rate_bars(area, d),
            ChartSpec::Stacked(d) => draw_stacked_bars(area, d),
            ChartSpec::HeatMap(d) => draw_heat_map(area, d),
        }
    }

    /// The caption drawn above the chart (also the canvas's `data-caption`).
    pub fn caption(&self) -> &str {
        match self {
            ChartSpec::WordingScores(d) => &d.caption,
            ChartSpec::ScoreRanges(d) => &d.caption,
            ChartSpec::RankPaths(d) => &d.caption,
            ChartSpec::PairFlips(d, _) => &d.caption,
            ChartSpec::Distributions(d) => &d.caption,
            ChartSpec::SelectionVsRationale(d) => &d.caption,
            ChartSpec::Composition(d) => &d.caption,
            ChartSpec::Coverage(d) => &d.caption,
            ChartSpec::RateBars(d) => &d.caption,
            ChartSpec::Stacked(d) => &d.caption,
            ChartSpec::HeatMap(d) => &d.caption,
        }
    }

    /// Canvas size in pixels (rows grow with the models).
    pub fn size(&self) -> (u32, u32) {
        let rows = |n: usize, per: u32| 90 + per * n.max(1) as u32;
        match self {
            ChartSpec::WordingScores(d) => (720, rows(d.models.len(), 40)),
            ChartSpec::ScoreRanges(d) => (720, rows(d.models.len(), 34)),
            ChartSpec::RankPaths(d) => (720, (120 + 30 * d.models.len() as u32).max(320)),
            ChartSpec::PairFlips(d, _) => (900, (140 + 44 * d.models.len() as u32).clamp(260, 620)),
            // Wide enough for the caption with the RQ2 settings and the exclusion counts.
            ChartSpec::Distributions(_) | ChartSpec::Coverage(_) => (900, 380),
            ChartSpec::SelectionVsRationale(_) => (560, 520),
            ChartSpec::Composition(d) => (720, rows(d.models.len(), 34)),
            ChartSpec::RateBars(d) => (
                720,
                rows(d.rows.len(), 14 + 18 * d.series.len().max(1) as u32).max(170),
            ),
            // Tall enough for the legend, one 18-px entry per class.
            ChartSpec::Stacked(d) => (
                720,
                rows(d.rows.len(), 34).max(80 + 18 * d.classes.len() as u32),
            ),
            ChartSpec::HeatMap(d) => (720, rows(d.rows.len(), 44).max(170)),
        }
    }

    /// The values the chart shows, as a table.
    pub fn table(&self) -> DataTable {
        match self {
            ChartSpec::WordingScores(d) => {
                let mut header = vec!["model".to_string()];
                header.extend(d.wordings.iter().map(|w| format!("{w} (%)")));
                header.push("pooled, Eq. 4 (%)".into());
                let rows = d
                    .models
                    .iter()
                    .enumerate()
                    .map(|(m, id)| {
                        let mut row = vec![id.clone()];
                        row.extend(d.scores.iter().map(|s| pct(s.get(m).copied().flatten())));
                        row.push(pct(d.pooled.get(m).copied().flatten()));
                        row
                    })
                    .collect();
                DataTable { header, rows }
            }
            ChartSpec::ScoreRanges(d) => DataTable {
                header: [
                    "model",
                    "lowest (%)",
                    "highest (%)",
                    "range (pp)",
                    "pooled (%)",
                ]
                .map(String::from)
                .to_vec(),
                rows: d
                    .models
                    .iter()
                    .enumerate()
                    .map(|(m, id)| {
                        let lo = d.min.get(m).copied().flatten();
                        let hi = d.max.get(m).copied().flatten();
                        vec![
                            id.clone(),
                            pct(lo),
                            pct(hi),
                            num(lo.zip(hi).map(|(a, b)| 100.0 * (b - a)), 2),
                            pct(d.pooled.get(m).copied().flatten()),
                        ]
                    })
                    .collect(),
            },
            ChartSpec::RankPaths(d) => {
                let mut header = vec!["model".to_string()];
                header.extend(d.steps.iter().map(|s| format!("rank: {s}")));
                let rows = d
                    .models
                    .iter()
                    .enumerate()
                    .map(|(m, id)| {
                        let mut row = vec![id.clone()];
                        row.extend(d.ranks.iter().map(|r| {
                            r.get(m)
                                .copied()
                                .flatten()
                                .map_or(String::new(), |x| x.to_string())
                        }));
                        row
                    })
                    .collect();
                DataTable { header, rows }
            }
            ChartSpec::PairFlips(d, names) => {
                let name = |i: usize| names.get(i).unwrap_or(&d.models[i]).clone();
                let mut rows = Vec::new();
                for i in 1..d.models.len() {
                    for j in 0..i {
                        let pair = d
                            .pairs
                            .iter()
                            .find(|p| (p.a == i && p.b == j) || (p.a == j && p.b == i));
                        rows.push(vec![
                            name(j),
                            name(i),
                            pair.map_or(FlipStatus::Stable, |p| p.status)
                                .describe()
                                .to_string(),
                            pair.map_or(String::new(), |p| p.detail.clone()),
                        ]);
                    }
                }
                DataTable {
                    header: ["model", "model", "ordering", "detail"]
                        .map(String::from)
                        .to_vec(),
                    rows,
                }
            }
            ChartSpec::Distributions(d) => DataTable {
                header: [
                    "design", "draws", "mean", "2.5%", "25%", "median", "75%", "97.5%",
                ]
                .map(String::from)
                .to_vec(),
                rows: d
                    .designs
                    .iter()
                    .enumerate()
                    .map(|(i, design)| {
                        let s = d.values.get(i).and_then(|v| BoxStats::of(v));
                        let f = |pick: fn(&BoxStats) -> f64| num(s.as_ref().map(pick), 3);
                        vec![
                            design.clone(),
                            s.map_or("0".to_string(), |s| s.n.to_string()),
                            f(|s| s.mean),
                            f(|s| s.p2_5),
                            f(|s| s.q1),
                            f(|s| s.median),
                            f(|s| s.q3),
                            f(|s| s.p97_5),
                        ]
                    })
                    .collect(),
            },
            ChartSpec::SelectionVsRationale(d) => DataTable {
                header: ["model", "Selection BER (%)", "Rationale BER (%)"]
                    .map(String::from)
                    .to_vec(),
                rows: d
                    .models
                    .iter()
                    .enumerate()
                    .map(|(m, id)| {
                        vec![
                            id.clone(),
                            pct(d.selection.get(m).copied().flatten()),
                            pct(d.rationale.get(m).copied().flatten()),
                        ]
                    })
                    .collect(),
            },
            ChartSpec::Composition(d) => {
                let mut header = vec!["model".to_string()];
                header.extend(d.classes.iter().cloned());
                header.push("labels".into());
                let rows = d
                    .models
                    .iter()
                    .enumerate()
                    .map(|(m, id)| {
                        let counts = d.counts.get(m).cloned().unwrap_or_default();
                        let mut row = vec![id.clone()];
                        row.extend(counts.iter().map(u64::to_string));
                        row.push(counts.iter().sum::<u64>().to_string());
                        row
                    })
                    .collect();
                DataTable { header, rows }
            }
            ChartSpec::RateBars(d) => {
                proportion_table(&d.rows, d.series.iter().cloned(), |r, s| {
                    d.values.get(r).and_then(|v| v.get(s)).copied().flatten()
                })
            }
            ChartSpec::Stacked(d) => {
                let mut header = vec![String::new()];
                header.extend(d.classes.iter().cloned());
                header.push("total".into());
                let rows = d
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(r, id)| {
                        let counts = d.counts.get(r).cloned().unwrap_or_default();
                        let mut row = vec![id.clone()];
                        row.extend(
                            (0..d.classes.len())
                                .map(|k| counts.get(k).copied().unwrap_or(0).to_string()),
                        );
                        row.push(counts.iter().sum::<u64>().to_string());
                        row
                    })
                    .collect();
                DataTable { header, rows }
            }
            ChartSpec::HeatMap(d) => proportion_table(
                &d.rows,
                d.columns.iter().map(|c| format!("{c}: {}", d.measure)),
                |r, c| d.cells.get(r).and_then(|v| v.get(c)).copied().flatten(),
            ),
            ChartSpec::Coverage(d) => DataTable {
                header: vec![
                    "conditions covered K′".into(),
                    d.axis_label.clone(),
                    "2.5%".into(),
                    "97.5%".into(),
                ],
                rows: d
                    .k
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        let r = d.range.get(i).copied().flatten();
                        vec![
                            k.to_string(),
                            num(d.mean.get(i).copied().flatten(), 3),
                            num(r.map(|r| r.0), 3),
                            num(r.map(|r| r.1), 3),
                        ]
                    })
                    .collect(),
            },
        }
    }

    /// The chart as an SVG document (the same draw function on plotters' SVG backend).
    ///
    /// # Errors
    /// The drawing error.
    pub fn svg(&self) -> Result<String, String> {
        let mut out = String::new();
        {
            let backend = SVGBackend::with_string(&mut out, self.size());
            let root = backend.into_drawing_area();
            self.draw(&root).map_err(|e| e.to_string())?;
        }
        Ok(out)
    }
}

/// A table of proportions: per row its label, then for each column named in `headers` the rate in
/// percent (`NAME (%)`) and its count (`NAME: k of n`).
fn proportion_table(
    rows: &[String],
    headers: impl Iterator<Item = String>,
    get: impl Fn(usize, usize) -> Option<Proportion>,
) -> DataTable {
    let mut header = vec!["model".to_string()];
    let mut columns = 0;
    for h in headers {
        header.push(format!("{h} (%)"));
        header.push(format!("{h}: k of n"));
        columns += 1;
    }
    let rows = rows
        .iter()
        .enumerate()
        .map(|(r, label)| {
            let mut row = vec![label.clone()];
            for c in 0..columns {
                let p = get(r, c);
                row.push(pct(p.and_then(Proportion::rate)));
                row.push(p.map_or(String::new(), |p| format!("{} of {}", p.k, p.n)));
            }
            row
        })
        .collect();
    DataTable { header, rows }
}

/// `s` cut to at most `max` characters, with `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// Keeps the entries of `v` whose `shown` flag is set (all when `shown` is shorter).
fn keep<T: Clone>(v: &[T], shown: &[bool]) -> Vec<T> {
    v.iter()
        .enumerate()
        .filter(|(i, _)| shown.get(*i).copied().unwrap_or(true))
        .map(|(_, x)| x.clone())
        .collect()
}

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
        pooled: c.pooled.clone(),
        pooled_ranks: c.pooled_ranks.clone(),
        scores: c.scores.clone(),
        ranks: c.ranks.clone(),
        score_range_pp: Vec::new(),
        rank_range: Vec::new(),
        tau_b: Vec::new(),
        inversions: Vec::new(),
        max_displacement: Vec::new(),
    })
}

/// A panel's spec, or why it is not drawn.
pub(crate) type Spec = Memo<Result<ChartSpec, String>>;

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

/// One atlas panel: the chart (or why it is absent), tooltip, table alternative and exports. With
/// `on_activate`, a click on a mark (or Enter / Space on the mark in keyboard focus) calls it with the
/// mark's index in the draw function's hover regions (the clinical heat map opens a cell's cases).
#[component]
pub(crate) fn ChartPanel(
    panel: &'static str,
    title: &'static str,
    what: &'static str,
    spec: Spec,
    #[prop(optional)] on_activate: Option<Callback<usize>>,
) -> impl IntoView {
    let model = expect_context::<ExplorerModel>();
    let available = Memo::new(move |_| spec.with(|s| s.is_ok()));
    let title_id = format!("{panel}-title");
    let labelled_by = title_id.clone();
    view! {
        <figure class="atlas-panel" id=panel data-view=panel aria-labelledby=labelled_by>
            <figcaption><h3 id=title_id>{title}</h3></figcaption>
            {move || if available.get() {
                view! { <ChartCanvas panel what spec stem=model.file_stem() on_activate/> }.into_any()
            } else {
                let why = spec.with(|s| s.as_ref().err().cloned().unwrap_or_default());
                view! { <p class="absent" id=format!("{panel}-absent")>{why}</p> }.into_any()
            }}
        </figure>
    }
}

#[component]
fn ChartCanvas(
    panel: &'static str,
    what: &'static str,
    spec: Spec,
    stem: String,
    on_activate: Option<Callback<usize>>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let hits = RwSignal::new(Vec::<HitRegion>::new());
    let tip = RwSignal::new(None::<(String, f64, f64)>);
    let focus = RwSignal::new(None::<usize>);
    let error = RwSignal::new(None::<String>);
    let size = Memo::new(move |_| spec.with(|s| s.as_ref().map_or((720, 360), ChartSpec::size)));
    Effect::new(move |_| {
        let Ok(s) = spec.get() else { return };
        let Some(element) = canvas.get() else { return };
        let (w, h) = s.size();
        element.set_width(w);
        element.set_height(h);
        let Some(backend) = CanvasBackend::with_canvas_object(element) else {
            error.set(Some("This browser gave no 2D canvas context.".into()));
            return;
        };
        match s.draw(&backend.into_drawing_area()) {
            Ok(regions) => {
                error.set(None);
                hits.set(regions);
            }
            Err(e) => error.set(Some(format!("Drawing the chart failed: {e}"))),
        }
        tip.set(None);
        focus.set(None);
    });
    // Backend pixels ↔ CSS pixels of the (possibly scaled) canvas.
    let scale = move || -> Option<(f64, f64)> {
        let c = canvas.get_untracked()?;
        let (cw, ch) = (f64::from(c.client_width()), f64::from(c.client_height()));
        (cw > 0.0 && ch > 0.0).then(|| (f64::from(c.width()) / cw, f64::from(c.height()) / ch))
    };
    let on_move = move |ev: leptos::ev::PointerEvent| {
        let Some((sx, sy)) = scale() else { return };
        let (ox, oy) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let label = hits.with_untracked(|h| {
            hit_test(h, (ox * sx) as i32, (oy * sy) as i32).map(|r| r.label.clone())
        });
        tip.set(label.map(|l| (l, ox, oy)));
    };
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let Some(activate) = on_activate else { return };
        let Some((sx, sy)) = scale() else { return };
        let (ox, oy) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        let hit = hits.with_untracked(|h| hit_index(h, (ox * sx) as i32, (oy * sy) as i32));
        if let Some(i) = hit {
            focus.set(Some(i));
            activate.run(i);
        }
    };
    let activate_hint = if on_activate.is_some() {
        " Click a mark, or press Enter on the mark in focus, to open its cases."
    } else {
        ""
    };
    let show_region = move |i: usize| {
        let Some((sx, sy)) = scale() else { return };
        let region = hits.with_untracked(|h| h.get(i).cloned());
        if let Some(r) = region {
            let cx = f64::from(r.x0 + r.x1) / 2.0 / sx;
            let cy = f64::from(r.y0 + r.y1) / 2.0 / sy;
            tip.set(Some((
                format!(
                    "{} ({} of {})",
                    r.label,
                    i + 1,
                    hits.with_untracked(Vec::len)
                ),
                cx,
                cy,
            )));
            focus.set(Some(i));
        }
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let n = hits.with_untracked(Vec::len);
        if n == 0 {
            return;
        }
        let current = focus.get_untracked();
        if let (Some(activate), Some(i), "Enter" | " ") = (on_activate, current, ev.key().as_str())
        {
            ev.prevent_default();
            activate.run(i);
            return;
        }
        let next = match ev.key().as_str() {
            "ArrowRight" | "ArrowDown" => current.map_or(0, |i| (i + 1) % n),
            "ArrowLeft" | "ArrowUp" => current.map_or(n - 1, |i| (i + n - 1) % n),
            "Home" => 0,
            "End" => n - 1,
            "Escape" => {
                tip.set(None);
                focus.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        show_region(next);
    };
    let table = move || {
        spec.with(|s| s.as_ref().ok().map(ChartSpec::table))
            .map(|t| {
                let header = t
                    .header
                    .iter()
                    .map(|h| view! { <th scope="col">{h.clone()}</th> })
                    .collect_view();
                let rows = t
                    .rows
                    .iter()
                    .map(|row| {
                        let cells = row
                            .iter()
                            .enumerate()
                            .map(|(i, c)| {
                                if i == 0 {
                                    view! { <th scope="row">{c.clone()}</th> }.into_any()
                                } else {
                                    view! { <td>{c.clone()}</td> }.into_any()
                                }
                            })
                            .collect_view();
                        view! { <tr>{cells}</tr> }
                    })
                    .collect_view();
                let id = format!("{panel}-table");
                view! {
                    <table id=id>
                        <thead><tr>{header}</tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                }
            })
    };
    let (stem_png, stem_svg, stem_csv) = (stem.clone(), stem.clone(), stem);
    let png = move |_| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let name = format!("{stem_png}-{panel}.png");
        let report = move |e: String| {
            error.try_set(Some(format!("The PNG export failed: {e}")));
        };
        if let Err(e) = download_canvas_png(&c, name, report) {
            error.set(Some(format!("The PNG export failed: {e}")));
        }
    };
    let svg = move |_| {
        let result = spec.get_untracked().and_then(|s| s.svg()).and_then(|svg| {
            download_text(&svg, "image/svg+xml", &format!("{stem_svg}-{panel}.svg"))
        });
        if let Err(e) = result {
            error.set(Some(format!("The SVG export failed: {e}")));
        }
    };
    let csv = move |_| {
        let result = spec.get_untracked().map(|s| s.table().csv()).and_then(|t| {
            download_text(
                &t,
                "text/csv;charset=utf-8",
                &format!("{stem_csv}-{panel}.csv"),
            )
        });
        if let Err(e) = result {
            error.set(Some(format!("The CSV export failed: {e}")));
        }
    };
    view! {
        <div class="chart-scroll"><div class="chart-wrap">
            <canvas
                id=format!("{panel}-canvas")
                node_ref=canvas
                width=move || size.get().0.to_string()
                height=move || size.get().1.to_string()
                role="img"
                tabindex="0"
                aria-label=format!("{what} Use the arrow keys to read each mark; the table below holds the same values.{activate_hint}")
                aria-describedby=format!("{panel}-tip")
                data-marks=move || hits.with(Vec::len).to_string()
                data-caption=move || spec.with(|s| s.as_ref().map_or(String::new(), |s| s.caption().to_string()))
                on:pointermove=on_move
                on:pointerleave=move |_| tip.set(None)
                on:click=on_click
                class:activatable=on_activate.is_some()
                on:keydown=on_key
                on:blur=move |_| { tip.set(None); focus.set(None); }
            ></canvas>
            <p
                class="chart-tip"
                id=format!("{panel}-tip")
                role="status"
                aria-live="polite"
                class:visible=move || tip.with(Option::is_some)
                class:below=move || tip.with(|t| t.as_ref().is_some_and(|t| t.2 < 48.0))
                style:left=move || tip.with(|t| t.as_ref().map_or("0px".into(), |t| format!("{:.0}px", t.1)))
                style:top=move || tip.with(|t| t.as_ref().map_or("0px".into(), |t| format!("{:.0}px", t.2)))
            >
                {move || tip.with(|t| t.as_ref().map(|t| t.0.clone()).unwrap_or_default())}
            </p>
        </div></div>
        {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        <div class="chart-exports" role="group" aria-label="Export this chart">
            <button id=format!("{panel}-png") on:click=png>"PNG"</button>
            <button id=format!("{panel}-svg") on:click=svg>"SVG"</button>
            <button id=format!("{panel}-csv") on:click=csv>"CSV"</button>
        </div>
        <details class="chart-table">
            <summary>"Table"</summary>
            <div class="scroll">{table}</div>
        </details>
    }
}
