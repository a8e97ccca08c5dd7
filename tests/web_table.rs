//! The one table component in headless Chromium (`cargo test --target wasm32-unknown-unknown -p
//! audit-atlas --test web_table`): an analysis table (Tables 5–7, RQ tables) and a chart's table
//! alternative are the same `<table>` renderer (`ui::table::table_grid`) over the one table model,
//! and each keeps its markup — numeric cells with their key and unrounded value in an analysis table,
//! bare cells in a chart's table (the e2e tests read `#atlas-d-table tbody tr` cells by position);
//! the plain key-value variant (a case's fields) and a header's second line (an imported column's
//! type); a click on a header sorts numbers by value; which import-preview columns the content
//! warning hides.
#![cfg(target_arch = "wasm32")]

use atlas_core::tables::{Cell, SortKey, Table};
use audit_atlas::ui::table::{
    key_value_table, sortable_table, table_grid, table_view, Column, TableNames,
};
use audit_atlas::views::import::{free_text_columns, LONG_TEXT_CHARS};
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

/// Waits `ms` milliseconds (lets Leptos redraw after a click).
async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

/// The texts of the first cell of every row of the `<tbody>` at `selector`, in order.
fn first_cells(root: &web_sys::HtmlElement, selector: &str) -> Vec<String> {
    let body = root.query_selector(selector).unwrap().unwrap();
    let mut out = Vec::new();
    let mut row = body.first_element_child();
    while let Some(tr) = row {
        out.push(
            tr.first_element_child()
                .and_then(|c| c.text_content())
                .unwrap_or_default(),
        );
        row = tr.next_element_sibling();
    }
    out
}

#[wasm_bindgen_test]
fn a_key_value_table_has_row_headers_the_callers_cells_and_no_sort_buttons() {
    let root = mount(|| {
        key_value_table(
            TableNames {
                id: "kv".into(),
                class: "case-table".into(),
                region: "Case 3".into(),
                ..TableNames::default()
            },
            vec![
                ("Item".into_any(), view! { <td>"s-tech"</td> }.into_any()),
                (
                    "Selection".into_any(),
                    view! { <td id="kv-selection" data-a="1">"agree"</td> }.into_any(),
                ),
            ],
        )
    });
    let table = html(&root, "#kv");
    assert!(table.contains(r#"class="key-value case-table""#), "{table}");
    assert!(
        !table.contains("<thead") && !table.contains("button"),
        "{table}"
    );
    assert!(
        table.contains(r#"<tr><th class="text" scope="row">Item</th><td>s-tech</td></tr>"#),
        "{table}"
    );
    // The caller's cell keeps its id and data attributes.
    assert_eq!(
        html(&root, "#kv-selection"),
        r#"<td id="kv-selection" data-a="1">agree</td>"#
    );
    // The same named, focusable scroll region as the sortable tables.
    let region = html(&root, ".table-scroll > .scroll");
    assert!(
        region.contains(r#"role="region""#) && region.contains(r#"tabindex="0""#),
        "{region}"
    );
    assert!(region.contains("Case 3 (scrolls sideways"), "{region}");
}

#[wasm_bindgen_test]
fn a_column_detail_is_a_second_header_line_under_the_name() {
    let root = mount(|| {
        sortable_table(
            TableNames {
                id: "detail".into(),
                ..TableNames::default()
            },
            Signal::stored(vec![Column {
                detail: Some("integer".into()),
                ..Column::number("repeat")
            }]),
            Signal::stored(vec![(0, vec![SortKey::number(Some(1.0))])]),
            |_| view! { <tr><td class="num">"1"</td></tr> }.into_any(),
            None,
        )
    });
    let th = html(&root, "#detail thead th");
    assert!(
        th.contains(r#"<button class="sort" type="button"><span class="column-name">repeat</span><span class="column-kind">integer</span></button>"#),
        "{th}"
    );
}

#[wasm_bindgen_test]
async fn a_header_click_sorts_numbers_by_value_then_reverses() {
    // Effects and redraws run on the wasm-bindgen executor (as in the app).
    let _ = any_spawner::Executor::init_wasm_bindgen();
    // Values 10, 9, 100: by value ascending 9, 10, 100 (as text it would be 10, 100, 9).
    let values = [10.0, 9.0, 100.0];
    let root = mount(move || {
        sortable_table(
            TableNames {
                id: "by-value".into(),
                ..TableNames::default()
            },
            Signal::stored(vec![Column::number("n")]),
            Signal::stored(
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i, vec![SortKey::number(Some(*v))]))
                    .collect(),
            ),
            move |i| view! { <tr><td class="num">{values[i].to_string()}</td></tr> }.into_any(),
            None,
        )
    });
    assert_eq!(first_cells(&root, "#by-value tbody"), ["10", "9", "100"]);
    // Clicked at once, before the table's effects first ran (it once reset the sort on that run).
    let button: web_sys::HtmlElement = root
        .query_selector("#by-value .sort")
        .unwrap()
        .unwrap()
        .unchecked_into();
    button.click();
    sleep(30).await;
    assert_eq!(first_cells(&root, "#by-value tbody"), ["9", "10", "100"]);
    assert!(html(&root, "#by-value thead th").contains(r#"aria-sort="ascending""#));
    button.click();
    sleep(30).await;
    assert_eq!(first_cells(&root, "#by-value tbody"), ["100", "10", "9"]);
    assert!(html(&root, "#by-value thead th").contains(r#"aria-sort="descending""#));
}

#[wasm_bindgen_test]
fn the_import_preview_hides_long_texts_and_the_rationale_column_only() {
    // Hand-made rows: `model` and `answer` are short labels; `response` has one value of exactly
    // LONG_TEXT_CHARS (40) characters, `note` one of 39; `why` is short but is the Rationale's column.
    let forty = "x".repeat(LONG_TEXT_CHARS);
    let thirty_nine = "y".repeat(LONG_TEXT_CHARS - 1);
    assert_eq!(forty.chars().count(), 40);
    let rows = vec![
        vec![
            "m1".into(),
            "agree".into(),
            "short".into(),
            thirty_nine,
            "ok".into(),
        ],
        vec![
            "m2".into(),
            "disagree".into(),
            forty,
            "z".into(),
            "no".into(),
        ],
    ];
    let names = ["model", "answer", "response", "note", "why"];
    assert_eq!(
        free_text_columns(&names, &rows, Some("why")),
        [false, false, true, false, true]
    );
    // No Rationale role: only the long column; characters, not bytes (40 × "é" = 80 bytes).
    let accents = vec![vec!["é".repeat(39)], vec!["é".repeat(40)]];
    assert_eq!(free_text_columns(&["t"], &accents[..1], None), [false]);
    assert_eq!(free_text_columns(&["t"], &accents, None), [true]);
}
