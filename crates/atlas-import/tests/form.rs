//! The starter guesses and the form model on small hand-made inputs: a guess never names a column
//! the file lacks and leaves a required role unmapped with its reason; the form's setters round-trip
//! through the mapping document and keep the keys they do not own; the value table counts the
//! preview's values; the live mapped rows are the import's first responses.

use atlas_import::form::{
    mapped_rows, role_choices, role_source, set_role_source, set_value_class, value_rows,
};
use atlas_import::{guess, preview, Format, Limits, Mapping, Role, Source, ValueClass};
use serde_json::json;

fn csv_preview(text: &str) -> atlas_import::Preview {
    preview(
        text.as_bytes(),
        "t.csv",
        Format::Csv,
        None,
        &Limits::default(),
        100,
    )
    .unwrap()
}

#[test]
fn a_file_without_a_plausible_selection_or_statement_leaves_them_unmapped_and_says_so() {
    let p = csv_preview("score,weight\n0.5,1.25\n0.7,2.5\n");
    let g = guess("t.csv", &p);
    assert_eq!(g.missing, vec![Role::Statement, Role::Selection]);
    let sel = g.roles.iter().find(|r| r.role == Role::Selection).unwrap();
    assert_eq!(sel.source, Source::None);
    assert!(sel.reason.contains("choose one"), "{}", sel.reason);
    // No role names a column that is not in the file.
    for r in &g.roles {
        if let Source::Column(c) = &r.source {
            assert!(["score", "weight"].contains(&c.as_str()), "{c}");
        }
    }
    // The mapping's own check names the missing Selection (not a column that does not exist).
    let err = Mapping::from_json(&g.document.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("selection") || err.contains("statement"),
        "{err}"
    );
}

#[test]
fn a_long_csv_gets_model_statement_and_an_agree_disagree_map_from_names_and_values() {
    let p = csv_preview(
        "llm,statement,answer,explanation\n\
         m1,s1,agree,I agree because the sentence says so\n\
         m1,s2,disagree,I disagree because it is a stereotype\n\
         m2,s1,I refuse,no comment at all from this model\n",
    );
    let g = guess("t.csv", &p);
    assert!(g.missing.is_empty(), "{:?}", g.roles);
    let d = &g.document;
    assert_eq!(role_source(d, Role::Model), Source::Column("llm".into()));
    assert_eq!(
        role_source(d, Role::Statement),
        Source::Column("statement".into())
    );
    assert_eq!(
        role_source(d, Role::Selection),
        Source::Column("answer".into())
    );
    assert_eq!(
        role_source(d, Role::Rationale),
        Source::Column("explanation".into())
    );
    assert_eq!(d["selection"]["map"], json!({"agree": 1, "disagree": 0}));
    // "I refuse" is not a known word: it stays unlisted (Abstain, reported as unmapped).
    let (field, rows) = value_rows(d, &p).unwrap();
    assert_eq!(field, "answer");
    let classes: Vec<(&str, usize, ValueClass)> = rows
        .iter()
        .map(|r| (r.value.as_str(), r.count, r.class))
        .collect();
    assert_eq!(
        classes,
        vec![
            ("agree", 1, ValueClass::Evidence1),
            ("disagree", 1, ValueClass::Evidence0),
            ("I refuse", 1, ValueClass::Unlisted),
        ]
    );
}

#[test]
fn the_form_setters_round_trip_and_keep_the_keys_the_form_does_not_own() {
    let mut d = json!({
        "mapping_version": 1,
        "facets": {"model": {"field": "m", "label": "Model", "levels": ["a"]},
                   "statement": {"field": "s", "attributes": {"x": "x"}}},
        "selection": {"field": "a", "map": {"yes": {"evidence": 1, "raw": "agree"}}}
    });
    set_role_source(&mut d, Role::Model, &Source::Constant("gpt".into()));
    assert_eq!(role_source(&d, Role::Model), Source::Constant("gpt".into()));
    assert_eq!(
        d["facets"]["model"],
        json!({"value": "gpt", "label": "Model"}),
        "levels of the old column dropped, label kept"
    );
    set_role_source(
        &mut d,
        Role::Condition,
        &Source::Unpivot(vec!["a".into(), "b".into()]),
    );
    assert_eq!(
        role_source(&d, Role::Condition),
        Source::Unpivot(vec!["a".into(), "b".into()])
    );
    set_role_source(&mut d, Role::Condition, &Source::None);
    assert!(
        d["facets"].get("condition").is_none(),
        "an optional facet set to none is removed"
    );
    set_role_source(&mut d, Role::Statement, &Source::None);
    assert_eq!(
        d["facets"]["statement"],
        json!({"attributes": {"x": "x"}}),
        "a required facet keeps its object"
    );
    set_role_source(&mut d, Role::StatementText, &Source::Column("t".into()));
    assert_eq!(d["facets"]["statement"]["text"], "t");
    set_role_source(&mut d, Role::Rationale, &Source::Column("why".into()));
    assert_eq!(d["rationale"], json!({"field": "why"}));
    set_role_source(&mut d, Role::CompareTo, &Source::Column("gold".into()));
    assert_eq!(d["selection"]["compare_to"], "gold");
    assert!(d["selection"].get("map").is_none());
    set_role_source(&mut d, Role::CompareTo, &Source::None);
    assert_eq!(d["selection"]["map"], json!({}));
    // Value classes: the stored raw text of an entry is kept.
    d["selection"]["map"]["yes"] = json!({"evidence": 1, "raw": "agree"});
    set_value_class(&mut d, "yes", ValueClass::Evidence0);
    assert_eq!(
        d["selection"]["map"]["yes"],
        json!({"evidence": 0, "raw": "agree"})
    );
    set_value_class(&mut d, "yes", ValueClass::Unlisted);
    set_value_class(&mut d, "no", ValueClass::Evidence0);
    set_value_class(&mut d, "x", ValueClass::Refusal);
    set_value_class(&mut d, "0", ValueClass::ParserFailure);
    assert_eq!(
        d["selection"]["map"],
        json!({"no": 0, "0": {"evidence": null, "obtained": "parser_failure"}})
    );
    assert_eq!(d["selection"]["refusals"], json!(["x"]));
    set_value_class(&mut d, "x", ValueClass::Unlisted);
    assert!(d["selection"].get("refusals").is_none());
}

#[test]
fn the_dropdowns_offer_not_in_this_file_every_column_and_per_role_extras() {
    let p = csv_preview("model,resp_a,resp_b\nm,agree,disagree\n");
    let model = role_choices(&p, Role::Model, &Source::None);
    let labels: Vec<&str> = model.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels[0], "— not in this file —");
    assert!(labels.contains(&"model (text)"));
    assert!(
        model
            .iter()
            .any(|c| matches!(c.source, Source::Constant(_))),
        "model allows a constant"
    );
    let sel = role_choices(&p, Role::Selection, &Source::None);
    assert!(sel
        .iter()
        .any(|c| c.source == Source::Column("resp_{unpivot}".into())));
    assert!(
        !sel.iter().any(|c| matches!(c.source, Source::Constant(_))),
        "no constant Selection"
    );
    let cond = role_choices(&p, Role::Condition, &Source::None);
    assert!(cond
        .iter()
        .any(|c| c.source == Source::Unpivot(vec!["a".into(), "b".into()])));
    // A choice loaded from a mapping but absent from the file is still listed.
    let gone = Source::Column("elsewhere".into());
    assert!(role_choices(&p, Role::Model, &gone)
        .iter()
        .any(|c| c.source == gone));
}

#[test]
fn the_mapped_rows_are_the_first_responses_of_the_import_in_bundle_order() {
    let csv = "model,statement,answer\nb,s1,agree\na,s1,disagree\na,s2,unsure\n";
    let p = csv_preview(csv);
    let g = guess("t.csv", &p);
    let m = Mapping::from_json(&g.document.to_string()).unwrap();
    let out = mapped_rows(m, "t.csv", Format::Csv, csv.as_bytes(), 2).unwrap();
    assert_eq!(out.facets, vec!["model", "statement"]);
    // Models in first-seen order (b, a); two rows asked for.
    let rows: Vec<(Vec<String>, String, Option<u8>)> = out
        .rows
        .iter()
        .map(|r| (r.levels.clone(), r.raw.clone(), r.evidence))
        .collect();
    assert_eq!(
        rows,
        vec![
            (vec!["b".into(), "s1".into()], "agree".into(), Some(1)),
            (vec!["a".into(), "s1".into()], "disagree".into(), Some(0)),
        ]
    );
    assert_eq!(out.report.responses, 3);
    // "unsure" is a known word for Abstain (neither).
    assert_eq!(out.report.abstain, 1);
}

/// By hand: column `a` holds x, y, x, "" → x 2, y 1 (most frequent first), 2 distinct, 3 non-empty;
/// the JSON array column `l` holds [1, -1], [1], [] → elements 1 ×2, -1 ×1, lengths 0..2.
#[test]
fn the_preview_counts_each_columns_values_and_the_elements_of_array_columns() {
    let p = csv_preview("a,b\nx,long text here\ny,\nx,\n,\n");
    let a = &p.columns[0];
    assert_eq!(a.values, vec![("x".to_string(), 2), ("y".to_string(), 1)]);
    assert_eq!((a.distinct, a.non_empty, a.max_chars), (2, 3, 1));
    let jsonl = "{\"l\": [1, -1]}\n{\"l\": [1]}\n{\"l\": []}\n";
    let p = preview(
        jsonl.as_bytes(),
        "t.jsonl",
        Format::Jsonl,
        None,
        &Limits::default(),
        10,
    )
    .unwrap();
    let l = &p.columns[0];
    assert_eq!(l.values, vec![("1".to_string(), 2), ("-1".to_string(), 1)]);
    assert_eq!(l.array_len, Some((0, 2)));
    assert_eq!(l.distinct, 3);
}
