//! The chart palettes (issue 15 items 5 and 7): WCAG AA contrast of the light and dark defaults,
//! computed here from the WCAG 2.1 formula written out (not with the crate's `contrast_ratio`), the
//! CSS reader, themed drawing (background, ink, series from the palette; SVG export in the palette on
//! screen) and the smallest text of every chart at a 350-px phone width.
//!
//! Reference values: `python3` with the same formula (`/tmp/contrast2.py` of the i15b-charts
//! session, reproduced in `wcag_ratio` below):
//! light ink #1b1f24 on #ffffff 16.5606, muted #57606a 6.3897, series 5.1854 4.1834 4.7025 4.4359
//! 5.7372 3.8672 4.6714 12.6347; dark ink #e6edf3 on #161b22 14.6398, muted 7.6005, series 7.4966
//! 7.6804 8.0221 7.4462 7.3192 6.3251 13.0818 11.9087.

mod common;

use atlas_charts::atlas::{
    CoverageCurve, DesignDistributions, FlipStatus, PairFlip, PairFlips, RankPaths, ScoreRanges,
    SelectionVsRationale, StackScale, StackedBars, WordingScores,
};
use atlas_charts::clinical::{HeatMap, Proportion, RateBars};
use atlas_charts::palette::{
    contrast_ratio, current, parse_css_color, relative_luminance, themed, with_palette,
    CSS_VARIABLES,
};
use atlas_charts::plan_curve::{PlanCurve, PlanCurveSeries};
use atlas_charts::{BerByModelCondition, ChartSpec, Palette};
use common::hex;
use plotters::style::RGBColor;

/// WCAG 2.1 relative luminance, written out: channel c/255 → c/12.92 when ≤ 0.04045, else
/// ((c + 0.055)/1.055)^2.4; L = 0.2126 R + 0.7152 G + 0.0722 B.
fn wcag_luminance(c: RGBColor) -> f64 {
    let ch = |v: u8| {
        let s = v as f64 / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * ch(c.0) + 0.7152 * ch(c.1) + 0.0722 * ch(c.2)
}

/// WCAG 2.1 contrast ratio, written out: (lighter L + 0.05) / (darker L + 0.05).
fn wcag_ratio(a: RGBColor, b: RGBColor) -> f64 {
    let (x, y) = (wcag_luminance(a), wcag_luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

#[test]
fn a_worked_example_of_the_wcag_formula_matches_the_hand_calculation() {
    // #1b1f24 on white, by hand: 0x1b = 27 → 27/255 = 0.10588 → ((0.10588+0.055)/1.055)^2.4 = 0.011126;
    // 0x1f = 31 → 0.12157 → 0.013702; 0x24 = 36 → 0.14118 → 0.017642.
    // L = 0.2126·0.011126 + 0.7152·0.013702 + 0.0722·0.017642 = 0.0023654 + 0.0097997 + 0.0012738
    //   = 0.013439 (≈ 0.013404 with unrounded terms); white L = 1.
    // ratio = (1 + 0.05) / (0.013404 + 0.05) = 1.05 / 0.063404 = 16.5605.
    let ink = RGBColor(0x1b, 0x1f, 0x24);
    let white = RGBColor(255, 255, 255);
    assert!((wcag_luminance(ink) - 0.013404).abs() < 1e-5);
    assert!((wcag_ratio(ink, white) - 16.5606).abs() < 1e-3);
    // Black on white is the maximum, 21:1; a colour on itself is 1:1.
    assert!((wcag_ratio(RGBColor(0, 0, 0), white) - 21.0).abs() < 1e-12);
    assert!((wcag_ratio(ink, ink) - 1.0).abs() < 1e-12);
}

#[test]
fn the_crates_contrast_ratio_equals_the_written_out_formula() {
    for p in [Palette::LIGHT, Palette::DARK] {
        for c in p.series.iter().chain([&p.ink, &p.muted, &p.grid]) {
            assert!(
                (contrast_ratio(*c, p.background) - wcag_ratio(*c, p.background)).abs() < 1e-12
            );
            assert!((relative_luminance(*c) - wcag_luminance(*c)).abs() < 1e-12);
        }
    }
}

#[test]
fn both_default_palettes_meet_wcag_aa_text_and_graphics_contrast() {
    for (name, p) in [("light", Palette::LIGHT), ("dark", Palette::DARK)] {
        let ink = wcag_ratio(p.ink, p.background);
        assert!(ink >= 4.5, "{name}: ink {ink:.2}:1 < 4.5:1");
        let muted = wcag_ratio(p.muted, p.background);
        assert!(muted >= 4.5, "{name}: muted {muted:.2}:1 < 4.5:1");
        for (i, c) in p.series.iter().enumerate() {
            let r = wcag_ratio(*c, p.background);
            assert!(r >= 3.0, "{name}: series {i} {} at {r:.2}:1 < 3:1", hex(*c));
        }
    }
    // The python reference values of the module doc, to 1e-3.
    let light = [
        5.1854, 4.1834, 4.7025, 4.4359, 5.7372, 3.8672, 4.6714, 12.6347,
    ];
    let dark = [
        7.4966, 7.6804, 8.0221, 7.4462, 7.3192, 6.3251, 13.0818, 11.9087,
    ];
    for (p, want) in [(Palette::LIGHT, light), (Palette::DARK, dark)] {
        for (c, w) in p.series.iter().zip(want) {
            assert!(
                (wcag_ratio(*c, p.background) - w).abs() < 1e-3,
                "{}",
                hex(*c)
            );
        }
    }
}

#[test]
fn the_series_colours_are_distinct_within_each_palette() {
    for p in [Palette::LIGHT, Palette::DARK] {
        for i in 0..p.series.len() {
            for j in 0..i {
                assert_ne!(p.series[i], p.series[j], "series {i} and {j}");
            }
        }
    }
}

#[test]
fn css_colours_are_read_in_hex_and_rgb_forms_and_anything_else_is_refused() {
    assert_eq!(parse_css_color("#161b22"), Some(RGBColor(22, 27, 34)));
    assert_eq!(parse_css_color("#FFF"), Some(RGBColor(255, 255, 255)));
    assert_eq!(
        parse_css_color("rgb(230, 159, 0)"),
        Some(RGBColor(230, 159, 0))
    );
    assert_eq!(
        parse_css_color("rgba(1, 2, 3, 0.5)"),
        Some(RGBColor(1, 2, 3))
    );
    assert_eq!(parse_css_color("rgb(1 2 3)"), Some(RGBColor(1, 2, 3)));
    for bad in [
        "",
        "white",
        "#12345",
        "#gggggg",
        "rgb(300, 0, 0)",
        "rgb(1, 2)",
    ] {
        assert_eq!(parse_css_color(bad), None, "{bad:?}");
    }
}

#[test]
fn a_palette_read_from_css_properties_keeps_the_fallback_for_missing_or_bad_values() {
    let css = |name: &str| match name {
        "--chart-bg" => Some("#161b22".to_string()),
        "--chart-ink" => Some(" rgb(230, 237, 243) ".to_string()),
        "--chart-2" => Some("#e69f00".to_string()),
        "--chart-3" => Some("not a colour".to_string()),
        _ => None,
    };
    let p = Palette::from_lookup(css, &Palette::LIGHT);
    assert_eq!(p.background, RGBColor(0x16, 0x1b, 0x22));
    assert_eq!(p.ink, RGBColor(230, 237, 243));
    assert_eq!(p.series[1], RGBColor(0xe6, 0x9f, 0x00));
    assert_eq!(
        p.series[2],
        Palette::LIGHT.series[2],
        "a bad value keeps the fallback"
    );
    assert_eq!(
        p.grid,
        Palette::LIGHT.grid,
        "a missing value keeps the fallback"
    );
    assert_eq!(CSS_VARIABLES.len(), 4 + 8);
}

#[test]
fn with_palette_sets_the_palette_for_the_draw_and_restores_the_light_one() {
    assert_eq!(current(), Palette::LIGHT);
    let inside = with_palette(&Palette::DARK, || {
        (
            current(),
            themed(Palette::LIGHT.series[3]),
            themed(RGBColor(1, 2, 3)),
        )
    });
    assert_eq!(inside.0, Palette::DARK);
    assert_eq!(
        inside.1,
        Palette::DARK.series[3],
        "a light series colour maps to the dark one"
    );
    assert_eq!(inside.2, RGBColor(1, 2, 3), "other colours are kept");
    assert_eq!(current(), Palette::LIGHT);
}

fn ber_spec() -> ChartSpec {
    ChartSpec::BerBars(BerByModelCondition {
        models: vec!["model-a".into(), "model-b".into()],
        conditions: vec!["benign".into(), "targeted".into()],
        ber: vec![vec![Some(0.1), Some(0.5)], vec![Some(0.2), None]],
        abstain: Vec::new(),
        flag_note: String::new(),
        caption: "fixture — all_responses".into(),
    })
}

#[test]
fn a_dark_svg_export_fills_the_dark_background_and_draws_the_dark_ink_and_series() {
    let spec = ber_spec();
    let dark = spec.svg_themed((600, 300), &Palette::DARK).unwrap();
    let light = spec.svg_sized((600, 300)).unwrap();
    let bg = |p: &Palette| format!("fill=\"{}\"", hex(p.background));
    assert!(dark.contains(&bg(&Palette::DARK)), "dark background");
    assert!(
        !dark.contains(&bg(&Palette::LIGHT)),
        "no white surface in the dark export"
    );
    assert!(light.contains(&bg(&Palette::LIGHT)));
    // Three benign / targeted bars in the first two series colours, plus one legend swatch each.
    let fills = |svg: &str, c: RGBColor| svg.matches(&format!("fill=\"{}\"", hex(c))).count();
    assert_eq!(fills(&dark, Palette::DARK.series[0]), 2 + 1);
    assert_eq!(fills(&dark, Palette::DARK.series[1]), 1 + 1);
    assert_eq!(fills(&dark, Palette::LIGHT.series[0]), 0);
    // Text in the dark ink (plotters writes a text's colour as its fill).
    assert!(dark.contains(&format!("fill=\"{}\"", hex(Palette::DARK.ink))));
    assert!(
        !dark.contains("fill=\"#000000\""),
        "no default black text or axes"
    );
}

/// One spec of every chart kind, with long labels (the app's worst case on a phone).
fn every_kind() -> Vec<ChartSpec> {
    let models: Vec<String> = (1..=6)
        .map(|i| format!("provider/very-long-model-name-{i}-instruct"))
        .collect();
    let some = |k: usize| {
        (0..models.len())
            .map(|m| Some(0.05 * (m + k) as f64))
            .collect::<Vec<_>>()
    };
    let caption = "decodingtrust-stereotype-v1 · RQ1 seed 20260716 · 2,000 bootstrap draws · repeat policy all_responses".to_string();
    vec![
        ber_spec(),
        ChartSpec::WordingScores(WordingScores {
            models: models.clone(),
            wordings: (1..=5).map(|j| format!("wording {j}")).collect(),
            scores: (0..5).map(some).collect(),
            pooled: some(1),
            flags: Vec::new(),
            pooled_flags: Vec::new(),
            flag_note: String::new(),
            caption: caption.clone(),
        }),
        ChartSpec::ScoreRanges(ScoreRanges {
            models: models.clone(),
            min: some(0),
            max: some(2),
            pooled: some(1),
            flags: vec![Some(0.8); 6],
            pooled_flags: Vec::new(),
            flag_note: atlas_charts::atlas::flag_note(Default::default()),
            caption: caption.clone(),
        }),
        ChartSpec::RankPaths(RankPaths {
            models: models.clone(),
            steps: ["benign", "untargeted", "targeted", "Eq. 4"]
                .map(String::from)
                .to_vec(),
            ranks: (0..4)
                .map(|s| (0..6).map(|m| Some(((m + s) % 6 + 1) as f64)).collect())
                .collect(),
            flags: Vec::new(),
            flag_note: String::new(),
            rank_axis: "rank (1 = lowest score)".into(),
            caption: caption.clone(),
        }),
        ChartSpec::PairFlips(
            PairFlips {
                models: models.clone(),
                pairs: vec![PairFlip {
                    a: 1,
                    b: 0,
                    status: FlipStatus::Survives2pp,
                    ci_supported: true,
                    detail: String::new(),
                }],
                caption: caption.clone(),
            },
            models.clone(),
        ),
        ChartSpec::Distributions(DesignDistributions {
            designs: ["concentrated", "SRS", "stratified", "balanced"]
                .map(String::from)
                .to_vec(),
            values: (0..4)
                .map(|d| (0..50).map(|i| (d * i) as f64 / 10.0).collect())
                .collect(),
            axis_label: "score MAE (pp)".into(),
            strip_points: 20,
            caption: caption.clone(),
        }),
        ChartSpec::Coverage(CoverageCurve {
            k: (1..=12).collect(),
            mean: (1..=12).map(|k| Some(10.0 / k as f64)).collect(),
            range: (1..=12)
                .map(|k| Some((5.0 / k as f64, 20.0 / k as f64)))
                .collect(),
            axis_label: "score MAE (pp)".into(),
            caption: caption.clone(),
        }),
        ChartSpec::SelectionVsRationale(SelectionVsRationale {
            models: models.clone(),
            selection: some(1),
            rationale: some(2),
            caption: caption.clone(),
        }),
        ChartSpec::Stacked(StackedBars {
            rows: models.clone(),
            classes: [
                "same direction",
                "too dramatic",
                "circular",
                "format failure",
            ]
            .map(String::from)
            .to_vec(),
            colors: atlas_charts::clinical::FAILURE_COLORS.to_vec(),
            counts: (0..6).map(|m| vec![m as u64, 2, 3, 1]).collect(),
            scale: StackScale::Count,
            axis_label: "invalid counterfactuals".into(),
            caption: caption.clone(),
        }),
        ChartSpec::RateBars(RateBars {
            rows: models.clone(),
            series: ["easy", "medium", "hard"].map(String::from).to_vec(),
            values: (0..6)
                .map(|m| {
                    (0..3)
                        .map(|s| {
                            Some(Proportion {
                                k: (m + s) as u64,
                                n: 10,
                            })
                        })
                        .collect()
                })
                .collect(),
            axis_label: "CFV (% of attempts)".into(),
            caption: caption.clone(),
        }),
        ChartSpec::HeatMap(HeatMap {
            rows: models.clone(),
            columns: [
                "Black",
                "White",
                "Hispanic",
                "Asian",
                "female",
                "male",
                "low income",
            ]
            .map(String::from)
            .to_vec(),
            cells: (0..6)
                .map(|m| {
                    (0..7)
                        .map(|c| {
                            Some(Proportion {
                                k: (m * c % 5) as u64,
                                n: 5,
                            })
                        })
                        .collect()
                })
                .collect(),
            measure: "answer change".into(),
            unit: "comparisons".into(),
            caption: caption.clone(),
        }),
        ChartSpec::PlanCurve(PlanCurve {
            metric: "Score MAE in 95 % of audits".into(),
            unit: "pp".into(),
            series: [
                "concentrated",
                "srs",
                "stratified",
                "balanced",
                "coverage:2",
                "coverage:4",
            ]
            .iter()
            .enumerate()
            .map(|(i, d)| PlanCurveSeries {
                design: d.to_string(),
                points: [20usize, 50, 100, 200, 500, 1000, 2000]
                    .iter()
                    .map(|&b| (b, Some((10.0 + i as f64) / (b as f64).sqrt())))
                    .collect(),
            })
            .collect(),
            target: Some(2.0),
            higher_is_better: false,
            notes: Vec::new(),
            caption,
        }),
    ]
}

/// At a 350-px container (a 390-px phone) every chart is drawn 350 px wide, one canvas pixel per
/// CSS pixel, and its smallest text is ≥ 11 px (the `FontProbe` sees every text plotters draws,
/// tick labels included).
#[test]
fn every_chart_at_phone_width_is_drawn_at_that_width_with_text_of_at_least_11_px() {
    for spec in every_kind() {
        let (w, h) = spec.size_for(Some(350));
        assert_eq!(w, 350, "{}", spec.caption());
        let min = spec.min_font_px((w, h)).unwrap();
        let min = min.expect("the chart draws text");
        assert!(
            min >= 11.0,
            "{:?}: smallest text {min} px",
            std::mem::discriminant(&spec)
        );
        // And the same chart draws in the dark palette too.
        let svg = spec.svg_themed((w, h), &Palette::DARK).unwrap();
        assert!(svg.contains(&format!("fill=\"{}\"", hex(Palette::DARK.background))));
    }
}

#[test]
fn a_wide_container_keeps_each_panels_own_width_and_a_narrow_one_adds_room_for_the_legend() {
    for spec in every_kind() {
        let natural = spec.size();
        if !matches!(spec, ChartSpec::BerBars(_)) {
            assert_eq!(spec.size_for(Some(2000)), natural);
            let (w, h) = spec.size_for(Some(350));
            assert_eq!(w, 350);
            assert!(h >= natural.1, "a narrow chart is never shorter");
        }
    }
    // Panel (a) with 5 wordings + pooled: 6 legend lines of 18 px + 10 under the plot.
    let a = &every_kind()[1];
    assert_eq!(a.size_for(Some(350)).1, a.size().1 + 6 * 18 + 10);
}
