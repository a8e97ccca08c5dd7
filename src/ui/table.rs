//! One table component for every table of the app (issue 15 item 5): [`sortable_table`] draws a
//! `<table>` whose rows a reader can sort by any column — click a header, or focus its button and
//! press Enter / Space; a second activation reverses; `aria-sort` on the header says the order —
//! inside a horizontally scrolling region (`role=region`, focusable, named) that shows a shadow at
//! each clipped edge, under a sticky header row. Numeric columns (class `num`) are right-aligned under
//! right-aligned headers and sort by value ([`atlas_core::tables::sort_order`], missing values last);
//! text columns (class `text`) left-aligned under left-aligned headers, sorted by the browser's
//! locale collation. Sorting moves rows; it never changes a number or an export. Where rows are
//! not items but a record's fields (a case: Item, Prompt, Response…), [`key_value_table`] is the
//! plain variant in the same scroll region: row headers and value cells, no header row, no sorting.
//!
//! On it: a table of the core's layout ([`atlas_worker::Table`]) with its caption, notes and a
//! "Table as CSV" button ([`table_view`]), and that table alone ([`table_grid`]; the charts' table
//! alternatives). Their cells read in the display units of `atlas_core::format`
//! ([`display_table_cell`]: a `(%)` column's fractions as `13.4 %`, a `(pp)` column's points as
//! `+1.2 pp`, counts as `28,162`); the CSV keeps the table's own text and unrounded values. A cell holding a model id shows the model's label with the id on hover.

use std::collections::HashMap;
use std::sync::Arc;

use atlas_core::format::display_table_cell;
use atlas_core::tables::{is_numeric_column, sort_order, SortKey};
use atlas_worker::Table;
use leptos::prelude::*;

use crate::state::AtlasState;
use crate::ui::format::level_label;

/// One column of a [`sortable_table`].
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The header text.
    pub label: String,
    /// Whether the column holds numbers: right-aligned (class `num`) and sorted by value; else text:
    /// left-aligned (class `text`) and sorted by the locale.
    pub numeric: bool,
    /// Extra classes of the header cell (e.g. `reference`), or empty.
    pub class: String,
    /// The header's hover text, if any.
    pub title: Option<String>,
    /// A second line of the header under the label (e.g. the type detected in an imported column):
    /// the button then holds `<span class="column-name">` and `<span class="column-kind">`.
    pub detail: Option<String>,
}

impl Column {
    /// A numeric column headed `label`.
    pub fn number(label: impl Into<String>) -> Self {
        Column {
            label: label.into(),
            numeric: true,
            class: String::new(),
            title: None,
            detail: None,
        }
    }

    /// A text column headed `label`.
    pub fn text(label: impl Into<String>) -> Self {
        Column {
            numeric: false,
            ..Column::number(label)
        }
    }
}

/// The names a [`sortable_table`] carries: the `<table>`'s id and classes, the scroll region's
/// `aria-label`, and the ids that label and describe the table.
#[derive(Debug, Clone, Default)]
pub struct TableNames {
    /// Element id of the `<table>`.
    pub id: String,
    /// Classes of the `<table>` besides `sortable`.
    pub class: String,
    /// The scroll region's accessible name, e.g. `BER table`.
    pub region: String,
    /// `aria-labelledby` of the table.
    pub labelled_by: Option<String>,
    /// `aria-describedby` of the table.
    pub described_by: Option<String>,
}

/// Which column the reader sorted by, and whether descending; `None`: the table's own order.
pub type SortState = Option<(usize, bool)>;

/// The locale collation of the browser (`String.prototype.localeCompare`), numeric-aware.
fn locale_order(a: &str, b: &str) -> std::cmp::Ordering {
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"numeric".into(), &true.into());
    let _ = js_sys::Reflect::set(&options, &"sensitivity".into(), &"base".into());
    js_sys::JsString::from(a)
        .locale_compare(b, &js_sys::Array::new(), &options)
        .cmp(&0)
}

/// A sortable table: `columns` (the first is the row header's), `rows` = for each row its index
/// (what `render_row` gets) and one [`SortKey`] per column, `render_row(i)` the `<tr>` of row `i`
/// (its cells carry class `num` or `text` as their column does), `caption` an optional `<caption>`
/// view. When the columns change (a condition hidden), the sort resets to the table's order.
pub fn sortable_table(
    names: TableNames,
    columns: Signal<Vec<Column>>,
    rows: Signal<Vec<(usize, Vec<SortKey>)>>,
    render_row: impl Fn(usize) -> AnyView + Send + Sync + 'static,
    caption: Option<AnyView>,
) -> impl IntoView {
    sortable_table_keeping(
        names,
        columns,
        rows,
        render_row,
        caption,
        RwSignal::new(None),
    )
}

/// [`sortable_table`] whose sort state `sort` belongs to the caller, so that it outlives the table:
/// a table drawn again on every update (a run's results, redrawn per settled call) keeps the
/// reader's sort instead of falling back to the table's order.
pub fn sortable_table_keeping(
    names: TableNames,
    columns: Signal<Vec<Column>>,
    rows: Signal<Vec<(usize, Vec<SortKey>)>>,
    render_row: impl Fn(usize) -> AnyView + Send + Sync + 'static,
    caption: Option<AnyView>,
    sort: RwSignal<SortState>,
) -> impl IntoView {
    let column_count = Memo::new(move |_| columns.with(Vec::len));
    // Only a change of the column count resets the sort: the effect's first run (deferred until
    // after mounting) must not undo a sort made before it.
    Effect::new(move |prev: Option<usize>| {
        let n = column_count.get();
        if prev.is_some_and(|p| p != n) {
            sort.set(None);
        }
        n
    });
    let header = move || {
        columns
            .get()
            .into_iter()
            .enumerate()
            .map(|(k, col)| {
                let aria_sort = move || match sort.get() {
                    Some((c, false)) if c == k => "ascending",
                    Some((c, true)) if c == k => "descending",
                    _ => "none",
                };
                let activate = move |_| {
                    sort.update(|s| {
                        *s = match *s {
                            Some((c, descending)) if c == k => Some((k, !descending)),
                            _ => Some((k, false)),
                        }
                    })
                };
                let class = format!(
                    "{} {}",
                    if col.numeric { "num" } else { "text" },
                    col.class
                );
                let label = match col.detail.clone() {
                    Some(detail) => view! {
                        <span class="column-name">{col.label.clone()}</span>
                        <span class="column-kind">{detail}</span>
                    }
                    .into_any(),
                    None => col.label.clone().into_any(),
                };
                view! {
                    <th scope="col" class=class.trim().to_string() aria-sort=aria_sort title=col.title.clone()>
                        <button type="button" class="sort" on:click=activate>{label}</button>
                    </th>
                }
            })
            .collect_view()
    };
    let body = move || {
        let state: SortState = sort.get();
        let numeric: Vec<bool> = columns.with(|c| c.iter().map(|c| c.numeric).collect());
        rows.with(|rows| {
            let order: Vec<usize> = match state {
                Some((k, descending)) if k < numeric.len() => {
                    let keys: Vec<SortKey> = rows
                        .iter()
                        .map(|(_, keys)| keys.get(k).cloned().unwrap_or_else(SortKey::missing))
                        .collect();
                    sort_order(&keys, numeric[k], descending, locale_order)
                        .into_iter()
                        .map(|i| rows[i].0)
                        .collect()
                }
                _ => rows.iter().map(|(i, _)| *i).collect(),
            };
            order.into_iter().map(&render_row).collect_view()
        })
    };
    let scroller = NodeRef::<leptos::html::Div>::new();
    let clip = RwSignal::new((false, false));
    // `try_`: a frame requested just before the table was redrawn away (a form redraws its tables on
    // every change) finds the table's signals disposed; it then does nothing (a `get` would panic).
    let measure = move || {
        if let Some(el) = scroller.try_get_untracked().flatten() {
            let (left, width, client) = (el.scroll_left(), el.scroll_width(), el.client_width());
            clip.try_set((left > 1, left + client < width - 1));
        }
    };
    // Measure after each render, on scroll and on resize.
    Effect::new(move |_| {
        rows.track();
        columns.track();
        request_animation_frame(measure);
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || resize.remove());
    let TableNames {
        id,
        class,
        region,
        labelled_by,
        described_by,
    } = names;
    view! {
        <div class="table-scroll" class:clip-start=move || clip.get().0 class:clip-end=move || clip.get().1
            data-clipped=move || (clip.get().0 || clip.get().1).to_string()>
            <div class="scroll" node_ref=scroller tabindex="0" role="region" aria-label=format!("{region} (scrolls sideways when wider than the page)")
                on:scroll=move |_| measure() on:pointerenter=move |_| measure() on:focus=move |_| measure()>
                <table id=(!id.is_empty()).then_some(id) class=format!("sortable {class}").trim().to_string() aria-labelledby=labelled_by aria-describedby=described_by>
                    {caption}
                    <thead><tr>{header}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
        </div>
    }
}

/// The plain variant of the one table component, for a record's fields where rows are not items
/// (a case's Item, Prompt, Response…; nothing to sort): one row per `(key, value cell)` — the key as
/// the row header (`th scope=row`, class `text`), the value cell the caller's own `<td>` (so it keeps
/// its id and data attributes) — in the same named, focusable, sideways-scrolling region as
/// [`sortable_table`], under class `key-value` (no header row, no sort buttons). `names.id` and
/// `names.class` go on the `<table>`.
///
/// ```no_run
/// use audit_atlas::ui::table::{key_value_table, TableNames};
/// use leptos::prelude::*;
/// let rows = vec![("Item".into_any(), view! { <td>"s-tech"</td> }.into_any())];
/// let _table = key_value_table(
///     TableNames { id: "case-table".into(), region: "Case".into(), ..TableNames::default() },
///     rows,
/// );
/// ```
pub fn key_value_table(names: TableNames, rows: Vec<(AnyView, AnyView)>) -> impl IntoView {
    let TableNames {
        id,
        class,
        region,
        labelled_by,
        described_by,
    } = names;
    let body = rows
        .into_iter()
        .map(|(key, cell)| view! { <tr><th scope="row" class="text">{key}</th>{cell}</tr> })
        .collect_view();
    view! {
        <div class="table-scroll">
            <div class="scroll" tabindex="0" role="region" aria-label=format!("{region} (scrolls sideways when wider than the page)")>
                <table id=(!id.is_empty()).then_some(id) class=format!("key-value {class}").trim().to_string() aria-labelledby=labelled_by aria-describedby=described_by>
                    <tbody>{body}</tbody>
                </table>
            </div>
        </div>
    }
}

/// The loaded bundle's model labels by model id (`label` attribute, else the id), for tables whose
/// cells hold ids.
fn model_labels() -> Arc<HashMap<String, String>> {
    let map = use_context::<AtlasState>()
        .and_then(|s| s.loaded.try_get_untracked().flatten())
        .map(|l| {
            let audit = &l.audit;
            audit
                .model_ids()
                .iter()
                .enumerate()
                .map(|(m, id)| (id.to_string(), level_label(audit, audit.model_facet, m)))
                .collect()
        })
        .unwrap_or_default();
    Arc::new(map)
}

/// One table of the core's layout with a "Table as CSV" button: numeric cells carry their key and
/// unrounded value (`data-key`, `data-value`) for readers' tools and the tests. `key` prefixes the CSV
/// file name; `heading` is the level of the table's title (3 or 4) under its section.
pub fn table_view(t: &Table, key: &'static str, heading: u8) -> impl IntoView {
    let notes = (!t.notes.is_empty()).then(|| {
        let items = t
            .notes
            .iter()
            .map(|n| view! { <li>{n.clone()}</li> })
            .collect_view();
        view! { <ul class="notes">{items}</ul> }
    });
    let title_id = format!("{}-title", t.id);
    let provenance_id = format!("{}-provenance", t.id);
    let csv = t.to_csv();
    let file_name = format!("{key}-{}.csv", t.id);
    let csv_error = RwSignal::new(None::<String>);
    let download = move |_| {
        csv_error.set(
            crate::browser::export::download_text(&csv, "text/csv;charset=utf-8", &file_name)
                .err()
                .map(|e| format!("The download failed: {e}")),
        )
    };
    view! {
        <figure class="analysis-table">
            <figcaption>
                {if heading <= 3 {
                    view! { <h3 id=title_id.clone()>{t.title.clone()}</h3> }.into_any()
                } else {
                    view! { <h4 id=title_id.clone()>{t.title.clone()}</h4> }.into_any()
                }}
                <p class="provenance" id=provenance_id.clone()>{t.caption.clone()}</p>
            </figcaption>
            {table_grid(t, t.id.clone(), Some((title_id, provenance_id)))}
            {notes}
            <button class="table-csv" id=format!("{}-csv", t.id) on:click=download>"Table as CSV"</button>
            {move || csv_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </figure>
    }
}

/// The `<table>` of `t` with element id `id` on [`sortable_table`]: the header row, then one row per
/// table row whose first cell is the row header (`th scope=row`). With `described` = `(title id,
/// caption id)` it is an analysis table (`class="analysis"`, labelled by the title and described by
/// the caption, numeric cells with their key and unrounded value as `data-key`, `data-value`);
/// without, a plain table (a chart's table alternative). A column is numeric when every cell with a
/// value has a number ([`is_numeric_column`]).
pub fn table_grid(t: &Table, id: String, described: Option<(String, String)>) -> impl IntoView {
    let analysis = described.is_some();
    let (labelled, describedby) = described.unzip();
    let keys: Vec<Vec<SortKey>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(|c| c.sort_key()).collect())
        .collect();
    let columns: Vec<Column> = t
        .header
        .iter()
        .enumerate()
        .map(|(k, h)| Column {
            label: h.clone(),
            numeric: k > 0 && is_numeric_column(keys.iter().filter_map(|r| r.get(k))),
            class: String::new(),
            title: None,
            detail: None,
        })
        .collect();
    let labels = model_labels();
    let numeric: Vec<bool> = columns.iter().map(|c| c.numeric).collect();
    let header = t.header.clone();
    let table_rows = Arc::new(t.rows.clone());
    let render_row = move |r: usize| {
        let row = table_rows.get(r).cloned().unwrap_or_default();
        let cells = row
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let model = labels.get(c.text.as_str()).cloned();
                let title = model.as_ref().map(|_| format!("model id: {}", c.text));
                let value = c.value.as_deref().and_then(|v| v.parse::<f64>().ok());
                let shown = model.unwrap_or_else(|| {
                    display_table_cell(header.get(i).map_or("", String::as_str), &c.text, value)
                });
                let num = numeric.get(i).copied().unwrap_or(false);
                if i == 0 {
                    view! { <th scope="row" class="text" title=title>{shown}</th> }.into_any()
                } else {
                    view! { <td class:num=num class:text=!num title=title data-key=c.key.clone() data-value=c.value.clone()>{shown}</td> }
                        .into_any()
                }
            })
            .collect_view();
        view! { <tr>{cells}</tr> }.into_any()
    };
    let rows: Vec<(usize, Vec<SortKey>)> = keys.into_iter().enumerate().collect();
    let region = if t.title.is_empty() {
        "Table".to_string()
    } else {
        t.title.clone()
    };
    sortable_table(
        TableNames {
            id,
            class: if analysis {
                "analysis".into()
            } else {
                String::new()
            },
            region,
            labelled_by: labelled,
            described_by: describedby,
        },
        Signal::stored(columns),
        Signal::stored(rows),
        render_row,
        None,
    )
}
