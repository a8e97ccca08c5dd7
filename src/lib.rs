//! Audit Atlas, the browser app: a thin Leptos (CSR) layer over `atlas-core`.
//!
//! - [`loader`]: bytes into the tab (fetch with progress, local files);
//! - [`app`]: the components (metadata, repeat policy, BER table, chart, responses).

pub mod app;
pub mod loader;

pub use app::App;
