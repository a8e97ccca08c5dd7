//! The charts' colours: a [`Palette`] (surface, ink, grid, muted marks and eight series colours) with
//! a light and a dark default ([`Palette::LIGHT`], [`Palette::DARK`]), the WCAG 2.x contrast formula
//! that both defaults are checked against ([`contrast_ratio`]), a reader of the CSS colour values the
//! app's theme sets ([`parse_css_color`], [`Palette::from_lookup`]), and the palette in effect while a
//! chart is drawn ([`with_palette`], [`current`]).
//!
//! Every draw function of this crate takes its colours from [`current`]: the background it fills, the
//! ink of its text and axes, the grid lines and the series colours. Without [`with_palette`] that is
//! [`Palette::LIGHT`], so a plain `draw` (the tests, the CLI) keeps the light colours.
//!
//! Contrast (WCAG 2.1 §1.4.3 and §1.4.11, AA): ink and muted text ≥ 4.5:1 on the background, every
//! series colour ≥ 3:1 on the background (`tests/palette.rs` recomputes both by hand).

use std::cell::Cell;

use plotters::style::RGBColor;

/// Number of series colours of a palette (models, conditions, wordings, designs cycle through them).
pub const SERIES: usize = 8;

/// The colours a chart is drawn with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// The chart's surface (the whole canvas is filled with it).
    pub background: RGBColor,
    /// Text, axes, tick labels, outlines, reference marks that must read as text.
    pub ink: RGBColor,
    /// Grid lines and the fill of "nothing to show" cells (empty heat-map cells, stable pairs).
    pub grid: RGBColor,
    /// Secondary marks (reference crosses, the "neutral" classes), readable as text (≥ 4.5:1).
    pub muted: RGBColor,
    /// Series colours, cycled by index ([`Palette::series`]); each ≥ 3:1 on [`Palette::background`].
    pub series: [RGBColor; SERIES],
}

impl Palette {
    /// The light default: white surface, near-black ink, and a colour-blind-aware series set derived
    /// from Okabe–Ito in its order (blue, orange, bluish green, reddish purple, sky blue, vermilion,
    /// yellow, then dark grey): blue and vermilion kept; orange, bluish green, reddish purple and
    /// yellow darkened, sky blue replaced by a violet, to reach 3:1 on white.
    pub const LIGHT: Palette = Palette {
        background: RGBColor(0xff, 0xff, 0xff),
        ink: RGBColor(0x1b, 0x1f, 0x24),
        grid: RGBColor(0xd0, 0xd7, 0xde),
        muted: RGBColor(0x57, 0x60, 0x6a),
        series: [
            RGBColor(0x00, 0x72, 0xb2),
            RGBColor(0xb3, 0x6b, 0x00),
            RGBColor(0x00, 0x84, 0x5f),
            RGBColor(0xb8, 0x55, 0x8f),
            RGBColor(0x7b, 0x52, 0xae),
            RGBColor(0xd5, 0x5e, 0x00),
            RGBColor(0x85, 0x74, 0x00),
            RGBColor(0x33, 0x33, 0x33),
        ],
    };

    /// The dark default: the dark theme's surface (`#161b22`), light ink, and the Okabe–Ito colours
    /// in the same order at full lightness (blue as sky blue, sky blue as lavender, then light grey;
    /// all ≥ 6:1 on the surface).
    pub const DARK: Palette = Palette {
        background: RGBColor(0x16, 0x1b, 0x22),
        ink: RGBColor(0xe6, 0xed, 0xf3),
        grid: RGBColor(0x3d, 0x44, 0x4d),
        muted: RGBColor(0xa3, 0xad, 0xb8),
        series: [
            RGBColor(0x56, 0xb4, 0xe9),
            RGBColor(0xe6, 0x9f, 0x00),
            RGBColor(0x2b, 0xc7, 0x9a),
            RGBColor(0xe5, 0x8f, 0xc2),
            RGBColor(0xb5, 0x9c, 0xe8),
            RGBColor(0xf5, 0x79, 0x3a),
            RGBColor(0xf0, 0xe4, 0x42),
            RGBColor(0xd0, 0xd7, 0xde),
        ],
    };

    /// Series colour `i`, cycled over the [`SERIES`] colours.
    pub fn series(&self, i: usize) -> RGBColor {
        self.series[i % SERIES]
    }

    /// The text colour that reads best on a filled mark of colour `fill` (the ink or the background,
    /// whichever has the higher [`contrast_ratio`] with it): labels written inside bars and cells.
    pub fn text_on(&self, fill: RGBColor) -> RGBColor {
        if contrast_ratio(self.ink, fill) >= contrast_ratio(self.background, fill) {
            self.ink
        } else {
            self.background
        }
    }

    /// The palette that `lookup` gives for the CSS custom properties of [`CSS_VARIABLES`]
    /// (`--chart-bg`, `--chart-ink`, `--chart-grid`, `--chart-muted`, `--chart-1` … `--chart-8`), each
    /// value read by [`parse_css_color`]; a property that is missing or not a colour keeps the value of
    /// `fallback` (so a page without the properties draws `fallback`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>, fallback: &Palette) -> Palette {
        let read = |name: &str, default: RGBColor| {
            lookup(name)
                .and_then(|v| parse_css_color(&v))
                .unwrap_or(default)
        };
        let mut series = fallback.series;
        for (i, c) in series.iter_mut().enumerate() {
            *c = read(&format!("--chart-{}", i + 1), *c);
        }
        Palette {
            background: read("--chart-bg", fallback.background),
            ink: read("--chart-ink", fallback.ink),
            grid: read("--chart-grid", fallback.grid),
            muted: read("--chart-muted", fallback.muted),
            series,
        }
    }
}

impl Default for Palette {
    fn default() -> Self {
        Palette::LIGHT
    }
}

/// `color` as drawn in the [`current`] palette: a colour of [`Palette::LIGHT`] (a series colour, the
/// ink, grid, muted or background) becomes the current palette's colour in the same role; any other
/// colour (the heat-map scale, the flip statuses) is kept. Data structs that carry colours
/// ([`crate::atlas::StackedBars::colors`]) hold light-palette colours and are drawn through this.
pub fn themed(color: RGBColor) -> RGBColor {
    let now = current();
    let light = Palette::LIGHT;
    if let Some(i) = light.series.iter().position(|&c| c == color) {
        return now.series[i];
    }
    [
        (light.background, now.background),
        (light.ink, now.ink),
        (light.grid, now.grid),
        (light.muted, now.muted),
    ]
    .into_iter()
    .find(|(l, _)| *l == color)
    .map_or(color, |(_, n)| n)
}

/// The CSS custom properties a palette is read from ([`Palette::from_lookup`]).
pub const CSS_VARIABLES: [&str; 12] = [
    "--chart-bg",
    "--chart-ink",
    "--chart-grid",
    "--chart-muted",
    "--chart-1",
    "--chart-2",
    "--chart-3",
    "--chart-4",
    "--chart-5",
    "--chart-6",
    "--chart-7",
    "--chart-8",
];

/// A CSS colour value as the browser computes it or as a style sheet writes it: `#rgb`, `#rrggbb`,
/// `rgb(r, g, b)` or `rgba(r, g, b, a)` (alpha ignored; also the space-separated `rgb(r g b)`).
/// `None` for anything else (names such as `white`, out-of-range channels).
///
/// ```
/// use atlas_charts::palette::parse_css_color;
/// use plotters::style::RGBColor;
/// assert_eq!(parse_css_color(" #1b1f24 "), Some(RGBColor(27, 31, 36)));
/// assert_eq!(parse_css_color("#fff"), Some(RGBColor(255, 255, 255)));
/// assert_eq!(parse_css_color("rgb(22, 27, 34)"), Some(RGBColor(22, 27, 34)));
/// assert_eq!(parse_css_color("white"), None);
/// ```
pub fn parse_css_color(value: &str) -> Option<RGBColor> {
    let v = value.trim();
    if let Some(hex) = v.strip_prefix('#') {
        let digit = |s: &str| u8::from_str_radix(s, 16).ok();
        return match hex.len() {
            3 => {
                let mut c = hex.chars().map(|ch| digit(&ch.to_string()).map(|d| d * 17));
                Some(RGBColor(c.next()??, c.next()??, c.next()??))
            }
            6 => Some(RGBColor(
                digit(hex.get(0..2)?)?,
                digit(hex.get(2..4)?)?,
                digit(hex.get(4..6)?)?,
            )),
            _ => None,
        };
    }
    let inner = v
        .strip_prefix("rgba(")
        .or_else(|| v.strip_prefix("rgb("))?
        .strip_suffix(')')?;
    let mut parts = inner
        .split(|c: char| c == ',' || c == '/' || c.is_whitespace())
        .filter(|p| !p.is_empty());
    let mut channel = || -> Option<u8> {
        let x: f64 = parts.next()?.parse().ok()?;
        (0.0..=255.0).contains(&x).then(|| x.round() as u8)
    };
    Some(RGBColor(channel()?, channel()?, channel()?))
}

/// Relative luminance of an sRGB colour (WCAG 2.1, "relative luminance"): each channel `c/255`
/// linearised (`c/12.92` up to 0.04045, else `((c+0.055)/1.055)^2.4`), weighted 0.2126 R + 0.7152 G +
/// 0.0722 B. A number in `[0, 1]` (0 black, 1 white).
pub fn relative_luminance(c: RGBColor) -> f64 {
    let lin = |x: u8| {
        let s = f64::from(x) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
}

/// Contrast ratio of two colours (WCAG 2.1): `(L1 + 0.05) / (L2 + 0.05)` with `L1` the lighter
/// [`relative_luminance`]. From 1 (same) to 21 (black on white); AA asks ≥ 4.5 for text and ≥ 3 for
/// graphical objects.
pub fn contrast_ratio(a: RGBColor, b: RGBColor) -> f64 {
    let (la, lb) = (relative_luminance(a), relative_luminance(b));
    let (hi, lo) = if la >= lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

thread_local! {
    static CURRENT: Cell<Palette> = const { Cell::new(Palette::LIGHT) };
}

/// The palette the draw functions use now: the one [`with_palette`] set on this thread, else
/// [`Palette::LIGHT`].
pub fn current() -> Palette {
    CURRENT.with(Cell::get)
}

/// Runs `draw` with `palette` as the [`current`] palette of this thread and restores the previous one
/// afterwards (also when `draw` unwinds).
///
/// ```
/// use atlas_charts::palette::{current, with_palette, Palette};
/// let inside = with_palette(&Palette::DARK, current);
/// assert_eq!(inside, Palette::DARK);
/// assert_eq!(current(), Palette::LIGHT);
/// ```
pub fn with_palette<R>(palette: &Palette, draw: impl FnOnce() -> R) -> R {
    struct Restore(Palette);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(*palette)));
    draw()
}
