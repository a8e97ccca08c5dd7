//! Chart specs: the data of one chart panel ([`ChartSpec`]) with everything the app's chart panel
//! needs besides the canvas — the draw function it dispatches to, the caption, the canvas size, the
//! table alternative ([`ChartSpec::table`], a text-cell `atlas_core::tables::Table`, also the CSV
//! export) and the SVG export. The tables read in the app's display units (`atlas_core::format`,
//! issue 15 item 5): a fraction as a percentage with one decimal (`13.4 %`, under a `(%)` header), a
//! difference in percentage points as `+1.2 pp` (a `(pp)` header), counts with thousands separators
//! (`28,162`), ranks as they are, `—` for no value; a high-Abstain value carries its flag as text
//! (`13.4 % ⚠ Abstain 80.8 %`, `atlas_core::abstain`). Every numeric cell also holds its unrounded
//! value in its header's unit (the percentage, the points, the count), which the CSV export writes
//! (`atlas_core::tables::table_csv`: `71.42857142857143` under `Selection BER (%)`) and the table
//! sorts by.

use atlas_core::format::{display_percent, display_points, number, thousands_u64};
use atlas_core::tables::{Cell, Table};
use plotters::coord::Shift;
use plotters::prelude::{
    DrawingArea, DrawingAreaErrorKind, DrawingBackend, IntoDrawingArea, SVGBackend,
};

use crate::atlas::{
    draw_coverage_curve, draw_design_distributions, draw_pair_flips, draw_rank_paths,
    draw_rationale_composition, draw_score_ranges, draw_selection_vs_rationale,
    draw_wording_scores, BoxStats, CoverageCurve, DesignDistributions, FlipStatus, PairFlips,
    RankPaths, RationaleComposition, ScoreRanges, SelectionVsRationale, WordingScores,
};
use crate::clinical::{
    draw_heat_map, draw_rate_bars, draw_stacked_bars, HeatMap, Proportion, RateBars, StackedBars,
};
use crate::palette::Palette;
use crate::plan_curve::{draw_plan_curve, PlanCurve};
use crate::HitResult;

/// The narrowest width a panel is drawn at, pixels (a 320-px phone's chart container).
pub const MIN_WIDTH: u32 = 280;

/// The data of one chart panel of the app: an evidence atlas panel (seed `000_…` Figure 4, Table 14)
/// or a clinical figure (seed `001_…` Figs. 2–6), with its draw function, caption, canvas size, table
/// alternative and SVG export.
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
    /// The main chart of the summary: Selection BER by model and condition (seed `000_…` §3.3),
    /// drawn at its container's width.
    BerBars(crate::BerByModelCondition),
    /// Plan an audit (issue 17): a metric of an equal-budget audit against its budget, one line per
    /// design, with the target ([`PlanCurve`], seed `000_…` §5.3, in the style of Table 14's curve).
    PlanCurve(PlanCurve),
}

/// The columns of a chart's table alternative, before they become the one table model
/// ([`ChartSpec::table`]): a header and rows of text.
#[derive(Debug, Clone, PartialEq)]
struct DataTable {
    /// Column headings.
    header: Vec<String>,
    /// One row per line of the table; the first cell is the row header.
    rows: Vec<Vec<Cell>>,
}

/// A numeric cell: `text` with the unrounded `value` (`—` alone and no value for `None`).
fn valued(text: String, value: Option<f64>) -> Cell {
    match value.filter(|v| v.is_finite()) {
        Some(v) => Cell {
            text,
            key: None,
            value: Some(v.to_string()),
        },
        None => Cell::none(),
    }
}

/// A fraction as `13.4 %` ([`display_percent`]); its value in the `(%)` header's unit, the
/// unrounded percentage (`100 × fraction`), so the CSV reads `71.42857142857143` under `… (%)`.
fn pct(v: Option<f64>) -> Cell {
    valued(display_percent(v), v.map(|x| 100.0 * x))
}

/// A number with `decimals` decimals (values already in a header's unit: ranks, pp, %).
fn num(v: Option<f64>, decimals: usize) -> Cell {
    valued(number(v, decimals), v)
}

/// A count with thousands separators (`28,162`).
fn count(n: u64) -> Cell {
    valued(thousands_u64(n), Some(n as f64))
}

/// A row header or other text cell.
fn text(t: impl Into<String>) -> Cell {
    Cell::text(t)
}

/// A table value with its high-Abstain flag: `13.4 % ⚠ Abstain 80.8 %` (the value alone when `flag`
/// is `None` or the cell has no value; see `atlas_core::abstain`). A flagged cell keeps only its text,
/// so the CSV export writes the flag with the number (never the number alone); it sorts by the number
/// its text starts with (`atlas_core::tables::SortKey`).
fn flagged(mut cell: Cell, flag: Option<f64>) -> Cell {
    if let (Some(share), Some(_)) = (flag, &cell.value) {
        cell.text = format!(
            "{} {} Abstain {}",
            cell.text,
            atlas_core::abstain::FLAG,
            atlas_core::abstain::share_text(share)
        );
        cell.value = None;
    }
    cell
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
            ChartSpec::BerBars(d) => crate::draw_ber_by_model_condition(area, d),
            ChartSpec::PlanCurve(d) => draw_plan_curve(area, d),
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
            ChartSpec::BerBars(d) => &d.caption,
            ChartSpec::PlanCurve(d) => &d.caption,
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
            ChartSpec::Distributions(_) | ChartSpec::Coverage(_) | ChartSpec::PlanCurve(_) => {
                (900, 380)
            }
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
            ChartSpec::BerBars(d) => d.size_for(860),
        }
    }

    /// Whether the panel follows its container's width ([`ChartSpec::size_for`]): every panel does
    /// (issue 15 item 7: text ≥ 11 CSS px on a 390-px phone), so the app measures every container.
    pub fn responsive(&self) -> bool {
        true
    }

    /// The legend lines a panel draws under its plot when it is narrower than
    /// [`crate::atlas::NARROW`] (0 for a panel without a legend).
    fn legend_entries(&self) -> usize {
        match self {
            ChartSpec::WordingScores(d) => d.wordings.len() + 1,
            ChartSpec::PairFlips(..) => 5,
            ChartSpec::Composition(d) => d.classes.len(),
            ChartSpec::Stacked(d) => d.classes.len(),
            ChartSpec::RateBars(d) if d.series.len() > 1 => d.series.len(),
            ChartSpec::PlanCurve(d) => d.series.len(),
            ChartSpec::ScoreRanges(_)
            | ChartSpec::RankPaths(_)
            | ChartSpec::Distributions(_)
            | ChartSpec::SelectionVsRationale(_)
            | ChartSpec::Coverage(_)
            | ChartSpec::RateBars(_)
            | ChartSpec::HeatMap(_)
            | ChartSpec::BerBars(_) => 0,
        }
    }

    /// The canvas size when the container is `width` CSS pixels wide (`None`: not measured yet,
    /// [`ChartSpec::size`]). The app draws the canvas at that size, one canvas pixel per CSS pixel,
    /// so the text keeps its drawn size (≥ 11 px) on a phone.
    ///
    /// The main BER chart lays itself out for the width ([`crate::BerByModelCondition::size_for`],
    /// 300–1,200 px). Every other panel is drawn at the container's width, at most its
    /// [`ChartSpec::size`] width and at least [`MIN_WIDTH`]; below [`crate::atlas::NARROW`] it puts
    /// its legend under the plot, so the height grows by [`crate::atlas::legend_below_height`].
    ///
    /// ```
    /// use atlas_charts::spec::{ChartSpec, MIN_WIDTH};
    /// use atlas_charts::atlas::CoverageCurve;
    /// let spec = ChartSpec::Coverage(CoverageCurve {
    ///     k: vec![1, 2], mean: vec![Some(1.0), Some(0.5)], range: vec![None, None],
    ///     axis_label: "score MAE (pp)".into(), caption: "demo".into(),
    /// });
    /// assert_eq!(spec.size_for(None), (900, 380));
    /// assert_eq!(spec.size_for(Some(350)), (350, 380));
    /// assert_eq!(spec.size_for(Some(2000)), (900, 380));
    /// assert_eq!(spec.size_for(Some(100)).0, MIN_WIDTH);
    /// ```
    pub fn size_for(&self, width: Option<u32>) -> (u32, u32) {
        match (self, width) {
            (ChartSpec::BerBars(d), Some(w)) => d.size_for(w),
            (_, None) => self.size(),
            (_, Some(w)) => {
                let (natural, h) = self.size();
                let w = w.clamp(MIN_WIDTH, natural.max(MIN_WIDTH));
                let extra = if w < crate::atlas::NARROW {
                    crate::atlas::legend_below_height(self.legend_entries())
                } else {
                    0
                };
                (w, h + extra)
            }
        }
    }

    /// Draws the panel in `palette` ([`crate::palette::with_palette`]) and returns its hover
    /// regions — what the app does with the palette its theme's CSS properties give.
    ///
    /// # Errors
    /// Whatever the backend reports.
    pub fn draw_themed<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        palette: &Palette,
    ) -> HitResult<DB> {
        crate::palette::with_palette(palette, || self.draw(area))
    }

    /// The values the chart shows, as a table of text cells (its table alternative and CSV export,
    /// `Table::to_csv`; the caption is the chart's).
    pub fn table(&self) -> Table {
        let DataTable { header, rows } = self.columns();
        Table {
            id: String::new(),
            title: String::new(),
            caption: self.caption().to_string(),
            header,
            rows,
            notes: self.notes(),
        }
    }

    /// The notes under the table alternative: the plan curve's target in words and the budgets its
    /// designs cannot read; none for the other panels.
    fn notes(&self) -> Vec<String> {
        match self {
            ChartSpec::PlanCurve(d) => d
                .target_label()
                .into_iter()
                .chain(d.notes.clone())
                .collect(),
            _ => Vec::new(),
        }
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
                        let mut row = vec![text(id.clone())];
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
                        let range = lo.zip(hi).map(|(a, b)| 100.0 * (b - a));
                        vec![
                            text(id.clone()),
                            pct(lo),
                            pct(hi),
                            flagged(
                                valued(display_points(range), range),
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
                        let mut row = vec![text(id.clone())];
                        row.extend(d.ranks.iter().enumerate().map(|(s, r)| {
                            let rank = r.get(m).copied().flatten();
                            flagged(
                                valued(rank.map_or(String::new(), |x| x.to_string()), rank),
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
                            text(name(j)),
                            text(name(i)),
                            text(pair.map_or(FlipStatus::Stable, |p| p.status).describe()),
                            text(pair.map_or(String::new(), |p| p.detail.clone())),
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
                            text(design.clone()),
                            count(s.as_ref().map_or(0, |s| s.n as u64)),
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
                            text(id.clone()),
                            pct(d.selection.get(m).copied().flatten()),
                            pct(d.rationale.get(m).copied().flatten()),
                        ]
                    })
                    .collect(),
            },
            ChartSpec::Composition(d) => {
                count_table("model", "labels", &d.models, &d.classes, |m| {
                    let counts = d.counts.get(m).cloned().unwrap_or_default();
                    let total = counts.iter().sum();
                    (counts, total)
                })
            }
            ChartSpec::RateBars(d) => {
                proportion_table(&d.rows, d.series.iter().cloned(), |r, s| {
                    d.values.get(r).and_then(|v| v.get(s)).copied().flatten()
                })
            }
            ChartSpec::Stacked(d) => count_table("", "total", &d.rows, &d.classes, |r| {
                let counts = d.counts.get(r).cloned().unwrap_or_default();
                let cells = (0..d.classes.len())
                    .map(|k| counts.get(k).copied().unwrap_or(0))
                    .collect();
                (cells, counts.iter().sum())
            }),
            ChartSpec::HeatMap(d) => proportion_table(
                &d.rows,
                d.columns.iter().map(|c| format!("{c}: {}", d.measure)),
                |r, c| d.cells.get(r).and_then(|v| v.get(c)).copied().flatten(),
            ),
            ChartSpec::BerBars(d) => {
                let mut header = vec!["model".to_string()];
                header.extend(d.conditions.iter().map(|c| format!("{c} (%)")));
                let rows = d
                    .models
                    .iter()
                    .enumerate()
                    .map(|(m, id)| {
                        let mut row = vec![text(id.clone())];
                        row.extend((0..d.conditions.len()).map(|c| {
                            flagged(
                                pct(d.ber.get(m).and_then(|r| r.get(c)).copied().flatten()),
                                d.abstain.get(m).and_then(|r| r.get(c)).copied().flatten(),
                            )
                        }));
                        row
                    })
                    .collect();
                DataTable { header, rows }
            }
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
                            count(*k as u64),
                            num(d.mean.get(i).copied().flatten(), 3),
                            num(r.map(|r| r.0), 3),
                            num(r.map(|r| r.1), 3),
                        ]
                    })
                    .collect(),
            },
            ChartSpec::PlanCurve(d) => {
                let mut header = vec!["responses per model".to_string()];
                header.extend(
                    d.series
                        .iter()
                        .map(|s| format!("{}: {} ({})", s.design, d.metric, d.unit)),
                );
                let rows = d
                    .budgets()
                    .into_iter()
                    .map(|b| {
                        let mut row = vec![count(b as u64)];
                        row.extend((0..d.series.len()).map(|s| num(d.value_at(s, b), 1)));
                        row
                    })
                    .collect();
                DataTable { header, rows }
            }
        }
    }

    /// The chart as an SVG document of [`ChartSpec::size`] (the same draw function on plotters' SVG
    /// backend).
    ///
    /// # Errors
    /// The drawing error of the SVG backend.
    pub fn svg(&self) -> Result<String, DrawingAreaErrorKind<std::io::Error>> {
        self.svg_sized(self.size())
    }

    /// The chart as an SVG document of `size` pixels (the size the app drew it at: a responsive
    /// panel's [`ChartSpec::size_for`]).
    ///
    /// # Errors
    /// The drawing error of the SVG backend.
    pub fn svg_sized(
        &self,
        size: (u32, u32),
    ) -> Result<String, DrawingAreaErrorKind<std::io::Error>> {
        self.svg_themed(size, &Palette::LIGHT)
    }

    /// The chart as an SVG document of `size` pixels in `palette` (the export of what the screen
    /// shows: the app passes the palette it drew the canvas with).
    ///
    /// # Errors
    /// The drawing error of the SVG backend.
    pub fn svg_themed(
        &self,
        size: (u32, u32),
        palette: &Palette,
    ) -> Result<String, DrawingAreaErrorKind<std::io::Error>> {
        let mut out = String::new();
        {
            let backend = SVGBackend::with_string(&mut out, size);
            let root = backend.into_drawing_area();
            self.draw_themed(&root, palette)?;
        }
        Ok(out)
    }

    /// The smallest text the panel draws at `size` pixels, in pixels ([`crate::probe::FontProbe`]
    /// on the SVG backend; `None` when it draws no text). The app reads the same probe on its canvas.
    ///
    /// # Errors
    /// The drawing error of the SVG backend.
    pub fn min_font_px(
        &self,
        size: (u32, u32),
    ) -> Result<Option<f64>, DrawingAreaErrorKind<std::io::Error>> {
        let mut out = String::new();
        let min = {
            let (probe, min) =
                crate::probe::FontProbe::new(SVGBackend::with_string(&mut out, size));
            let root = probe.into_drawing_area();
            self.draw(&root)?;
            min
        };
        Ok(min.get())
    }
}

/// A table of counts by class: a header `corner`, the classes and `total`; per row its label, the
/// cells and the total that `row(r)` gives.
fn count_table(
    corner: &str,
    total: &str,
    labels: &[String],
    classes: &[String],
    row: impl Fn(usize) -> (Vec<u64>, u64),
) -> DataTable {
    let mut header = vec![corner.to_string()];
    header.extend(classes.iter().cloned());
    header.push(total.into());
    let rows = labels
        .iter()
        .enumerate()
        .map(|(r, label)| {
            let (cells, sum) = row(r);
            let mut line = vec![text(label.clone())];
            line.extend(cells.iter().map(|&c| count(c)));
            line.push(count(sum));
            line
        })
        .collect();
    DataTable { header, rows }
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
            let mut row = vec![text(label.clone())];
            for c in 0..columns {
                let p = get(r, c);
                row.push(pct(p.and_then(Proportion::rate)));
                row.push(text(p.map_or(String::new(), |p| {
                    format!("{} of {}", thousands_u64(p.k), thousands_u64(p.n))
                })));
            }
            row
        })
        .collect();
    DataTable { header, rows }
}
