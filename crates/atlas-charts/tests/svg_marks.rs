//! The BER chart drawn to SVG natively: the number of bars and the labels are checked on a fixture.

use atlas_charts::{draw_ber_by_model_condition, BerByModelCondition};
use plotters::prelude::*;

fn render(data: &BerByModelCondition) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 400)).into_drawing_area();
        draw_ber_by_model_condition(&root, data).expect("drawing to an SVG string cannot fail");
    }
    svg
}

fn fixture() -> BerByModelCondition {
    BerByModelCondition {
        models: vec!["model-a".into(), "model-b".into(), "model-c".into()],
        conditions: vec!["benign".into(), "targeted".into()],
        // model-c has no valid Selection under `targeted`: that bar must be absent.
        ber: vec![
            vec![Some(0.10), Some(0.50)],
            vec![Some(0.0), Some(1.0)],
            vec![Some(0.25), None],
        ],
        abstain: Vec::new(),
        flag_note: String::new(),
        caption: "fixture — all_responses".into(),
    }
}

/// Bars are drawn as filled `<rect>`s with the condition colour; 3 × 2 − 1 = 5 bars, plus 2 legend
/// swatches of the same colours.
#[test]
fn one_bar_per_defined_model_condition_value() {
    let svg = render(&fixture());
    let blue = svg.matches("fill=\"#0072B2\"").count();
    let orange = svg.matches("fill=\"#B36B00\"").count();
    // 3 benign bars + 1 legend swatch; 2 targeted bars + 1 legend swatch.
    assert_eq!(blue, 4, "benign bars + legend:\n{svg}");
    assert_eq!(orange, 3, "targeted bars + legend:\n{svg}");
}

#[test]
fn every_model_and_condition_is_labelled() {
    let svg = render(&fixture());
    for label in [
        "model-a",
        "model-b",
        "model-c",
        "benign",
        "targeted",
        "Selection BER (%)",
    ] {
        assert_eq!(
            svg.matches(&format!(">{label}<")).count()
                + svg.matches(&format!(">\n{label}\n<")).count(),
            1,
            "label {label:?} should appear exactly once:\n{svg}"
        );
    }
}

/// A bar's length is its BER in percent of the 0–100 axis: the 100 % bar is 10× the 10 % bar.
#[test]
fn bar_length_is_proportional_to_ber() {
    let svg = render(&fixture());
    let widths: Vec<f64> = svg
        .lines()
        .filter(|l| l.contains("<rect") && l.contains("fill=\"#B36B00\""))
        .filter_map(|l| {
            let w = l.split("width=\"").nth(1)?.split('"').next()?;
            w.parse().ok()
        })
        .collect();
    // targeted: model-a 50 %, model-b 100 % (legend swatch is 10–11 px wide and excluded by size).
    let mut bars: Vec<f64> = widths.into_iter().filter(|w| *w > 20.0).collect();
    bars.sort_by(f64::total_cmp);
    assert_eq!(bars.len(), 2, "two targeted bars expected: {bars:?}");
    let ratio = bars[1] / bars[0];
    assert!(
        (ratio - 2.0).abs() < 0.05,
        "100 % bar should be twice the 50 % bar, ratio {ratio}"
    );
}

/// Flagged cells (high Abstain share) are labelled with their share in text, one label per flagged
/// cell — also model-c's targeted cell, which has no bar (no valid Selection, all Abstain) — and
/// the x axis title says what the mark means.
#[test]
fn a_high_abstain_bar_is_labelled_with_its_share_in_text() {
    let mut data = fixture();
    data.abstain = vec![
        vec![None, Some(0.8125)],
        vec![None, None],
        vec![None, Some(1.0)],
    ];
    data.flag_note = "⚠ = Abstain share above 50 %".into();
    let svg = render(&data);
    for label in ["⚠ 81.2 % Abstain", "⚠ 100.0 % Abstain"] {
        assert_eq!(
            svg.matches(&format!(">{label}<")).count()
                + svg.matches(&format!(">\n{label}\n<")).count(),
            1,
            "label {label:?}:\n{svg}"
        );
    }
    assert!(svg.contains("Selection BER (%) · ⚠ = Abstain share above 50 %"));
    // Without flags no label is drawn.
    assert!(!render(&fixture()).contains("Abstain"));
}

fn many(models: usize, conditions: usize) -> BerByModelCondition {
    BerByModelCondition {
        models: (0..models)
            .map(|m| format!("organisation/model-{m:02}-with-a-long-name"))
            .collect(),
        conditions: (0..conditions).map(|c| format!("condition-{c}")).collect(),
        ber: (0..models)
            .map(|m| {
                (0..conditions)
                    .map(|c| Some(((m * 7 + c * 13) % 100) as f64 / 100.0))
                    .collect()
            })
            .collect(),
        abstain: Vec::new(),
        flag_note: String::new(),
        caption: "many — all_responses".into(),
    }
}

/// Renders `data` at its own size for a container `width` px wide; returns the SVG, the size and
/// the hover regions.
fn render_at(
    data: &BerByModelCondition,
    width: u32,
) -> (String, (u32, u32), Vec<atlas_charts::HitRegion>) {
    let size = data.size_for(width);
    let mut svg = String::new();
    let regions;
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        regions =
            draw_ber_by_model_condition(&root, data).expect("drawing to an SVG string cannot fail");
    }
    (svg, size, regions)
}

/// Every `x`/`y` attribute of the SVG's texts and rects lies inside its `width` × `height` box.
fn inside(svg: &str, (w, h): (u32, u32)) -> Result<(), String> {
    for tag in svg
        .split('<')
        .filter(|t| t.starts_with("text") || t.starts_with("rect"))
    {
        for (attr, max) in [("x=\"", w), ("y=\"", h)] {
            if let Some(v) = tag.split(attr).nth(1).and_then(|r| r.split('"').next()) {
                let v: f64 = v.parse().map_err(|_| format!("bad {attr}{v}"))?;
                if v < 0.0 || v > f64::from(max) {
                    return Err(format!(
                        "{attr}{v} outside 0..{max} in <{}",
                        &tag[..tag.len().min(120)]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// One model, one condition, on a 358 px phone container: the bar, its legend swatch and the legend
/// text stay inside the canvas; one hover region for the one bar.
#[test]
fn one_model_draws_one_bar_and_its_legend_inside_the_canvas() {
    let d = many(1, 1);
    let (svg, size, regions) = render_at(&d, 358);
    assert_eq!(size.0, 358);
    inside(&svg, size).unwrap();
    assert_eq!(regions.len(), 1);
    assert!(
        regions[0].label.contains("condition-0"),
        "{}",
        regions[0].label
    );
    // Legend swatch + the bar in the first colour.
    assert_eq!(svg.matches("fill=\"#0072B2\"").count(), 2, "{svg}");
}

/// Fifty models × three conditions at 1,200 px and at 358 px: 150 hover regions, every mark inside
/// the canvas, the height grows with the models (50 bands of 3 × 14 + 12 = 54 px = 2,700 px at least).
#[test]
fn fifty_models_fit_at_desktop_and_phone_widths() {
    let d = many(50, 3);
    for width in [1200, 358] {
        let (svg, size, regions) = render_at(&d, width);
        inside(&svg, size).unwrap_or_else(|e| panic!("width {width}: {e}"));
        assert_eq!(regions.len(), 150);
        assert!(size.1 >= 2700, "{size:?}");
        for r in &regions {
            assert!(
                r.x1 < size.0 as i32 && r.y1 < size.1 as i32,
                "{r:?} outside {size:?}"
            );
        }
    }
}

/// At a phone's width every text is drawn at 14 px or more on the canvas (the app draws at the CSS
/// width, 1:1): plotters' SVG backend writes a font of size s as `font-size = s / 1.24`, so 14 px
/// reads 11.29 and anything under 11 px would mean a font under 13.6 px.
#[test]
fn texts_are_at_least_14_px_at_phone_width() {
    let (svg, _, _) = render_at(&many(3, 3), 358);
    let sizes: Vec<f64> = svg
        .split("font-size=\"")
        .skip(1)
        .filter_map(|r| r.split('"').next()?.parse().ok())
        .collect();
    assert!(!sizes.is_empty());
    assert!(sizes.iter().all(|s| *s >= 11.0), "{sizes:?}");
}

/// Many conditions wrap the legend onto several lines inside the width, and the canvas grows by a
/// line each (20 px).
#[test]
fn a_long_legend_wraps_inside_the_width() {
    let d = many(2, 7);
    let rows = d.legend_rows(358);
    assert!(rows.len() >= 2, "{rows:?}");
    assert_eq!(rows.iter().map(Vec::len).sum::<usize>(), 7);
    let (svg, size, _) = render_at(&d, 358);
    inside(&svg, size).unwrap();
    assert!(size.1 > d.size_for(1200).1);
}
