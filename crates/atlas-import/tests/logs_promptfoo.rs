//! The promptfoo reader (`atlas_import::logs::promptfoo`) on the results file promptfoo itself wrote
//! (`tests/fixtures/logs/promptfoo/results.json`, see its PROVENANCE.md) and on malformed variants.
//!
//! Reference counts: `tests/fixtures/logs/promptfoo/expected.json`, written by
//! `scripts/fixtures/promptfoo_expected.py` with pandas (`json_normalize` of the results array) — not
//! by this crate.

use std::path::PathBuf;

use atlas_import::logs::promptfoo;
use atlas_import::{ImportError, Limits};
use serde_json::{json, Value};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/logs/promptfoo")
}

fn results() -> Vec<u8> {
    std::fs::read(dir().join("results.json")).expect("results.json")
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(dir().join("expected.json")).expect("expected.json"))
        .expect("JSON")
}

fn count(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("expected.json has no count {key}"))
}

fn level(r: &atlas_import::Report, facet: &str) -> u64 {
    r.levels
        .iter()
        .find(|(f, _)| f == facet)
        .map_or(0, |(_, n)| *n as u64)
}

fn import(inputs: &[(&str, &[u8])]) -> Result<atlas_import::Imported, ImportError> {
    promptfoo::read_all(inputs, None, Limits::default())
}

#[test]
fn the_fixture_imports_with_the_counts_pandas_reads() {
    let e = expected();
    let data = results();
    let imported = import(&[("results.json", &data)]).expect("imports");
    let r = &imported.report;
    assert_eq!(r.records, count(&e, "records"));
    assert_eq!(r.records_skipped, 0, "{:?}", r.skipped);
    assert_eq!(r.cells, count(&e, "cells"));
    assert_eq!(r.responses, count(&e, "responses"));
    assert_eq!(
        (r.evidence_1, r.evidence_0, r.abstain),
        (
            count(&e, "evidence_1"),
            count(&e, "evidence_0"),
            count(&e, "abstain")
        )
    );
    assert_eq!(r.texts, count(&e, "texts"));
    for facet in ["model", "condition", "statement", "template"] {
        assert_eq!(
            level(r, facet),
            count(&e["levels"], facet),
            "levels of {facet}"
        );
    }
    imported
        .validate()
        .expect("the app's reader accepts the bundle");
}

#[test]
fn the_preset_takes_facets_from_vars_and_the_prompt_label_as_template() {
    let m = promptfoo::preset("results.json", &results()).expect("preset");
    let v = serde_json::to_value(&m).expect("mapping");
    assert_eq!(v["facets"]["statement"]["field"], "vars.example_id");
    assert_eq!(v["facets"]["statement"]["category"], "vars.category");
    assert_eq!(v["facets"]["condition"]["field"], "vars.context_condition");
    assert_eq!(v["facets"]["template"]["field"], "template");
    assert_eq!(v["selection"]["map"]["fail"], 1);
}

#[test]
fn two_results_files_combine_and_the_same_file_twice_is_all_duplicates() {
    let data = results();
    let imported = import(&[("a.json", &data), ("b.json", &data)]).expect("imports");
    let e = expected();
    let r = &imported.report;
    assert_eq!(r.records, 2 * count(&e, "records"));
    assert_eq!(
        r.duplicates,
        count(&e, "responses"),
        "the second copy falls on filled cells"
    );
    assert_eq!(r.responses, count(&e, "responses"));
}

fn version2(mut doc: Value) -> Value {
    // promptfoo's EvaluateSummaryV2: `version: 2`, a `table` and no `prompts`; prompts carry
    // `display` (older files) rather than `label`.
    let summary = &mut doc["results"];
    summary["version"] = json!(2);
    summary["table"] = json!({"head": {"prompts": [], "vars": []}, "body": []});
    if let Some(o) = summary.as_object_mut() {
        o.remove("prompts");
    }
    for r in summary["results"].as_array_mut().into_iter().flatten() {
        let label = r["prompt"]["label"].clone();
        if let Some(p) = r["prompt"].as_object_mut() {
            p.remove("label");
            p.insert("display".into(), label);
        }
    }
    doc
}

#[test]
fn a_version_2_summary_and_a_bare_summary_read_like_the_current_file() {
    let data = results();
    let doc: Value = serde_json::from_slice(&data).expect("JSON");
    let want = import(&[("r.json", &data)]).expect("v3");
    let v2 = serde_json::to_vec(&version2(doc.clone())).expect("JSON");
    let got = import(&[("r.json", &v2)]).expect("v2");
    assert_eq!(got.bundle.responses, want.bundle.responses);
    assert_eq!(got.bundle.facets, want.bundle.facets);
    let bare = serde_json::to_vec(&doc["results"]).expect("JSON");
    let got = import(&[("r.json", &bare)]).expect("bare summary");
    assert_eq!(got.bundle.responses, want.bundle.responses);
}

fn log_error(result: Result<atlas_import::Imported, ImportError>) -> (String, String, String) {
    match result {
        Err(ImportError::Log {
            location,
            field,
            message,
            ..
        }) => (location, field, message),
        Err(other) => panic!("expected a Log error, got {other}"),
        Ok(_) => panic!("expected a Log error, got a bundle"),
    }
}

#[test]
fn a_result_of_the_wrong_shape_is_an_error_naming_its_index_and_field() {
    let mut doc: Value = serde_json::from_slice(&results()).expect("JSON");
    doc["results"]["results"][3]["vars"] = json!("not an object");
    let bytes = serde_json::to_vec(&doc).expect("JSON");
    let (location, field, _) = log_error(import(&[("r.json", &bytes)]));
    assert_eq!(
        (location.as_str(), field.as_str()),
        ("results.results[3]", "vars")
    );

    doc["results"]["results"][3] = json!(7);
    let bytes = serde_json::to_vec(&doc).expect("JSON");
    let (location, _, message) = log_error(import(&[("r.json", &bytes)]));
    assert_eq!(location, "results.results[3]");
    assert!(message.contains("not a JSON object"), "{message}");
}

#[test]
fn truncated_or_foreign_json_is_an_error_naming_the_file_and_field() {
    let data = results();
    let (location, field, message) = log_error(import(&[("r.json", &data[..data.len() / 2])]));
    assert_eq!(
        (location.as_str(), field.as_str()),
        ("(file)", "(document)")
    );
    assert!(message.contains("line"), "{message}");
    let (_, field, _) = log_error(import(&[("r.json", br#"{"evalId": "x"}"#)]));
    assert_eq!(field, "results");
    let (_, field, _) = log_error(import(&[("r.json", br#"{"results": {"version": 3}}"#)]));
    assert_eq!(field, "results.results");
}

#[test]
fn an_errored_result_is_abstain_not_a_pass_or_a_fail() {
    let mut doc: Value = serde_json::from_slice(&results()).expect("JSON");
    let before = import(&[("r.json", &results())]).expect("imports").report;
    let r0 = &mut doc["results"]["results"][0];
    let was_fail = r0["success"] == json!(false);
    r0["failureReason"] = json!(2);
    r0["error"] = json!("connection refused");
    r0["success"] = json!(false);
    let bytes = serde_json::to_vec(&doc).expect("JSON");
    let after = import(&[("r.json", &bytes)]).expect("imports").report;
    assert_eq!(after.abstain, before.abstain + 1);
    if was_fail {
        assert_eq!(
            (after.evidence_1, after.evidence_0),
            (before.evidence_1 - 1, before.evidence_0)
        );
    } else {
        assert_eq!(
            (after.evidence_1, after.evidence_0),
            (before.evidence_1, before.evidence_0 - 1)
        );
    }
}

#[test]
fn sniffing_tells_promptfoo_results_from_inspect_logs_and_plain_json() {
    let head = |b: &[u8]| b[..b.len().min(4096)].to_vec();
    let pf = head(&results());
    let inspect_json = head(
        &std::fs::read(dir().join("../inspect/crows_pairs_stereotype_first.json"))
            .expect("inspect"),
    );
    let inspect_eval = head(
        &std::fs::read(dir().join("../inspect/crows_pairs_stereotype_first.eval"))
            .expect("inspect"),
    );
    assert!(promptfoo::sniff(&pf));
    assert!(!atlas_import::logs::inspect::sniff(&pf));
    assert!(atlas_import::logs::inspect::sniff(&inspect_json));
    assert!(atlas_import::logs::inspect::sniff(&inspect_eval));
    assert!(!promptfoo::sniff(&inspect_json) && !promptfoo::sniff(&inspect_eval));
    let doc: Value = serde_json::from_slice(&results()).expect("JSON");
    assert!(
        promptfoo::sniff(&serde_json::to_vec(&doc["results"]).expect("JSON")),
        "bare summary"
    );
    for other in [
        &b"[{\"model\": \"a\"}]"[..],
        b"{\"model\": \"a\"}\n",
        b"model,answer\na,b\n",
        b"",
    ] {
        assert!(!promptfoo::sniff(other) && !atlas_import::logs::inspect::sniff(other));
    }
}
