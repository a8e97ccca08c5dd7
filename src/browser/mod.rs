//! The browser's capabilities, one per file: bundle bytes into the tab ([`loader`]), `fetch` with a
//! timeout ([`fetch`]), downloads ([`export`]), the clipboard ([`clipboard`]) and the analysis Web
//! Worker ([`worker`]).

pub mod clipboard;
pub mod export;
pub mod fetch;
pub mod loader;
pub mod worker;
