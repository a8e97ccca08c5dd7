//! Audit Atlas, the browser app: a thin Leptos (CSR) shell over the `atlas-*` crates, which compute
//! every number (so the browser and the `atlas` CLI agree).
//!
//! The folders are the layers; an arrow only points down:
//!
//! | layer | folder | holds |
//! | --- | --- | --- |
//! | top | [`app`], [`on_demand`] | the page: mounts the views, nothing else; which views are downloaded on demand |
//! | views | [`views`] | one file per section of the page; a view never imports another view |
//! | pilot | [`pilot`] | pilot audits with the user's own keys: panels, runner, run state, connection test |
//! | ui | [`ui`] | small components every view uses: number field, table, chart panel, formatting |
//! | state | [`state`] | the loaded bundle and the one way to open one, the URL state, the text shards, the re-weighting model |
//! | browser | [`browser`] | the browser's capabilities: fetch, file reads, downloads, the analysis worker |

pub mod app;
pub mod browser;
pub mod on_demand;
pub mod pilot;
pub mod state;
pub mod ui;
pub mod views;

pub use app::App;
