//! The Leptos components of the explorer. State lives in [`AtlasState`] (provided as context); the
//! numbers come from `atlas_core::stats`, so the browser and the native CLI compute the same values.

use std::sync::Arc;

use atlas_charts::{draw_ber_by_model_condition, BerByModelCondition};
use atlas_core::stats::{
    average_ranks, ber_by_model_condition, reference_scores, unit_counts, BerTable, RepeatPolicy,
};
use atlas_core::{Audit, BundleError};
use leptos::prelude::*;
use leptos::task::spawn_local;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsValue;

use crate::analyses::Analyses;
use crate::loader::{
    fetch_bytes_with_signal, now_ms, read_blob, resolve_url, LoadError, LoadGate, LoadTicket,
};

/// Path of the default bundle, relative to the page.
pub const DEFAULT_BUNDLE: &str = "static/bundles/decodingtrust-stereotype/bundle.json";

/// A bundle loaded into the tab.
#[derive(Debug)]
pub struct Loaded {
    pub audit: Audit,
    /// Where it came from: an absolute URL, or `file: NAME` for a local file.
    pub source: String,
    /// Base URL for its text shards (`None` for local files).
    pub base_url: Option<String>,
    /// The bundle's bytes as read, kept once for the analysis worker (it parses its own copy).
    pub data: Arc<[u8]>,
    /// Milliseconds spent fetching/reading and parsing+validating.
    pub read_ms: f64,
    pub parse_ms: f64,
}

/// Progress of the current load.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadStatus {
    Idle,
    Reading {
        source: String,
        received: u64,
        total: Option<u64>,
    },
    Parsing {
        source: String,
    },
}

/// Application state shared through context.
#[derive(Clone, Copy)]
pub struct AtlasState {
    pub loaded: RwSignal<Option<Arc<Loaded>>>,
    pub status: RwSignal<LoadStatus>,
    /// The last failed load (the loaded bundle stays usable).
    pub error: RwSignal<Option<String>>,
    pub policy: RwSignal<RepeatPolicy>,
    /// Whether the reader has acknowledged the bundle's content warning.
    pub warning_acknowledged: RwSignal<bool>,
    /// Which open is current: every way of opening a bundle ([`load_url`](Self::load_url),
    /// [`load_file`](Self::load_file), [`open_bytes`](Self::open_bytes)) takes its ticket here, so
    /// the last open asked for wins and an older one is aborted or its result discarded.
    gate: StoredValue<LoadGate, LocalStorage>,
}

/// The progress callback an asynchronous open's reader gets: `(bytes received, total if known)`.
pub type Progress = Box<dyn Fn(u64, Option<u64>)>;

impl Default for AtlasState {
    fn default() -> Self {
        Self::new()
    }
}

impl AtlasState {
    /// Fresh state: nothing loaded, no load in progress, default repeat policy.
    pub fn new() -> Self {
        AtlasState {
            loaded: RwSignal::new(None),
            status: RwSignal::new(LoadStatus::Idle),
            error: RwSignal::new(None),
            policy: RwSignal::new(RepeatPolicy::default()),
            warning_acknowledged: RwSignal::new(false),
            gate: StoredValue::new_local(LoadGate::new()),
        }
    }

    /// Fetches and parses the bundle at `url` (resolved against the page); on failure the current
    /// bundle stays and the error is set. A later open aborts the fetch.
    pub fn load_url(self, url: String) {
        let page = web_sys::window()
            .and_then(|w| w.location().href().ok())
            .unwrap_or_default();
        let absolute = resolve_url(&url, &page).unwrap_or(url);
        let fetched = absolute.clone();
        self.load_with(
            absolute.clone(),
            Some(absolute),
            move |signal, progress| async move {
                fetch_bytes_with_signal(&fetched, signal.as_ref(), progress).await
            },
        );
    }

    /// Reads and parses a local file (picker or drop). A later open stops the reading.
    pub fn load_file(self, file: web_sys::File) {
        let source = format!("file: {}", file.name());
        self.load_with(source, None, move |signal, progress| async move {
            read_blob(&file, signal.as_ref(), progress).await
        });
    }

    /// The asynchronous open behind [`load_url`](Self::load_url) and [`load_file`](Self::load_file):
    /// begins a new generation (aborting the load in progress, clearing the last error, showing
    /// `source` as loading), runs `read(abort signal, progress)`, and — only if no later open began
    /// meanwhile — parses and shows the bundle, or shows the error while the loaded bundle stays. A
    /// superseded load's bytes, bundle or error never reach the page.
    pub fn load_with<F, Fut>(self, source: String, base_url: Option<String>, read: F)
    where
        F: FnOnce(Option<web_sys::AbortSignal>, Progress) -> Fut,
        Fut: std::future::Future<Output = Result<Vec<u8>, LoadError>> + 'static,
    {
        let Some(ticket) = self.begin(&source, true) else {
            return;
        };
        let reading = read(ticket.signal().cloned(), self.progress(&ticket, &source));
        spawn_local(async move {
            let started = now_ms();
            let bytes = reading.await;
            let read_ms = now_ms() - started;
            if !self
                .gate
                .try_update_value(|g| g.settle(&ticket))
                .unwrap_or(false)
            {
                return;
            }
            let shown = bytes.map_err(|e| e.to_string()).and_then(|bytes| {
                self.parse_and_show(source.clone(), base_url, Arc::from(bytes), read_ms)
                    .map_err(|e| e.to_string())
            });
            if let Err(message) = shown {
                self.status.set(LoadStatus::Idle);
                self.error
                    .set(Some(format!("Could not load {source}: {message}")));
            }
        });
    }

    /// Opens a bundle whose bytes are already in the tab (an import, a pilot run, judge coding, a
    /// clinical pilot): supersedes the load in progress (aborted, its result discarded), parses and
    /// validates `bytes`, and on success shows the bundle with a fresh content-warning
    /// acknowledgement. `read_ms` is how long producing the bytes took (shown in the metadata).
    ///
    /// # Errors
    /// The [`atlas_core::BundleError`] of a bundle that does not parse; nothing on the page changes
    /// then except that the load in progress (if any) has been aborted — the bundle already loaded
    /// stays. The caller shows the message where the reader asked.
    pub fn open_bytes(
        self,
        source: String,
        base_url: Option<String>,
        bytes: Arc<[u8]>,
        read_ms: f64,
    ) -> Result<Arc<Loaded>, BundleError> {
        if let Some(ticket) = self.begin(&source, false) {
            self.gate.try_update_value(|g| g.settle(&ticket));
        }
        self.parse_and_show(source, base_url, bytes, read_ms)
    }

    /// Starts a new open (aborting the previous one): the last error goes, the status shows `source`
    /// as loading (`reading`) or nothing. `None` once the page's state is gone.
    fn begin(self, source: &str, reading: bool) -> Option<LoadTicket> {
        let ticket = self.gate.try_update_value(LoadGate::begin)?;
        self.error.set(None);
        self.status.set(if reading {
            LoadStatus::Reading {
                source: source.to_string(),
                received: 0,
                total: None,
            }
        } else {
            LoadStatus::Idle
        });
        Some(ticket)
    }

    /// A progress callback that shows `source` being read, while `ticket` is the current open.
    fn progress(self, ticket: &LoadTicket, source: &str) -> Progress {
        let source = source.to_string();
        let ticket = ticket.clone();
        Box::new(move |received, total| {
            if self
                .gate
                .try_with_value(|g| g.is_current(&ticket))
                .unwrap_or(false)
            {
                self.status.set(LoadStatus::Reading {
                    source: source.clone(),
                    received,
                    total,
                })
            }
        })
    }

    /// Parses `bytes` and, if they are a valid bundle, shows it: the one place a [`Loaded`] is built
    /// and set (with the content-warning reset and the error cleared). Always leaves the status idle.
    fn parse_and_show(
        self,
        source: String,
        base_url: Option<String>,
        bytes: Arc<[u8]>,
        read_ms: f64,
    ) -> Result<Arc<Loaded>, BundleError> {
        self.status.set(LoadStatus::Parsing {
            source: source.clone(),
        });
        let started = now_ms();
        let parsed = Audit::from_bytes(&bytes);
        let parse_ms = now_ms() - started;
        self.status.set(LoadStatus::Idle);
        let loaded = Arc::new(Loaded {
            audit: parsed?,
            source,
            base_url,
            data: bytes,
            read_ms,
            parse_ms,
        });
        publish_timing(&loaded);
        self.error.set(None);
        self.warning_acknowledged.set(false);
        self.loaded.set(Some(loaded.clone()));
        Ok(loaded)
    }
}

/// The default bundle's absolute URL for this page (the `source` of a [`Loaded`] opened from it).
pub fn default_bundle_url() -> Option<String> {
    let page = web_sys::window().and_then(|w| w.location().href().ok())?;
    resolve_url(DEFAULT_BUNDLE, &page)
}

/// Exposes the last load's timings as `window.__atlasLoad` (read by the end-to-end test).
fn publish_timing(loaded: &Loaded) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let record = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&record, &JsValue::from_str(k), &v);
    };
    set("source", JsValue::from_str(&loaded.source));
    set("bundle", JsValue::from_str(&loaded.audit.metadata().id));
    set("bytes", JsValue::from_f64(loaded.data.len() as f64));
    set("read_ms", JsValue::from_f64(loaded.read_ms));
    set("parse_ms", JsValue::from_f64(loaded.parse_ms));
    set("prime_ms", JsValue::from_f64(crate::loader::prime_ms()));
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("__atlasLoad"), &record);
}

/// Statistics of the loaded bundle under one repeat policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub policy: RepeatPolicy,
    pub table: BerTable,
    /// Eq. 4 reference score per model (fraction).
    pub reference: Vec<Option<f64>>,
    pub ranks: Vec<Option<f64>>,
}

/// Computes the v0 summary: BER per model × condition, Eq. 4 reference scores with equal condition
/// weights, and average ranks (lower first).
pub fn summarize(audit: &Audit, policy: RepeatPolicy) -> Summary {
    let units = unit_counts(audit, policy);
    let table = ber_by_model_condition(&units);
    let reference = reference_scores(audit, &units, None);
    let ranks = average_ranks(&reference);
    Summary {
        policy,
        table,
        reference,
        ranks,
    }
}

/// `691200` → `691,200`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// The level's `label` attribute, else its id.
pub(crate) fn level_label(audit: &Audit, facet: usize, level: usize) -> String {
    let l = &audit.levels(facet)[level];
    l.attributes
        .get("label")
        .and_then(|v| v.as_str())
        .map_or_else(|| l.id.clone(), str::to_string)
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AtlasState::new();
    provide_context(state);
    crate::url_state::restore(state);
    let requested = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
        .and_then(|p| p.get("bundle"));
    state.load_url(requested.unwrap_or_else(|| DEFAULT_BUNDLE.to_string()));

    view! {
        <header class="top">
            <h1>"Audit Atlas"</h1>
            <p class="tagline">
                "Recompute LLM bias-audit statistics from frozen result bundles, in your browser."
            </p>
        </header>
        <main>
            <LoadPanel/>
            {move || state.loaded.get().map(|loaded| view! { <BundleView loaded/> })}
            <crate::import_panel::ImportPanel/>
            <crate::pilot_panel::PilotPanel/>
        </main>
        <footer>
            <p>
                "Definitions follow BiAxisBias (Gan, Dong & Li): BER §3.3, reference score Eq. 4, Abstain = missing (§B.2). "
                "Data attribution of the loaded bundle is shown in its metadata above."
            </p>
        </footer>
    }
}

/// Progress bar, load errors, file picker and drop zone.
#[component]
fn LoadPanel() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let dragging = RwSignal::new(false);
    let on_pick = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            state.load_file(file);
        }
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(file) = ev
            .data_transfer()
            .and_then(|dt| dt.files())
            .and_then(|f| f.get(0))
        {
            state.load_file(file);
        }
    };
    view! {
        <section class="load" aria-label="Load a bundle">
            {move || match state.status.get() {
                LoadStatus::Idle => None,
                LoadStatus::Reading { source, received, total } => {
                    let (value, max) = match total {
                        Some(t) if t > 0 => (received as f64, t as f64),
                        _ => (0.0, 0.0),
                    };
                    let text = match total {
                        Some(t) => format!("Loading {source}: {:.0} of {:.0} KB", received as f64 / 1024.0, t as f64 / 1024.0),
                        None => format!("Loading {source}: {:.0} KB", received as f64 / 1024.0),
                    };
                    Some(view! {
                        <div class="progress" role="status" id="load-progress">
                            <progress value=value max=max></progress>
                            <span>{text}</span>
                        </div>
                    }.into_any())
                }
                LoadStatus::Parsing { source } => Some(view! {
                    <div class="progress" role="status" id="load-progress">
                        <progress></progress>
                        <span>{format!("Checking {source}…")}</span>
                    </div>
                }.into_any()),
            }}
            {move || state.error.get().map(|message| {
                let kept = state.loaded.with(|l| l.as_ref().map(|l| (l.audit.metadata().id.clone(), l.source.clone())));
                // A way back to the default bundle unless it is the one shown (a failed `?bundle=` link
                // leaves nothing loaded).
                let default = default_bundle_url();
                let offer_default = kept.as_ref().is_none_or(|(_, source)| Some(source) != default.as_ref());
                view! {
                    <div class="error" role="alert" id="load-error">
                        <strong>"Bundle not loaded. "</strong>
                        <span class="message">{message}</span>
                        {match kept {
                            Some((id, _)) => view! { <p>{format!("The bundle already loaded ({id}) is unchanged and still shown below.")}</p> }.into_any(),
                            None => view! { <p>"No bundle is open."</p> }.into_any(),
                        }}
                        {offer_default.then(|| view! {
                            <button id="open-default" on:click=move |_| state.load_url(DEFAULT_BUNDLE.to_string())>
                                "Open the default bundle"
                            </button>
                            " "
                        })}
                        <button id="load-error-dismiss" on:click=move |_| state.error.set(None)>"Dismiss"</button>
                    </div>
                }
            })}
            <div
                class="dropzone"
                class:dragging=move || dragging.get()
                on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop
            >
                <label>
                    "Open another bundle (.json): "
                    <input type="file" id="bundle-file" accept=".json,application/json" on:change=on_pick/>
                </label>
                <span class="hint">" or drop a bundle file here."</span>
            </div>
        </section>
    }
}

/// Metadata, repeat policy, table, chart and responses of one loaded bundle.
#[component]
fn BundleView(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let for_summary = loaded.clone();
    let summary = Memo::new(move |_| summarize(&for_summary.audit, state.policy.get()));
    provide_context(crate::explorer::AnalysisResults::new());
    crate::explorer::ExplorerModel::new(loaded.clone());
    let clinical = loaded.audit.file.clinical.is_some().then(|| {
        view! { <crate::clinical_view::ClinicalView loaded=loaded.clone()/> }
    });
    view! {
        <Metadata loaded=loaded.clone()/>
        {clinical}
        <PolicyPanel/>
        <BerTableView loaded=loaded.clone() summary/>
        <BerChart loaded=loaded.clone() summary/>
        <crate::explorer::Reweighting/>
        <Analyses loaded=loaded.clone()/>
        <crate::atlas_view::EvidenceAtlas/>
        <crate::rq3_view::Rq3Panel loaded=loaded.clone()/>
        <crate::inspector::Inspector loaded/>
    }
}

#[component]
fn Metadata(loaded: Arc<Loaded>) -> impl IntoView {
    let meta = loaded.audit.metadata().clone();
    let facets: Vec<String> = loaded
        .audit
        .file
        .facets
        .iter()
        .map(|f| {
            format!(
                "{} × {}",
                f.levels.len(),
                f.label.clone().unwrap_or_else(|| f.id.clone())
            )
        })
        .collect();
    let sizes = format!(
        "{} cells = {} · {:.0} KB, read in {:.0} ms, checked in {:.0} ms",
        thousands(loaded.audit.cells),
        facets.join(" × "),
        loaded.data.len() as f64 / 1024.0,
        loaded.read_ms,
        loaded.parse_ms
    );
    view! {
        <section class="metadata" id="metadata" aria-labelledby="bundle-title">
            <h2 id="bundle-title">{meta.title.clone()}</h2>
            <p class="bundle-id">"Bundle " <code>{meta.id.clone()}</code> " from " <code>{loaded.source.clone()}</code></p>
            {meta.content_warning.clone().map(|w| view! {
                <p class="warning" role="note"><strong>"Content warning: "</strong>{w}</p>
            })}
            <p>{meta.description.clone()}</p>
            <dl>
                <dt>"Design"</dt><dd>{sizes}</dd>
                <dt>"Source"</dt>
                <dd>
                    {meta.source.citation.clone()}
                    {meta.source.url.clone().map(|u| view! { " " <a href=u.clone() rel="noopener noreferrer">{u.clone()}</a> })}
                    {meta.source.commit.clone().map(|c| format!(" (commit {c})"))}
                </dd>
                <dt>"License"</dt>
                <dd>{meta.license.id.clone()} " — " {meta.license.attribution.clone()}</dd>
                <dt>"Produced by"</dt>
                <dd>{meta.produced_by.tool.clone()}{meta.produced_by.notes.clone().map(|n| view! { <details><summary>"How the Selection was read"</summary><p>{n}</p></details> })}</dd>
            </dl>
        </section>
    }
}

#[component]
fn PolicyPanel() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    view! {
        <section class="policy" aria-labelledby="policy-title">
            <h2 id="policy-title">"Repeat policy"</h2>
            <p>"A cell can hold several sampled responses (repeats). Choose how they enter every number below:"</p>
            <fieldset>
                <legend>"How repeats enter the statistics"</legend>
                {RepeatPolicy::ALL.into_iter().map(|p| view! {
                    <label class="policy-option">
                        <input
                            type="radio"
                            name="repeat-policy"
                            value=p.key()
                            prop:checked=move || state.policy.get() == p
                            on:change=move |_| state.policy.set(p)
                        />
                        <code>{p.key()}</code>
                        <span>{format!(" — {}", p.describe())}</span>
                    </label>
                }).collect_view()}
            </fieldset>
        </section>
    }
}

fn provenance_line(loaded: &Loaded, policy: RepeatPolicy) -> String {
    format!(
        "Bundle {} · repeat policy {} (counts are {}) · condition weights: equal over Selection conditions (Eq. 4) · no random draws (no seed)",
        loaded.audit.metadata().id,
        policy.key(),
        policy.count_unit()
    )
}

#[component]
fn BerTableView(loaded: Arc<Loaded>, summary: Memo<Summary>) -> impl IntoView {
    let audit_models = loaded
        .audit
        .model_ids()
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    let conditions: Vec<String> = loaded
        .audit
        .condition_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let in_reference: Vec<bool> = loaded
        .audit
        .conditions
        .iter()
        .map(|c| c.in_reference)
        .collect();
    let labels: Vec<String> = (0..audit_models.len())
        .map(|m| level_label(&loaded.audit, loaded.audit.model_facet, m))
        .collect();
    let header = conditions
        .iter()
        .zip(&in_reference)
        .map(|(c, r)| {
            let note = if *r { "" } else { " (not in reference)" };
            view! { <th scope="col">{format!("{c}{note}")}</th> }
        })
        .collect_view();
    let loaded_for_caption = loaded.clone();
    view! {
        <section class="table" aria-labelledby="table-title">
            <h2 id="table-title">"Selection BER by model and condition"</h2>
            <p class="provenance" id="table-provenance">{move || provenance_line(&loaded_for_caption, summary.get().policy)}</p>
            <div class="scroll">
            <table id="ber-table">
                <caption>
                    "Selection bias-evidence rate (BER = bias-evidence Selections / valid Selections, §3.3) per model and condition, with valid and Abstain counts; "
                    "reference score = mean over conditions of the mean over templates of the mean over statements (Eq. 4); rank 1 = lowest score, ties share the average rank."
                </caption>
                <thead>
                    <tr>
                        <th scope="col">"Model"</th>
                        {header}
                        <th scope="col">"Reference score (Eq. 4)"</th>
                        <th scope="col">"Rank"</th>
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        let s = summary.get();
                        audit_models.iter().enumerate().map(|(m, id)| {
                            let cells = (0..conditions.len()).map(|c| {
                                let k = s.table.get(m, c);
                                let ber = k.ber();
                                view! {
                                    <td
                                        data-model=id.clone()
                                        data-condition=conditions[c].clone()
                                        data-ber=ber.map(|b| format!("{b:.17}")).unwrap_or_default()
                                        data-valid=k.valid.to_string()
                                        data-abstain=k.abstain.to_string()
                                    >
                                        <span class="ber">{ber.map_or("—".to_string(), pct)}</span>
                                        <span class="counts">{format!("n = {} · Abstain {}", k.valid, k.abstain)}</span>
                                    </td>
                                }
                            }).collect_view();
                            let reference = s.reference[m];
                            view! {
                                <tr data-model=id.clone()>
                                    <th scope="row">{labels[m].clone()}</th>
                                    {cells}
                                    <td class="reference" data-reference=reference.map(|r| format!("{r:.17}")).unwrap_or_default()>
                                        {reference.map_or("—".to_string(), pct)}
                                    </td>
                                    <td class="rank">{s.ranks[m].map_or("—".to_string(), |r| format!("{r}"))}</td>
                                </tr>
                            }
                        }).collect_view()
                    }}
                </tbody>
            </table>
            </div>
        </section>
    }
}

#[component]
fn BerChart(loaded: Arc<Loaded>, summary: Memo<Summary>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let chart_error = RwSignal::new(None::<String>);
    let models: Vec<String> = (0..loaded.audit.model_ids().len())
        .map(|m| level_label(&loaded.audit, loaded.audit.model_facet, m))
        .collect();
    let height = 90 + 44 * models.len() as u32;
    let conditions: Vec<String> = loaded
        .audit
        .condition_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let bundle_id = loaded.audit.metadata().id.clone();
    Effect::new(move |_| {
        let s = summary.get();
        let Some(element) = canvas.get() else {
            return;
        };
        let data = BerByModelCondition {
            models: models.clone(),
            conditions: conditions.clone(),
            ber: (0..models.len())
                .map(|m| {
                    (0..conditions.len())
                        .map(|c| s.table.get(m, c).ber())
                        .collect()
                })
                .collect(),
            caption: format!("{bundle_id} — repeat policy {}", s.policy.key()),
        };
        let Some(backend) = CanvasBackend::with_canvas_object(element) else {
            chart_error.set(Some("This browser gave no 2D canvas context.".into()));
            return;
        };
        let root = backend.into_drawing_area();
        if let Err(e) = draw_ber_by_model_condition(&root, &data) {
            chart_error.set(Some(format!("Drawing the chart failed: {e}")));
        }
    });
    view! {
        <section class="chart" aria-labelledby="chart-title">
            <h2 id="chart-title">"BER by model and condition"</h2>
            <canvas
                id="ber-chart"
                node_ref=canvas
                width="860"
                height=height.to_string()
                role="img"
                aria-label="Grouped bar chart of Selection BER (percent) per model, one bar per condition; the table above holds the same values."
            ></canvas>
            {move || chart_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </section>
    }
}
