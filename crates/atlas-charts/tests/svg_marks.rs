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
    let orange = svg.matches("fill=\"#E69F00\"").count();
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
        .filter(|l| l.contains("<rect") && l.contains("fill=\"#E69F00\""))
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
