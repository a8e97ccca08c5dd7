//! One chart panel for every chart of the app: [`ChartSpec`] (the data of one panel: an atlas panel of
//! seed `000_…` Figure 4 or a clinical figure of seed `001_…`), drawn by its `atlas_charts` function on a
//! `<canvas>` (plotters-canvas), with the value under the pointer or keyboard focus in a tooltip
//! (`role=status`), a table alternative ([`ChartSpec::table`], shown by [`crate::ui::table::table_grid`]) and PNG / SVG / CSV exports ([`ChartPanel`]).

use atlas_charts::atlas::{
    draw_coverage_curve, draw_design_distributions, draw_pair_flips, draw_rank_paths,
    draw_rationale_composition, draw_score_ranges, draw_selection_vs_rationale,
    draw_wording_scores, BoxStats, CoverageCurve, DesignDistributions, FlipStatus, PairFlips,
    RankPaths, RationaleComposition, ScoreRanges, SelectionVsRationale, WordingScores,
};
use atlas_charts::clinical::{
    draw_heat_map, draw_rate_bars, draw_stacked_bars, HeatMap, Proportion, RateBars, StackedBars,
};
use atlas_charts::{hit_index, hit_test, HitRegion, HitResult};
use atlas_core::tables::Table;
use leptos::prelude::*;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend, IntoDrawingArea, SVGBackend};
use plotters_canvas::CanvasBackend;

use crate::browser::export::{download_canvas_png, download_text, DownloadError};
use crate::state::reweighting::ExplorerModel;

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

/// The columns of a chart's table alternative, before they become the one table model
/// ([`ChartSpec::table`]): a header and rows of text.
#[derive(Debug, Clone, PartialEq)]
struct DataTable {
    /// Column headings.
    header: Vec<String>,
    /// One row per line of the table; the first cell is the row header.
    rows: Vec<Vec<String>>,
}

fn pct(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{:.2}", 100.0 * x))
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map_or(String::new(), |x| format!("{x:.decimals$}"))
}

/// A table value with its high-Abstain flag: `12.34 ⚠ Abstain 80.8 %` (the value alone when `flag`
/// is `None`; see `atlas_core::abstain`).
fn flagged(value: String, flag: Option<f64>) -> String {
    match flag {
        Some(share) if !value.is_empty() => format!(
            "{value} {} Abstain {}",
            atlas_core::abstain::FLAG,
            atlas_core::abstain::share_text(share)
        ),
        _ => value,
    }
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

    /// The values the chart shows, as a table of text cells (its table alternative and CSV export;
    /// the caption is the chart's).
    pub fn table(&self) -> Table {
        let DataTable { header, rows } = self.columns();
        Table::from_texts(self.caption().to_string(), header, rows)
    }

    /// The table's columns, per chart.
    fn columns(&self) -> DataTable {
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
                        row.extend(d.scores.iter().enumerate().map(|(j, s)| {
                            flagged(
                                pct(s.get(m).copied().flatten()),
                                d.flags.get(j).and_then(|f| f.get(m)).copied().flatten(),
                            )
                        }));
                        row.push(flagged(
                            pct(d.pooled.get(m).copied().flatten()),
                            d.pooled_flags.get(m).copied().flatten(),
                        ));
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
                            flagged(
                                num(lo.zip(hi).map(|(a, b)| 100.0 * (b - a)), 2),
                                d.flags.get(m).copied().flatten(),
                            ),
                            flagged(
                                pct(d.pooled.get(m).copied().flatten()),
                                d.pooled_flags.get(m).copied().flatten(),
                            ),
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
                        row.extend(d.ranks.iter().enumerate().map(|(s, r)| {
                            flagged(
                                r.get(m)
                                    .copied()
                                    .flatten()
                                    .map_or(String::new(), |x| x.to_string()),
                                d.flags.get(s).and_then(|f| f.get(m)).copied().flatten(),
                            )
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
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// Keeps the entries of `v` whose `shown` flag is set (all when `shown` is shorter).
pub(crate) fn keep<T: Clone>(v: &[T], shown: &[bool]) -> Vec<T> {
    v.iter()
        .enumerate()
        .filter(|(i, _)| shown.get(*i).copied().unwrap_or(true))
        .map(|(_, x)| x.clone())
        .collect()
}

/// A panel's spec, or why it is not drawn.
pub(crate) type Spec = Memo<Result<ChartSpec, String>>;

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
            .map(|t| crate::ui::table::table_grid(&t, format!("{panel}-table"), None))
    };
    let (stem_png, stem_svg, stem_csv) = (stem.clone(), stem.clone(), stem);
    let png = move |_| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let name = format!("{stem_png}-{panel}.png");
        let report = move |e: DownloadError| {
            error.try_set(Some(format!("The PNG export failed: {e}")));
        };
        if let Err(e) = download_canvas_png(&c, name, report) {
            error.set(Some(format!("The PNG export failed: {e}")));
        }
    };
    let svg = move |_| {
        let result = spec.get_untracked().and_then(|s| s.svg()).and_then(|svg| {
            download_text(&svg, "image/svg+xml", &format!("{stem_svg}-{panel}.svg"))
                .map_err(|e| e.to_string())
        });
        if let Err(e) = result {
            error.set(Some(format!("The SVG export failed: {e}")));
        }
    };
    let csv = move |_| {
        let result = spec
            .get_untracked()
            .map(|s| s.table().to_csv())
            .and_then(|t| {
                download_text(
                    &t,
                    "text/csv;charset=utf-8",
                    &format!("{stem_csv}-{panel}.csv"),
                )
                .map_err(|e| e.to_string())
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
