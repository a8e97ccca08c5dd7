//! Audit Atlas charts. Each chart is one `draw` function generic over the plotters backend: the app
//! draws on a `<canvas>` (plotters-canvas), tests draw to an SVG string natively and count the marks.
//!
//! [`draw_ber_by_model_condition`] is the BER chart of the summary; [`atlas`] holds the evidence-atlas
//! panels of seed `000_…` Figure 4, each returning hover regions ([`atlas::HitRegion`]); [`clinical`] the
//! figures of the clinical perturbation audit (seed `001_…` Figs. 2–6); [`plan_curve`] the Plan view's
//! curve of an audit's predicted error against its budget per design (issue 17).

#![warn(missing_docs)]

pub mod atlas;
pub mod clinical;
pub mod palette;
pub mod panels;
pub mod plan_curve;
pub mod probe;
pub mod spec;

pub use atlas::{hit_index, hit_test, HitRegion, HitResult};
pub use palette::Palette;
pub use spec::ChartSpec;

use atlas::ThemedMesh;
use atlas_core::summary::Summary;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Result of a draw function: a plotters error of the backend, if any.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// The first seven series colours of the light palette ([`Palette::LIGHT`], derived from Okabe–Ito
/// and darkened to 3:1 on white), one colour per condition, cycled. Drawing uses the
/// [`palette::current`] palette's series; these are the colours of a light chart.
pub const PALETTE: [RGBColor; 7] = [
    Palette::LIGHT.series[0],
    Palette::LIGHT.series[1],
    Palette::LIGHT.series[2],
    Palette::LIGHT.series[3],
    Palette::LIGHT.series[4],
    Palette::LIGHT.series[5],
    Palette::LIGHT.series[6],
];

/// Data of the "Selection BER by model and condition" chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BerByModelCondition {
    /// Model labels, top to bottom.
    pub models: Vec<String>,
    /// Condition labels, one bar (and legend entry) each.
    pub conditions: Vec<String>,
    /// `ber[m][c]`: Selection BER of model `m` under condition `c` as a **fraction** in `[0, 1]`;
    /// `None` (no valid Selection) draws no bar.
    pub ber: Vec<Vec<Option<f64>>>,
    /// `abstain[m][c]`: the cell's Abstain share (fraction) when it is above the high-Abstain threshold
    /// (`atlas_core::abstain`), else `None`. A flagged bar is labelled `⚠ NN.N % Abstain` at its end
    /// (text, not colour only). Empty = no flags.
    pub abstain: Vec<Vec<Option<f64>>>,
    /// The legend of the flags under the x axis, e.g. `⚠ = Abstain share above 50 %` (empty = none).
    pub flag_note: String,
    /// Caption, naming the bundle and the repeat policy.
    pub caption: String,
}

impl BerByModelCondition {
    /// The chart of a bundle's [`Summary`]: `models` and `conditions` are the labels (bundle order, as
    /// in `summary.table`), `bundle` the bundle id of the caption (`BUNDLE — repeat policy KEY`); a bar
    /// is flagged when its cell's Abstain share is above `summary.threshold`.
    pub fn from_summary(
        summary: &Summary,
        models: Vec<String>,
        conditions: Vec<String>,
        bundle: &str,
    ) -> Self {
        let cells = |value: &dyn Fn(usize, usize) -> Option<f64>| -> Vec<Vec<Option<f64>>> {
            (0..models.len())
                .map(|m| (0..conditions.len()).map(|c| value(m, c)).collect())
                .collect()
        };
        let ber = cells(&|m, c| summary.table.get(m, c).ber());
        let abstain = cells(&|m, c| {
            let share = summary.table.get(m, c).abstain_share();
            share.filter(|_| summary.threshold.flags(share))
        });
        BerByModelCondition {
            ber,
            abstain,
            flag_note: format!(
                "{} = {}",
                atlas_core::abstain::FLAG,
                summary.threshold.describe()
            ),
            caption: format!("{bundle} — repeat policy {}", summary.policy.key()),
            models,
            conditions,
        }
    }
}

/// Text size of the BER chart's labels and ticks in pixels of the canvas, which the app draws at its
/// CSS width (so 15 px on a 390 px phone; flags 14 px; plotters' SVG export writes sizes ÷ 1.24).
pub const BER_FONT: u32 = 15;
/// Caption size of the BER chart, pixels.
pub const BER_CAPTION_FONT: u32 = 16;
/// Height of one bar, pixels; a model's band holds one bar per condition and a gap.
pub const BER_BAR: u32 = 14;
/// Height of one legend line, pixels.
pub const BER_LEGEND_ROW: u32 = 20;
/// The narrowest and widest widths the BER chart is drawn at, pixels.
pub const BER_WIDTH: (u32, u32) = (300, 1200);

/// Approximate width of `chars` characters of the chart's text, pixels (8 px per character at
/// [`BER_FONT`]).
fn text_px(chars: usize) -> u32 {
    (chars as f64 * 8.0).ceil() as u32
}

impl BerByModelCondition {
    /// The legend's lines at canvas width `width`: condition indices, wrapped so that every entry
    /// (swatch, name) lies inside the canvas.
    pub fn legend_rows(&self, width: u32) -> Vec<Vec<usize>> {
        let room = width.saturating_sub(20).max(60);
        let mut rows: Vec<Vec<usize>> = Vec::new();
        let mut used = 0;
        for c in 0..self.conditions.len() {
            let w = self.legend_entry_width(c, room);
            if rows.is_empty() || used + w > room {
                rows.push(Vec::new());
                used = 0;
            }
            rows.last_mut().expect("a row was pushed").push(c);
            used += w;
        }
        rows
    }

    /// One legend entry's width: swatch, gap, name (cut to fit `room`), spacing.
    fn legend_entry_width(&self, c: usize, room: u32) -> u32 {
        (18 + text_px(self.conditions[c].chars().count()) + 16).min(room)
    }

    /// The canvas size at `width` pixels (clamped to [`BER_WIDTH`]): the height grows with the
    /// legend's lines and with the models (one band of [`BER_BAR`] px per condition each).
    pub fn size_for(&self, width: u32) -> (u32, u32) {
        let w = width.clamp(BER_WIDTH.0, BER_WIDTH.1);
        let legend = self.legend_rows(w).len().max(1) as u32;
        let band = (BER_BAR * self.conditions.len().max(1) as u32 + 12).max(30);
        let h = 34 + legend * BER_LEGEND_ROW + 8 + band * self.models.len().max(1) as u32 + 64;
        (w, h)
    }

    /// The tooltip / keyboard text of model `m` under condition `c`:
    /// `model · condition: Selection BER 13.4 %` (`no valid Selection` without a value), with the
    /// high-Abstain flag when the cell carries one.
    pub fn mark_label(&self, m: usize, c: usize) -> String {
        let ber = self.ber.get(m).and_then(|r| r.get(c)).copied().flatten();
        let mut out = format!(
            "{} · {}: {}",
            self.models[m],
            self.conditions[c],
            match ber {
                Some(_) => format!("Selection BER {}", atlas_core::format::display_percent(ber)),
                None => "no valid Selection".to_string(),
            }
        );
        if let Some(share) = self
            .abstain
            .get(m)
            .and_then(|r| r.get(c))
            .copied()
            .flatten()
        {
            out.push_str(&format!(
                " · {} {} Abstain",
                atlas_core::abstain::FLAG,
                atlas_core::abstain::share_text(share)
            ));
        }
        out
    }
}

/// Draws horizontal grouped bars: one group per model, one bar per condition, x = Selection BER in
/// percent (0–100), laid out for the area's width (see [`BerByModelCondition::size_for`]): the
/// caption, then the legend (wrapped in lines inside the area), then the bars; model labels cut to
/// fit a third of the width (the tooltips and the table keep them whole). One `Rectangle` per
/// defined BER value; one text label `⚠ NN.N % Abstain` beside each bar flagged in
/// [`BerByModelCondition::abstain`] (also a flagged cell without a valid Selection, at 0). Returns
/// one hover region per bar, model by model and condition by condition.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_ber_by_model_condition<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &BerByModelCondition,
) -> atlas::HitResult<DB> {
    root.fill(&palette::current().background)?;
    let (width, _) = root.dim_in_pixel();
    let n_models = data.models.len().max(1);
    let n_cond = data.conditions.len().max(1);
    let ink = palette::current().ink;
    let font = TextStyle::from(("sans-serif", BER_FONT).into_font()).color(&ink);
    // Caption, cut to the width.
    let caption_chars = ((width.saturating_sub(20)) as f64 / 8.5) as usize;
    root.draw(&Text::new(
        panels::shorten(&data.caption, caption_chars.max(10)),
        (10, 8),
        ("sans-serif", BER_CAPTION_FONT).into_font().color(&ink),
    ))?;
    // Legend, wrapped.
    let legend = data.legend_rows(width);
    let room = width.saturating_sub(20).max(60);
    for (r, row) in legend.iter().enumerate() {
        let y = 34 + r as i32 * BER_LEGEND_ROW as i32 + BER_LEGEND_ROW as i32 / 2;
        let mut x = 10i32;
        for &c in row {
            let color = palette::current().series(c);
            root.draw(&Rectangle::new(
                [(x, y - 6), (x + 12, y + 6)],
                color.filled(),
            ))?;
            let w = data.legend_entry_width(c, room);
            let chars = ((w.saturating_sub(34)) as f64 / 8.0) as usize;
            root.draw(&Text::new(
                panels::shorten(&data.conditions[c], chars.max(3)),
                (x + 18, y),
                font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
            x += w as i32;
        }
    }
    let top = 34 + legend.len().max(1) as u32 * BER_LEGEND_ROW + 8;
    let (_, plot) = root.split_vertically(top);
    // Model labels: at most a third of the width.
    let max_chars = ((width as f64 / 3.0) / 8.0) as usize;
    let short: Vec<String> = data
        .models
        .iter()
        .map(|m| panels::shorten(m, max_chars.clamp(6, 32)))
        .collect();
    let label_width = text_px(short.iter().map(|m| m.chars().count()).max().unwrap_or(6)) + 14;
    // On a narrow chart the flag note goes on a line of its own under the axis title (one line would
    // run past the right edge), and the right margin leaves room for the last tick label ("100").
    let narrow = width < 520;
    let note_below = narrow && !data.flag_note.is_empty();
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .margin_top(2)
        .margin_right(if narrow { 22 } else { 16 })
        .x_label_area_size(if note_below { 50 + BER_FONT } else { 50 })
        .y_label_area_size(label_width)
        .build_cartesian_2d(0.0..100.0f64, 0.0..n_models as f64)?;
    let labels = short.clone();
    chart
        .configure_mesh()
        .themed()
        .disable_y_mesh()
        .x_labels(if width < 520 { 6 } else { 11 })
        .x_max_light_lines(1)
        .y_labels(n_models * 2 + 1)
        .label_style(font.clone())
        .axis_desc_style(font.clone())
        .y_label_formatter(&move |y: &f64| {
            // Labels sit at the centre of each model's band (m + 0.5), counted from the top.
            let pos = *y - 0.5;
            let m = pos.round();
            if (pos - m).abs() < atlas_core::tolerance::WHOLE_NUMBER
                && m >= 0.0
                && (m as usize) < labels.len()
            {
                labels[labels.len() - 1 - m as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(if data.flag_note.is_empty() || note_below {
            "Selection BER (%)".to_string()
        } else {
            format!("Selection BER (%) · {}", data.flag_note)
        })
        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
        .draw()?;
    if note_below {
        let (_, height) = root.dim_in_pixel();
        let chars = ((width.saturating_sub(20)) as f64 / 8.0) as usize;
        root.draw(&Text::new(
            panels::shorten(&data.flag_note, chars.max(10)),
            (10, height as i32 - 6),
            font.clone().pos(Pos::new(HPos::Left, VPos::Bottom)),
        ))?;
    }

    let band = 0.8 / n_cond as f64;
    let flag_style = TextStyle::from(("sans-serif", BER_FONT - 1).into_font())
        .color(&ink)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (m, row) in data.abstain.iter().enumerate() {
        for (c, share) in row.iter().enumerate().take(data.conditions.len()) {
            let Some(share) = share else { continue };
            let value = data
                .ber
                .get(m)
                .and_then(|r| r.get(c))
                .copied()
                .flatten()
                .unwrap_or(0.0);
            let top = (n_models - 1 - m.min(n_models - 1)) as f64 + 0.9 - c as f64 * band;
            // Right of the bar, moved inside the plot when the bar is long (further in when narrow).
            let limit = if width < 520 { 55.0 } else { 78.0 };
            let x = (value * 100.0).min(limit) + 1.0;
            chart.draw_series(std::iter::once(Text::new(
                format!("⚠ {:.1} % Abstain", 100.0 * share),
                (x, top - band / 2.0),
                flag_style.clone(),
            )))?;
        }
    }
    let mut regions = Vec::new();
    for c in 0..data.conditions.len() {
        let color = palette::current().series(c);
        let bars: Vec<Rectangle<(f64, f64)>> = data
            .ber
            .iter()
            .enumerate()
            .filter_map(|(m, row)| {
                let value = row.get(c).copied().flatten()?;
                let top = (n_models - 1 - m) as f64 + 0.9 - c as f64 * band;
                Some(Rectangle::new(
                    [(0.0, top - band), (value * 100.0, top)],
                    color.filled(),
                ))
            })
            .collect();
        chart.draw_series(bars)?;
    }
    for m in 0..data.models.len() {
        for c in 0..data.conditions.len() {
            let top = (n_models - 1 - m) as f64 + 0.9 - c as f64 * band;
            let value = data.ber.get(m).and_then(|r| r.get(c)).copied().flatten();
            let a = chart.backend_coord(&(0.0, top));
            let b = chart.backend_coord(&(value.unwrap_or(0.0) * 100.0, top - band));
            let mut region = atlas::HitRegion::corners(a, b, data.mark_label(m, c));
            // A short (or absent) bar is still easy to point at.
            region.x1 = region.x1.max(region.x0 + 8);
            regions.push(region);
        }
    }
    root.present()?;
    Ok(regions)
}
