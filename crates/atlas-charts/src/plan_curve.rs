//! The plan curve (issue 17, "Plan an audit"): a metric of an equal-budget audit against its budget,
//! one line per audit design — the planner's answer to "how large must an audit be, and spread how?"
//! drawn as the curve that [`atlas_core::plan::plan_audit`] computes over its budget grid (the bundle as
//! finite reference, seed `000_…` §3.5, §5.3; each point is RQ2's equal-budget audit at that budget,
//! in the style of seed Table 14's curve).
//!
//! [`PlanCurve`] is the data (adapters [`PlanCurve::mae_p95`], [`PlanCurve::inversions`] and
//! [`PlanCurve::pair_order`] from a [`PlanReport`]); [`draw_plan_curve`] draws it on any plotters
//! backend and returns the hover regions of its points (backend pixels, [`HitRegion`]).

use atlas_core::plan::{Estimate, PlanReport};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::atlas::{
    caption_style, column_labels, fit_caption, text_in, value_range, HitRegion, HitResult,
    LegendPlace, Swatch, ThemedMesh, POINT_HIT, POINT_RADIUS, TICK_FONT,
};
use crate::palette;

/// One design's line of a [`PlanCurve`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCurveSeries {
    /// The design's name as the planner writes it (`concentrated`, `srs`, `stratified`, `balanced`,
    /// `coverage:K'`; [`atlas_core::plan::design_name`]); shown whole in the hover text and the table,
    /// cut with `…` in the legend.
    pub design: String,
    /// `(budget, value)` in increasing budget order: the budget in **responses per model** (the
    /// budget the design reads, `Estimate::budget`), the value in [`PlanCurve::unit`]. `None` (a
    /// budget the design cannot read, or an undefined metric) draws no point and breaks the line.
    /// A budget of 0 draws nothing (the x axis is logarithmic).
    pub points: Vec<(usize, Option<f64>)>,
}

/// The data of the plan curve: one metric of an audit against its budget, one line with markers per
/// design, and an optional target drawn as a dashed horizontal line labelled `target`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCurve {
    /// The metric, without its unit (the y axis title is `METRIC, UNIT`), e.g.
    /// `Score MAE in 95 % of audits`.
    pub metric: String,
    /// The unit of every value and of the target: `pp` (percentage points of a score) or `%` (a
    /// fraction × 100). Never a bare fraction.
    pub unit: String,
    /// One line per design, in the planner's design order (colour and marker by position).
    pub series: Vec<PlanCurveSeries>,
    /// The target, in [`PlanCurve::unit`] (e.g. `2.0` for "score MAE ≤ 2 pp in 95 % of audits");
    /// `None` draws no target line.
    pub target: Option<f64>,
    /// Whether the target is a floor (`≥`, the pair's order right in at least that share of audits)
    /// rather than a ceiling (`≤`, errors and inversions).
    pub higher_is_better: bool,
    /// Notes under the table alternative (e.g. the budgets a design cannot read, with why).
    pub notes: Vec<String>,
    /// Caption drawn above the plot, naming the bundle, repeat policy, weights, seed and draws.
    pub caption: String,
}

/// The default metric of the plan curve: [`Estimate::mae_pp_p95`] (pp).
pub const MAE_P95_METRIC: &str = "Score MAE in 95 % of audits";

impl PlanCurve {
    /// The curve of `value` (already in `unit`) over every design of `report`: per design its
    /// estimates at the budgets they read, and its skipped budgets as missing points (which break
    /// the line), in increasing budget order.
    fn from_report(
        report: &PlanReport,
        metric: &str,
        unit: &str,
        value: impl Fn(&Estimate) -> Option<f64>,
        target: Option<f64>,
        higher_is_better: bool,
    ) -> Self {
        let series = report
            .designs
            .iter()
            .map(|d| {
                let mut points: Vec<(usize, Option<f64>)> = d
                    .estimates
                    .iter()
                    .map(|e| (e.budget, value(e).filter(|v| v.is_finite())))
                    .chain(d.skipped.iter().map(|s| (s.budget, None)))
                    .collect();
                points.sort_by_key(|&(b, _)| b);
                PlanCurveSeries {
                    design: d.design.clone(),
                    points,
                }
            })
            .collect();
        let notes = report
            .designs
            .iter()
            .flat_map(|d| {
                d.skipped
                    .iter()
                    .map(move |s| format!("{} at {}: {}", d.design, s.budget, s.reason))
            })
            .collect();
        let weights = if report.weights.is_some() {
            "custom condition weights"
        } else {
            "equal condition weights (Eq. 4)"
        };
        PlanCurve {
            metric: metric.into(),
            unit: unit.into(),
            series,
            target,
            higher_is_better,
            notes,
            caption: format!(
                "{}: {metric} by budget — repeat policy {}, {weights}, seed {}, {} draws per point",
                report.bundle,
                report.policy.key(),
                report.seed,
                report.draws
            ),
        }
    }

    /// The default curve: per design and budget, the score MAE that 95 % of audits stay under
    /// ([`Estimate::mae_pp_p95`], the 95th percentile of the draw-level MAE), in **pp**; `target_pp`
    /// the MAE target in pp (`Targets::mae_pp`, e.g. `Some(2.0)` for "MAE ≤ 2 pp in 95 % of
    /// audits").
    ///
    /// ```
    /// # use atlas_charts::plan_curve::PlanCurve;
    /// # fn show(report: &atlas_core::plan::PlanReport) {
    /// let curve = PlanCurve::mae_p95(report, report.targets.mae_pp);
    /// let spec = atlas_charts::ChartSpec::PlanCurve(curve);
    /// # let _ = spec; }
    /// ```
    pub fn mae_p95(report: &PlanReport, target_pp: Option<f64>) -> Self {
        Self::from_report(
            report,
            MAE_P95_METRIC,
            "pp",
            |e| e.mae_pp_p95,
            target_pp,
            false,
        )
    }

    /// The mean reference-relative inversion rate per design and budget
    /// (`Estimate::inversion_rate.mean`, a fraction of the compared pairs) in **%**; `target_pct` the
    /// inversion target in % (`Targets::inversion_pct`).
    pub fn inversions(report: &PlanReport, target_pct: Option<f64>) -> Self {
        Self::from_report(
            report,
            "Mean inversions vs reference (of pairs)",
            "%",
            |e| e.inversion_rate.mean.map(|f| 100.0 * f),
            target_pct,
            false,
        )
    }

    /// The probability that an audit orders the chosen pair as the reference does
    /// (`Estimate::pair.probability`, a fraction) in **%**, per design and budget (every point
    /// missing without a pair); `target_pct` the pair target in % (`Targets::pair_pct`, a floor).
    pub fn pair_order(report: &PlanReport, target_pct: Option<f64>) -> Self {
        let metric = match &report.pair {
            Some((a, b)) => format!("Audits ordering {a} and {b} as the reference does"),
            None => "Audits ordering the pair as the reference does".to_string(),
        };
        Self::from_report(
            report,
            &metric,
            "%",
            |e| {
                e.pair
                    .as_ref()
                    .and_then(|p| p.probability)
                    .map(|f| 100.0 * f)
            },
            target_pct,
            true,
        )
    }

    /// The y axis title: `METRIC, UNIT` (`Score MAE in 95 % of audits, pp`).
    pub fn axis_label(&self) -> String {
        format!("{}, {}", self.metric, self.unit)
    }

    /// The target in words: `target: Score MAE in 95 % of audits ≤ 2.0 pp` (`None` without one).
    pub fn target_label(&self) -> Option<String> {
        let t = self.target.filter(|t| t.is_finite())?;
        let rule = if self.higher_is_better { "≥" } else { "≤" };
        Some(format!(
            "target: {} {rule} {}",
            self.metric,
            self.value_text(t)
        ))
    }

    /// A value with one decimal and the unit: `2.0 pp`, `12.5 %`.
    pub fn value_text(&self, v: f64) -> String {
        format!("{v:.1} {}", self.unit)
    }

    /// Every budget of any series (missing points included), increasing and distinct: the rows of
    /// the table alternative.
    pub fn budgets(&self) -> Vec<usize> {
        let mut b: Vec<usize> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|&(b, _)| b))
            .collect();
        b.sort_unstable();
        b.dedup();
        b
    }

    /// The value of series `s` at `budget` (`None`: no point or a missing one).
    pub fn value_at(&self, s: usize, budget: usize) -> Option<f64> {
        self.series
            .get(s)?
            .points
            .iter()
            .find(|&&(b, _)| b == budget)
            .and_then(|&(_, v)| v)
    }
}

/// The marker of design `i`: circle, square, triangle, cycled (shape as well as colour tells the
/// lines apart).
#[derive(Debug, Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
}

fn marker(i: usize) -> Marker {
    [Marker::Circle, Marker::Square, Marker::Triangle][i % 3]
}

fn swatch(i: usize, color: RGBColor) -> Swatch {
    match marker(i) {
        Marker::Circle => Swatch::Circle(color),
        Marker::Square => Swatch::Rect(color),
        Marker::Triangle => Swatch::Triangle(color),
    }
}

/// Characters of a design name in the legend before it is cut with `…`.
const LEGEND_CHARS: usize = 24;

/// Candidate x ticks of the logarithmic budget axis: 1, 2, 5 × 10ⁿ.
fn nice_ticks(lo: f64, hi: f64) -> Vec<usize> {
    (0..8u32)
        .flat_map(|e| [1usize, 2, 5].map(|m| m * 10usize.pow(e)))
        .filter(|&t| (t as f64) >= lo && (t as f64) <= hi)
        .collect()
}

/// Draws the plan curve: x = responses per model on a logarithmic axis (ticks at 1, 2, 5 × 10ⁿ,
/// thinned to fit the width), y = the metric in its unit from 0; per design one polyline through
/// each run of consecutive defined points (a missing point breaks the line; a run of one point is a
/// marker alone) and one marker per defined point (circle, square, triangle, cycled) in the design's
/// series colour ([`palette::current`]); the target as a dashed horizontal line in the muted colour
/// labelled `target` at its right end; the legend (one entry per design) right of the plot, or under
/// it on a narrow chart ([`crate::atlas::NARROW`]). Hover: every point
/// (`srs · 200 responses per model: Score MAE in 95 % of audits 2.3 pp`) and the target line.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_plan_curve<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &PlanCurve,
) -> HitResult<DB> {
    let p = palette::current();
    area.fill(&p.background)?;
    let budgets: Vec<f64> = data
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|&&(b, v)| b > 0 && v.is_some())
        .map(|&(b, _)| b as f64)
        .collect();
    let (b_lo, b_hi) = budgets
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &b| {
            (lo.min(b), hi.max(b))
        });
    let (b_lo, b_hi) = if b_lo.is_finite() {
        (b_lo, b_hi)
    } else {
        (10.0, 1000.0)
    };
    // The x axis holds log10(budget), padded by 5 % of the span (a single budget: ×/÷ 2).
    let (l_lo, l_hi) = (b_lo.log10(), b_hi.log10());
    let pad = if l_hi - l_lo < 0.1 {
        0.3
    } else {
        0.05 * (l_hi - l_lo)
    };
    let x_range = (l_lo - pad)..(l_hi + pad);
    let target = data.target.filter(|t| t.is_finite());
    let y_range = value_range(
        data.series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|&(_, v)| v))
            .chain(target),
    );
    let legend: Vec<(String, Swatch)> = data
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                crate::panels::shorten(&s.design, LEGEND_CHARS),
                swatch(i, p.series(i)),
            )
        })
        .collect();
    let labels: Vec<&String> = legend.iter().map(|(l, _)| l).collect();
    let place = LegendPlace::of(area, &labels);
    let (_, h) = area.dim_in_pixel();
    // The y title runs along the plot's height: ≈ 7 px per character at TICK_FONT.
    let y_chars = ((h.saturating_sub(110 + place.extra_below)) / 7).max(12) as usize;
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .margin_right(place.margin_right)
        .margin_bottom(10 + place.extra_below)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x_range.clone(), y_range)?;
    chart
        .configure_mesh()
        .themed()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("responses per model (budget)")
        .y_desc(crate::panels::shorten(&data.axis_label(), y_chars))
        .draw()?;

    // x ticks: vertical grid lines and labels, thinned so that labels do not overlap.
    let (x_lo, x_hi) = (10f64.powf(x_range.start), 10f64.powf(x_range.end));
    let mut ticks = nice_ticks(x_lo, x_hi);
    if ticks.is_empty() {
        ticks = budgets.iter().map(|&b| b as usize).collect();
        ticks.sort_unstable();
        ticks.dedup();
    }
    let y0 = chart.y_range().start;
    let y1 = chart.y_range().end;
    let mut shown: Vec<(usize, i32)> = Vec::new();
    for &t in &ticks {
        let x = (t as f64).log10();
        let (px, _) = chart.backend_coord(&(x, y0));
        let text = atlas_core::format::thousands(t);
        let half = (text.chars().count() as i32 * 7 + 10) / 2;
        if shown.last().is_some_and(|&(_, last)| px - half < last + 4) {
            continue;
        }
        shown.push((t, px + half));
    }
    chart.draw_series(shown.iter().map(|&(t, _)| {
        let x = (t as f64).log10();
        PathElement::new(vec![(x, y0), (x, y1)], p.grid.stroke_width(1))
    }))?;
    let tick_labels: Vec<String> = shown
        .iter()
        .map(|&(t, _)| atlas_core::format::thousands(t))
        .collect();
    column_labels(area, &tick_labels, |i| {
        chart.backend_coord(&((shown[i].0 as f64).log10(), y0))
    })?;

    let mut hits = Vec::new();
    if let Some(t) = target {
        chart.draw_series(std::iter::once(DashedPathElement::new(
            vec![(x_range.start, t), (x_range.end, t)],
            6,
            4,
            p.muted.stroke_width(2),
        )))?;
        let (right, y) = chart.backend_coord(&(x_range.end, t));
        let (left, _) = chart.backend_coord(&(x_range.start, t));
        let base = area.get_base_pixel();
        area.draw(&Text::new(
            "target".to_string(),
            (right - 4 - base.0, y - 3 - base.1),
            text_in(TICK_FONT, p.muted).pos(Pos::new(HPos::Right, VPos::Bottom)),
        ))?;
        hits.push(HitRegion::corners(
            (left, y - 3),
            (right, y + 3),
            data.target_label().unwrap_or_default(),
        ));
    }

    for (i, s) in data.series.iter().enumerate() {
        let color = p.series(i);
        // Runs of consecutive defined points: a missing point (or budget 0) breaks the line.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        let mut points: Vec<(f64, f64, usize)> = Vec::new();
        for &(b, v) in &s.points {
            match v {
                Some(v) if b > 0 => {
                    let at = ((b as f64).log10(), v);
                    if let Some(run) = runs.last_mut() {
                        run.push(at);
                    }
                    points.push((at.0, at.1, b));
                }
                _ => {
                    if runs.last().is_some_and(|r| !r.is_empty()) {
                        runs.push(Vec::new());
                    }
                }
            }
        }
        chart.draw_series(
            runs.into_iter()
                .filter(|run| run.len() >= 2)
                .map(|run| PathElement::new(run, color.stroke_width(2))),
        )?;
        let style = color.filled();
        match marker(i) {
            Marker::Circle => chart.draw_series(
                points
                    .iter()
                    .map(|&(x, y, _)| Circle::new((x, y), POINT_RADIUS, style)),
            )?,
            Marker::Square => chart.draw_series(points.iter().map(|&(x, y, _)| {
                EmptyElement::at((x, y))
                    + Rectangle::new(
                        [(-POINT_RADIUS, -POINT_RADIUS), (POINT_RADIUS, POINT_RADIUS)],
                        style,
                    )
            }))?,
            Marker::Triangle => chart.draw_series(
                points
                    .iter()
                    .map(|&(x, y, _)| TriangleMarker::new((x, y), POINT_RADIUS + 2, style)),
            )?,
        };
        for &(x, y, b) in &points {
            hits.push(HitRegion::around(
                chart.backend_coord(&(x, y)),
                POINT_HIT,
                format!(
                    "{} · {} responses per model: {} {}",
                    s.design,
                    atlas_core::format::thousands(b),
                    data.metric,
                    data.value_text(y)
                ),
            ));
        }
    }
    let top_right = chart.backend_coord(&(x_range.end, y1));
    let bottom_left = chart.backend_coord(&(x_range.start, y0));
    place.draw(area, top_right, bottom_left, 40, &legend)?;
    area.present()?;
    Ok(hits)
}
