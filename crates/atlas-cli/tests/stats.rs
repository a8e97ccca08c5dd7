//! `atlas stats` and `atlas reweight` on the score-direction and high-Abstain fixtures: the
//! direction line, ranks by |score − 50 %|, the ⚠ marks with their shares, the flag counts,
//! `--abstain-threshold`, and the JSON and CSV fields. Expected values are hand-worked in
//! `tests/fixtures/direction-abstain-fixtures.md`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// Runs `atlas ARGS`: (success, stdout, stderr).
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

fn stdout(args: &[&str]) -> String {
    let (ok, out, err) = atlas(args);
    assert!(ok, "atlas {args:?} failed: {err}");
    out
}

/// The row of `model` in a text table.
fn row<'a>(text: &'a str, model: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(model))
        .unwrap_or_else(|| panic!("no row {model} in\n{text}"))
}

#[test]
fn stats_ranks_a_target_bundle_by_the_distance_from_fifty_percent_and_says_so() {
    let path = fixture("target-50-bundle.json");
    let text = stdout(&["stats", path.to_str().unwrap()]);
    assert!(
        text.contains("ranking of the reference score: closest to 50 % is best (ranked by |score − 50 %|; declared by the bundle); rank 1 = closest to 50 %"),
        "{text}"
    );
    // rank is the last column: a 1, b 2, c and d 3.5.
    for (model, rank) in [
        ("model-a", "1"),
        ("model-b", "2"),
        ("model-c", "3.5"),
        ("model-d", "3.5"),
    ] {
        assert!(
            row(&text, model).ends_with(&format!(" {rank}")),
            "{model}: {}",
            row(&text, model)
        );
    }
    let json: Value =
        serde_json::from_str(&stdout(&["stats", path.to_str().unwrap(), "--json"])).expect("JSON");
    assert_eq!(json["direction"]["better"], "target");
    assert_eq!(json["direction"]["target"], 0.5);
    assert_eq!(json["direction"]["declared"], true);
    let ranks: Vec<f64> = json["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["rank"].as_f64().unwrap())
        .collect();
    assert_eq!(ranks, [1.0, 2.0, 3.5, 3.5]);
}

#[test]
fn stats_says_the_default_direction_when_the_bundle_declares_none() {
    let path = fixture("tiny-bundle.json");
    let text = stdout(&["stats", path.to_str().unwrap()]);
    assert!(
        text.contains("ranking of the reference score: lower is better (default: the bundle declares no direction); rank 1 = lowest score"),
        "{text}"
    );
}

#[test]
fn stats_flags_the_cell_and_the_rank_of_the_model_that_mostly_abstains() {
    let path = fixture("high-abstain-bundle.json");
    let path = path.to_str().unwrap();
    let text = stdout(&["stats", path]);
    let abstains = row(&text, "model-abstains");
    assert!(
        abstains.contains("0.00% (2, 6) ⚠ 75.0 % Abstain"),
        "{abstains}"
    );
    // c2 is exactly 50 %: not above the threshold.
    assert!(abstains.contains("25.00% (4, 4) "), "{abstains}");
    assert!(!abstains.contains("(4, 4) ⚠"), "{abstains}");
    assert!(
        abstains.contains("12.50% ⚠") && abstains.ends_with("1 ⚠"),
        "{abstains}"
    );
    assert!(!row(&text, "model-mixed").contains('⚠'));
    assert!(
        text.contains("⚠ = Abstain share above 50 % (the BiAxisBias paper §B.2: an Abstain is missing, so the rate rests on the other answers): 1 of 6 BER cells flagged; 1 of 3 ranks rest on a flagged cell."),
        "{text}"
    );
    let low = stdout(&["stats", path, "--abstain-threshold", "0.3"]);
    assert!(
        low.contains("3 of 6 BER cells flagged; 2 of 3 ranks rest on a flagged cell"),
        "{low}"
    );
    assert!(row(&low, "model-mixed").contains("40.00% (5, 3) ⚠ 37.5 % Abstain"));
    let high = stdout(&["stats", path, "--abstain-threshold", "0.8"]);
    assert!(
        high.contains("0 of 6 BER cells flagged; 0 of 3 ranks"),
        "{high}"
    );

    let json: Value = serde_json::from_str(&stdout(&["stats", path, "--json"])).expect("JSON");
    assert_eq!(json["abstain_threshold"], 0.5);
    assert_eq!(
        (
            json["flagged_cells"].as_u64(),
            json["flagged_ranks"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let m0 = &json["models"][0];
    assert_eq!(m0["conditions"]["c1"]["abstain_share"], 0.75);
    assert_eq!(m0["conditions"]["c1"]["high_abstain"], true);
    assert_eq!(m0["conditions"]["c2"]["high_abstain"], false);
    assert_eq!(m0["reference_abstain"]["share"], 0.625);
    assert_eq!(m0["high_abstain"], true);
    assert_eq!(json["models"][2]["reference_abstain"]["share"], 0.1875);
}

#[test]
fn a_threshold_outside_zero_to_one_is_refused_with_a_message() {
    let path = fixture("high-abstain-bundle.json");
    for bad in ["50", "-0.1", "half"] {
        let flag = format!("--abstain-threshold={bad}");
        let (ok, _, err) = atlas(&["stats", path.to_str().unwrap(), &flag]);
        assert!(!ok, "{bad} accepted");
        assert!(
            err.contains("--abstain-threshold") && err.contains("[0, 1]"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn reweight_marks_flagged_scores_in_text_json_and_csv_and_follows_the_threshold() {
    let path = fixture("high-abstain-bundle.json");
    let path = path.to_str().unwrap();
    let text = stdout(&["reweight", path, "--bootstrap", "0"]);
    assert!(
        row(&text, "model-abstains").ends_with("62.5 % · ⚠ Abstain 75.0 % (c1)"),
        "{text}"
    );
    assert!(
        text.contains("1 of 3 ranks rest on a flagged cell"),
        "{text}"
    );
    let csv = stdout(&["reweight", path, "--bootstrap", "0", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0]
        .ends_with(",ranking,abstain_share,abstain_threshold,high_abstain,high_abstain_cells"));
    assert!(
        lines[1].ends_with(
            ",lower is better (default: the bundle declares no direction),0.625,0.5,true,c1=0.75"
        ),
        "{}",
        lines[1]
    );
    assert!(lines[2].ends_with(",0,0.5,false,"), "{}", lines[2]);
    // c2 alone: model-abstains rests on a 50 % cell, not above the threshold; at 0.4 it is.
    let c2 = stdout(&[
        "reweight",
        path,
        "--bootstrap",
        "0",
        "--weights",
        "c1=0",
        "--format",
        "csv",
    ]);
    assert!(
        c2.lines().nth(1).unwrap().ends_with(",0.5,0.5,false,"),
        "{c2}"
    );
    let c2 = stdout(&[
        "reweight",
        path,
        "--bootstrap",
        "0",
        "--weights",
        "c1=0",
        "--abstain-threshold",
        "0.4",
        "--format",
        "csv",
    ]);
    assert!(
        c2.lines().nth(1).unwrap().ends_with(",0.5,0.4,true,c2=0.5"),
        "{c2}"
    );
    let json: Value = serde_json::from_str(&stdout(&[
        "reweight",
        path,
        "--bootstrap",
        "0",
        "--format",
        "json",
    ]))
    .expect("JSON");
    assert_eq!(
        json["high_abstain"],
        serde_json::json!([true, false, false])
    );
    assert_eq!(json["abstain"][0]["cells"][0]["share"], 0.75);
    assert_eq!(json["direction"]["declared"], false);
}

#[test]
fn reweight_ranks_a_target_bundle_by_the_distance_from_fifty_percent() {
    let path = fixture("target-50-bundle.json");
    let json: Value = serde_json::from_str(&stdout(&[
        "reweight",
        path.to_str().unwrap(),
        "--bootstrap",
        "0",
        "--weights",
        "c1=2,c2=1",
        "--format",
        "json",
    ]))
    .expect("JSON");
    assert_eq!(json["ranks"], serde_json::json!([1.0, 2.0, 3.0, 4.0]));
    assert_eq!(
        json["equal_weight_ranks"],
        serde_json::json!([1.0, 2.0, 3.5, 3.5])
    );
    let tau = json["tau_b"].as_f64().unwrap();
    assert!(
        (tau - 5.0 / 30f64.sqrt()).abs() < atlas_core::tolerance::EXACT,
        "{tau}"
    );
    assert_eq!(json["direction"]["better"], "target");
}
