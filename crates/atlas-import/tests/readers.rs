//! The readers' defined outcomes, one test per encoding and shape case (UTF-8 BOM, UTF-16, CRLF,
//! quoted line breaks, ragged rows, duplicate headers, empty input, a single huge line) and of the
//! JSON formats.
//! Expected fields, record and line numbers are worked out by hand from the literal inputs.

mod common;

use atlas_import::{Format, ImportError, Limits};
use common::{import, import_chunked, read, read_default, simple_mapping, strings, utf16};

const CSV: &str = "model,statement,answer\nm1,s1,agree\nm1,s2,disagree\n";

#[test]
fn a_utf8_byte_order_mark_is_dropped_so_the_first_header_name_is_clean() {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(CSV.as_bytes());
    let seen = read_default(Format::Csv, &bytes).unwrap();
    assert_eq!(seen.header, strings(&["model", "statement", "answer"]));
    let imported = import(simple_mapping(), Format::Csv, &bytes).unwrap();
    assert_eq!(imported.report.responses, 2);
    assert_eq!(
        imported.report.sources[0].encoding,
        Some(atlas_import::decode::TextEncoding::Utf8Bom)
    );
}

/// Only the input's leading byte-order mark is dropped: a second one right after it is text (here
/// the start of the first header name), the same for every chunk size — csv-core would drop it when
/// its first call holds all three bytes (a regression found by the 10⁶-input fuzz run).
#[test]
fn a_second_byte_order_mark_is_kept_as_text_whatever_the_chunk_size() {
    let text = "\u{feff}\u{feff}model,answer\nm1,agree\n";
    for chunk in [1, 2, 3, 4, 5, 6, 7, 64, 65536] {
        let limits = Limits {
            chunk_bytes: chunk,
            ..Limits::default()
        };
        let seen = read(Format::Csv, text.as_bytes(), &limits).unwrap();
        assert_eq!(
            seen.header,
            strings(&["\u{feff}model", "answer"]),
            "chunk {chunk}"
        );
    }
}

#[test]
fn utf16_little_and_big_endian_with_a_byte_order_mark_are_decoded_to_the_same_records_as_utf8() {
    // Includes a character outside the BMP (a surrogate pair in UTF-16) and one with a two-byte UTF-8
    // form.
    let text = "model,statement,answer\nm1,caf\u{e9} \u{1F600},agree\nm2,s2,disagree\n";
    let utf8 = read_default(Format::Csv, text.as_bytes()).unwrap();
    for big_endian in [false, true] {
        let bytes = utf16(text, big_endian);
        // Split into odd chunks so that code units and the surrogate pair straddle chunk borders.
        let seen = read(
            Format::Csv,
            &bytes,
            &Limits {
                chunk_bytes: 3,
                ..Limits::default()
            },
        )
        .unwrap();
        assert_eq!(seen, utf8, "big endian: {big_endian}");
        assert_eq!(seen.records[0].2[1], "caf\u{e9} \u{1F600}");
    }
}

#[test]
fn utf16_with_an_unpaired_surrogate_is_an_encoding_error_at_its_byte_offset() {
    // BOM (2 bytes), 'a' (2 bytes), then a lone low surrogate DC00 at byte offset 4.
    let bytes = [0xFF, 0xFE, b'a', 0, 0x00, 0xDC, b'b', 0];
    match read_default(Format::Csv, &bytes) {
        Err(ImportError::Encoding {
            offset, message, ..
        }) => {
            assert_eq!(offset, 4);
            assert!(message.contains("low surrogate"), "{message}");
        }
        other => panic!("expected an encoding error, got {other:?}"),
    }
    // A high surrogate D800 at offset 4 followed by 'b' instead of a low surrogate.
    let bytes = [0xFF, 0xFE, b'a', 0, 0x00, 0xD8, b'b', 0];
    match read_default(Format::Csv, &bytes) {
        Err(ImportError::Encoding {
            offset, message, ..
        }) => {
            assert_eq!(offset, 4);
            assert!(message.contains("high surrogate"), "{message}");
        }
        other => panic!("expected an encoding error, got {other:?}"),
    }
}

#[test]
fn utf16_with_an_odd_number_of_bytes_is_an_encoding_error() {
    let bytes = [0xFF, 0xFE, b'a', 0, b'b'];
    match read_default(Format::Csv, &bytes) {
        Err(ImportError::Encoding {
            offset, message, ..
        }) => {
            assert_eq!(offset, 4);
            assert!(message.contains("odd number of bytes"), "{message}");
        }
        other => panic!("expected an encoding error, got {other:?}"),
    }
}

#[test]
fn utf16_without_a_byte_order_mark_and_utf32_are_rejected_with_a_message_saying_how_to_fix_it() {
    let bytes: Vec<u8> = "a,b\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    match read_default(Format::Csv, &bytes) {
        Err(ImportError::Encoding { message, .. }) => {
            assert!(
                message.contains("UTF-16 without a byte-order mark"),
                "{message}"
            );
            assert!(message.contains("re-save"), "{message}");
        }
        other => panic!("expected an encoding error, got {other:?}"),
    }
    let utf32 = [0xFF, 0xFE, 0, 0, b'a', 0, 0, 0];
    match read_default(Format::Csv, &utf32) {
        Err(ImportError::Encoding { message, .. }) => {
            assert!(message.contains("UTF-32"), "{message}")
        }
        other => panic!("expected an encoding error, got {other:?}"),
    }
}

#[test]
fn crlf_line_endings_give_the_same_records_and_lines_as_lf_in_csv_and_jsonl() {
    let lf = read_default(Format::Csv, CSV.as_bytes()).unwrap();
    let crlf = read_default(Format::Csv, CSV.replace('\n', "\r\n").as_bytes()).unwrap();
    assert_eq!(lf, crlf);
    assert_eq!(crlf.records[1], (2, 3, strings(&["m1", "s2", "disagree"])));
    // A lone CR ends a record too (old Mac files).
    let cr = read_default(Format::Csv, CSV.replace('\n', "\r").as_bytes()).unwrap();
    assert_eq!(lf, cr);

    let jsonl = "{\"a\":1}\n{\"a\":2}\n";
    let lf = read_default(Format::Jsonl, jsonl.as_bytes()).unwrap();
    let crlf = read_default(Format::Jsonl, jsonl.replace('\n', "\r\n").as_bytes()).unwrap();
    assert_eq!(lf, crlf);
    assert_eq!(crlf.records[1], (2, 2, strings(&["{\"a\":2}"])));
}

#[test]
fn quoted_fields_keep_delimiters_doubled_quotes_and_line_breaks_and_later_lines_are_still_counted()
{
    // Record 1 spans lines 2-4; record 2 starts on line 5.
    let text = "model,statement,answer\n\
                m1,\"He said \"\"hi, there\"\"\nand left\r\nquietly\",agree\n\
                m2,plain,disagree\n";
    let seen = read_default(Format::Csv, text.as_bytes()).unwrap();
    assert_eq!(
        seen.records,
        vec![
            (
                1,
                2,
                strings(&["m1", "He said \"hi, there\"\nand left\r\nquietly", "agree"])
            ),
            (2, 5, strings(&["m2", "plain", "disagree"])),
        ]
    );
}

#[test]
fn text_after_a_closing_quote_is_appended_and_a_quote_inside_an_unquoted_field_is_kept_like_pythons_csv(
) {
    let seen = read_default(Format::Csv, b"a,b\n\"ab\"cd,x\"y\n").unwrap();
    assert_eq!(seen.records, vec![(1, 2, strings(&["abcd", "x\"y"]))]);
}

#[test]
fn a_quote_still_open_at_the_end_of_the_input_is_an_error_naming_the_line_where_it_opened() {
    let text = "a,b\n1,2\n3,\"open\nstill open\n";
    match read_default(Format::Csv, text.as_bytes()) {
        Err(ImportError::UnclosedQuote {
            record,
            line,
            quote_line,
            ..
        }) => assert_eq!((record, line, quote_line), (2, 3, 3)),
        other => panic!("expected UnclosedQuote, got {other:?}"),
    }
}

/// The quote that stays open is not on the record's first line: the record starts on line 3 (after
/// the header on line 1 and a blank line 2), its first field is a closed quoted field over lines 3–4
/// (`"two` on 3, `lines"` on 4), and its third field opens a quote that never closes, on line 4
/// (`,x,"open`). With `\r\n`, a lone `\r` and `\n` line breaks alike, and whatever the chunk
/// borders.
#[test]
fn an_open_quote_after_a_multi_line_field_names_the_later_line_it_opened_on() {
    for text in [
        "a,b,c\n\n\"two\nlines\",x,\"open\nmore\n",
        "a,b,c\r\n\r\n\"two\r\nlines\",x,\"open\r\nmore\r\n",
        "a,b,c\r\r\"two\rlines\",x,\"open\rmore\r",
    ] {
        for chunk in [1, 2, 3, 7, 4096] {
            let limits = Limits {
                chunk_bytes: chunk,
                ..Limits::default()
            };
            match read(Format::Csv, text.as_bytes(), &limits) {
                Err(ImportError::UnclosedQuote {
                    record,
                    line,
                    quote_line,
                    ..
                }) => assert_eq!(
                    (record, line, quote_line),
                    (1, 3, 4),
                    "{text:?} chunk {chunk}"
                ),
                other => panic!("expected UnclosedQuote for {text:?} chunk {chunk}, got {other:?}"),
            }
        }
    }
}

/// A closed quote at the very end of the input, with no line break after it, is a complete last
/// record (not an open quote), and `""` before the end is a quote inside the field.
#[test]
fn a_quoted_last_field_closed_at_the_end_of_the_input_is_a_record() {
    let seen = read_default(Format::Csv, b"a,b\n1,\"say \"\"hi\"\"\"").unwrap();
    assert_eq!(seen.records.len(), 1);
    assert_eq!(seen.records[0].2, strings(&["1", "say \"hi\""]));
}

#[test]
fn a_ragged_row_is_skipped_and_reported_with_its_record_line_and_field_counts_and_the_rest_is_read()
{
    let text = "model,statement,answer\nm1,s1,agree\nm1,s2\nm1,s3,agree,extra\nm2,s1,disagree\n";
    let seen = read_default(Format::Csv, text.as_bytes()).unwrap();
    assert_eq!(seen.records.len(), 2);
    assert_eq!(seen.skipped.len(), 2);
    assert_eq!(
        (seen.skipped[0].0, seen.skipped[0].1),
        (2, 3),
        "record 2 on line 3"
    );
    assert!(seen.skipped[0].3.contains("2 fields, the header has 3"));
    assert_eq!((seen.skipped[1].0, seen.skipped[1].1), (3, 4));
    assert!(seen.skipped[1].3.contains("4 fields, the header has 3"));

    let imported = import(simple_mapping(), Format::Csv, text.as_bytes()).unwrap();
    let r = &imported.report;
    assert_eq!((r.records, r.records_skipped, r.responses), (4, 2, 2));
    assert_eq!(
        r.skipped_by_reason
            .get("ragged row (field count differs from the header)"),
        Some(&2)
    );
}

#[test]
fn a_ragged_row_fails_the_import_when_the_mapping_is_strict() {
    let mut m = simple_mapping();
    m.strict = true;
    let text = "model,statement,answer\nm1,s1,agree\nm1,s2\n";
    match import(m, Format::Csv, text.as_bytes()) {
        Err(ImportError::Record {
            record,
            line,
            message,
            ..
        }) => {
            assert_eq!((record, line), (2, 3));
            assert!(message.contains("strict"), "{message}");
        }
        other => panic!("expected a record error, got {other:?}"),
    }
}

#[test]
fn duplicate_header_names_get_pandas_suffixes_without_taking_a_name_already_in_the_header() {
    let seen = read_default(Format::Csv, b"a,a,a.1,a\n1,2,3,4\n").unwrap();
    assert_eq!(seen.header, strings(&["a", "a.2", "a.1", "a.3"]));
    let report = atlas_import::read_records(
        &b"x,x\n1,2\n"[..],
        "input",
        Format::Csv,
        None,
        &Limits::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!(
        report.renamed_headers,
        vec![("x".to_string(), "x.1".to_string())]
    );
}

#[test]
fn an_empty_or_whitespace_only_input_is_a_clear_error_in_every_format() {
    for format in [Format::Csv, Format::Tsv, Format::Jsonl, Format::Json] {
        for bytes in [&b""[..], &[0xEF, 0xBB, 0xBF][..], &b" \n\r\n\t "[..]] {
            match read_default(format, bytes) {
                Err(e @ ImportError::Empty { .. }) => {
                    assert!(e.to_string().contains("the input is empty"), "{e}")
                }
                other => panic!("{format:?} {bytes:?}: expected Empty, got {other:?}"),
            }
        }
        match import(simple_mapping(), format, b"") {
            Err(ImportError::Empty { .. }) => {}
            other => panic!("{format:?}: expected Empty from import, got {other:?}"),
        }
    }
}

#[test]
fn a_header_without_records_and_an_empty_json_array_are_no_records_errors() {
    match read_default(Format::Csv, b"model,statement,answer\n") {
        Err(ImportError::NoRecords { what, .. }) => assert_eq!(what, "a header line"),
        other => panic!("expected NoRecords, got {other:?}"),
    }
    match read_default(Format::Json, b" [ ]\n") {
        Err(ImportError::NoRecords { .. }) => {}
        other => panic!("expected NoRecords, got {other:?}"),
    }
}

/// An endless input: `prefix`, then the byte `fill` forever.
struct Endless {
    prefix: Vec<u8>,
    pos: usize,
    fill: u8,
}

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for b in buf.iter_mut() {
            *b = self.prefix.get(self.pos).copied().unwrap_or(self.fill);
            self.pos += 1;
        }
        Ok(buf.len())
    }
}

#[test]
fn a_single_endless_line_stops_at_the_record_limit_with_an_error_naming_record_line_and_limit() {
    let limits = Limits {
        max_record_bytes: 1 << 20,
        ..Limits::default()
    };
    // (format, prefix, record and line where the endless record starts)
    let cases: [(Format, &[u8], (u64, u64)); 4] = [
        (Format::Csv, b"a,b\n1,2\n", (2, 3)),
        (Format::Csv, b"a,b\n1,\"", (1, 2)), // an unclosed quote swallowing the rest
        (Format::Jsonl, b"{\"a\":1}\n{\"a\":\"", (2, 2)),
        (Format::Json, b"[{\"a\":1},\n{\"a\":\"", (2, 2)),
    ];
    for (format, prefix, (want_record, want_line)) in cases {
        let reader = Endless {
            prefix: prefix.to_vec(),
            pos: 0,
            fill: b'x',
        };
        let result = atlas_import::read_records(reader, "endless", format, None, &limits, |_| {});
        match result {
            Err(
                e @ ImportError::RecordTooLarge {
                    record,
                    line,
                    limit,
                    ..
                },
            ) => {
                assert_eq!(
                    (record, line, limit),
                    (want_record, want_line, 1 << 20),
                    "{format:?}"
                );
                assert!(e.to_string().contains("--max-record-bytes"), "{e}");
            }
            other => panic!("{format:?}: expected RecordTooLarge, got {other:?}"),
        }
    }
}

#[test]
fn a_record_just_under_the_limit_is_read_and_one_byte_more_is_refused() {
    let limits = Limits {
        max_record_bytes: 10,
        ..Limits::default()
    };
    // "0123456789" is 10 bytes: the record limit counts the bytes up to the line break.
    assert!(read(Format::Jsonl, b"{\"a\":\"12\"}\n", &limits).is_ok());
    assert!(matches!(
        read(Format::Jsonl, b"{\"a\":\"123\"}\n", &limits),
        Err(ImportError::RecordTooLarge { .. })
    ));
    assert!(read(Format::Csv, b"a\n123456789\n", &limits).is_ok());
    assert!(matches!(
        read(Format::Csv, b"a\n12345678901\n", &limits),
        Err(ImportError::RecordTooLarge {
            record: 1,
            line: 2,
            ..
        })
    ));
}

#[test]
fn invalid_utf8_skips_only_the_record_that_holds_it_and_names_the_column() {
    let mut bytes = b"model,statement,answer\nm1,s1,agree\nm1,caf".to_vec();
    bytes.push(0xE9); // Latin-1 'é'
    bytes.extend_from_slice(b",agree\nm2,s1,disagree\n");
    let seen = read_default(Format::Csv, &bytes).unwrap();
    assert_eq!(seen.records.len(), 2);
    assert_eq!(seen.skipped.len(), 1);
    let (record, line, field, reason) = &seen.skipped[0];
    assert_eq!((*record, *line, field.as_str()), (2, 3, "statement"));
    assert!(
        reason.contains("not UTF-8") && reason.contains("Latin-1"),
        "{reason}"
    );
}

#[test]
fn blank_lines_are_not_records_in_csv_and_jsonl_and_are_counted() {
    let seen = read_default(Format::Csv, b"a,b\n\n1,2\n\r\n3,4\n\n").unwrap();
    assert_eq!(
        seen.records,
        vec![(1, 3, strings(&["1", "2"])), (2, 5, strings(&["3", "4"]))]
    );
    let report = atlas_import::read_records(
        &b"\n{\"a\":1}\n   \n{\"a\":2}"[..],
        "input",
        Format::Jsonl,
        None,
        &Limits::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!((report.records, report.blank_lines), (2, 2));
}

#[test]
fn a_jsonl_line_that_is_not_json_or_not_an_object_is_skipped_and_reported_with_its_line() {
    let text = "{\"model\":\"m\",\"statement\":\"s\",\"answer\":\"agree\"}\n{oops\n[1,2]\n\"text\"\n{\"model\":\"m\",\"statement\":\"t\",\"answer\":\"disagree\"}\n";
    let seen = read_default(Format::Jsonl, text.as_bytes()).unwrap();
    assert_eq!(seen.records.len(), 2);
    let skips: Vec<(u64, u64)> = seen.skipped.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(skips, vec![(2, 2), (3, 3), (4, 4)]);
    assert!(seen.skipped[0].3.starts_with("not valid JSON"));
    assert!(seen.skipped[1].3.contains("found an array"));
    let imported = import(simple_mapping(), Format::Jsonl, text.as_bytes()).unwrap();
    assert_eq!(
        (imported.report.records, imported.report.records_skipped),
        (5, 3)
    );
}

#[test]
fn a_json_array_read_as_jsonl_gets_a_hint_to_use_the_json_format() {
    let seen = read_default(Format::Jsonl, b"[{\"a\": 1},\n{\"a\": 2}]\n").unwrap();
    assert!(
        seen.skipped[0].3.contains("use the json format"),
        "{:?}",
        seen.skipped
    );
}

#[test]
fn json_array_elements_are_records_and_a_bad_element_is_skipped_like_a_bad_line() {
    let text = "[\n {\"a\": \"x]},\\\"\"},\n 42,\n {\"a\": [1, {\"b\": 2}]},\n {\"a\": tru}\n]\n";
    let seen = read_default(Format::Json, text.as_bytes()).unwrap();
    assert_eq!(
        seen.records,
        vec![
            (1, 2, strings(&["{\"a\":\"x]},\\\"\"}"])),
            (3, 4, strings(&["{\"a\":[1,{\"b\":2}]}"])),
        ]
    );
    let skips: Vec<(u64, u64)> = seen.skipped.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(skips, vec![(2, 3), (4, 5)]);
    assert!(seen.skipped[0].3.contains("found a number"));
    assert!(seen.skipped[1].3.starts_with("not valid JSON"));
}

#[test]
fn a_broken_json_array_structure_is_a_syntax_error_naming_the_line() {
    let cases: [(&[u8], u64, &str); 6] = [
        (b"{\"a\": 1}\n", 1, "single JSON object"),
        (b"[{\"a\": 1}\n {\"a\": 2}]", 2, "expected `,` or `]`"),
        (b"[{\"a\": 1},\n]", 2, "trailing comma"),
        (b"[{\"a\": 1},,{\"a\": 2}]", 1, "empty element"),
        (b"[{\"a\": 1}]\n[{\"a\": 2}]", 2, "text after the closing"),
        (
            b"[{\"a\": 1},\n{\"a\": 2",
            2,
            "ends before the JSON array is closed",
        ),
    ];
    for (bytes, want_line, want) in cases {
        match read_default(Format::Json, bytes) {
            Err(ImportError::Syntax { line, message, .. }) => {
                assert_eq!(line, want_line, "{message}");
                assert!(message.contains(want), "{message}");
            }
            other => panic!(
                "{:?}: expected a syntax error, got {other:?}",
                String::from_utf8_lossy(bytes)
            ),
        }
    }
}

#[test]
fn tsv_uses_tabs_and_the_same_quoting_rules() {
    let seen = read_default(Format::Tsv, b"a\tb\n\"x\ty\"\t2\n").unwrap();
    assert_eq!(seen.records, vec![(1, 2, strings(&["x\ty", "2"]))]);
}

#[test]
fn chunk_borders_do_not_change_the_imported_bundle_or_its_report() {
    let text = "\u{feff}model,statement,answer\r\nm1,\"s,1\"\"\r\nx\",agree\r\n\r\nm1,s2\r\nm2,s1,maybe\r\nm2,s1,agree\r\n";
    let whole = import_chunked(
        simple_mapping(),
        Limits::default(),
        "input",
        Format::Csv,
        text.as_bytes(),
        usize::MAX,
    )
    .unwrap();
    for chunk in [1, 2, 3, 5, 7, 64] {
        let parts = import_chunked(
            simple_mapping(),
            Limits::default(),
            "input",
            Format::Csv,
            text.as_bytes(),
            chunk,
        )
        .unwrap();
        assert_eq!(parts.bundle, whole.bundle, "chunk {chunk}");
        assert_eq!(parts.report, whole.report, "chunk {chunk}");
    }
    // And the import is what the text says: 3 data rows kept (one ragged), one duplicate cell.
    let r = &whole.report;
    assert_eq!(
        (r.records, r.records_skipped, r.duplicates, r.responses),
        (4, 1, 1, 2)
    );
}
