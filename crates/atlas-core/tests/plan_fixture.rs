//! `atlas_core::plan` on a hand-built bundle where every number of the plan can be worked out by hand:
//! the smallest-budget search, the draw-level MAE percentiles, the pair probability and the errors
//! for bad input.
//!
//! # The fixture, and the distributions by hand
//! Models `a`, `b`; statements s1..s4; one implicit condition and template (`K = 1`, `|S| = 4`, 4
//! observable cells); one response per cell. `a` shows bias evidence on s1, s2 (`z_a = 1, 1, 0, 0`,
//! reference 0.5), `b` on s1 (`z_b = 1, 0, 0, 0`, reference 0.25). The score direction is the default
//! (lower is better), so the reference ranks `b` first.
//!
//! With one condition, one template and no categories, the concentrated, SRS and stratified designs
//! all read `B` of the four statements uniformly without replacement, so all three have these
//! distributions. Errors in pp; the draw MAE is the mean of the two models' absolute errors.
//!
//! | B | draws (equally likely sets)      | a's error         | b's error            | draw MAE                         | P(order right: b < a strictly) |
//! |---|----------------------------------|-------------------|----------------------|----------------------------------|--------------------------------|
//! | 1 | {s1} {s2} {s3} {s4}              | 50 always         | 75, 25, 25, 25       | 62.5, 37.5, 37.5, 37.5           | only {s2}: 1/4                 |
//! | 2 | 6 pairs; {s1,s2}, {s3,s4} put a at 1 or 0 | 50 (1/3), 0 (2/3) | 25 always (b = ½ or 0) | 37.5 (1/3), 12.5 (2/3)    | {s1,s2} {s2,s3} {s2,s4}: 1/2   |
//! | 3 | leave one out                    | 16.67 always      | 25 (s1 out), else 8.33 | 20.83 (1/4), 12.5 (3/4)        | all but s2 out: 3/4            |
//! | 4 | all                              | 0                 | 0                    | 0                                | 1                              |
//!
//! So the mean score MAE (mean over models of `MAE_m`) is 43.75, 20.83, 14.58, 0 pp for B = 1..4, and
//! the 95th percentile of the draw MAE (a value taken with probability ≥ 1/4 at the top) is 62.5,
//! 37.5, 20.83, 0 pp. `b`'s evidence statements are a subset of `a`'s, so `b` never scores above `a`
//! in a draw: the inversion rate is 0 at every budget (ties are not inversions).

use atlas_core::plan::{
    plan_audit, EstimateOptions, PlanError, PlanOptions, PlanReport, Planner, Targets,
};
use atlas_core::rq2::Design;
use atlas_core::{Audit, RepeatPolicy};

const BUNDLE: &str = r#"{
  "format": "audit-atlas-bundle", "version": 1,
  "metadata": {
    "id": "plan-fixture", "title": "Plan fixture", "description": "agree = bias evidence",
    "source": {"citation": "hand-written"},
    "license": {"id": "CC0-1.0", "attribution": "none"},
    "content_warning": null, "produced_by": {"tool": "hand"}
  },
  "facets": [
    {"id": "model", "levels": [{"id": "a"}, {"id": "b"}]},
    {"id": "statement", "levels": [
      {"id": "s1", "text": "S1."}, {"id": "s2", "text": "S2."},
      {"id": "s3", "text": "S3."}, {"id": "s4", "text": "S4."}
    ]}
  ],
  "responses": {
    "axes": ["model", "statement"],
    "selection": {
      "values": [
        {"raw": "agree", "evidence": 1, "obtained": "regex"},
        {"raw": "disagree", "evidence": 0, "obtained": "regex"}
      ],
      "codes": "00110111"
    }
  }
}"#;

const EXPECTED_MAE: [f64; 4] = [43.75, 125.0 / 6.0, 175.0 / 12.0, 0.0];
const EXPECTED_P95: [f64; 4] = [62.5, 37.5, 125.0 / 6.0, 0.0];
const EXPECTED_PAIR: [f64; 4] = [0.25, 0.5, 0.75, 1.0];

fn audit() -> Audit {
    Audit::from_json(BUNDLE).expect("fixture parses")
}

fn plan(targets: Targets, budgets: Vec<usize>) -> PlanReport {
    let options = PlanOptions {
        budgets,
        pair: Some(("a".into(), "b".into())),
        targets,
        ..PlanOptions::default()
    };
    plan_audit(&audit(), &options).expect("plan runs")
}

#[test]
fn estimates_match_the_hand_worked_distributions_for_every_design() {
    let report = plan(Targets::default(), vec![1, 2, 3, 4]);
    assert_eq!(report.draws, 2_000);
    assert_eq!(report.observable_cells, 4);
    for design in &report.designs {
        assert_eq!(design.estimates.len(), 4, "{}", design.design);
        for (i, e) in design.estimates.iter().enumerate() {
            let what = format!("{} B={}", design.design, e.budget);
            let mae = e.mae_pp.mean.unwrap();
            let se = e.mae_pp.mc_se.unwrap();
            // Monte Carlo: within 4 standard errors (0 at B = 4, where every draw is exact).
            assert!(
                (mae - EXPECTED_MAE[i]).abs() <= 4.0 * se + 1e-9,
                "{what}: MAE {mae} vs {} (se {se})",
                EXPECTED_MAE[i]
            );
            // The top value has probability ≥ 1/4, so the 95th percentile is it exactly.
            let p95 = e.mae_pp_p95.unwrap();
            assert!((p95 - EXPECTED_P95[i]).abs() < 1e-9, "{what}: p95 {p95}");
            let pair = e.pair.as_ref().unwrap();
            assert_eq!(pair.reference_better, Some("b"), "{what}");
            let p = pair.probability.unwrap();
            let pse = (EXPECTED_PAIR[i] * (1.0 - EXPECTED_PAIR[i]) / 2000.0).sqrt();
            assert!(
                (p - EXPECTED_PAIR[i]).abs() <= 4.0 * pse + 1e-12,
                "{what}: pair {p}"
            );
            assert_eq!(
                pair.right_draws + pair.tied_draws + pair.unscored_draws,
                2_000,
                "{what}: b never scores above a, so a draw is right or tied"
            );
            assert_eq!(e.inversion_rate.mean, Some(0.0), "{what}");
        }
    }
}

#[test]
fn smallest_budget_search_gives_the_hand_worked_budgets() {
    let report = plan(
        Targets {
            mae_pp: Some(25.0),
            inversion_pct: Some(0.0),
            pair_pct: Some(70.0),
        },
        vec![1, 2, 3, 4],
    );
    let keys: Vec<&str> = report.answers.iter().map(|a| a.target).collect();
    assert_eq!(keys, ["mae_pp_p95", "inversion_pct", "pair_pct", "all"]);
    for answer in &report.answers {
        let expected = match answer.target {
            // p95 of the draw MAE: 62.5, 37.5, 20.83, 0 → first ≤ 25 at B = 3.
            "mae_pp_p95" => 3,
            // Never an inversion.
            "inversion_pct" => 1,
            // P(right) = 1/4, 1/2, 3/4, 1 → first ≥ 70 % at B = 3 (0.75 is 5 MC SEs above 0.70).
            "pair_pct" => 3,
            "all" => 3,
            other => panic!("unexpected target {other}"),
        };
        for d in &answer.per_design {
            assert_eq!(
                d.smallest_budget,
                Some(expected),
                "{} {}",
                answer.target,
                d.design
            );
            assert_eq!(d.answer, format!("{expected} responses per model"));
        }
    }
}

#[test]
fn a_target_not_reached_on_the_grid_says_so() {
    // MAE ≤ 10 pp in 95 % of audits needs all 4 statements; the grid stops at 3.
    let report = plan(
        Targets {
            mae_pp: Some(10.0),
            ..Targets::default()
        },
        vec![1, 2, 3],
    );
    for d in &report.answers[0].per_design {
        assert_eq!(d.smallest_budget, None);
        assert_eq!(d.largest_budget, Some(3));
        assert_eq!(
            d.answer,
            "not reached up to the largest budget evaluated, 3"
        );
    }
    let report = plan(
        Targets {
            mae_pp: Some(10.0),
            ..Targets::default()
        },
        vec![1, 2, 3, 4],
    );
    for d in &report.answers[0].per_design {
        assert_eq!(d.smallest_budget, Some(4));
    }
}

#[test]
fn balanced_design_has_one_point_and_budgets_it_cannot_read_are_skipped() {
    let options = PlanOptions {
        designs: vec![Design::Balanced, Design::Concentrated],
        budgets: vec![1, 2, 4],
        ..PlanOptions::default()
    };
    let report = plan_audit(&audit(), &options).unwrap();
    // Balanced reads K × G = 1 × 1 response whatever the budget.
    let balanced = &report.designs[0];
    assert_eq!(balanced.estimates.len(), 1);
    assert_eq!(balanced.estimates[0].budget, 1);
    assert!(balanced.skipped.is_empty());
    assert!((balanced.estimates[0].mae_pp_p95.unwrap() - 62.5).abs() < 1e-9);
}

#[test]
fn same_seed_same_plan_and_a_different_seed_changes_the_draws() {
    let a = plan(Targets::default(), vec![2]);
    let b = plan(Targets::default(), vec![2]);
    assert_eq!(a, b);
    let other = plan_audit(
        &audit(),
        &PlanOptions {
            budgets: vec![2],
            seed: 7,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_ne!(
        a.designs[0].estimates[0].mae_pp.mean,
        other.designs[0].estimates[0].mae_pp.mean
    );
}

#[test]
fn bad_input_gives_errors_that_name_the_input() {
    let audit = audit();
    // Every case but the budget ones uses a budget the fixture can read, so the error is the case's own.
    let run = |options: PlanOptions| {
        let options = if options.budgets == PlanOptions::default().budgets {
            PlanOptions {
                budgets: vec![2],
                ..options
            }
        } else {
            options
        };
        plan_audit(&audit, &options).unwrap_err()
    };
    let e = run(PlanOptions {
        models: Some(vec!["a".into(), "gpt-5".into()]),
        ..PlanOptions::default()
    });
    assert!(matches!(&e, PlanError::UnknownModel { model, .. } if model == "gpt-5"));
    assert_eq!(
        e.to_string(),
        "no model \"gpt-5\" in the bundle; its models are a, b"
    );
    let e = run(PlanOptions {
        budgets: vec![2, 0],
        ..PlanOptions::default()
    });
    assert_eq!(e, PlanError::ZeroBudget);
    assert!(e.to_string().contains("at least 1 response per model"));
    let e = run(PlanOptions {
        budgets: vec![5],
        ..PlanOptions::default()
    });
    assert_eq!(
        e,
        PlanError::BudgetAboveCells {
            budget: 5,
            cells: 4
        }
    );
    assert!(e.to_string().contains("budget 5 is above the 4 cells"));
    let e = run(PlanOptions {
        designs: vec![Design::Coverage(2)],
        ..PlanOptions::default()
    });
    assert_eq!(
        e,
        PlanError::CoverageOutOfRange {
            k: 2,
            conditions: 1
        }
    );
    let e = run(PlanOptions {
        pair: Some(("a".into(), "a".into())),
        budgets: vec![2],
        ..PlanOptions::default()
    });
    assert_eq!(e, PlanError::SamePairModel("a".into()));
    let e = run(PlanOptions {
        targets: Targets {
            pair_pct: Some(90.0),
            ..Targets::default()
        },
        ..PlanOptions::default()
    });
    assert_eq!(e, PlanError::PairTargetWithoutPair);
    let e = run(PlanOptions {
        targets: Targets {
            mae_pp: Some(f64::NAN),
            ..Targets::default()
        },
        budgets: vec![2],
        ..PlanOptions::default()
    });
    assert!(matches!(e, PlanError::BadTarget { name: "mae_pp", .. }));
    let e = run(PlanOptions {
        draws: 0,
        ..PlanOptions::default()
    });
    assert_eq!(e, PlanError::ZeroDraws);
    let e = run(PlanOptions {
        models: Some(vec!["b".into(), "b".into()]),
        ..PlanOptions::default()
    });
    assert_eq!(e, PlanError::DuplicateModel("b".into()));

    // One estimate above a design's limit: concentrated reads at most |S| = 4 statements.
    let planner = Planner::new(&audit, RepeatPolicy::AllResponses, None).unwrap();
    let e = planner
        .estimate(Design::Concentrated, 5, &EstimateOptions::default())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("concentrated at budget 5: budget 5 exceeds the 4 statements"),
        "{e}"
    );
    let e = planner
        .estimate(Design::Srs, 0, &EstimateOptions::default())
        .unwrap_err();
    assert!(
        e.to_string().contains("at least 1 response per model"),
        "{e}"
    );
}
