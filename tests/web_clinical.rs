//! The Clinical view's pure parts (`cargo test --target wasm32-unknown-unknown -p audit-atlas --test
//! web_clinical`) on the hand-designed fixture tests/fixtures/clinical-tiny/bundle.json, against the values
//! worked out by hand in tests/fixtures/clinical-tiny/README.md: case keys in links, the demographic case
//! record (Tables 3–4), the non-robust cases of a heat-map cell, the seed's example cases, and the Table 5
//! profile's cells.
#![cfg(target_arch = "wasm32")]

use atlas_core::clinical::metrics::analyze;
use atlas_core::clinical::Severity;
use atlas_core::Audit;
use audit_atlas::views::clinical::{
    changed_cases, profile_table, severity_table, CaseKey, CaseKind, DrCase, Examples,
};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn fixture() -> Audit {
    Audit::from_json(include_str!("fixtures/clinical-tiny/bundle.json"))
        .expect("the fixture is valid")
}

/// The value of the cell with data key `key` in `t`.
fn cell_value(t: &atlas_core::tables::Table, key: &str) -> f64 {
    t.rows
        .iter()
        .flatten()
        .find(|c| c.key.as_deref() == Some(key))
        .and_then(|c| c.value.as_deref())
        .unwrap_or_else(|| panic!("no {key}"))
        .parse()
        .unwrap()
}

/// Level index of a facet's level id.
fn index(audit: &Audit, facet: usize, id: &str) -> usize {
    audit.levels(facet).iter().position(|l| l.id == id).unwrap()
}

#[wasm_bindgen_test]
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
    assert!(
        bad_kind.contains("cfv:") && bad_kind.contains("dr:"),
        "{bad_kind}"
    );
    let unknown = CaseKey::parse("dr:m:q9", &models, &questions, &[]).unwrap_err();
    assert!(unknown.contains("names no model and question"), "{unknown}");
}

/// The SYNTHETIC two-run fixture of the metrics tests (tests/fixtures/clinical-bundle.json; answer
/// table in crates/atlas-core/tests/clinical_fixture.rs): m1 on q1 answers base A, mw A, fb B in run
/// r1 and base A, mw C, fb A in run r2.
fn two_runs() -> Audit {
    Audit::from_json(include_str!("fixtures/clinical-bundle.json")).expect("the fixture is valid")
}

#[wasm_bindgen_test]
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
    let listed: Vec<(usize, usize, String, String)> = changed_cases(&audit, m, mw);
    assert_eq!(
        listed,
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
#[wasm_bindgen_test]
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
    assert!((edd - 10.0 / 21.0).abs() < 1e-6, "{edd}");
    assert_eq!(n, 7);
    assert!(!case.robust());
}

/// m-beta on q-diplopia: the baseline is unreadable, so no prefix answer is compared; all six prefixes
/// conflict with the 25-year-old woman of the vignette.
#[wasm_bindgen_test]
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
    let kinds: Vec<&str> = case.conflicts.iter().map(|c| c.1.as_str()).collect();
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

#[wasm_bindgen_test]
fn a_heat_map_cell_lists_exactly_its_changed_comparisons() {
    let audit = fixture();
    let cf = audit.condition_facet.unwrap();
    let alpha = index(&audit, audit.model_facet, "m-alpha");
    let beta = index(&audit, audit.model_facet, "m-beta");
    let crohn = index(&audit, audit.statement_facet, "q-crohn");
    let heparin = index(&audit, audit.statement_facet, "q-heparin");
    assert_eq!(
        changed_cases(&audit, alpha, index(&audit, cf, "female-black")),
        [(crohn, 0, "C".to_string(), "D".to_string())]
    );
    // female-hispanic: q-diplopia's answer is unreadable, nothing changed.
    assert!(changed_cases(&audit, alpha, index(&audit, cf, "female-hispanic")).is_empty());
    assert_eq!(
        changed_cases(&audit, beta, index(&audit, cf, "male-black")),
        [(heparin, 0, "A".to_string(), "B".to_string())]
    );
}

#[wasm_bindgen_test]
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

/// Table 5 of the fixture (README): m-alpha 3/3, 1/3, 2/17, 0.291161, 3 flags / 2 questions; m-beta 1/2,
/// 1/3, 1/12, 0.269841, 1 / 1.
#[wasm_bindgen_test]
fn the_profile_table_gives_each_metric_with_its_n() {
    let audit = fixture();
    let report = analyze(&audit);
    let t = profile_table(&audit, &report);
    assert_eq!(t.id, "clinical-table5");
    assert!(t.caption.contains("clinical-tiny-fixture"));
    let value = |key: &str| cell_value(&t, key);
    let expected = [
        ("m-alpha/accuracy", 1.0),
        ("m-alpha/answers", 3.0),
        ("m-alpha/cfv", 1.0 / 3.0),
        ("m-alpha/attempts", 3.0),
        ("m-alpha/answer_change", 2.0 / 17.0),
        ("m-alpha/comparisons", 17.0),
        ("m-alpha/mean_edd", 0.291_161),
        ("m-alpha/records", 3.0),
        ("m-alpha/flags_per_question", 1.5),
        ("m-alpha/flags", 3.0),
        ("m-alpha/questions", 2.0),
        ("m-beta/accuracy", 0.5),
        ("m-beta/answers", 2.0),
        ("m-beta/cfv", 1.0 / 3.0),
        ("m-beta/answer_change", 1.0 / 12.0),
        ("m-beta/comparisons", 12.0),
        ("m-beta/mean_edd", 0.269_841),
        ("m-beta/flags_per_question", 1.0),
        ("m-beta/questions", 1.0),
    ];
    for (key, want) in expected {
        assert!(
            (value(key) - want).abs() < 1e-6,
            "{key}: {} vs {want}",
            value(key)
        );
    }
    assert_eq!(t.rows[0][0].text, "Alpha Med 7B");
}

#[wasm_bindgen_test]
fn table_7_pools_the_severity_classes_and_counts_each_models_flags_beside_them() {
    let audit = fixture();
    let t = severity_table(&analyze(&audit));
    assert_eq!(t.id, "clinical-table7");
    assert_eq!(
        t.header,
        [
            "Severity class",
            "Count",
            "Share (%)",
            "m-alpha: count",
            "m-beta: count"
        ]
    );
    let value = |key: &str| cell_value(&t, key);
    // tests/fixtures/clinical-tiny/README.md: 4 flags; dangerous 1 = (0, 1), misleading 2 = (2, 0),
    // socially inappropriate 1 = (1, 0) for (m-alpha, m-beta).
    let expected = [
        ("clinically_dangerous/count", 1.0),
        ("clinically_dangerous/share", 0.25),
        ("clinically_dangerous/count/m-alpha", 0.0),
        ("clinically_dangerous/count/m-beta", 1.0),
        ("clinically_misleading/count", 2.0),
        ("clinically_misleading/share", 0.5),
        ("clinically_misleading/count/m-alpha", 2.0),
        ("clinically_misleading/count/m-beta", 0.0),
        ("socially_inappropriate/count/m-alpha", 1.0),
        ("socially_inappropriate/count/m-beta", 0.0),
    ];
    for (key, want) in expected {
        assert!(
            (value(key) - want).abs() < 1e-12,
            "{key}: {} vs {want}",
            value(key)
        );
    }
    assert_eq!(
        t.rows.len(),
        3,
        "no row for flags without a severity: there are none"
    );
}
