//! The browser's capabilities, one per file: bundle bytes into the tab ([`loader`]), `fetch` with a
//! timeout ([`fetch`]), downloads ([`export`]) and the analysis Web Worker ([`worker`]).

pub mod export;
pub mod fetch;
pub mod loader;
pub mod worker;
