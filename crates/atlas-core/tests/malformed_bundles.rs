//! Malformed bundles: each kind is rejected with its own [`BundleError`] variant, and the message
//! names where the problem is (JSON line, field path, or record index with its facet levels). Reading
//! never panics, whatever the bytes.
//!
//! Every case starts from [`BASE`], a small valid bundle, and changes one thing. The expected error
//! locations are worked out by hand from `BASE` (see the comments); nothing is copied from the crate's
//! output.

use atlas_core::stats::{average_ranks, ber_by_model_condition, reference_scores, unit_counts};
use atlas_core::{Audit, BundleError, RepeatPolicy};
use serde_json::{json, Value};

/// A valid bundle: model {m1, m2} × condition {c1} × statement {s1, s2} × repeat {r1, r2} = 8 cells,
/// axes in that order (strides: repeat 1, statement 2, condition 4, model 4). Cell index i has
/// model = i / 4, statement = (i / 2) % 2, repeat = i % 2.
const BASE: &str = r#"{
  "format": "audit-atlas-bundle",
  "version": 1,
  "metadata": {
    "id": "tiny",
    "title": "Tiny bundle",
    "description": "2 models x 1 condition x 2 statements x 2 repeats",
    "source": { "citation": "hand-made" },
    "license": { "id": "CC0-1.0", "attribution": "none" },
    "content_warning": null,
    "produced_by": { "tool": "hand" }
  },
  "facets": [
    { "id": "model", "levels": [{ "id": "m1" }, { "id": "m2" }] },
    { "id": "condition", "levels": [{ "id": "c1", "has_selection": true }] },
    { "id": "statement", "levels": [{ "id": "s1", "text": "Statement one." }, { "id": "s2", "text": "Statement two." }] },
    { "id": "repeat", "levels": [{ "id": "r1" }, { "id": "r2" }] }
  ],
  "responses": {
    "axes": ["model", "condition", "statement", "repeat"],
    "selection": {
      "values": [
        { "raw": "disagree", "evidence": 0, "obtained": "regex" },
        { "raw": "agree", "evidence": 1, "obtained": "regex" },
        { "raw": "unreadable", "evidence": null, "obtained": "parser_failure" }
      ],
      "codes": "01-21100"
    },
    "judges": [{ "id": "j1", "labels": "EQNDR.-E" }]
  },
  "texts": { "rationale": { "inline": { "cells": [0, 5], "texts": ["first", "sixth"] } } }
}"#;

/// `BASE` with the single occurrence of `from` replaced by `to`.
fn with(from: &str, to: &str) -> String {
    assert_eq!(
        BASE.matches(from).count(),
        1,
        "{from:?} must occur exactly once in BASE"
    );
    BASE.replacen(from, to, 1)
}

/// 1-based line of the first occurrence of `needle` in `BASE`.
fn line_of(needle: &str) -> usize {
    let pos = BASE.find(needle).expect("needle in BASE");
    BASE[..pos].matches('\n').count() + 1
}

fn base_value() -> Value {
    serde_json::from_str(BASE).expect("BASE is JSON")
}

/// The error of reading `text`, with a readable failure if it unexpectedly reads.
#[track_caller]
fn error_of(text: &str) -> BundleError {
    match Audit::from_json(text) {
        Ok(_) => panic!("the malformed bundle was accepted:\n{text}"),
        Err(e) => e,
    }
}

/// Asserts the Display message contains every one of `parts`.
#[track_caller]
fn assert_message(err: &BundleError, parts: &[&str]) {
    let message = err.to_string();
    for part in parts {
        assert!(
            message.contains(part),
            "message {message:?} does not name {part:?}"
        );
    }
}

#[test]
fn the_base_bundle_is_valid() {
    let audit =
        Audit::from_json(BASE).expect("BASE must be valid for the other tests to mean anything");
    assert_eq!(audit.cells, 8);
}

#[test]
fn truncated_json_is_reported_as_truncated_at_the_line_where_it_ends() {
    // Cut inside the codes string: `"codes": "01-2` is on the line of `"codes"`.
    let cut = BASE.find("01-21100").unwrap() + 4;
    let err = error_of(&BASE[..cut]);
    let expected_line = line_of("\"codes\"");
    match &err {
        BundleError::Truncated { line, .. } => assert_eq!(*line, expected_line),
        other => panic!("expected Truncated, got {other:?}"),
    }
    assert_message(&err, &["truncated", &format!("line {expected_line}")]);
}

#[test]
fn an_unsupported_version_is_named_with_the_version_found() {
    let err = error_of(&with("\"version\": 1", "\"version\": 2"));
    assert_eq!(
        err,
        BundleError::UnsupportedVersion {
            found: 2,
            supported: 1
        }
    );
    assert_message(&err, &["version 2"]);
}

#[test]
fn a_wrong_format_string_is_reported_with_the_found_and_expected_names() {
    let err = error_of(&with(
        "\"format\": \"audit-atlas-bundle\"",
        "\"format\": \"audit-atlas-text-shard\"",
    ));
    assert_eq!(
        err,
        BundleError::WrongFormat {
            found: "audit-atlas-text-shard".into(),
            expected: "audit-atlas-bundle"
        }
    );
    assert_message(
        &err,
        &["`format`", "audit-atlas-text-shard", "audit-atlas-bundle"],
    );
}

#[test]
fn a_selection_code_beyond_the_values_dictionary_is_out_of_range_at_its_record() {
    // Record 4 becomes '5': a code letter of the alphabet, but the dictionary has only 3 values.
    let err = error_of(&with("\"01-21100\"", "\"01-25100\""));
    assert_eq!(
        err,
        BundleError::IndexOutOfRange {
            field: "responses.selection.codes".into(),
            index: 4,
            value: 5,
            bound: 3
        }
    );
    assert_message(&err, &["`responses.selection.codes`", "record 4"]);
}

#[test]
fn a_text_cell_index_at_or_beyond_the_matrix_is_out_of_range_at_its_record() {
    // The matrix has 8 cells (0..=7); the second inline text (record 1) points at cell 8.
    let err = error_of(&with("\"cells\": [0, 5]", "\"cells\": [0, 8]"));
    assert_eq!(
        err,
        BundleError::IndexOutOfRange {
            field: "texts.rationale.inline.cells".into(),
            index: 1,
            value: 8,
            bound: 8
        }
    );
    assert_message(&err, &["`texts.rationale.inline.cells`", "record 1"]);
}

#[test]
fn codes_shorter_than_the_matrix_are_a_length_mismatch_of_that_column() {
    let err = error_of(&with("\"01-21100\"", "\"01-2110\""));
    assert_eq!(
        err,
        BundleError::LengthMismatch {
            field: "responses.selection.codes".into(),
            expected: 8,
            found: 7
        }
    );
    assert_message(
        &err,
        &["`responses.selection.codes`", "7 entries", "8 cells"],
    );
}

#[test]
fn judge_labels_longer_than_the_matrix_are_a_length_mismatch_of_that_judge() {
    let err = error_of(&with("\"EQNDR.-E\"", "\"EQNDR.-EE\""));
    assert_eq!(
        err,
        BundleError::LengthMismatch {
            field: "responses.judges[0].labels".into(),
            expected: 8,
            found: 9
        }
    );
    assert_message(&err, &["`responses.judges[0].labels`", "9 entries"]);
}

#[test]
fn an_unknown_selection_code_names_its_record_and_facet_levels() {
    // Record 2: model 2/4 = 0 (m1), statement (2/2)%2 = 1 (s2), repeat 2%2 = 0 (r1).
    let err = error_of(&with("\"01-21100\"", "\"01#21100\""));
    assert_eq!(
        err,
        BundleError::UnknownCode {
            field: "responses.selection.codes".into(),
            index: 2,
            code: '#',
            cell: "model=m1, condition=c1, statement=s2, repeat=r1".into()
        }
    );
    assert_message(
        &err,
        &[
            "`responses.selection.codes`",
            "record 2",
            "statement=s2",
            "'#'",
        ],
    );
}

#[test]
fn an_unknown_judge_label_names_its_record_and_facet_levels() {
    // Record 7: model 7/4 = 1 (m2), statement (7/2)%2 = 1 (s2), repeat 7%2 = 1 (r2).
    let err = error_of(&with("\"EQNDR.-E\"", "\"EQNDR.-X\""));
    assert_eq!(
        err,
        BundleError::UnknownCode {
            field: "responses.judges[0].labels".into(),
            index: 7,
            code: 'X',
            cell: "model=m2, condition=c1, statement=s2, repeat=r2".into()
        }
    );
    assert_message(
        &err,
        &["`responses.judges[0].labels`", "record 7", "model=m2"],
    );
}

#[test]
fn a_duplicate_level_id_names_the_facet_and_both_records() {
    let err = error_of(&with(
        "{ \"id\": \"s2\", \"text\"",
        "{ \"id\": \"s1\", \"text\"",
    ));
    assert_eq!(
        err,
        BundleError::DuplicateId {
            field: "facets[2].levels".into(),
            id: "s1".into(),
            first: 0,
            second: 1
        }
    );
    assert_message(&err, &["`facets[2].levels`", "\"s1\"", "records 0 and 1"]);
}

#[test]
fn a_duplicate_facet_id_names_both_facets() {
    // The fourth facet (index 3) re-declares `model` (index 0).
    let err = error_of(&with(
        "{ \"id\": \"repeat\", \"levels\"",
        "{ \"id\": \"model\", \"levels\"",
    ));
    assert_eq!(
        err,
        BundleError::DuplicateId {
            field: "facets".into(),
            id: "model".into(),
            first: 0,
            second: 3
        }
    );
    assert_message(&err, &["`facets`", "\"model\"", "records 0 and 3"]);
}

#[test]
fn a_duplicate_axis_names_both_positions() {
    let err = error_of(&with(
        "[\"model\", \"condition\", \"statement\", \"repeat\"]",
        "[\"model\", \"condition\", \"statement\", \"model\"]",
    ));
    assert_eq!(
        err,
        BundleError::DuplicateId {
            field: "responses.axes".into(),
            id: "model".into(),
            first: 0,
            second: 3
        }
    );
}

#[test]
fn a_missing_metadata_title_names_the_metadata_field() {
    let err = error_of(&with("\"title\": \"Tiny bundle\",", ""));
    match &err {
        BundleError::Field { path, message } => {
            assert_eq!(path, "metadata");
            assert!(message.contains("title"), "{message}");
        }
        other => panic!("expected Field, got {other:?}"),
    }
    assert_message(&err, &["`metadata`", "title"]);
}

#[test]
fn a_statement_without_text_names_its_level() {
    // Facet 2 is `statement`; its level 1 (s2) loses its text.
    let err = error_of(&with(", \"text\": \"Statement two.\"", ""));
    match &err {
        BundleError::Invalid { field, .. } => assert_eq!(field, "facets[2].levels[1].text"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_message(&err, &["`facets[2].levels[1].text`"]);
}

#[test]
fn nan_and_infinity_literals_are_syntax_errors_at_their_line() {
    let expected_line = line_of("\"evidence\": 0,");
    for literal in ["NaN", "Infinity", "-Infinity"] {
        let err = error_of(&with(
            "\"evidence\": 0,",
            &format!("\"evidence\": {literal},"),
        ));
        match &err {
            BundleError::Syntax { line, .. } => assert_eq!(*line, expected_line, "{literal}"),
            other => panic!("{literal}: expected Syntax, got {other:?}"),
        }
        assert_message(&err, &[&format!("line {expected_line}")]);
    }
}

#[test]
fn a_version_given_as_a_string_is_a_field_error_on_version() {
    let err = error_of(&with("\"version\": 1", "\"version\": \"1\""));
    match &err {
        BundleError::Field { path, .. } => assert_eq!(path, "version"),
        other => panic!("expected Field, got {other:?}"),
    }
    assert_message(&err, &["`version`"]);
}

#[test]
fn an_evidence_of_one_half_is_a_field_error_at_its_path() {
    let err = error_of(&with("\"evidence\": 0,", "\"evidence\": 0.5,"));
    match &err {
        BundleError::Field { path, .. } => {
            assert_eq!(path, "responses.selection.values[0].evidence")
        }
        other => panic!("expected Field, got {other:?}"),
    }
    assert_message(&err, &["`responses.selection.values[0].evidence`"]);
}

#[test]
fn an_evidence_of_two_is_invalid_at_its_path() {
    let err = error_of(&with("\"evidence\": 0,", "\"evidence\": 2,"));
    match &err {
        BundleError::Invalid { field, message } => {
            assert_eq!(field, "responses.selection.values[0].evidence");
            assert!(message.contains("is 2"), "{message}");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_message(&err, &["`responses.selection.values[0].evidence`"]);
}

#[test]
fn a_parser_failure_with_bias_evidence_is_invalid_at_its_value() {
    let err = error_of(&with(
        "\"evidence\": null, \"obtained\": \"parser_failure\"",
        "\"evidence\": 1, \"obtained\": \"parser_failure\"",
    ));
    match &err {
        BundleError::Invalid { field, .. } => assert_eq!(field, "responses.selection.values[2]"),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn has_selection_given_as_a_string_is_invalid_at_its_path() {
    let err = error_of(&with(
        "\"has_selection\": true",
        "\"has_selection\": \"yes\"",
    ));
    match &err {
        BundleError::Invalid { field, .. } => {
            assert_eq!(field, "facets[1].levels[0].has_selection")
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_message(&err, &["`facets[1].levels[0].has_selection`"]);
}

#[test]
fn an_unknown_top_level_field_is_a_field_error_naming_it() {
    let err = error_of(&with(
        "\"version\": 1,",
        "\"version\": 1, \"colour\": \"red\",",
    ));
    assert!(matches!(err, BundleError::Field { .. }), "{err:?}");
    assert_message(&err, &["colour"]);
}

#[test]
fn empty_and_whitespace_only_input_are_empty_input() {
    for text in ["", " ", "\n\t  \r\n", "\u{feff}", "\u{feff}  \n"] {
        let err = error_of(text);
        assert_eq!(err, BundleError::EmptyInput, "{text:?}");
        assert_message(&err, &["empty"]);
    }
}

#[test]
fn a_bundle_without_facets_is_an_empty_bundle() {
    let mut v = base_value();
    v["facets"] = json!([]);
    let err = error_of(&v.to_string());
    assert_eq!(err, BundleError::NoFacets);
    assert_message(&err, &["no facets"]);
}

#[test]
fn a_facet_without_levels_is_an_empty_facet_named_by_index_and_id() {
    let mut v = base_value();
    v["facets"][3]["levels"] = json!([]);
    let err = error_of(&v.to_string());
    assert_eq!(
        err,
        BundleError::EmptyFacet {
            index: 3,
            id: "repeat".into()
        }
    );
    assert_message(&err, &["`facets[3]`", "\"repeat\""]);
}

#[test]
fn a_bundle_without_a_model_facet_names_the_missing_facet() {
    let mut v = base_value();
    v["facets"].as_array_mut().unwrap().remove(0);
    let err = error_of(&v.to_string());
    assert_eq!(err, BundleError::MissingFacet("model".into()));
    assert_message(&err, &["\"model\""]);
}

#[test]
fn axes_that_leave_out_a_declared_facet_name_that_facet() {
    let mut v = base_value();
    v["responses"]["axes"] = json!(["model", "condition", "statement"]);
    let err = error_of(&v.to_string());
    match &err {
        BundleError::Invalid { field, message } => {
            assert_eq!(field, "responses.axes");
            assert!(message.contains("\"repeat\""), "{message}");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_message(&err, &["`responses.axes`", "repeat"]);
}

#[test]
fn a_non_ascii_character_in_the_codes_is_an_unknown_code_at_its_record() {
    // Record 4 (model m2, statement s1, repeat r1) becomes 'é' (two bytes in UTF-8, one record).
    let err = error_of(&with("\"01-21100\"", "\"01-2é100\""));
    assert_eq!(
        err,
        BundleError::UnknownCode {
            field: "responses.selection.codes".into(),
            index: 4,
            code: 'é',
            cell: "model=m2, condition=c1, statement=s1, repeat=r1".into()
        }
    );
    assert_message(&err, &["record 4", "model=m2"]);
    // In a judge column too (record 0).
    let err = error_of(&with("\"EQNDR.-E\"", "\"ÉQNDR.-E\""));
    assert!(
        matches!(
            err,
            BundleError::UnknownCode {
                index: 0,
                code: 'É',
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_utf8_bom_before_the_bundle_is_accepted() {
    let audit = Audit::from_json(&format!("\u{feff}{BASE}")).expect("a BOM is accepted");
    assert_eq!(audit.cells, 8);
}

#[test]
fn text_after_the_bundle_is_a_syntax_error() {
    let err = error_of(&format!("{BASE} {{}}"));
    assert!(matches!(err, BundleError::Syntax { .. }), "{err:?}");
}

#[test]
fn inline_text_cells_out_of_order_are_invalid_at_their_record() {
    let err = error_of(&with("\"cells\": [0, 5]", "\"cells\": [5, 0]"));
    match &err {
        BundleError::Invalid { field, .. } => assert_eq!(field, "texts.rationale.inline.cells[1]"),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

/// BASE's facets (2 × 1 × 2 × 2 = 2^3 cells) plus 125 facets of 2 levels declare 2^128 cells, one more
/// than `u128::MAX`. The reader must say the matrix is too large (the limit is 50,000,000 cells) rather
/// than overflow (a panic in a debug build, a wrapped product in release).
#[test]
fn a_matrix_whose_size_overflows_every_integer_type_is_too_large_not_a_panic() {
    let mut v = base_value();
    let facets = v["facets"].as_array_mut().unwrap();
    let mut axes = vec![
        "model".to_string(),
        "condition".into(),
        "statement".into(),
        "repeat".into(),
    ];
    for k in 0..125 {
        let id = format!("extra{k}");
        facets.push(json!({ "id": id, "levels": [{ "id": "a" }, { "id": "b" }] }));
        axes.push(id);
    }
    v["responses"]["axes"] = json!(axes);
    let result = std::panic::catch_unwind(|| Audit::from_json(&v.to_string()));
    match result {
        Ok(Err(BundleError::TooLarge { limit, .. })) => assert_eq!(limit, 50_000_000),
        Ok(other) => panic!("expected TooLarge, got {:?}", other.err()),
        Err(_) => panic!("reading a bundle with 2^128 cells panicked"),
    }
    // 2^3 × 2^61 = 2^64 cells fit in u128 and are simply too large.
    let mut v = base_value();
    let facets = v["facets"].as_array_mut().unwrap();
    let mut axes = vec![
        "model".to_string(),
        "condition".into(),
        "statement".into(),
        "repeat".into(),
    ];
    for k in 0..61 {
        let id = format!("extra{k}");
        facets.push(json!({ "id": id, "levels": [{ "id": "a" }, { "id": "b" }] }));
        axes.push(id);
    }
    v["responses"]["axes"] = json!(axes);
    assert_eq!(
        Audit::from_json(&v.to_string()).err(),
        Some(BundleError::TooLarge {
            cells: 1u128 << 64,
            limit: 50_000_000
        })
    );
}

#[test]
fn deeply_nested_json_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let text = with(
        "\"version\": 1,",
        &format!("\"version\": 1, \"deep\": {deep},"),
    );
    assert!(Audit::from_json(&text).is_err());
    let text = with(
        "{ \"id\": \"r1\" }",
        &format!("{{ \"id\": \"r1\", \"deep\": {deep} }}"),
    );
    assert!(Audit::from_json(&text).is_err());
}

/// Every proper prefix of a valid bundle, cut at any character boundary, is an error (never `Ok`,
/// never a panic): an empty or blank prefix is `EmptyInput`, anything else `Truncated` at the prefix's
/// last line (a prefix of a JSON object always ends inside it).
#[test]
fn every_prefix_of_a_valid_bundle_is_reported_truncated_without_panicking() {
    for cut in (0..BASE.len()).filter(|&c| BASE.is_char_boundary(c)) {
        let prefix = &BASE[..cut];
        let result = std::panic::catch_unwind(|| Audit::from_json(prefix));
        let err = match result {
            Err(_) => panic!("panicked on the prefix of {cut} bytes"),
            Ok(Ok(_)) => panic!("accepted the prefix of {cut} bytes"),
            Ok(Err(e)) => e,
        };
        if prefix.trim().is_empty() {
            assert_eq!(err, BundleError::EmptyInput, "prefix of {cut} bytes");
        } else {
            let expected_line = prefix.matches('\n').count() + 1;
            match err {
                BundleError::Truncated { line, .. } => {
                    assert_eq!(line, expected_line, "prefix of {cut} bytes")
                }
                other => panic!("prefix of {cut} bytes: expected Truncated, got {other:?}"),
            }
        }
    }
}

/// xorshift64* (Vigna 2016): a tiny deterministic generator, so a failure replays exactly.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Random byte edits (replace, delete, insert, duplicate a run) of a valid bundle, biased toward bytes
/// that matter to JSON and to the dense columns. Whatever the result, reading must not panic, and when a
/// mutant still reads, every statistic must run on it without panicking.
#[test]
fn random_byte_mutations_never_panic() {
    const ROUNDS: usize = 10_000;
    const INTERESTING: &[u8] = b"{}[]\",:0123456789-.eE+#-EQNDR.\\ \n\xc3\xa9\xef\xbb\xbf\xff\x00";
    let compact = base_value().to_string();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut accepted = 0usize;
    for round in 0..ROUNDS {
        let source = if round % 2 == 0 {
            BASE
        } else {
            compact.as_str()
        };
        // Half of the edits land in `responses` and `texts` (the dense columns and cell indices).
        let focus = source.find("\"responses\"").expect("BASE has responses");
        let mut bytes = source.as_bytes().to_vec();
        for _ in 0..1 + rng.below(3) {
            let len = bytes.len().max(1);
            let pos = if rng.below(2) == 0 && focus < len {
                focus + rng.below(len - focus)
            } else {
                rng.below(len)
            };
            let byte = if rng.below(4) == 0 {
                rng.next() as u8
            } else {
                INTERESTING[rng.below(INTERESTING.len())]
            };
            match rng.below(4) {
                0 if !bytes.is_empty() => {
                    let last = bytes.len() - 1;
                    bytes[pos.min(last)] = byte;
                }
                1 if !bytes.is_empty() => {
                    let last = bytes.len() - 1;
                    bytes.remove(pos.min(last));
                }
                2 => bytes.insert(pos.min(bytes.len()), byte),
                _ => {
                    let end = (pos + 1 + rng.below(16)).min(bytes.len());
                    let run = bytes[pos.min(end)..end].to_vec();
                    let at = rng.below(bytes.len() + 1);
                    bytes.splice(at..at, run);
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let outcome = std::panic::catch_unwind(|| {
            if let Ok(audit) = Audit::from_json(&text) {
                assert_eq!(audit.selection.len(), audit.cells);
                for policy in RepeatPolicy::ALL {
                    let units = unit_counts(&audit, policy);
                    let _ = ber_by_model_condition(&units);
                    let _ = average_ranks(&reference_scores(&audit, &units, None));
                }
                true
            } else {
                false
            }
        });
        match outcome {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => panic!("round {round}: reading or computing panicked on:\n{text}"),
        }
    }
    // Sanity: the mutations are not all fatal (some land in free text and still read), and not all
    // harmless. Were either count 0 the test would exercise only one path.
    assert!(accepted > 0, "no mutant was accepted");
    assert!(accepted < ROUNDS, "every mutant was accepted");
}

/// Guards against a forgotten evidence mapping silently becoming Abstain: the key is required.
#[test]
fn a_selection_value_without_an_evidence_key_is_a_field_error_at_its_path() {
    let text = with(
        r#"{ "raw": "agree", "evidence": 1, "obtained": "regex" }"#,
        r#"{ "raw": "agree", "obtained": "regex" }"#,
    );
    let err = error_of(&text);
    assert!(matches!(&err, BundleError::Field { .. }), "{err:?}");
    assert_message(&err, &["responses.selection.values[1]", "evidence"]);
}

#[test]
fn metadata_without_a_content_warning_key_is_a_field_error() {
    let text = with(r#""content_warning": null,"#, "");
    let err = error_of(&text);
    assert!(matches!(&err, BundleError::Field { .. }), "{err:?}");
    assert_message(&err, &["metadata", "content_warning"]);
}

#[test]
fn a_dollar_schema_key_for_editors_is_accepted() {
    let text = with(
        r#""format": "audit-atlas-bundle","#,
        r#""$schema": "../docs/bundle-v1.schema.json", "format": "audit-atlas-bundle","#,
    );
    assert!(Audit::from_json(&text).is_ok());
}

/// The browser app parses with `from_bytes_deferred` and explains a refused document later (in a
/// module it downloads only then): for every kind of malformed input the explained error must be the
/// very error `from_bytes` gives, and the cheap first pass must refuse exactly the documents the parser
/// refuses (the others are already the final error).
#[test]
fn a_deferred_parse_explains_every_malformed_bundle_exactly_as_from_bytes() {
    use atlas_core::bundle::Deferred;
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        // (what, bytes, refused by the parser?)
        (
            "truncated",
            BASE.as_bytes()[..BASE.len() / 2].to_vec(),
            true,
        ),
        (
            "version 2 (a number: parsed, then refused by validation)",
            with("\"version\": 1", "\"version\": 2").into_bytes(),
            false,
        ),
        (
            "wrong format (a string: parsed, then refused by validation)",
            with(
                "\"format\": \"audit-atlas-bundle\"",
                "\"format\": \"other\"",
            )
            .into_bytes(),
            false,
        ),
        (
            "version as a string",
            with("\"version\": 1", "\"version\": \"1\"").into_bytes(),
            true,
        ),
        (
            "no metadata title",
            with("\"title\": \"Tiny bundle\",", "").into_bytes(),
            true,
        ),
        (
            "an unknown field",
            with("\"version\": 1,", "\"version\": 1, \"extra\": true,").into_bytes(),
            true,
        ),
        (
            "a NaN literal",
            with("\"content_warning\": null", "\"content_warning\": NaN").into_bytes(),
            true,
        ),
        (
            "trailing characters",
            format!("{BASE} {{}}").into_bytes(),
            true,
        ),
        (
            "a code beyond the dictionary",
            with("\"01-21100\"", "\"01-21109\"").into_bytes(),
            false,
        ),
        (
            "a duplicate level",
            with("{ \"id\": \"m2\" }", "{ \"id\": \"m1\" }").into_bytes(),
            false,
        ),
        ("empty", b"  \n".to_vec(), false),
        (
            "not UTF-8",
            [BASE.as_bytes(), &[0xff, 0xfe]].concat(),
            false,
        ),
        (
            "UTF-16",
            [&[0xff, 0xfe][..], BASE.as_bytes()].concat(),
            false,
        ),
    ];
    for (what, bytes, refused) in &cases {
        let full = Audit::from_bytes(bytes).expect_err(what);
        let deferred = Audit::from_bytes_deferred(bytes).expect_err(what);
        assert_eq!(
            matches!(deferred, Deferred::Refused(_)),
            *refused,
            "{what}: {deferred:?}"
        );
        assert_eq!(deferred.explain_bytes(bytes), full, "{what}");
    }
    assert!(Audit::from_bytes_deferred(BASE.as_bytes()).is_ok());
}
