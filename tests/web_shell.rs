//! The app shell's pure rules (`cargo test --target wasm32-unknown-unknown -p audit-atlas --test
//! web_shell`): which view a `view=` value or a link opens (old links included), how a navigation
//! rewrites the query, what a dropped file is taken for, and the recent-bundles list. Expected values
//! are written out by hand from the rules in the docs of `state::url`, `state::inbox` and
//! `views::bundles`.
#![cfg(target_arch = "wasm32")]

use audit_atlas::state::inbox::{classify_drop, declares_bundle, plan_drop, DropKind, DropPlan};
use audit_atlas::state::url::{with_view, AppView};
use audit_atlas::views::bundles::{remember, Recent, RECENT_MAX};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn every_view_key_opens_its_own_view() {
    for v in AppView::ALL {
        assert_eq!(AppView::for_view_param(v.key()), Some(v), "{}", v.key());
    }
}

#[wasm_bindgen_test]
fn old_view_values_open_the_view_that_now_holds_the_panel() {
    let cases = [
        ("reweight", AppView::Scores),
        ("atlas", AppView::Scores),
        ("atlas-c", AppView::Scores),
        ("atlas-d", AppView::Scores),
        ("atlas-a", AppView::Analyses),
        ("atlas-f", AppView::Analyses),
        ("atlas-coverage", AppView::Analyses),
        ("rq1", AppView::Analyses),
        ("rq2", AppView::Analyses),
        ("rq3", AppView::Rationale),
        ("atlas-g", AppView::Rationale),
        ("atlas-h", AppView::Rationale),
        ("inspector", AppView::Cases),
        ("clinical-case", AppView::Clinical),
        ("clinical-cell-cases", AppView::Clinical),
        ("clinical-heatmap", AppView::Clinical),
        ("bundle-judge", AppView::Pilot),
        ("clinical-pilot", AppView::Pilot),
        ("metadata", AppView::Overview),
    ];
    for (value, want) in cases {
        assert_eq!(AppView::for_view_param(value), Some(want), "{value}");
    }
    assert_eq!(AppView::for_view_param("no-such-panel"), None);
}

#[wasm_bindgen_test]
fn a_link_without_view_opens_cases_for_a_case_and_clinical_for_a_clinical_case() {
    assert_eq!(AppView::initial("", ""), AppView::Overview);
    assert_eq!(AppView::initial("?id=x&case=12", ""), AppView::Cases);
    assert_eq!(AppView::initial("?id=x", "#case=12"), AppView::Cases);
    assert_eq!(AppView::initial("?ccase=dr:m:q", ""), AppView::Clinical);
    // view= wins over the case keys; an unknown view= falls back to them.
    assert_eq!(AppView::initial("?view=scores&case=3", ""), AppView::Scores);
    assert_eq!(AppView::initial("?view=zzz&case=3", ""), AppView::Cases);
    assert_eq!(
        AppView::initial("?view=reweight", "#case=1"),
        AppView::Scores
    );
}

#[wasm_bindgen_test]
fn a_navigation_sets_view_and_keeps_the_other_keys_as_encoded() {
    assert_eq!(with_view("", "scores"), "view=scores");
    assert_eq!(
        with_view("?bundle=a%20b&w=c%3A1", "cases"),
        "bundle=a%20b&w=c%3A1&view=cases"
    );
    assert_eq!(
        with_view(
            "?id=x&view=reweight&policy=all_responses&view=again",
            "import"
        ),
        "id=x&view=import&policy=all_responses"
    );
}

#[wasm_bindgen_test]
fn a_dropped_file_is_a_bundle_only_when_its_json_declares_the_format() {
    let bundle = "{\n  \"format\" :\t\"audit-atlas-bundle\",\n  \"version\": 1 }";
    assert!(declares_bundle(bundle));
    assert_eq!(classify_drop("b.JSON", bundle), DropKind::Bundle);
    // Another "format" first, then the bundle's.
    assert!(declares_bundle(
        "{\"x\": {\"format\": \"csv\"}, \"format\": \"audit-atlas-bundle\"}"
    ));
    assert!(!declares_bundle("{\"format\": \"audit-atlas-bundle-v2\"}"));
    assert!(!declares_bundle(
        "[{\"model\": \"m\", \"answer\": \"agree\"}]"
    ));
    assert_eq!(
        classify_drop("results.json", "[{\"model\": \"m\"}]"),
        DropKind::Results
    );
    for name in [
        "a.csv",
        "a.TSV",
        "a.tab",
        "a.jsonl",
        "a.ndjson",
        "log.eval",
        "t.parquet",
    ] {
        assert_eq!(classify_drop(name, ""), DropKind::Results, "{name}");
    }
    for name in ["notes.pdf", "image.png", "README", "bundle.zip"] {
        assert_eq!(classify_drop(name, ""), DropKind::Unsupported, "{name}");
    }
}

fn kinds(items: &[(&str, DropKind)]) -> Vec<(String, DropKind)> {
    items.iter().map(|(n, k)| (n.to_string(), *k)).collect()
}

#[wasm_bindgen_test]
fn several_dropped_logs_go_to_import_together_in_drop_order_and_unsupported_ones_are_named() {
    use DropKind::*;
    let (plan, left) = plan_drop(&kinds(&[
        ("first.eval", Results),
        ("x.pdf", Unsupported),
        ("second.eval", Results),
    ]));
    assert_eq!(plan, DropPlan::Import(vec![0, 2]));
    assert_eq!(left, vec!["x.pdf".to_string()]);
    // One bundle alone (an unsupported file beside it is named, not opened).
    let (plan, left) = plan_drop(&kinds(&[("a.png", Unsupported), ("b.json", Bundle)]));
    assert_eq!(plan, DropPlan::OpenBundle(1));
    assert_eq!(left, vec!["a.png".to_string()]);
}

#[wasm_bindgen_test]
fn a_bundle_dropped_with_results_or_with_another_bundle_opens_nothing_and_says_so() {
    use DropKind::*;
    for files in [
        kinds(&[("b.json", Bundle), ("r.csv", Results)]),
        kinds(&[("b.json", Bundle), ("c.json", Bundle)]),
    ] {
        match plan_drop(&files).0 {
            DropPlan::Refuse(m) => {
                assert!(
                    m.contains("b.json") && m.contains("Drop one bundle alone"),
                    "{m}"
                )
            }
            other => panic!("expected Refuse, got {other:?}"),
        }
    }
    match plan_drop(&kinds(&[("a.pdf", Unsupported), ("b.png", Unsupported)])).0 {
        DropPlan::Refuse(m) => assert!(
            m.contains("None of the 2 files") && m.contains("a.pdf, b.png"),
            "{m}"
        ),
        other => panic!("expected Refuse, got {other:?}"),
    }
    match plan_drop(&[]).0 {
        DropPlan::Refuse(m) => assert!(m.starts_with("Nothing to open was dropped"), "{m}"),
        other => panic!("expected Refuse, got {other:?}"),
    }
}

#[wasm_bindgen_test]
fn the_recent_list_puts_the_last_open_first_without_duplicates_and_is_bounded() {
    let url = |n: &str| Recent {
        name: n.into(),
        url: Some(format!("https://x/{n}.json")),
        file: None,
    };
    let file = |n: &str| Recent {
        name: n.into(),
        url: None,
        file: Some(format!("{n}.json")),
    };
    let list = remember(vec![url("a"), file("b"), url("c")], url("c"));
    assert_eq!(list, vec![url("c"), url("a"), file("b")]);
    let list = remember(list, file("b"));
    assert_eq!(list, vec![file("b"), url("c"), url("a")]);
    let mut long = Vec::new();
    for i in 0..10 {
        long = remember(long, url(&i.to_string()));
    }
    assert_eq!(long.len(), RECENT_MAX);
    assert_eq!(long[0], url("9"));
}
