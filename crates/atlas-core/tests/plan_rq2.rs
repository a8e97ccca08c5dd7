//! The planner's estimate is RQ2: `Planner::estimate` at a design, budget, draw count and seed gives
//! the very numbers `analyze_rq2` reports for that design (the same audit stream, draws and scoring,
//! summarised by the same code), on the shipped DecodingTrust bundle, under the default and the
//! `first_repeat` policy (where draws lose units and conditions, so the exclusion counts are not all
//! zero), and with condition weights. Compared with `==`: identical, not close.

use std::path::PathBuf;
use std::sync::OnceLock;

use atlas_core::plan::{design_name, plan_audit, EstimateOptions, PlanOptions, Planner};
use atlas_core::rq2::{analyze_rq2, Design, DesignResult, Rq2Options, Rq2Report};
use atlas_core::{Audit, RepeatPolicy};

const DRAWS: usize = 300;

fn audit() -> &'static Audit {
    static AUDIT: OnceLock<Audit> = OnceLock::new();
    AUDIT.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../static/bundles/decodingtrust-stereotype/bundle.json");
        let text = std::fs::read_to_string(&path).expect("the default bundle");
        Audit::from_json(&text).expect("the default bundle parses")
    })
}

fn rq2(policy: RepeatPolicy, budget: usize, weights: Option<Vec<f64>>) -> Rq2Report {
    analyze_rq2(
        audit(),
        &Rq2Options {
            draws: DRAWS,
            budget,
            seed: 20_260_722,
            policy,
            weights,
            bootstrap_reps: 10,
            ..Rq2Options::default()
        },
    )
    .expect("RQ2 runs")
}

fn rq2_design(report: &Rq2Report, design: Design) -> &DesignResult {
    match design {
        Design::Coverage(k) => &report.coverage[k - 1],
        d => report.design(d.key()).expect("design in the report"),
    }
}

fn assert_same(planner: &Planner, report: &Rq2Report, design: Design, budget: usize) {
    let e = planner
        .estimate(
            design,
            budget,
            &EstimateOptions {
                draws: DRAWS,
                seed: 20_260_722,
                ..EstimateOptions::default()
            },
        )
        .expect("estimate runs");
    let r = rq2_design(report, design);
    let what = format!("{} at {budget} ({:?})", design_name(design), report.policy);
    assert_eq!(e.budget, r.budget, "{what}");
    assert_eq!(e.audit_stream, r.audit_stream, "{what}");
    assert_eq!(e.mae_pp, r.summary.mae_pp, "{what}: MAE");
    assert_eq!(e.rmse_pp, r.summary.rmse_pp, "{what}: RMSE");
    assert_eq!(e.tau_b, r.summary.tau_b, "{what}: τ-b");
    assert_eq!(
        e.inversion_rate, r.summary.inversion_rate,
        "{what}: inversions"
    );
    assert_eq!(e.per_model.len(), r.summary.per_model.len());
    for (p, m) in e.per_model.iter().zip(&r.summary.per_model) {
        assert_eq!(p.model, m.model, "{what}");
        assert_eq!(p.reference, m.reference, "{what} {}", m.model);
        assert_eq!(p.mae_pp, m.mae_pp, "{what} {}", m.model);
        assert_eq!(p.rmse_pp, m.rmse_pp, "{what} {}", m.model);
        assert_eq!(p.excluded_draws, m.excluded_draws, "{what} {}", m.model);
        assert_eq!(
            p.partial_drop_draws, m.partial_drop_draws,
            "{what} {}",
            m.model
        );
        assert_eq!(
            p.dropped_conditions, m.dropped_conditions,
            "{what} {}",
            m.model
        );
    }
}

const DESIGNS: [Design; 6] = [
    Design::Concentrated,
    Design::Srs,
    Design::Stratified,
    Design::Balanced,
    Design::Coverage(1),
    Design::Coverage(2),
];

#[test]
fn estimate_equals_analyze_rq2_at_the_same_design_budget_draws_and_seed() {
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, None).unwrap();
    for budget in [20, 200] {
        let report = rq2(RepeatPolicy::AllResponses, budget, None);
        for design in DESIGNS {
            assert_same(&planner, &report, design, budget);
        }
    }
}

#[test]
fn estimate_equals_analyze_rq2_with_exclusions_under_first_repeat() {
    let planner = Planner::new(audit(), RepeatPolicy::FirstRepeat, None).unwrap();
    let report = rq2(RepeatPolicy::FirstRepeat, 180, None);
    let balanced = rq2_design(&report, Design::Balanced);
    assert!(
        balanced
            .summary
            .per_model
            .iter()
            .any(|m| m.partial_drop_draws > 0),
        "the comparison covers partial drops"
    );
    for design in DESIGNS {
        assert_same(&planner, &report, design, 180);
    }
}

#[test]
fn estimate_equals_analyze_rq2_under_condition_weights() {
    let weights = vec![1.0, 2.0, 0.5];
    let planner = Planner::new(audit(), RepeatPolicy::AllResponses, Some(&weights)).unwrap();
    let report = rq2(RepeatPolicy::AllResponses, 200, Some(weights));
    for design in [Design::Srs, Design::Stratified] {
        assert_same(&planner, &report, design, 200);
    }
}

#[test]
fn a_plan_curve_point_equals_analyze_rq2_at_that_budget() {
    let options = PlanOptions {
        budgets: vec![50, 200],
        draws: DRAWS,
        ..PlanOptions::default()
    };
    let plan = plan_audit(audit(), &options).unwrap();
    let report = rq2(RepeatPolicy::AllResponses, 200, None);
    assert_eq!(plan.bundle, report.bundle);
    assert_eq!(plan.models, report.models);
    assert_eq!(plan.reference, report.reference);
    for d in &plan.designs {
        let point = d.estimates.iter().find(|e| e.budget == 200).unwrap();
        let r = report.design(&d.design).unwrap();
        assert_eq!(point.mae_pp, r.summary.mae_pp, "{}", d.design);
        assert_eq!(point.tau_b, r.summary.tau_b, "{}", d.design);
        assert_eq!(
            point.inversion_rate, r.summary.inversion_rate,
            "{}",
            d.design
        );
    }
}
