//! `atlas clinical stats` on the hand-made clinical fixture and `atlas convert amqa` on small hand-made
//! AMQA-shaped files (expected values worked out by hand in the comments; the real AMQA data is checked
//! against pandas by `tests/reference/amqa_reference.py --check`); `atlas pilot clinical`'s estimate and
//! hard cap against a canned server.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::Ordering;

use common::canned_server;

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
    v.as_f64()
        .is_some_and(|x| (x - expected).abs() < atlas_core::tolerance::EXACT)
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
    // Counted wrong, m1's baseline parse failure joins the denominator: 3/4 beside 3/3.
    assert_eq!(v["accuracy"][0]["asked"], 4);
    assert!(close(&v["accuracy"][0]["accuracy_unreadable_wrong"], 0.75));
    assert_eq!(
        (&v["profile"][0]["answered"], &v["profile"][0]["asked"]),
        (&Value::from(3), &Value::from(4))
    );
    assert!(close(&v["profile"][0]["accuracy_unreadable_wrong"], 0.75));
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
    assert!(
        text.contains("Table 5 layout — model-level summary"),
        "{text}"
    );
    // m1 in the Table 5 layout of the app: accuracy 100.00, CFV 1/3 = 33.33, answer change 3/10 =
    // 30.00, mean EDD 0.333, flags/q 1.00, accuracy with unreadable answers counted wrong 3/4 = 75.00.
    let m1 = text
        .lines()
        .find(|l| l.trim_start().starts_with("m1 ") && l.contains("33.33"))
        .unwrap_or_else(|| panic!("no m1 profile line in\n{text}"));
    for cell in [
        " 100.00 ", " 33.33 ", " 30.00 ", " 0.333 ", " 1.00 ", " 75.00 ",
    ] {
        assert!(m1.contains(cell), "{m1}");
    }
    assert!(
        text.contains("Accuracy, unreadable counted wrong (%)"),
        "{text}"
    );
    assert!(
        text.contains("Accuracy per model × variant with unreadable answers counted wrong"),
        "{text}"
    );
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
    assert!(csv.contains("clinical-fixture-v1,accuracy,m2,fb,accuracy_unreadable_wrong,0.25\n"));
    assert!(csv.contains("clinical-fixture-v1,accuracy,m2,fb,asked,4\n"));
    assert!(csv.contains("clinical-fixture-v1,profile,m1,,accuracy_unreadable_wrong,0.75\n"));
    assert!(csv.contains("clinical-fixture-v1,profile,m1,,answered,3\n"));
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
    // Counted wrong as AMQA counts it, the "Unknown" answer joins the denominator: 1/2.
    assert_eq!(low["asked"], 2);
    assert!(close(&low["accuracy_unreadable_wrong"], 0.5));
    assert!(close(
        &acc("claude", "white")["accuracy_unreadable_wrong"],
        0.5
    ));
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

/// The all-MiniLM-L6-v2 weights, when installed (`scripts/setup.sh --test`).
fn minilm_dir() -> Option<PathBuf> {
    atlas_embed::default_model_dir().filter(|d| d.is_dir())
}

/// `atlas clinical embed` on the clinical fixture with nine stored explanations — five inline, four
/// in a text shard next to the bundle, in cells 0, 1, 2, 3, 4 | 18, 24, 26, 28 — whose texts are the
/// edge cases 257–265 of the committed sentence-transformers reference
/// (`tests/reference/clinical/minilm_reference.{json,npy}`, made by
/// `tests/reference/minilm_reference.py`; the command and versions are in the JSON): every stored
/// row must equal the reference row of its text within 1e-5, in cell order.
#[test]
fn clinical_embed_stores_the_sentence_transformers_embeddings_of_inline_and_shard_texts() {
    let Some(model_dir) = minilm_dir() else {
        eprintln!(
            "SKIPPED: the all-MiniLM-L6-v2 weights are not installed; run scripts/setup.sh --test"
        );
        return;
    };
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("tests/reference/clinical/minilm_reference.json"))
            .expect("reference JSON"),
    )
    .expect("reference JSON parses");
    let npy = std::fs::read(repo_file("tests/reference/clinical/minilm_reference.npy"))
        .expect("reference .npy");
    let (rows, dim, reference) = atlas_embed::read_npy_f32(&npy).expect("reference .npy reads");
    assert_eq!((rows, dim), (266, 384));
    let texts: Vec<(usize, String)> = (257..=265)
        .map(|r| {
            let row = &meta["rows"][r];
            assert_eq!(row["row"].as_u64(), Some(r as u64));
            (r, row["text"].as_str().expect("edge text").to_string())
        })
        .collect();
    let cells: [u64; 9] = [0, 1, 2, 3, 4, 18, 24, 26, 28];

    let dir = tmp("embed");
    let mut bundle: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("tests/fixtures/clinical-bundle.json")).unwrap(),
    )
    .unwrap();
    bundle["clinical"]["embeddings"] = Value::Null;
    let id = bundle["metadata"]["id"].as_str().unwrap().to_string();
    let shard = serde_json::json!({
        "format": "audit-atlas-text-shard", "version": 1, "bundle": id, "field": "rationale",
        "cells": &cells[5..], "texts": texts[5..].iter().map(|(_, t)| t).collect::<Vec<_>>(),
    });
    std::fs::write(dir.join("shard-0.json"), shard.to_string()).unwrap();
    bundle["texts"] = serde_json::json!({"rationale": {
        "description": "explanations",
        "inline": {"cells": &cells[..5], "texts": texts[..5].iter().map(|(_, t)| t).collect::<Vec<_>>()},
        "shards": [{"path": "shard-0.json", "count": 4, "first_cell": 18, "last_cell": 28}],
    }});
    let input = dir.join("bundle.json");
    std::fs::write(&input, bundle.to_string()).unwrap();
    let output = dir.join("embedded.json");
    let model_arg = model_dir.to_string_lossy().into_owned();
    let out = atlas(&[
        "clinical",
        "embed",
        input.to_str().unwrap(),
        "--out",
        output.to_str().unwrap(),
        "--embed-dir",
        &model_arg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let emb: atlas_core::clinical::Embeddings =
        serde_json::from_value(written["clinical"]["embeddings"].clone()).expect("embeddings");
    assert_eq!(emb.model, atlas_embed::MODEL_NAME);
    assert_eq!(emb.cells, cells.to_vec());
    let vectors = emb.decode().expect("embeddings decode");
    for ((r, text), v) in texts.iter().zip(&vectors) {
        let want = &reference[r * dim..(r + 1) * dim];
        let worst = v
            .iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            worst < atlas_core::tolerance::FLOAT32_EMBEDDING as f32,
            "reference row {r} ({text:?}): max |Δ| {worst}"
        );
    }
    // Everything else is kept: the bundle without its embeddings is the input.
    let mut rest = written.clone();
    rest["clinical"]["embeddings"] = Value::Null;
    assert_eq!(rest, bundle);

    // Embeddings already there: refused without --replace, naming the field.
    let again = atlas(&[
        "clinical",
        "embed",
        output.to_str().unwrap(),
        "--out",
        dir.join("again.json").to_str().unwrap(),
        "--embed-dir",
        &model_arg,
    ]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("`clinical.embeddings` is already there")
    );
}

#[test]
fn clinical_embed_refuses_a_bundle_without_a_clinical_object_before_loading_the_model() {
    let dir = tmp("embed-plain");
    let out = atlas(&[
        "clinical",
        "embed",
        repo_file("tests/fixtures/tiny-bundle.json")
            .to_str()
            .unwrap(),
        "--out",
        dir.join("x.json").to_str().unwrap(),
        "--embed-dir",
        dir.join("no-weights-here").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a clinical bundle"), "{err}");
    assert!(!dir.join("x.json").exists());
}

/// Two MedQA-shaped questions (the fields of `phrases_no_exclude_test.jsonl`).
const TWO_MEDQA_ITEMS: &str = r#"{"question": "A 45-year-old man has chest pain. Which is the most likely diagnosis?", "answer": "Angina", "options": {"A": "Angina", "B": "Reflux", "C": "Costochondritis", "D": "Pneumothorax"}, "meta_info": "step1", "answer_idx": "A"}
{"question": "A 30-year-old woman has a headache. Which is the most appropriate next step?", "answer": "Reassurance", "options": {"A": "CT scan", "B": "Reassurance", "C": "Lumbar puncture", "D": "MRI"}, "meta_info": "step2&3", "answer_idx": "B"}
"#;

/// Every call gets an answer in the answer prompt's fields, so the counterfactual is unusable.
fn answer_a(_: &str) -> &'static str {
    "REASONING: typical presentation\nANSWER: A\nCONFIDENCE: 80"
}

#[test]
fn pilot_clinical_refuses_a_plan_above_the_call_or_cost_cap_before_any_call_and_runs_one_within_it()
{
    let (url, posts, _) = canned_server(answer_a);
    let dir = tmp("cap");
    let items = dir.join("medqa.jsonl");
    std::fs::write(&items, TWO_MEDQA_ITEMS).unwrap();
    let state = dir.join("state");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "pilot",
            "clinical",
            "--items",
            items.to_str().unwrap(),
            "--n",
            "2",
            "--base-url",
            &url,
            "--model",
            "tiny-model",
            "--max-tokens",
            "16",
            "--state",
            state.to_str().unwrap(),
            "--timeout-s",
            "10",
        ];
        args.extend_from_slice(extra);
        atlas(&args)
    };
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    // 1 model × 2 questions × 16 = 32 calls: 2 × (7 answers + counterfactual + re-answer) = 18 audited,
    // 2 × (plausibility + 6 stereotype) = 14 judge calls.
    let over = run(&["--max-calls", "31"]);
    assert!(!over.status.success());
    assert!(
        text(&over).contains("32 calls (18 audited + 14 judge calls), above the cap of 31"),
        "{}",
        text(&over)
    );
    assert_eq!(posts.load(Ordering::SeqCst), 0, "no call was sent");
    assert!(!state.join("plan.json").exists(), "no run was started");

    // Priced at 1,000,000 per 1M tokens: each token costs 1, so 32 calls cost far more than 0.5.
    let costly = run(&[
        "--price-in",
        "1000000",
        "--price-out",
        "1000000",
        "--max-cost",
        "0.5",
    ]);
    assert!(!costly.status.success());
    assert!(
        text(&costly).contains("above the cap of 0.5000"),
        "{}",
        text(&costly)
    );
    assert_eq!(posts.load(Ordering::SeqCst), 0, "no call was sent");

    let ok = run(&["--max-calls", "32"]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert!(
        text(&ok).contains("estimate: 18 audited call(s) + 14 judge call(s) = 32 (cap 32)"),
        "{}",
        text(&ok)
    );
    // Output at most: audited 2 × (7 × 16 + 32 + 16) = 320 (the counterfactual gets 2 × 16), judges
    // 2 × 7 × 16 = 224.
    assert!(
        text(&ok).contains("at most 320 out; judges") && text(&ok).contains("at most 224 out"),
        "{}",
        text(&ok)
    );
    // The counterfactual reply has no CHANGE / MODIFIED_QUESTION: each question's re-answer and
    // plausibility call are skipped, 2 × 2 = 4; the other 28 are answered (the stereotype judges'
    // unreadable replies are answered calls with a parse failure).
    assert!(
        text(&ok).contains("32 calls: 28 answered, 0 failed, 4 skipped"),
        "{}",
        text(&ok)
    );
    // 28 answered calls plus the canned server's first 429.
    assert_eq!(posts.load(Ordering::SeqCst), 29);
}
