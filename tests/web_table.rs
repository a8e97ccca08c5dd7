//! The one table component in headless Chromium (`cargo test --target wasm32-unknown-unknown -p
//! audit-atlas --test web_table`): an analysis table (Tables 5–7, RQ tables) and a chart's table
//! alternative are the same `<table>` renderer (`ui::table::table_grid`) over the one table model,
//! and each keeps its markup — numeric cells with their key and unrounded value in an analysis table,
//! bare cells in a chart's table (the e2e tests read `#atlas-d-table tbody tr` cells by position).
#![cfg(target_arch = "wasm32")]

use atlas_core::tables::{Cell, Table};
use audit_atlas::ui::table::{table_grid, table_view};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Mounts `view` in a fresh `<div>` of the page and returns the div.
fn mount<V: IntoView + 'static>(view: impl FnOnce() -> V + 'static) -> web_sys::HtmlElement {
    let document = web_sys::window().unwrap().document().unwrap();
    let div: web_sys::HtmlElement = document.create_element("div").unwrap().unchecked_into();
    document.body().unwrap().append_child(&div).unwrap();
    leptos::mount::mount_to(div.clone(), view).forget();
    div
}

fn html(root: &web_sys::HtmlElement, selector: &str) -> String {
    root.query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .outer_html()
}

#[wasm_bindgen_test]
fn a_chart_table_alternative_is_a_plain_table_of_its_texts() {
    let t = Table::from_texts(
        "caption".into(),
        vec!["model".into(), "rank: a".into()],
        vec![vec!["m1".into(), "2".into()]],
    );
    let root = mount(move || table_grid(&t, "panel-table".into(), None));
    let table = html(&root, "#panel-table");
    // The sortable table component (issue 15): every header a sort button with `aria-sort`, a
    // number column right-aligned (`num`), a text column left (`text`), the texts unchanged.
    assert!(table.contains(r#"class="sortable""#), "{table}");
    assert!(
        table.contains(r#"<th class="num" scope="col" aria-sort="none"><button class="sort" type="button">rank: a</button></th>"#),
        "{table}"
    );
    assert!(
        table.contains(r#"<th class="text" scope="row">m1</th>"#),
        "{table}"
    );
    assert_eq!(
        html(&root, "#panel-table tbody td"),
        r#"<td class="num">2</td>"#
    );
}

#[wasm_bindgen_test]
fn an_analysis_table_keeps_its_caption_keys_values_and_csv_button() {
    let t = Table {
        id: "clinical-table5".into(),
        title: "Table 5 layout".into(),
        caption: "bundle b".into(),
        header: vec!["Model".into(), "CFV (%)".into(), "Note".into()],
        rows: vec![vec![
            Cell::text("Alpha"),
            Cell::percent("m/cfv", Some(1.0 / 3.0)),
            Cell::text("why"),
        ]],
        notes: vec!["a note".into()],
    };
    let root = mount(move || table_view(&t, "clinical", 3));
    let table = html(&root, "#clinical-table5");
    assert!(table.contains(r#"class="sortable analysis""#), "{table}");
    assert!(
        table.contains(r#"aria-labelledby="clinical-table5-title""#)
            && table.contains(r#"aria-describedby="clinical-table5-provenance""#),
        "{table}"
    );
    let value = (1.0f64 / 3.0).to_string();
    let cfv = html(&root, "#clinical-table5 td[data-key]");
    assert!(
        cfv.contains(r#"data-key="m/cfv""#)
            && cfv.contains(&format!(r#"data-value="{value}""#))
            // Display unit of a "(%)" column: 1/3 → 33.333… % → one decimal, "33.3 %".
            && cfv.contains(">33.3 %<"),
        "{cfv}"
    );
    assert!(html(&root, "#clinical-table5 td.text").contains(">why<"));
    assert!(html(&root, "#clinical-table5-provenance").contains("bundle b"));
    assert!(html(&root, "#clinical-table5-csv").contains("Table as CSV"));
    assert!(html(&root, "ul.notes").contains("a note"));
}
