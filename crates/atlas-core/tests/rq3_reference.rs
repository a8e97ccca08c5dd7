//! `atlas_core::rq3` against the independent numpy/pandas/scikit-learn reference.
//!
//! Reference values: `tests/reference/expected_rq3.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/rq3_reference.py` (re-check with `--check`).
//! The script computes Cohen's κ with `sklearn.metrics.cohen_kappa_score` (scikit-learn pinned in
//! `tests/requirements.txt`), and re-implements the coding rules, the joint table, the BER summaries, the
//! per-cell directions and the human QC with pandas/numpy on `tests/fixtures/tiny-bundle.json`, on a
//! seeded synthetic bundle it generates and stores whole in the JSON, and on the judge-coded pilot demo
//! bundle `static/bundles/pilot-demo-smollm2/bundle.json` (key `bundles.pilot_demo`, read directly with
//! `json` and decoded with pandas/numpy; the same command writes it).
//!
//! The expected objects use the field names of the report's serde JSON, so each case is compared by
//! walking the expected JSON: counts, labels and verdicts exactly, fractions within
//! [`atlas_core::tolerance::EXACT`] (1e-12); keys the reference does not compute are not compared.

mod common;

use std::path::PathBuf;

use atlas_core::rq3::{analyze_rq3, cohen_kappa, Rq3Settings};
use atlas_core::tolerance::EXACT;
use atlas_core::Audit;
use serde_json::Value;

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn reference() -> Value {
    let path = repo_file("tests/reference/expected_rq3.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares `actual` with every key of `expected`: integers, strings, booleans and nulls exactly, floats
/// within [`EXACT`]. Returns the differences as `path: expected vs actual`.
fn differences(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                match a.get(k) {
                    Some(x) => differences(v, x, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing in the Rust report")),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                out.push(format!("{path}: length {} vs {}", e.len(), a.len()));
            }
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(e), Value::Number(a)) if e.is_f64() => match (e.as_f64(), a.as_f64()) {
            (Some(x), Some(y)) if (x - y).abs() <= EXACT => {}
            _ => out.push(format!("{path}: {e} vs {a}")),
        },
        _ => {
            if expected != actual {
                out.push(format!("{path}: {expected} vs {actual}"));
            }
        }
    }
}

fn check_cases(audit: &Audit, section: &Value, name: &str) -> usize {
    let cases = section["cases"].as_array().expect("cases");
    for case in cases {
        let settings: Rq3Settings = serde_json::from_value(case["settings"].clone())
            .unwrap_or_else(|e| panic!("{name}: settings {}: {e}", case["settings"]));
        let report = analyze_rq3(audit, &settings)
            .unwrap_or_else(|e| panic!("{name} {}: {e}", case["settings"]));
        let actual = serde_json::to_value(&report).expect("the report serialises");
        let mut out = Vec::new();
        differences(
            case,
            &actual,
            &format!("{name} {}", case["settings"]),
            &mut out,
        );
        assert!(
            out.is_empty(),
            "{} difference(s) from the numpy/pandas reference:\n{}",
            out.len(),
            out.join("\n")
        );
    }
    cases.len()
}

/// Guards the κ formula (chance agreement from both annotators' margins, undefined when both use one
/// label) against scikit-learn on hand-made and seeded random label sequences.
#[test]
fn cohen_kappa_matches_scikit_learn_on_every_recorded_label_sequence() {
    let reference = reference();
    let cases = reference["kappa"].as_array().expect("kappa cases");
    assert!(
        cases.len() >= 10,
        "the reference records {} κ cases",
        cases.len()
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let a: Vec<char> = case["a"].as_str().unwrap().chars().collect();
        let b: Vec<char> = case["b"].as_str().unwrap().chars().collect();
        let k = cohen_kappa(&a, &b).unwrap_or_else(|e| panic!("{name}: {e}"));
        let actual = serde_json::to_value(k).unwrap();
        let mut out = Vec::new();
        let expected = serde_json::json!({
            "n": case["n"], "agree": case["agree"], "agreement": case["agreement"], "kappa": case["kappa"]
        });
        differences(&expected, &actual, name, &mut out);
        assert!(out.is_empty(), "{}", out.join("\n"));
    }
}

/// Guards the whole RQ3 report (coverage, every coding rule's Table 18 row, joint table, BER summaries,
/// directions, per-cell verdicts, human QC with a single annotator as final) on the documented tiny bundle.
#[test]
fn rq3_report_of_the_tiny_bundle_matches_the_pandas_reference() {
    let reference = reference();
    let section = &reference["bundles"]["tiny"];
    let path = repo_file(section["bundle_path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let audit = Audit::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(check_cases(&audit, section, "tiny"), 1);
}

/// Guards the rules on three judges (two of them audited models, matched by name), a judge subset,
/// explicit self-judge pairs, a nested template with stray responses outside the design, a condition
/// without a Selection readout, and the human QC with two annotators (κ from scikit-learn) and an
/// adjudicated final column, on the seeded synthetic bundle stored in the reference.
#[test]
fn rq3_report_of_the_seeded_synthetic_bundle_matches_the_pandas_and_sklearn_reference() {
    let reference = reference();
    let section = &reference["bundles"]["synthetic"];
    let audit = Audit::from_json(&section["bundle"].to_string())
        .unwrap_or_else(|e| panic!("the synthetic reference bundle: {e}"));
    assert_eq!(check_cases(&audit, section, "synthetic"), 3);
}

/// Real data: on the pilot's judge-coded demo bundle (SmolLM2-135M-Instruct, 600 responses of one
/// model under B0; three judge columns that are the same model with three rubric prompts, so every judge is
/// a self-judge and the no-self-judge rule keeps no rows), the whole RQ3 report for every coding rule —
/// Rationale rows and bias rate, Rationale Abstain, pairs and coverage, the 2×2 joint counts,
/// BER_sel/rat/cor/union, disagreement and its two directions, the per model × condition cells and whether
/// the dominant direction holds, Selection coverage and Abstains, each judge's self models and label count —
/// equals the independent pandas/numpy computation of `tests/reference/rq3_reference.py` (counts exactly,
/// fractions at 1e-12).
///
/// Expected values: `tests/reference/expected_rq3.json` key `bundles.pilot_demo`, written from the
/// repository root by `~/.cache/audit-atlas/venv/bin/python tests/reference/rq3_reference.py` (re-check
/// with `--check`, which also compares the recorded sha256 of the bundle's bytes).
#[test]
fn the_pilot_demo_bundle_rq3_equals_the_independent_pandas_computation() {
    let reference = reference();
    let section = &reference["bundles"]["pilot_demo"];
    let path = repo_file(section["bundle_path"].as_str().expect("bundle_path"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let audit = Audit::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let case = &section["cases"][0];
    let rules: Vec<&str> = case["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["rule"].as_str().expect("rule"))
        .collect();
    assert_eq!(
        rules,
        [
            "binary_majority",
            "binary_unanimity",
            "five_class_unanimity",
            "no_self_judge"
        ],
        "the reference covers every coding rule"
    );
    // The demo is not a degenerate case for the primary rule: pairs and disagreement in both directions.
    let majority = &case["rules"][0];
    let directions = &majority["disagreement"];
    for count in [
        &majority["pairs"],
        &directions["selection_only"],
        &directions["rationale_only"],
    ] {
        assert!(count.as_u64().expect("a count") > 0, "{majority}");
    }
    assert_eq!(check_cases(&audit, section, "pilot_demo"), 1);
}
