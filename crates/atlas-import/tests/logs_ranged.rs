//! The ranged `.eval` reader (`atlas_import::logs::ranged`) — what the browser runs over `Blob.slice`
//! — on the Inspect AI fixtures (`tests/fixtures/logs/inspect/`): the same bundle as the whole-file
//! reader, the counts of `expected.json` (written by inspect_ai's own reader), members that are never
//! asked for never read, and truncated or incomplete logs as named errors.

use std::io::{Cursor, Write};
use std::path::PathBuf;

use atlas_import::logs::inspect::{self, EvalArchive, Options};
use atlas_import::logs::ranged::{self, block_on_ready, RangedZip, SliceSource};
use atlas_import::{ImportError, Imported, Limits};
use serde_json::Value;

const FIRST: &str = "crows_pairs_stereotype_first";
const SECOND: &str = "crows_pairs_stereotype_second";

fn bytes(file: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/logs/inspect");
    std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn ranged_import(inputs: &[(&str, &SliceSource<'_>)]) -> Result<Imported, ImportError> {
    block_on_ready(ranged::read_eval_logs(
        inputs,
        None,
        &Options::default(),
        Limits::default(),
        |_, _| {},
    ))
    .expect("a SliceSource never waits")
}

#[test]
fn two_logs_read_by_ranges_give_the_whole_file_readers_bundle_and_inspects_counts() {
    let (a, b) = (
        bytes(&format!("{FIRST}.eval")),
        bytes(&format!("{SECOND}.eval")),
    );
    let (sa, sb) = (SliceSource::new(&a), SliceSource::new(&b));
    let ranged = ranged_import(&[("first.eval", &sa), ("second.eval", &sb)]).expect("ranged");
    let whole = inspect::read_all(
        &[("first.eval", &a), ("second.eval", &b)],
        None,
        &Options::default(),
        Limits::default(),
    )
    .expect("whole");
    assert_eq!(ranged.bundle.responses, whole.bundle.responses);
    assert_eq!(ranged.bundle.texts, whole.bundle.texts);
    let exp: Value = serde_json::from_slice(&bytes("expected.json")).expect("expected.json");
    let c = &exp["combined_eval"];
    let r = &ranged.report;
    assert_eq!(r.records, c["records"].as_u64().expect("records"));
    assert_eq!(r.cells, c["cells"].as_u64().expect("cells"));
    assert_eq!(r.abstain, c["abstain"].as_u64().expect("abstain"));
    assert_eq!(r.evidence_1, c["evidence_1"].as_u64().expect("evidence_1"));
    // No read covers a whole file.
    for (s, len) in [(&sa, a.len()), (&sb, b.len())] {
        assert!(
            s.reads().iter().all(|&(_, n)| n < len as u64),
            "{:?}",
            s.reads()
        );
    }
}

/// The fixture's members, decoded and written again (stored), `extra` added after them.
fn rebuild(extra: &[(&str, Vec<u8>)], skip: Option<&str>) -> Vec<u8> {
    let data = bytes(&format!("{FIRST}.eval"));
    let mut archive = EvalArchive::open("first.eval", &data).expect("opens");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for m in archive.members() {
        if Some(m.name.as_str()) == skip {
            continue;
        }
        let content = archive.read_member(&m.name).expect("member");
        out.start_file(m.name.as_str(), stored).expect("start");
        out.write_all(&content).expect("write");
    }
    for (name, content) in extra {
        out.start_file(*name, stored).expect("start");
        out.write_all(content).expect("write");
    }
    out.finish().expect("finish").into_inner()
}

#[test]
fn a_one_mib_filler_member_is_never_read() {
    let filler = vec![b'x'; 1 << 20];
    let data = rebuild(&[("attachments/filler.bin", filler)], None);
    let source = SliceSource::new(&data);
    let zip = block_on_ready(RangedZip::open("f.eval", &source))
        .expect("ready")
        .expect("opens");
    let entry = zip
        .entries()
        .iter()
        .find(|e| e.name == "attachments/filler.bin")
        .expect("the filler is listed")
        .clone();
    let source = SliceSource::new(&data);
    let imported = ranged_import(&[("f.eval", &source)]).expect("imports");
    assert_eq!(imported.report.records, 10);
    let (start, end) = (
        entry.header_offset,
        entry.header_offset + 30 + entry.compressed_size,
    );
    let reads = source.reads();
    for &(offset, n) in &reads {
        assert!(
            offset + n <= start || offset >= end,
            "read {offset}+{n} touches the filler {start}..{end}"
        );
    }
    let total: u64 = reads.iter().map(|r| r.1).sum();
    assert!(
        total < data.len() as u64 - (1 << 20),
        "{total} bytes read of {}",
        data.len()
    );
}

fn log_error(result: Result<Imported, ImportError>) -> (String, String, String) {
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
fn a_truncated_eval_read_by_ranges_is_an_error_naming_the_file() {
    let data = bytes(&format!("{FIRST}.eval"));
    for cut in [data.len() - 1, data.len() / 2, 30, 0] {
        let source = SliceSource::new(&data[..cut]);
        let (location, field, message) = log_error(ranged_import(&[("cut.eval", &source)]));
        assert_eq!(
            (location.as_str(), field.as_str()),
            ("(file)", "(zip)"),
            "cut {cut}"
        );
        assert!(message.contains("truncated"), "cut {cut}: {message}");
    }
}

#[test]
fn a_sample_member_missing_is_an_error_naming_the_member() {
    let data = rebuild(&[], Some("samples/pair0_epoch_2.json"));
    let source = SliceSource::new(&data);
    let (location, _, message) = log_error(ranged_import(&[("m.eval", &source)]));
    assert_eq!(location, "member samples/pair0_epoch_2.json");
    assert!(message.contains("missing"), "{message}");
}

#[test]
fn the_preview_gives_the_member_count_the_preset_and_rows() {
    let data = bytes(&format!("{FIRST}.eval"));
    let source = SliceSource::new(&data);
    let p = block_on_ready(ranged::preview_eval(
        "first.eval",
        &source,
        &Options::default(),
        8,
    ))
    .expect("ready")
    .expect("previews");
    let whole = EvalArchive::open("first.eval", &data)
        .expect("opens")
        .members()
        .len();
    assert_eq!(p.members, whole);
    assert_eq!(p.records.len(), 8);
    let preset = inspect::preset("first.eval", &data, &Options::default()).expect("preset");
    assert_eq!(format!("{:?}", p.preset), format!("{preset:?}"));
}
