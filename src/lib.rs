//! Audit Atlas, the browser app: a thin Leptos (CSR) layer over `atlas-core`.
//!
//! - [`loader`]: bytes into the tab (fetch with progress, local files);
//! - [`app`]: the components (metadata, repeat policy, BER table, chart);
//! - [`analyses`]: the RQ1 and RQ2 panels;
//! - [`worker`]: running an analysis in the `atlas-worker` Web Worker (progress, cancel);
//! - [`explorer`]: the re-weighting panel and the state it shares with the atlas;
//! - [`atlas_view`]: the evidence-atlas panels (live canvases, hover, tables, exports);
//! - [`export`]: downloads (PNG, SVG, CSV, JSON) via Blob URLs;
//! - [`number_field`]: the number input every number field uses (never rewritten while typed in, inline message);
//! - [`url_state`]: the shareable view in the page URL;
//! - [`rq3_view`]: the RQ3 panel (Tables 3, 18, 19 and the per-cell directions);
//! - [`inspector`]: the case inspector (filtered virtual list, case view, case links).
//! - [`clinical_view`]: the Clinical view of clinical perturbation bundles (seed `001_…`: Table 5
//!   profile, Figs. 2–6, Tables 6–7, case views in the Tables 1–4 layout with links).
//! - [`pilot_panel`], [`pilot_runner`], [`pilot_store`]: pilot audits with the user's own keys (design,
//!   fetch with retries, IndexedDB run state, keys in memory); [`bundle_judge_panel`]: judge coding of a
//!   loaded bundle's Rationales with the same runner; [`connection_test`]: a provider row's "Test
//!   connection" (the browser's facts for `atlas_pilot::connection`).

pub mod analyses;
pub mod app;
pub mod atlas_view;
pub mod bundle_judge_panel;
pub mod clinical_pilot_panel;
pub mod clinical_view;
pub mod connection_test;
pub mod explorer;
pub mod export;
mod fetch;
pub mod import_panel;
pub mod inspector;
pub mod loader;
pub mod number_field;
pub mod pilot_panel;
pub mod pilot_runner;
pub mod pilot_store;
pub mod rq3_view;
pub mod run_controls;
pub mod url_state;
pub mod worker;

pub use app::App;
