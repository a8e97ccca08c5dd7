//! The mapping: facets from columns and JSON paths, Selection value mapping with counts, wide-to-long
//! unpivot, arrays of labels as repeats, judges, duplicates, skips, limits and mapping errors. Every
//! expected bundle cell and count is worked out by hand from the small literal inputs.

mod common;

use atlas_core::bundle::{Obtained, NO_RESPONSE_CODE};
use atlas_core::stats::{ber_by_model_condition, unit_counts};
use atlas_core::{Audit, RepeatPolicy};
use atlas_import::report::ValueCount;
use atlas_import::{preview, Format, ImportError, Importer, Limits, Mapping, ValueKind};
use common::{import, mapping, simple_mapping};

fn value(raw: &str, evidence: Option<u8>, obtained: Obtained, cells: u64) -> ValueCount {
    ValueCount {
        raw: raw.to_string(),
        evidence,
        obtained,
        cells,
    }
}

fn audit(imported: &atlas_import::Imported) -> Audit {
    imported.validate().expect("the bundle validates")
}

#[test]
fn selection_values_map_to_evidence_with_counts_and_everything_unlisted_is_abstain() {
    let m = mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "statement"}}"#,
        r#"{"field": "answer", "map": {"agree": 1, "disagree": 0}, "refusals": ["refuse"]}"#,
        "",
    );
    let csv = "model,statement,answer\nm1,s1,agree\nm1,s2,disagree\nm1,s3,unsure\nm2,s1,Agree\nm2,s2,\nm2,s3,refuse\n";
    let imported = import(m, Format::Csv, csv.as_bytes()).unwrap();
    let r = &imported.report;
    assert_eq!(
        r.values,
        vec![
            value("agree", Some(1), Obtained::Regex, 1),
            value("disagree", Some(0), Obtained::Regex, 1),
            value("unsure", None, Obtained::Regex, 1),
            // Matching is exact: "Agree" is not "agree".
            value("Agree", None, Obtained::Regex, 1),
            value("", None, Obtained::ParserFailure, 1),
            value("refuse", None, Obtained::Refusal, 1),
        ]
    );
    assert_eq!((r.evidence_1, r.evidence_0, r.abstain), (1, 1, 4));
    let unmapped = &r.unmapped["answer"];
    assert_eq!(unmapped.values.len(), 2);
    assert_eq!(
        (unmapped.values["unsure"], unmapped.values["Agree"]),
        (1, 1)
    );
    // The statistics read it: m1 has 1 bias of 2 valid, 1 Abstain; m2 has no valid Selection.
    let a = audit(&imported);
    let table = ber_by_model_condition(&unit_counts(&a, RepeatPolicy::AllResponses));
    let k = table.get(0, 0);
    assert_eq!((k.bias, k.valid, k.abstain), (1, 2, 1));
    let k = table.get(1, 0);
    assert_eq!((k.bias, k.valid, k.abstain), (0, 0, 3));
}

#[test]
fn an_unmapped_value_fails_the_import_naming_record_line_field_and_value_when_unmapped_is_error() {
    let m = mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "statement"}}"#,
        r#"{"field": "answer", "map": {"agree": 1, "disagree": 0}, "unmapped": "error"}"#,
        "",
    );
    let csv = "model,statement,answer\nm1,s1,agree\nm1,s2,unsure\n";
    match import(m, Format::Csv, csv.as_bytes()) {
        Err(ImportError::Record {
            record,
            line,
            field,
            message,
            ..
        }) => {
            assert_eq!((record, line, field.as_str()), (2, 3, "answer"));
            assert!(message.contains("\"unsure\""), "{message}");
        }
        other => panic!("expected a record error, got {other:?}"),
    }
}

fn unpivot_mapping(levels: &str) -> Mapping {
    mapping(
        &format!(
            r#"{{"model": {{"field": "model"}},
                "condition": {{"unpivot": {levels}}},
                "statement": {{"field": "q", "attributes": {{"gold": "gold"}}}}}}"#
        ),
        r#"{"field": "ans_{unpivot}", "compare_to": "gold", "equal": 0, "different": 1}"#,
        "",
    )
}

#[test]
fn wide_columns_unpivot_into_one_response_per_level_compared_with_the_gold_answer() {
    let m = unpivot_mapping(
        r#"[{"id": "white", "attributes": {"label": "White patient"}}, {"id": "black", "key": "blk"}]"#,
    );
    let csv = "model,q,ans_white,ans_blk,gold\nm1,q1,A,B,A\nm1,q2,C,C,C\n";
    let imported = import(m, Format::Csv, csv.as_bytes()).unwrap();
    let a = audit(&imported);
    assert_eq!(a.condition_ids(), vec!["white", "black"]);
    // Axes model (1) x condition (2) x statement (2): cell = condition * 2 + statement.
    let evidence: Vec<Option<u8>> = (0..4)
        .map(|c| a.selection_value(c).and_then(|v| v.evidence))
        .collect();
    assert_eq!(evidence, vec![Some(0), Some(0), Some(1), Some(0)]);
    let levels = a.levels(a.condition_facet.unwrap());
    assert_eq!(levels[0].attributes["label"], "White patient");
    assert_eq!(levels[1].attributes["has_selection"], true);
    assert_eq!(a.levels(a.statement_facet)[0].attributes["gold"], "A");
}

#[test]
fn an_unpivot_column_missing_from_the_header_is_an_error_listing_the_columns() {
    let m = unpivot_mapping(r#"[{"id": "white"}, {"id": "asian"}]"#);
    let csv = "model,q,ans_white,gold\nm1,q1,A,A\n";
    match import(m, Format::Csv, csv.as_bytes()) {
        Err(e @ ImportError::MissingColumn { .. }) => {
            let text = e.to_string();
            assert!(text.contains("\"ans_asian\""), "{text}");
            assert!(text.contains("selection.field"), "{text}");
            assert!(
                text.contains("\"model\", \"q\", \"ans_white\", \"gold\""),
                "{text}"
            );
        }
        other => panic!("expected MissingColumn, got {other:?}"),
    }
}

#[test]
fn an_array_of_labels_per_row_becomes_repeats_with_texts_aligned_by_position() {
    let m = mapping(
        r#"{"model": {"field": "m"}, "statement": {"field": "s"}, "repeat": {"array_index": true}}"#,
        r#"{"field": "labels", "map": {"1": 1, "-1": 0}}"#,
        r#""rationale": {"field": "texts"}"#,
    );
    let jsonl = concat!(
        "{\"m\":\"m1\",\"s\":\"s1\",\"labels\":[1,-1,0],\"texts\":[\"t1\",\"t2\"]}\n",
        "{\"m\":\"m1\",\"s\":\"s2\",\"labels\":[1],\"texts\":\"not an array\"}\n",
        "{\"m\":\"m2\",\"s\":\"s1\",\"labels\":[],\"texts\":[]}\n",
    );
    let imported = import(m, Format::Jsonl, jsonl.as_bytes()).unwrap();
    let r = &imported.report;
    assert_eq!(
        r.levels,
        vec![
            ("model".to_string(), 2),
            ("statement".to_string(), 2),
            ("repeat".to_string(), 3)
        ]
    );
    // 2 x 2 x 3 = 12 cells; m1/s1 has 3 repeats, m1/s2 one; m2 was named but gave no response.
    assert_eq!((r.cells, r.responses, r.no_response), (12, 4, 8));
    assert_eq!(
        (r.empty_arrays, r.values_skipped, r.records_imported),
        (1, 1, 2)
    );
    assert_eq!(r.unmapped["labels"].values["0"], 1);
    let a = audit(&imported);
    let codes: Vec<Option<Option<u8>>> = (0..12)
        .map(|c| a.selection_value(c).map(|v| v.evidence))
        .collect();
    let none = None;
    assert_eq!(
        codes,
        vec![
            Some(Some(1)),
            Some(Some(0)),
            Some(None),
            Some(Some(1)),
            none,
            none,
            none,
            none,
            none,
            none,
            none,
            none
        ]
    );
    assert_eq!(
        (a.inline_rationale(0), a.inline_rationale(1)),
        (Some("t1"), Some("t2"))
    );
    assert_eq!(a.inline_rationale(2), None);
}

#[test]
fn a_second_response_for_the_same_cell_is_reported_as_a_duplicate_and_the_first_is_kept() {
    let csv = "model,statement,answer\nm1,s1,agree\nm1,s2,agree\nm1,s1,disagree\n";
    let imported = import(simple_mapping(), Format::Csv, csv.as_bytes()).unwrap();
    let r = &imported.report;
    assert_eq!((r.duplicates, r.responses), (1, 2));
    let d = &r.duplicate_examples[0];
    assert_eq!((d.first_record, d.record), (1, 3));
    assert_eq!(d.cell, "model=m1, statement=s1");
    let a = audit(&imported);
    assert_eq!(a.selection_value(0).unwrap().raw, "agree");

    let mut strict = simple_mapping();
    strict.strict = true;
    match import(strict, Format::Csv, csv.as_bytes()) {
        Err(
            e @ ImportError::Duplicate {
                record: 3,
                first_record: 1,
                ..
            },
        ) => {
            let text = e.to_string();
            assert!(text.contains("(model=m1, statement=s1)"), "{text}");
        }
        other => panic!("expected a duplicate error, got {other:?}"),
    }
}

#[test]
fn a_record_with_a_missing_or_non_scalar_facet_value_is_skipped_without_adding_any_level() {
    let jsonl = concat!(
        "{\"model\":\"m1\",\"statement\":\"s1\",\"answer\":\"agree\"}\n",
        "{\"model\":\"m9\",\"answer\":\"agree\"}\n",
        "{\"model\":\"m8\",\"statement\":{\"id\":1},\"answer\":\"agree\"}\n",
        "{\"model\":\"m7\",\"statement\":\"\",\"answer\":\"agree\"}\n",
    );
    let imported = import(simple_mapping(), Format::Jsonl, jsonl.as_bytes()).unwrap();
    let r = &imported.report;
    assert_eq!((r.records, r.records_skipped, r.cells), (4, 3, 1));
    assert_eq!(r.skipped_by_reason["missing or empty facet value"], 2);
    assert_eq!(
        r.skipped_by_reason["facet value is an array or an object"],
        1
    );
    let s = &r.skipped[0];
    assert_eq!((s.record, s.line, s.field.as_str()), (2, 2, "statement"));
}

#[test]
fn listed_levels_fix_the_order_declare_levels_without_data_and_skip_other_values() {
    let m = mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "statement"},
            "condition": {"field": "cond", "levels": ["c1", "c2", "c3"]}}"#,
        r#"{"field": "answer", "map": {"agree": 1, "disagree": 0}}"#,
        "",
    );
    let csv = "model,statement,cond,answer\nm1,s1,c3,agree\nm1,s1,c9,agree\nm1,s1,c1,disagree\n";
    let imported = import(m, Format::Csv, csv.as_bytes()).unwrap();
    let r = &imported.report;
    assert_eq!(
        r.skipped_by_reason["value not among the facet's listed levels"],
        1
    );
    let a = audit(&imported);
    assert_eq!(a.condition_ids(), vec!["c1", "c2", "c3"]);
    // Axes model, condition, statement: cells c1, c2, c3.
    let raw: Vec<Option<&str>> = (0..3)
        .map(|c| a.selection_value(c).map(|v| v.raw.as_str()))
        .collect();
    assert_eq!(raw, vec![Some("disagree"), None, Some("agree")]);
}

#[test]
fn natural_order_sorts_numeric_level_ids_by_value_and_first_seen_keeps_input_order() {
    let m = mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "statement"},
            "repeat": {"field": "run", "order": "natural"}}"#,
        r#"{"field": "answer", "map": {"agree": 1}}"#,
        "",
    );
    let csv = "model,statement,run,answer\nm2,s1,10,agree\nm1,s1,2,agree\nm1,s1,1,agree\n";
    let a = audit(&import(m, Format::Csv, csv.as_bytes()).unwrap());
    let ids = |f: usize| a.levels(f).iter().map(|l| l.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(a.repeat_facet.unwrap()), vec!["1", "2", "10"]);
    assert_eq!(ids(a.model_facet), vec!["m2", "m1"]);
}

#[test]
fn evidence_can_come_from_another_field_of_a_nested_json_record() {
    let m = mapping(
        r#"{"model": {"field": "data.model"}, "statement": {"field": "data.id"},
            "condition": {"unpivot": [{"id": "a", "key": "response_a"}, {"id": "b", "key": "response_b"}]}}"#,
        r#"{"field": "r.{unpivot}.answer", "evidence_field": "r.{unpivot}.unknown",
            "map": {"true": 0, "false": 1}}"#,
        "",
    );
    let jsonl = concat!(
        "{\"data\":{\"model\":\"m\",\"id\":7},\"r\":{\"response_a\":{\"answer\":\"2\",\"unknown\":true},",
        "\"response_b\":{\"answer\":\"1\",\"unknown\":null}}}\n",
    );
    let imported = import(m, Format::Jsonl, jsonl.as_bytes()).unwrap();
    assert_eq!(
        imported.report.values,
        vec![
            value("2", Some(0), Obtained::Regex, 1),
            value("1", None, Obtained::Regex, 1)
        ]
    );
    assert_eq!(
        imported.report.unmapped["r.response_b.unknown"].values["(missing)"],
        1
    );
    // A number as facet value is its JSON text.
    assert_eq!(audit(&imported).levels(2)[0].id, "7");
}

#[test]
fn judge_labels_map_to_label_codes_and_unlisted_labels_are_counted_as_unmapped() {
    let m = mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "statement"}}"#,
        r#"{"field": "answer", "map": {"agree": 1, "disagree": 0}}"#,
        r#""judges": [{"id": "j1", "field": "verdict", "model": "judge-llm",
                        "map": {"endorse": "E", "qualified": "QE", "deny": "D"}}]"#,
    );
    let jsonl = concat!(
        "{\"model\":\"m\",\"statement\":\"s1\",\"answer\":\"agree\",\"verdict\":\"endorse\"}\n",
        "{\"model\":\"m\",\"statement\":\"s2\",\"answer\":\"agree\",\"verdict\":\"qualified\"}\n",
        "{\"model\":\"m\",\"statement\":\"s3\",\"answer\":\"disagree\",\"verdict\":\"shrug\"}\n",
        "{\"model\":\"m\",\"statement\":\"s4\",\"answer\":\"disagree\"}\n",
        "{\"model\":\"n\",\"statement\":\"s1\",\"answer\":\"disagree\",\"verdict\":\"deny\"}\n",
    );
    let imported = import(m, Format::Jsonl, jsonl.as_bytes()).unwrap();
    // Axes model (m, n) x statement (s1..s4); n has only s1, so its other cells have no response.
    assert_eq!(imported.bundle.responses.judges[0].labels, "EQ..D---");
    assert_eq!(imported.report.unmapped["verdict"].values["shrug"], 1);
    let a = audit(&imported);
    assert_eq!(a.judges[0].len(), 8);
}

#[test]
fn a_63rd_distinct_selection_value_is_an_error_unless_unmapped_values_are_collapsed() {
    let mut csv = String::from("model,statement,answer\n");
    for i in 0..70 {
        csv.push_str(&format!("m,s{i},free text {i}\n"));
    }
    let selection = r#"{"field": "answer", "map": {"agree": 1}}"#;
    let facets = r#"{"model": {"field": "model"}, "statement": {"field": "statement"}}"#;
    match import(mapping(facets, selection, ""), Format::Csv, csv.as_bytes()) {
        Err(ImportError::TooManyValues { record, raw, .. }) => {
            assert_eq!((record, raw.as_str()), (63, "free text 62"))
        }
        other => panic!("expected TooManyValues, got {other:?}"),
    }
    let collapsed = r#"{"field": "answer", "map": {"agree": 1}, "collapse_unmapped": true}"#;
    let imported = import(mapping(facets, collapsed, ""), Format::Csv, csv.as_bytes()).unwrap();
    assert_eq!(
        imported.report.values,
        vec![value("(unmapped)", None, Obtained::Regex, 70)]
    );
    assert_eq!(imported.report.unmapped["answer"].values.len(), 70);
}

#[test]
fn a_matrix_over_the_cell_limit_is_an_error_naming_the_facet_sizes() {
    let csv = "model,statement,answer\nm1,s1,agree\nm2,s2,agree\n";
    let limits = Limits {
        max_cells: 3,
        ..Limits::default()
    };
    match atlas_import::import(
        simple_mapping(),
        limits,
        "in.csv",
        Format::Csv,
        csv.as_bytes(),
    ) {
        Err(e @ ImportError::TooManyCells { .. }) => {
            let text = e.to_string();
            assert!(text.contains("4 cells (model 2 x statement 2)"), "{text}");
            assert!(text.contains("limit of 3"), "{text}");
        }
        other => panic!("expected TooManyCells, got {other:?}"),
    }
}

#[test]
fn an_input_where_every_record_is_skipped_is_an_error_quoting_the_first_reason() {
    let csv = "model,statement,answer\nm1,,agree\n";
    match import(simple_mapping(), Format::Csv, csv.as_bytes()) {
        Err(e @ ImportError::NothingImported { .. }) => {
            let text = e.to_string();
            assert!(text.contains("record 1 (line 2), `statement`"), "{text}");
        }
        other => panic!("expected NothingImported, got {other:?}"),
    }
}

#[test]
fn mapping_rule_violations_are_errors_that_name_the_mapping_key() {
    let base = |facets: &str, selection: &str| {
        format!(
            r#"{{"mapping_version": 1, "metadata": {}, "facets": {facets}, "selection": {selection}}}"#,
            common::METADATA
        )
    };
    let ok_facets = r#"{"model": {"field": "m"}, "statement": {"field": "s"}}"#;
    let ok_selection = r#"{"field": "a", "map": {"x": 1}}"#;
    let cases = [
        (
            base(
                r#"{"model": {"field": "m", "value": "x"}, "statement": {"field": "s"}}"#,
                ok_selection,
            ),
            "facets.model",
        ),
        (
            base(ok_facets, r#"{"field": "a_{unpivot}", "map": {"x": 1}}"#),
            "selection.field",
        ),
        (
            base(ok_facets, r#"{"field": "a", "map": {"x": 2}}"#),
            "selection.map.x",
        ),
        (base(ok_facets, r#"{"field": "a"}"#), "selection"),
        (
            base(
                ok_facets,
                r#"{"field": "a", "compare_to": "g", "equal": 0}"#,
            ),
            "selection.different",
        ),
        (
            base(
                r#"{"model": {"field": "m"}, "statement": {"field": "s"}, "other": {"model": {"field": "x"}}}"#,
                ok_selection,
            ),
            "facets.model",
        ),
    ];
    for (text, key) in cases {
        match Mapping::from_json(&text) {
            Err(ImportError::Mapping { field, .. }) => assert_eq!(field, key, "{text}"),
            other => panic!("{text}: expected a mapping error on {key}, got {other:?}"),
        }
    }
    let unknown = base(ok_facets, r#"{"field": "a", "map": {"x": 1}, "mapp": {}}"#);
    match Mapping::from_json(&unknown) {
        Err(ImportError::MappingJson(message)) => {
            assert!(message.contains("unknown field `mapp`"), "{message}")
        }
        other => panic!("expected a JSON error, got {other:?}"),
    }
    let judge = format!(
        r#"{{"mapping_version": 1, "metadata": {}, "facets": {ok_facets}, "selection": {ok_selection},
             "judges": [{{"id": "j", "field": "v", "map": {{"yes": "X"}}}}]}}"#,
        common::METADATA
    );
    match Mapping::from_json(&judge) {
        Err(ImportError::Mapping { field, .. }) => assert_eq!(field, "judges[0].map.yes"),
        other => panic!("expected a mapping error, got {other:?}"),
    }
}

#[test]
fn the_pseudo_fields_give_each_input_its_file_name_and_record_number_and_inputs_add_up() {
    let mut importer = Importer::new(
        mapping(
            r#"{"model": {"field": "$file"}, "statement": {"field": "$record"}}"#,
            r#"{"field": "answer", "map": {"agree": 1, "disagree": 0}}"#,
            "",
        ),
        Limits::default(),
    )
    .unwrap();
    importer
        .read(
            "runs/model-a.csv",
            Format::Csv,
            &b"answer\nagree\ndisagree\n"[..],
        )
        .unwrap();
    importer
        .read("runs/model-b.csv", Format::Csv, &b"answer\ndisagree\n"[..])
        .unwrap();
    let imported = importer.finish().unwrap();
    let a = audit(&imported);
    assert_eq!(a.model_ids(), vec!["model-a", "model-b"]);
    // model-b answered only statement "1": its statement "2" cell has no response.
    assert_eq!(a.selection[3], NO_RESPONSE_CODE);
    assert_eq!(imported.report.sources.len(), 2);
    assert_eq!(imported.report.records, 3);
}

#[test]
fn the_preview_detects_column_types_and_json_leaf_paths_from_the_first_rows() {
    let csv = "id,score,flag,name,mixed,empty\n1,0.5,true,ann,1,\n2,3,false,bob,x,\n";
    let p = preview(
        csv.as_bytes(),
        "p.csv",
        Format::Csv,
        None,
        &Limits::default(),
        10,
    )
    .unwrap();
    let kinds: Vec<(&str, ValueKind)> = p
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.detected))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("id", ValueKind::Integer),
            ("score", ValueKind::Number),
            ("flag", ValueKind::Boolean),
            ("name", ValueKind::Text),
            ("mixed", ValueKind::Mixed),
            ("empty", ValueKind::Empty),
        ]
    );
    assert_eq!(p.rows[1], vec!["2", "3", "false", "bob", "x", ""]);

    let jsonl =
        "{\"model_responses\":{\"response_a\":{\"extracted_answer\":\"2\"}},\"labels\":[1,-1]}\n";
    let p = preview(
        jsonl.as_bytes(),
        "p.jsonl",
        Format::Jsonl,
        None,
        &Limits::default(),
        10,
    )
    .unwrap();
    let names: Vec<(&str, ValueKind)> = p
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.detected))
        .collect();
    assert_eq!(
        names,
        vec![
            ("labels", ValueKind::Array),
            (
                "model_responses.response_a.extracted_answer",
                ValueKind::Text
            )
        ]
    );
    assert_eq!(p.columns[0].examples, vec!["[1,-1] (2 items)"]);
}

/// The same JSONL line, forever.
struct Repeating(&'static [u8], usize);

impl std::io::Read for Repeating {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for b in buf.iter_mut() {
            *b = self.0[self.1 % self.0.len()];
            self.1 += 1;
        }
        Ok(buf.len())
    }
}

#[test]
fn the_preview_reads_only_as_far_as_the_requested_rows() {
    let endless = Repeating(b"{\"a\": 1}\n", 0);
    let p = preview(
        endless,
        "endless.jsonl",
        Format::Jsonl,
        None,
        &Limits::default(),
        5,
    )
    .unwrap();
    assert_eq!(p.rows.len(), 5);
    assert_eq!(p.source.bytes, 64 << 10, "one default chunk was read");
}

/// `selection.direction` is carried into the bundle's `responses.selection.direction`
/// and the statistics rank by it: three models whose stereo shares are 2/4, 1/4 and 4/4 rank 1, 2, 3
/// by |share − 0.5| = 0, 0.25, 0.5 (lower is better would rank m2, m1, m3).
#[test]
fn a_declared_target_direction_reaches_the_bundle_and_its_ranking() {
    let m = mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "pair"}}"#,
        r#"{"field": "choice", "map": {"stereo": 1, "antistereo": 0},
            "direction": {"better": "target", "target": 0.5, "note": "CrowS-Pairs: 50 % is no preference"}}"#,
        "",
    );
    let mut csv = String::from("model,pair,choice\n");
    for (model, choices) in [
        ("m1", ["stereo", "stereo", "antistereo", "antistereo"]),
        ("m2", ["stereo", "antistereo", "antistereo", "antistereo"]),
        ("m3", ["stereo", "stereo", "stereo", "stereo"]),
    ] {
        for (p, c) in choices.iter().enumerate() {
            csv.push_str(&format!("{model},p{p},{c}\n"));
        }
    }
    let imported = import(m, Format::Csv, csv.as_bytes()).unwrap();
    let direction = imported.bundle.responses.selection.direction.clone();
    assert_eq!(
        direction.map(|d| (d.target, d.note)),
        Some((Some(0.5), Some("CrowS-Pairs: 50 % is no preference".into())))
    );
    let a = audit(&imported);
    assert!(a.direction.declared);
    let units = unit_counts(&a, RepeatPolicy::AllResponses);
    let scores = atlas_core::stats::reference_scores(&a, &units, None);
    assert_eq!(scores, [Some(0.5), Some(0.25), Some(1.0)]);
    assert_eq!(
        a.direction.direction.ranks(&scores),
        [Some(1.0), Some(2.0), Some(3.0)]
    );
    // Without the key the bundle declares nothing.
    let plain = import(
        simple_mapping(),
        Format::Csv,
        b"model,statement,answer\nm,s,agree\n",
    )
    .unwrap();
    assert!(plain.bundle.responses.selection.direction.is_none());
}

#[test]
fn a_bad_direction_in_the_mapping_is_an_error_naming_the_mapping_key() {
    let text = |direction: &str| {
        format!(
            r#"{{"mapping_version": 1, "metadata": {}, "facets": {{"model": {{"field": "m"}}, "statement": {{"field": "s"}}}},
                 "selection": {{"field": "a", "map": {{"x": 1}}, "direction": {direction}}}}}"#,
            common::METADATA
        )
    };
    for (direction, message) in [
        (r#"{"better": "target"}"#, "missing"),
        (
            r#"{"better": "target", "target": 50}"#,
            "is 50; the target is a fraction in [0, 1] (write 0.5 for 50 %)",
        ),
        (
            r#"{"better": "higher", "target": 0.5}"#,
            "only read with \"better\": \"target\"",
        ),
    ] {
        match Mapping::from_json(&text(direction)) {
            Err(ImportError::Mapping { field, message: m }) => {
                assert_eq!(field, "selection.direction.target", "{direction}");
                assert!(m.contains(message), "{direction}: {m}");
            }
            other => panic!("{direction}: expected a mapping error, got {other:?}"),
        }
    }
    match Mapping::from_json(&text(r#"{"better": "best"}"#)) {
        Err(ImportError::MappingJson(m)) => {
            assert!(m.contains("unknown variant `best`"), "{m}")
        }
        other => panic!("expected a JSON error, got {other:?}"),
    }
}
