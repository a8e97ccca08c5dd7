//! The Parquet reader (`atlas_import::logs::parquet`) on the files pandas/pyarrow and polars wrote
//! (`tests/fixtures/parquet/`, see its PROVENANCE.md) and on malformed variants.
//!
//! Reference values: `tests/fixtures/parquet/expected.json`, written by
//! `tests/import/parquet_reference.py` from pyarrow's reading of the same files (footer facts and the
//! counts the mapping implies, computed by hand in Python) — not by this crate.

use std::path::PathBuf;

use atlas_import::logs::{self, parquet, LogFormat, LogInput, LogOptions};
use atlas_import::{ImportError, Mapping};
use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/parquet")
}

fn file(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn expected() -> Value {
    serde_json::from_slice(&file("expected.json")).expect("expected.json is JSON")
}

fn mapping() -> Mapping {
    Mapping::from_json(&String::from_utf8(file("long.mapping.json")).expect("UTF-8"))
        .expect("the fixture mapping is valid")
}

fn options() -> LogOptions {
    LogOptions {
        mapping: Some(mapping()),
        ..LogOptions::default()
    }
}

fn import(name: &str, bytes: &[u8]) -> Result<atlas_import::Imported, ImportError> {
    logs::read(LogFormat::Parquet, &[LogInput { name, bytes }], &options())
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

fn readable() -> Vec<(String, Value)> {
    let e = expected();
    let files = e["files"].as_object().expect("files");
    let out: Vec<(String, Value)> = files
        .iter()
        .filter(|(_, v)| v["readable"] == Value::Bool(true))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(out.len(), 5, "five readable fixtures (4 pandas, 1 polars)");
    out
}

#[test]
fn every_fixture_imports_with_the_counts_pyarrow_reads() {
    for (name, e) in readable() {
        let data = file(&name);
        assert_eq!(
            LogFormat::detect(&name, &data),
            Some(LogFormat::Parquet),
            "{name}"
        );
        let imported = import(&name, &data).unwrap_or_else(|err| panic!("{name}: {err}"));
        let r = &imported.report;
        assert_eq!(r.records, count(&e, "records"), "{name} records");
        assert_eq!(r.records_skipped, 0, "{name}: {:?}", r.skipped);
        assert_eq!(r.cells, count(&e, "cells"), "{name} cells");
        assert_eq!(r.responses, count(&e, "responses"), "{name} responses");
        assert_eq!(
            (r.evidence_1, r.evidence_0, r.abstain),
            (
                count(&e, "evidence_1"),
                count(&e, "evidence_0"),
                count(&e, "abstain")
            ),
            "{name} evidence 1 / 0 / Abstain"
        );
        assert_eq!(r.texts, count(&e, "texts"), "{name} texts");
        for facet in ["model", "condition", "statement", "repeat"] {
            assert_eq!(
                level(r, facet),
                count(&e["levels"], facet),
                "{name} levels of {facet}"
            );
        }
        assert_eq!(r.sources.len(), 1);
        assert_eq!(r.sources[0].records, count(&e, "rows"), "{name} rows");
        imported
            .validate()
            .unwrap_or_else(|err| panic!("{name}: the app's reader refuses the bundle: {err}"));
    }
}

#[test]
fn the_footer_summary_equals_pyarrows_rows_row_groups_columns_and_codecs() {
    let e = expected();
    for (name, want) in e["files"].as_object().expect("files") {
        let s = parquet::summary(name, &file(name)).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(s.rows, count(want, "rows"), "{name}");
        assert_eq!(s.row_groups as u64, count(want, "row_groups"), "{name}");
        let columns: Vec<&str> = s.columns.iter().map(|c| c.name.as_str()).collect();
        let want_columns: Vec<&str> = want["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(columns, want_columns, "{name}");
        for c in &s.columns {
            let codecs: Vec<&str> = want["codecs"][&c.name]
                .as_array()
                .expect("codecs of the column")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert_eq!(c.codecs, codecs, "{name} column {}", c.name);
        }
        assert_eq!(
            s.created_by.as_deref(),
            want["created_by"].as_str(),
            "{name}"
        );
    }
}

#[test]
fn the_same_table_gives_the_same_bundle_whatever_the_writer_codec_or_row_groups() {
    let bundles: Vec<(String, Value)> = readable()
        .into_iter()
        .map(|(name, _)| {
            let imported = import(&name, &file(&name)).expect("imports");
            let mut v = serde_json::to_value(&imported.bundle).expect("bundle JSON");
            v["metadata"]["produced_by"] = Value::Null;
            (name, v)
        })
        .collect();
    for (name, b) in &bundles[1..] {
        assert!(
            b == &bundles[0].1,
            "{name} and {} give different bundles",
            bundles[0].0
        );
    }
}

#[test]
fn a_codec_this_build_lacks_is_named_with_its_column_and_row_group() {
    let err = import(
        "brotli_unsupported.parquet",
        &file("brotli_unsupported.parquet"),
    )
    .unwrap_err();
    match &err {
        ImportError::Log {
            input,
            location,
            field,
            message,
        } => {
            assert_eq!(input, "brotli_unsupported.parquet");
            assert_eq!(location, "row group 1");
            assert_eq!(field, "model");
            assert!(
                message.starts_with("Parquet column `model` uses BROTLI"),
                "{message}"
            );
            assert!(message.contains("re-save with snappy"), "{message}");
        }
        other => panic!("expected a Log error, got {other:?}"),
    }
}

#[test]
fn a_truncated_file_or_bad_magic_is_a_footer_error_never_a_panic() {
    let good = file("pandas_snappy.parquet");
    let cuts = [
        0,
        3,
        4,
        11,
        12,
        100,
        good.len() / 2,
        good.len() - 8,
        good.len() - 1,
    ];
    for cut in cuts {
        let err = import("cut.parquet", &good[..cut]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("cut.parquet, (footer), field `(file)`"),
            "cut at {cut}: {text}"
        );
    }
    let mut bad = good.clone();
    bad[..4].copy_from_slice(b"PAR2");
    let err = import("magic.parquet", &bad).unwrap_err();
    assert!(err.to_string().contains("magic bytes PAR1"), "{err}");
    // Right magic at both ends, garbage footer length.
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = import("footer.parquet", &bad).unwrap_err();
    assert!(
        err.to_string().starts_with("footer.parquet, (footer)"),
        "{err}"
    );
}

#[test]
fn a_column_the_mapping_names_but_the_file_lacks_is_the_csv_imports_missing_column_error() {
    let mut m = mapping();
    m.facets.statement.field = Some("statement_text".into());
    let opts = LogOptions {
        mapping: Some(m),
        ..LogOptions::default()
    };
    let data = file("pandas_snappy.parquet");
    let err = logs::read(
        LogFormat::Parquet,
        &[LogInput {
            name: "t.parquet",
            bytes: &data,
        }],
        &opts,
    )
    .unwrap_err();
    match err {
        ImportError::MissingColumn {
            input,
            column,
            available,
            ..
        } => {
            assert_eq!(input, "t.parquet");
            assert_eq!(column, "statement_text");
            assert!(
                available.contains("\"statement\"") && available.contains("\"output\""),
                "{available}"
            );
        }
        other => panic!("expected MissingColumn, got {other:?}"),
    }
}

#[test]
fn corrupted_data_pages_give_errors_naming_the_row_group_or_skips_never_a_panic() {
    // Flip bytes through the data region of the uncompressed, 4-row-group file (the footer kept):
    // every outcome must be an Ok import or an error, and a decode error names its row group.
    let good = file("pandas_none_4_row_groups.parquet");
    let footer_len = u32::from_le_bytes([
        good[good.len() - 8],
        good[good.len() - 7],
        good[good.len() - 6],
        good[good.len() - 5],
    ]) as usize;
    let data_end = good.len() - 8 - footer_len;
    let mut located = 0;
    for (k, at) in (4..data_end).step_by(97).enumerate() {
        let mut bad = good.clone();
        bad[at] ^= 0xA5 ^ (k as u8);
        let outcome = std::panic::catch_unwind(|| import("flip.parquet", &bad));
        let outcome = outcome.unwrap_or_else(|_| panic!("panic with byte {at} flipped"));
        if let Err(ImportError::Log { location, .. }) = &outcome {
            assert!(location.starts_with("row group "), "byte {at}: {location}");
            located += 1;
        }
    }
    assert!(located > 0, "some flips must break a page header");
}

#[test]
fn the_preview_lists_the_schema_columns_in_order_with_the_first_rows() {
    let data = file("polars_zstd.parquet");
    let p = parquet::preview("polars_zstd.parquet", &data, 5).expect("preview");
    let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "model",
            "sys_prompt_type",
            "statement",
            "stereotype_topic",
            "target_group",
            "template_idx",
            "sample",
            "agreeability_num",
            "agreed",
            "output"
        ]
    );
    assert_eq!(p.rows.len(), 5);
}

#[test]
fn without_a_mapping_the_preset_is_the_form_mappers_guess() {
    let data = file("pandas_snappy.parquet");
    match parquet::preset("pandas_snappy.parquet", &data) {
        Ok(m) => {
            assert_eq!(m.facets.model.field.as_deref(), Some("model"));
            let imported = logs::read(
                LogFormat::Parquet,
                &[LogInput {
                    name: "pandas_snappy.parquet",
                    bytes: &data,
                }],
                &LogOptions::default(),
            )
            .expect("imports with the preset");
            assert_eq!(imported.report.records, 309);
        }
        Err(ImportError::Mapping { field, message }) => {
            assert_eq!(field, "(preset)");
            assert!(message.contains("give a mapping"), "{message}");
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

/// Two inputs of the 10⁶-input fuzz run (seed 20260801, inputs 673,716 and 721,731; written by
/// `ATLAS_FUZZ_DUMP`) on which arrow-rs 60's PLAIN byte-array decoder read a value's 4-byte length past
/// the end of its page and panicked (`bit_util.rs:392`, "range end index 4 out of range for slice of
/// length 2"). They must now be a named page error.
#[test]
fn fuzz_found_pages_that_end_inside_a_value_length_are_a_named_error_not_a_panic() {
    for name in [
        "fuzz/regress/seed20260801_input673716.parquet",
        "fuzz/regress/seed20260801_input721731.parquet",
    ] {
        let bytes = file(name);
        let outcome = std::panic::catch_unwind(|| import("fuzz.parquet", &bytes));
        let err = match outcome {
            Ok(Err(e)) => e.to_string(),
            Ok(Ok(_)) => panic!("{name}: a corrupt page imported"),
            Err(_) => panic!("{name}: the reader panicked"),
        };
        assert!(
            err.starts_with("fuzz.parquet, row group") && err.contains("(a corrupt page)"),
            "{name}: {err}"
        );
    }
}
