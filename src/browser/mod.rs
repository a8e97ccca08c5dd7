//! The browser's capabilities, one per file: bundle bytes into the tab ([`loader`]), `fetch` with a
//! timeout ([`fetch`]), a file read by byte ranges ([`blob_source`]), downloads ([`export`]), the clipboard ([`clipboard`]) and the analysis Web
//! Worker ([`worker`]) the Plan view's pool of planner workers ([`plan_pool`]) and the Parquet worker
//! ([`parquet_worker`]), fetched only when a Parquet file is chosen.

pub mod blob_source;
pub mod clipboard;
pub mod export;
pub mod fetch;
pub mod loader;
pub mod parquet_worker;
pub mod plan_pool;
pub mod worker;
