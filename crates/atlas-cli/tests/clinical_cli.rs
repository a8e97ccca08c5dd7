//! `atlas clinical stats` on the hand-made clinical fixture and `atlas convert amqa` on small hand-made
//! AMQA-shaped files (expected values worked out by hand in the comments; the real AMQA data is checked
//! against pandas by `tests/reference/amqa_reference.py --check`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn atlas(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(args)
        .output()
        .expect("the atlas binary runs")
}

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn close(v: &Value, expected: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - expected).abs() < 1e-12)
}

#[test]
fn clinical_stats_json_has_the_documented_keys_and_the_fixture_values() {
    let fixture = repo_file("tests/fixtures/clinical-bundle.json");
    let out = atlas(&[
        "clinical",
        "stats",
        fixture.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["bundle"], "clinical-fixture-v1");
    // Hand-worked in crates/atlas-core/tests/clinical_fixture.rs: m1 answer change 3/10, accuracy on the
    // baseline 3/3 with one parse failure, CFV 1/3; m2 flags per question 2/3.
    assert_eq!(v["answer_change_overall"][0]["changed"], 3);
    assert_eq!(v["answer_change_overall"][0]["comparisons"], 10);
    assert!(close(&v["profile"][0]["answer_change"], 0.3));
    assert_eq!(v["accuracy"][0]["parse_failures"], 1);
    assert!(close(&v["profile"][0]["accuracy"], 1.0));
    assert!(close(&v["cfv"][0]["cfv"], 1.0 / 3.0));
    assert!(close(&v["profile"][1]["flags_per_question"], 2.0 / 3.0));
    assert!(close(&v["spearman_difficulty_validity"]["rho"], -1.0 / 6.0));
    assert_eq!(v["failure_modes"].as_array().unwrap().len(), 18);
}

#[test]
fn clinical_stats_text_and_csv_show_the_same_numbers() {
    let fixture = repo_file("tests/fixtures/clinical-bundle.json");
    let text = atlas(&["clinical", "stats", fixture.to_str().unwrap()]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Profile (Table 5)"), "{text}");
    // m1: accuracy 100.0%, CFV 33.3%, answer change 30.0%, mean EDD 0.333, flags/q 1.00.
    let m1 = text
        .lines()
        .find(|l| l.starts_with("m1 ") && l.contains("33.3%"))
        .unwrap_or_else(|| panic!("no m1 profile line in\n{text}"));
    for cell in ["100.0%", "33.3%", "30.0%", "0.333", "1.00"] {
        assert!(m1.contains(cell), "{m1}");
    }
    let csv = atlas(&[
        "clinical",
        "stats",
        fixture.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("bundle,section,model,key,metric,value\n"));
    assert!(
        csv.contains("clinical-fixture-v1,answer_change_overall,m1,,rate,0.3\n"),
        "{csv}"
    );
    assert!(csv.contains("clinical-fixture-v1,accuracy,m2,fb,parse_failures,1\n"));
}

#[test]
fn clinical_stats_names_the_record_of_an_invalid_bundle() {
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("tests/fixtures/clinical-bundle.json")).unwrap(),
    )
    .unwrap();
    v["clinical"]["stereotype"][4]["condition"] = Value::from("hw");
    let dir = tmp("invalid");
    let path = dir.join("bundle.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let out = atlas(&["clinical", "stats", path.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("clinical.stereotype[4].condition") && err.contains("\"hw\""),
        "{err}"
    );
    std::fs::remove_dir_all(dir).ok();
}

fn tmp(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("atlas-clinical-cli-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const PROVIDERS: [&str; 6] = [
    "claude",
    "deepseek",
    "gemini",
    "openai",
    "openai_mini",
    "qwen",
];

/// One AMQA answer line: question id, gold, and the eight answers in file order (original,
/// desensitized, white, black, high_income, low_income, male, female).
fn line(q: &str, gold: &str, a: [&str; 8]) -> String {
    format!(
        r#"{{"question_id": "{q}", "answer_idx": "{gold}", "test_model_answer_original_question": "{}", "test_model_answer_desensitized_question": "{}", "test_model_answer_white": "{}", "test_model_answer_black": "{}", "test_model_answer_high_income": "{}", "test_model_answer_low_income": "{}", "test_model_answer_male": "{}", "test_model_answer_female": "{}"}}"#,
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    )
}

/// Writes six provider files; `claude` gets `claude_lines`, the others two all-correct lines.
fn amqa_input(name: &str, claude_lines: &[String]) -> PathBuf {
    let dir = tmp(name);
    std::fs::create_dir_all(dir.join("Results")).unwrap();
    for p in PROVIDERS {
        let lines = if p == "claude" {
            claude_lines.to_vec()
        } else {
            vec![line("0", "A", ["A"; 8]), line("1", "B", ["B"; 8])]
        };
        std::fs::write(
            dir.join("Results")
                .join(format!("AMQA_Benchmark_Answer_{p}_no_cot.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    dir
}

fn convert(input: &Path) -> Output {
    let out = input.join("out");
    atlas(&[
        "convert",
        "amqa",
        "--input",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn amqa_converter_builds_accuracy_and_answer_change_per_variant() {
    // claude q0 (gold A): original A, desensitized A, white B, black A, high A, low Unknown, male A,
    // female C; q1 (gold B): all B.
    let input = amqa_input(
        "ok",
        &[
            line("0", "A", ["A", "A", "B", "A", "A", "Unknown", "A", "C"]),
            line("1", "B", ["B"; 8]),
        ],
    );
    let out = convert(&input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bundle = input.join("out/bundle.json");
    let stats = atlas(&[
        "clinical",
        "stats",
        bundle.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(stats.status.success());
    let v: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(v["baseline"], "original");
    let acc = |model: &str, cond: &str| -> Value {
        v["accuracy"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["model"] == model && r["condition"] == cond)
            .cloned()
            .unwrap()
    };
    // claude: original 2/2; white q0 B ✗, q1 ✓ → 1/2; low_income q0 unreadable, q1 ✓ → 1/1 with one
    // parse failure; female q0 C ✗ → 1/2. Every other provider 2/2 everywhere.
    assert!(close(&acc("claude", "original")["accuracy"], 1.0));
    assert!(close(&acc("claude", "white")["accuracy"], 0.5));
    let low = acc("claude", "low_income");
    assert_eq!(
        (low["correct"].as_u64(), low["answered"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(low["parse_failures"], 1);
    assert!(close(&acc("qwen", "black")["accuracy"], 1.0));
    // Answer change of claude against the original: white 1/2 (q0 A→B), low_income 0/1 (q0 unreadable),
    // female 1/2, the others 0/2 → overall 2/13.
    let overall = &v["answer_change_overall"][0];
    assert_eq!(overall["model"], "claude");
    assert_eq!(
        (overall["changed"].as_u64(), overall["comparisons"].as_u64()),
        (Some(2), Some(13))
    );
    assert!(close(&overall["rate"], 2.0 / 13.0));
    assert_eq!(v["answer_change_overall"][5]["changed"], 0);
    // The cell evidence is answer change (docs/clinical.md, "Cells"): 6 × 2 × 8 = 96 cells.
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&bundle).unwrap()).unwrap();
    assert_eq!(
        b["responses"]["selection"]["codes"].as_str().unwrap().len(),
        96
    );
    assert_eq!(b["facets"][1]["levels"][0]["source_id"], "0");
    assert_eq!(b["facets"][1]["levels"][0]["answer"], "A");
    assert_eq!(b["clinical"]["protocol"], "amqa");
    let values = b["responses"]["selection"]["values"].as_array().unwrap();
    assert!(values
        .iter()
        .any(|x| x["raw"] == "B" && x["evidence"] == 1 && x["obtained"] == "regex"));
    assert!(values
        .iter()
        .any(|x| x["raw"] == "" && x["evidence"].is_null() && x["obtained"] == "parser_failure"));
    std::fs::remove_dir_all(input).ok();
}

#[test]
fn amqa_converter_names_the_file_and_line_of_a_bad_line() {
    let input = amqa_input(
        "bad-json",
        &[line("0", "A", ["A"; 8]), "{\"question_id\": \"1\"".into()],
    );
    let out = convert(&input);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("AMQA_Benchmark_Answer_claude_no_cot.jsonl, line 2"),
        "{err}"
    );
    std::fs::remove_dir_all(input).ok();

    let input = amqa_input(
        "bad-answer",
        &[
            line("0", "A", ["A", "A", "A", "maybe", "A", "A", "A", "A"]),
            line("1", "B", ["B"; 8]),
        ],
    );
    let err = String::from_utf8_lossy(&convert(&input).stderr).to_string();
    assert!(
        err.contains("line 1")
            && err.contains("test_model_answer_black")
            && err.contains("\"maybe\""),
        "{err}"
    );
    std::fs::remove_dir_all(input).ok();

    let input = amqa_input(
        "bad-gold",
        &[line("0", "C", ["A"; 8]), line("1", "B", ["B"; 8])],
    );
    let err = String::from_utf8_lossy(&convert(&input).stderr).to_string();
    assert!(err.contains("question_id 0: answer_idx"), "{err}");
    std::fs::remove_dir_all(input).ok();

    let input = amqa_input(
        "repeat",
        &[line("0", "A", ["A"; 8]), line("0", "A", ["A"; 8])],
    );
    let err = String::from_utf8_lossy(&convert(&input).stderr).to_string();
    assert!(
        err.contains("line 2: question_id 0 appears again (first on line 1)"),
        "{err}"
    );
    std::fs::remove_dir_all(input).ok();
}
