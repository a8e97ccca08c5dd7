//! `atlas_core::clinical::cases`, the data of the Clinical view's case views (seed `001_…` Tables
//! 1–4) and of the heat map's cell lists (Fig. 4), on two hand-made SYNTHETIC fixtures:
//!
//! - `tests/fixtures/clinical-tiny/bundle.json`, whose values are worked out by hand in
//!   `tests/fixtures/clinical-tiny/README.md` (answer table there: 2 models × 3 questions × 7 variants ×
//!   1 run);
//! - `tests/fixtures/clinical-bundle.json`, two runs (answer table in `clinical_fixture.rs`): m1 on q1
//!   answers base A, mw A, fb B in run r1 and base A, mw C, fb A in run r2.

use atlas_core::clinical::cases::{
    cfv_result, changed_cases, conflict_words, counterfactual_of, option_text, reanswer_unchanged,
    CaseKey, CaseKeyError, CaseKind, CfvResult, DrCase, Examples,
};
use atlas_core::clinical::metrics::{self, analyze};
use atlas_core::clinical::Severity;
use atlas_core::Audit;

mod common;
use atlas_core::tolerance::SIX_DECIMALS;
use common::repo_fixture;

fn fixture() -> Audit {
    repo_fixture("clinical-tiny/bundle.json")
}

fn two_runs() -> Audit {
    repo_fixture("clinical-bundle.json")
}

/// Level index of a facet's level id.
fn index(audit: &Audit, facet: usize, id: &str) -> usize {
    audit.levels(facet).iter().position(|l| l.id == id).unwrap()
}

/// `(question, run, baseline letter, prefix letter)` of each changed comparison of a heat-map cell.
fn listed(audit: &Audit, m: usize, c: usize) -> Vec<(usize, usize, String, String)> {
    changed_cases(audit, m, c)
        .into_iter()
        .map(|k| (k.question, k.run, k.baseline, k.answer))
        .collect()
}

#[test]
fn case_keys_round_trip_and_resolve_model_ids_with_colons() {
    let models = ["org:model", "org:model:7b", "m"];
    let questions = ["q1", "7b:q2"];
    let key = CaseKey {
        kind: CaseKind::Dr,
        model: "org:model:7b".into(),
        question: "q1".into(),
        run: None,
    };
    assert_eq!(key.value(), "dr:org:model:7b:q1");
    assert_eq!(
        CaseKey::parse(&key.value(), &models, &questions, &[]),
        Ok(key)
    );
    // "org:model" + "7b:q2" is the only split that leaves a known question.
    let parsed = CaseKey::parse("cfv:org:model:7b:q2", &models, &questions, &[]).unwrap();
    assert_eq!(
        (parsed.kind, parsed.model.as_str(), parsed.question.as_str()),
        (CaseKind::Cfv, "org:model", "7b:q2")
    );
    let bad_kind = CaseKey::parse("case:m:q1", &models, &questions, &[]).unwrap_err();
    assert!(matches!(bad_kind, CaseKeyError::UnknownKind { .. }));
    let bad_kind = bad_kind.to_string();
    assert!(
        bad_kind.contains("cfv:") && bad_kind.contains("dr:"),
        "{bad_kind}"
    );
    let unknown = CaseKey::parse("dr:m:q9", &models, &questions, &[]).unwrap_err();
    assert!(matches!(
        unknown,
        CaseKeyError::NoSuchCase {
            kind: CaseKind::Dr,
            ..
        }
    ));
    let unknown = unknown.to_string();
    assert!(unknown.contains("names no model and question"), "{unknown}");
}

#[test]
fn a_demographic_case_names_its_run_and_shows_that_runs_answers() {
    let audit = two_runs();
    let report = analyze(&audit);
    let models = ["m1", "m2"];
    let questions = ["q1", "q2", "q3"];
    let runs = ["r1", "r2"];
    let key = CaseKey::parse("dr:m1:q1:r2", &models, &questions, &runs).unwrap();
    assert_eq!(
        (key.question.as_str(), key.run.as_deref()),
        ("q1", Some("r2"))
    );
    assert_eq!(key.value(), "dr:m1:q1:r2");
    assert_eq!(
        CaseKey::parse("dr:m1:q1", &models, &questions, &runs)
            .unwrap()
            .run,
        None
    );
    assert!(CaseKey::parse("dr:m1:q1:r9", &models, &questions, &runs).is_err());
    let (m, q) = (
        index(&audit, audit.model_facet, "m1"),
        index(&audit, audit.statement_facet, "q1"),
    );
    let answers = |run: usize| -> Vec<(String, Option<String>, Option<bool>)> {
        DrCase::new(&audit, &report, m, q, run)
            .prefixes
            .iter()
            .map(|p| (p.id.clone(), p.letter.clone(), p.changed))
            .collect()
    };
    let own = |id: &str, l: &str, c: bool| (id.to_string(), Some(l.to_string()), Some(c));
    // r1: base A; mw A (same), fb B (changed).
    assert_eq!(answers(0), [own("mw", "A", false), own("fb", "B", true)]);
    // r2: base A; mw C (changed), fb A (same).
    assert_eq!(answers(1), [own("mw", "C", true), own("fb", "A", false)]);
    // The heat-map cell m1 × mw lists q1 in run r2 (A → C) and q3 in run r1 (C → D).
    let mw = index(&audit, audit.condition_facet.unwrap(), "mw");
    assert_eq!(
        listed(&audit, m, mw),
        [
            (q, 1, "A".to_string(), "C".to_string()),
            (
                index(&audit, audit.statement_facet, "q3"),
                0,
                "C".to_string(),
                "D".to_string()
            ),
        ]
    );
}

/// m-alpha on q-crohn (README): baseline C; male-white and female-black answer D; flags for both (one
/// clinically misleading, one socially inappropriate); EDD = 10/21; directions more_aggressive and
/// lateral; not robust.
#[test]
fn the_non_robust_record_has_two_changed_answers_two_flags_and_edd_ten_twentyfirsts() {
    let audit = fixture();
    let report = analyze(&audit);
    let m = index(&audit, audit.model_facet, "m-alpha");
    let q = index(&audit, audit.statement_facet, "q-crohn");
    let case = DrCase::new(&audit, &report, m, q, 0);
    assert_eq!(
        case.baseline.as_ref().and_then(|b| b.letter.as_deref()),
        Some("C")
    );
    let answers: Vec<(&str, Option<&str>, Option<bool>)> = case
        .prefixes
        .iter()
        .map(|p| (p.id.as_str(), p.letter.as_deref(), p.changed))
        .collect();
    assert_eq!(
        answers,
        [
            ("male-white", Some("D"), Some(true)),
            ("female-white", Some("C"), Some(false)),
            ("male-black", Some("C"), Some(false)),
            ("female-black", Some("D"), Some(true)),
            ("male-hispanic", Some("C"), Some(false)),
            ("female-hispanic", Some("C"), Some(false)),
        ]
    );
    let flags: Vec<(&str, Option<Severity>)> = case
        .flags
        .iter()
        .map(|f| (f.prefix.as_str(), f.severity))
        .collect();
    assert_eq!(
        flags,
        [
            ("male-white", Some(Severity::ClinicallyMisleading)),
            ("female-black", Some(Severity::SociallyInappropriate)),
        ]
    );
    assert_eq!(case.judged, 6);
    assert_eq!(case.directions.len(), 2);
    assert!(case.conflicts.is_empty());
    let (edd, n) = case.edd.unwrap();
    assert!((edd - 10.0 / 21.0).abs() < SIX_DECIMALS, "{edd}");
    assert_eq!(n, 7);
    assert!(!case.robust());
}

/// m-beta on q-diplopia: the baseline is unreadable, so no prefix answer is compared; all six prefixes
/// conflict with the 25-year-old woman of the vignette.
#[test]
fn an_unreadable_baseline_defines_no_change_and_conflicts_are_listed() {
    let audit = fixture();
    let report = analyze(&audit);
    let m = index(&audit, audit.model_facet, "m-beta");
    let q = index(&audit, audit.statement_facet, "q-diplopia");
    let case = DrCase::new(&audit, &report, m, q, 0);
    let baseline = case.baseline.as_ref().unwrap();
    assert_eq!(
        (baseline.letter.as_deref(), baseline.responded),
        (None, true)
    );
    assert!(case.prefixes.iter().all(|p| p.changed.is_none()));
    assert!(case.changed().is_empty());
    assert!(!case.robust());
    let kinds: Vec<&str> = case
        .conflicts
        .iter()
        .map(|c| conflict_words(c.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            "age and sex",
            "age",
            "age and sex",
            "age",
            "age and sex",
            "age"
        ]
    );
}

#[test]
fn a_heat_map_cell_lists_exactly_its_changed_comparisons() {
    let audit = fixture();
    let cf = audit.condition_facet.unwrap();
    let alpha = index(&audit, audit.model_facet, "m-alpha");
    let beta = index(&audit, audit.model_facet, "m-beta");
    let crohn = index(&audit, audit.statement_facet, "q-crohn");
    let heparin = index(&audit, audit.statement_facet, "q-heparin");
    assert_eq!(
        listed(&audit, alpha, index(&audit, cf, "female-black")),
        [(crohn, 0, "C".to_string(), "D".to_string())]
    );
    // female-hispanic: q-diplopia's answer is unreadable, nothing changed.
    assert!(listed(&audit, alpha, index(&audit, cf, "female-hispanic")).is_empty());
    assert_eq!(
        listed(&audit, beta, index(&audit, cf, "male-black")),
        [(heparin, 0, "A".to_string(), "B".to_string())]
    );
}

/// The case views and the answer-change rate count the same comparisons: for every model × prefix,
/// the listed cases are the row's `changed`, and every demographic record's changed prefixes sum to
/// the model's changed comparisons (README: m-alpha 2 of 17, m-beta 1 of 12).
#[test]
fn the_case_views_show_as_changed_exactly_the_comparisons_the_rate_counts() {
    let audit = fixture();
    let report = analyze(&audit);
    let cf = audit.condition_facet.unwrap();
    for row in &report.answer_change {
        let m = index(&audit, audit.model_facet, &row.model);
        let c = index(&audit, cf, &row.condition);
        assert_eq!(
            changed_cases(&audit, m, c).len(),
            row.changed,
            "{} × {}",
            row.model,
            row.condition
        );
    }
    let questions = audit.levels(audit.statement_facet).len();
    let per_model: Vec<(usize, usize)> = (0..2)
        .map(|m| {
            (0..questions)
                .map(|q| DrCase::new(&audit, &report, m, q, 0))
                .fold((0, 0), |(changed, compared), case| {
                    (
                        changed + case.changed().len(),
                        compared + case.prefixes.iter().filter(|p| p.changed.is_some()).count(),
                    )
                })
        })
        .collect();
    assert_eq!(per_model, [(2, 17), (1, 12)]);
}

#[test]
fn the_seed_examples_are_the_first_of_each_kind() {
    let audit = fixture();
    let report = analyze(&audit);
    let e = Examples::find(&audit, &report);
    let key = |k: &Option<CaseKey>| k.as_ref().map(CaseKey::value);
    assert_eq!(key(&e.valid_cfv).as_deref(), Some("cfv:m-alpha:q-heparin"));
    assert_eq!(key(&e.invalid_cfv).as_deref(), Some("cfv:m-alpha:q-crohn"));
    assert_eq!(key(&e.robust_dr).as_deref(), Some("dr:m-alpha:q-heparin"));
    assert_eq!(key(&e.non_robust_dr).as_deref(), Some("dr:m-alpha:q-crohn"));
}

/// The fixture's counterfactual records (README, "Counterfactuals"): m-alpha q-heparin valid B → A;
/// m-alpha q-crohn same direction (C, target A, re-answer C); m-beta q-heparin circular (A, target B,
/// re-answer B); m-beta q-diplopia a format failure with nothing recorded.
#[test]
fn a_counterfactual_result_says_whether_the_answer_reached_the_target() {
    let audit = fixture();
    let cl = audit.file.clinical.as_ref().unwrap();
    let record = |m: &str, q: &str| &cl.counterfactuals[counterfactual_of(cl, m, q).unwrap()];
    assert_eq!(
        cfv_result(record("m-alpha", "q-heparin")),
        CfvResult::Valid {
            original: "B",
            target: "A"
        }
    );
    let same_direction = record("m-alpha", "q-crohn");
    assert_eq!(
        cfv_result(same_direction),
        CfvResult::MissedTarget {
            answer: "C",
            original: "C",
            target: "A"
        }
    );
    assert!(reanswer_unchanged(same_direction));
    let circular = record("m-beta", "q-heparin");
    assert_eq!(
        cfv_result(circular),
        CfvResult::ReachedTarget { target: "B" }
    );
    assert!(!reanswer_unchanged(circular));
    assert_eq!(
        cfv_result(record("m-beta", "q-diplopia")),
        CfvResult::Incomplete
    );
    assert_eq!(counterfactual_of(cl, "m-gamma", "q-heparin"), None);
    // q-heparin's options: B is "1,500 units"; a letter the question lacks is shown alone.
    let q = index(&audit, audit.statement_facet, "q-heparin");
    assert_eq!(option_text(&audit, q, "B"), "B: 1,500 units");
    assert_eq!(option_text(&audit, q, "b"), "b: 1,500 units");
    assert_eq!(option_text(&audit, q, "Z"), "Z");
}

#[test]
fn answer_letters_are_the_same_after_trimming_and_ignoring_ascii_case() {
    assert!(metrics::same_letter(" b", "B"));
    assert!(metrics::same_letter("C\n", "c"));
    assert!(!metrics::same_letter("A", "B"));
}
