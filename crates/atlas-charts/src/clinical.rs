//! Figures of the clinical perturbation audit (seed `001_…`, "Beyond Accuracy"): one draw function per
//! chart type, generic over the plotters backend and fed by a plain data struct, like [`crate::atlas`].
//!
//! | figure | data | draw function | seed |
//! | --- | --- | --- | --- |
//! | CFV by model (and by difficulty tier) | [`RateBars`] | [`draw_rate_bars`] | Fig. 2, §4.2 |
//! | failure modes of invalid counterfactuals by model | [`StackedBars`] | [`draw_stacked_bars`] | Fig. 3, Table 6 |
//! | answer-change rate, model × demographic prefix | [`HeatMap`] | [`draw_heat_map`] | Fig. 4, §4.4 |
//! | direction of answer changes by model | [`StackedBars`] | [`draw_stacked_bars`] | Fig. 5, §4.5 |
//! | stereotype evidence categories | [`StackedBars`] | [`draw_stacked_bars`] | Fig. 6, §4.6 |
//!
//! Rates arrive as counts ([`Proportion`]: `k` of `n`) and are drawn in percent (0–100), so every hover
//! label can say both the rate and its denominator in the seed's unit (attempts, comparisons). Every
//! draw function returns the [`HitRegion`]s of its marks in backend pixels, as the atlas panels do.
//!
//! [`figures`] builds each figure's data from the clinical metrics ([`figures::ClinicalFigures`]).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::atlas::{
    caption_style, column_labels, fit_caption, fit_columns, fitted_labels, is_narrow, label_room,
    label_width, row_labels, text_in, text_style, ticks, HitRegion, HitResult, LegendPlace, Swatch,
    ThemedMesh,
};
pub use crate::atlas::{draw_stacked_bars, StackScale, StackedBars};
use crate::palette::{self, Palette};
use crate::PALETTE;

pub mod figures;

/// `k` of `n`: a count and its denominator (e.g. valid counterfactuals of attempts, changed answers of
/// comparisons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proportion {
    /// The count.
    pub k: u64,
    /// Its denominator.
    pub n: u64,
}

impl Proportion {
    /// `k / n` as a **fraction**; `None` when `n` is 0.
    pub fn rate(self) -> Option<f64> {
        (self.n > 0).then(|| self.k as f64 / self.n as f64)
    }

    /// `33.33% (1 of 3)`, or `— (0 of 0)`.
    pub fn describe(self) -> String {
        match self.rate() {
            Some(r) => format!("{:.2}% ({} of {})", 100.0 * r, self.k, self.n),
            None => format!("— ({} of {})", self.k, self.n),
        }
    }
}

/// Colours of the invalid counterfactual outcomes in the order of `atlas_core::clinical::CfvOutcome::ALL`
/// without `valid` (Table 6's order: same direction, too dramatic, circular, format failure, then
/// implausible and wrong target), Okabe–Ito.
pub const FAILURE_COLORS: [RGBColor; 6] = [
    PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[4], PALETTE[5],
];

/// Colours of the directions of an answer change in the order of `atlas_core::clinical::Direction::ALL`
/// (more aggressive, less aggressive, lateral, unknown; seed §4.5, Fig. 5): vermillion, blue,
/// yellow-orange, grey.
pub const DIRECTION_COLORS: [RGBColor; 4] =
    [PALETTE[5], PALETTE[0], PALETTE[1], Palette::LIGHT.muted];

// --------------------------------------------------------------------------- rate bars

/// Grouped horizontal bars of rates: one group per row (model), one bar per series (e.g. all questions,
/// then each difficulty tier).
#[derive(Debug, Clone, PartialEq)]
pub struct RateBars {
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Series labels, one bar (and legend entry) each, top to bottom within a group.
    pub series: Vec<String>,
    /// `values[r][s]`: the rate of row `r` in series `s`; `None` or `n = 0` draws no bar.
    pub values: Vec<Vec<Option<Proportion>>>,
    /// The x axis' description (units included), e.g. `CFV (% of attempts)`.
    pub axis_label: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// Draws [`RateBars`]: x = rate in percent (0–100), one filled rectangle per defined rate in its series
/// colour ([`PALETTE`], cycled) with its value written at its end (`33% (1/3)`), a legend when there is
/// more than one series. Hover: each bar, as `ROW · SERIES: 33.33% (1 of 3)`.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_rate_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RateBars,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n = data.rows.len().max(1);
    let n_series = data.series.len().max(1);
    let with_legend = data.series.len() > 1;
    let place = with_legend.then(|| LegendPlace::of(area, &data.series));
    let (label_area, rows) = fitted_labels(&data.rows, label_room(area));
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .margin_bottom(10 + place.as_ref().map_or(0, |p| p.extra_below))
        .x_label_area_size(36)
        .y_label_area_size(label_area);
    if let Some(p) = &place {
        builder.margin_right(p.margin_right);
    } else {
        // Room for the value written after a full bar ("100% (n/n)").
        builder.margin_right(if is_narrow(area) { 14 } else { 10 });
    }
    let mut chart = builder.build_cartesian_2d(0.0..100.0f64, 0.0..n as f64)?;
    chart
        .configure_mesh()
        .themed()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(ticks(area))
        .x_desc(data.axis_label.as_str())
        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
        .draw()?;
    row_labels(area, &rows, |i| {
        chart.backend_coord(&(0.0, (n - 1 - i) as f64 + 0.5))
    })?;
    let band = 0.8 / n_series as f64;
    let base = area.get_base_pixel();
    let mut hits = Vec::new();
    let mut labels = Vec::new();
    for (s, series) in data.series.iter().enumerate() {
        let color = palette::current().series(s);
        let mut bars = Vec::new();
        for (r, row) in data.rows.iter().enumerate() {
            let Some(p) = data.values.get(r).and_then(|v| v.get(s)).copied().flatten() else {
                continue;
            };
            let Some(rate) = p.rate() else { continue };
            let top = (n - 1 - r) as f64 + 0.9 - s as f64 * band;
            let a = (0.0, top - band);
            let b = (100.0 * rate, top);
            let (pa, pb) = (chart.backend_coord(&a), chart.backend_coord(&b));
            // A zero rate still gets a 3-pixel hover target at the axis.
            let pb = (pb.0.max(pa.0 + 3), pb.1);
            hits.push(HitRegion::corners(
                pa,
                pb,
                format!("{row} · {series}: {}", p.describe()),
            ));
            bars.push(Rectangle::new([a, b], color.filled()));
            // The value at the bar's end: inside a long bar in white, else just right of it.
            let inside = rate > 0.55;
            let y_mid = (pa.1 + pb.1) / 2 - base.1;
            let (x, anchor, ink) = if inside {
                (
                    pb.0 - 4 - base.0,
                    HPos::Right,
                    palette::current().text_on(color),
                )
            } else {
                (pb.0 + 4 - base.0, HPos::Left, palette::current().ink)
            };
            labels.push(Text::new(
                format!("{:.0}% ({}/{})", 100.0 * rate, p.k, p.n),
                (x, y_mid),
                text_in(11, ink).pos(Pos::new(anchor, VPos::Center)),
            ));
        }
        chart.draw_series(bars)?;
    }
    for label in labels {
        area.draw(&label)?;
    }
    if with_legend {
        let legend: Vec<(String, Swatch)> = data
            .series
            .iter()
            .enumerate()
            .map(|(s, l)| (l.clone(), Swatch::Rect(palette::current().series(s))))
            .collect();
        if let Some(p) = &place {
            p.draw(
                area,
                chart.backend_coord(&(100.0, n as f64)),
                chart.backend_coord(&(0.0, 0.0)),
                36,
                &legend,
            )?;
        }
    }
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- heat map

/// A rate per row × column as a heat map (seed Fig. 4: answer-change rate per model × demographic
/// prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    /// Row labels (models), top to bottom.
    pub rows: Vec<String>,
    /// Column labels (prefixes), left to right.
    pub columns: Vec<String>,
    /// `cells[r][c]`: the rate of row `r` in column `c`; `None` or `n = 0` is drawn in [`HEAT_EMPTY`] grey with a dash.
    pub cells: Vec<Vec<Option<Proportion>>>,
    /// What the rate is, for the hover text, e.g. `answer change`.
    pub measure: String,
    /// The unit of `n`, e.g. `comparisons`.
    pub unit: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// Stops of the sequential heat-map scale (0%, 25%, 50%, 75%, 100%): light yellow to dark brown
/// (ColorBrewer YlOrBr, readable with the common colour-vision deficiencies).
pub const HEAT_STOPS: [RGBColor; 5] = [
    RGBColor(255, 255, 229),
    RGBColor(254, 217, 118),
    RGBColor(254, 153, 41),
    RGBColor(204, 76, 2),
    RGBColor(102, 37, 6),
];

/// Colour of a cell without a rate: the light palette's grid colour (drawn as the current palette's,
/// [`palette::themed`]).
pub const HEAT_EMPTY: RGBColor = Palette::LIGHT.grid;

/// The heat-map colour of a rate (fraction, clamped to `[0, 1]`): linear between [`HEAT_STOPS`].
pub fn heat_color(rate: f64) -> RGBColor {
    let x = if rate.is_finite() {
        rate.clamp(0.0, 1.0)
    } else {
        0.0
    } * (HEAT_STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(HEAT_STOPS.len() - 2);
    let t = x - i as f64;
    let (a, b) = (HEAT_STOPS[i], HEAT_STOPS[i + 1]);
    let mix = |p: u8, q: u8| (f64::from(p) + t * (f64::from(q) - f64::from(p))).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Draws a [`HeatMap`]: one filled square per cell in [`heat_color`] (or [`HEAT_EMPTY`]), its rate in
/// whole percent written in it, row labels left, column labels below (on two alternating lines when they
/// are wider than a column), and a colour key at the right.
/// Returns one hover region per cell, **row-major** (`r · columns + c`), so the region index names the
/// cell, as `ROW · COLUMN: MEASURE 33.33% (1 of 3 UNIT)`.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_heat_map<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &HeatMap,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n_rows = data.rows.len().max(1);
    let n_cols = data.columns.len().max(1);
    let key_labels = ["100%", "50%", "0%"];
    // Column labels wider than a column (about 7 px per character) alternate between two lines.
    let (w, _) = area.dim_in_pixel();
    let (label_area, rows) = fitted_labels(&data.rows, label_room(area));
    let plot_width = w as i32 - 20 - label_area as i32 - label_width(&key_labels) as i32 - 30;
    let widest = data
        .columns
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0) as i32
        * 7;
    let stagger = widest > plot_width / n_cols as i32 - 6;
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .margin_right(label_width(&key_labels) + 30)
        .x_label_area_size(if stagger { 44 } else { 30 })
        .y_label_area_size(label_area)
        .build_cartesian_2d(0.0..n_cols as f64, 0.0..n_rows as f64)?;
    chart
        .configure_mesh()
        .themed()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .draw()?;
    row_labels(area, &rows, |i| {
        chart.backend_coord(&(0.0, (n_rows - 1 - i) as f64 + 0.5))
    })?;
    // A staggered label may use two columns' width (its neighbours sit on the other line).
    let spacing = chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
    let columns = fit_columns(&data.columns, spacing * if stagger { 2 } else { 1 } - 6);
    column_labels(area, &columns, |j| {
        let (x, y) = chart.backend_coord(&(j as f64 + 0.5, 0.0));
        (x, if stagger && j % 2 == 1 { y + 15 } else { y })
    })?;
    let base = area.get_base_pixel();
    // The rate in a cell: 13 px, 11 px in a narrow column, none where even that does not fit ("100%"
    // is ≈ 28 px at 11 px; the hover text and the table keep every value).
    let cell_font = match spacing {
        s if s >= 40 => Some(13),
        s if s >= 30 => Some(11),
        _ => None,
    };
    let mut hits = Vec::new();
    for (r, row) in data.rows.iter().enumerate() {
        for (c, column) in data.columns.iter().enumerate() {
            let p = data.cells.get(r).and_then(|v| v.get(c)).copied().flatten();
            let rate = p.and_then(Proportion::rate);
            let y = (n_rows - 1 - r) as f64;
            let a = (c as f64 + 0.03, y + 0.05);
            let b = (c as f64 + 0.97, y + 0.95);
            let fill = rate.map_or(palette::themed(HEAT_EMPTY), heat_color);
            chart.draw_series(std::iter::once(Rectangle::new([a, b], fill.filled())))?;
            let centre = chart.backend_coord(&(c as f64 + 0.5, y + 0.5));
            let text = rate.map_or("—".to_string(), |x| format!("{:.0}%", 100.0 * x));
            let ink = palette::current().text_on(fill);
            if let Some(size) = cell_font {
                area.draw(&Text::new(
                    text,
                    (centre.0 - base.0, centre.1 - base.1),
                    text_in(size, ink).pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
            let label = match p {
                Some(p) if p.n > 0 => format!(
                    "{row} · {column}: {} {:.2}% ({} of {} {})",
                    data.measure,
                    100.0 * p.rate().unwrap_or(0.0),
                    p.k,
                    p.n,
                    data.unit
                ),
                _ => format!("{row} · {column}: no {}", data.unit),
            };
            hits.push(HitRegion::corners(
                chart.backend_coord(&a),
                chart.backend_coord(&b),
                label,
            ));
        }
    }
    // Colour key: ten steps from 0% (bottom) to 100% (top) right of the plot.
    let top = chart.backend_coord(&(n_cols as f64, n_rows as f64));
    let bottom = chart.backend_coord(&(n_cols as f64, 0.0));
    let (x0, x1) = (top.0 + 12 - base.0, top.0 + 26 - base.0);
    let height = (bottom.1 - top.1).max(10);
    let steps = 10;
    for i in 0..steps {
        let y1 = bottom.1 - base.1 - height * i / steps;
        let y0 = bottom.1 - base.1 - height * (i + 1) / steps;
        let rate = (i as f64 + 0.5) / steps as f64;
        area.draw(&Rectangle::new(
            [(x0, y0), (x1, y1)],
            heat_color(rate).filled(),
        ))?;
    }
    let style = text_style(12).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, label) in key_labels.iter().enumerate() {
        let y = top.1 - base.1 + height * k as i32 / 2;
        area.draw(&Text::new(label.to_string(), (x1 + 4, y), style.clone()))?;
    }
    area.present()?;
    Ok(hits)
}
