//! The lm-evaluation-harness reader (`atlas_import::logs::lmeval`): the committed real fixture
//! (tests/fixtures/logs/lm-eval/, written by lm_eval 0.4.13; PROVENANCE.md) against the independent
//! pandas reading of tests/import/logs_reference.py (`tests/import/expected_logs.json`, written by
//! `~/.cache/audit-atlas/venv/bin/python tests/import/logs_reference.py`), and malformed variants
//! that must give named errors, never a panic.

use atlas_core::likelihood::{stereotype_preference, Basis};
use atlas_core::Audit;
use atlas_import::logs::{self, LogFormat, LogInput, LogOptions};
use serde_json::Value;

fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture_files() -> Vec<(String, Vec<u8>)> {
    let dir = repo().join("tests/fixtures/logs/lm-eval");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            (n.starts_with("samples_") && n.ends_with(".jsonl"))
                || (n.starts_with("results_") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("read")))
        .collect()
}

fn read(
    files: &[(String, Vec<u8>)],
    options: &LogOptions,
) -> Result<atlas_import::Imported, atlas_import::ImportError> {
    let inputs: Vec<LogInput<'_>> = files
        .iter()
        .map(|(name, bytes)| LogInput { name, bytes })
        .collect();
    logs::read(LogFormat::LmEval, &inputs, options)
}

fn expected() -> Value {
    let text = std::fs::read_to_string(repo().join("tests/import/expected_logs.json"))
        .expect("expected_logs.json");
    serde_json::from_str(&text).expect("json")
}

#[test]
fn every_fixture_file_is_detected_as_lm_eval() {
    for (name, bytes) in fixture_files() {
        let head = &bytes[..bytes.len().min(logs::DETECT_BYTES)];
        assert_eq!(
            LogFormat::detect(&name, head),
            Some(LogFormat::LmEval),
            "{name}"
        );
    }
}

#[test]
fn the_real_fixture_imports_with_the_pandas_counts() {
    let files = fixture_files();
    assert!(files.len() >= 3, "samples of two tasks and a results file");
    let imported = read(&files, &LogOptions::default()).expect("imports");
    let want = expected();
    let b = &want["bundle"];
    let r = &imported.report;
    let levels: Vec<(String, usize)> = r.levels.clone();
    for (facet, n) in &levels {
        assert_eq!(
            Some(*n as u64),
            b["levels"][facet].as_u64(),
            "levels of {facet}"
        );
    }
    for (key, got) in [
        ("cells", r.cells),
        ("responses", r.responses),
        ("no_response", r.no_response),
        ("evidence_1", r.evidence_1),
        ("evidence_0", r.evidence_0),
        ("abstain", r.abstain),
        ("likelihood_readouts", r.likelihood_readouts),
        ("likelihood_only", r.likelihood_only),
    ] {
        assert_eq!(Some(got), b[key].as_u64(), "{key}");
    }
    assert_eq!(
        (r.records_skipped, r.values_skipped, r.duplicates),
        (0, 0, 0)
    );
    let models = imported.bundle.facets[0]
        .levels
        .iter()
        .map(|l| l.id.clone())
        .collect::<Vec<_>>();
    assert_eq!(serde_json::json!(models), want["models"]);
}

#[test]
fn crows_preference_from_the_log_equals_the_pandas_computation() {
    let imported = read(&fixture_files(), &LogOptions::default()).expect("imports");
    // Through the bundle's own reader, as the app and `atlas likelihood` read it.
    let audit = Audit::from_bytes(&imported.to_json().expect("json")).expect("valid bundle");
    let table = stereotype_preference(&audit, Basis::Sum).expect("readouts");
    assert_eq!(
        Basis::default_for(&audit),
        Some(Basis::Sum),
        "lm-eval logs no token counts"
    );
    let want = expected();
    let (task, t) = want["tasks"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, t)| t["kind"] == "crows-pairs")
        .expect("a CrowS task");
    let (_, cond, p) = table
        .by_condition
        .iter()
        .find(|(_, c, _)| c == task)
        .expect("the CrowS condition");
    assert_eq!(cond, task);
    for (key, got) in [
        ("readouts", p.readouts),
        ("valid", p.valid()),
        ("preferred", p.preferred),
        ("not_preferred", p.not_preferred),
        ("ties", p.ties),
        ("missing", p.missing),
    ] {
        assert_eq!(Some(got), t[key].as_u64(), "{key}");
    }
    let share = p.share().expect("valid readouts");
    assert!(
        (share - t["share"].as_f64().unwrap()).abs() < 1e-12,
        "share {share} vs {}",
        t["share"]
    );
    // Recomputed from the log, it agrees with the tool's own per-item metric (lm-eval pct_stereotype).
    assert!((share - t["tool_pct_stereotype_mean"].as_f64().unwrap()).abs() < 1e-12);
}

#[test]
fn bbq_roles_per_context_condition_equal_the_pandas_reading() {
    let imported = read(&fixture_files(), &LogOptions::default()).expect("imports");
    let audit = Audit::from_bytes(&imported.to_json().expect("json")).expect("valid bundle");
    let want = expected();
    let (_, t) = want["tasks"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, t)| t["kind"] == "bbq")
        .expect("a BBQ task");
    let cf = audit.condition_facet.expect("condition facet");
    let conditions = audit.condition_ids();
    for (cond, roles) in t["roles"].as_object().unwrap() {
        let ci = conditions
            .iter()
            .position(|c| c == cond)
            .expect("condition level");
        let mut counts = std::collections::BTreeMap::<String, u64>::new();
        for cell in 0..audit.cells {
            let coords = audit.coordinates(cell);
            let axis = audit.axes.iter().position(|a| a.facet == cf).unwrap();
            if coords[axis] != ci {
                continue;
            }
            if let Some(v) = audit.selection_value(cell) {
                *counts.entry(v.raw.clone()).or_default() += 1;
            }
        }
        let want: std::collections::BTreeMap<String, u64> = roles
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(counts, want, "roles in {cond}");
    }
}

const CROWS_LINE: &str = r#"{"doc_id": 0, "doc": {"sent_more": "A", "sent_less": "B", "bias_type": "age"}, "arguments": {"gen_args_0": {"arg_0": "S:", "arg_1": " A"}, "gen_args_1": {"arg_0": "S:", "arg_1": " B"}}, "resps": [[["-10.0", "False"]], [["-12.0", "False"]]], "filtered_resps": [["-10.0", "False"], ["-12.0", "False"]]}"#;

fn one(samples: &str) -> Result<atlas_import::Imported, atlas_import::ImportError> {
    let files = vec![(
        "samples_crows_2026-01-01T00-00-00.jsonl".to_string(),
        samples.as_bytes().to_vec(),
    )];
    read(
        &files,
        &LogOptions {
            model: Some("m".into()),
            ..LogOptions::default()
        },
    )
}

fn error_text(samples: &str) -> String {
    match one(samples) {
        Ok(_) => panic!("accepted {samples:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_line_that_is_not_json_names_its_line() {
    let e = error_text(&format!("{CROWS_LINE}\n{{\"doc_id\": 1, \"doc\": \n"));
    assert!(e.contains("line 2") && e.contains("not JSON"), "{e}");
}

#[test]
fn a_missing_field_is_named() {
    let line = CROWS_LINE.replace(r#""doc_id": 0, "#, "");
    let e = error_text(&line);
    assert!(
        e.contains("line 1") && e.contains("`doc_id`") && e.contains("missing"),
        "{e}"
    );
    let line = r#"{"doc_id": 0, "doc": {"sent_more": "A", "sent_less": "B"}}"#;
    let e = error_text(line);
    assert!(e.contains("`resps`") && e.contains("missing"), "{e}");
}

#[test]
fn a_wrong_type_is_named() {
    let e = error_text(&CROWS_LINE.replace(r#""doc": {"#, r#""doc": 3, "x": {"#));
    assert!(e.contains("`doc`") && e.contains("not an object"), "{e}");
    let e =
        error_text(&CROWS_LINE.replace(r#"[["-10.0", "False"], ["-12.0", "False"]]"#, r#""oops""#));
    assert!(
        e.contains("filtered_resps") && e.contains("not an array"),
        "{e}"
    );
    let e = error_text(&CROWS_LINE.replace(
        r#"["-10.0", "False"], ["-12.0""#,
        r#"["nan?", "False"], ["-12.0""#,
    ));
    assert!(
        e.contains("filtered_resps[0]") && e.contains("[log-likelihood, is_greedy]"),
        "{e}"
    );
    let e = error_text(&CROWS_LINE.replace(
        r#"["-10.0", "False"], ["-12.0""#,
        r#"["3.5", "False"], ["-12.0""#,
    ));
    assert!(e.contains("filtered_resps[0]") && e.contains("≤ 0"), "{e}");
}

#[test]
fn an_unknown_task_and_a_missing_model_are_named() {
    let line = r#"{"doc_id": 0, "doc": {"question": "q"}, "resps": [[["-1.0", "False"]], [["-2.0", "False"]]]}"#;
    let e = error_text(line);
    assert!(
        e.contains("task \"crows\"") && e.contains("not a CrowS-Pairs document"),
        "{e}"
    );
    let files = vec![(
        "samples_crows_2026.jsonl".to_string(),
        CROWS_LINE.as_bytes().to_vec(),
    )];
    let e = read(&files, &LogOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no model name") && e.contains("results_"), "{e}");
}

#[test]
fn a_crows_line_whose_choices_are_swapped_still_finds_the_stereotyped_candidate() {
    let swapped = CROWS_LINE.replace(
        r#""arg_1": " A"}, "gen_args_1": {"arg_0": "S:", "arg_1": " B""#,
        r#""arg_1": " B"}, "gen_args_1": {"arg_0": "S:", "arg_1": " A""#,
    );
    let imported = one(&swapped).expect("imports");
    let l = imported.bundle.responses.likelihood.expect("readouts");
    assert_eq!(l.stereotyped, "1");
}

#[test]
fn detect_names_every_committed_tool_log_and_no_plain_input() {
    let root = repo().join("tests/fixtures/logs");
    let mut seen = 0;
    for (dir, want) in [
        ("inspect", Some(LogFormat::Inspect)),
        ("promptfoo", Some(LogFormat::Promptfoo)),
        ("lm-eval", Some(LogFormat::LmEval)),
    ] {
        for entry in std::fs::read_dir(root.join(dir))
            .expect("fixture dir")
            .flatten()
        {
            let path = entry.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let is_log = name.ends_with(".eval")
                || name.starts_with("samples_")
                || name.starts_with("results")
                || (dir == "inspect" && name.ends_with(".json") && name != "expected.json");
            if !path.is_file() || !is_log {
                continue;
            }
            let bytes = std::fs::read(&path).expect("read");
            let head = &bytes[..bytes.len().min(logs::DETECT_BYTES)];
            assert_eq!(LogFormat::detect(&name, head), want, "{dir}/{name}");
            seen += 1;
        }
    }
    assert!(seen >= 7, "{seen} logs");
    for plain in [
        "tests/fixtures/tiny-bundle.json",
        "tests/import/count_reference.json",
    ] {
        let bytes = std::fs::read(repo().join(plain)).expect("read");
        assert_eq!(
            LogFormat::detect(plain, &bytes[..bytes.len().min(logs::DETECT_BYTES)]),
            None,
            "{plain}"
        );
    }
}
