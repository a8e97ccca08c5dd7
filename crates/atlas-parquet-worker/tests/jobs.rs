//! The Parquet worker's jobs on the committed fixtures, against pyarrow's reading of the same files
//! (`tests/fixtures/parquet/expected.json`, written by `tests/import/parquet_reference.py`), and the
//! replies' JSON round trip (the page reads them back with serde).

use std::path::PathBuf;

use atlas_parquet_worker::{run, ParquetJob, ParquetReply};
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/parquet")
}

fn file(name: &str) -> (String, Vec<u8>) {
    (
        name.to_string(),
        std::fs::read(fixtures().join(name)).expect("fixture"),
    )
}

fn expected(name: &str) -> Value {
    let all: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("expected.json")).unwrap()).unwrap();
    all["files"][name].clone()
}

fn round_trip(reply: &ParquetReply) -> ParquetReply {
    serde_json::from_str(&reply.to_json()).expect("the page reads the reply back")
}

#[test]
fn preview_summarises_the_footer_as_pyarrow_reads_it_and_returns_the_first_rows_as_csv() {
    let want = expected("pandas_snappy.parquet");
    let reply = run(
        &ParquetJob::Preview { rows: 5 },
        vec![file("pandas_snappy.parquet")],
    );
    assert_eq!(round_trip(&reply), reply);
    let ParquetReply::Previewed { label, csv } = reply else {
        panic!("{reply:?}")
    };
    let columns: Vec<String> = want["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        label,
        format!(
            "Parquet: {} rows in {} row group, {} columns, SNAPPY; written by {}",
            want["rows"],
            want["row_groups"],
            columns.len(),
            want["created_by"].as_str().unwrap()
        )
    );
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, columns);
    assert_eq!(reader.records().count(), 5);
}

#[test]
fn preview_of_several_files_says_they_go_into_one_bundle() {
    let reply = run(
        &ParquetJob::Preview { rows: 1 },
        vec![file("pandas_snappy.parquet"), file("pandas_gzip.parquet")],
    );
    let ParquetReply::Previewed { label, .. } = reply else {
        panic!("{reply:?}")
    };
    assert!(label.ends_with(", 2 files into one bundle"), "{label}");
}

#[test]
fn import_with_the_fixtures_mapping_gives_pyarrows_counts_and_the_bundle_json() {
    let want = expected("pandas_snappy.parquet");
    let mapping = std::fs::read_to_string(fixtures().join("long.mapping.json")).unwrap();
    let reply = run(
        &ParquetJob::Import { mapping },
        vec![file("pandas_snappy.parquet")],
    );
    assert_eq!(round_trip(&reply), reply);
    let ParquetReply::Imported {
        bundle_id,
        bundle,
        report,
    } = reply
    else {
        panic!("{reply:?}")
    };
    assert_eq!(bundle_id, "decodingtrust-stereotype-parquet-fixture-v1");
    let doc: Value = serde_json::from_str(&bundle).unwrap();
    assert_eq!(doc["metadata"]["id"], bundle_id);
    for (got, key) in [
        (report.records, "records"),
        (report.cells, "cells"),
        (report.responses, "responses"),
        (report.evidence_1, "evidence_1"),
        (report.evidence_0, "evidence_0"),
        (report.abstain, "abstain"),
    ] {
        assert_eq!(got, want[key].as_u64().unwrap(), "{key}");
    }
}

#[test]
fn a_cut_file_a_bad_mapping_and_no_file_are_named_failures() {
    let (_, bytes) = file("pandas_snappy.parquet");
    let cut = ("cut.parquet".to_string(), bytes[..bytes.len() / 2].to_vec());
    let ParquetReply::Failed { message } = run(&ParquetJob::Preview { rows: 5 }, vec![cut]) else {
        panic!("a cut file must fail")
    };
    assert!(message.contains("cut.parquet, (footer)"), "{message}");
    let ParquetReply::Failed { message } = run(
        &ParquetJob::Import {
            mapping: r#"{"mapping_version": 1"#.into(),
        },
        vec![file("pandas_snappy.parquet")],
    ) else {
        panic!("a bad mapping must fail")
    };
    assert!(message.to_lowercase().contains("mapping"), "{message}");
    let ParquetReply::Failed { message } = run(&ParquetJob::Preview { rows: 5 }, vec![]) else {
        panic!("no file must fail")
    };
    assert_eq!(message, "no Parquet file was given");
}

#[test]
fn a_codec_this_build_lacks_fails_after_the_footer_summary_naming_the_codec() {
    let want = expected("brotli_unsupported.parquet");
    let reply = run(
        &ParquetJob::Preview { rows: 5 },
        vec![file("brotli_unsupported.parquet")],
    );
    let ParquetReply::Failed { message } = reply else {
        panic!("BROTLI is not built in: {reply:?}")
    };
    let summary = format!(
        "Parquet: {} rows in {} row group",
        want["rows"], want["row_groups"]
    );
    assert!(message.starts_with(&summary), "{message}");
    assert!(message.contains(", BROTLI; written by "), "{message}");
    assert!(
        message.contains("brotli_unsupported.parquet, row group 1"),
        "{message}"
    );
    assert!(
        message.contains("BROTLI, which this build does not decode"),
        "{message}"
    );
}
