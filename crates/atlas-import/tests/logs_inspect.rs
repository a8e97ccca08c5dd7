//! The Inspect AI reader (`atlas_import::logs::inspect`) on the logs inspect_ai itself wrote
//! (`tests/fixtures/logs/inspect/`, see its PROVENANCE.md) and on malformed variants of them.
//!
//! Reference counts: `tests/fixtures/logs/inspect/expected.json`, written by
//! `scripts/fixtures/inspect_expected.py` with inspect_ai's own reader (`read_eval_log`) and Python's
//! `zipfile` — not by this crate. The malformed variants are built here from the fixture's decoded
//! members (zip's writer, stored or DEFLATE) or by patching its bytes.

use std::io::{Cursor, Write};
use std::path::PathBuf;

use atlas_import::logs::inspect::{self, EvalArchive, Options, SampleSource};
use atlas_import::{ImportError, Limits};
use serde_json::Value;

const FIRST: &str = "crows_pairs_stereotype_first";
const SECOND: &str = "crows_pairs_stereotype_second";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/logs/inspect")
}

fn bytes(file: &str) -> Vec<u8> {
    std::fs::read(dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn expected() -> Value {
    serde_json::from_slice(&bytes("expected.json")).expect("expected.json")
}

fn count(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("expected.json has no count {key}"))
}

/// Levels of `facet` in the report (0 when the bundle has no such facet).
fn level(r: &atlas_import::Report, facet: &str) -> u64 {
    r.levels
        .iter()
        .find(|(f, _)| f == facet)
        .map_or(0, |(_, n)| *n as u64)
}

fn import(
    inputs: &[(&str, &[u8])],
    options: &Options,
) -> Result<atlas_import::Imported, ImportError> {
    inspect::read_all(inputs, None, options, Limits::default())
}

#[test]
fn each_fixture_log_imports_with_the_counts_inspect_ai_reads() {
    let exp = expected();
    for file in [
        format!("{FIRST}.eval"),
        format!("{SECOND}.eval"),
        format!("{FIRST}.json"),
        format!("{SECOND}.json"),
    ] {
        let e = &exp["logs"][&file];
        let data = bytes(&file);
        let imported = import(&[(&file, &data)], &Options::default())
            .unwrap_or_else(|err| panic!("{file}: {err}"));
        let r = &imported.report;
        let p = &e["preset"];
        assert_eq!(r.records, count(p, "records"), "{file}: records");
        assert_eq!(r.records_skipped, 0, "{file}: skipped {:?}", r.skipped);
        assert_eq!(r.responses, count(p, "responses"), "{file}: responses");
        assert_eq!(r.duplicates, 0, "{file}: duplicates");
        assert_eq!(
            (r.evidence_1, r.evidence_0, r.abstain),
            (
                count(p, "evidence_1"),
                count(p, "evidence_0"),
                count(p, "abstain")
            ),
            "{file}: evidence 1 / 0 / Abstain"
        );
        assert_eq!(r.texts, count(p, "texts"), "{file}: Rationale texts");
        // One epoch per repeat level, as many as inspect_ai's config says.
        assert_eq!(
            level(r, "repeat"),
            count(e, "epochs"),
            "{file}: epochs → repeats"
        );
        assert_eq!(level(r, "model"), 1, "{file}: one model");
        imported
            .validate()
            .expect("the app's reader accepts the bundle");
    }
}

#[test]
fn the_two_logs_combine_into_one_bundle_with_both_conditions() {
    let exp = expected();
    let c = &exp["combined_eval"];
    let a = bytes(&format!("{FIRST}.eval"));
    let b = bytes(&format!("{SECOND}.eval"));
    let imported = import(
        &[("first.eval", &a), ("second.eval", &b)],
        &Options::default(),
    )
    .expect("the two logs import");
    let r = &imported.report;
    assert_eq!(r.records, count(c, "records"));
    assert_eq!(
        r.cells,
        count(c, "cells"),
        "cells = the product of the levels"
    );
    assert_eq!(r.responses, count(c, "responses"));
    assert_eq!(r.texts, count(c, "texts"));
    assert_eq!(
        (r.evidence_1, r.evidence_0, r.abstain),
        (
            count(c, "evidence_1"),
            count(c, "evidence_0"),
            count(c, "abstain")
        )
    );
    for facet in ["model", "condition", "statement", "template", "repeat"] {
        assert_eq!(
            level(r, facet),
            count(&c["levels"], facet),
            "levels of {facet}"
        );
    }
    assert_eq!(r.sources.len(), 2, "one source per log");
    // A pair's statement text (metadata.sent_more) is the same sentence in both option orders.
    assert!(
        r.attribute_conflicts.is_empty(),
        "{:?}",
        r.attribute_conflicts
    );
}

#[test]
fn an_eval_log_and_its_json_conversion_give_the_same_bundle() {
    for task in [FIRST, SECOND] {
        let e = bytes(&format!("{task}.eval"));
        let j = bytes(&format!("{task}.json"));
        let from_eval = import(&[("log", &e)], &Options::default()).expect(".eval");
        let from_json = import(&[("log", &j)], &Options::default()).expect(".json");
        let mut a = serde_json::to_value(&from_eval.bundle).expect("bundle");
        let mut b = serde_json::to_value(&from_json.bundle).expect("bundle");
        // produced_by names the input's format; everything else is the same.
        a["metadata"]["produced_by"] = Value::Null;
        b["metadata"]["produced_by"] = Value::Null;
        assert_eq!(a, b, "{task}: .eval and .json bundles differ");
    }
}

#[test]
fn the_member_list_is_the_one_pythons_zipfile_reads() {
    let exp = expected();
    for task in [FIRST, SECOND] {
        let file = format!("{task}.eval");
        let data = bytes(&file);
        let mut archive = EvalArchive::open(&file, &data).expect("opens");
        let got: Vec<(String, u16)> = archive
            .members()
            .into_iter()
            .map(|m| (m.name, m.method))
            .collect();
        let want: Vec<(String, u16)> = exp["logs"][&file]["members"]
            .as_array()
            .expect("members")
            .iter()
            .map(|m| {
                (
                    m[0].as_str().unwrap_or_default().to_string(),
                    m[1].as_u64().unwrap_or(0) as u16,
                )
            })
            .collect();
        assert_eq!(got, want, "{file}");
    }
}

#[test]
fn a_member_sliced_out_of_the_file_decodes_alone_as_a_browser_would_read_it() {
    let data = bytes(&format!("{FIRST}.eval"));
    let mut archive = EvalArchive::open("first.eval", &data).expect("opens");
    let members = archive.members();
    let m = members
        .iter()
        .find(|m| m.name == "summaries.json")
        .expect("summaries.json");
    let start = m.data_start.expect("data start") as usize;
    let slice = &data[start..start + m.compressed_size as usize];
    let decoded =
        inspect::decode_member("first.eval", &m.name, m.method, slice, m.size).expect("decodes");
    assert_eq!(
        decoded,
        archive.read_member("summaries.json").expect("reads")
    );
    let summaries: Value = serde_json::from_slice(&decoded).expect("JSON");
    assert_eq!(
        summaries.as_array().map(Vec::len),
        Some(archive.summaries().expect("summaries").len())
    );
}

#[test]
fn summaries_alone_give_the_same_selections_as_the_sample_members() {
    let data = bytes(&format!("{FIRST}.eval"));
    let full = import(&[("first.eval", &data)], &Options::default()).expect("members");
    let fast = import(
        &[("first.eval", &data)],
        &Options {
            source: SampleSource::Summaries,
            ..Options::default()
        },
    )
    .expect("summaries");
    assert_eq!(full.bundle.responses, fast.bundle.responses);
}

#[test]
fn the_scorer_option_picks_another_scorer() {
    let data = bytes(&format!("{FIRST}.eval"));
    let exp = expected();
    let e = &exp["logs"][format!("{FIRST}.eval")];
    let other = e["scorers"][1]
        .as_str()
        .expect("a second scorer")
        .to_string();
    let want = &e["evidence_by_scorer"][&other];
    let imported = import(
        &[("first.eval", &data)],
        &Options {
            scorer: Some(other.clone()),
            ..Options::default()
        },
    )
    .expect("imports");
    // C -> 1; I -> 0 unless the scorer said no usable answer was read (then Abstain, like N).
    let r = &imported.report;
    assert_eq!(
        (r.evidence_1, r.evidence_0, r.abstain),
        (
            count(want, "evidence_1"),
            count(want, "evidence_0"),
            count(want, "abstain")
        ),
        "scorer {other}"
    );
}

#[test]
fn the_preset_reads_statement_condition_template_and_category_from_the_sample_metadata() {
    let data = bytes(&format!("{FIRST}.eval"));
    let m = inspect::preset("first.eval", &data, &Options::default()).expect("preset");
    let v = serde_json::to_value(&m).expect("mapping");
    let f = &v["facets"];
    assert_eq!(f["model"]["field"], "model");
    assert_eq!(f["statement"]["field"], "metadata.pair_id");
    assert_eq!(f["statement"]["text"], "metadata.sent_more");
    assert_eq!(f["statement"]["category"], "metadata.bias_type");
    assert_eq!(f["condition"]["field"], "metadata.condition");
    assert_eq!(f["template"]["field"], "metadata.template");
    assert_eq!(f["repeat"]["field"], "epoch");
    assert_eq!(v["selection"]["field"], "selection");
    assert_eq!(v["rationale"]["field"], "explanation");
    assert!(v["metadata"]["notes"]
        .as_str()
        .unwrap_or("")
        .contains("letter_choice"));
}

// ---- malformed variants -------------------------------------------------------------------------

/// Replaces a member's content (`None`: leaves the member out).
type Replace<'a> = &'a dyn Fn(&str, Vec<u8>) -> Option<Vec<u8>>;

/// The fixture's members decoded and written again (stored or DEFLATE), with `replace` applied.
fn rebuild(method: zip::CompressionMethod, replace: Replace<'_>) -> Vec<u8> {
    let data = bytes(&format!("{FIRST}.eval"));
    let mut archive = EvalArchive::open("first.eval", &data).expect("opens");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for m in archive.members() {
        let content = archive.read_member(&m.name).expect("member");
        if let Some(content) = replace(&m.name, content) {
            let options = zip::write::SimpleFileOptions::default().compression_method(method);
            out.start_file(m.name.as_str(), options).expect("start");
            out.write_all(&content).expect("write");
        }
    }
    out.finish().expect("finish").into_inner()
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
fn a_deflate_rewrite_of_the_log_gives_the_same_bundle_as_inspects_zstd() {
    let original = bytes(&format!("{FIRST}.eval"));
    let deflated = rebuild(zip::CompressionMethod::Deflated, &|_, c| Some(c));
    let mut archive = EvalArchive::open("d.eval", &deflated).expect("opens");
    assert!(
        archive.members().iter().all(|m| m.method == 8),
        "all DEFLATE"
    );
    let a = import(&[("x", &original)], &Options::default()).expect("zstd");
    let b = import(&[("x", &deflated)], &Options::default()).expect("deflate");
    assert_eq!(a.bundle.responses, b.bundle.responses);
    assert_eq!(a.bundle.texts, b.bundle.texts);
}

#[test]
fn a_truncated_eval_file_is_an_error_naming_the_file() {
    let data = bytes(&format!("{FIRST}.eval"));
    for cut in [data.len() - 1, data.len() / 2, 30, 0] {
        let (location, field, message) =
            log_error(import(&[("cut.eval", &data[..cut])], &Options::default()));
        assert!(cut == 0 || location == "(file)", "cut {cut}: {location}");
        assert!(!message.is_empty() && !field.is_empty(), "cut {cut}");
    }
}

#[test]
fn a_sample_member_missing_is_an_error_naming_the_member() {
    let zip = rebuild(zip::CompressionMethod::Stored, &|name, c| {
        (name != "samples/pair0_epoch_2.json").then_some(c)
    });
    let (location, _, message) = log_error(import(&[("m.eval", &zip)], &Options::default()));
    assert_eq!(location, "member samples/pair0_epoch_2.json");
    assert!(message.contains("missing"), "{message}");
}

#[test]
fn a_header_missing_is_an_error_naming_header_json() {
    let zip = rebuild(zip::CompressionMethod::Stored, &|name, c| {
        (name != "header.json" && name != "_journal/start.json").then_some(c)
    });
    let (location, _, message) = log_error(import(&[("h.eval", &zip)], &Options::default()));
    assert_eq!(location, "member header.json");
    assert!(message.contains("missing"), "{message}");
}

#[test]
fn bad_json_in_a_member_is_an_error_naming_the_member_and_position() {
    let zip = rebuild(zip::CompressionMethod::Stored, &|name, c| {
        Some(if name == "samples/pair1_epoch_1.json" {
            b"{\"id\": \"pair1\",\n \"epoch\": 1 oops}".to_vec()
        } else {
            c
        })
    });
    let (location, field, message) = log_error(import(&[("j.eval", &zip)], &Options::default()));
    assert_eq!(location, "member samples/pair1_epoch_1.json");
    assert_eq!(field, "(document)");
    assert!(message.contains("line 2"), "{message}");
}

#[test]
fn a_sample_with_scores_of_the_wrong_type_is_an_error_naming_the_field() {
    let zip = rebuild(zip::CompressionMethod::Stored, &|name, c| {
        if name != "samples/pair1_epoch_1.json" {
            return Some(c);
        }
        let mut v: Value = serde_json::from_slice(&c).expect("JSON");
        v["scores"] = Value::from("C");
        Some(serde_json::to_vec(&v).expect("JSON"))
    });
    let (location, field, _) = log_error(import(&[("s.eval", &zip)], &Options::default()));
    assert_eq!(
        (location.as_str(), field.as_str()),
        ("member samples/pair1_epoch_1.json", "scores")
    );
}

/// Sets the compression method of every member called `name` (local header and central directory)
/// to `method`.
fn patch_method(mut zip: Vec<u8>, name: &str, method: u16) -> Vec<u8> {
    let n = name.as_bytes();
    let mut i = 0;
    while i + 4 <= zip.len() {
        let (sig, name_at, method_at) = match &zip[i..i + 4] {
            b"PK\x03\x04" => (true, i + 30, i + 8),
            b"PK\x01\x02" => (true, i + 46, i + 10),
            _ => (false, 0, 0),
        };
        if sig && zip.get(name_at..name_at + n.len()) == Some(n) {
            zip[method_at..method_at + 2].copy_from_slice(&method.to_le_bytes());
        }
        i += 1;
    }
    zip
}

#[test]
fn a_member_with_an_unsupported_compression_method_is_an_error_naming_method_and_member() {
    let zip = rebuild(zip::CompressionMethod::Stored, &|_, c| Some(c));
    let zip = patch_method(zip, "samples/pair3_epoch_1.json", 14);
    let (location, _, message) = log_error(import(&[("c.eval", &zip)], &Options::default()));
    assert_eq!(location, "member samples/pair3_epoch_1.json");
    assert!(message.contains("method 14"), "{message}");
}

#[test]
fn corrupt_zstd_data_is_an_error_or_decodes_to_the_same_bytes_never_a_panic() {
    let data = bytes(&format!("{FIRST}.eval"));
    let want = import(&[("z.eval", &data)], &Options::default()).expect("original");
    let mut archive = EvalArchive::open("z.eval", &data).expect("opens");
    let m = archive
        .members()
        .into_iter()
        .find(|m| m.name == "summaries.json")
        .expect("summaries");
    let start = m.data_start.expect("start") as usize;
    let len = m.compressed_size as usize;
    let mut errors = 0;
    // Every byte of the member's zstd data flipped in turn: each gives a Log error naming the member,
    // or (a flip the decoder does not depend on, e.g. an unused frame-header bit) the same bundle,
    // since the decoded bytes must still match the member's CRC-32.
    for flip in 0..len {
        let mut bad = data.clone();
        bad[start + flip] ^= 0x5A;
        match import(&[("z.eval", &bad)], &Options::default()) {
            Err(ImportError::Log { location, .. }) => {
                assert_eq!(location, "member summaries.json", "flip at {flip}");
                errors += 1;
            }
            Err(other) => panic!("flip at {flip}: {other}"),
            Ok(got) => assert_eq!(
                got.bundle.responses, want.bundle.responses,
                "flip at {flip}"
            ),
        }
    }
    assert!(errors > len / 2, "only {errors} of {len} flips were errors");
}

#[test]
fn a_json_file_that_is_not_an_inspect_log_is_an_error_naming_eval() {
    let (location, field, _) = log_error(import(
        &[("x.json", br#"{"samples": []}"#)],
        &Options::default(),
    ));
    assert_eq!((location.as_str(), field.as_str()), ("(file)", "eval"));
}
