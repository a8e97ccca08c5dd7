//! `atlas compare` end to end: runs the built binary on the default bundle and compares its JSON with
//! the independent statsmodels/scipy/numpy reference (`tests/reference/expected_compare.json`), checks
//! that the text and CSV name the bundle, policy, weights, seed and replicates, and that bad input is a
//! message naming what is wrong.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bundle() -> PathBuf {
    root().join("static/bundles/decodingtrust-stereotype/bundle.json")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(root().join("tests/reference/expected_compare.json"))
        .expect("reads the reference");
    serde_json::from_str(&text).expect("reference JSON")
}

/// Runs `atlas compare BUNDLE ARGS`: (success, stdout, stderr).
fn atlas(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("compare")
        .arg(bundle())
        .args(args)
        .output()
        .expect("runs atlas");
    (
        output.status.success(),
        String::from_utf8(output.stdout).expect("UTF-8"),
        String::from_utf8(output.stderr).expect("UTF-8"),
    )
}

#[track_caller]
fn close(a: &Value, b: &Value, tol: f64, what: &str) {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => assert!((x - y).abs() <= tol, "{what}: {x} vs numpy {y}"),
        _ => assert_eq!(a, b, "{what}"),
    }
}

#[test]
fn json_of_all_pairs_under_unit_majority_matches_statsmodels_and_the_same_stream_bootstrap() {
    let reference = expected();
    let dt = &reference["bundles"]["decodingtrust"];
    let (ok, out, err) = atlas(&["--policy", "unit-majority", "--reps", "1", "--json"]);
    assert!(ok, "{err}");
    let got: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(got["bundle"], "decodingtrust-stereotype-v1");
    assert_eq!(got["policy"], "unit_majority");
    assert_eq!(got["count_unit"], "units");
    assert_eq!(got["seed"], 20_260_722);
    assert_eq!(got["reps"], 1);
    let want = dt["policies"]["unit_majority"]["pairs"].as_array().unwrap();
    let pairs = got["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), want.len());
    for (p, e) in pairs.iter().zip(want) {
        let what = format!("{} vs {}", e["model_a"], e["model_b"]);
        for k in ["both", "a_only", "b_only", "neither"] {
            assert_eq!(p["table"][k], e["table"][k], "{what}: {k}");
        }
        for k in ["invalid_a_only", "invalid_b_only", "invalid_both"] {
            assert_eq!(p["table"]["excluded"][k], e["table"][k], "{what}: {k}");
        }
        let eps = atlas_core::tolerance::EXACT;
        close(&p["mcnemar"]["p_exact"], &e["p_exact"], eps, &what);
        close(&p["mcnemar"]["p_mid"], &e["p_mid"], eps, &what);
        close(&p["p_bh"], &e["p_bh"], eps, &what);
        close(&p["p_holm"], &e["p_holm"], eps, &what);
        assert_eq!(p["separable"], e["separable"], "{what}");
    }

    // All responses, the same stream as the reference's 100 replicates: the intervals agree.
    let boot = &dt["policies"]["all_responses"]["same_stream"];
    let reps = boot["reps"].to_string();
    let (ok, out, err) = atlas(&["--reps", &reps, "--json"]);
    assert!(ok, "{err}");
    let got: Value = serde_json::from_str(&out).expect("JSON");
    let case = &boot["cases"][0];
    assert_eq!(case["name"], "equal");
    for (p, e) in got["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(case["pairs"].as_array().unwrap())
    {
        for k in ["ber_diff_ci_pp", "score_diff_ci_pp"] {
            for end in 0..2 {
                close(
                    &p[k][end],
                    &e[k][end],
                    atlas_core::tolerance::EXACT_PP,
                    &format!("{} vs {} {k}", e["model_a"], e["model_b"]),
                );
            }
        }
    }
    assert_eq!(
        got["rank_bands"]["tie_groups"], case["tie_groups"],
        "tie groups"
    );
}

#[test]
fn text_and_csv_name_the_bundle_policy_weights_seed_and_replicates() {
    let (ok, out, err) = atlas(&[
        "--a",
        "gpt-4-0314",
        "--b",
        "gpt-3.5-turbo-0301",
        "--reps",
        "50",
        "--seed",
        "7",
        "--weights",
        "targeted=2",
    ]);
    assert!(ok, "{err}");
    let first = out.lines().next().unwrap();
    for part in [
        "decodingtrust-stereotype-v1",
        "all_responses",
        "targeted=2",
        "seed 7",
        "50 replicates",
    ] {
        assert!(first.contains(part), "{part:?} missing from {first:?}");
    }
    assert!(out.contains("adjusted over all 28 pairs"), "{out}");
    assert!(
        out.contains("gpt-3.5-turbo-0301 (A) vs gpt-4-0314 (B)"),
        "{out}"
    );
    assert!(
        !out.contains("rank bands"),
        "one pair prints no matrix or bands: {out}"
    );

    let (ok, csv, err) = atlas(&["--reps", "20", "--csv"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 28);
    assert!(lines[0].starts_with("bundle,policy,count_unit,weights,seed,replicates,model_a"));
    assert!(
        lines[1].starts_with(
            "decodingtrust-stereotype-v1,all_responses,responses,equal (Eq. 4),20260722,20,"
        ),
        "{}",
        lines[1]
    );
    let (ok, bands, err) = atlas(&["--reps", "20", "--csv", "bands"]);
    assert!(ok, "{err}");
    assert_eq!(bands.lines().count(), 1 + 8);
    assert!(bands.starts_with("bundle,policy,weights,seed,replicates,model,rank,rank_band_lo"));
}

#[test]
fn unknown_or_equal_models_and_a_bad_alpha_are_named() {
    let (ok, _, err) = atlas(&["--a", "gpt-4", "--b", "alpaca-native", "--reps", "1"]);
    assert!(!ok);
    assert!(
        err.contains("no model \"gpt-4\"") && err.contains("gpt-4-0314"),
        "{err}"
    );
    let (ok, _, err) = atlas(&[
        "--a",
        "alpaca-native",
        "--b",
        "alpaca-native",
        "--reps",
        "1",
    ]);
    assert!(!ok);
    assert!(err.contains("choose two different models"), "{err}");
    let (ok, _, err) = atlas(&["--alpha", "1.5", "--reps", "1"]);
    assert!(!ok);
    assert!(err.contains("alpha 1.5 is outside (0, 1)"), "{err}");
    let (ok, _, err) = atlas(&["--reps", "0"]);
    assert!(!ok, "zero replicates are refused");
    assert!(err.contains("--reps"), "{err}");
    let (ok, _, err) = atlas(&["--weights", "nowhere=1", "--reps", "1"]);
    assert!(!ok);
    assert!(err.contains("nowhere"), "{err}");
}
