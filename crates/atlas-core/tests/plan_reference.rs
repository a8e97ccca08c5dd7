//! The planner (`atlas_core::plan`) on the shipped DecodingTrust bundle against the independent,
//! vectorised numpy RQ2 of `bench/rq2_numpy_vec.py` (its own sampling: argpartition of random keys,
//! numpy's PCG64 generator; output `tests/reference/expected_plan_numpy_vec.json`, produced from the
//! repository root by `~/.cache/audit-atlas/venv/bin/python bench/rq2_numpy_vec.py --write`: numpy
//! 2.4.6, concentrated / SRS / stratified at budgets 20, 50, 100, 200, 384, 10,000 draws each, seed
//! 20260722; re-check it with `--check`).
//!
//! The two sides draw differently, so they agree within Monte Carlo error: at every point the score
//! MAE, τ-b and the inversion rate within 4 combined standard errors `sqrt(se_rust² + se_numpy²)`; the
//! 95th percentile of the draw MAE within 4 combined SEs, numpy's from 200 bootstrap resamples of its
//! draws and the planner's taken as numpy's × sqrt(10,000 / 2,000) (a quantile's SE scales as
//! 1/sqrt(draws); at least 1e-9). The smallest-budget search for "MAE ≤ 2 pp in 95 % of audits": at every point where
//! numpy's p95 is clearly (beyond that tolerance) below or above 2 pp, the planner must say met / not
//! met the same; the search over those flags is the one `plan_fixture.rs` checks by hand.

use std::path::PathBuf;

use atlas_core::plan::{plan_audit, PlanOptions, Targets};
use atlas_core::Audit;
use serde_json::Value;

const DRAWS: usize = 2_000;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn planner_curves_and_mae_target_agree_with_vectorised_numpy_within_monte_carlo_error() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/reference/expected_plan_numpy_vec.json"))
            .expect("expected_plan_numpy_vec.json"),
    )
    .expect("JSON");
    let text =
        std::fs::read_to_string(repo().join("static/bundles/decodingtrust-stereotype/bundle.json"))
            .expect("default bundle");
    let audit = Audit::from_json(&text).expect("parses");
    let budgets: Vec<usize> = expected["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as usize)
        .collect();
    let target = expected["target_mae_pp"].as_f64().unwrap();
    let report = plan_audit(
        &audit,
        &PlanOptions {
            budgets: budgets.clone(),
            draws: DRAWS,
            targets: Targets {
                mae_pp: Some(target),
                ..Targets::default()
            },
            ..PlanOptions::default()
        },
    )
    .expect("plan runs");
    assert_eq!(report.bundle, expected["bundle"].as_str().unwrap());
    for (m, r) in report.reference.iter().enumerate() {
        let e = expected["reference"][m].as_f64().unwrap();
        assert!((r.unwrap() - e).abs() < 1e-12, "reference of model {m}");
    }
    let scale = (expected["draws"].as_f64().unwrap() / DRAWS as f64).sqrt();
    let mut clear_points = 0;
    for d in &report.designs {
        let points = expected["designs"][&d.design]["points"].as_array().unwrap();
        assert_eq!(d.estimates.len(), points.len(), "{}", d.design);
        for (e, p) in d.estimates.iter().zip(points) {
            let what = format!("{} at {}", d.design, e.budget);
            assert_eq!(e.budget as u64, p["budget"].as_u64().unwrap(), "{what}");
            let f = |k: &str| p[k].as_f64().unwrap();
            for (name, ours, se, theirs, their_se) in [
                (
                    "MAE",
                    e.mae_pp.mean.unwrap(),
                    e.mae_pp.mc_se.unwrap(),
                    f("mae_pp"),
                    f("mae_mc_se"),
                ),
                (
                    "τ-b",
                    e.tau_b.mean.unwrap(),
                    e.tau_b.mc_se.unwrap(),
                    f("tau_b"),
                    f("tau_b_mc_se"),
                ),
                (
                    "inversion rate",
                    e.inversion_rate.mean.unwrap(),
                    e.inversion_rate.mc_se.unwrap(),
                    f("inversion_rate"),
                    f("inversion_mc_se"),
                ),
            ] {
                let tol = 4.0 * se.hypot(their_se);
                assert!(
                    (ours - theirs).abs() <= tol,
                    "{what}: {name} planner {ours} vs numpy {theirs} (4 combined SE = {tol})"
                );
            }
            let p95 = e.mae_pp_p95.unwrap();
            let np_se = f("mae_pp_p95_se");
            // At B = |S| = 384 a concentrated draw is one of the 9 (condition, template) means, so
            // the p95 is one of them exactly on both sides (bootstrap SE 0): only rounding remains.
            let tol = (4.0 * np_se.hypot(np_se * scale)).max(1e-9);
            assert!(
                (p95 - f("mae_pp_p95")).abs() <= tol,
                "{what}: p95 planner {p95} vs numpy {} (tolerance {tol})",
                f("mae_pp_p95")
            );
            let theirs = f("mae_pp_p95");
            if (theirs - target).abs() > tol {
                clear_points += 1;
                assert_eq!(
                    p95 <= target,
                    theirs <= target,
                    "{what}: MAE ≤ {target} pp in 95 % of audits: planner p95 {p95}, numpy {theirs}"
                );
            }
        }
    }
    assert!(
        clear_points >= 10,
        "the target comparison covers most points ({clear_points} of 15 clear)"
    );
}
