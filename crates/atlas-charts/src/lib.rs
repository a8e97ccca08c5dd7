//! Audit Atlas charts. Each chart is one `draw` function generic over the plotters backend: the app
//! draws on a `<canvas>` (plotters-canvas), tests draw to an SVG string natively and count the marks.
//!
//! [`draw_ber_by_model_condition`] is the BER chart of the summary; [`atlas`] holds the evidence-atlas
//! panels of seed `000_…` Figure 4, each returning hover regions ([`atlas::HitRegion`]); [`clinical`] the
//! figures of the clinical perturbation audit (seed `001_…` Figs. 2–6).

#![warn(missing_docs)]

pub mod atlas;
pub mod clinical;
pub mod panels;
pub mod spec;

pub use atlas::{hit_index, hit_test, HitRegion, HitResult};
pub use spec::ChartSpec;

use atlas_core::summary::Summary;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Result of a draw function: a plotters error of the backend, if any.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Colour-blind-safe palette (Okabe–Ito), one colour per condition, cycled.
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
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

/// Draws horizontal grouped bars: one group per model, one bar per condition, x = Selection BER in
/// percent (0–100). One `Rectangle` per defined BER value; one text label `⚠ NN.N % Abstain` beside each
/// bar flagged in [`BerByModelCondition::abstain`] (also a flagged cell without a valid Selection,
/// at 0).
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_ber_by_model_condition<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &BerByModelCondition,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let n_models = data.models.len().max(1);
    let n_cond = data.conditions.len().max(1);
    let label_width = data
        .models
        .iter()
        .map(|m| m.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 32) as u32
        * 7
        + 10;
    let mut chart = ChartBuilder::on(root)
        .caption(&data.caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(label_width)
        .build_cartesian_2d(0.0..100.0f64, 0.0..n_models as f64)?;
    let models = data.models.clone();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_labels(11)
        .x_max_light_lines(1)
        .y_labels(n_models * 2 + 1)
        .y_label_formatter(&move |y: &f64| {
            // Labels sit at the centre of each model's band (m + 0.5), counted from the top.
            let pos = *y - 0.5;
            let m = pos.round();
            if (pos - m).abs() < atlas_core::tolerance::WHOLE_NUMBER
                && m >= 0.0
                && (m as usize) < models.len()
            {
                models[models.len() - 1 - m as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(if data.flag_note.is_empty() {
            "Selection BER (%)".to_string()
        } else {
            format!("Selection BER (%) · {}", data.flag_note)
        })
        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
        .draw()?;

    let band = 0.8 / n_cond as f64;
    let flag_style = TextStyle::from(("sans-serif", 11).into_font())
        .color(&BLACK)
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
            // Right of the bar, moved inside the plot when the bar is long.
            let x = (value * 100.0).min(78.0) + 1.0;
            chart.draw_series(std::iter::once(Text::new(
                format!("⚠ {:.1} % Abstain", 100.0 * share),
                (x, top - band / 2.0),
                flag_style.clone(),
            )))?;
        }
    }
    for c in 0..data.conditions.len() {
        let color = PALETTE[c % PALETTE.len()];
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
        chart
            .draw_series(bars)?
            .label(data.conditions[c].clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}
