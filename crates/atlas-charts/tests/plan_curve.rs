//! The plan curve (issue 17, "Plan an audit": `atlas_charts::plan_curve`) drawn to SVG natively and
//! its table alternative. Every expected count and value follows from the fixtures by hand, as the
//! comments say: no golden images, no values read back from the code under test.
//!
//! Set `ATLAS_SVG_DIR=/some/dir` to also write each rendered SVG there for a look.

use atlas_charts::palette::Palette;
use atlas_charts::plan_curve::{draw_plan_curve, PlanCurve, PlanCurveSeries};
use atlas_charts::ChartSpec;
use atlas_core::plan::{
    DesignPlan, Estimate, PairEstimate, PlanReport, SkippedBudget, Targets, FINITE_REFERENCE_NOTE,
};
use atlas_core::rq2::Metric;
use atlas_core::{Direction, RepeatPolicy, ScoreDirection};

mod common;
use common::*;

const LIGHT: Palette = Palette::LIGHT;

fn series(design: &str, points: &[(usize, Option<f64>)]) -> PlanCurveSeries {
    PlanCurveSeries {
        design: design.into(),
        points: points.to_vec(),
    }
}

fn curve(series: Vec<PlanCurveSeries>, target: Option<f64>) -> PlanCurve {
    PlanCurve {
        metric: "Score MAE in 95 % of audits".into(),
        unit: "pp".into(),
        series,
        target,
        higher_is_better: false,
        notes: Vec::new(),
        caption: "plan fixture".into(),
    }
}

/// The `points="x,y x,y …"` of a polyline, as pixel pairs.
fn polyline_points(line: &str) -> Vec<(f64, f64)> {
    line.split(" points=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no points in {line}"))
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').expect("x,y");
            (x.parse().expect("x"), y.parse().expect("y"))
        })
        .collect()
}

/// Three designs (circle, square, triangle markers): concentrated 3 points, srs 4, stratified 2 (all
/// defined) → one polyline each in its series colour; markers = points + 1 legend swatch each.
#[test]
fn the_plan_curve_draws_one_polyline_per_design_and_a_marker_per_defined_point() {
    let data = curve(
        vec![
            series(
                "concentrated",
                &[(20, Some(6.1)), (50, Some(4.0)), (100, Some(3.2))],
            ),
            series(
                "srs",
                &[
                    (20, Some(5.0)),
                    (50, Some(3.1)),
                    (100, Some(2.2)),
                    (200, Some(1.5)),
                ],
            ),
            series("stratified", &[(100, Some(2.0)), (200, Some(1.4))]),
        ],
        Some(2.0),
    );
    let (svg, hits) = render("plan-three", (900, 380), |a| {
        draw_plan_curve(a, &data).unwrap()
    });
    for i in 0..3 {
        let lines = elements(&svg, "polyline", "stroke", &hex(LIGHT.series[i]));
        assert_eq!(lines.len(), 1, "design {i}");
        assert!(lines[0].contains("stroke-width=\"2\""));
        assert_eq!(polyline_points(lines[0]).len(), data.series[i].points.len());
    }
    assert_eq!(count(&svg, "circle", "fill", &hex(LIGHT.series[0])), 3 + 1);
    assert_eq!(count(&svg, "rect", "fill", &hex(LIGHT.series[1])), 4 + 1);
    assert_eq!(count(&svg, "polygon", "fill", &hex(LIGHT.series[2])), 2 + 1);
    for label in [
        "concentrated",
        "srs",
        "stratified",
        "responses per model (budget)",
        "Score MAE in 95 % of audits, pp",
    ] {
        assert_eq!(text(&svg, label), 1, "{label}");
    }
    // Ticks at 1, 2, 5 × 10ⁿ inside 20–200 (padded): 20, 50, 100, 200.
    for tick in ["20", "50", "100", "200"] {
        assert_eq!(text(&svg, tick), 1, "tick {tick}");
    }
    // 9 points + the target line.
    assert_eq!(hits.len(), 10);
    assert!(hits
        .iter()
        .any(|h| h.label == "srs · 200 responses per model: Score MAE in 95 % of audits 1.5 pp"));
    hover_finds_every_region(&hits);
}

/// The target (2 pp) is many dashes in the muted colour, all at one y, spanning the plot; the text
/// `target` once; its hover region says the rule. Without a target: no dash, no label.
#[test]
fn the_target_is_a_dashed_horizontal_line_labelled_target() {
    let points = [(20, Some(5.0)), (2000, Some(1.0))];
    let data = curve(vec![series("srs", &points)], Some(2.0));
    let (svg, hits) = render("plan-target", (900, 380), |a| {
        draw_plan_curve(a, &data).unwrap()
    });
    let dashes = elements(&svg, "polyline", "stroke", &hex(LIGHT.muted));
    assert!(dashes.len() >= 20, "{} dashes", dashes.len());
    let ys: Vec<f64> = dashes
        .iter()
        .flat_map(|d| polyline_points(d))
        .map(|(_, y)| y)
        .collect();
    assert!(ys.iter().all(|&y| (y - ys[0]).abs() < 1.0), "{ys:?}");
    // 2 pp lies between the points at 5 and 1 pp: below the first, above the last (pixels grow down).
    let srs = polyline_points(elements(&svg, "polyline", "stroke", &hex(LIGHT.series[0]))[0]);
    assert!(srs[0].1 < ys[0] && ys[0] < srs[1].1, "{srs:?} {}", ys[0]);
    assert_eq!(text(&svg, "target"), 1);
    let target = hits
        .iter()
        .find(|h| h.label == "target: Score MAE in 95 % of audits ≤ 2.0 pp")
        .expect("the target's hover region");
    assert!(target.x1 - target.x0 > 500, "{target:?}");

    let none = curve(vec![series("srs", &points)], None);
    let (svg, hits) = render("plan-no-target", (900, 380), |a| {
        draw_plan_curve(a, &none).unwrap()
    });
    assert_eq!(count(&svg, "polyline", "stroke", &hex(LIGHT.muted)), 0);
    assert_eq!(text(&svg, "target"), 0);
    assert_eq!(hits.len(), 2);
}

/// srs: 20, 50 defined, 100 missing, 200, 500 defined → two polylines of two points, the first
/// ending left of the second's start; 4 markers (+1 legend). stratified: 20 defined, 50 missing,
/// 100 and 200 defined → one polyline (the lone point at 20 is a marker only); 3 markers (+1).
#[test]
fn a_missing_point_breaks_the_line_and_a_lone_point_is_a_marker_alone() {
    let data = curve(
        vec![
            series(
                "srs",
                &[
                    (20, Some(5.0)),
                    (50, Some(3.0)),
                    (100, None),
                    (200, Some(1.6)),
                    (500, Some(1.0)),
                ],
            ),
            series(
                "stratified",
                &[
                    (20, Some(4.0)),
                    (50, None),
                    (100, Some(2.1)),
                    (200, Some(1.5)),
                ],
            ),
        ],
        None,
    );
    let (svg, hits) = render("plan-gap", (900, 380), |a| {
        draw_plan_curve(a, &data).unwrap()
    });
    let srs: Vec<Vec<(f64, f64)>> = elements(&svg, "polyline", "stroke", &hex(LIGHT.series[0]))
        .into_iter()
        .map(polyline_points)
        .collect();
    assert_eq!(srs.len(), 2);
    assert!(srs.iter().all(|run| run.len() == 2), "{srs:?}");
    assert!(srs[0][1].0 < srs[1][0].0, "{srs:?}");
    assert_eq!(count(&svg, "circle", "fill", &hex(LIGHT.series[0])), 4 + 1);
    let stratified: Vec<Vec<(f64, f64)>> =
        elements(&svg, "polyline", "stroke", &hex(LIGHT.series[1]))
            .into_iter()
            .map(polyline_points)
            .collect();
    assert_eq!(stratified.len(), 1);
    assert_eq!(stratified[0].len(), 2);
    assert_eq!(count(&svg, "rect", "fill", &hex(LIGHT.series[1])), 3 + 1);
    // Hover: the defined points only (4 + 3).
    assert_eq!(hits.len(), 7);
    hover_finds_every_region(&hits);
}

/// One design: one line, one legend entry. Six designs (the planner's five kinds, two coverage
/// levels): a line in each of the first six series colours and each name in the legend once.
#[test]
fn one_design_and_six_designs_each_draw_a_line_per_design_with_its_legend_entry() {
    let grid = [20, 50, 100, 200, 500];
    let line = |k: f64| -> Vec<(usize, Option<f64>)> {
        grid.iter()
            .map(|&b| (b, Some(k * 20.0 / (b as f64).sqrt())))
            .collect()
    };
    let one = curve(vec![series("srs", &line(1.0))], Some(2.0));
    let (svg, hits) = render("plan-one", (900, 380), |a| {
        draw_plan_curve(a, &one).unwrap()
    });
    assert_eq!(count(&svg, "polyline", "stroke", &hex(LIGHT.series[0])), 1);
    assert_eq!(text(&svg, "srs"), 1);
    assert_eq!(hits.len(), 5 + 1);

    let names = [
        "concentrated",
        "srs",
        "stratified",
        "balanced",
        "coverage:2",
        "coverage:4",
    ];
    let six = curve(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| series(n, &line(1.0 + 0.2 * i as f64)))
            .collect(),
        Some(2.0),
    );
    let (svg, hits) = render("plan-six", (900, 380), |a| {
        draw_plan_curve(a, &six).unwrap()
    });
    for (i, name) in names.iter().enumerate() {
        assert_eq!(
            count(&svg, "polyline", "stroke", &hex(LIGHT.series[i])),
            1,
            "{name}"
        );
        assert_eq!(text(&svg, name), 1, "{name}");
    }
    assert_eq!(hits.len(), 6 * 5 + 1);
    hover_finds_every_region(&hits);
}

/// At a 350-px container (a 390-px phone) the chart is 350 px wide and taller by the legend under
/// it (6 lines of 18 px + 10), its smallest text is ≥ 11 px, a 40-character design name is cut
/// with `…` in the legend (its hover text keeps it whole), and it draws in the dark palette.
#[test]
fn at_phone_width_the_plan_curve_keeps_text_of_11_px_and_cuts_long_design_names() {
    let long = "coverage:3 with a very long descriptive x";
    let mut all: Vec<PlanCurveSeries> = [
        "concentrated",
        "srs",
        "stratified",
        "balanced",
        "coverage:2",
    ]
    .iter()
    .map(|n| series(n, &[(20, Some(4.0)), (200, Some(1.5)), (2000, Some(0.5))]))
    .collect();
    all.push(series(long, &[(20, Some(3.0)), (2000, Some(0.4))]));
    let spec = ChartSpec::PlanCurve(curve(all, Some(2.0)));
    let (w, h) = spec.size_for(Some(350));
    assert_eq!((w, h), (350, 380 + 6 * 18 + 10));
    let min = spec.min_font_px((w, h)).unwrap().expect("text is drawn");
    assert!(min >= 11.0, "smallest text {min} px");
    let svg = spec.svg_sized((w, h)).unwrap();
    if let Ok(dir) = std::env::var("ATLAS_SVG_DIR") {
        std::fs::write(format!("{dir}/plan-phone.svg"), &svg).ok();
    }
    assert_eq!(text(&svg, long), 0);
    // 24 characters at most: 23 and the ellipsis.
    assert_eq!(text(&svg, "coverage:3 with a very …"), 1);
    let mut out = String::new();
    let hits = {
        use plotters::prelude::*;
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        spec.draw(&root).unwrap()
    };
    assert!(hits.iter().any(|r| r.label.starts_with(long)));
    // Every tick label and the legend lie inside the canvas.
    for line in svg.lines().filter(|l| l.starts_with("<text ")) {
        let x = attr_f64(line, "x");
        assert!((0.0..=350.0).contains(&x), "{line}");
    }
    let dark = spec.svg_themed((w, h), &Palette::DARK).unwrap();
    assert!(dark.contains(&format!("fill=\"{}\"", hex(Palette::DARK.background))));
    assert_eq!(
        count(&dark, "polyline", "stroke", &hex(Palette::DARK.series[0])),
        1
    );
}

// --------------------------------------------------------------------------- from a PlanReport

fn metric(mean: Option<f64>) -> Metric {
    Metric {
        mean,
        mc_se: None,
        range: None,
        draws: 2000,
    }
}

/// An estimate of `design` reading `budget` responses per model (asked for `requested`), with the
/// given 95th-percentile MAE (pp), mean inversion rate (fraction) and pair probability (fraction).
fn estimate(
    design: &str,
    requested: usize,
    budget: usize,
    p95: Option<f64>,
    inversions: Option<f64>,
    pair: Option<f64>,
) -> Estimate {
    Estimate {
        design: design.into(),
        label: format!("{design} {budget}"),
        conditions: None,
        budget,
        requested_budget: requested,
        draws: 2000,
        seed: 20260722,
        audit_stream: 0,
        mae_pp: metric(p95.map(|v| v / 2.0)),
        mae_pp_p95: p95,
        rmse_pp: metric(None),
        tau_b: metric(None),
        inversion_rate: metric(inversions),
        pair: pair.map(|p| PairEstimate {
            a: "model-a".into(),
            b: "model-b".into(),
            reference_better: Some("a"),
            right_draws: (p * 2000.0) as usize,
            tied_draws: 0,
            unscored_draws: 0,
            draws: 2000,
            probability: Some(p),
            mc_se: None,
        }),
        per_model: Vec::new(),
    }
}

/// A small report written by hand: grid 20, 50, 100.
/// * concentrated: 20 → 5.04 pp, 50 → 3.3333 pp, 100 skipped (the bundle has 60 statements);
/// * srs: 20 → 4.256, 50 → 2.04, 100 → 1.449 pp (inversions 0.25, 0.125, 0.0625; pair 0.6, 0.8, 0.95);
/// * balanced: one estimate, asked for 20, reading 64 responses per model, 2.7499 pp.
fn report() -> PlanReport {
    let design = |name: &str, estimates: Vec<Estimate>, skipped: Vec<SkippedBudget>| DesignPlan {
        design: name.into(),
        audit_stream: 0,
        estimates,
        skipped,
    };
    PlanReport {
        bundle: "hand-bundle".into(),
        note: FINITE_REFERENCE_NOTE,
        direction: ScoreDirection {
            direction: Direction::Lower,
            declared: false,
        },
        seed: 20260722,
        draws: 2000,
        policy: RepeatPolicy::AllResponses,
        weights: None,
        level: 0.95,
        budgets: vec![20, 50, 100],
        default_grid: false,
        models: vec!["model-a".into(), "model-b".into()],
        reference: vec![Some(0.1), Some(0.2)],
        pair: Some(("model-a".into(), "model-b".into())),
        targets: Targets {
            mae_pp: Some(2.0),
            inversion_pct: None,
            pair_pct: None,
        },
        statements: 60,
        reference_conditions: 4,
        observable_cells: 960,
        designs: vec![
            design(
                "concentrated",
                vec![
                    estimate("concentrated", 20, 20, Some(5.04), None, None),
                    estimate("concentrated", 50, 50, Some(3.3333), None, None),
                ],
                vec![SkippedBudget {
                    budget: 100,
                    reason: "more than the 60 statements".into(),
                }],
            ),
            design(
                "srs",
                vec![
                    estimate("srs", 20, 20, Some(4.256), Some(0.25), Some(0.6)),
                    estimate("srs", 50, 50, Some(2.04), Some(0.125), Some(0.8)),
                    estimate("srs", 100, 100, Some(1.449), Some(0.0625), Some(0.95)),
                ],
                Vec::new(),
            ),
            design(
                "balanced",
                vec![estimate("balanced", 20, 64, Some(2.7499), None, None)],
                Vec::new(),
            ),
        ],
        answers: Vec::new(),
    }
}

/// The adapter reads each design's estimates at the budgets they read (balanced at 64) and its
/// skipped budgets as missing points, in budget order, with the report's target and a caption
/// naming bundle, policy, weights, seed and draws.
#[test]
fn the_mae_curve_of_a_plan_report_has_each_designs_points_at_the_budgets_it_reads() {
    let r = report();
    let c = PlanCurve::mae_p95(&r, r.targets.mae_pp);
    assert_eq!(
        c.series,
        vec![
            series(
                "concentrated",
                &[(20, Some(5.04)), (50, Some(3.3333)), (100, None)]
            ),
            series(
                "srs",
                &[(20, Some(4.256)), (50, Some(2.04)), (100, Some(1.449))]
            ),
            series("balanced", &[(64, Some(2.7499))]),
        ]
    );
    assert_eq!(c.target, Some(2.0));
    assert!(!c.higher_is_better);
    assert_eq!(c.axis_label(), "Score MAE in 95 % of audits, pp");
    assert_eq!(
        c.caption,
        "hand-bundle: Score MAE in 95 % of audits by budget — repeat policy all_responses, \
         equal condition weights (Eq. 4), seed 20260722, 2000 draws per point"
    );
    assert_eq!(
        c.notes,
        vec!["concentrated at 100: more than the 60 statements"]
    );
}

/// Inversions 0.25, 0.125, 0.0625 → 25, 12.5, 6.25 %; the pair's 0.6, 0.8, 0.95 → 60, 80, 95 %,
/// a floor; the designs without a pair estimate have missing points.
#[test]
fn the_inversion_and_pair_curves_read_fractions_as_percent() {
    let r = report();
    let inv = PlanCurve::inversions(&r, Some(10.0));
    assert_eq!(inv.unit, "%");
    assert_eq!(
        inv.series[1].points,
        vec![(20, Some(25.0)), (50, Some(12.5)), (100, Some(6.25))]
    );
    assert_eq!(
        inv.series[0].points,
        vec![(20, None), (50, None), (100, None)]
    );
    let pair = PlanCurve::pair_order(&r, Some(90.0));
    assert!(pair.higher_is_better);
    assert_eq!(
        pair.series[1].points,
        vec![(20, Some(60.0)), (50, Some(80.0)), (100, Some(95.0))]
    );
    assert_eq!(
        pair.target_label().as_deref(),
        Some("target: Audits ordering model-a and model-b as the reference does ≥ 90.0 %")
    );
}

/// The table: one row per budget of any design (20, 50, 64, 100), one column per design, values
/// with one decimal (5.04 → 5.0, 3.3333 → 3.3, 4.256 → 4.3, 2.04 → 2.0, 1.449 → 1.4,
/// 2.7499 → 2.7), `—` where a design has no point; the CSV keeps the unrounded values; the notes
/// say the target and the skipped budget.
#[test]
fn the_table_alternative_reads_one_decimal_and_its_csv_keeps_the_unrounded_values() {
    let r = report();
    let spec = ChartSpec::PlanCurve(PlanCurve::mae_p95(&r, Some(2.0)));
    let t = spec.table();
    assert_eq!(
        t.header,
        vec![
            "responses per model",
            "concentrated: Score MAE in 95 % of audits (pp)",
            "srs: Score MAE in 95 % of audits (pp)",
            "balanced: Score MAE in 95 % of audits (pp)",
        ]
    );
    let texts: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| row.iter().map(|c| c.text.clone()).collect())
        .collect();
    assert_eq!(
        texts,
        vec![
            vec!["20", "5.0", "4.3", "—"],
            vec!["50", "3.3", "2.0", "—"],
            vec!["64", "—", "—", "2.7"],
            vec!["100", "—", "1.4", "—"],
        ]
    );
    let csv = t.to_csv();
    let body: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(
        body,
        vec![
            "20,5.04,4.256,—",
            "50,3.3333,2.04,—",
            "64,—,—,2.7499",
            "100,—,1.449,—",
        ]
    );
    assert_eq!(t.caption, spec.caption());
    assert_eq!(
        t.notes,
        vec![
            "target: Score MAE in 95 % of audits ≤ 2.0 pp",
            "concentrated at 100: more than the 60 statements",
        ]
    );
}

/// A report whose designs have no defined point (every budget skipped) still draws its axes and
/// legend, with no line and no hover region, and an empty curve does not panic.
#[test]
fn a_plan_curve_without_any_defined_point_draws_axes_and_no_line() {
    let data = curve(
        vec![series("concentrated", &[(20, None), (50, None)])],
        None,
    );
    let (svg, hits) = render("plan-empty", (900, 380), |a| {
        draw_plan_curve(a, &data).unwrap()
    });
    assert_eq!(count(&svg, "polyline", "stroke", &hex(LIGHT.series[0])), 0);
    assert_eq!(text(&svg, "concentrated"), 1);
    assert_eq!(text(&svg, "responses per model (budget)"), 1);
    assert!(hits.is_empty());
    let (_, hits) = render("plan-nothing", (350, 380), |a| {
        draw_plan_curve(a, &curve(Vec::new(), Some(2.0))).unwrap()
    });
    assert_eq!(hits.len(), 1, "the target alone");
}
