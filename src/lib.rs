//! Audit Atlas, the browser app: a thin Leptos (CSR) layer over `atlas-core`.
//!
//! - [`loader`]: bytes into the tab (fetch with progress, local files);
//! - [`app`]: the components (metadata, repeat policy, BER table, chart, responses);
//! - [`analyses`]: the RQ1 and RQ2 panels;
//! - [`worker`]: running an analysis in the `atlas-worker` Web Worker (progress, cancel).

pub mod analyses;
pub mod app;
pub mod import_panel;
pub mod loader;
pub mod worker;

pub use app::App;
