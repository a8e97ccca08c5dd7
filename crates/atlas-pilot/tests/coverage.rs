//! The coverage design `coverage:K` (seed `000_…` §5.3, Table 14) and the balanced design (§3.5) in
//! pilot plans: a small plan worked out by hand (which cells are possible, and what a draw must look
//! like), the rules a coverage design is refused by, the design names the Plan view hands over, the
//! JSON of saved designs and runs (old ones still load), and the call count "Check the plan" shows.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use atlas_pilot::plan::{
    build_plan, Condition, CoverageError, PilotDesign, Plan, PlanError, PromptTemplate, Sampling,
    UnknownSampling,
};
use atlas_pilot::run::{to_bundle, BundleInfo, RunState};
use atlas_pilot::AnswerSpace;
use common::{small_design, statement};

/// The hand-worked plan: 2 models, 1 repeat, no judge; conditions C1, C2, C3; templates Ta, Tb (both
/// crossed with every condition); statements s1, s2, s3 (category x, x, y).
fn hand_design(sampling: Sampling) -> PilotDesign {
    let mut d = small_design();
    d.judges.clear();
    d.repeats = 1;
    d.conditions = (1..=3)
        .map(|k| Condition::custom(format!("C{k}"), format!("System {k}.")))
        .collect();
    d.templates = ["Ta", "Tb"]
        .iter()
        .map(|id| {
            PromptTemplate::custom(*id, format!("{id}: {{statement}}"), AnswerSpace::yes_no())
        })
        .collect();
    d.statements = vec![
        statement("s1", "Statement one.", Some("x")),
        statement("s2", "Statement two.", Some("x")),
        statement("s3", "Statement three.", Some("y")),
    ];
    d.sampling = sampling;
    d
}

/// Every cell of the hand-worked plan, written out: 3 conditions × 2 templates × 3 statements = 18.
const POSSIBLE: [(&str, &str, &str); 18] = [
    ("C1", "Ta", "s1"),
    ("C1", "Ta", "s2"),
    ("C1", "Ta", "s3"),
    ("C1", "Tb", "s1"),
    ("C1", "Tb", "s2"),
    ("C1", "Tb", "s3"),
    ("C2", "Ta", "s1"),
    ("C2", "Ta", "s2"),
    ("C2", "Ta", "s3"),
    ("C2", "Tb", "s1"),
    ("C2", "Tb", "s2"),
    ("C2", "Tb", "s3"),
    ("C3", "Ta", "s1"),
    ("C3", "Ta", "s2"),
    ("C3", "Ta", "s3"),
    ("C3", "Tb", "s1"),
    ("C3", "Tb", "s2"),
    ("C3", "Tb", "s3"),
];

/// The cells of `plan` for model `m`, as (condition, template, statement) ids, in call order.
fn model_cells(plan: &Plan, m: u32) -> Vec<(String, String, String)> {
    plan.calls
        .iter()
        .filter(|c| c.cell.model == m)
        .map(|c| {
            let d = &plan.design;
            (
                d.conditions[c.cell.condition as usize].id.clone(),
                d.templates[c.cell.template as usize].id.clone(),
                d.statements[c.cell.statement as usize].id.clone(),
            )
        })
        .collect()
}

/// The cells of `plan` (model 0) grouped by condition: condition → [(template, statement)].
fn by_condition(plan: &Plan) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (c, t, s) in model_cells(plan, 0) {
        out.entry(c).or_default().push((t, s));
    }
    out
}

#[test]
fn a_coverage_plan_of_two_conditions_at_budget_five_has_the_shape_worked_out_by_hand() {
    // coverage:2 at B = 5 over 3 conditions and 3 statements: 2 of {C1, C2, C3}; B = 2·2 + 1, so one
    // of them reads 3 statements (all of s1..s3) and the other 2; each under one of {Ta, Tb}.
    let plan = build_plan(hand_design(Sampling::Coverage {
        conditions: 2,
        budget: 5,
    }))
    .unwrap();
    let possible: BTreeSet<(String, String, String)> = POSSIBLE
        .iter()
        .map(|(c, t, s)| (c.to_string(), t.to_string(), s.to_string()))
        .collect();
    let cells = model_cells(&plan, 0);
    assert_eq!(cells.len(), 5, "B cells per model");
    let distinct: BTreeSet<_> = cells.iter().cloned().collect();
    assert_eq!(distinct.len(), 5, "no duplicate cell: {cells:?}");
    assert!(distinct.is_subset(&possible), "{cells:?}");

    let groups = by_condition(&plan);
    assert_eq!(groups.len(), 2, "exactly K distinct conditions: {groups:?}");
    let mut sizes: Vec<usize> = groups.values().map(Vec::len).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [2, 3], "B split ⌊5/2⌋ / ⌈5/2⌉");
    for (c, group) in &groups {
        let templates: BTreeSet<&String> = group.iter().map(|(t, _)| t).collect();
        assert_eq!(templates.len(), 1, "one template under {c}: {group:?}");
        let statements: BTreeSet<&String> = group.iter().map(|(_, s)| s).collect();
        assert_eq!(
            statements.len(),
            group.len(),
            "statements without replacement"
        );
    }

    // Both models get the same cells, in the same order.
    assert_eq!(model_cells(&plan, 1), cells);
}

#[test]
fn a_coverage_budget_of_k_times_the_statements_reads_every_statement_under_each_chosen_condition() {
    let plan = build_plan(hand_design(Sampling::Coverage {
        conditions: 2,
        budget: 6,
    }))
    .unwrap();
    let groups = by_condition(&plan);
    assert_eq!(groups.len(), 2);
    for group in groups.values() {
        let statements: BTreeSet<&str> = group.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(statements, BTreeSet::from(["s1", "s2", "s3"]));
    }
}

#[test]
fn coverage_of_every_condition_spreads_the_budget_over_all_of_them() {
    // coverage:3 at B = 8 = 2·3 + 2: sizes 2, 3, 3 over C1, C2, C3.
    let plan = build_plan(hand_design(Sampling::Coverage {
        conditions: 3,
        budget: 8,
    }))
    .unwrap();
    let groups = by_condition(&plan);
    assert_eq!(
        groups.keys().map(String::as_str).collect::<Vec<_>>(),
        ["C1", "C2", "C3"]
    );
    let mut sizes: Vec<usize> = groups.values().map(Vec::len).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [2, 3, 3]);
}

#[test]
fn coverage_of_one_condition_stays_in_one_condition_and_one_template() {
    let plan = build_plan(hand_design(Sampling::Coverage {
        conditions: 1,
        budget: 3,
    }))
    .unwrap();
    let groups = by_condition(&plan);
    assert_eq!(groups.len(), 1);
    let group = groups.values().next().unwrap();
    assert_eq!(group.len(), 3);
    let templates: BTreeSet<&String> = group.iter().map(|(t, _)| t).collect();
    assert_eq!(templates.len(), 1);
}

#[test]
fn the_same_seed_draws_the_same_coverage_cells_and_another_seed_draws_others() {
    let sampling = Sampling::Coverage {
        conditions: 2,
        budget: 5,
    };
    let a = model_cells(&build_plan(hand_design(sampling)).unwrap(), 0);
    let b = model_cells(&build_plan(hand_design(sampling)).unwrap(), 0);
    assert_eq!(a, b, "same seed, same cells");
    // The hand-worked plan has 3 · 2 · 2² · 3 = 72 equally likely cell sets (the pair of conditions,
    // which of them reads all 3 statements, their templates, the 2 of 3 statements of the other), so
    // two seeds agree with probability 1/72; over seeds 1..=10 at least two draws must differ.
    let draws: BTreeSet<Vec<(String, String, String)>> = (1..=10)
        .map(|seed| {
            let mut d = hand_design(sampling);
            d.seed = seed;
            let mut cells = model_cells(&build_plan(d).unwrap(), 0);
            cells.sort();
            cells
        })
        .collect();
    assert!(draws.len() > 1, "ten seeds gave one draw");
    let mut other = hand_design(sampling);
    other.seed = 8;
    let mut seven = a.clone();
    seven.sort();
    let mut eight = model_cells(&build_plan(other).unwrap(), 0);
    eight.sort();
    assert_ne!(seven, eight, "seed 7 and seed 8 draw different cells");
}

#[test]
fn check_the_plan_counts_budget_times_models_times_repeats_calls_for_coverage() {
    let mut d = hand_design(Sampling::Coverage {
        conditions: 2,
        budget: 5,
    });
    d.repeats = 3;
    let plan = build_plan(d).unwrap();
    assert_eq!(plan.calls.len(), 5 * 2 * 3);
    assert_eq!(plan.estimate.calls, 30);
    assert_eq!(plan.estimate.total_calls, 30);
    // Every (cell, repeat, model) once.
    let coords: BTreeSet<_> = plan.calls.iter().map(|c| c.cell).collect();
    assert_eq!(coords.len(), 30);
}

#[test]
fn a_coverage_design_that_breaks_a_rule_is_refused_naming_the_rule() {
    let refuse = |conditions, budget| {
        build_plan(hand_design(Sampling::Coverage { conditions, budget })).unwrap_err()
    };
    let err = refuse(0, 5);
    assert_eq!(err, PlanError::Coverage(CoverageError::ZeroConditions));
    assert!(err.to_string().contains("K must be at least 1"), "{err}");

    let err = refuse(4, 5);
    assert_eq!(
        err,
        PlanError::Coverage(CoverageError::MoreConditionsThanDesign {
            k: 4,
            conditions: 3
        })
    );
    assert!(
        err.to_string()
            .contains("coverage:4 asks for 4 conditions; the design has 3"),
        "{err}"
    );

    let err = refuse(2, 1);
    assert_eq!(
        err,
        PlanError::Coverage(CoverageError::BudgetBelowConditions { budget: 1, k: 2 })
    );
    assert!(err.to_string().contains("budget 1 is below K = 2"), "{err}");
    assert_eq!(
        refuse(2, 0),
        PlanError::Coverage(CoverageError::BudgetBelowConditions { budget: 0, k: 2 })
    );

    let err = refuse(2, 7);
    assert_eq!(
        err,
        PlanError::Coverage(CoverageError::BudgetAboveStatements {
            budget: 7,
            k: 2,
            statements: 3,
            max: 6
        })
    );
    assert!(
        err.to_string()
            .contains("budget 7 is above K × statements = 2 × 3 = 6"),
        "{err}"
    );
}

#[test]
fn a_coverage_plan_over_the_hard_cap_is_refused_like_any_other() {
    let mut d = hand_design(Sampling::Coverage {
        conditions: 2,
        budget: 6,
    });
    d.limits.max_calls = 11;
    assert!(matches!(
        build_plan(d).unwrap_err(),
        PlanError::OverCallCap {
            calls: 12,
            audited: 12,
            judge: 0,
            cap: 11
        }
    ));
}

#[test]
fn a_balanced_plan_reads_one_statement_per_category_under_every_condition_with_one_template() {
    // 3 conditions × 2 categories (x: s1, s2; y: s3) = 6 cells per model, whatever the budget.
    let plan = build_plan(hand_design(Sampling::Balanced)).unwrap();
    assert_eq!(plan.calls.len(), 6 * 2);
    assert_eq!(plan.estimate.calls, 12);
    let groups = by_condition(&plan);
    assert_eq!(
        groups.keys().map(String::as_str).collect::<Vec<_>>(),
        ["C1", "C2", "C3"]
    );
    for (c, group) in &groups {
        assert_eq!(group.len(), 2, "{c}: {group:?}");
        let templates: BTreeSet<&String> = group.iter().map(|(t, _)| t).collect();
        assert_eq!(templates.len(), 1, "one template under {c}");
        let x = group.iter().filter(|(_, s)| s == "s1" || s == "s2").count();
        let y = group.iter().filter(|(_, s)| s == "s3").count();
        assert_eq!((x, y), (1, 1), "one statement of each category under {c}");
    }
    let again = build_plan(hand_design(Sampling::Balanced)).unwrap();
    assert_eq!(model_cells(&again, 0), model_cells(&plan, 0));
}

#[test]
fn the_plan_views_design_names_read_into_samplings_and_back() {
    let cases = [
        (
            "coverage:2",
            Sampling::Coverage {
                conditions: 2,
                budget: 40,
            },
        ),
        (
            " Coverage-3 ",
            Sampling::Coverage {
                conditions: 3,
                budget: 40,
            },
        ),
        (
            "coverage=1",
            Sampling::Coverage {
                conditions: 1,
                budget: 40,
            },
        ),
        ("balanced", Sampling::Balanced),
        ("stratified", Sampling::Stratified { budget: 40 }),
        ("srs", Sampling::Srs { budget: 40 }),
        ("concentrated", Sampling::Concentrated { budget: 40 }),
        ("full", Sampling::Full),
    ];
    for (name, sampling) in cases {
        assert_eq!(Sampling::from_name(name, 40), Ok(sampling), "{name:?}");
        assert_eq!(Sampling::from_name(&sampling.name(), 40), Ok(sampling));
    }
    assert_eq!(
        Sampling::Coverage {
            conditions: 2,
            budget: 40
        }
        .name(),
        "coverage:2"
    );
    for bad in ["coverage", "coverage:", "coverage:two", "everything", ""] {
        assert_eq!(
            Sampling::from_name(bad, 40),
            Err(UnknownSampling(bad.to_string())),
            "{bad:?}"
        );
    }
    assert!(UnknownSampling("x".into())
        .to_string()
        .contains("coverage:K"));
}

#[test]
fn only_designs_with_a_chosen_budget_report_one() {
    assert_eq!(Sampling::Full.budget(), None);
    assert_eq!(Sampling::Balanced.budget(), None);
    assert_eq!(
        Sampling::Coverage {
            conditions: 2,
            budget: 9
        }
        .budget(),
        Some(9)
    );
    assert_eq!(Sampling::Stratified { budget: 200 }.budget(), Some(200));
}

#[test]
fn coverage_and_balanced_designs_are_saved_as_tagged_json_and_old_designs_still_load() {
    let coverage = Sampling::Coverage {
        conditions: 2,
        budget: 5,
    };
    let json = serde_json::to_value(coverage).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"design": "coverage", "conditions": 2, "budget": 5})
    );
    assert_eq!(serde_json::from_value::<Sampling>(json).unwrap(), coverage);
    assert_eq!(
        serde_json::to_value(Sampling::Balanced).unwrap(),
        serde_json::json!({"design": "balanced"})
    );
    assert_eq!(
        serde_json::from_str::<Sampling>(r#"{"design":"balanced"}"#).unwrap(),
        Sampling::Balanced
    );
    // A sampling saved before these designs existed.
    assert_eq!(
        serde_json::from_str::<Sampling>(r#"{"design":"stratified","budget":200}"#).unwrap(),
        Sampling::Stratified { budget: 200 }
    );
    // Coverage needs both numbers and nothing else.
    assert!(serde_json::from_str::<Sampling>(r#"{"design":"coverage","budget":5}"#).is_err());
    assert!(serde_json::from_str::<Sampling>(
        r#"{"design":"coverage","conditions":2,"budget":5,"k":2}"#
    )
    .is_err());

    // A whole plan round-trips, and rebuilding its design gives the same calls.
    let plan = build_plan(hand_design(coverage)).unwrap();
    let text = serde_json::to_string(&plan).unwrap();
    assert!(text.contains(r#""sampling":{"design":"coverage","conditions":2,"budget":5}"#));
    let back: Plan = serde_json::from_str(&text).unwrap();
    assert_eq!(back, plan);
    assert_eq!(
        build_plan(back.design).unwrap().fingerprint,
        plan.fingerprint
    );
}

#[test]
fn a_coverage_runs_bundle_names_the_design_and_its_budget_in_its_provenance() {
    let plan = build_plan(hand_design(Sampling::Coverage {
        conditions: 2,
        budget: 5,
    }))
    .unwrap();
    let state = RunState::new(&plan);
    let bundle = to_bundle(&state, &plan, &BundleInfo::new("cov", "Coverage test")).unwrap();
    let notes = bundle.metadata.produced_by.notes.unwrap_or_default();
    assert!(
        notes.contains("sampling coverage:2, budget 5 cells per model, seed 7"),
        "{notes}"
    );
}
