//! The evidence atlas (seed `000_…` Figure 4, and Figures 3, 5 and Table 14 that it draws on): one draw
//! function per panel, each generic over the plotters backend and fed by a plain data struct, so the app
//! draws it on a canvas and the tests draw it to SVG natively.
//!
//! | panel | data | draw function | seed |
//! | --- | --- | --- | --- |
//! | (a) Selection score per wording per model | [`WordingScores`] | [`draw_wording_scores`] | Fig. 4a, Fig. 3/5, Table 9 |
//! | (b) per-model score ranges | [`ScoreRanges`] | [`draw_score_ranges`] | Fig. 3b/5b ("5.0–14.0 pp model score ranges") |
//! | (c) rank paths across wordings or conditions | [`RankPaths`] | [`draw_rank_paths`] | Fig. 3c/5c, Fig. 4c |
//! | (d) model pairs whose ordering flips | [`PairFlips`] | [`draw_pair_flips`] | Fig. 4d, Table 11 ("9 of 28 model pairs") |
//! | (e)/(f) per-draw score error and inversions per design | [`DesignDistributions`] | [`draw_design_distributions`] | Fig. 4e/f, Table 13 |
//! | (g) model-level Selection vs Rationale BER | [`SelectionVsRationale`] | [`draw_selection_vs_rationale`] | Fig. 4g |
//! | (h) five-class Rationale composition | [`RationaleComposition`] | [`draw_rationale_composition`] | Fig. 4h, §3.3 |
//! | K-condition coverage curve | [`CoverageCurve`] | [`draw_coverage_curve`] | Table 14 |
//!
//! Conventions: rates arrive as **fractions** and are drawn in percent (0–100); values already in
//! percentage points say so in their field name (`_pp`). `None` draws nothing. Every draw function
//! fills its area white, draws, presents, and returns the [`HitRegion`]s of its marks — rectangles in
//! **backend pixel coordinates** (those of the canvas or SVG as a whole, also when `area` is a split
//! part of it) with the text to show on hover; [`hit_test`] picks the one under a pointer.
//!
//! Adapters build the data from the core's reports: `from_rq1` ([`atlas_core::rq1`]), `rq2_*`
//! ([`atlas_core::rq2::Rq2Report`]) and `across_conditions` / `from_reweighted`
//! ([`atlas_core::reweight`]). Panels (g) and (h) have none: the core has no Rationale BER or label
//! composition yet, so the caller fills them.

use atlas_core::resample::percentiles;
use atlas_core::reweight::{ReweightBasis, Reweighted};
use atlas_core::rq1::{ConditionReversals, WordingRankStability};
use atlas_core::rq2::{DesignResult, Rq2Report};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::palette::{self, Palette};

/// The result of an atlas draw function: the hover regions of the marks, or a backend error.
pub type HitResult<DB> =
    Result<Vec<HitRegion>, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// One model colour per model in the light palette ([`Palette::LIGHT`]'s series: [`crate::PALETTE`]
/// and a dark grey, 8 models), cycled; drawing uses the [`palette::current`] palette's series.
pub const MODEL_PALETTE: [RGBColor; 8] = Palette::LIGHT.series;

/// Colour of reference marks (pooled score, equality diagonal) in the light palette
/// ([`Palette::muted`]); drawing uses the [`palette::current`] palette's.
pub const REFERENCE_COLOR: RGBColor = Palette::LIGHT.muted;

/// A rectangle of a drawn mark, in backend pixel coordinates (`x0 ≤ x1`, `y0 ≤ y1`, inclusive), and the
/// value to show when the pointer is over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitRegion {
    /// Left edge (pixels).
    pub x0: i32,
    /// Top edge (pixels).
    pub y0: i32,
    /// Right edge (pixels, inclusive).
    pub x1: i32,
    /// Bottom edge (pixels, inclusive).
    pub y1: i32,
    /// What the mark shows, in words and numbers (e.g. `model-a · wording 2: 12.50%`).
    pub label: String,
}

impl HitRegion {
    pub(crate) fn corners(a: (i32, i32), b: (i32, i32), label: String) -> Self {
        HitRegion {
            x0: a.0.min(b.0),
            y0: a.1.min(b.1),
            x1: a.0.max(b.0),
            y1: a.1.max(b.1),
            label,
        }
    }

    pub(crate) fn around(center: (i32, i32), radius: i32, label: String) -> Self {
        HitRegion {
            x0: center.0 - radius,
            y0: center.1 - radius,
            x1: center.0 + radius,
            y1: center.1 + radius,
            label,
        }
    }

    /// Whether pixel `(x, y)` lies in the region (edges included).
    pub fn contains(&self, x: i32, y: i32) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }

    fn area(&self) -> i64 {
        i64::from(self.x1 - self.x0 + 1) * i64::from(self.y1 - self.y0 + 1)
    }
}

/// The region under pixel `(x, y)`: of those containing it, the smallest (a point over the box it sits
/// in); among equals the one drawn last (on top). `None` when the pointer is over no mark.
pub fn hit_test(regions: &[HitRegion], x: i32, y: i32) -> Option<&HitRegion> {
    hit_index(regions, x, y).map(|i| &regions[i])
}

/// The index in `regions` of the region [`hit_test`] picks under pixel `(x, y)` (for charts whose marks
/// can be activated, e.g. the answer-change heat map's cells).
pub fn hit_index(regions: &[HitRegion], x: i32, y: i32) -> Option<usize> {
    regions
        .iter()
        .enumerate()
        .filter(|(_, r)| r.contains(x, y))
        .min_by_key(|(i, r)| (r.area(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// Half-size of a point mark's hover region, pixels.
pub(crate) const POINT_HIT: i32 = 5;
/// Radius of a point mark, pixels.
pub(crate) const POINT_RADIUS: i32 = 4;

fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

fn model_color(m: usize) -> RGBColor {
    palette::current().series(m)
}

/// Text size of axis tick labels and axis titles, pixels of the backend (the app draws at CSS pixels).
pub const TICK_FONT: u32 = 12;
/// Text size of a chart's caption, pixels.
pub const CAPTION_FONT: u32 = 16;

/// The caption's style: [`CAPTION_FONT`] in the current palette's ink.
pub(crate) fn caption_style() -> TextStyle<'static> {
    text_style(CAPTION_FONT)
}

/// Sans-serif text of `size` pixels in the [`palette::current`] ink.
pub(crate) fn text_style(size: u32) -> TextStyle<'static> {
    text_in(size, palette::current().ink)
}

/// Sans-serif text of `size` pixels in `color`.
pub(crate) fn text_in(size: u32, color: RGBColor) -> TextStyle<'static> {
    TextStyle {
        font: ("sans-serif", size).into_font(),
        color: color.to_backend_color(),
        pos: Pos::default(),
    }
}

/// The caption cut to the area's width (≈ 9.5 px per character at [`CAPTION_FONT`], a wide
/// estimate: the caption is centred and must not run past either edge) with an ellipsis; the full
/// caption stays in the canvas's `data-caption`, the table and the exports.
pub(crate) fn fit_caption<DB: DrawingBackend>(
    caption: &str,
    area: &DrawingArea<DB, Shift>,
) -> String {
    let (w, _) = area.dim_in_pixel();
    crate::panels::shorten(caption, ((f64::from(w) - 20.0) / 9.5).max(10.0) as usize)
}

/// The themed mesh: grid lines in [`Palette::grid`], axes, tick labels and axis titles in
/// [`Palette::ink`] at [`TICK_FONT`] (plotters' defaults are black).
pub(crate) trait ThemedMesh {
    /// Applies the [`palette::current`] palette to the mesh.
    fn themed(&mut self) -> &mut Self;
}

impl<
        X: plotters::coord::ranged1d::Ranged,
        Y: plotters::coord::ranged1d::Ranged,
        DB: DrawingBackend,
    > ThemedMesh for plotters::chart::MeshStyle<'_, '_, X, Y, DB>
{
    fn themed(&mut self) -> &mut Self {
        let p = palette::current();
        let font = || text_in(TICK_FONT, p.ink);
        self.bold_line_style(p.grid)
            .light_line_style(p.grid.mix(0.4))
            .axis_style(p.ink)
            .label_style(font())
            .axis_desc_style(font())
    }
}

/// Width of a label area for `labels` at ~7 px per character.
pub(crate) fn label_width<S: AsRef<str>>(labels: &[S]) -> u32 {
    labels
        .iter()
        .map(|m| m.as_ref().chars().count())
        .max()
        .unwrap_or(8)
        .clamp(6, 32) as u32
        * 7
        + 12
}

/// Charts narrower than this many pixels put their legend under the plot, cap their label areas
/// (`fitted_labels`) and draw fewer ticks (`ticks`): the app draws every chart at its
/// container's width, 1 canvas pixel per CSS pixel, so a 390-px phone gets ≈ 350-px charts.
pub const NARROW: u32 = 560;

/// Whether `area` is narrower than [`NARROW`].
pub(crate) fn is_narrow<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> bool {
    area.dim_in_pixel().0 < NARROW
}

/// The widest a row-label area may be on `area`: a third of the width on a narrow chart, 236 px
/// (32 characters) otherwise.
pub(crate) fn label_room<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> u32 {
    if is_narrow(area) {
        area.dim_in_pixel().0 / 3
    } else {
        label_width(&["x".repeat(32)])
    }
}

/// `labels` cut (with an ellipsis, [`crate::panels::shorten`]) to fit `room` pixels at ~7 px per
/// character, and the label area's width for them; the hover text and the table keep them whole.
pub(crate) fn fitted_labels<S: AsRef<str>>(labels: &[S], room: u32) -> (u32, Vec<String>) {
    let chars = (room.saturating_sub(12) / 7).max(4) as usize;
    let cut: Vec<String> = labels
        .iter()
        .map(|l| crate::panels::shorten(l.as_ref(), chars))
        .collect();
    (label_width(&cut).min(room.max(40)), cut)
}

/// How many x ticks a numeric axis gets: 5 on a narrow chart, 10 otherwise.
pub(crate) fn ticks<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> usize {
    if is_narrow(area) {
        5
    } else {
        10
    }
}

/// Height of a legend of `entries` lines drawn under the plot on a narrow chart (18 px a line).
pub fn legend_below_height(entries: usize) -> u32 {
    if entries == 0 {
        0
    } else {
        18 * entries as u32 + 10
    }
}

/// Where a legend goes: right of the plot (wide) with its right margin, or under it (narrow) with
/// the extra height of the x label area and the legend entries cut to the width.
pub(crate) struct LegendPlace {
    /// Under the plot (narrow chart) rather than right of it.
    pub below: bool,
    /// The chart's right margin, pixels.
    pub margin_right: u32,
    /// Extra bottom margin for the legend under the x axis title, pixels.
    pub extra_below: u32,
}

impl LegendPlace {
    /// The place of a legend of `labels` on `area`.
    pub(crate) fn of<DB: DrawingBackend, S: AsRef<str>>(
        area: &DrawingArea<DB, Shift>,
        labels: &[S],
    ) -> Self {
        if is_narrow(area) {
            LegendPlace {
                below: true,
                margin_right: 14,
                extra_below: legend_below_height(labels.len()),
            }
        } else {
            LegendPlace {
                below: false,
                margin_right: legend_width(labels),
                extra_below: 0,
            }
        }
    }

    /// Draws `entries` right of the plot's top-right corner `top_right`, or under the plot from its
    /// bottom-left corner `bottom_left` past the x axis labels (`axis` pixels), cut to the width.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        top_right: (i32, i32),
        bottom_left: (i32, i32),
        axis: i32,
        entries: &[(String, Swatch)],
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        if !self.below {
            return draw_legend(area, top_right, entries);
        }
        let (w, _) = area.dim_in_pixel();
        let chars = ((w as i32 - 40).max(40) / 7) as usize;
        let cut: Vec<(String, Swatch)> = entries
            .iter()
            .map(|(l, s)| (crate::panels::shorten(l, chars), *s))
            .collect();
        let base = area.get_base_pixel();
        draw_legend(area, (base.0 + 8 - 12, bottom_left.1 + axis), &cut)
    }
}

/// A percent axis range covering `values` (fractions) with a margin, within 0–100.
fn percent_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(100.0 * v), hi.max(100.0 * v))
        });
    if !lo.is_finite() {
        return 0.0..100.0;
    }
    let lo = ((lo - 2.0) / 5.0).floor() * 5.0;
    let hi = ((hi + 2.0) / 5.0).ceil() * 5.0;
    lo.max(0.0)..hi.min(100.0).max(lo.max(0.0) + 5.0)
}

/// A value axis range covering `values` with 5% headroom, including 0.
pub(crate) fn value_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((0.0f64, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !hi.is_finite() || hi <= lo {
        return lo..lo + 1.0;
    }
    let pad = 0.05 * (hi - lo);
    (if lo < 0.0 { lo - pad } else { lo })..hi + pad
}

/// Right-aligned row labels left of the plot, at the centres of rows `0..labels.len()` counted from the
/// top of a `0..n` y axis (row `i` spans `n − 1 − i .. n − i`).
pub(crate) fn row_labels<DB: DrawingBackend, S: AsRef<str>>(
    area: &DrawingArea<DB, Shift>,
    labels: &[S],
    at: impl Fn(usize) -> (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let base = area.get_base_pixel();
    let style = text_style(13).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, label) in labels.iter().enumerate() {
        let (x, y) = at(i);
        area.draw(&Text::new(
            label.as_ref().to_string(),
            (x - 6 - base.0, y - base.1),
            style.clone(),
        ))?;
    }
    Ok(())
}

/// Centred column labels under the plot at the pixel positions `at(i)` (the bottom edge of the plot at
/// the column's centre).
pub(crate) fn column_labels<DB: DrawingBackend, S: AsRef<str>>(
    area: &DrawingArea<DB, Shift>,
    labels: &[S],
    at: impl Fn(usize) -> (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let base = area.get_base_pixel();
    let style = text_style(12).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, label) in labels.iter().enumerate() {
        let (x, y) = at(i);
        area.draw(&Text::new(
            label.as_ref().to_string(),
            (x - base.0, y + 5 - base.1),
            style.clone(),
        ))?;
    }
    Ok(())
}

/// Column labels cut to `spacing` pixels each (≈ 7 px per character, at least 3 characters), so
/// that neighbours do not overlap on a narrow chart; the hover text keeps them whole.
pub(crate) fn fit_columns<S: AsRef<str>>(labels: &[S], spacing: i32) -> Vec<String> {
    let chars = (spacing.max(0) / 7).max(3) as usize;
    labels
        .iter()
        .map(|l| crate::panels::shorten(l.as_ref(), chars))
        .collect()
}

/// Labels only the whole numbers of an axis (ranks, K′).
pub(crate) fn whole(v: &f64) -> String {
    if (v - v.round()).abs() < atlas_core::tolerance::WHOLE_NUMBER {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// The glyph that marks a high-Abstain number (always with its share in the hover text and the table:
/// never colour alone).
pub const FLAG: &str = "⚠";

/// The hover-text suffix of a flagged mark: ` · ⚠ Abstain 80.8 %` (empty for `None`).
fn flag_suffix(flag: Option<f64>) -> String {
    flag.map_or_else(String::new, |s| {
        format!(" · {FLAG} Abstain {:.1} %", 100.0 * s)
    })
}

/// Draws [`FLAG`] `dx` pixels right of backend pixel `at`.
fn draw_flag<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    dx: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let base = area.get_base_pixel();
    let style = text_style(12).pos(Pos::new(HPos::Left, VPos::Center));
    area.draw(&Text::new(
        FLAG.to_string(),
        (at.0 + dx - base.0, at.1 - base.1),
        style,
    ))
}

/// Draws `note` (the meaning of [`FLAG`]) in the bottom-left corner of `area` when `any` flag is drawn.
fn draw_flag_note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    note: &str,
    any: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if !any || note.is_empty() {
        return Ok(());
    }
    let (w, h) = area.dim_in_pixel();
    let style = text_style(11).pos(Pos::new(HPos::Left, VPos::Bottom));
    // ≈ 6 px per character at 11 px; the hover text names the flag's share in full.
    let chars = ((w as usize).saturating_sub(8) / 6).max(10);
    area.draw(&Text::new(
        crate::panels::shorten(note, chars),
        (4, h as i32 - 2),
        style,
    ))
}

/// Extra height of the x label area when a flag note is drawn under it.
fn note_room(note: &str, any: bool) -> u32 {
    if any && !note.is_empty() {
        14
    } else {
        0
    }
}

/// `values[i]`, flattened (`None` out of range).
fn flag_at(values: &[Option<f64>], i: usize) -> Option<f64> {
    values.get(i).copied().flatten()
}

/// The flags of a list of scores: the largest flagged cell share of each (`None` when not flagged), from
/// the Abstain records against `threshold`.
pub fn flags_of(
    records: &[atlas_core::ScoreAbstain],
    threshold: atlas_core::AbstainThreshold,
) -> Vec<Option<f64>> {
    records
        .iter()
        .map(|a| {
            a.flagged(threshold)
                .iter()
                .filter_map(|c| c.share)
                .reduce(f64::max)
        })
        .collect()
}

/// The note under a panel with flags: `⚠ = Abstain share above 50 % in a cell the mark rests on`.
pub fn flag_note(threshold: atlas_core::AbstainThreshold) -> String {
    format!(
        "{FLAG} = {} in a cell the mark rests on (the BiAxisBias paper §B.2)",
        threshold.describe()
    )
}

/// A legend entry's mark.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    Circle(RGBColor),
    Rect(RGBColor),
    Cross(RGBColor),
    /// A small dot (radius 3).
    Dot(RGBColor),
    /// A filled triangle (the third marker shape of the plan curve).
    Triangle(RGBColor),
}

/// Width of the right margin that holds a legend of `labels`.
pub(crate) fn legend_width<S: AsRef<str>>(labels: &[S]) -> u32 {
    label_width(labels) + 30
}

/// A legend drawn from backend pixel `top_left` down, one entry per 18 px: its mark, then its text.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    top_left: (i32, i32),
    entries: &[(String, Swatch)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let base = area.get_base_pixel();
    let style = text_style(12).pos(Pos::new(HPos::Left, VPos::Center));
    let x = top_left.0 - base.0 + 12;
    for (k, (label, swatch)) in entries.iter().enumerate() {
        let y = top_left.1 - base.1 + 8 + 18 * k as i32;
        match *swatch {
            Swatch::Circle(c) => area.draw(&Circle::new((x + 6, y), POINT_RADIUS, c.filled()))?,
            Swatch::Rect(c) => {
                area.draw(&Rectangle::new([(x, y - 6), (x + 12, y + 6)], c.filled()))?
            }
            Swatch::Cross(c) => area.draw(&Cross::new((x + 6, y), 6, c.stroke_width(2)))?,
            Swatch::Dot(c) => area.draw(&Circle::new((x + 6, y), 3, c.filled()))?,
            Swatch::Triangle(c) => area.draw(&TriangleMarker::new(
                (x + 6, y),
                POINT_RADIUS + 2,
                c.filled(),
            ))?,
        }
        area.draw(&Text::new(label.clone(), (x + 18, y), style.clone()))?;
    }
    Ok(())
}

// --------------------------------------------------------------------------- (a) wording scores

/// Panel (a): each model's Selection score under each wording, and the pooled (all-wording) score.
#[derive(Debug, Clone, PartialEq)]
pub struct WordingScores {
    /// Model labels, top to bottom.
    pub models: Vec<String>,
    /// Wording labels (legend), one colour each.
    pub wordings: Vec<String>,
    /// `scores[j][m]`: model `m`'s score under wording `j`, a fraction (as
    /// [`WordingRankStability::scores`]).
    pub scores: Vec<Vec<Option<f64>>>,
    /// Pooled (Eq. 4) score per model, a fraction; drawn as a grey cross.
    pub pooled: Vec<Option<f64>>,
    /// `flags[j][m]`: the largest Abstain share above the threshold among the cells `scores[j][m]`
    /// averages, or `None` (not flagged); a flagged mark gets [`FLAG`] beside it. Empty = no flags.
    pub flags: Vec<Vec<Option<f64>>>,
    /// The same for the pooled scores.
    pub pooled_flags: Vec<Option<f64>>,
    /// What [`FLAG`] means (drawn under the plot when a flag is drawn).
    pub flag_note: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

impl WordingScores {
    /// From RQ1's rank-stability analysis (`Rq1Report::rank_stability`); `models` = the bundle's model
    /// ids (or labels) in bundle order. Flags at the default Abstain threshold.
    pub fn from_rq1(models: &[String], r: &WordingRankStability, caption: String) -> Self {
        let threshold = atlas_core::AbstainThreshold::default();
        WordingScores {
            models: models.to_vec(),
            wordings: (1..=r.scores.len())
                .map(|j| format!("wording {j}"))
                .collect(),
            scores: r.scores.clone(),
            pooled: r.pooled.clone(),
            flags: r.abstain.iter().map(|a| flags_of(a, threshold)).collect(),
            pooled_flags: flags_of(&r.pooled_abstain, threshold),
            flag_note: flag_note(threshold),
            caption,
        }
    }
}

/// Draws panel (a): one row per model, x = score in percent; one filled circle per defined (wording,
/// model) score in the wording's colour (rows dodged by wording), a grey cross at the pooled score, and
/// a legend (one circle per wording, one cross). A flagged mark ([`WordingScores::flags`]) gets [`FLAG`]
/// right of it and its share in the hover text; the note says what it means. Hover: every circle and
/// cross.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_wording_scores<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &WordingScores,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n = data.models.len().max(1);
    let x_range = percent_range(
        data.scores
            .iter()
            .flatten()
            .chain(&data.pooled)
            .filter_map(|v| *v),
    );
    let mut legend: Vec<(String, Swatch)> = data
        .wordings
        .iter()
        .enumerate()
        .map(|(j, w)| (w.clone(), Swatch::Circle(palette::current().series(j))))
        .collect();
    legend.push((
        "pooled (Eq. 4)".into(),
        Swatch::Cross(palette::current().muted),
    ));
    let labels: Vec<&String> = legend.iter().map(|(l, _)| l).collect();
    let any_flag = data
        .flags
        .iter()
        .flatten()
        .chain(&data.pooled_flags)
        .any(Option::is_some);
    let place = LegendPlace::of(area, &labels);
    let (label_area, models) = fitted_labels(&data.models, label_room(area));
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .margin_right(place.margin_right)
        // Under a narrow chart: the axis title, then the legend, then the flag note.
        .margin_bottom(
            10 + place.extra_below
                + if place.below {
                    note_room(&data.flag_note, any_flag)
                } else {
                    0
                },
        )
        .x_label_area_size(
            36 + if place.below {
                0
            } else {
                note_room(&data.flag_note, any_flag)
            },
        )
        .y_label_area_size(label_area)
        .build_cartesian_2d(x_range, 0.0..n as f64)?;
    chart
        .configure_mesh()
        .themed()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(ticks(area))
        .x_desc("Selection score (%)")
        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
        .draw()?;
    row_labels(area, &models, |i| {
        chart.backend_coord(&(chart.x_range().start, (n - 1 - i) as f64 + 0.5))
    })?;
    let mut hits = Vec::new();
    let k = data.wordings.len().max(1);
    let band = 0.7 / k as f64;
    for (j, wording) in data.wordings.iter().enumerate() {
        let color = palette::current().series(j);
        let mut points = Vec::new();
        for (m, model) in data.models.iter().enumerate() {
            let Some(v) = data.scores.get(j).and_then(|s| s.get(m)).copied().flatten() else {
                continue;
            };
            let y = (n - 1 - m) as f64 + 0.85 - (j as f64 + 0.5) * band;
            let at = (100.0 * v, y);
            let flag = data.flags.get(j).and_then(|f| flag_at(f, m));
            hits.push(HitRegion::around(
                chart.backend_coord(&at),
                POINT_HIT,
                format!("{model} · {wording}: {}{}", pct(v), flag_suffix(flag)),
            ));
            if flag.is_some() {
                draw_flag(area, chart.backend_coord(&at), POINT_RADIUS + 2)?;
            }
            points.push(Circle::new(at, POINT_RADIUS, color.filled()));
        }
        chart.draw_series(points)?;
    }
    let mut crosses = Vec::new();
    for (m, model) in data.models.iter().enumerate() {
        let Some(v) = data.pooled.get(m).copied().flatten() else {
            continue;
        };
        let at = (100.0 * v, (n - 1 - m) as f64 + 0.5);
        let flag = flag_at(&data.pooled_flags, m);
        hits.push(HitRegion::around(
            chart.backend_coord(&at),
            POINT_HIT + 1,
            format!("{model} · pooled (Eq. 4): {}{}", pct(v), flag_suffix(flag)),
        ));
        if flag.is_some() {
            draw_flag(area, chart.backend_coord(&at), 8)?;
        }
        crosses.push(Cross::new(at, 6, palette::current().muted.stroke_width(2)));
    }
    chart.draw_series(crosses)?;
    let top_right = chart.backend_coord(&(chart.x_range().end, n as f64));
    let bottom_left = chart.backend_coord(&(chart.x_range().start, 0.0));
    place.draw(area, top_right, bottom_left, 36, &legend)?;
    draw_flag_note(area, &data.flag_note, any_flag)?;
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- (b) score ranges

/// Panel (b): each model's range of scores across wordings (or any set of variants) and its pooled
/// score.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreRanges {
    /// Model labels, top to bottom.
    pub models: Vec<String>,
    /// Lowest and highest score per model (fractions); a bar needs both.
    pub min: Vec<Option<f64>>,
    /// Highest score per model (fraction).
    pub max: Vec<Option<f64>>,
    /// Pooled score per model (fraction), drawn as a grey cross.
    pub pooled: Vec<Option<f64>>,
    /// Per model: the largest flagged Abstain share among the wordings' scores the bar spans, or
    /// `None`; a flagged bar gets [`FLAG`] after its range text. Empty = no flags.
    pub flags: Vec<Option<f64>>,
    /// The same for the pooled scores (a [`FLAG`] beside the cross).
    pub pooled_flags: Vec<Option<f64>>,
    /// What [`FLAG`] means (drawn under the plot when a flag is drawn).
    pub flag_note: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

impl ScoreRanges {
    /// From RQ1's rank-stability analysis: min and max over the wordings' scores of each model. Flags
    /// at the default Abstain threshold.
    pub fn from_rq1(models: &[String], r: &WordingRankStability, caption: String) -> Self {
        let threshold = atlas_core::AbstainThreshold::default();
        let per_wording: Vec<Vec<Option<f64>>> =
            r.abstain.iter().map(|a| flags_of(a, threshold)).collect();
        let over = |m: usize, pick: fn(f64, f64) -> f64| {
            r.scores
                .iter()
                .filter_map(|s| s.get(m).copied().flatten())
                .reduce(pick)
        };
        ScoreRanges {
            models: models.to_vec(),
            min: (0..models.len()).map(|m| over(m, f64::min)).collect(),
            max: (0..models.len()).map(|m| over(m, f64::max)).collect(),
            pooled: r.pooled.clone(),
            flags: (0..models.len())
                .map(|m| {
                    per_wording
                        .iter()
                        .filter_map(|f| flag_at(f, m))
                        .reduce(f64::max)
                })
                .collect(),
            pooled_flags: flags_of(&r.pooled_abstain, threshold),
            flag_note: flag_note(threshold),
            caption,
        }
    }
}

/// Draws panel (b): one horizontal bar per model from its lowest to its highest score (percent), a
/// grey cross at the pooled score and the range in pp as text right of the bar. Hover: each bar (range
/// and ends) and each cross.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_score_ranges<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &ScoreRanges,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n = data.models.len().max(1);
    let x_range = percent_range(
        data.min
            .iter()
            .chain(&data.max)
            .chain(&data.pooled)
            .filter_map(|v| *v),
    );
    let x_end = x_range.end;
    let any_flag = data
        .flags
        .iter()
        .chain(&data.pooled_flags)
        .any(Option::is_some);
    let (label_area, models) = fitted_labels(&data.models, label_room(area));
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .x_label_area_size(36 + note_room(&data.flag_note, any_flag))
        .y_label_area_size(label_area)
        .margin_right(80)
        .build_cartesian_2d(x_range, 0.0..n as f64)?;
    chart
        .configure_mesh()
        .themed()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(ticks(area))
        .x_desc("Selection score (%), lowest to highest")
        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
        .draw()?;
    row_labels(area, &models, |i| {
        chart.backend_coord(&(chart.x_range().start, (n - 1 - i) as f64 + 0.5))
    })?;
    let color = palette::current().series(0);
    let mut hits = Vec::new();
    let mut bars = Vec::new();
    let mut crosses = Vec::new();
    let base = area.get_base_pixel();
    let text = text_style(12).pos(Pos::new(HPos::Left, VPos::Center));
    for (m, model) in data.models.iter().enumerate() {
        let y = (n - 1 - m) as f64;
        if let (Some(lo), Some(hi)) = (
            data.min.get(m).copied().flatten(),
            data.max.get(m).copied().flatten(),
        ) {
            let a = (100.0 * lo, y + 0.3);
            let b = (100.0 * hi, y + 0.7);
            let flag = flag_at(&data.flags, m);
            let label = format!(
                "{:.2} pp{}",
                100.0 * (hi - lo),
                if flag.is_some() { " ⚠" } else { "" }
            );
            hits.push(HitRegion::corners(
                chart.backend_coord(&a),
                chart.backend_coord(&b),
                format!(
                    "{model}: range {label} ({} – {}){}",
                    pct(lo),
                    pct(hi),
                    flag_suffix(flag)
                ),
            ));
            bars.push(Rectangle::new([a, b], color.mix(0.6).filled()));
            let (px, py) = chart.backend_coord(&(x_end, y + 0.5));
            area.draw(&Text::new(
                label,
                (px + 6 - base.0, py - base.1),
                text.clone(),
            ))?;
        }
        if let Some(p) = data.pooled.get(m).copied().flatten() {
            let at = (100.0 * p, y + 0.5);
            let flag = flag_at(&data.pooled_flags, m);
            hits.push(HitRegion::around(
                chart.backend_coord(&at),
                POINT_HIT + 1,
                format!("{model} · pooled (Eq. 4): {}{}", pct(p), flag_suffix(flag)),
            ));
            if flag.is_some() {
                draw_flag(area, chart.backend_coord(&at), 8)?;
            }
            crosses.push(Cross::new(at, 6, palette::current().muted.stroke_width(2)));
        }
    }
    chart.draw_series(bars)?;
    chart.draw_series(crosses)?;
    draw_flag_note(area, &data.flag_note, any_flag)?;
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- (c) rank paths

/// Panel (c): each model's rank across a sequence of steps (wordings, then pooled; or conditions).
#[derive(Debug, Clone, PartialEq)]
pub struct RankPaths {
    /// Model labels (colour = [`MODEL_PALETTE`] by position).
    pub models: Vec<String>,
    /// Step labels, left to right.
    pub steps: Vec<String>,
    /// `ranks[step][m]`: average rank (1 = best in the bundle's direction); `None` = no rank at that
    /// step.
    pub ranks: Vec<Vec<Option<f64>>>,
    /// `flags[step][m]`: the largest Abstain share above the threshold among the cells the rank rests
    /// on, or `None`; a flagged rank gets [`FLAG`] beside its circle. Empty = no flags.
    pub flags: Vec<Vec<Option<f64>>>,
    /// What [`FLAG`] means (drawn under the plot when a flag is drawn).
    pub flag_note: String,
    /// The y axis title, e.g. `rank (1 = lowest score)` ([`atlas_core::Direction::rank_one`]).
    pub rank_axis: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// `rank (1 = lowest score)` for a direction.
fn rank_axis(direction: atlas_core::ScoreDirection) -> String {
    let one = direction.direction.rank_one();
    format!("rank ({})", one.strip_prefix("rank ").unwrap_or(&one))
}

impl RankPaths {
    /// Ranks per wording, then the pooled ranking as the last step (seed Fig. 3c / 5c). Flags at the
    /// default Abstain threshold.
    pub fn from_rq1(models: &[String], r: &WordingRankStability, caption: String) -> Self {
        let threshold = atlas_core::AbstainThreshold::default();
        let mut steps: Vec<String> = (1..=r.ranks.len()).map(|j| format!("W{j}")).collect();
        steps.push("pooled".into());
        let mut ranks = r.ranks.clone();
        ranks.push(r.pooled_ranks.clone());
        let mut flags: Vec<Vec<Option<f64>>> =
            r.abstain.iter().map(|a| flags_of(a, threshold)).collect();
        flags.push(flags_of(&r.pooled_abstain, threshold));
        RankPaths {
            models: models.to_vec(),
            steps,
            ranks,
            flags,
            flag_note: flag_note(threshold),
            rank_axis: rank_axis(r.direction),
            caption,
        }
    }

    /// Ranks of the condition means `ȳ_{m,c}` under each Selection condition (the inner means of
    /// Eq. 4), in bundle order, then the equal-weight (Eq. 4) ranking (seed Fig. 4c: paths across
    /// controlled procedures). Ranks in the bundle's direction; flags against
    /// [`ReweightBasis::abstain_threshold`] (a condition's rank rests on its one cell, the Eq. 4 rank on
    /// the reference cells).
    pub fn across_conditions(basis: &ReweightBasis, caption: String) -> Self {
        let models = basis.models().to_vec();
        let direction = basis.direction();
        let threshold = basis.abstain_threshold();
        let mut steps = Vec::new();
        let mut ranks = Vec::new();
        let mut flags = Vec::new();
        for (c, cond) in basis.conditions().iter().enumerate() {
            if !cond.has_selection {
                continue;
            }
            steps.push(cond.id.clone());
            let scores: Vec<Option<f64>> = (0..models.len())
                .map(|m| basis.condition_mean(m, c))
                .collect();
            ranks.push(direction.direction.ranks(&scores));
            flags.push(
                (0..models.len())
                    .map(|m| {
                        let share = basis.counts(m, c).abstain_share();
                        share.filter(|_| threshold.flags(share))
                    })
                    .collect(),
            );
        }
        steps.push("Eq. 4".into());
        ranks.push(basis.equal_ranks());
        let equal = atlas_core::reweight::ConditionWeights::equal(basis);
        flags.push(flags_of(&basis.abstain(&equal), threshold));
        RankPaths {
            models,
            steps,
            ranks,
            flags,
            flag_note: flag_note(threshold),
            rank_axis: rank_axis(direction),
            caption,
        }
    }
}

impl RankPaths {
    /// Panel (c) across task paradigms (seed Fig. 4c, Table 11; [`atlas_core::across`]): each model's
    /// rank under each procedure of an across-paradigm report, one step per procedure (its id, e.g.
    /// `BBQ-ambig`: short enough for the axis; the labels are longer), no pooled step and no Abstain
    /// flags (the report's scores already leave Abstain out).
    pub fn across_procedures(
        models: &[String],
        r: &atlas_core::across::AcrossReport,
        caption: String,
    ) -> Self {
        RankPaths {
            models: models.to_vec(),
            steps: r.procedures.iter().map(|c| c.procedure.clone()).collect(),
            ranks: r.procedures.iter().map(|c| c.ranks.clone()).collect(),
            flags: Vec::new(),
            flag_note: String::new(),
            rank_axis: rank_axis(r.direction),
            caption,
        }
    }
}

/// Draws panel (c): x = step, y = rank with rank 1 at the top; per model one polyline through each run
/// of consecutive ranked steps (a missing rank breaks the path) and one filled circle per (step, model)
/// rank, in the model's colour; model labels right of the last step; [`FLAG`] right of a flagged rank
/// ([`RankPaths::flags`]) with its share in the hover text. Hover: each circle.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_rank_paths<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RankPaths,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n_models = data.models.len().max(1);
    let n_steps = data.steps.len().max(1);
    let any_flag = data.flags.iter().flatten().any(Option::is_some);
    let (label_area, models) = fitted_labels(&data.models, label_room(area));
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .x_label_area_size(36 + note_room(&data.flag_note, any_flag))
        .y_label_area_size(40)
        .margin_right(label_area)
        .build_cartesian_2d(-0.5..n_steps as f64 - 0.5, n_models as f64 + 0.5..0.5f64)?;
    chart
        .configure_mesh()
        .themed()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(n_models.min(40))
        .y_label_formatter(&whole)
        .y_desc(if data.rank_axis.is_empty() {
            "rank (1 = lowest score)"
        } else {
            data.rank_axis.as_str()
        })
        .draw()?;
    let (w, _) = area.dim_in_pixel();
    let per_step = (w.saturating_sub(60 + label_area) / n_steps as u32 / 7).max(3) as usize;
    let steps: Vec<String> = data
        .steps
        .iter()
        .map(|s| crate::panels::shorten(s, per_step))
        .collect();
    column_labels(area, &steps, |s| {
        chart.backend_coord(&(s as f64, n_models as f64 + 0.5))
    })?;
    let base = area.get_base_pixel();
    let text =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let mut hits = Vec::new();
    for (m, model) in data.models.iter().enumerate() {
        let color = model_color(m);
        let points: Vec<(f64, f64)> = data
            .ranks
            .iter()
            .enumerate()
            .filter_map(|(s, r)| Some((s as f64, r.get(m).copied().flatten()?)))
            .collect();
        // One polyline per run of consecutive ranked steps: a missing rank breaks the path.
        let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut previous: Option<f64> = None;
        for &(s, r) in &points {
            match (previous, runs.last_mut()) {
                (Some(p), Some(run)) if s - p == 1.0 => run.push((s, r)),
                _ => runs.push(vec![(s, r)]),
            }
            previous = Some(s);
        }
        chart.draw_series(
            runs.into_iter()
                .filter(|run| run.len() >= 2)
                .map(|run| PathElement::new(run, color.stroke_width(2))),
        )?;
        for &(s, r) in &points {
            let flag = data.flags.get(s as usize).and_then(|f| flag_at(f, m));
            hits.push(HitRegion::around(
                chart.backend_coord(&(s, r)),
                POINT_HIT,
                format!(
                    "{model} · {}: rank {r}{}",
                    data.steps[s as usize],
                    flag_suffix(flag)
                ),
            ));
            if flag.is_some() {
                draw_flag(area, chart.backend_coord(&(s, r)), POINT_RADIUS + 2)?;
            }
        }
        chart.draw_series(
            points
                .iter()
                .map(|&p| Circle::new(p, POINT_RADIUS, color.filled())),
        )?;
        if let Some(&(_, r)) = points.last() {
            let (px, py) = chart.backend_coord(&(n_steps as f64 - 0.5, r));
            area.draw(&Text::new(
                models[m].clone(),
                (px + 4 - base.0, py - base.1),
                text.clone().color(&color),
            ))?;
        }
    }
    draw_flag_note(area, &data.flag_note, any_flag)?;
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- (d) pair flips

/// How strongly a model pair's ordering flips (seed §5.2, C.2, Table 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FlipStatus {
    /// Never strictly reversed.
    Stable,
    /// Reversed (some δ < 0, another > 0), but not beyond a 1-pp tie zone.
    Reverses,
    /// Still reversed with a 1-pp tie zone, not with 2 pp.
    Survives1pp,
    /// Still reversed with a 2-pp tie zone.
    Survives2pp,
}

impl FlipStatus {
    /// The status of a pair that reverses (strictly), from whether it survives the 1-pp and the 2-pp
    /// tie zones (Table 11's columns).
    pub fn of_reversal(survives_1pp: bool, survives_2pp: bool) -> Self {
        if survives_2pp {
            FlipStatus::Survives2pp
        } else if survives_1pp {
            FlipStatus::Survives1pp
        } else {
            FlipStatus::Reverses
        }
    }

    /// Fill colour of the matrix cell: a stable pair in the [`palette::current`] grid colour, the
    /// flipping ones on a light-to-dark amber scale (the same in both themes; a CI dot drawn on a cell
    /// takes [`Palette::text_on`] its fill).
    pub fn color(self) -> RGBColor {
        match self {
            FlipStatus::Stable => palette::current().grid,
            FlipStatus::Reverses => RGBColor(246, 207, 128),
            FlipStatus::Survives1pp => RGBColor(230, 159, 0),
            FlipStatus::Survives2pp => RGBColor(213, 94, 0),
        }
    }

    /// Legend text.
    pub fn describe(self) -> &'static str {
        match self {
            FlipStatus::Stable => "stable",
            FlipStatus::Reverses => "reverses",
            FlipStatus::Survives1pp => "survives 1-pp tie zone",
            FlipStatus::Survives2pp => "survives 2-pp tie zone",
        }
    }
}

/// One model pair of panel (d).
#[derive(Debug, Clone, PartialEq)]
pub struct PairFlip {
    /// Model indices into [`PairFlips::models`], `a ≠ b`.
    pub a: usize,
    /// Model index into [`PairFlips::models`], the other model of the pair.
    pub b: usize,
    /// How (and how robustly) the pair's ordering flips: the cell's colour.
    pub status: FlipStatus,
    /// Bootstrap intervals on opposite sides of zero under two conditions: a black dot in the cell.
    pub ci_supported: bool,
    /// Hover text after the pair names (e.g. the most negative and most positive δ).
    pub detail: String,
}

/// Panel (d): the lower triangle of the model × model matrix, one cell per unordered pair, coloured by
/// whether (and how robustly) the pair's ordering flips. Pairs not listed are [`FlipStatus::Stable`].
#[derive(Debug, Clone, PartialEq)]
pub struct PairFlips {
    /// Model labels, the rows and columns of the matrix.
    pub models: Vec<String>,
    /// The pairs that are not [`FlipStatus::Stable`].
    pub pairs: Vec<PairFlip>,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

impl PairFlips {
    /// From RQ1's condition reversals (Table 11): every reversing pair with its strongest tie-zone
    /// status and CI support; `models` = the bundle's model ids (the reversals name models by id).
    pub fn from_reversals(models: &[String], r: &ConditionReversals, caption: String) -> Self {
        let index = |id: &str| models.iter().position(|m| m == id);
        let pairs = r
            .reversals
            .iter()
            .filter_map(|rev| {
                let status = FlipStatus::of_reversal(rev.survives_1pp, rev.survives_2pp);
                Some(PairFlip {
                    a: index(&rev.model_a)?,
                    b: index(&rev.model_b)?,
                    status,
                    ci_supported: rev.ci_supported,
                    detail: format!(
                        "δ {:+.2} pp under {}, {:+.2} pp under {}",
                        rev.negative.delta_pp,
                        rev.negative.condition_id,
                        rev.positive.delta_pp,
                        rev.positive.condition_id
                    ),
                })
            })
            .collect();
        PairFlips {
            models: models.to_vec(),
            pairs,
            caption,
        }
    }

    /// Panel (d) across task paradigms: every pair of an across-paradigm report
    /// ([`atlas_core::across::AcrossReport`]) that reverses across procedures, with its strongest
    /// tie-zone status (1 and 2 pp, Table 11) and interval support; `models` are the labels of the
    /// report's models in its order (the report names pairs by id).
    pub fn from_across(
        models: &[String],
        r: &atlas_core::across::AcrossReport,
        caption: String,
    ) -> Self {
        let index = |id: &str| r.models.iter().position(|m| m == id);
        let pairs = r
            .pairs
            .iter()
            .filter(|p| p.reverses)
            .filter_map(|p| {
                let status = FlipStatus::of_reversal(p.reverses_1pp, p.reverses_2pp);
                let (neg, pos) = (p.negative.as_ref()?, p.positive.as_ref()?);
                Some(PairFlip {
                    a: index(&p.model_a)?,
                    b: index(&p.model_b)?,
                    status,
                    ci_supported: p.ci_supported,
                    detail: format!(
                        "δ {:+.2} pp under {}, {:+.2} pp under {}",
                        neg.delta_pp, neg.condition_id, pos.delta_pp, pos.condition_id
                    ),
                })
            })
            .collect();
        PairFlips {
            models: models.to_vec(),
            pairs,
            caption,
        }
    }

    /// The pairs a re-weighting inverts against the equal-weight ranking, as [`FlipStatus::Reverses`].
    pub fn from_reweighted(models: &[String], r: &Reweighted, caption: String) -> Self {
        let pairs = r
            .inverted_pairs
            .iter()
            .map(|&(a, b)| PairFlip {
                a,
                b,
                status: FlipStatus::Reverses,
                ci_supported: false,
                detail: "order inverted against equal weights".into(),
            })
            .collect();
        PairFlips {
            models: models.to_vec(),
            pairs,
            caption,
        }
    }
}

/// Draws panel (d): for `M` models, the `M(M−1)/2` cells of the lower triangle — rows models 2..M,
/// columns models 1..M−1, cell (row `i`, column `j < i`) — each a filled rectangle in its
/// [`FlipStatus::color`], a black dot in CI-supported cells, row labels on the left, column labels
/// below, and a legend of the statuses (one swatch each, one dot). Hover: every cell.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_pair_flips<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &PairFlips,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let ink = palette::current().ink;
    let models = &data.models;
    // The triangle: rows i = 1..M (top to bottom), columns j = 0..M−1; cell (i, j) spans
    // x j..j+1, y (M−1−i)..(M−i) on a (M−1) × (M−1) grid.
    let side = models.len().saturating_sub(1).max(1);
    let (label_area, short) = fitted_labels(models, label_room(area));
    let rows: Vec<&String> = short.iter().skip(1).collect();
    let cols: Vec<&String> = short.iter().take(side).collect();
    // The legend: five lines right of the grid (180 px), or under it on a narrow chart.
    let narrow = is_narrow(area);
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .margin_bottom(10 + if narrow { legend_below_height(5) } else { 0 })
        .x_label_area_size(36)
        .y_label_area_size(label_area)
        .margin_right(if narrow { 14 } else { 180 })
        .build_cartesian_2d(0.0..side as f64, 0.0..side as f64)?;
    chart
        .configure_mesh()
        .themed()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .draw()?;
    row_labels(area, &rows, |r| {
        chart.backend_coord(&(0.0, (side - 1 - r) as f64 + 0.5))
    })?;
    let spacing = chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
    let cols = fit_columns(&cols, spacing - 4);
    column_labels(area, &cols, |j| chart.backend_coord(&(j as f64 + 0.5, 0.0)))?;
    let pair_of = |i: usize, j: usize| {
        data.pairs
            .iter()
            .find(|p| (p.a == i && p.b == j) || (p.a == j && p.b == i))
    };
    let mut hits = Vec::new();
    let mut cells = Vec::new();
    let mut dots = Vec::new();
    for i in 1..models.len() {
        for j in 0..i {
            let pair = pair_of(i, j);
            let status = pair.map_or(FlipStatus::Stable, |p| p.status);
            let y = (models.len() - 1 - i) as f64;
            let a = (j as f64 + 0.04, y + 0.04);
            let b = (j as f64 + 0.96, y + 0.96);
            let mut label = format!("{} vs {}: {}", models[j], models[i], status.describe());
            if let Some(p) = pair {
                if p.ci_supported {
                    label.push_str(", CI-supported");
                    dots.push(Circle::new(
                        (j as f64 + 0.5, y + 0.5),
                        3,
                        palette::current().text_on(status.color()).filled(),
                    ));
                }
                if !p.detail.is_empty() {
                    label.push_str("; ");
                    label.push_str(&p.detail);
                }
            }
            hits.push(HitRegion::corners(
                chart.backend_coord(&a),
                chart.backend_coord(&b),
                label,
            ));
            cells.push(Rectangle::new([a, b], status.color().filled()));
        }
    }
    chart.draw_series(cells)?;
    chart.draw_series(dots)?;
    // Legend, right of the grid.
    let mut legend: Vec<(String, Swatch)> = [
        FlipStatus::Stable,
        FlipStatus::Reverses,
        FlipStatus::Survives1pp,
        FlipStatus::Survives2pp,
    ]
    .iter()
    .map(|s| (s.describe().to_string(), Swatch::Rect(s.color())))
    .collect();
    legend.push(("CI-supported".into(), Swatch::Dot(ink)));
    let place = LegendPlace {
        below: narrow,
        margin_right: 0,
        extra_below: 0,
    };
    place.draw(
        area,
        chart.backend_coord(&(side as f64, side as f64)),
        chart.backend_coord(&(0.0, 0.0)),
        36,
        &legend,
    )?;
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- (e)/(f) distributions

/// Panels (e) and (f): the distribution of a per-draw value (score error, inversion rate, …) for each
/// audit design, as box plots with a strip of draws.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignDistributions {
    /// Design labels, left to right.
    pub designs: Vec<String>,
    /// `values[d]`: the per-draw values of design `d`, in the units of `axis_label`; non-finite values
    /// are ignored.
    pub values: Vec<Vec<f64>>,
    /// y-axis title with the unit (e.g. `score MAE (pp)`).
    pub axis_label: String,
    /// At most this many draws are drawn as strip points per design: the values at evenly spaced ranks
    /// of the sorted draws (the whole distribution's shape, deterministic), 0 = no strip.
    pub strip_points: usize,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// Default number of strip points per design.
pub const DEFAULT_STRIP_POINTS: usize = 200;

impl DesignDistributions {
    fn from_designs(
        designs: &[DesignResult],
        pick: fn(&DesignResult) -> &[f64],
        axis_label: &str,
        caption: String,
    ) -> Self {
        DesignDistributions {
            designs: designs.iter().map(|d| d.label.clone()).collect(),
            values: designs.iter().map(|d| pick(d).to_vec()).collect(),
            axis_label: axis_label.into(),
            strip_points: DEFAULT_STRIP_POINTS,
            caption,
        }
    }

    /// Panel (e) from an RQ2 report computed in this process: per draw of each design (concentrated,
    /// SRS, stratified, balanced), the score error in pp — `DrawSummary::mae_contributions`, which is
    /// exactly the draw's MAE over models when no model lacks a score in any draw (else each model's
    /// error is scaled by `N / n_m`). These vectors are not serialised: a report read back from JSON
    /// (the worker's) has none, and the panel then shows no boxes.
    pub fn rq2_mae(report: &Rq2Report, caption: String) -> Self {
        Self::from_designs(
            &report.designs,
            |d| &d.summary.mae_contributions,
            "score MAE per draw (pp)",
            caption,
        )
    }

    /// Panel (f), as [`DesignDistributions::rq2_mae`]: per draw, the reference-relative inversion rate
    /// in pp (`DrawSummary::inversion_contributions`: `100 · rate` when every draw's rate is defined).
    pub fn rq2_inversions(report: &Rq2Report, caption: String) -> Self {
        Self::from_designs(
            &report.designs,
            |d| &d.summary.inversion_contributions,
            "inversions vs reference per draw (% of pairs)",
            caption,
        )
    }
}

/// Box-plot statistics of one design: numpy-default percentiles 2.5, 25, 50, 75, 97.5 and the mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxStats {
    /// 2.5th percentile (lower whisker).
    pub p2_5: f64,
    /// 25th percentile (bottom of the box).
    pub q1: f64,
    /// Median (50th percentile).
    pub median: f64,
    /// 75th percentile (top of the box).
    pub q3: f64,
    /// 97.5th percentile (upper whisker).
    pub p97_5: f64,
    /// Mean (grey cross).
    pub mean: f64,
    /// Finite values the statistics are computed from.
    pub n: usize,
}

impl BoxStats {
    /// Of the finite `values`; `None` when there is none.
    pub fn of(values: &[f64]) -> Option<Self> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let p = percentiles(&v, &[2.5, 25.0, 50.0, 75.0, 97.5])?;
        Some(BoxStats {
            p2_5: p[0],
            q1: p[1],
            median: p[2],
            q3: p[3],
            p97_5: p[4],
            mean: v.iter().sum::<f64>() / v.len() as f64,
            n: v.len(),
        })
    }
}

/// Draws panels (e)/(f): per design with a finite value, a box from the 25th to the 75th percentile
/// (one `Rectangle`), a median line, whiskers to the 2.5th and 97.5th percentiles (the range the seed
/// reports, D.2), a grey cross at the mean, and up to `strip_points` strip circles left of the box
/// (deterministic jitter). Hover: each box (all statistics) and each strip point.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_design_distributions<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &DesignDistributions,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n = data.designs.len().max(1);
    let y_range = value_range(data.values.iter().flatten().copied());
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, y_range)?;
    chart
        .configure_mesh()
        .themed()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(data.axis_label.as_str())
        .draw()?;
    let y_bottom = chart.y_range().start;
    let spacing = chart.backend_coord(&(1.0, y_bottom)).0 - chart.backend_coord(&(0.0, y_bottom)).0;
    let designs = fit_columns(&data.designs, spacing - 4);
    column_labels(area, &designs, |d| {
        chart.backend_coord(&(d as f64, y_bottom))
    })?;
    let mut hits = Vec::new();
    for (d, design) in data.designs.iter().enumerate() {
        let values = data.values.get(d).map_or(&[][..], Vec::as_slice);
        let Some(stats) = BoxStats::of(values) else {
            continue;
        };
        let color = palette::current().series(d);
        let x = d as f64 + 0.12;
        let half = 0.16;
        // Strip: values at evenly spaced ranks of the sorted draws, left of the box.
        if data.strip_points > 0 {
            let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
            sorted.sort_by(f64::total_cmp);
            let k = data.strip_points.min(sorted.len());
            let mut points = Vec::with_capacity(k);
            for i in 0..k {
                let idx = if k == 1 {
                    sorted.len() / 2
                } else {
                    i * (sorted.len() - 1) / (k - 1)
                };
                let v = sorted[idx];
                // Golden-ratio jitter in [−0.12, 0.12] around x − 0.36.
                let jitter = ((i as f64 * 0.618_033_988_749_895).fract() - 0.5) * 0.24;
                let at = (d as f64 - 0.24 + jitter, v);
                hits.push(HitRegion::around(
                    chart.backend_coord(&at),
                    2,
                    format!(
                        "{design} · draw value {v:.3} (rank {} of {})",
                        idx + 1,
                        sorted.len()
                    ),
                ));
                points.push(Circle::new(at, 2, color.mix(0.45).filled()));
            }
            chart.draw_series(points)?;
        }
        let a = (x - half, stats.q1);
        let b = (x + half, stats.q3);
        hits.push(HitRegion::corners(
            chart.backend_coord(&(x - half, stats.p2_5)),
            chart.backend_coord(&(x + half, stats.p97_5)),
            format!(
                "{design}: median {:.3}, IQR [{:.3}, {:.3}], 2.5–97.5% [{:.3}, {:.3}], mean {:.3}, {} draws",
                stats.median, stats.q1, stats.q3, stats.p2_5, stats.p97_5, stats.mean, stats.n
            ),
        ));
        chart.draw_series(std::iter::once(Rectangle::new(
            [a, b],
            color.mix(0.35).filled(),
        )))?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [a, b],
            color.stroke_width(1),
        )))?;
        let ink = palette::current().ink;
        let stroke = ink.stroke_width(1);
        chart.draw_series([
            PathElement::new(
                vec![(x - half, stats.median), (x + half, stats.median)],
                ink.stroke_width(2),
            ),
            PathElement::new(vec![(x, stats.q3), (x, stats.p97_5)], stroke),
            PathElement::new(vec![(x, stats.q1), (x, stats.p2_5)], stroke),
            PathElement::new(
                vec![(x - half / 2.0, stats.p97_5), (x + half / 2.0, stats.p97_5)],
                stroke,
            ),
            PathElement::new(
                vec![(x - half / 2.0, stats.p2_5), (x + half / 2.0, stats.p2_5)],
                stroke,
            ),
        ])?;
        chart.draw_series(std::iter::once(Cross::new(
            (x, stats.mean),
            5,
            palette::current().muted.stroke_width(2),
        )))?;
    }
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- (g) Selection vs Rationale

/// Panel (g): model-level Selection BER against Rationale BER on the same responses.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectionVsRationale {
    /// Model labels, one colour each ([`MODEL_PALETTE`] by position).
    pub models: Vec<String>,
    /// Selection BER per model (fraction): x.
    pub selection: Vec<Option<f64>>,
    /// Rationale BER per model (fraction; judge-coded `{E, QE}` share): y.
    pub rationale: Vec<Option<f64>>,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// Draws panel (g): a square plot with both axes in percent over the same range, a dashed grey
/// equality diagonal (`y = x`), one filled circle per model with both rates in the model's colour and
/// its label next to it. Hover: each circle.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_selection_vs_rationale<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &SelectionVsRationale,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let hi = data
        .selection
        .iter()
        .chain(&data.rationale)
        .filter_map(|v| *v)
        .fold(0.0f64, |a, v| a.max(100.0 * v));
    let top = ((hi + 2.0) / 10.0).ceil().clamp(1.0, 10.0) * 10.0;
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..top, 0.0..top)?;
    chart
        .configure_mesh()
        .themed()
        .x_desc("Selection BER (%)")
        .y_desc("Rationale BER (%)")
        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
        .y_label_formatter(&|y: &f64| format!("{y:.0}"))
        .draw()?;
    chart.draw_series(std::iter::once(DashedPathElement::new(
        vec![(0.0, 0.0), (top, top)],
        6,
        4,
        palette::current().muted.stroke_width(1),
    )))?;
    let mut hits = Vec::new();
    for (m, model) in data.models.iter().enumerate() {
        let (Some(x), Some(y)) = (
            data.selection.get(m).copied().flatten(),
            data.rationale.get(m).copied().flatten(),
        ) else {
            continue;
        };
        let at = (100.0 * x, 100.0 * y);
        let color = model_color(m);
        hits.push(HitRegion::around(
            chart.backend_coord(&at),
            POINT_HIT,
            format!(
                "{model}: Selection {}, Rationale {} ({:+.2} pp)",
                pct(x),
                pct(y),
                100.0 * (y - x)
            ),
        ));
        chart.draw_series(std::iter::once(
            EmptyElement::at(at)
                + Circle::new((0, 0), POINT_RADIUS + 1, color.filled())
                + Text::new(model.clone(), (7, -7), text_style(12)),
        ))?;
    }
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- (h) Rationale composition

/// The five Rationale classes of seed §3.3 in display order: endorsement, qualified endorsement,
/// neutral analysis, denial, refusal.
pub const RATIONALE_CLASSES: [&str; 5] = ["E", "QE", "N", "D", "R"];

/// Colours of [`RATIONALE_CLASSES`]: bias evidence in warm colours, the rest in grey and blues.
pub const RATIONALE_COLORS: [RGBColor; 5] = [
    Palette::LIGHT.series[5],
    Palette::LIGHT.series[1],
    Palette::LIGHT.muted,
    Palette::LIGHT.series[4],
    Palette::LIGHT.series[0],
];

/// Panel (h): per model, the counts of each Rationale class.
#[derive(Debug, Clone, PartialEq)]
pub struct RationaleComposition {
    /// Model labels, top to bottom.
    pub models: Vec<String>,
    /// Class labels, left to right in each bar (usually [`RATIONALE_CLASSES`]); colours from
    /// [`RATIONALE_COLORS`], cycled.
    pub classes: Vec<String>,
    /// `counts[m][k]`: labels of class `k` for model `m`.
    pub counts: Vec<Vec<u64>>,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// Draws panel (h): one horizontal bar per model with a label, stacked to 100% of its labels, one
/// filled rectangle per non-zero (model, class) share in the class colour, and a legend (one swatch per
/// class). Hover: each segment (count, total and share). The same drawing as [`draw_stacked_bars`] in
/// [`StackScale::Share`].
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_rationale_composition<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RationaleComposition,
) -> HitResult<DB> {
    draw_stacked_bars(
        area,
        &StackedBars {
            rows: data.models.clone(),
            classes: data.classes.clone(),
            colors: RATIONALE_COLORS.to_vec(),
            counts: data.counts.clone(),
            scale: StackScale::Share,
            axis_label: "share of the model's Rationale labels (%)".into(),
            caption: data.caption.clone(),
        },
    )
}

// --------------------------------------------------------------------------- stacked bars

/// How [`draw_stacked_bars`] scales each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackScale {
    /// Every row stacked to 100% of its own total (x axis in percent, 0–100).
    Share,
    /// Rows drawn in counts on a common axis from 0 to the largest row total.
    Count,
}

/// Horizontal stacked bars: one bar per row, one segment per non-zero class count. Panel (h) and the
/// clinical figures (failure modes, directions, stereotype categories) are drawn with it.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedBars {
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Class labels, left to right in each bar, one legend entry each.
    pub classes: Vec<String>,
    /// Class colours, cycled.
    pub colors: Vec<RGBColor>,
    /// `counts[r][k]`: how many of class `k` row `r` has (missing entries count 0).
    pub counts: Vec<Vec<u64>>,
    /// Whether rows are stacked to 100% of their total or drawn in counts.
    pub scale: StackScale,
    /// The x axis' description (units included).
    pub axis_label: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

/// Draws [`StackedBars`]: a labelled bar per row, one filled rectangle per non-zero (row, class) count in
/// the class colour, a legend (one swatch per class). Hover: each segment, as
/// `ROW · CLASS: COUNT of ROW_TOTAL (SHARE%)`.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_stacked_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &StackedBars,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let n = data.rows.len().max(1);
    let color = |k: usize| {
        data.colors
            .get(k % data.colors.len().max(1))
            .copied()
            .map_or(palette::current().ink, palette::themed)
    };
    let legend: Vec<(String, Swatch)> = data
        .classes
        .iter()
        .enumerate()
        .map(|(k, c)| (c.clone(), Swatch::Rect(color(k))))
        .collect();
    let totals: Vec<u64> = (0..data.rows.len())
        .map(|r| data.counts.get(r).map_or(0, |row| row.iter().sum()))
        .collect();
    let x_max = match data.scale {
        StackScale::Share => 100.0,
        StackScale::Count => {
            (totals.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.05).ceil()
        }
    };
    let place = LegendPlace::of(area, &data.classes);
    let (label_area, rows) = fitted_labels(&data.rows, label_room(area));
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .margin_right(place.margin_right)
        .margin_bottom(10 + place.extra_below)
        .x_label_area_size(36)
        .y_label_area_size(label_area)
        .build_cartesian_2d(0.0..x_max, 0.0..n as f64)?;
    let scale = data.scale;
    chart
        .configure_mesh()
        .themed()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(ticks(area))
        .x_desc(data.axis_label.as_str())
        .x_label_formatter(&move |x: &f64| match scale {
            StackScale::Share => format!("{x:.0}"),
            StackScale::Count => whole(x),
        })
        .x_max_light_lines(if scale == StackScale::Count { 1 } else { 10 })
        .draw()?;
    row_labels(area, &rows, |i| {
        chart.backend_coord(&(0.0, (n - 1 - i) as f64 + 0.5))
    })?;
    let mut hits = Vec::new();
    for (k, class) in data.classes.iter().enumerate() {
        let mut segments = Vec::new();
        for (r, row_label) in data.rows.iter().enumerate() {
            let row = data.counts.get(r).map_or(&[][..], Vec::as_slice);
            let total = totals[r];
            let count = row.get(k).copied().unwrap_or(0);
            if total == 0 || count == 0 {
                continue;
            }
            let before: u64 = row.iter().take(k).sum();
            let unit = match data.scale {
                StackScale::Share => 100.0 / total as f64,
                StackScale::Count => 1.0,
            };
            let y = (n - 1 - r) as f64;
            let a = (unit * before as f64, y + 0.15);
            let b = (unit * (before + count) as f64, y + 0.85);
            hits.push(HitRegion::corners(
                chart.backend_coord(&a),
                chart.backend_coord(&b),
                format!(
                    "{row_label} · {class}: {count} of {total} ({:.2}%)",
                    100.0 * count as f64 / total as f64
                ),
            ));
            segments.push(Rectangle::new([a, b], color(k).filled()));
        }
        chart.draw_series(segments)?;
    }
    place.draw(
        area,
        chart.backend_coord(&(x_max, n as f64)),
        chart.backend_coord(&(0.0, 0.0)),
        36,
        &legend,
    )?;
    area.present()?;
    Ok(hits)
}

// --------------------------------------------------------------------------- coverage curve

/// The K-condition coverage curve (seed Table 14): a metric of the fixed-budget audit against the
/// number of covered conditions K′.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageCurve {
    /// K′ of each point, increasing.
    pub k: Vec<usize>,
    /// The metric's mean per K′, in the units of `axis_label`.
    pub mean: Vec<Option<f64>>,
    /// Its 2.5–97.5 percentile range over draws per K′ (drawn as an error bar).
    pub range: Vec<Option<(f64, f64)>>,
    /// y axis title with the unit (e.g. `score MAE (pp)`).
    pub axis_label: String,
    /// Caption drawn above the plot, naming the bundle (and the settings) it shows.
    pub caption: String,
}

impl CoverageCurve {
    fn from_coverage(
        report: &Rq2Report,
        metric: fn(&DesignResult) -> &atlas_core::rq2::Metric,
        scale: f64,
        axis_label: &str,
        caption: String,
    ) -> Self {
        let k = report
            .coverage
            .iter()
            .enumerate()
            .map(|(i, d)| d.conditions.unwrap_or(i + 1))
            .collect();
        CoverageCurve {
            k,
            mean: report
                .coverage
                .iter()
                .map(|d| metric(d).mean.map(|v| scale * v))
                .collect(),
            range: report
                .coverage
                .iter()
                .map(|d| metric(d).range.map(|[lo, hi]| (scale * lo, scale * hi)))
                .collect(),
            axis_label: axis_label.into(),
            caption,
        }
    }

    /// Score MAE (pp) per K′ from an RQ2 report (`Rq2Report::coverage`, Table 14).
    pub fn rq2_mae(report: &Rq2Report, caption: String) -> Self {
        Self::from_coverage(
            report,
            |d| &d.summary.mae_pp,
            1.0,
            "score MAE (pp)",
            caption,
        )
    }

    /// Reference-relative inversion rate (% of pairs) per K′ from an RQ2 report.
    pub fn rq2_inversions(report: &Rq2Report, caption: String) -> Self {
        Self::from_coverage(
            report,
            |d| &d.summary.inversion_rate,
            100.0,
            "inversions vs reference (% of pairs)",
            caption,
        )
    }
}

/// Draws the coverage curve: x = K′, a polyline through the defined means, one filled circle per mean
/// and a vertical error bar (one path) per range. Hover: each circle with its mean and range.
///
/// # Errors
/// Whatever the backend reports.
pub fn draw_coverage_curve<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &CoverageCurve,
) -> HitResult<DB> {
    area.fill(&palette::current().background)?;
    let k_max = data.k.iter().copied().max().unwrap_or(1).max(1);
    let y_range = value_range(
        data.mean
            .iter()
            .flatten()
            .copied()
            .chain(data.range.iter().flatten().flat_map(|&(a, b)| [a, b])),
    );
    let mut chart = ChartBuilder::on(area)
        .caption(fit_caption(&data.caption, area), caption_style())
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.5..k_max as f64 + 0.5, y_range)?;
    chart
        .configure_mesh()
        .themed()
        .x_labels(k_max.min(if is_narrow(area) { 8 } else { 30 }))
        .x_label_formatter(&whole)
        .x_desc("conditions covered K′")
        .y_desc(data.axis_label.as_str())
        .draw()?;
    let color = palette::current().series(0);
    let points: Vec<(f64, f64, usize)> = data
        .k
        .iter()
        .enumerate()
        .filter_map(|(i, &k)| Some((k as f64, data.mean.get(i).copied().flatten()?, i)))
        .collect();
    if points.len() >= 2 {
        chart.draw_series(std::iter::once(PathElement::new(
            points.iter().map(|&(x, y, _)| (x, y)).collect::<Vec<_>>(),
            color.stroke_width(2),
        )))?;
    }
    let bars: Vec<PathElement<(f64, f64)>> = data
        .k
        .iter()
        .zip(&data.range)
        .filter_map(|(&k, r)| {
            let (lo, hi) = (*r)?;
            Some(PathElement::new(
                vec![(k as f64, lo), (k as f64, hi)],
                palette::current().muted.stroke_width(1),
            ))
        })
        .collect();
    chart.draw_series(bars)?;
    let mut hits = Vec::new();
    for &(x, y, i) in &points {
        let range = data
            .range
            .get(i)
            .copied()
            .flatten()
            .map_or(String::new(), |(lo, hi)| {
                format!(" (2.5–97.5%: {lo:.2} – {hi:.2})")
            });
        hits.push(HitRegion::around(
            chart.backend_coord(&(x, y)),
            POINT_HIT,
            format!("K′ = {}: {y:.2}{range}", data.k[i]),
        ));
    }
    chart.draw_series(
        points
            .iter()
            .map(|&(x, y, _)| Circle::new((x, y), POINT_RADIUS, color.filled())),
    )?;
    area.present()?;
    Ok(hits)
}
