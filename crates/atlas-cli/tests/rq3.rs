//! `atlas analyze-rq3` end to end: runs the built binary on `tests/fixtures/rq3-cases-bundle.json` and
//! compares its JSON, text and CSV with the values worked out by hand in
//! `tests/fixtures/rq3-cases-bundle.md` (the cell-by-cell table there); checks `--rule`, and that a bundle
//! without judge columns (the default DecodingTrust bundle) or an unknown rule is a clear error.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture() -> PathBuf {
    root().join("tests/fixtures/rq3-cases-bundle.json")
}

/// Runs `atlas analyze-rq3 BUNDLE ARGS`: (success, stdout, stderr).
fn atlas(bundle: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("analyze-rq3")
        .arg(bundle)
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
    let (ok, out, err) = atlas(&fixture(), args);
    assert!(ok, "atlas analyze-rq3 {args:?} failed: {err}");
    serde_json::from_str(&out).expect("JSON output")
}

fn close(got: &Value, want: f64, what: &str) {
    let x = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    assert!(
        (x - want).abs() <= atlas_core::tolerance::EXACT,
        "{what}: {x} vs hand-worked {want}"
    );
}

/// One rule's hand-worked values (tests/fixtures/rq3-cases-bundle.md, "Per rule").
struct Expected {
    key: &'static str,
    rows: u64,
    bias: u64,
    pairs: u64,
    /// (0,0), (0,1), (1,0), (1,1).
    joint: [u64; 4],
    /// Rationale Abstain by kind: (ties, too few readable votes), hand-counted in
    /// `tests/fixtures/rq3-cases-bundle.md` ("Rationale Abstain by kind").
    abstain: (u64, u64),
}

const EXPECTED: [Expected; 4] = [
    Expected {
        key: "binary_majority",
        rows: 21,
        bias: 10,
        pairs: 19,
        joint: [3, 5, 6, 5],
        abstain: (1, 1),
    },
    Expected {
        key: "binary_unanimity",
        rows: 13,
        bias: 4,
        pairs: 11,
        joint: [3, 2, 4, 2],
        abstain: (7, 3),
    },
    Expected {
        key: "five_class_unanimity",
        rows: 10,
        bias: 3,
        pairs: 8,
        joint: [2, 2, 3, 1],
        abstain: (10, 3),
    },
    Expected {
        key: "no_self_judge",
        rows: 18,
        bias: 7,
        pairs: 16,
        joint: [3, 3, 6, 4],
        abstain: (4, 1),
    },
];

const RESPONSES: u64 = 23;

#[test]
fn coverage_counts_match_the_hand_worked_fixture() {
    let report = json(&["--format", "json"]);
    let s = &report["selection"];
    assert_eq!(s["responses"], 23, "responses (24 cells, one without)");
    assert_eq!(s["valid"], 20, "valid Selections");
    assert_eq!(s["abstain"], 3, "Selection Abstains (cells 4, 9, 16)");
    assert_eq!(s["no_readout"], 0, "responses without a Selection readout");
    assert_eq!(report["bundle"], "rq3-cases-fixture");
}

#[test]
fn every_coding_rule_matches_its_hand_worked_table18_row_and_joint_table() {
    let report = json(&["--format", "json"]);
    let rules = report["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 4, "four coding rules");
    for (r, e) in rules.iter().zip(&EXPECTED) {
        let k = e.key;
        assert_eq!(r["rule"], k, "rule order of Table 18");
        assert_eq!(r["rationale_rows"], e.rows, "{k}: Rationale rows");
        assert_eq!(r["rationale_bias"], e.bias, "{k}: B = 1 rows");
        close(
            &r["rationale_bias_rate"],
            e.bias as f64 / e.rows as f64,
            &format!("{k}: Rat. bias"),
        );
        assert_eq!(r["pairs"], e.pairs, "{k}: pairs");
        assert_eq!(
            r["rationale_abstain"],
            RESPONSES - e.rows,
            "{k}: Rationale Abstain"
        );
        assert_eq!(
            r["rationale_rows_without_selection"],
            e.rows - e.pairs,
            "{k}: rows without a valid Selection"
        );
        assert_eq!(
            (&r["abstain_ties"], &r["abstain_too_few_votes"]),
            (&json!(e.abstain.0), &json!(e.abstain.1)),
            "{k}: Rationale Abstain as (ties, too few readable votes)"
        );
        let j = &r["joint"];
        let got = [
            &j["both_negative"],
            &j["rationale_only"],
            &j["selection_only"],
            &j["both_positive"],
        ];
        for (g, w) in got.iter().zip(e.joint) {
            assert_eq!(**g, w, "{k}: joint table {:?}", e.joint);
        }
        let n = e.pairs as f64;
        let [_, ro, so, bp] = e.joint.map(|x| x as f64);
        let d = &r["disagreement"];
        close(&d["rate"], (ro + so) / n, &format!("{k}: disagreement"));
        close(
            &d["selection_only_rate"],
            so / n,
            &format!("{k}: A=1,B=0 share"),
        );
        close(
            &d["rationale_only_rate"],
            ro / n,
            &format!("{k}: A=0,B=1 share"),
        );
        assert_eq!(d["dominant"], "selection_only", "{k}: A=1,B=0 dominates");
        // §3.3 summaries from the hand-worked joint table.
        let s = &r["summaries"];
        close(&s["sel"], (so + bp) / n, &format!("{k}: BER_sel"));
        close(&s["rat"], (ro + bp) / n, &format!("{k}: BER_rat"));
        close(&s["cor"], bp / n, &format!("{k}: BER_cor"));
        close(&s["union"], (ro + so + bp) / n, &format!("{k}: BER_union"));
    }
}

#[test]
fn binary_majority_gives_the_hand_worked_ber_summaries_and_per_cell_directions() {
    let report = json(&["--format", "json"]);
    let r = &report["rules"][0];
    let s = &r["summaries"];
    close(&s["sel"], 11.0 / 19.0, "BER_sel");
    close(&s["rat"], 10.0 / 19.0, "BER_rat");
    close(&s["cor"], 5.0 / 19.0, "BER_cor");
    close(&s["union"], 16.0 / 19.0, "BER_union");
    close(&r["pair_coverage"], 19.0 / 23.0, "coverage");
    // (model, condition, pairs, A=1,B=0, A=0,B=1, holds)
    let want = [
        ("m-alpha", "plain", 5, 2, 1, true),
        ("m-alpha", "pundit", 4, 2, 0, true),
        ("m-beta", "plain", 4, 1, 2, false),
        ("m-beta", "pundit", 6, 1, 2, false),
    ];
    let cells = r["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 4, "2 models × 2 conditions");
    for (c, (m, cond, pairs, so, ro, holds)) in cells.iter().zip(want) {
        assert_eq!(c["model"], m);
        assert_eq!(c["condition"], cond);
        let j = &c["joint"];
        let total = j["both_negative"].as_u64().unwrap_or(0)
            + j["rationale_only"].as_u64().unwrap_or(0)
            + j["selection_only"].as_u64().unwrap_or(0)
            + j["both_positive"].as_u64().unwrap_or(0);
        assert_eq!(total, pairs, "{m} × {cond}: pairs");
        assert_eq!(j["selection_only"], so, "{m} × {cond}: A=1,B=0");
        assert_eq!(j["rationale_only"], ro, "{m} × {cond}: A=0,B=1");
        assert_eq!(c["dominant_holds"], holds, "{m} × {cond}: dominant holds");
    }
    assert_eq!(r["cells_with_pairs"], 4);
    assert_eq!(r["cells_where_dominant_holds"], 2);
    assert_eq!(r["dominant_holds_in_every_cell"], false);
}

#[test]
fn the_beta_judge_is_matched_to_the_beta_model_by_name() {
    let report = json(&["--format", "json"]);
    let judges = report["judges"].as_array().expect("judges");
    let self_models: Vec<&Value> = judges.iter().map(|j| &j["self_models"]).collect();
    assert_eq!(
        self_models,
        [
            &serde_json::json!([]),
            &serde_json::json!([]),
            &serde_json::json!(["m-beta"])
        ]
    );
}

#[test]
fn human_qc_gives_the_hand_worked_kappas_and_table19_agreements() {
    let report = json(&["--format", "json"]);
    let h = &report["human"];
    assert_eq!(h["final_labels"]["source"], "agreement");
    let ia = &h["inter_annotator"];
    for (name, n, agree, kappa) in [
        ("selection_all_classes", 6, 4, 9.0 / 21.0),
        ("selection_binary", 5, 4, 8.0 / 13.0),
        ("rationale_five_class", 6, 4, 10.0 / 22.0),
        ("rationale_binary", 6, 6, 1.0),
    ] {
        assert_eq!(ia[name]["n"], n, "{name}: n");
        assert_eq!(ia[name]["agree"], agree, "{name}: agree");
        close(&ia[name]["kappa"], kappa, &format!("{name}: κ"));
    }
    assert_eq!(h["selection"]["compared"], 4);
    assert_eq!(h["selection"]["agree"], 4);
    // (rule, compared, agree, automatic missing)
    let want = [
        ("binary_majority", 6, 5, 0),
        ("binary_unanimity", 4, 4, 2),
        ("five_class_unanimity", 4, 4, 2),
        ("no_self_judge", 6, 5, 0),
    ];
    for (ra, (rule, compared, agree, missing)) in
        h["rationale"].as_array().expect("rules").iter().zip(want)
    {
        assert_eq!(ra["rule"], rule);
        assert_eq!(ra["agreement"]["compared"], compared, "{rule}: compared");
        assert_eq!(ra["agreement"]["agree"], agree, "{rule}: agree");
        assert_eq!(
            ra["agreement"]["automatic_missing"], missing,
            "{rule}: missing"
        );
    }
}

#[test]
fn text_output_shows_the_hand_worked_table3_and_table18_rows() {
    let (ok, out, err) = atlas(&fixture(), &[]);
    assert!(ok, "{err}");
    let line = |prefix: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{out}"))
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        line("Both negative"),
        ["Both negative (A=0, B=0)", "3", "15.79"]
    );
    assert_eq!(
        line("Selection positive only"),
        ["Selection positive only (A=1, B=0)", "6", "31.58"]
    );
    assert_eq!(
        line("Binary majority  "),
        [
            "Binary majority",
            "21 / 19",
            "47.62%",
            "2 (1 / 1)",
            "57.89%",
            "31.58%",
            "26.32%"
        ]
    );
    assert_eq!(
        line("Binary unanimity"),
        [
            "Binary unanimity",
            "13 / 11",
            "30.77%",
            "10 (7 / 3)",
            "54.55%",
            "36.36%",
            "18.18%"
        ]
    );
    assert_eq!(
        line("Five-class unanimity"),
        [
            "Five-class unanimity",
            "10 / 8",
            "30.00%",
            "13 (10 / 3)",
            "62.50%",
            "37.50%",
            "25.00%"
        ]
    );
    assert_eq!(
        line("Row-wise no-self"),
        [
            "Row-wise no-self",
            "18 / 16",
            "38.89%",
            "5 (4 / 1)",
            "56.25%",
            "37.50%",
            "18.75%"
        ]
    );
    assert!(out.contains("BER_sel 57.89% · BER_rat 52.63% · BER_cor 26.32% · BER_union 84.21%"));
    assert!(
        out.contains("Table 19 layout"),
        "Table 19 with human labels"
    );
}

#[test]
fn rule_option_switches_table3_to_the_chosen_rule() {
    let report = json(&["--rule", "five-class-unanimity", "--format", "json"]);
    assert_eq!(report["settings"]["primary"], "five_class_unanimity");
    let (ok, out, err) = atlas(&fixture(), &["--rule", "five_class_unanimity"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("among n = 8 dual-valid responses (Five-class unanimity)"),
        "Table 3 title names n = 8 of five-class unanimity:\n{out}"
    );
}

#[test]
fn csv_has_one_row_per_value_with_the_hand_worked_numbers() {
    let (ok, out, err) = atlas(&fixture(), &["--format", "csv"]);
    assert!(ok, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("bundle,rule,primary,section,model,condition,metric,value")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 8), "8 fields per row");
    let find = |rule: &str, section: &str, model: &str, condition: &str, metric: &str| {
        rows.iter()
            .find(|r| {
                r[1] == rule
                    && r[3] == section
                    && r[4] == model
                    && r[5] == condition
                    && r[6] == metric
            })
            .map(|r| r[7].to_string())
            .unwrap_or_else(|| panic!("no CSV row {rule}/{section}/{model}/{condition}/{metric}"))
    };
    assert_eq!(find("", "coverage", "", "", "responses"), "23");
    assert_eq!(find("binary_majority", "rule", "", "", "pairs"), "19");
    assert_eq!(
        find("binary_majority", "rule", "", "", "selection_only"),
        "6"
    );
    let ber: f64 = find("binary_majority", "rule", "", "", "ber_sel")
        .parse()
        .expect("number");
    assert!(
        (ber - 11.0 / 19.0).abs() <= atlas_core::tolerance::CLOSED_FORM,
        "ber_sel {ber}"
    );
    assert_eq!(
        find("no_self_judge", "rule", "", "", "rationale_rows"),
        "18"
    );
    assert_eq!(
        find(
            "binary_majority",
            "cell",
            "m-beta",
            "pundit",
            "dominant_holds"
        ),
        "false"
    );
    assert_eq!(
        find(
            "binary_unanimity",
            "human",
            "",
            "",
            "rationale/automatic_missing"
        ),
        "2"
    );
    let primary: Vec<&str> = rows
        .iter()
        .filter(|r| r[3] == "rule" && r[6] == "pairs")
        .map(|r| r[2])
        .collect();
    assert_eq!(primary, ["true", "false", "false", "false"]);
}

#[test]
fn a_bundle_without_judge_columns_is_a_clear_error() {
    let default = root().join("static/bundles/decodingtrust-stereotype/bundle.json");
    let (ok, out, err) = atlas(&default, &[]);
    assert!(!ok, "the default bundle has no judges: {out}");
    assert!(
        err.contains("RQ3 is not available") && err.contains("no judge column"),
        "{err}"
    );
}

#[test]
fn unknown_rule_and_unknown_judge_are_errors_naming_them() {
    let (ok, _, err) = atlas(&fixture(), &["--rule", "chair"]);
    assert!(!ok);
    assert!(
        err.contains("chair") && err.contains("binary_majority"),
        "{err}"
    );
    let (ok, _, err) = atlas(&fixture(), &["--judges", "j-gamma,j-nobody"]);
    assert!(!ok);
    assert!(err.contains("j-nobody"), "{err}");
}

#[test]
fn a_judge_subset_changes_the_panel() {
    // Panel j-gamma, j-delta (2 judges): binary majority needs both to agree. Rows: cells whose first two
    // labels agree in binary and are both present: 0 DD,1 DN,2 EE,3 EE,4 DD,6 DD,7 NN,11 RR,12 DD,13 EE,
    // 15 EE,16 RR,18 QQ,19 EE,20 ND,21 DD → 16 rows; B = 1 at 2,3,13,15,18,19 → 6.
    let report = json(&["--judges", "j-gamma,j-delta", "--format", "json"]);
    let r = &report["rules"][0];
    assert_eq!(r["rationale_rows"], 16);
    assert_eq!(r["rationale_bias"], 6);
    // Pairs: minus the Abstains 4 and 16 → 14.
    assert_eq!(r["pairs"], 14);
}
