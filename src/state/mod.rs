//! The ground floor of the app: the loaded bundle ([`Loaded`]), the page's shared state ([`AtlasState`],
//! provided as context) and the one way a bundle is opened ([`AtlasState::load_url`], [`AtlasState::load_file`],
//! [`AtlasState::open_bytes`] all end in one place that builds the [`Loaded`], resets the content-warning
//! acknowledgement and takes the load generation). Views and the pilot read this; it imports no view.

pub mod compare;
pub mod inbox;
pub mod load_gate;
pub mod nav;
pub mod plan;
pub mod reweighting;
pub mod shards;
pub mod url;

use std::sync::Arc;

use atlas_core::bundle::Deferred;
use atlas_core::stats::RepeatPolicy;
use atlas_core::{Audit, BundleError};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsValue;

use crate::browser::loader::{fetch_bytes_with_signal, now_ms, read_blob, resolve_url, LoadError};
use crate::state::load_gate::{LoadGate, LoadTicket};

/// Path of the default bundle, relative to the page.
pub const DEFAULT_BUNDLE: &str = "static/bundles/decodingtrust-stereotype/bundle.json";

/// A bundle loaded into the tab.
#[derive(Debug)]
pub struct Loaded {
    /// The parsed and validated bundle.
    pub audit: Audit,
    /// Where it came from: an absolute URL, or `file: NAME` for a local file.
    pub source: String,
    /// Base URL for its text shards (`None` for local files).
    pub base_url: Option<String>,
    /// The bundle's bytes as read, kept once for the analysis worker (it parses its own copy).
    pub data: Arc<[u8]>,
    /// Milliseconds spent fetching or reading the bytes.
    pub read_ms: f64,
    /// Milliseconds spent parsing and validating them.
    pub parse_ms: f64,
}

/// Progress of the current load.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadStatus {
    /// No load in progress.
    Idle,
    /// Bytes of `source` arriving: `received` so far of `total` (when the server or file says).
    Reading {
        /// What is being read (as [`Loaded::source`]).
        source: String,
        /// Bytes received so far.
        received: u64,
        /// Bytes in all, when known.
        total: Option<u64>,
    },
    /// The bytes of `source` are in; parsing and validating them.
    Parsing {
        /// What is being checked (as [`Loaded::source`]).
        source: String,
    },
}

/// Application state shared through context.
#[derive(Clone, Copy)]
pub struct AtlasState {
    /// The bundle shown (`None` before the first load succeeds).
    pub loaded: RwSignal<Option<Arc<Loaded>>>,
    /// Progress of the load in progress.
    pub status: RwSignal<LoadStatus>,
    /// The last failed load (the loaded bundle stays usable).
    pub error: RwSignal<Option<String>>,
    /// How repeats enter every statistic (`atlas_core::stats::RepeatPolicy`).
    pub policy: RwSignal<RepeatPolicy>,
    /// Whether the reader has acknowledged the bundle's content warning.
    pub warning_acknowledged: RwSignal<bool>,
    /// The text shards of the loaded bundle, fetched once for every view that shows texts.
    pub shards: shards::ShardCache,
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
            shards: shards::ShardCache::new(),
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
            let shown = match bytes {
                Err(e) => Err(e.to_string()),
                Ok(bytes) => {
                    let bytes: Arc<[u8]> = Arc::from(bytes);
                    self.status.set(LoadStatus::Parsing {
                        source: source.clone(),
                    });
                    let started = now_ms();
                    let parsed = match Audit::from_bytes_deferred(&bytes) {
                        Ok(audit) => Ok(audit),
                        Err(Deferred::Invalid(e)) => Err(e),
                        // Not a bundle the parser reads: its error is worked out in a module
                        // downloaded only now ([`explain_refused`]).
                        Err(refused) => Err(explain_refused(bytes.clone(), refused).await),
                    };
                    let parse_ms = now_ms() - started;
                    if parsed.is_err()
                        && !self
                            .gate
                            .try_with_value(|g| g.is_current(&ticket))
                            .unwrap_or(false)
                    {
                        // A later open started while the error was being worked out: it decides.
                        return;
                    }
                    self.show_parsed(source.clone(), base_url, bytes, read_ms, parsed, parse_ms)
                        .map_err(|e| e.to_string())
                }
            };
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

    /// Parses `bytes` and, if they are a valid bundle, shows it ([`Self::show_parsed`]).
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
        self.show_parsed(source, base_url, bytes, read_ms, parsed, parse_ms)
    }

    /// Shows the bundle `parsed` from `bytes`, if it is one: the one place a [`Loaded`] is built and
    /// set (with the content-warning reset and the error cleared). Always leaves the status idle.
    fn show_parsed(
        self,
        source: String,
        base_url: Option<String>,
        bytes: Arc<[u8]>,
        read_ms: f64,
        parsed: Result<Audit, BundleError>,
        parse_ms: f64,
    ) -> Result<Arc<Loaded>, BundleError> {
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
    set(
        "prime_ms",
        JsValue::from_f64(crate::browser::loader::prime_ms()),
    );
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("__atlasLoad"), &record);
}

/// The error to show for a bundle the parser refused (`refused` from
/// [`Audit::from_bytes_deferred`] of `bytes`): exactly [`Audit::from_bytes`]'s error (a wrong format
/// or version, the field path of the first problem). Worked out in a module of its own, downloaded
/// only when a bundle fails to parse: the path-tracking reader stays out of the first wasm
/// ([`crate::on_demand`]). If that module cannot be downloaded, the parser's own error (line and
/// column) with a note that the detailed reading was not available.
pub async fn explain_refused(bytes: Arc<[u8]>, refused: Deferred) -> BundleError {
    let fallback = match &refused {
        Deferred::Refused(plain) => BundleError::Syntax {
            line: plain.line(),
            column: plain.column(),
            message: format!(
                "{plain} (the field-by-field reading of this error could not be downloaded)"
            ),
        },
        Deferred::Invalid(e) => e.clone(),
    };
    #[cfg(all(feature = "split", target_arch = "wasm32"))]
    {
        explain_in_module(bytes, refused).await.unwrap_or(fallback)
    }
    #[cfg(not(all(feature = "split", target_arch = "wasm32")))]
    {
        let _ = fallback;
        refused.explain_bytes(&bytes)
    }
}

/// A module that could not be downloaded ([`explain_refused`] then falls back).
#[cfg(all(feature = "split", target_arch = "wasm32"))]
struct ModuleUnavailable;

#[cfg(all(feature = "split", target_arch = "wasm32"))]
impl From<leptos::wasm_split::SplitLoaderError> for ModuleUnavailable {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        ModuleUnavailable
    }
}

/// The split point of [`explain_refused`].
#[cfg(all(feature = "split", target_arch = "wasm32"))]
#[leptos::wasm_split::wasm_split(explain_bundle, wasm_split_path = ::leptos::wasm_split, fallible)]
fn explain_in_module(
    bytes: Arc<[u8]>,
    refused: Deferred,
) -> Result<BundleError, ModuleUnavailable> {
    Ok(refused.explain_bytes(&bytes))
}
