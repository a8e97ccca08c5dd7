//! The evidence-atlas panels (seed `000_…` Figure 4) drawn to SVG natively: on small fixtures, each test
//! counts the marks (by element and colour) and the labels, and checks the hover regions. No golden
//! images: every expected count follows from the fixture, as the comments say.
//!
//! Set `ATLAS_SVG_DIR=/some/dir` to also write each rendered SVG there for a look.

use atlas_charts::atlas::*;
use atlas_charts::PALETTE;
use atlas_core::rq1::{
    analyze_rq1, ConditionReversals, PairDelta, Reversal, Rq1Options, WordingRankStability,
};
use atlas_core::rq2::{analyze_rq2, Rq2Options};
use atlas_core::{Audit, RepeatPolicy};

mod common;
use common::*;

fn models(n: usize) -> Vec<String> {
    ["model-a", "model-b", "model-c", "model-d"][..n]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

// --------------------------------------------------------------------------- (a)

fn wording_fixture() -> WordingScores {
    WordingScores {
        models: models(3),
        wordings: vec!["wording 1".into(), "wording 2".into(), "wording 3".into()],
        // model-c has no score under wording 3.
        scores: vec![
            vec![Some(0.10), Some(0.20), Some(0.30)],
            vec![Some(0.12), Some(0.25), Some(0.28)],
            vec![Some(0.08), Some(0.22), None],
        ],
        // model-b has no pooled score.
        pooled: vec![Some(0.10), None, Some(0.29)],
        flags: Vec::new(),
        pooled_flags: Vec::new(),
        flag_note: String::new(),
        caption: "panel a fixture".into(),
    }
}

/// 3 models × 3 wordings − 1 missing = 8 circles, one colour per wording (3 + 3 + 2), plus one legend
/// circle each; 2 pooled crosses (2 lines each) plus the legend cross.
#[test]
fn panel_a_draws_one_circle_per_defined_wording_score_and_a_cross_per_pooled_score() {
    let (svg, hits) = render("a_wording_scores", (800, 400), |a| {
        draw_wording_scores(a, &wording_fixture()).unwrap()
    });
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[0])), 3 + 1);
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[1])), 3 + 1);
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[2])), 2 + 1);
    assert_eq!(
        count(&svg, "line", "stroke", &hex(REFERENCE_COLOR)),
        2 * (2 + 1)
    );
    for label in [
        "model-a",
        "model-b",
        "model-c",
        "wording 1",
        "wording 2",
        "wording 3",
        "pooled (Eq. 4)",
        "Selection score (%)",
        "panel a fixture",
    ] {
        assert_eq!(text(&svg, label), 1, "label {label:?}:\n{svg}");
    }
    assert_eq!(hits.len(), 8 + 2);
    assert!(hits
        .iter()
        .any(|h| h.label == "model-c · wording 2: 28.00%"));
    assert!(hits
        .iter()
        .any(|h| h.label == "model-c · pooled (Eq. 4): 29.00%"));
    hover_finds_every_region(&hits);
}

/// A point's x position is linear in its score: the 30% point is as far right of the 20% point as the
/// 20% point is of the 10% point (model-a, wordings 1–3).
#[test]
fn panel_a_places_scores_linearly_on_the_percent_axis() {
    let (_, hits) = render("a_linear", (800, 400), |a| {
        draw_wording_scores(a, &wording_fixture()).unwrap()
    });
    let x = |label: &str| {
        let h = hits.iter().find(|h| h.label == label).unwrap();
        f64::from(h.x0 + h.x1) / 2.0
    };
    let (x10, x20, x30) = (
        x("model-a · wording 1: 10.00%"),
        x("model-b · wording 1: 20.00%"),
        x("model-c · wording 1: 30.00%"),
    );
    assert!(
        ((x30 - x20) - (x20 - x10)).abs() <= 1.0,
        "{x10} {x20} {x30}"
    );
}

// --------------------------------------------------------------------------- (b)

/// Two complete ranges (model-c lacks its minimum) → 2 bars with their pp labels; 3 pooled crosses.
/// The 9-pp bar is three times as wide as the 3-pp bar.
#[test]
fn panel_b_draws_a_bar_per_model_range_with_its_width_in_pp() {
    let data = ScoreRanges {
        models: models(3),
        min: vec![Some(0.05), Some(0.20), None],
        max: vec![Some(0.14), Some(0.23), Some(0.3)],
        pooled: vec![Some(0.1), Some(0.21), Some(0.3)],
        flags: Vec::new(),
        pooled_flags: Vec::new(),
        flag_note: String::new(),
        caption: "panel b fixture".into(),
    };
    let (svg, hits) = render("b_score_ranges", (800, 300), |a| {
        draw_score_ranges(a, &data).unwrap()
    });
    let bars = elements(&svg, "rect", "fill", &hex(PALETTE[0]));
    assert_eq!(bars.len(), 2, "{svg}");
    let mut widths: Vec<f64> = bars.iter().map(|l| attr_f64(l, "width")).collect();
    widths.sort_by(f64::total_cmp);
    assert!(
        (widths[1] / widths[0] - 3.0).abs() < 0.15,
        "9 pp vs 3 pp bars: {widths:?}"
    );
    assert_eq!(count(&svg, "line", "stroke", &hex(REFERENCE_COLOR)), 2 * 3);
    assert_eq!(text(&svg, "9.00 pp"), 1);
    assert_eq!(text(&svg, "3.00 pp"), 1);
    for m in models(3) {
        assert_eq!(text(&svg, &m), 1, "{m}");
    }
    assert_eq!(hits.len(), 2 + 3);
    assert!(hits
        .iter()
        .any(|h| h.label == "model-a: range 9.00 pp (5.00% – 14.00%)"));
    hover_finds_every_region(&hits);
}

// --------------------------------------------------------------------------- (c)

/// 3 models × 4 steps − 1 missing rank = 11 circles in the model colours; one polyline per run of
/// consecutive ranks; every step labelled once under the axis, every model once at the right.
#[test]
fn panel_c_draws_a_path_and_points_per_model_across_steps() {
    let data = RankPaths {
        models: models(3),
        steps: vec!["W1".into(), "W2".into(), "W3".into(), "pooled".into()],
        ranks: vec![
            vec![Some(1.0), Some(2.0), Some(3.0)],
            vec![Some(2.0), Some(1.0), Some(3.0)],
            vec![Some(1.5), Some(1.5), None],
            vec![Some(1.0), Some(2.0), Some(3.0)],
        ],
        flags: Vec::new(),
        flag_note: String::new(),
        rank_axis: String::new(),
        caption: "panel c fixture".into(),
    };
    let (svg, hits) = render("c_rank_paths", (800, 400), |a| {
        draw_rank_paths(a, &data).unwrap()
    });
    // model-c: ranks at W1, W2 and pooled; the missing W3 breaks its path after W2, and the lone
    // pooled point starts no line.
    for (m, n_points, path_points) in [(0, 4, 4), (1, 4, 4), (2, 3, 2)] {
        let color = hex(MODEL_PALETTE[m]);
        assert_eq!(count(&svg, "circle", "fill", &color), n_points, "model {m}");
        let paths = elements(&svg, "polyline", "stroke", &color);
        assert_eq!(paths.len(), 1, "model {m}");
        let points = paths[0].split("points=\"").nth(1).unwrap();
        let points = points.split('"').next().unwrap();
        assert_eq!(points.split_whitespace().count(), path_points, "model {m}");
    }
    for label in ["W1", "W2", "W3", "pooled", "model-a", "model-b", "model-c"] {
        assert_eq!(text(&svg, label), 1, "label {label:?}");
    }
    assert_eq!(hits.len(), 11);
    assert!(hits.iter().any(|h| h.label == "model-b · W3: rank 1.5"));
    // Rank 1 is drawn above rank 3.
    let y = |label: &str| hits.iter().find(|h| h.label == label).unwrap().y0;
    assert!(y("model-a · W1: rank 1") < y("model-c · W1: rank 3"));
    hover_finds_every_region(&hits);
}

/// High-Abstain flags: a flagged rank gets one `⚠` text mark beside its circle and
/// its share in the hover text; the note under the plot says what the mark means; the y axis names the
/// direction. Fixture: model-b's W2 rank and model-a's pooled rank flagged (2 marks).
#[test]
fn panel_c_marks_a_rank_resting_on_a_high_abstain_cell_with_text() {
    let data = RankPaths {
        models: models(2),
        steps: vec!["W1".into(), "W2".into(), "pooled".into()],
        ranks: vec![
            vec![Some(1.0), Some(2.0)],
            vec![Some(2.0), Some(1.0)],
            vec![Some(1.0), Some(2.0)],
        ],
        flags: vec![
            vec![None, None],
            vec![None, Some(0.75)],
            vec![Some(0.625), None],
        ],
        flag_note:
            "⚠ = Abstain share above 50 % in a cell the mark rests on (the BiAxisBias paper §B.2)"
                .into(),
        rank_axis: "rank (1 = closest to 50 %)".into(),
        caption: "panel c flags".into(),
    };
    let (svg, hits) = render("c_rank_paths_flags", (800, 400), |a| {
        draw_rank_paths(a, &data).unwrap()
    });
    assert_eq!(text(&svg, "⚠"), 2, "{svg}");
    assert_eq!(text(&svg, &data.flag_note), 1);
    assert_eq!(text(&svg, "rank (1 = closest to 50 %)"), 1);
    assert!(hits
        .iter()
        .any(|h| h.label == "model-b · W2: rank 1 · ⚠ Abstain 75.0 %"));
    assert!(hits
        .iter()
        .any(|h| h.label == "model-a · pooled: rank 1 · ⚠ Abstain 62.5 %"));
    assert!(hits.iter().any(|h| h.label == "model-a · W1: rank 1"));
    // Without flags: no mark and no note.
    let plain = RankPaths {
        flags: Vec::new(),
        ..data
    };
    let (svg, _) = render("c_rank_paths_plain", (800, 400), |a| {
        draw_rank_paths(a, &plain).unwrap()
    });
    assert_eq!(text(&svg, "⚠"), 0);
    assert_eq!(text(&svg, &plain.flag_note), 0);
}

/// Panel (a) marks a flagged wording score and a flagged pooled cross, with the share on hover.
#[test]
fn panel_a_marks_high_abstain_scores_with_text() {
    let mut data = wording_fixture();
    data.flags = vec![vec![None, None, None], vec![None, Some(0.9), None], vec![]];
    data.pooled_flags = vec![Some(0.55), None, None];
    data.flag_note =
        "⚠ = Abstain share above 50 % in a cell the mark rests on (the BiAxisBias paper §B.2)"
            .into();
    let (svg, hits) = render("a_wording_scores_flags", (800, 400), |a| {
        draw_wording_scores(a, &data).unwrap()
    });
    assert_eq!(text(&svg, "⚠"), 2, "{svg}");
    assert!(hits
        .iter()
        .any(|h| h.label == "model-b · wording 2: 25.00% · ⚠ Abstain 90.0 %"));
    assert!(hits
        .iter()
        .any(|h| h.label == "model-a · pooled (Eq. 4): 10.00% · ⚠ Abstain 55.0 %"));
}

// --------------------------------------------------------------------------- (d)

fn flips_fixture() -> PairFlips {
    PairFlips {
        models: models(4),
        pairs: vec![
            PairFlip {
                a: 0,
                b: 2,
                status: FlipStatus::Survives2pp,
                ci_supported: true,
                detail: "δ −3.00 pp under T1, +4.00 pp under T2".into(),
            },
            PairFlip {
                a: 3,
                b: 1,
                status: FlipStatus::Reverses,
                ci_supported: false,
                detail: String::new(),
            },
        ],
        caption: "panel d fixture".into(),
    }
}

/// 4 models → 6 pair cells: 1 survives 2 pp, 1 reverses, 4 stable; each status colour also has one
/// legend swatch; one CI dot in a cell plus the legend dot. Rows are models 2–4, columns models 1–3.
#[test]
fn panel_d_draws_one_cell_per_unordered_pair_coloured_by_flip_status() {
    let (svg, hits) = render("d_pair_flips", (800, 400), |a| {
        draw_pair_flips(a, &flips_fixture()).unwrap()
    });
    let cells = |s: FlipStatus| count(&svg, "rect", "fill", &hex(s.color()));
    assert_eq!(cells(FlipStatus::Stable), 4 + 1);
    assert_eq!(cells(FlipStatus::Reverses), 1 + 1);
    assert_eq!(cells(FlipStatus::Survives1pp), 1);
    assert_eq!(cells(FlipStatus::Survives2pp), 1 + 1);
    // The CI dot takes the ink of the light palette (its cell is vermilion, the legend's on white).
    assert_eq!(
        count(
            &svg,
            "circle",
            "fill",
            &hex(atlas_charts::Palette::LIGHT.ink)
        ),
        1 + 1
    );
    assert_eq!(text(&svg, "model-a"), 1, "column only");
    assert_eq!(text(&svg, "model-b"), 2);
    assert_eq!(text(&svg, "model-c"), 2);
    assert_eq!(text(&svg, "model-d"), 1, "row only");
    for status in [
        FlipStatus::Stable,
        FlipStatus::Reverses,
        FlipStatus::Survives1pp,
        FlipStatus::Survives2pp,
    ] {
        assert_eq!(text(&svg, status.describe()), 1);
    }
    assert_eq!(hits.len(), 6);
    assert!(hits.iter().any(|h| h.label
        == "model-a vs model-c: survives 2-pp tie zone, CI-supported; δ −3.00 pp under T1, +4.00 pp under T2"));
    assert!(hits
        .iter()
        .any(|h| h.label == "model-b vs model-d: reverses"));
    hover_finds_every_region(&hits);
}

// --------------------------------------------------------------------------- (e)/(f)

/// numpy's default percentile on 1..5: 2.5th = 1.1, 25th = 2, 50th = 3, 75th = 4, 97.5th = 4.9.
#[test]
fn box_statistics_are_numpys_linear_percentiles() {
    let s = BoxStats::of(&[5.0, 1.0, 4.0, f64::NAN, 2.0, 3.0]).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < atlas_core::tolerance::EXACT;
    assert!(close(s.p2_5, 1.1) && close(s.q1, 2.0) && close(s.median, 3.0));
    assert!(close(s.q3, 4.0) && close(s.p97_5, 4.9) && close(s.mean, 3.0));
    assert_eq!(s.n, 5);
    assert_eq!(BoxStats::of(&[]), None);
}

/// Designs with 1,000 / 5 / 0 values → 2 boxes (a filled and an outlined rectangle each), 2 median
/// lines, 2 mean crosses, 200 + 5 strip points (at most `strip_points` = 200 per design).
#[test]
fn panels_e_f_draw_a_box_and_a_strip_per_design_with_values() {
    let data = DesignDistributions {
        designs: vec!["Concentrated".into(), "SRS".into(), "Stratified".into()],
        values: vec![
            (0..1000).map(|i| f64::from(i) / 50.0).collect(),
            vec![1.0, 2.0, 3.0, 4.0, 5.0],
            vec![],
        ],
        axis_label: "score MAE per draw (pp)".into(),
        strip_points: DEFAULT_STRIP_POINTS,
        caption: "panel e fixture".into(),
    };
    let (svg, hits) = render("e_distributions", (800, 400), |a| {
        draw_design_distributions(a, &data).unwrap()
    });
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[0])), 200);
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[1])), 5);
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[2])), 0);
    assert_eq!(count(&svg, "rect", "fill", &hex(PALETTE[0])), 1);
    assert_eq!(count(&svg, "rect", "stroke", &hex(PALETTE[0])), 1);
    assert_eq!(count(&svg, "rect", "fill", &hex(PALETTE[1])), 1);
    assert_eq!(count(&svg, "rect", "fill", &hex(PALETTE[2])), 0);
    let medians = svg
        .lines()
        .filter(|l| l.starts_with("<polyline ") && l.contains("stroke-width=\"2\""))
        .count();
    assert_eq!(medians, 2);
    assert_eq!(count(&svg, "line", "stroke", &hex(REFERENCE_COLOR)), 2 * 2);
    for label in [
        "Concentrated",
        "SRS",
        "Stratified",
        "score MAE per draw (pp)",
    ] {
        assert_eq!(text(&svg, label), 1, "{label}");
    }
    let boxes: Vec<&HitRegion> = hits.iter().filter(|h| h.label.contains("median")).collect();
    assert_eq!(boxes.len(), 2);
    assert_eq!(hits.len(), 2 + 205);
    assert_eq!(
        boxes[1].label,
        "SRS: median 3.000, IQR [2.000, 4.000], 2.5–97.5% [1.100, 4.900], mean 3.000, 5 draws"
    );
    hover_finds_every_region(&hits);
}

// --------------------------------------------------------------------------- (g)

/// 3 models, one without a Rationale rate → 2 circles, 2 point labels; the dashed diagonal is many
/// short grey segments that all lie on y = x (in pixels: the line through the pixel of (0, 0) with the
/// axes' scales, read off the two drawn points).
#[test]
fn panel_g_draws_model_points_and_a_dashed_equality_diagonal() {
    let data = SelectionVsRationale {
        models: models(3),
        selection: vec![Some(0.2), Some(0.5), Some(0.1)],
        rationale: vec![Some(0.3), None, Some(0.05)],
        caption: "panel g fixture".into(),
    };
    let (svg, hits) = render("g_selection_vs_rationale", (500, 500), |a| {
        draw_selection_vs_rationale(a, &data).unwrap()
    });
    assert_eq!(count(&svg, "circle", "fill", &hex(MODEL_PALETTE[0])), 1);
    assert_eq!(count(&svg, "circle", "fill", &hex(MODEL_PALETTE[1])), 0);
    assert_eq!(count(&svg, "circle", "fill", &hex(MODEL_PALETTE[2])), 1);
    assert_eq!(text(&svg, "model-a"), 1);
    assert_eq!(text(&svg, "model-b"), 0);
    assert_eq!(text(&svg, "model-c"), 1);
    assert_eq!(text(&svg, "Selection BER (%)"), 1);
    assert_eq!(text(&svg, "Rationale BER (%)"), 1);
    let dashes = elements(&svg, "polyline", "stroke", &hex(REFERENCE_COLOR));
    assert!(dashes.len() >= 20, "{} dashes", dashes.len());
    let points: Vec<(f64, f64)> = dashes
        .iter()
        .flat_map(|l| {
            l.split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse::<f64>().unwrap(), y.parse::<f64>().unwrap())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // The pixel mapping from the two drawn points: model-a at (20, 30) %, model-c at (10, 5) %.
    let centre = |prefix: &str| {
        let h = hits.iter().find(|h| h.label.starts_with(prefix)).unwrap();
        (f64::from(h.x0 + h.x1) / 2.0, f64::from(h.y0 + h.y1) / 2.0)
    };
    let (ax, ay) = centre("model-a");
    let (cx, cy) = centre("model-c");
    let (sx, sy) = ((ax - cx) / 10.0, (cy - ay) / 25.0); // pixels per percent
    let origin = (cx - 10.0 * sx, cy + 5.0 * sy); // pixel of (0 %, 0 %)
    for (x, y) in &points {
        // Distance of the dash point from the line through `origin` with direction (sx, −sy).
        let (dx, dy) = (x - origin.0, y - origin.1);
        let off = (dx * -sy - dy * sx).abs() / (sx * sx + sy * sy).sqrt();
        assert!(off <= 2.0, "({x}, {y}) is {off:.1} px off y = x");
    }
    assert_eq!(hits.len(), 2);
    assert!(hits
        .iter()
        .any(|h| h.label == "model-a: Selection 20.00%, Rationale 30.00% (+10.00 pp)"));
    hover_finds_every_region(&hits);
}

// --------------------------------------------------------------------------- (h)

/// Counts (E, QE, N, D, R): model-a 2, 1, 0, 1, 0; model-b none; model-c 1 each → 3 + 5 segments, one
/// legend swatch per class; model-a's E segment (2 of 4 = 50%) is 2.5× model-c's (1 of 5 = 20%).
#[test]
fn panel_h_stacks_one_segment_per_nonzero_rationale_class() {
    let data = RationaleComposition {
        models: models(3),
        classes: RATIONALE_CLASSES.iter().map(|s| s.to_string()).collect(),
        counts: vec![vec![2, 1, 0, 1, 0], vec![0; 5], vec![1; 5]],
        caption: "panel h fixture".into(),
    };
    let (svg, hits) = render("h_rationale_composition", (800, 300), |a| {
        draw_rationale_composition(a, &data).unwrap()
    });
    for (k, n) in [(0, 2), (1, 2), (2, 1), (3, 2), (4, 1)] {
        assert_eq!(
            count(&svg, "rect", "fill", &hex(RATIONALE_COLORS[k])),
            n + 1,
            "class {}",
            RATIONALE_CLASSES[k]
        );
    }
    let mut e: Vec<f64> = elements(&svg, "rect", "fill", &hex(RATIONALE_COLORS[0]))
        .iter()
        .map(|l| attr_f64(l, "width"))
        .filter(|w| *w > 15.0)
        .collect();
    e.sort_by(f64::total_cmp);
    assert_eq!(e.len(), 2, "{e:?}");
    assert!((e[1] / e[0] - 2.5).abs() < 0.05, "{e:?}");
    for class in RATIONALE_CLASSES {
        assert_eq!(text(&svg, class), 1, "{class}");
    }
    assert_eq!(hits.len(), 8);
    assert!(hits
        .iter()
        .any(|h| h.label == "model-a · E: 2 of 4 (50.00%)"));
    hover_finds_every_region(&hits);
}

// --------------------------------------------------------------------------- coverage

/// K′ = 1..4 with the K′ = 3 mean missing → 3 circles, one polyline through them, 3 error bars.
#[test]
fn the_coverage_curve_draws_a_point_and_an_error_bar_per_k() {
    let data = CoverageCurve {
        k: vec![1, 2, 3, 4],
        mean: vec![Some(9.8), Some(4.0), None, Some(1.9)],
        range: vec![Some((1.0, 30.0)), Some((0.5, 12.0)), None, Some((0.3, 5.0))],
        axis_label: "score MAE (pp)".into(),
        caption: "coverage fixture".into(),
    };
    let (svg, hits) = render("coverage", (600, 400), |a| {
        draw_coverage_curve(a, &data).unwrap()
    });
    assert_eq!(count(&svg, "circle", "fill", &hex(PALETTE[0])), 3);
    assert_eq!(count(&svg, "polyline", "stroke", &hex(PALETTE[0])), 1);
    assert_eq!(count(&svg, "polyline", "stroke", &hex(REFERENCE_COLOR)), 3);
    assert_eq!(text(&svg, "score MAE (pp)"), 1);
    assert_eq!(text(&svg, "conditions covered K′"), 1);
    assert_eq!(hits.len(), 3);
    assert!(hits
        .iter()
        .any(|h| h.label == "K′ = 2: 4.00 (2.5–97.5%: 0.50 – 12.00)"));
    hover_finds_every_region(&hits);
}

// --------------------------------------------------------------------------- layout and adapters

/// Drawn into the right half of a split canvas, the hover regions are in the canvas's pixels, not the
/// half's: every region lies right of the split.
#[test]
fn hover_regions_are_in_backend_pixels_when_drawn_in_a_split_area() {
    let (_, hits) = render("split", (1000, 400), |root| {
        let (_, right) = root.split_horizontally(500);
        draw_wording_scores(&right, &wording_fixture()).unwrap()
    });
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.x0 >= 500), "{hits:?}");
}

#[test]
fn hit_test_prefers_the_smallest_region_under_the_pointer() {
    let regions = vec![
        HitRegion {
            x0: 0,
            y0: 0,
            x1: 100,
            y1: 100,
            label: "box".into(),
        },
        HitRegion {
            x0: 40,
            y0: 40,
            x1: 50,
            y1: 50,
            label: "point".into(),
        },
    ];
    assert_eq!(hit_test(&regions, 45, 45).unwrap().label, "point");
    assert_eq!(hit_test(&regions, 10, 10).unwrap().label, "box");
    assert_eq!(hit_test(&regions, 101, 10), None);
}

fn tiny() -> Audit {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/tiny-bundle.json");
    Audit::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The RQ1 adapters carry the report's shapes: wordings × models scores, a pooled step after the
/// wordings, a cell per model pair.
#[test]
fn rq1_adapters_feed_panels_a_to_d_from_a_report() {
    let audit = tiny();
    let report = analyze_rq1(
        &audit,
        Rq1Options {
            unit_bootstrap_reps: 50,
            cluster_bootstrap_reps: 50,
            ..Rq1Options::default()
        },
    )
    .unwrap();
    let ids: Vec<String> = audit.model_ids().iter().map(|s| s.to_string()).collect();
    let r: &WordingRankStability = &report.rank_stability;
    let a = WordingScores::from_rq1(&ids, r, "a".into());
    assert_eq!(a.wordings, vec!["wording 1", "wording 2"]);
    assert_eq!(a.scores, r.scores);
    let b = ScoreRanges::from_rq1(&ids, r, "b".into());
    for m in 0..ids.len() {
        let v: Vec<f64> = r.scores.iter().filter_map(|s| s[m]).collect();
        assert_eq!(b.min[m], v.iter().copied().reduce(f64::min));
        assert_eq!(b.max[m], v.iter().copied().reduce(f64::max));
    }
    let c = RankPaths::from_rq1(&ids, r, "c".into());
    assert_eq!(c.steps, vec!["W1", "W2", "pooled"]);
    assert_eq!(c.ranks.last(), Some(&r.pooled_ranks));
    let d = PairFlips::from_reversals(&ids, &report.reversals, "d".into());
    assert_eq!(d.pairs.len(), report.reversals.reversals.len());
    for (name, hits) in [
        (
            "tiny_a",
            render("tiny_a", (600, 300), |x| {
                draw_wording_scores(x, &a).unwrap()
            })
            .1,
        ),
        (
            "tiny_c",
            render("tiny_c", (600, 300), |x| draw_rank_paths(x, &c).unwrap()).1,
        ),
        (
            "tiny_d",
            render("tiny_d", (600, 300), |x| draw_pair_flips(x, &d).unwrap()).1,
        ),
    ] {
        assert!(!hits.is_empty(), "{name}");
    }
}

/// Table 11 rows become flip cells with the strongest surviving tie zone.
#[test]
fn reversals_map_to_their_strongest_flip_status() {
    let delta = |c: &str, d: f64| PairDelta {
        condition: 0,
        condition_id: c.into(),
        delta_pp: d,
        ci_pp: None,
    };
    let rev = |a: &str, b: &str, one: bool, two: bool| Reversal {
        model_a: a.into(),
        model_b: b.into(),
        negative: delta("T1", -3.0),
        positive: delta("T2", 1.5),
        survives_1pp: one,
        survives_2pp: two,
        ci_supported: false,
        deltas: vec![],
    };
    let reversals = ConditionReversals {
        policy: RepeatPolicy::AllResponses,
        direction: atlas_core::ScoreDirection::default(),
        seed: 1,
        draws: 0,
        pairs: 6,
        reversals: vec![
            rev("model-a", "model-b", true, true),
            rev("model-a", "model-c", true, false),
            rev("model-b", "model-d", false, false),
            rev("model-a", "unknown", true, true),
        ],
    };
    let d = PairFlips::from_reversals(&models(4), &reversals, String::new());
    let status: Vec<(usize, usize, FlipStatus)> =
        d.pairs.iter().map(|p| (p.a, p.b, p.status)).collect();
    assert_eq!(
        status,
        vec![
            (0, 1, FlipStatus::Survives2pp),
            (0, 2, FlipStatus::Survives1pp),
            (1, 3, FlipStatus::Reverses),
        ]
    );
    assert_eq!(d.pairs[0].detail, "δ -3.00 pp under T1, +1.50 pp under T2");
}

/// The RQ2 adapters give one distribution per design with one value per draw, and one coverage point
/// per K′ with the report's MAE.
#[test]
fn rq2_adapters_feed_the_distributions_and_the_coverage_curve() {
    let audit = tiny();
    let report = analyze_rq2(
        &audit,
        &Rq2Options {
            draws: 40,
            budget: 2,
            bootstrap_reps: 20,
            ..Rq2Options::default()
        },
    )
    .unwrap();
    let e = DesignDistributions::rq2_mae(&report, "e".into());
    assert_eq!(e.designs.len(), 4);
    assert!(e.values.iter().all(|v| v.len() == 40));
    let f = DesignDistributions::rq2_inversions(&report, "f".into());
    assert!(f.values.iter().all(|v| v.len() == 40));
    let k = CoverageCurve::rq2_mae(&report, "K".into());
    assert_eq!(k.k, vec![1, 2]);
    assert_eq!(k.mean[0], report.coverage[0].summary.mae_pp.mean);
    let (svg, hits) = render("tiny_e", (700, 300), |x| {
        draw_design_distributions(x, &e).unwrap()
    });
    assert_eq!(
        hits.iter().filter(|h| h.label.contains("median")).count(),
        4
    );
    assert_eq!(count(&svg, "rect", "stroke", &hex(PALETTE[3])), 1);
    let (_, hits) = render("tiny_coverage", (500, 300), |x| {
        draw_coverage_curve(x, &k).unwrap()
    });
    assert_eq!(hits.len(), 2);
}

/// Rank paths across conditions come from the re-weighting basis: one step per Selection condition,
/// then Eq. 4.
#[test]
fn rank_paths_across_conditions_have_a_step_per_selection_condition() {
    let audit = tiny();
    let basis = atlas_core::reweight::ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    let c = RankPaths::across_conditions(&basis, "conditions".into());
    assert_eq!(c.steps, vec!["R1", "S2", "Eq. 4"]);
    assert_eq!(c.ranks.len(), 3);
    let w = atlas_core::reweight::ConditionWeights::sweep_only(&basis, "role").unwrap();
    let r = basis.reweight(&w).unwrap();
    let flips = PairFlips::from_reweighted(basis.models(), &r, String::new());
    assert_eq!(flips.pairs.len(), r.inverted_pairs.len());
}
