//! Worker-split invariance (issue 17 §3): an estimate split by draw ranges
//! ([`Planner::estimate_range`], one range per Web Worker) and merged ([`Planner::merge`]) gives the
//! very numbers of the unsplit [`Planner::estimate`] — for 1, 2, 3 and 4 parts, and for a split with
//! an empty part — on the shipped DecodingTrust bundle, for every design the planner offers, with a
//! model subset and a pair, and under `first_repeat` (where draws lose units and conditions, so the
//! exclusion counts are not all zero). Compared bitwise: `==` on the `Estimate` and equal JSON text
//! (serde_json writes the shortest text that reads back to the same f64, so equal text = equal bits).
//! The reference is the code's own unsplit run on purpose: the property under test is that splitting
//! changes nothing. That the draws themselves are right is checked elsewhere
//! (`plan_rq2.rs`: the estimate equals `analyze_rq2`; `rq2_reference.rs`: the exclusion counts equal
//! an independent numpy replay of the per-draw ChaCha8 layout, `tests/reference/rq2_reference.py`).

use std::path::PathBuf;
use std::sync::OnceLock;

use atlas_core::plan::{split_draws, EstimateOptions, PlanError, Planner};
use atlas_core::rq2::{Design, DEFAULT_SEED};
use atlas_core::{Audit, DrawStream, RepeatPolicy};

const DRAWS: usize = 301; // odd: the parts are of unequal length

fn audit() -> &'static Audit {
    static AUDIT: OnceLock<Audit> = OnceLock::new();
    AUDIT.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../static/bundles/decodingtrust-stereotype/bundle.json");
        let text = std::fs::read_to_string(&path).expect("the default bundle");
        Audit::from_json(&text).expect("the default bundle parses")
    })
}

const DESIGNS: [Design; 6] = [
    Design::Concentrated,
    Design::Srs,
    Design::Stratified,
    Design::Balanced,
    Design::Coverage(1),
    Design::Coverage(2),
];

fn options(models: Option<Vec<usize>>, pair: Option<(usize, usize)>) -> EstimateOptions {
    EstimateOptions {
        draws: DRAWS,
        seed: DEFAULT_SEED,
        models,
        pair,
        ..EstimateOptions::default()
    }
}

fn assert_split_invariant(planner: &Planner, design: Design, budget: usize, o: &EstimateOptions) {
    let whole = planner.estimate(design, budget, o).expect("estimate runs");
    let whole_json = serde_json::to_string(&whole).unwrap();
    let mut splits: Vec<Vec<std::ops::Range<usize>>> = [1, 2, 3, 4]
        .iter()
        .map(|&n| split_draws(DRAWS, n))
        .collect();
    splits.push(vec![0..0, 0..150, 150..150, 150..DRAWS]); // empty parts are harmless
    for ranges in splits {
        let parts: Vec<_> = ranges
            .iter()
            .map(|r| {
                planner
                    .estimate_range(design, budget, o, r.clone())
                    .unwrap()
            })
            .collect();
        let merged = planner.merge(design, budget, o, &parts).expect("merge");
        let what = format!("{design:?} at {budget}, parts {ranges:?}");
        assert_eq!(merged, whole, "{what}");
        assert_eq!(
            serde_json::to_string(&merged).unwrap(),
            whole_json,
            "{what}"
        );
    }
}

#[test]
fn one_two_three_four_parts_give_the_unsplit_estimate_bit_for_bit_for_every_design() {
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, None).unwrap();
    for design in DESIGNS {
        assert_split_invariant(&planner, design, 200, &options(None, Some((0, 3))));
    }
    // A model subset in a different order than the bundle's, and a small budget.
    assert_split_invariant(
        &planner,
        Design::Stratified,
        30,
        &options(Some(vec![5, 1, 7]), Some((1, 7))),
    );
}

#[test]
fn splits_are_invariant_under_first_repeat_where_draws_drop_conditions() {
    let planner = Planner::new(audit(), RepeatPolicy::FirstRepeat, None).unwrap();
    let e = planner
        .estimate(Design::Balanced, 180, &options(None, None))
        .unwrap();
    assert!(
        e.per_model.iter().any(|m| m.partial_drop_draws > 0),
        "the check needs draws with partial drops"
    );
    for design in [Design::Stratified, Design::Balanced, Design::Coverage(2)] {
        assert_split_invariant(&planner, design, 180, &options(None, Some((2, 4))));
    }
}

#[test]
fn a_draw_reads_its_own_stream_so_a_prefix_of_draws_does_not_depend_on_the_draw_count() {
    // Draw i is DrawStream::for_draw(seed, audit_stream, i): the first 100 draws of a 301-draw
    // estimate are the draws of a 100-draw estimate, and draw 200 equals a hand-made draw from
    // for_draw(seed, 32, 200) scored by the matrix.
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, None).unwrap();
    let long = planner
        .estimate_range(Design::Srs, 200, &options(None, None), 0..100)
        .unwrap();
    let short = planner
        .estimate_range(
            Design::Srs,
            200,
            &EstimateOptions {
                draws: 100,
                ..options(None, None)
            },
            0..100,
        )
        .unwrap();
    assert_eq!(long.scores, short.scores);
    let part = planner
        .estimate_range(Design::Srs, 200, &options(None, None), 200..201)
        .unwrap();
    let mut stream = DrawStream::for_draw(DEFAULT_SEED, Design::Srs.audit_stream(), 200);
    let draw = planner
        .matrix()
        .draw(Design::Srs, 200, &mut stream)
        .unwrap();
    let by_hand = planner.matrix().score(&draw);
    assert_eq!(part.scores[0], by_hand);
}

#[test]
fn parts_that_do_not_cover_the_draws_in_order_are_an_error_naming_them() {
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, None).unwrap();
    let o = options(None, None);
    let a = planner
        .estimate_range(Design::Srs, 200, &o, 0..150)
        .unwrap();
    let b = planner
        .estimate_range(Design::Srs, 200, &o, 150..DRAWS)
        .unwrap();
    for parts in [vec![b.clone(), a.clone()], vec![a.clone()], vec![]] {
        let err = planner.merge(Design::Srs, 200, &o, &parts).unwrap_err();
        assert!(matches!(err, PlanError::PartsDoNotCover { .. }), "{err}");
        assert!(err.to_string().contains("0..301"), "{err}");
    }
    let other = planner
        .estimate_range(Design::Stratified, 200, &o, 150..DRAWS)
        .unwrap();
    assert!(planner.merge(Design::Srs, 200, &o, &[a, other]).is_err());
    let err = planner
        .estimate_range(Design::Srs, 200, &o, 200..400)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "draws 200..400 are not inside the estimate's 0..301"
    );
}

#[test]
fn a_plan_assembled_from_split_estimates_equals_the_plan_computed_in_one_go() {
    // What the Plan view does with its pool of Web Workers: plan_request lists the estimates, each is
    // split over 3 draw ranges and merged, and plan_report assembles the report. It must be the very
    // report `Planner::plan` (and `atlas plan-audit --json`) gives, targets and answers included.
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, None).unwrap();
    let ids = planner.model_ids().to_vec();
    let options = atlas_core::plan::PlanOptions {
        designs: vec![Design::Concentrated, Design::Srs, Design::Coverage(2)],
        budgets: vec![40, 100, 200, 400],
        draws: DRAWS,
        models: Some(vec![ids[3].clone(), ids[0].clone(), ids[5].clone()]),
        pair: Some((ids[0].clone(), ids[5].clone())),
        targets: atlas_core::plan::Targets {
            mae_pp: Some(6.0),
            inversion_pct: Some(20.0),
            pair_pct: Some(90.0),
        },
        ..atlas_core::plan::PlanOptions::default()
    };
    let whole = planner.plan(&options).unwrap();
    let request = planner.plan_request(&options).unwrap();
    // concentrated reads at most 384 statements: 400 is skipped, so 3 + 4 + 4 estimates.
    assert_eq!(request.jobs.len(), 11);
    assert_eq!(request.per_design, vec![3, 4, 4]);
    let estimates = request
        .jobs
        .iter()
        .map(|&(design, budget)| {
            let o = &request.estimate_options;
            let parts: Vec<_> = split_draws(o.draws, 3)
                .into_iter()
                .map(|r| planner.estimate_range(design, budget, o, r).unwrap())
                .collect();
            planner.merge(design, budget, o, &parts).unwrap()
        })
        .collect();
    let assembled = planner.plan_report(&options, &request, estimates).unwrap();
    assert_eq!(
        serde_json::to_string(&assembled).unwrap(),
        serde_json::to_string(&whole).unwrap()
    );
}

#[test]
fn a_plan_report_refuses_estimates_that_are_not_those_of_its_request() {
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, None).unwrap();
    let options = atlas_core::plan::PlanOptions {
        designs: vec![Design::Srs],
        budgets: vec![40, 100],
        draws: 20,
        ..atlas_core::plan::PlanOptions::default()
    };
    let request = planner.plan_request(&options).unwrap();
    let o = &request.estimate_options;
    let e40 = planner.estimate(Design::Srs, 40, o).unwrap();
    let e100 = planner.estimate(Design::Srs, 100, o).unwrap();
    // One missing, and the right two in the wrong order: both refused, neither reported.
    for wrong in [vec![e40.clone()], vec![e100.clone(), e40.clone()]] {
        let err = planner.plan_report(&options, &request, wrong).unwrap_err();
        assert!(
            matches!(err, PlanError::EstimatesDoNotMatch { jobs: 2, .. }),
            "{err}"
        );
    }
    assert!(planner
        .plan_report(&options, &request, vec![e40, e100])
        .is_ok());
}
