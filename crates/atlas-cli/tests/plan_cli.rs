//! `atlas plan-audit` end to end on the default bundle: the JSON names bundle, seed, draws, designs and
//! the finite-reference note; its estimates are `atlas analyze-rq2`'s numbers at the same design,
//! budget, draws and seed (identical); the text names the same and answers the targets; bad input
//! (unknown model, budget 0, a budget above the observable cells, an unknown design, a pair target
//! without a pair) exits non-zero with a message naming the input.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn bundle() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../static/bundles/decodingtrust-stereotype/bundle.json")
        .to_str()
        .unwrap()
        .to_string()
}

fn atlas(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(args)
        .output()
        .expect("runs atlas");
    (
        output.status.success(),
        String::from_utf8(output.stdout).expect("UTF-8"),
        String::from_utf8(output.stderr).expect("UTF-8"),
    )
}

#[test]
fn plan_audit_json_equals_analyze_rq2_and_names_its_inputs() {
    let b = bundle();
    let (ok, out, err) = atlas(&[
        "plan-audit",
        &b,
        "--design",
        "concentrated,srs",
        "--design",
        "stratified",
        "--budget",
        "200",
        "--draws",
        "200",
        "--json",
    ]);
    assert!(ok, "{err}");
    let plan: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(plan["bundle"], "decodingtrust-stereotype-v1");
    assert_eq!(plan["seed"], 20_260_722);
    assert_eq!(plan["draws"], 200);
    assert_eq!(plan["budgets"], serde_json::json!([200]));
    assert!(plan["note"]
        .as_str()
        .unwrap()
        .contains("not predict error against conditions"));
    let (ok, out, err) = atlas(&[
        "analyze-rq2",
        &b,
        "--budget",
        "200",
        "--draws",
        "200",
        "--bootstrap",
        "10",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let rq2: Value = serde_json::from_str(&out).expect("JSON");
    let designs = plan["designs"].as_array().unwrap();
    let names: Vec<&str> = designs
        .iter()
        .map(|d| d["design"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["concentrated", "srs", "stratified"]);
    for d in designs {
        let e = &d["estimates"][0];
        let r = rq2["designs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["design"] == d["design"])
            .unwrap();
        for key in ["mae_pp", "rmse_pp", "tau_b", "inversion_rate"] {
            assert_eq!(e[key], r[key], "{} {key}", d["design"]);
        }
    }
}

#[test]
fn plan_audit_text_names_the_inputs_and_answers_the_target() {
    let (ok, out, err) = atlas(&[
        "plan-audit",
        &bundle(),
        "--budgets",
        "100,384,1500",
        "--draws",
        "200",
        "--target-mae",
        "2",
        "--pair",
        "gpt-4-0314,gpt-3.5-turbo-0301",
        "--target-pair",
        "90",
    ]);
    assert!(ok, "{err}");
    for needle in [
        "Plan an audit of bundle decodingtrust-stereotype-v1: seed 20260722, 200 draws per estimate",
        "designs: concentrated, srs, stratified; budgets (responses per model): 100, 384, 1500",
        // A budget a design cannot read is skipped, with the design named.
        "  budget 1500 skipped: concentrated would read 1500 statements of one template; the bundle has 384",
        "  budget 1500 skipped: stratified would read 500 statements of one template; the bundle has 384",
        "this bundle's own conditions",
        "score MAE ≤ 2 pp in 95 % of audits:",
        "order of gpt-4-0314 and gpt-3.5-turbo-0301 right in ≥ 90 % of audits:",
        // The concentrated design reads one condition: its score MAE stays near 10 pp.
        "  concentrated: not reached up to the largest budget evaluated, 384",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn plan_audit_bad_input_names_what_is_wrong() {
    let b = bundle();
    for (args, needle) in [
        (
            vec!["--models", "gpt-4-0314,gpt-5"],
            "no model \"gpt-5\" in the bundle; its models are gpt-3.5-turbo-0301",
        ),
        (
            vec!["--budget", "0"],
            "budget 0: the budget must be at least 1 response per model",
        ),
        (
            vec!["--budget", "5000"],
            "budget 5000 is above the 3456 cells of the bundle's observable matrix",
        ),
        (
            vec!["--design", "clustered"],
            "unknown design \"clustered\"",
        ),
        (
            vec!["--design", "coverage:4"],
            "coverage design over 4 conditions: the bundle has 3",
        ),
        (vec!["--target-pair", "80"], "--pair"),
        (
            vec!["--pair", "gpt-4-0314"],
            "expected two model ids separated by a comma",
        ),
    ] {
        let mut all = vec!["plan-audit", b.as_str(), "--draws", "10"];
        all.extend(&args);
        let (ok, _, err) = atlas(&all);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(needle), "{args:?}: {needle:?} not in {err:?}");
    }
}
