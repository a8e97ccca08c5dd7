//! The "Import your own results" panel: a CSV / TSV / JSONL / JSON results file plus a mapping
//! (`docs/import-mapping.md`) become a bundle in the tab, with the same code as `atlas import`
//! (crate `atlas-import`).
//!
//! Steps, as a reader sees them: pick a results file → a preview of its first rows with the detected
//! column types; write or load a mapping (a starter mapping is generated from the column names) →
//! **Import** streams the whole file through [`atlas_import::Importer`] chunk by chunk with a progress
//! bar (the file is never held in memory: only the importer's compact observations are) → the
//! validation report (records skipped and why, duplicates, unmapped values, cells per Selection
//! value) → **Open in the explorer** replaces the loaded bundle, **Download** saves the bundle, the
//! mapping and the report. An import that fails shows the error (input, record, line, field) and keeps
//! the bundle already loaded.

use std::rc::Rc;
use std::sync::Arc;

use atlas_import::{Format, Importer, Limits, Mapping, Preview, Report};
use js_sys::Uint8Array;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::File;

use crate::browser::export::{download_bytes, download_text, DownloadError};
use crate::browser::loader::{for_each_chunk, now_ms};
use crate::state::AtlasState;
use crate::ui::format::thousands;

/// Bytes read from the start of a file for the preview.
const PREVIEW_BYTES: f64 = 256.0 * 1024.0;
/// Records shown in the preview.
const PREVIEW_ROWS: usize = 8;

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
    let preview = RwSignal::new(None::<Result<Preview, String>>);
    let mapping_text = RwSignal::new(String::new());
    let status = RwSignal::new_local(ImportState::Idle);
    let notice = RwSignal::new(None::<String>);
    // The shell's notice line and navigation (absent only where the panel is mounted alone).
    let shell_notice = use_context::<crate::state::nav::ShellNotice>();
    let navigator = use_context::<crate::state::nav::Navigator>();

    // A file picked here or dropped on the page (the shell's inbox) is selected the same way.
    let select = move |picked: File| {
        status.set(ImportState::Idle);
        preview.set(None);
        file.set(Some(picked.clone()));
        spawn_local(async move {
            let result = read_preview(&picked).await;
            if let (Ok(p), true) = (&result, mapping_text.get_untracked().trim().is_empty()) {
                mapping_text.set(starter_mapping(&picked.name(), p));
            }
            preview.set(Some(result));
        });
    };
    let dropped = RwSignal::new(None::<String>);
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(picked) = input.files().and_then(|f| f.get(0)) {
            dropped.set(None);
            select(picked);
        }
    };
    if let Some(inbox) = use_context::<crate::state::inbox::ImportInbox>() {
        Effect::new(move |_| {
            if let Some(picked) = inbox.take() {
                dropped.set(Some(picked.name()));
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
                Ok(text) => mapping_text.set(text.as_string().unwrap_or_default()),
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
        spawn_local(async move {
            let outcome = run_import(&picked, mapping, status).await;
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
                            crate::ui::format::thousands(done.report.records_imported as usize)
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
            <h2 id="import-title">"Import your own results (CSV, TSV, JSONL, JSON)"</h2>
            <p>
                "A results file and a small mapping (which column is the model, the statement, the Selection…; see "
                <code>"docs/import-mapping.md"</code>
                " in the repository) become a bundle here, in this tab, with the same code as "
                <code>"atlas import"</code>
                ". The file is read in chunks and never leaves your browser."
            </p>
            <div class="import-inputs">
                <label>
                    "Results file: "
                    <input type="file" id="import-file" accept=".csv,.tsv,.tab,.jsonl,.ndjson,.json,text/csv,application/json" on:change=on_file/>
                </label>
                {move || dropped.get().map(|name| view! { <p class="status" role="status" id="import-dropped">"Selected: " <strong>{name}</strong> " (dropped on the page)"</p> })}
                <label>
                    "Mapping file (optional): "
                    <input type="file" id="import-mapping-file" accept=".json,application/json" on:change=on_mapping_file/>
                </label>
            </div>
            {move || preview.get().map(|p| match p {
                Ok(p) => view! { <PreviewView preview=p/> }.into_any(),
                Err(e) => view! { <p class="error" role="alert" id="import-preview-error">{e}</p> }.into_any(),
            })}
            <label class="mapping-label" for="import-mapping">"Mapping (JSON; a starter is generated from the column names — check every field):"</label>
            <textarea
                id="import-mapping"
                rows="14"
                spellcheck="false"
                prop:value=move || mapping_text.get()
                on:input=move |ev| mapping_text.set(event_target_value(&ev))
            ></textarea>
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
async fn read_preview(file: &File) -> Result<Preview, String> {
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
    atlas_import::preview(&bytes[..cut], &name, format, None, &limits, PREVIEW_ROWS)
        .map_err(|e| e.to_string())
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

/// A mapping to start from: facets guessed from column names (model, statement, condition, template,
/// repeat, category), the Selection from an `answer`/`selection`/`label` column with agree → 1 and
/// disagree → 0. Every guess is visible in the text for the reader to check.
fn starter_mapping(file_name: &str, preview: &Preview) -> String {
    let names: Vec<&str> = preview.columns.iter().map(|c| c.name.as_str()).collect();
    let find = |keys: &[&str]| -> Option<String> {
        keys.iter().find_map(|k| {
            names
                .iter()
                .find(|n| n.to_ascii_lowercase() == *k)
                .or_else(|| names.iter().find(|n| n.to_ascii_lowercase().contains(k)))
                .map(|n| n.to_string())
        })
    };
    let mut facets = serde_json::Map::new();
    let field = |f: String| serde_json::json!({ "field": f });
    facets.insert(
        "model".into(),
        find(&["model"]).map_or(serde_json::json!({"value": "my-model"}), field),
    );
    let statement = find(&["statement", "prompt", "question", "sentence", "text"])
        .unwrap_or_else(|| "statement".into());
    let mut st = serde_json::json!({ "field": statement });
    if let Some(c) = find(&["category", "bias_type", "topic"]) {
        st["category"] = serde_json::Value::String(c);
    }
    facets.insert("statement".into(), st);
    for (facet, keys) in [
        (
            "condition",
            &["condition", "system_prompt", "sys_prompt"][..],
        ),
        ("template", &["template", "wording"][..]),
        ("repeat", &["repeat", "sample", "seed"][..]),
    ] {
        if let Some(c) = find(keys) {
            facets.insert(facet.into(), field(c));
        }
    }
    let selection =
        find(&["selection", "answer", "label", "response"]).unwrap_or_else(|| "answer".into());
    let stem = file_name.rsplit_once('.').map_or(file_name, |(s, _)| s);
    let mapping = serde_json::json!({
        "mapping_version": 1,
        "metadata": {
            "id": format!("{stem}-import"),
            "title": format!("{file_name} (imported)"),
            "description": "Describe what was asked, of which models, and which Selection counts as bias evidence.",
            "source": {"citation": "Your citation"},
            "license": {"id": "CC-BY-4.0", "attribution": "Your attribution"},
            "content_warning": null
        },
        "facets": facets,
        "selection": {"field": selection, "map": {"agree": 1, "disagree": 0}}
    });
    serde_json::to_string_pretty(&mapping).unwrap_or_default()
}

#[component]
fn PreviewView(preview: Preview) -> impl IntoView {
    let header = preview
        .columns
        .iter()
        .map(|c| {
            view! {
                <th scope="col">
                    <span class="column-name">{c.name.clone()}</span>
                    <span class="column-kind">{format!("{:?}", c.detected).to_lowercase()}</span>
                </th>
            }
        })
        .collect_view();
    let rows = preview
        .rows
        .iter()
        .map(|r| {
            view! { <tr>{r.iter().map(|v| view! { <td>{v.clone()}</td> }).collect_view()}</tr> }
        })
        .collect_view();
    let skipped = preview.skipped.len();
    view! {
        <div class="import-preview" id="import-preview">
            <p>{format!(
                "Preview of {}: {} columns, first {} records{}.",
                preview.source.name,
                preview.columns.len(),
                preview.rows.len(),
                if skipped > 0 { format!(" ({skipped} skipped records in the part read)") } else { String::new() }
            )}</p>
            <div class="scroll">
                <table class="preview-table">
                    <caption>"First records and the type detected per column"</caption>
                    <thead><tr>{header}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </div>
    }
}

#[component]
fn ReportView(done: Rc<Done>) -> impl IntoView {
    let r = &done.report;
    let values = r
        .values
        .iter()
        .map(|v| {
            let evidence = v.evidence.map_or("Abstain".to_string(), |e| e.to_string());
            view! {
                <tr>
                    <td>{if v.raw.is_empty() { "(empty)".to_string() } else { v.raw.clone() }}</td>
                    <td>{evidence}</td>
                    <td>{format!("{:?}", v.obtained).to_lowercase()}</td>
                    <td class="num">{thousands(v.cells as usize)}</td>
                </tr>
            }
        })
        .collect_view();
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
            <table class="import-values">
                <caption>"Cells per Selection value (the value mapping, before you open the bundle)"</caption>
                <thead><tr><th scope="col">"Raw value"</th><th scope="col">"Bias evidence"</th><th scope="col">"Obtained"</th><th scope="col">"Cells"</th></tr></thead>
                <tbody>{values}</tbody>
            </table>
            {(!r.skipped_by_reason.is_empty()).then(|| view! { <p>"Records skipped, by reason:"</p><ul>{skipped}</ul> })}
            {(!r.unmapped.is_empty()).then(|| view! { <p>"Values the mapping does not list (Abstain or no label):"</p><ul>{unmapped}</ul> })}
        </div>
    }
}

/// Shows a failed download below the panel's buttons; the import result stays as it is.
fn offer(result: Result<(), DownloadError>, notice: RwSignal<Option<String>>) {
    notice.set(result.err().map(|e| format!("The download failed: {e}")));
}
