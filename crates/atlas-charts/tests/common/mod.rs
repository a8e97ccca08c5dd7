//! SVG helpers shared by the chart tests (`atlas_svg.rs`, `clinical_svg.rs`): render a draw function to
//! an SVG string, count its elements by attribute, read attributes and texts, check the hover regions.
#![allow(dead_code)]

use atlas_charts::atlas::{hit_test, HitRegion};
use plotters::prelude::*;

pub fn render(
    name: &str,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Vec<HitRegion>,
) -> (String, Vec<HitRegion>) {
    let mut svg = String::new();
    let hits = {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root)
    };
    if let Ok(dir) = std::env::var("ATLAS_SVG_DIR") {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(format!("{dir}/{name}.svg"), &svg);
    }
    (svg, hits)
}

pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// SVG elements `<tag …>` whose attribute `attr` is `value` (e.g. circles with `fill="#0072B2"`).
pub fn count(svg: &str, tag: &str, attr: &str, value: &str) -> usize {
    let open = format!("<{tag} ");
    let want = format!("{attr}=\"{value}\"");
    svg.lines()
        .filter(|l| l.starts_with(&open) && l.contains(&want))
        .count()
}

/// Lines of the elements counted by [`count`].
pub fn elements<'a>(svg: &'a str, tag: &str, attr: &str, value: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    let want = format!("{attr}=\"{value}\"");
    svg.lines()
        .filter(|l| l.starts_with(&open) && l.contains(&want))
        .collect()
}

pub fn attr_f64(line: &str, attr: &str) -> f64 {
    line.split(&format!(" {attr}=\""))
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no {attr} in {line}"))
}

/// How often `label` is the whole text of a `<text>` element.
pub fn text(svg: &str, label: &str) -> usize {
    svg.matches(&format!(">\n{label}\n<")).count()
}

/// Every hover region's own centre finds it (or a smaller region on top of it), and far outside every
/// mark finds nothing.
#[track_caller]
pub fn hover_finds_every_region(hits: &[HitRegion]) {
    for h in hits {
        let (x, y) = ((h.x0 + h.x1) / 2, (h.y0 + h.y1) / 2);
        let found = hit_test(hits, x, y).expect("a region under its own centre");
        assert!(
            found == h || (found.x1 - found.x0) <= (h.x1 - h.x0),
            "{h:?} found {found:?}"
        );
    }
    assert_eq!(hit_test(hits, -100, -100), None);
}
