//! `atlas reweight` end to end: runs the built binary on the default bundle and compares its JSON with
//! the independent numpy/scipy reference (`tests/reference/expected_reweight.json`), checks the CSV's
//! columns and the presets, and that bad weights are a message naming the condition.

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
    let text = std::fs::read_to_string(root().join("tests/reference/expected_reweight.json"))
        .expect("reads the reference");
    serde_json::from_str(&text).expect("reference JSON")
}

/// Runs `atlas reweight BUNDLE ARGS`: (success, stdout, stderr).
fn atlas(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("reweight")
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

fn json(args: &[&str]) -> Value {
    let (ok, out, err) = atlas(args);
    assert!(ok, "atlas reweight {args:?} failed: {err}");
    serde_json::from_str(&out).expect("JSON output")
}

fn close(a: &Value, b: &Value, what: &str) {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => assert!(
            (x - y).abs() <= atlas_core::tolerance::EXACT,
            "{what}: {x} vs numpy {y}"
        ),
        _ => assert_eq!(a, b, "{what}"),
    }
}

#[test]
fn custom_weights_give_the_numpy_scores_ranks_tau_b_and_inverted_pairs() {
    let reference = expected();
    let dt = &reference["bundles"]["decodingtrust"];
    let models: Vec<&str> = dt["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let conditions: Vec<&str> = dt["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let mut checked = 0;
    for policy in ["all_responses", "first_repeat"] {
        for case in dt["policies"][policy]["cases"].as_array().unwrap() {
            let Some(custom) = case["custom"].as_array() else {
                continue;
            };
            let spec = conditions
                .iter()
                .zip(custom)
                .map(|(c, w)| format!("{c}={w}"))
                .collect::<Vec<_>>()
                .join(",");
            let got = json(&[
                "--policy",
                policy,
                "--weights",
                &spec,
                "--bootstrap",
                "0",
                "--format",
                "json",
            ]);
            let name = case["name"].as_str().unwrap();
            for (m, id) in models.iter().enumerate() {
                close(
                    &got["scores"][m],
                    &case["scores"][id],
                    &format!("{policy}/{name}/{id} score"),
                );
                close(
                    &got["delta_pp"][m],
                    &case["delta_pp"][id],
                    &format!("{policy}/{name}/{id} Δ"),
                );
                assert_eq!(
                    got["ranks"][m].as_f64(),
                    case["ranks"][id].as_f64(),
                    "{policy}/{name}/{id} rank"
                );
            }
            close(&got["tau_b"], &case["tau_b"], &format!("{name} τ-b"));
            assert_eq!(got["inversions"], case["inversions"], "{name} inversions");
            assert_eq!(
                got["inverted_pairs"], case["inverted_pairs"],
                "{name} pairs"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 10, "five custom cases per policy");
}

#[test]
fn the_bootstrap_intervals_equal_the_numpy_chacha8_reference() {
    let reference = expected();
    let boot = &reference["bundles"]["decodingtrust"]["bootstrap"];
    let reps = boot["reps"].to_string();
    let seed = boot["seed"].to_string();
    for case in boot["cases"].as_array().unwrap() {
        let mut args = vec!["--bootstrap", &reps, "--seed", &seed, "--format", "json"];
        let spec;
        if let Some(custom) = case["custom"].as_array() {
            spec = ["benign", "untargeted", "targeted"]
                .iter()
                .zip(custom)
                .map(|(c, w)| format!("{c}={w}"))
                .collect::<Vec<_>>()
                .join(",");
            args.extend(["--weights", &spec]);
        }
        let got = json(&args);
        for (m, id) in got["models"].as_array().unwrap().iter().enumerate() {
            let id = id.as_str().unwrap();
            let interval = &got["bootstrap"]["intervals"][m];
            close(
                &interval["lo"],
                &case["intervals"][id][0],
                &format!("{id} lo"),
            );
            close(
                &interval["hi"],
                &case["intervals"][id][1],
                &format!("{id} hi"),
            );
        }
    }
}

#[test]
fn csv_has_the_documented_columns_and_one_row_per_model() {
    let (ok, out, err) = atlas(&["--preset", "sweep:system prompt", "--format", "csv"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], atlas_core::tables::REWEIGHT_CSV_COLUMNS.join(","));
    assert_eq!(lines.len(), 9, "{out}");
    assert!(
        lines[1].starts_with(
            "decodingtrust-stereotype-v1,all_responses,\"sweep system prompt only: benign=1, untargeted=1, targeted=1\",gpt-3.5-turbo-0301,"
        ),
        "{}",
        lines[1]
    );
}

#[test]
fn bad_weights_and_presets_are_messages_naming_the_problem() {
    let (ok, _, err) = atlas(&["--weights", "benign=-1"]);
    assert!(!ok);
    assert!(
        err.contains("\"benign\"") && err.contains("negative"),
        "{err}"
    );
    let (ok, _, err) = atlas(&["--weights", "nosuch=1"]);
    assert!(!ok);
    assert!(err.contains("no condition \"nosuch\""), "{err}");
    let (ok, _, err) = atlas(&["--weights", "benign=0,untargeted=0,targeted=0"]);
    assert!(!ok);
    assert!(
        err.contains("at least one weight must be positive"),
        "{err}"
    );
    let (ok, _, err) = atlas(&["--preset", "baseline"]);
    assert!(!ok);
    assert!(err.contains("no baseline condition"), "{err}");
}
