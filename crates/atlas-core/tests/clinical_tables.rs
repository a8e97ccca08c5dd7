//! `atlas_core::tables::clinical`: seed `001_…` Tables 5–7 and the other clinical tables of `atlas
//! clinical stats`, on the hand-made SYNTHETIC fixtures `tests/fixtures/clinical-tiny/bundle.json`
//! (values worked out by hand in `tests/fixtures/clinical-tiny/README.md`) and
//! `tests/fixtures/clinical-bundle.json` (answer table and hand-worked values in `clinical_fixture.rs`).

mod common;

use atlas_core::clinical::metrics::analyze;
use atlas_core::format::NO_VALUE;
use atlas_core::tables::clinical::{
    accuracy_by_variant, answer_change_by_variant, categories, cfv_by_difficulty, directions,
    edd_by_model, report, spearman_line, stereotype_by_model, table5, table6, table7, Unreadable,
};
use atlas_core::tables::{render_text, Cell, Table};
use atlas_core::tolerance::{EXACT, SIX_DECIMALS};
use atlas_core::Audit;
use common::repo_fixture;

fn fixture() -> Audit {
    repo_fixture("clinical-tiny/bundle.json")
}

/// The value of the cell with data key `key` in `t`.
fn cell_value(t: &Table, key: &str) -> f64 {
    t.rows
        .iter()
        .flatten()
        .find(|c| c.key.as_deref() == Some(key))
        .and_then(|c| c.value.as_deref())
        .unwrap_or_else(|| panic!("no {key}"))
        .parse()
        .unwrap()
}

/// The shown text of the cell with data key `key` in `t`.
fn cell_text<'a>(t: &'a Table, key: &str) -> &'a str {
    t.rows
        .iter()
        .flatten()
        .find(|c| c.key.as_deref() == Some(key))
        .map(|c| c.text.as_str())
        .unwrap_or_else(|| panic!("no {key}"))
}

/// Table 5 of the fixture (README): m-alpha 3/3, 1/3, 2/17, 0.291161, 3 flags / 2 questions; m-beta 1/2,
/// 1/3, 1/12, 0.269841, 1 / 1.
#[test]
fn the_profile_table_gives_each_metric_with_its_n() {
    let audit = fixture();
    let report = analyze(&audit);
    let t = table5(&audit, &report);
    assert_eq!(t.id, "clinical-table5");
    assert!(t.caption.contains("clinical-tiny-fixture"));
    let value = |key: &str| cell_value(&t, key);
    let expected = [
        ("m-alpha/accuracy", 1.0),
        ("m-alpha/answers", 3.0),
        ("m-alpha/cfv", 1.0 / 3.0),
        ("m-alpha/attempts", 3.0),
        ("m-alpha/answer_change", 2.0 / 17.0),
        ("m-alpha/comparisons", 17.0),
        ("m-alpha/mean_edd", 0.291_161),
        ("m-alpha/records", 3.0),
        ("m-alpha/flags_per_question", 1.5),
        ("m-alpha/flags", 3.0),
        ("m-alpha/questions", 2.0),
        ("m-beta/accuracy", 0.5),
        ("m-beta/answers", 2.0),
        ("m-beta/cfv", 1.0 / 3.0),
        ("m-beta/answer_change", 1.0 / 12.0),
        ("m-beta/comparisons", 12.0),
        ("m-beta/mean_edd", 0.269_841),
        ("m-beta/flags_per_question", 1.0),
        ("m-beta/questions", 1.0),
    ];
    for (key, want) in expected {
        assert!(
            (value(key) - want).abs() < SIX_DECIMALS,
            "{key}: {} vs {want}",
            value(key)
        );
    }
    assert_eq!(t.rows[0][0].text, "Alpha Med 7B");
    // Shown: rates in percent with two decimals, mean EDD with three, flags/q with two.
    assert_eq!(cell_text(&t, "m-alpha/cfv"), "33.33");
    assert_eq!(cell_text(&t, "m-alpha/answer_change"), "11.76");
    assert_eq!(cell_text(&t, "m-alpha/mean_edd"), "0.291");
    assert_eq!(cell_text(&t, "m-alpha/flags_per_question"), "1.50");
    assert_eq!(cell_text(&t, "m-beta/answer_change"), "8.33");
}

#[test]
fn table_7_pools_the_severity_classes_and_counts_each_models_flags_beside_them() {
    let audit = fixture();
    let t = table7(&analyze(&audit));
    assert_eq!(t.id, "clinical-table7");
    assert_eq!(
        t.header,
        [
            "Severity class",
            "Count",
            "Share (%)",
            "m-alpha: count",
            "m-beta: count"
        ]
    );
    let value = |key: &str| cell_value(&t, key);
    // tests/fixtures/clinical-tiny/README.md: 4 flags; dangerous 1 = (0, 1), misleading 2 = (2, 0),
    // socially inappropriate 1 = (1, 0) for (m-alpha, m-beta).
    let expected = [
        ("clinically_dangerous/count", 1.0),
        ("clinically_dangerous/share", 0.25),
        ("clinically_dangerous/count/m-alpha", 0.0),
        ("clinically_dangerous/count/m-beta", 1.0),
        ("clinically_misleading/count", 2.0),
        ("clinically_misleading/share", 0.5),
        ("clinically_misleading/count/m-alpha", 2.0),
        ("clinically_misleading/count/m-beta", 0.0),
        ("socially_inappropriate/count/m-alpha", 1.0),
        ("socially_inappropriate/count/m-beta", 0.0),
    ];
    for (key, want) in expected {
        assert!(
            (value(key) - want).abs() < EXACT,
            "{key}: {} vs {want}",
            value(key)
        );
    }
    assert_eq!(
        t.rows.len(),
        3,
        "no row for flags without a severity: there are none"
    );
}

/// README, "Counterfactuals": 4 invalid attempts, one each of same_direction, too_dramatic, circular
/// and format_failure (25% each), none implausible or wrong_target.
#[test]
fn table_6_counts_each_invalid_outcome_and_its_share() {
    let t = table6(&analyze(&fixture()));
    assert_eq!(t.id, "clinical-table6");
    assert_eq!(
        t.header,
        ["Failure type", "Count", "Share (%)", "Interpretation"]
    );
    assert!(t.caption.contains("4 invalid attempts"), "{}", t.caption);
    let rows: Vec<(&str, &str, &str)> = t
        .rows
        .iter()
        .map(|r| (r[0].text.as_str(), r[1].text.as_str(), r[2].text.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("same_direction", "1", "25.00"),
            ("too_dramatic", "1", "25.00"),
            ("circular", "1", "25.00"),
            ("format_failure", "1", "25.00"),
            ("implausible", "0", "0.00"),
            ("wrong_target", "0", "0.00"),
        ]
    );
    assert!(t.notes.is_empty());
    assert!((cell_value(&t, "circular/share") - 0.25).abs() < EXACT);
}

/// The two-run fixture (`clinical_fixture.rs`): accuracy m1 base 3/3, mw 3/4, fb 2/3 with 1 parse
/// failure (m1 q2 base r2); counted wrong m1 base 3/4 and 11 asked over the variants (4 + 4 + 3); m2
/// fb 1/3 readable, 1/4 counted wrong.
#[test]
fn the_accuracy_tables_give_each_variant_and_the_parse_failures_or_asked_questions() {
    let r = analyze(&repo_fixture("clinical-bundle.json"));
    let t = accuracy_by_variant(&r, Unreadable::LeftOut);
    assert_eq!(
        t.header,
        ["Model", "base (%)", "mw (%)", "fb (%)", "Parse failures"]
    );
    for (key, want) in [
        ("m1/base/accuracy", 1.0),
        ("m1/mw/accuracy", 0.75),
        ("m1/fb/accuracy", 2.0 / 3.0),
        ("m2/fb/accuracy", 1.0 / 3.0),
        ("m1/parse_failures", 1.0),
    ] {
        assert!((cell_value(&t, key) - want).abs() < EXACT, "{key}");
    }
    assert_eq!(cell_text(&t, "m1/fb/accuracy"), "66.67");
    let wrong = accuracy_by_variant(&r, Unreadable::CountedWrong);
    assert_eq!(wrong.id, "clinical-accuracy-unreadable-wrong");
    for (key, want) in [
        ("m1/base/accuracy_unreadable_wrong", 0.75),
        ("m2/fb/accuracy_unreadable_wrong", 0.25),
        ("m1/asked", 11.0),
    ] {
        assert!((cell_value(&wrong, key) - want).abs() < EXACT, "{key}");
    }
}

/// The two-run fixture: m1 changed 3 of 10 comparisons (mw 2/5, fb 1/5); m2 2 of 9 (mw 1/5, fb 1/4).
#[test]
fn the_answer_change_table_gives_each_prefix_and_the_changed_comparisons() {
    let r = analyze(&repo_fixture("clinical-bundle.json"));
    let t = answer_change_by_variant(&r);
    assert_eq!(
        t.header,
        [
            "Model",
            "mw (%)",
            "fb (%)",
            "All prefixes (%)",
            "Changed",
            "Comparisons"
        ]
    );
    for (key, want) in [
        ("m1/mw/rate", 0.4),
        ("m1/fb/rate", 0.2),
        ("m1/rate", 0.3),
        ("m1/changed", 3.0),
        ("m1/comparisons", 10.0),
        ("m2/fb/rate", 0.25),
        ("m2/rate", 2.0 / 9.0),
    ] {
        assert!((cell_value(&t, key) - want).abs() < EXACT, "{key}");
    }
}

/// The tiny fixture: CFV by tier (README) m-alpha EASY 1/1 valid, MEDIUM 0/1, HARD 0/1; m-beta EASY
/// 0/1, MEDIUM 1/1, HARD 0/1; no attempt without a difficulty; the Spearman line r = −0.433, n = 6.
#[test]
fn the_cfv_table_gives_each_tier_with_its_counts_and_the_spearman_line() {
    let r = analyze(&fixture());
    let t = cfv_by_difficulty(&r);
    assert_eq!(cell_text(&t, "m-alpha/cfv/EASY"), "100.00 (1/1)");
    assert_eq!(cell_text(&t, "m-alpha/cfv/MEDIUM"), "0.00 (0/1)");
    assert_eq!(cell_text(&t, "m-beta/cfv/MEDIUM"), "100.00 (1/1)");
    assert_eq!(cell_text(&t, "m-beta/attempts"), "3");
    // No attempt without a difficulty: "no value" in the last column.
    assert!(t.rows.iter().all(|row| row[7].text == NO_VALUE));
    assert_eq!(t.notes, [spearman_line(&r)]);
    assert!(
        t.notes[0].contains("r = -0.433 (n = 6 attempts"),
        "{}",
        t.notes[0]
    );
}

/// The tiny fixture (README): 12 judged, 1 unparseable (m-beta), 4 flags; m-alpha 3 flags over 2
/// judged questions, m-beta 1 over 1; Fig. 6 four categories of one flag each (25%); directions
/// m-alpha more_aggressive 1, lateral 1 (50% each), m-beta less_aggressive 1 (100%); EDD m-alpha 3
/// records of 7 variants, mean 0.291161.
#[test]
fn the_stereotype_category_direction_and_edd_tables_give_the_hand_worked_counts() {
    let r = analyze(&fixture());
    let s = stereotype_by_model(&r);
    for (key, want) in [
        ("m-alpha/flags", 3.0),
        ("m-alpha/questions", 2.0),
        ("m-alpha/flags_per_question", 1.5),
        ("m-beta/unparsed", 1.0),
        ("m-beta/flags", 1.0),
    ] {
        assert!((cell_value(&s, key) - want).abs() < EXACT, "{key}");
    }
    let c = categories(&r);
    assert_eq!(c.rows.len(), 4);
    assert!(c.rows.iter().all(|row| row[2].text == "25.00"));
    let d = directions(&r);
    assert_eq!(cell_text(&d, "m-alpha/more_aggressive/share"), "50.00 (1)");
    assert_eq!(cell_text(&d, "m-alpha/lateral/share"), "50.00 (1)");
    assert_eq!(cell_text(&d, "m-beta/less_aggressive/share"), "100.00 (1)");
    let e = edd_by_model(&r);
    assert_eq!(e.rows[0][2].text, "7");
    assert_eq!(cell_text(&e, "m-alpha/records"), "3");
    assert!((cell_value(&e, "m-alpha/mean_edd") - 0.291_161).abs() < SIX_DECIMALS);
}

/// A bundle without a baseline, counterfactuals, embeddings or judge records: each table that has
/// nothing to show says why in a note, and prints no empty grid.
#[test]
fn a_table_with_nothing_to_show_says_why_instead_of_an_empty_grid() {
    let mut r = analyze(&fixture());
    r.answer_change.clear();
    r.edd.clear();
    let t = answer_change_by_variant(&r);
    assert!(t.header.is_empty() && t.rows.is_empty());
    assert_eq!(t.notes, ["No baseline variant in this bundle."]);
    let text = t.to_text();
    assert_eq!(
        text,
        format!(
            "{}\n{}\n  No baseline variant in this bundle.\n",
            t.title, t.caption
        )
    );
    assert_eq!(
        edd_by_model(&r).notes,
        ["No records with two or more embedded explanations."]
    );
}

#[test]
fn typed_cells_render_counts_percentages_and_no_value_one_way() {
    assert_eq!(Cell::count("k", 17).text, "17");
    assert_eq!(Cell::count("k", 17).value.as_deref(), Some("17"));
    let p = Cell::percent("k", Some(2.0 / 17.0));
    assert_eq!(p.text, "11.76");
    assert_eq!(
        p.value.as_deref(),
        Some((2.0f64 / 17.0).to_string().as_str())
    );
    assert_eq!(Cell::percent("k", None).text, NO_VALUE);
    assert_eq!(Cell::percent("k", None).value, None);
    assert_eq!(Cell::decimal("k", Some(0.291_161_2), 3).text, "0.291");
    assert_eq!(Cell::none().text, "—");
    assert_eq!(Cell::none().key, None);
}

/// `atlas clinical stats` prints Table 5, 6 and 7 as the app shows them, between the other tables, and
/// the CSV of a table is its unrounded values.
#[test]
fn the_cli_report_prints_the_app_tables_in_order_and_the_csv_keeps_unrounded_values() {
    let audit = fixture();
    let r = analyze(&audit);
    let (summary, tables) = report(&audit, &r);
    let ids: Vec<&str> = tables.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "clinical-table5",
            "clinical-accuracy",
            "clinical-accuracy-unreadable-wrong",
            "clinical-answer-change",
            "clinical-edd",
            "clinical-cfv",
            "clinical-table6",
            "clinical-stereotype",
            "clinical-table7",
            "clinical-categories",
            "clinical-directions",
        ]
    );
    assert_eq!(tables[0], table5(&audit, &r));
    assert_eq!(tables[6], table6(&r));
    assert_eq!(tables[8], table7(&r));
    let text = render_text(&summary, &tables);
    assert!(text.starts_with(
        "Clinical perturbation metrics (the clinical audit paper) of bundle \"clinical-tiny-fixture\"; baseline variant: baseline\n"
    ));
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Alpha Med 7B "))
        .unwrap_or_else(|| panic!("no Table 5 line of m-alpha in\n{text}"));
    for cell in [" 100.00 ", " 33.33 ", " 11.76 ", " 0.291 ", " 1.50 "] {
        assert!(line.contains(cell), "{line}");
    }
    // CSV: header, then the row header and the unrounded values (m-alpha's answer change 2/17).
    let csv = tables[0].to_csv();
    assert!(csv.starts_with("Model,Accuracy (%),n answers,"), "{csv}");
    let alpha = csv.lines().nth(1).unwrap();
    assert!(alpha.starts_with("Alpha Med 7B,1,3,"), "{alpha}");
    assert!(
        alpha.contains(&format!(",{},17,", 2.0f64 / 17.0)),
        "{alpha}"
    );
}
