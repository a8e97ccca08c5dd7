//! The browser's capabilities, one per file: bundle bytes into the tab ([`loader`]), `fetch` with a
//! timeout ([`fetch`]), downloads ([`export`]), the clipboard ([`clipboard`]) and the analysis Web
//! Worker ([`worker`]) and the Plan view's pool of planner workers ([`plan_pool`]).

pub mod clipboard;
pub mod export;
pub mod fetch;
pub mod loader;
pub mod plan_pool;
pub mod worker;
