//! One table component for the app: a table of the core's layout ([`atlas_worker::Table`]) with its
//! caption, notes and a "Table as CSV" button ([`table_view`]), and the `<table>` alone
//! ([`table_grid`]), which the charts' table alternatives use too.

use atlas_worker::Table;
use leptos::prelude::*;

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
            <div class="scroll">
                {table_grid(t, t.id.clone(), Some((title_id, provenance_id)))}
            </div>
            {notes}
            <button class="table-csv" id=format!("{}-csv", t.id) on:click=download>"Table as CSV"</button>
            {move || csv_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </figure>
    }
}

/// The `<table>` element of `t` with element id `id`: the header row, then one row per table row
/// whose first cell is the row header (`th scope=row`). With `described` = `(title id, caption id)` it
/// is an analysis table (`class="analysis"`, labelled by the title and described by the caption, text
/// cells marked `class="text"`, numeric cells with their key and unrounded value as `data-key`,
/// `data-value`); without, a plain table (a chart's table alternative).
pub fn table_grid(t: &Table, id: String, described: Option<(String, String)>) -> impl IntoView {
    let analysis = described.is_some();
    let (labelled, describedby) = described.unzip();
    let header = t
        .header
        .iter()
        .map(|h| view! { <th scope="col">{h.clone()}</th> })
        .collect_view();
    let rows = t
        .rows
        .iter()
        .map(|row| {
            let cells = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        view! { <th scope="row">{c.text.clone()}</th> }.into_any()
                    } else {
                        view! { <td class:text=analysis && c.key.is_none() data-key=c.key.clone() data-value=c.value.clone()>{c.text.clone()}</td> }
                            .into_any()
                    }
                })
                .collect_view();
            view! { <tr>{cells}</tr> }
        })
        .collect_view();
    view! {
        <table id=id class:analysis=analysis aria-labelledby=labelled aria-describedby=describedby>
            <thead><tr>{header}</tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
