//! `atlas_core::clinical::metrics` against the independent numpy/scipy reference.
//!
//! Reference values: `tests/reference/expected_clinical.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_reference.py` (re-check with
//! `--check`). The script computes Spearman's ρ with `scipy.stats.spearmanr` on fixed cases, and EDD
//! (seed `001_…` Eq. 1: 1 − mean pairwise cosine of the L2-normalised embeddings), mean EDD, CFV and the
//! difficulty × validity Spearman with numpy/scipy on two SYNTHETIC bundles it generates (f32le with a
//! baseline, f16le without) and stores whole in the JSON; it encodes the embeddings with numpy and
//! Python's base64, so the Rust decoder is checked too.
//!
//! Expected objects use the report's serde field names; counts, ids and nulls are compared exactly,
//! floats within [`atlas_core::tolerance::EXACT`] (1e-12); keys the reference does not compute are
//! not compared.

use atlas_core::clinical::metrics::{analyze, spearman};
use atlas_core::tolerance::EXACT;
use atlas_core::Audit;
use serde_json::Value;

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/expected_clinical.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Differences of `actual` from every key of `expected` (floats within [`EXACT`]).
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
        (Value::Number(e), Value::Number(a)) if e.is_f64() || a.is_f64() => {
            match (e.as_f64(), a.as_f64()) {
                (Some(x), Some(y)) if (x - y).abs() <= EXACT => {}
                _ => out.push(format!("{path}: {e} vs {a}")),
            }
        }
        _ => {
            if expected != actual {
                out.push(format!("{path}: {expected} vs {actual}"));
            }
        }
    }
}

/// Guards the average-rank Pearson definition (ties, n = 2, undefined on a constant variable) against
/// scipy on every recorded case.
#[test]
fn spearman_matches_scipy_on_every_recorded_case() {
    let reference = reference();
    let cases = reference["spearman"].as_array().expect("spearman cases");
    assert!(cases.len() >= 6);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let xs = |k: &str| -> Vec<f64> {
            case[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let got = spearman(&xs("x"), &xs("y"));
        match case["rho"].as_f64() {
            None => assert_eq!(got, None, "{name}"),
            Some(rho) => assert!(
                got.is_some_and(|g| (g - rho).abs() <= EXACT),
                "{name}: {got:?} vs scipy {rho}"
            ),
        }
    }
}

/// Guards EDD per record (variants present, n_variants, records with one variant left out), mean EDD,
/// CFV and the difficulty × validity Spearman on both reference bundles (f32le with a baseline, f16le
/// without one).
#[test]
fn edd_cfv_and_spearman_of_the_reference_bundles_match_numpy_and_scipy() {
    let reference = reference();
    let bundles = reference["bundles"].as_array().expect("bundles");
    assert_eq!(bundles.len(), 2);
    for b in bundles {
        let name = b["name"].as_str().unwrap();
        let audit = Audit::from_json(&b["bundle"].to_string())
            .unwrap_or_else(|e| panic!("{name}: the reference bundle does not read: {e}"));
        let report = serde_json::to_value(analyze(&audit)).unwrap();
        let mut out = Vec::new();
        differences(&b["expected"], &report, name, &mut out);
        assert!(
            out.is_empty(),
            "{} difference(s) from the numpy/scipy reference:\n{}",
            out.len(),
            out.join("\n")
        );
        assert!(b["expected"]["edd"].as_array().unwrap().len() >= 10);
    }
}
