//! The "Import your own results" panel: a CSV / TSV / JSONL / JSON results file plus a mapping
//! (`docs/import-mapping.md`) become a bundle in the tab, with the same code as `atlas import`
//! (crate `atlas-import`).
//!
//! Steps, as a reader sees them: pick a results file → a preview of its first rows with the detected
//! column types (name and type as separate elements), under a content warning: the free-text cells
//! (the Rationale's column and any column with a value of [`LONG_TEXT_CHARS`] characters or more,
//! [`free_text_columns`]) of the preview, the value mapping and the mapped rows stay hidden until the
//! reader acknowledges it, asked again for each file; the **form-based column mapper**: one row per
//! role (model, statement, condition, template, repeat, Selection, Rationale, …) with a dropdown of
//! the file's columns, preselected by [`atlas_import::guess()`] from the real column names and values
//! with the reason shown, the Selection's value mapping as a table (file value → class, with counts
//! from the preview), and a live preview of the first mapped rows as they will enter the bundle (the
//! same import code run on the previewed bytes); the raw JSON mapping stays in a collapsed "Edit as
//! JSON" editor kept in sync both ways (a JSON parse error names line and column and the form keeps
//! its last valid state) →
//! **Import** streams the whole file through [`atlas_import::Importer`] chunk by chunk with a progress
//! bar (the file is never held in memory: only the importer's compact observations are) → the
//! validation report (records skipped and why, duplicates, unmapped values, cells per Selection
//! value) → **Open in the explorer** replaces the loaded bundle, **Download** saves the bundle, the
//! mapping and the report. An import that fails shows the error (input, record, line, field) and keeps
//! the bundle already loaded.

use std::rc::Rc;
use std::sync::Arc;

use atlas_import::form::{self, MappedPreview};
use atlas_import::guess::GUESS_ROWS;
use atlas_import::{
    Format, Guess, Importer, Limits, Mapping, Preview, Report, Role, Source, ValueClass, ValueKind,
};
use js_sys::Uint8Array;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::File;

use crate::browser::export::{download_bytes, download_text, DownloadError};
use crate::browser::loader::{for_each_chunk, now_ms};
use crate::state::AtlasState;
use crate::ui::format::thousands;
use crate::ui::table::{key_value_table, sortable_table, Column, TableNames};
use crate::views::import_logs::{self, LogFiles};
use atlas_core::tables::SortKey;
use atlas_import::logs::LogFormat;

/// Bytes read from the start of a file for the preview.
const PREVIEW_BYTES: f64 = 256.0 * 1024.0;
/// Records shown in the preview table (the guesses use [`GUESS_ROWS`]).
const PREVIEW_ROWS: usize = 8;
/// Mapped responses shown in the live preview.
const MAPPED_ROWS: usize = 8;
/// A previewed value this long (characters) or longer is free text — a response, a Rationale, a
/// statement — which the preview hides until the content warning is acknowledged
/// ([`free_text_columns`]); labels, ids and answers are shorter.
pub const LONG_TEXT_CHARS: usize = 40;

/// Which columns of `rows` (one `Vec` per record, one value per column) hold free text: any value of
/// [`LONG_TEXT_CHARS`] characters or more, or the column is the one named `rationale` (the column
/// the mapping's Rationale role reads; `names` are the columns' names, in the order of the rows'
/// values). The import preview hides these
/// columns' cells until the reader acknowledges the content warning, as every other view hides
/// model texts.
pub fn free_text_columns(
    names: &[&str],
    rows: &[Vec<String>],
    rationale: Option<&str>,
) -> Vec<bool> {
    names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            rationale == Some(*name)
                || rows.iter().any(|r| {
                    r.get(k)
                        .is_some_and(|v| v.chars().count() >= LONG_TEXT_CHARS)
                })
        })
        .collect()
}

/// The column the mapping's Rationale role reads, if it names one.
fn rationale_column(d: &Value) -> Option<String> {
    match form::role_source(d, Role::Rationale) {
        Source::Column(c) => Some(c),
        _ => None,
    }
}

/// What stands in for a free-text cell before the content warning is acknowledged.
const HIDDEN_TEXT: &str = "(text hidden until the content warning is acknowledged)";

/// A file's preview with the bytes it was computed from (cut at a record boundary), for the live
/// mapped-rows preview.
#[derive(Debug)]
struct Previewed {
    preview: Preview,
    bytes: Vec<u8>,
    name: String,
    format: Format,
}

/// Where the import stands.
#[derive(Clone, Debug)]
enum ImportState {
    Idle,
    Running { read: u64, total: u64 },
    Failed(String),
    Done(Rc<Done>),
}

/// A finished import: the report, the bundle as JSON bytes, and timings.
#[derive(Debug)]
struct Done {
    report: Report,
    bundle_id: String,
    json: Arc<[u8]>,
    input_bytes: u64,
    seconds: f64,
}

/// Timings and memory of the last import, for the benchmark (`window.__atlasImport`).
fn publish(done: &Done) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let record = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&record, &JsValue::from_str(k), &v);
    };
    set("bundle", JsValue::from_str(&done.bundle_id));
    set("input_bytes", JsValue::from_f64(done.input_bytes as f64));
    set("bundle_bytes", JsValue::from_f64(done.json.len() as f64));
    set("seconds", JsValue::from_f64(done.seconds));
    set("records", JsValue::from_f64(done.report.records as f64));
    set("cells", JsValue::from_f64(done.report.cells as f64));
    let wasm_bytes = wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| {
            m.buffer()
                .unchecked_into::<js_sys::ArrayBuffer>()
                .byte_length()
        })
        .unwrap_or(0);
    set(
        "wasm_memory_bytes",
        JsValue::from_f64(f64::from(wasm_bytes)),
    );
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("__atlasImport"), &record);
}

/// The import panel.
#[component]
pub fn ImportPanel() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let file = RwSignal::new_local(None::<File>);
    let preview = RwSignal::new_local(None::<Result<Rc<Previewed>, String>>);
    let mapping_text = RwSignal::new(String::new());
    // The form's state: the last mapping text that parsed as JSON (`Value::Null` before any).
    let doc = RwSignal::new(Value::Null);
    let json_error = RwSignal::new(None::<String>);
    let guessed = RwSignal::new_local(None::<Rc<Guess>>);
    // True once a mapping file was loaded: choosing another results file keeps it.
    let keep_mapping = RwSignal::new(false);
    let status = RwSignal::new_local(ImportState::Idle);
    let notice = RwSignal::new(None::<String>);
    // Whether the reader acknowledged the content warning for the file previewed (a new file asks
    // again): until then the preview's free-text cells stay hidden.
    let texts_shown = RwSignal::new(false);
    // The shell's notice line and navigation (absent only where the panel is mounted alone).
    let shell_notice = use_context::<crate::state::nav::ShellNotice>();
    let navigator = use_context::<crate::state::nav::Navigator>();
    // Tool logs selected (Inspect, lm-eval, promptfoo, Parquet) and their detected format in words.
    let logs = RwSignal::new_local(None::<Rc<LogFiles>>);
    let detected = RwSignal::new(None::<String>);
    // Several plain results files chosen or dropped: which one is read.
    let several = RwSignal::new(None::<String>);

    // A file picked here or dropped on the page (the shell's inbox) is selected the same way.
    let select = move |picked: Vec<File>| {
        let Some(first) = picked.first().cloned() else {
            return;
        };
        status.set(ImportState::Idle);
        preview.set(None);
        texts_shown.set(false);
        detected.set(None);
        logs.set(None);
        several.set(None);
        file.set(Some(first.clone()));
        spawn_local(async move {
            let format = match import_logs::detect(&first).await {
                Ok(f) => f,
                Err(e) => {
                    preview.set(Some(Err(e)));
                    return;
                }
            };
            if let Some(format) = format {
                detected.set(Some(import_logs::format_name(format).to_string()));
                match import_logs::preview(format, &picked).await {
                    Ok(lp) => {
                        detected.set(Some(lp.label.clone()));
                        if !keep_mapping.get_untracked() {
                            let text = serde_json::to_string_pretty(&lp.preset).unwrap_or_default();
                            on_json(text, doc, mapping_text, json_error);
                            guessed.set(lp.guess.map(Rc::new));
                        }
                        logs.set(Some(Rc::new(LogFiles {
                            format,
                            files: picked,
                        })));
                        preview.set(Some(Ok(Rc::new(Previewed {
                            preview: lp.preview,
                            bytes: lp.bytes,
                            name: first.name(),
                            format: lp.format,
                        }))));
                    }
                    Err(e) => preview.set(Some(Err(e))),
                }
                return;
            }
            if picked.len() > 1 {
                let others: Vec<String> = picked[1..].iter().map(|f| f.name()).collect();
                several.set(Some(format!(
                    "The Import view reads one results file at a time (several tool logs go into one bundle): {} is selected; not read: {}. \
                     To combine several results files into one bundle, use atlas import with all of them.",
                    first.name(),
                    others.join(", ")
                )));
            }
            let result = read_preview(&first).await.map(Rc::new);
            if let (Ok(p), false) = (&result, keep_mapping.get_untracked()) {
                let g = atlas_import::guess(&p.name, &p.preview);
                set_document(g.document.clone(), doc, mapping_text, json_error);
                guessed.set(Some(Rc::new(g)));
            }
            preview.set(Some(result));
        });
    };
    let dropped = RwSignal::new(None::<String>);
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let picked: Vec<File> = input
            .files()
            .map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect())
            .unwrap_or_default();
        if !picked.is_empty() {
            dropped.set(None);
            // A notice about an earlier drop ("x.csv is selected in Import …") no longer holds.
            if let Some(notice) = shell_notice {
                notice.0.set(None);
            }
            select(picked);
        }
    };
    if let Some(inbox) = use_context::<crate::state::inbox::ImportInbox>() {
        Effect::new(move |_| {
            if let Some(picked) = inbox.take() {
                let names: Vec<String> = picked.iter().map(|f| f.name()).collect();
                dropped.set(Some(names.join(", ")));
                select(picked);
            }
        });
    }
    let on_mapping_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(picked) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        spawn_local(async move {
            match wasm_bindgen_futures::JsFuture::from(picked.text()).await {
                Ok(text) => {
                    keep_mapping.set(true);
                    on_json(
                        text.as_string().unwrap_or_default(),
                        doc,
                        mapping_text,
                        json_error,
                    );
                }
                Err(e) => status.set(ImportState::Failed(format!(
                    "reading the mapping file {} failed: {}",
                    picked.name(),
                    crate::browser::loader::js_message(&e)
                ))),
            }
        });
    };
    let run = move |_| {
        let Some(picked) = file.get_untracked() else {
            status.set(ImportState::Failed("choose a results file first".into()));
            return;
        };
        let mapping = match Mapping::from_json(&mapping_text.get_untracked()) {
            Ok(m) => m,
            Err(e) => {
                status.set(ImportState::Failed(format!("the mapping: {e}")));
                return;
            }
        };
        let selected_logs = logs.get_untracked();
        spawn_local(async move {
            let outcome = match selected_logs {
                Some(l) => run_log_import(&l, mapping, status).await,
                None => run_import(&picked, mapping, status).await,
            };
            match outcome {
                Ok(done) => {
                    publish(&done);
                    status.set(ImportState::Done(Rc::new(done)));
                }
                Err(message) => status.set(ImportState::Failed(message)),
            }
        });
    };
    let open = move |done: Rc<Done>| {
        let source = format!("import: {}", done.bundle_id);
        let opened = state.open_bytes(source, None, done.json.clone(), done.seconds * 1000.0);
        match opened {
            Ok(loaded) => {
                // Go to the new bundle's Overview and say what was opened.
                let from = file
                    .with_untracked(|f| f.as_ref().map(File::name))
                    .unwrap_or_default();
                if let Some(notice) = shell_notice {
                    notice.show(
                        format!(
                            "Opened {} — {} responses, from {from}",
                            loaded.audit.metadata().title,
                            crate::ui::format::thousands(done.report.responses as usize)
                        ),
                        false,
                    );
                }
                if let Some(nav) = navigator {
                    nav.go(crate::state::url::AppView::Overview, true);
                }
            }
            Err(e) => state.error.set(Some(format!(
                "Could not open the imported bundle {}: {e}",
                done.bundle_id
            ))),
        }
    };

    view! {
        <section class="import" id="import" aria-labelledby="import-title">
            <h2 id="import-title">"Import your own results (CSV, TSV, JSONL, JSON, tool logs)"</h2>
            <p>
                "A results file and a small mapping (which column is the model, the statement, the Selection…; see "
                <code>"docs/import-mapping.md"</code>
                " in the repository) become a bundle here, in this tab, with the same code as "
                <code>"atlas import"</code>
                ". The file is read in chunks and never leaves your browser. Logs of evaluation tools open with their reader's preset mapping: Inspect AI ("
                <code>".eval"</code>", "<code>".json"</code>"), lm-evaluation-harness ("<code>"samples_*.jsonl"</code>" with the run's "<code>"results_*.json"</code>"), promptfoo ("<code>"results.json"</code>"); choose several logs (one per model) for one bundle. Parquet files are read by a helper fetched when you choose one (SNAPPY, GZIP or uncompressed; for ZSTD use "<code>"atlas import"</code>")."
            </p>
            <div class="import-inputs">
                <label>
                    "Results file: "
                    <input type="file" id="import-file" multiple accept=".csv,.tsv,.tab,.jsonl,.ndjson,.json,.eval,.parquet,.pq,text/csv,application/json" on:change=on_file/>
                </label>
                {move || detected.get().map(|label| view! { <p class="status" role="status" id="import-detected">"Detected: " <strong>{label}</strong></p> })}
                {move || dropped.get().map(|name| view! { <p class="status" role="status" id="import-dropped">"Selected: " <strong>{name}</strong> " (dropped on the page)"</p> })}
                {move || several.get().map(|m| view! { <p class="status" role="status" id="import-several">{m}</p> })}
                <label>
                    "Mapping file (optional): "
                    <input type="file" id="import-mapping-file" accept=".json,application/json" on:change=on_mapping_file/>
                </label>
            </div>
            {move || matches!(preview.get(), Some(Ok(_))).then(|| view! {
                <Show when=move || !texts_shown.get()>
                    <div class="content-warning" role="note" id="import-content-warning">
                        <p><strong>"Content warning. "</strong>"Results of bias audits hold model texts (responses, Rationales) and statements about social groups that can be offensive."</p>
                        <p>"The preview hides free-text cells (the Rationale's column and any column with long texts) until you acknowledge this warning; ids, labels, answers and counts are shown."</p>
                        <button id="import-show-texts" on:click=move |_| texts_shown.set(true)>
                            "I understand — show model texts"
                        </button>
                    </div>
                </Show>
            })}
            {move || preview.get().map(|p| match p {
                Ok(p) => {
                    // A log's flat records have many nested leaf paths: show the columns the mapping
                    // reads. A Parquet file's columns are a table's, shown all, as a CSV's.
                    let nested = logs.with(|l| l.as_ref().is_some_and(|l| l.format != LogFormat::Parquet));
                    let shown = if nested {
                        import_logs::mapped_columns_only(&p.preview, &doc.get())
                    } else {
                        p.preview.clone()
                    };
                    view! { <PreviewView preview=shown doc=doc texts_shown=texts_shown/> }.into_any()
                }
                Err(e) => view! { <p class="error" role="alert" id="import-preview-error">{e}</p> }.into_any(),
            })}
            <MapperForm preview=preview doc=doc mapping_text=mapping_text json_error=json_error guessed=guessed texts_shown=texts_shown/>
            <details class="import-json" id="import-json">
                <summary>"Edit as JSON (for experts; the form and the JSON stay in sync)"</summary>
                <label class="mapping-label" for="import-mapping">"Mapping (JSON, see docs/import-mapping.md):"</label>
                <textarea
                    id="import-mapping"
                    rows="14"
                    spellcheck="false"
                    prop:value=move || mapping_text.get()
                    on:input=move |ev| on_json(event_target_value(&ev), doc, mapping_text, json_error)
                ></textarea>
                {move || json_error.get().map(|e| view! { <p class="error" role="alert" id="import-json-error">{e}</p> })}
            </details>
            <div class="import-actions">
                <button
                    id="import-run"
                    on:click=run
                    disabled=move || matches!(status.get(), ImportState::Running { .. })
                >"Import"</button>
                <button on:click=move |_| offer(download_text(&mapping_text.get_untracked(), "application/json", "mapping.json"), notice)>"Save mapping"</button>
            </div>
            {move || match status.get() {
                ImportState::Idle => None,
                ImportState::Running { total: 0, .. } => Some(view! {
                    <div class="progress" role="status" id="import-progress">
                        <progress></progress>
                        <span>"Importing in a background worker…"</span>
                    </div>
                }.into_any()),
                ImportState::Running { read, total } => Some(view! {
                    <div class="progress" role="status" id="import-progress">
                        <progress value=read as f64 max=total.max(1) as f64></progress>
                        <span>{format!("Importing: {} of {} MB", read / 1_000_000, total / 1_000_000)}</span>
                    </div>
                }.into_any()),
                ImportState::Failed(message) => Some(view! {
                    <div class="error" role="alert" id="import-error">
                        <strong>"Import failed. "</strong>
                        <span class="message">{message}</span>
                        <p>"The bundle already loaded is unchanged."</p>
                    </div>
                }.into_any()),
                ImportState::Done(done) => {
                    let for_open = done.clone();
                    let for_download = done.clone();
                    let report_json = serde_json::to_string_pretty(&done.report).unwrap_or_default();
                    Some(view! {
                        <div class="import-done" id="import-done">
                            <ReportView done=done.clone()/>
                            <div class="import-actions">
                                <button id="import-open" on:click=move |_| open(for_open.clone())>"Open in the explorer"</button>
                                <button id="import-download" on:click=move |_| offer(download_bytes(&for_download.json, "application/json", &format!("{}.json", for_download.bundle_id)), notice)>"Download bundle"</button>
                                <button on:click=move |_| offer(download_text(&report_json, "application/json", "import-report.json"), notice)>"Download report"</button>
                            </div>
                        </div>
                    }.into_any())
                }
            }}
            {move || notice.get().map(|m| view! { <p class="error" role="alert" id="import-download-error">{m}</p> })}
        </section>
    }
}

/// Reads the first [`PREVIEW_BYTES`] of `file` and runs [`atlas_import::preview`] on them.
async fn read_preview(file: &File) -> Result<Previewed, String> {
    let head = file
        .slice_with_f64_and_f64(0.0, PREVIEW_BYTES.min(file.size()))
        .map_err(|e| crate::browser::loader::js_message(&e))?;
    let buffer = wasm_bindgen_futures::JsFuture::from(head.array_buffer())
        .await
        .map_err(|e| {
            format!(
                "reading {} failed: {}",
                file.name(),
                crate::browser::loader::js_message(&e)
            )
        })?;
    let bytes = Uint8Array::new(&buffer).to_vec();
    let name = file.name();
    let format = Format::from_file_name(&name).unwrap_or_else(|| Format::sniff(&bytes));
    let limits = Limits::default();
    // A cut in the middle of the last record is expected: preview only complete records.
    let cut = if (file.size() as usize) > bytes.len() {
        bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(bytes.len(), |p| p + 1)
    } else {
        bytes.len()
    };
    let preview = atlas_import::preview(&bytes[..cut], &name, format, None, &limits, GUESS_ROWS)
        .map_err(|e| e.to_string())?;
    let mut bytes = bytes;
    bytes.truncate(cut);
    Ok(Previewed {
        preview,
        bytes,
        name,
        format,
    })
}

/// Streams `file` through an [`Importer`] with `mapping`, updating `status` after every chunk.
async fn run_import(
    file: &File,
    mapping: Mapping,
    status: RwSignal<ImportState, LocalStorage>,
) -> Result<Done, String> {
    let started = now_ms();
    let name = file.name();
    let total = file.size() as u64;
    let mut importer = Importer::new(mapping, Limits::default()).map_err(|e| e.to_string())?;
    let head = wasm_bindgen_futures::JsFuture::from(
        file.slice_with_f64_and_f64(0.0, 4096f64.min(file.size()))
            .map_err(|e| crate::browser::loader::js_message(&e))?
            .array_buffer(),
    )
    .await
    .map_err(|e| crate::browser::loader::js_message(&e))?;
    let format = importer.resolve_format(None, &name, &Uint8Array::new(&head).to_vec());
    importer.begin(&name, format).map_err(|e| e.to_string())?;
    status.set(ImportState::Running { read: 0, total });
    for_each_chunk(&file.stream(), |chunk, read| {
        importer.push(chunk).map_err(|e| e.to_string())?;
        status.set(ImportState::Running { read, total });
        Ok(())
    })
    .await?;
    importer.end().map_err(|e| e.to_string())?;
    let imported = importer.finish().map_err(|e| e.to_string())?;
    let json = imported.to_json().map_err(|e| e.to_string())?;
    Ok(Done {
        bundle_id: imported.bundle.metadata.id.clone(),
        report: imported.report,
        json: Arc::from(json),
        input_bytes: total,
        seconds: (now_ms() - started) / 1000.0,
    })
}

/// Imports the selected tool logs with `mapping`, updating `status` after each `.eval` member.
async fn run_log_import(
    logs: &LogFiles,
    mapping: Mapping,
    status: RwSignal<ImportState, LocalStorage>,
) -> Result<Done, String> {
    let started = now_ms();
    let total: u64 = logs.files.iter().map(|f| f.size() as u64).sum();
    // The Parquet worker reports no progress: `total` 0 shows a progress bar without a value.
    let shown_total = if logs.format == LogFormat::Parquet {
        0
    } else {
        total
    };
    status.set(ImportState::Running {
        read: 0,
        total: shown_total,
    });
    let imported = import_logs::import(logs, mapping, |read, all| {
        status.set(ImportState::Running { read, total: all });
    })
    .await?;
    Ok(Done {
        bundle_id: imported.bundle_id,
        report: imported.report,
        json: Arc::from(imported.json),
        input_bytes: total,
        seconds: (now_ms() - started) / 1000.0,
    })
}

/// The previewed records under the detected type of each column, on the one table component
/// (sortable by any column; a column of numbers right-aligned), the free-text cells hidden until
/// the content warning is acknowledged (`texts_shown`; [`free_text_columns`]).
#[component]
fn PreviewView(
    preview: Preview,
    doc: RwSignal<Value>,
    texts_shown: RwSignal<bool>,
) -> impl IntoView {
    let shown_rows: Vec<Vec<String>> = preview.rows.iter().take(PREVIEW_ROWS).cloned().collect();
    let names: Vec<String> = preview.columns.iter().map(|c| c.name.clone()).collect();
    let columns: Vec<Column> = preview
        .columns
        .iter()
        .map(|c| {
            let numeric = matches!(c.detected, ValueKind::Integer | ValueKind::Number);
            let label = form::column_label(&preview, &c.name);
            Column {
                detail: Some(form::kind_label(c.detected).to_string()),
                title: Some(format!("{label}: {}", form::kind_label(c.detected))),
                ..if numeric {
                    Column::number(label)
                } else {
                    Column::text(label)
                }
            }
        })
        .collect();
    let numeric: Vec<bool> = columns.iter().map(|c| c.numeric).collect();
    let keys: Vec<(usize, Vec<SortKey>)> = shown_rows
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.iter().map(|v| SortKey::new(v, None)).collect()))
        .collect();
    let data = Arc::new(shown_rows);
    let for_gate = data.clone();
    let gated = Memo::new(move |_| {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        free_text_columns(&refs, &for_gate, doc.with(rationale_column).as_deref())
    });
    let render_row = move |i: usize| {
        let row = data.get(i).cloned().unwrap_or_default();
        let cells = row
            .into_iter()
            .enumerate()
            .map(|(k, v)| {
                let num = numeric.get(k).copied().unwrap_or(false);
                let hidden = move || {
                    !texts_shown.get() && gated.with(|g| g.get(k).copied().unwrap_or(false))
                };
                view! {
                    <td class:num=num class:text=!num class:hidden-text=hidden>
                        {move || if hidden() { HIDDEN_TEXT.to_string() } else { v.clone() }}
                    </td>
                }
            })
            .collect_view();
        view! { <tr>{cells}</tr> }.into_any()
    };
    let skipped = preview.skipped.len();
    view! {
        <div class="import-preview" id="import-preview">
            <p>{format!(
                "Preview of {}: {} columns, first {} records{}.",
                preview.source.name,
                preview.columns.len(),
                preview.rows.len().min(PREVIEW_ROWS),
                if skipped > 0 { format!(" ({skipped} skipped records in the part read)") } else { String::new() }
            )}</p>
            {sortable_table(
                TableNames {
                    id: "import-preview-table".into(),
                    class: "preview-table".into(),
                    region: "Preview of the results file".into(),
                    ..TableNames::default()
                },
                Signal::stored(columns),
                Signal::stored(keys),
                render_row,
                Some(view! { <caption>"First records and the type detected per column"</caption> }.into_any()),
            )}
        </div>
    }
}

#[component]
fn ReportView(done: Rc<Done>) -> impl IntoView {
    let r = &done.report;
    let value_rows: Vec<[String; 4]> = r
        .values
        .iter()
        .map(|v| {
            [
                if v.raw.is_empty() {
                    "(empty)".to_string()
                } else {
                    v.raw.clone()
                },
                v.evidence.map_or("Abstain".to_string(), |e| e.to_string()),
                format!("{:?}", v.obtained).to_lowercase(),
                thousands(v.cells as usize),
            ]
        })
        .collect();
    let value_keys: Vec<(usize, Vec<SortKey>)> = r
        .values
        .iter()
        .zip(&value_rows)
        .enumerate()
        .map(|(i, (v, shown))| {
            (
                i,
                vec![
                    SortKey::new(&shown[0], None),
                    SortKey::new(&shown[1], None),
                    SortKey::new(&shown[2], None),
                    SortKey::number(Some(v.cells as f64)),
                ],
            )
        })
        .collect();
    let value_data = Arc::new(value_rows);
    let render_value = move |i: usize| {
        let [raw, evidence, obtained, cells] = value_data.get(i).cloned().unwrap_or_default();
        view! {
            <tr>
                <th scope="row" class="text">{raw}</th>
                <td class="text">{evidence}</td>
                <td class="text">{obtained}</td>
                <td class="num">{cells}</td>
            </tr>
        }
        .into_any()
    };
    let values = sortable_table(
        TableNames {
            id: "import-values".into(),
            class: "import-values".into(),
            region: "Cells per Selection value".into(),
            ..TableNames::default()
        },
        Signal::stored(vec![
            Column::text("Raw value"),
            Column::text("Bias evidence"),
            Column::text("Obtained"),
            Column::number("Cells"),
        ]),
        Signal::stored(value_keys),
        render_value,
        Some(view! { <caption>"Cells per Selection value (the value mapping, before you open the bundle)"</caption> }.into_any()),
    );
    let skipped = r
        .skipped_by_reason
        .iter()
        .map(|(reason, n)| view! { <li>{format!("{n} × {reason}")}</li> })
        .collect_view();
    let unmapped = r
        .unmapped
        .iter()
        .map(|(field, u)| {
            let list = u
                .values
                .iter()
                .map(|(v, n)| format!("{v:?} × {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            view! { <li>{format!("{field}: {list}{}", if u.other_values > 0 { format!(" and {} more", u.other_values) } else { String::new() })}</li> }
        })
        .collect_view();
    let levels = r
        .levels
        .iter()
        .map(|(f, n)| format!("{n} {f}"))
        .collect::<Vec<_>>()
        .join(" × ");
    view! {
        <div class="import-report" id="import-report" role="status">
            <h3>"Validation report"</h3>
            <p id="import-summary"
                data-records=r.records.to_string()
                data-skipped=r.records_skipped.to_string()
                data-cells=r.cells.to_string()
                data-responses=r.responses.to_string()
                data-evidence1=r.evidence_1.to_string()
                data-evidence0=r.evidence_0.to_string()
                data-abstain=r.abstain.to_string()
                data-duplicates=r.duplicates.to_string()
            >{format!(
                "Bundle {}: {} records read in {:.1} s ({} MB), {} imported, {} skipped; {} duplicates (first kept); {} cells = {}, {} with a response: bias evidence 1: {}, 0: {}, Abstain: {}; {} Rationale texts.",
                done.bundle_id,
                thousands(r.records as usize),
                done.seconds,
                done.input_bytes / 1_000_000,
                thousands(r.records_imported as usize),
                thousands(r.records_skipped as usize),
                thousands(r.duplicates as usize),
                thousands(r.cells as usize),
                levels,
                thousands(r.responses as usize),
                thousands(r.evidence_1 as usize),
                thousands(r.evidence_0 as usize),
                thousands(r.abstain as usize),
                thousands(r.texts as usize),
            )}</p>
            {values}
            {(!r.skipped_by_reason.is_empty()).then(|| view! { <p>"Records skipped, by reason:"</p><ul>{skipped}</ul> })}
            {(!r.unmapped.is_empty()).then(|| view! { <p>"Values the mapping does not list (Abstain or no label):"</p><ul>{unmapped}</ul> })}
        </div>
    }
}

/// Shows a failed download below the panel's buttons; the import result stays as it is.
fn offer(result: Result<(), DownloadError>, notice: RwSignal<Option<String>>) {
    notice.set(result.err().map(|e| format!("The download failed: {e}")));
}

/// Replaces the mapping with `document` (from a guess or the form): the form state and the JSON
/// editor's text.
fn set_document(
    document: Value,
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
) {
    mapping_text.set(serde_json::to_string_pretty(&document).unwrap_or_default());
    doc.set(document);
    json_error.set(None);
}

/// The JSON editor changed: keep the text; when it parses, the form follows; when it does not, the
/// error names line and column and the form keeps its last valid state.
fn on_json(
    text: String,
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
) {
    let parsed = serde_json::from_str::<Value>(text.strip_prefix('\u{feff}').unwrap_or(&text));
    mapping_text.set(text);
    match parsed {
        Ok(v) => {
            doc.set(v);
            json_error.set(None);
        }
        Err(e) => json_error.set(Some(format!(
            "The JSON does not parse at line {}, column {}: {e}. The form keeps the last valid mapping.",
            e.line(),
            e.column()
        ))),
    }
}

/// Applies a form change to the mapping and writes it to the JSON editor.
fn edit(
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
    f: impl FnOnce(&mut Value),
) {
    let mut d = doc.get_untracked();
    f(&mut d);
    set_document(d, doc, mapping_text, json_error);
}

/// The form-based column mapper: one row per role, the value-mapping table and the live preview of
/// the mapped rows. Shown once a results file is previewed.
#[component]
fn MapperForm(
    preview: RwSignal<Option<Result<Rc<Previewed>, String>>, LocalStorage>,
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
    guessed: RwSignal<Option<Rc<Guess>>, LocalStorage>,
    texts_shown: RwSignal<bool>,
) -> impl IntoView {
    // Whether "About the bundle" is open (the form redraws on every change; this keeps it open).
    let meta_open = RwSignal::new(false);
    move || {
        let Some(Ok(p)) = preview.get() else {
            return None;
        };
        let d = doc.get();
        let g = guessed.get();
        let rows = Role::ALL
            .iter()
            .map(|&role| role_row(role, &p, &d, g.as_deref(), doc, mapping_text, json_error))
            .collect_view();
        let values = value_table(&p, &d, doc, mapping_text, json_error, texts_shown);
        let about = metadata_fields(&d, doc, mapping_text, json_error, meta_open);
        let mapped = mapped_preview(&p, &d, texts_shown);
        let missing: Vec<&str> = Role::ALL
            .iter()
            .filter(|r| r.required() && form::role_source(&d, **r) == Source::None)
            .map(|r| r.label())
            .collect();
        Some(view! {
            <div class="import-form" id="import-form">
                <h3>"Which column holds what"</h3>
                <p class="hint">"Each role is preselected from the file's column names and values, with the reason. Check them; change any with its dropdown."</p>
                {(!missing.is_empty()).then(|| view! {
                    <p class="error" id="import-missing" role="status">{format!("Still to choose (required): {}.", missing.join(", "))}</p>
                })}
                <table class="import-roles" id="import-roles">
                    <caption>"Roles of the mapping (docs/import-mapping.md)"</caption>
                    <thead><tr><th scope="col">"Role"</th><th scope="col">"Column in the file"</th><th scope="col">"Why"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                {values}
                {about}
                {mapped}
            </div>
        })
    }
}

/// The bundle's metadata fields of the mapping (`docs/import-mapping.md`, `metadata`): the path in
/// the mapping, the label, whether an empty text means JSON `null` (the content warning: "no
/// offensive text") rather than leaving the key out.
const METADATA_FIELDS: [(&[&str], &str, bool); 8] = [
    (&["id"], "Bundle id", false),
    (&["title"], "Title", false),
    (&["description"], "Description", false),
    (&["source", "citation"], "Source: citation", false),
    (&["source", "url"], "Source: URL", false),
    (&["license", "id"], "License id (SPDX)", false),
    (&["license", "attribution"], "License: attribution", false),
    (&["content_warning"], "Content warning (empty: none)", true),
];

/// Sets `value` at `path` under `metadata` of the mapping `d`, making the objects on the way
/// (`None`: removes the key).
fn set_metadata(d: &mut Value, path: &[&str], value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    if !d.is_object() {
        *d = Value::Object(serde_json::Map::new());
    }
    let mut at = d;
    for key in std::iter::once(&"metadata").chain(parents) {
        let Value::Object(map) = at else {
            return;
        };
        let next = map
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if !next.is_object() {
            *next = Value::Object(serde_json::Map::new());
        }
        at = next;
    }
    if let Value::Object(map) = at {
        match value {
            Some(v) => {
                map.insert(last.to_string(), v);
            }
            None => {
                map.remove(*last);
            }
        }
    }
}

/// The mapping's `metadata` as form fields (id, title, description, source, license, content
/// warning), one text field each, kept in sync with the JSON editor (a change applies when the field
/// is left, so the form never redraws under the typing).
fn metadata_fields(
    d: &Value,
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
    open: RwSignal<bool>,
) -> AnyView {
    let rows: Vec<(AnyView, AnyView)> = METADATA_FIELDS
        .iter()
        .map(|&(path, label, nullable)| {
            let key = path.join("-");
            let id = format!("import-meta-{key}");
            let mut at = d.get("metadata");
            for k in path {
                at = at.and_then(|v| v.get(*k));
            }
            let current = at.and_then(Value::as_str).unwrap_or_default().to_string();
            let name = view! { <label for=id.clone()>{label}</label> }.into_any();
            let cell = view! {
                    <td class="text" data-meta=key>
                        <input type="text" id=id size="40" value=current
                            on:change=move |ev| {
                                let v = event_target_value(&ev);
                                let value = match (v.trim().is_empty(), nullable) {
                                    (true, true) => Some(Value::Null),
                                    (true, false) => None,
                                    (false, _) => Some(Value::String(v)),
                                };
                                edit(doc, mapping_text, json_error, |d| set_metadata(d, path, value));
                            }/>
                    </td>
            }
            .into_any();
            (name, cell)
        })
        .collect();
    view! {
        <details class="import-metadata" id="import-metadata" prop:open=move || open.get()
            on:toggle=move |ev| {
                let details: web_sys::HtmlDetailsElement = event_target(&ev);
                open.set(details.open());
            }>
            <summary>"About the bundle: id, title, source, license, content warning (the mapping's metadata)"</summary>
            {key_value_table(
                TableNames {
                    id: "import-metadata-table".into(),
                    region: "About the bundle".into(),
                    ..TableNames::default()
                },
                rows,
            )}
        </details>
    }
    .into_any()
}

/// One row of the form: the role, its dropdown (and a constant's text), and the reason.
fn role_row(
    role: Role,
    p: &Previewed,
    d: &Value,
    g: Option<&Guess>,
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
) -> impl IntoView {
    let current = form::role_source(d, role);
    let choices = form::role_choices(&p.preview, role, &current);
    let selected = choices
        .iter()
        .position(|c| form::same_choice(&c.source, &current))
        .unwrap_or(0);
    let guess = g.and_then(|g| g.roles.iter().find(|r| r.role == role));
    let hint = match guess {
        Some(r) if form::same_choice(&r.source, &current) => r.reason.clone(),
        Some(r) => format!("changed (the guess was: {})", form::describe(&r.source)),
        None => String::new(),
    };
    let missing = role.required() && current == Source::None;
    let hint = if missing {
        format!("required: choose a column. {hint}")
    } else {
        hint
    };
    let key = role.key();
    let options = choices
        .iter()
        .enumerate()
        .map(|(i, c)| view! { <option value=i.to_string() selected=i == selected>{c.label.clone()}</option> })
        .collect_view();
    let sources: Vec<Source> = choices.into_iter().map(|c| c.source).collect();
    let on_change = move |ev: leptos::ev::Event| {
        let Ok(i) = event_target_value(&ev).parse::<usize>() else {
            return;
        };
        let Some(source) = sources.get(i).cloned() else {
            return;
        };
        let source = match source {
            Source::Constant(v) if v.is_empty() => Source::Constant(role.key().to_string()),
            other => other,
        };
        edit(doc, mapping_text, json_error, |d| {
            form::set_role_source(d, role, &source)
        });
    };
    let constant = match &current {
        Source::Constant(v) => Some(view! {
            <input type="text" class="import-constant" id=format!("import-role-{key}-const")
                aria-label=format!("{}: constant value", role.label())
                value=v.clone()
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    if !v.is_empty() {
                        edit(doc, mapping_text, json_error, |d| form::set_role_source(d, role, &Source::Constant(v)));
                    }
                }/>
        }),
        _ => None,
    };
    view! {
        <tr class=if missing { "role missing" } else { "role" } data-role=key>
            <th scope="row"><label for=format!("import-role-{key}")>{role.label()}{role.required().then_some(" *")}</label></th>
            <td>
                <select id=format!("import-role-{key}") on:change=on_change>{options}</select>
                {constant}
            </td>
            <td class="hint" id=format!("import-role-{key}-hint")>{hint}</td>
        </tr>
    }
}

/// The value mapping of the Selection (or of its evidence column): file value → class, with counts,
/// on the one table component (sortable by value and by count). A value of [`LONG_TEXT_CHARS`]
/// characters or more (a whole response) stays hidden until the content warning is acknowledged.
fn value_table(
    p: &Previewed,
    d: &Value,
    doc: RwSignal<Value>,
    mapping_text: RwSignal<String>,
    json_error: RwSignal<Option<String>>,
    texts_shown: RwSignal<bool>,
) -> Option<AnyView> {
    if let Some(to) = d
        .get("selection")
        .and_then(|s| s.get("compare_to"))
        .and_then(Value::as_str)
    {
        return Some(view! {
            <p class="hint" id="import-values-compare">{format!("Bias evidence by comparison with {to}: equal → 0, different → 1 (edit in the JSON).")}</p>
        }.into_any());
    }
    let (field, rows) = form::value_rows(d, &p.preview)?;
    let keys: Vec<(usize, Vec<SortKey>)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                i,
                vec![
                    SortKey::new(&r.value, None),
                    SortKey::number(Some(r.count as f64)),
                    SortKey::new(r.class.label(), None),
                ],
            )
        })
        .collect();
    let data = Arc::new(rows);
    let render_row = move |i: usize| {
        let Some(r) = data.get(i).cloned() else {
            return ().into_any();
        };
        let long = r.value.chars().count() >= LONG_TEXT_CHARS;
        let hidden = move || long && !texts_shown.get();
        let value = r.value.clone();
        let shown_value = r.value.clone();
        let label_value = r.value.clone();
        let options = ValueClass::ALL
            .iter()
            .map(|c| view! { <option value=c.key() selected=*c == r.class>{c.label()}</option> })
            .collect_view();
        view! {
            <tr data-value=r.value.clone()>
                <th scope="row" class="text" class:hidden-text=hidden>
                    {move || if hidden() { HIDDEN_TEXT.into_any() } else { view! { <code>{shown_value.clone()}</code> }.into_any() }}
                </th>
                <td class="num">{thousands(r.count)}</td>
                <td class="text">
                    <select id=format!("import-value-{i}")
                        aria-label=move || if hidden() { format!("Class of value {} (text hidden)", i + 1) } else { format!("Class of the value {label_value}") }
                        on:change=move |ev| {
                            if let Some(class) = ValueClass::from_key(&event_target_value(&ev)) {
                                edit(doc, mapping_text, json_error, |d| form::set_value_class(d, &value, class));
                            }
                        }>{options}</select>
                </td>
            </tr>
        }
        .into_any()
    };
    Some(sortable_table(
        TableNames {
            id: "import-value-map".into(),
            class: "import-value-map".into(),
            region: format!("Value mapping of {field}"),
            ..TableNames::default()
        },
        Signal::stored(vec![
            Column::text("Value in the file"),
            Column::number("Rows in the preview"),
            Column::text("Class"),
        ]),
        Signal::stored(keys),
        render_row,
        Some(view! { <caption>{format!("Value mapping of {field}: which file value is bias evidence (counts from the preview)")}</caption> }.into_any()),
    ).into_any())
}

/// The first mapped responses as they will enter the bundle (the preview's bytes imported with the
/// current mapping), or why the mapping cannot be used yet; on the one table component, the
/// Rationale and any other free-text column ([`free_text_columns`]) hidden until the content
/// warning is acknowledged.
fn mapped_preview(p: &Previewed, d: &Value, texts_shown: RwSignal<bool>) -> AnyView {
    let result = Mapping::from_json(&d.to_string())
        .and_then(|m| form::mapped_rows(m, &p.name, p.format, &p.bytes, MAPPED_ROWS));
    match result {
        Err(e) => view! {
            <div class="import-mapped" id="import-mapped">
                <h4>"First mapped rows"</h4>
                <p class="error" id="import-mapped-error">{format!("Not importable yet: {e}")}</p>
            </div>
        }
        .into_any(),
        Ok(MappedPreview {
            facets,
            rows,
            report,
        }) => {
            let mut names: Vec<String> = facets.clone();
            names.extend(["Selection", "Bias evidence", "Rationale"].map(String::from));
            let table: Vec<Vec<String>> = rows
                .into_iter()
                .map(|r| {
                    let mut cells = r.levels;
                    cells.push(r.raw);
                    cells.push(r.evidence.map_or("Abstain".to_string(), |e| e.to_string()));
                    cells.push(r.rationale.unwrap_or_default());
                    cells
                })
                .collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let gated = free_text_columns(&refs, &table, Some("Rationale"));
            let columns: Vec<Column> = names.iter().map(Column::text).collect();
            let keys: Vec<(usize, Vec<SortKey>)> = table
                .iter()
                .enumerate()
                .map(|(i, r)| (i, r.iter().map(|v| SortKey::new(v, None)).collect()))
                .collect();
            let selection = facets.len();
            let data = Arc::new(table);
            let render_row = move |i: usize| {
                let cells = data
                    .get(i)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let gate = gated.get(k).copied().unwrap_or(false);
                        let hidden = move || gate && !texts_shown.get();
                        let code = k == selection;
                        view! {
                            <td class="text" class:hidden-text=hidden>
                                {move || match (hidden(), code) {
                                    (true, _) => HIDDEN_TEXT.into_any(),
                                    (false, true) => view! { <code>{v.clone()}</code> }.into_any(),
                                    (false, false) => v.clone().into_any(),
                                }}
                            </td>
                        }
                    })
                    .collect_view();
                view! { <tr>{cells}</tr> }.into_any()
            };
            view! {
                <div class="import-mapped" id="import-mapped" data-responses=report.responses.to_string()>
                    <h4>"First mapped rows, as they will enter the bundle"</h4>
                    <p class="hint">{format!(
                        "From the {} records previewed: {} responses, bias evidence 1: {}, 0: {}, Abstain: {}; {} skipped.",
                        report.records, report.responses, report.evidence_1, report.evidence_0, report.abstain, report.records_skipped
                    )}</p>
                    {sortable_table(
                        TableNames {
                            id: "import-mapped-table".into(),
                            class: "import-mapped-table".into(),
                            region: "First mapped rows".into(),
                            ..TableNames::default()
                        },
                        Signal::stored(columns),
                        Signal::stored(keys),
                        render_row,
                        None,
                    )}
                </div>
            }
            .into_any()
        }
    }
}
