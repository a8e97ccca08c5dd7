//! The clinical figures (seed `001_…` Figs. 2–6) drawn to SVG natively: on small fixtures each test counts
//! the marks (by element and colour), reads their sizes and labels, and checks the hover regions. Every
//! expected value follows from the fixture, as the comments say.
//!
//! Set `ATLAS_SVG_DIR=/some/dir` to also write each rendered SVG there for a look.

use atlas_charts::clinical::*;
use atlas_charts::{hit_index, PALETTE};
use plotters::prelude::*;

mod common;
use common::*;

fn p(k: u64, n: u64) -> Option<Proportion> {
    Some(Proportion { k, n })
}

#[test]
fn proportions_give_fractions_and_say_their_denominator() {
    assert_eq!(Proportion { k: 1, n: 4 }.rate(), Some(0.25));
    assert_eq!(Proportion { k: 0, n: 0 }.rate(), None);
    assert_eq!(Proportion { k: 1, n: 3 }.describe(), "33.33% (1 of 3)");
    assert_eq!(Proportion { k: 0, n: 0 }.describe(), "— (0 of 0)");
}

/// model-a: all 1 of 3, EASY 1 of 1; model-b: all 0 of 3, EASY none → 3 bars (2 in the first series'
/// colour, 1 in the second's) plus one legend swatch per series.
#[test]
fn rate_bars_draw_one_bar_per_defined_rate_with_length_proportional_to_the_rate() {
    let data = RateBars {
        rows: vec!["model-a".into(), "model-b".into()],
        series: vec!["all questions".into(), "EASY".into()],
        values: vec![vec![p(1, 3), p(1, 1)], vec![p(0, 3), None]],
        axis_label: "CFV (% of attempts)".into(),
        caption: "fixture".into(),
    };
    let (svg, hits) = render("clinical_rate_bars", (720, 260), |a| {
        draw_rate_bars(a, &data).unwrap()
    });
    assert_eq!(count(&svg, "rect", "fill", &hex(PALETTE[0])), 2 + 1);
    assert_eq!(count(&svg, "rect", "fill", &hex(PALETTE[1])), 1 + 1);
    // 1 of 3 against 1 of 1: a third of the length (legend swatches are 12 px wide, 0 of 3 is 0 px).
    let widths = |c: RGBColor| -> Vec<f64> {
        elements(&svg, "rect", "fill", &hex(c))
            .iter()
            .map(|l| attr_f64(l, "width"))
            .filter(|w| *w > 13.0)
            .collect()
    };
    let (third, whole) = (widths(PALETTE[0]), widths(PALETTE[1]));
    assert_eq!((third.len(), whole.len()), (1, 1));
    assert!(
        (third[0] / whole[0] - 1.0 / 3.0).abs() < 0.01,
        "{third:?} {whole:?}"
    );
    assert_eq!(text(&svg, "model-a"), 1);
    assert_eq!(text(&svg, "EASY"), 1);
    // Each bar's value is written at its end.
    for label in ["33% (1/3)", "0% (0/3)", "100% (1/1)"] {
        assert_eq!(text(&svg, label), 1, "{label}");
    }
    let labels: Vec<&str> = hits.iter().map(|h| h.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "model-a · all questions: 33.33% (1 of 3)",
            "model-b · all questions: 0.00% (0 of 3)",
            "model-a · EASY: 100.00% (1 of 1)",
        ]
    );
    hover_finds_every_region(&hits);
}

/// heat_color by hand: 0 and 1 are the end stops; 0.125 lies halfway between the first two stops
/// (255,255,229) and (254,217,118): (254.5 → 255, 236, 173.5 → 174), rounding halves away from zero.
#[test]
fn heat_colours_interpolate_between_the_stops_and_clamp() {
    assert_eq!(heat_color(0.0), HEAT_STOPS[0]);
    assert_eq!(heat_color(1.0), HEAT_STOPS[4]);
    assert_eq!(heat_color(0.5), HEAT_STOPS[2]);
    assert_eq!(heat_color(0.125), RGBColor(255, 236, 174));
    assert_eq!(heat_color(-1.0), HEAT_STOPS[0]);
    assert_eq!(heat_color(2.0), HEAT_STOPS[4]);
    assert_eq!(heat_color(f64::NAN), HEAT_STOPS[0]);
}

/// 2 models × 3 prefixes: model-a 1/6, 2/6, none; model-b 0/6, 6/6, 0 of 0 → one square per cell in its
/// colour (two empty), the rate written in it, and six hover regions in row-major order.
#[test]
fn the_heat_map_draws_a_coloured_cell_per_model_and_prefix_in_row_major_hover_order() {
    let data = HeatMap {
        rows: vec!["model-a".into(), "model-b".into()],
        columns: vec![
            "male-white".into(),
            "female-white".into(),
            "male-black".into(),
        ],
        cells: vec![
            vec![p(1, 6), p(2, 6), None],
            vec![p(0, 6), p(6, 6), p(0, 0)],
        ],
        measure: "answer change".into(),
        unit: "comparisons".into(),
        caption: "fixture".into(),
    };
    let (svg, hits) = render("clinical_heat_map", (720, 240), |a| {
        draw_heat_map(a, &data).unwrap()
    });
    for (rate, n) in [(1.0 / 6.0, 1), (2.0 / 6.0, 1), (0.0, 1), (1.0, 1)] {
        assert_eq!(
            count(&svg, "rect", "fill", &hex(heat_color(rate))),
            n,
            "rate {rate}"
        );
    }
    assert_eq!(count(&svg, "rect", "fill", &hex(HEAT_EMPTY)), 2);
    // Cell texts: 1/6 → 17%, 2/6 → 33%; "0%" and "100%" also label the colour key.
    assert_eq!(text(&svg, "17%"), 1);
    assert_eq!(text(&svg, "33%"), 1);
    assert_eq!(text(&svg, "0%"), 2);
    assert_eq!(text(&svg, "100%"), 2);
    assert_eq!(text(&svg, "—"), 2);
    assert_eq!(text(&svg, "female-white"), 1);
    assert_eq!(hits.len(), 6);
    assert_eq!(
        hits[1].label,
        "model-a · female-white: answer change 33.33% (2 of 6 comparisons)"
    );
    assert_eq!(hits[2].label, "model-a · male-black: no comparisons");
    assert_eq!(
        hits[4].label,
        "model-b · female-white: answer change 100.00% (6 of 6 comparisons)"
    );
    assert_eq!(hits[5].label, "model-b · male-black: no comparisons");
    // Columns left to right, model-a above model-b; each cell's centre names its own index.
    assert!(hits[0].x1 < hits[1].x0 && hits[1].x1 < hits[2].x0);
    assert!(hits[0].y1 < hits[3].y0);
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(
            hit_index(&hits, (h.x0 + h.x1) / 2, (h.y0 + h.y1) / 2),
            Some(i)
        );
    }
    hover_finds_every_region(&hits);
}

/// Counts on a common axis: model-a [2, 1, 0], model-b [1, 0, 0] → 3 segments; model-a's class-0 segment
/// (2) is twice model-b's (1), where shares would make it 2/3 of it (66.7% against 100%).
#[test]
fn stacked_bars_in_counts_share_one_axis_and_in_shares_fill_each_row() {
    let rows = vec!["model-a".to_string(), "model-b".to_string()];
    let classes: Vec<String> = ["same_direction", "too_dramatic", "circular"]
        .map(String::from)
        .to_vec();
    let mut data = StackedBars {
        rows,
        classes,
        colors: FAILURE_COLORS.to_vec(),
        counts: vec![vec![2, 1, 0], vec![1]],
        scale: StackScale::Count,
        axis_label: "invalid attempts".into(),
        caption: "fixture".into(),
    };
    let widths = |svg: &str| -> Vec<f64> {
        elements(svg, "rect", "fill", &hex(FAILURE_COLORS[0]))
            .iter()
            .map(|l| attr_f64(l, "width"))
            .filter(|w| *w > 13.0)
            .collect()
    };
    let (svg, hits) = render("clinical_stacked_counts", (720, 240), |a| {
        draw_stacked_bars(a, &data).unwrap()
    });
    let w = widths(&svg);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!((w[0] / w[1] - 2.0).abs() < 0.02, "{w:?}");
    assert_eq!(count(&svg, "rect", "fill", &hex(FAILURE_COLORS[1])), 1 + 1);
    assert_eq!(count(&svg, "rect", "fill", &hex(FAILURE_COLORS[2])), 1);
    assert_eq!(text(&svg, "too_dramatic"), 1);
    assert_eq!(hits.len(), 3);
    assert!(hits
        .iter()
        .any(|h| h.label == "model-a · same_direction: 2 of 3 (66.67%)"));
    hover_finds_every_region(&hits);

    data.scale = StackScale::Share;
    let (svg, _) = render("clinical_stacked_shares", (720, 240), |a| {
        draw_stacked_bars(a, &data).unwrap()
    });
    let w = widths(&svg);
    assert!((w[0] / w[1] - 2.0 / 3.0).abs() < 0.02, "{w:?}");
}

/// Six prefix labels of up to 15 characters (about 105 px) do not fit ~80-px columns of a 720-px heat map
/// with a long model name: every second label moves one line (15 px) down, so no two labels overlap.
#[test]
fn long_column_labels_of_the_heat_map_alternate_between_two_lines() {
    let columns: Vec<String> = [
        "male-white",
        "female-white",
        "male-black",
        "female-black",
        "male-hispanic",
        "female-hispanic",
    ]
    .map(String::from)
    .to_vec();
    let data = HeatMap {
        rows: vec!["SmolLM2-135M-Instruct".into()],
        cells: vec![vec![p(1, 2); 6]],
        columns: columns.clone(),
        measure: "answer change".into(),
        unit: "comparisons".into(),
        caption: "fixture".into(),
    };
    let (svg, _) = render("clinical_heat_map_stagger", (720, 170), |a| {
        draw_heat_map(a, &data).unwrap()
    });
    // plotters writes `<text x=".." y=".." …>` on the line before the text itself.
    let lines: Vec<&str> = svg.lines().collect();
    let y = |label: &str| -> f64 {
        let i = lines.iter().position(|l| *l == label).expect(label);
        attr_f64(lines[i - 1], "y")
    };
    assert!((y("female-white") - y("male-white") - 15.0).abs() < 0.5);
    assert!((y("male-black") - y("male-white")).abs() < 0.5);
    assert!((y("female-hispanic") - y("male-hispanic") - 15.0).abs() < 0.5);
}
