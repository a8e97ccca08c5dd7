//! The messages between the Import view and the Parquet Web Worker (`crates/atlas-parquet-worker`),
//! which runs [`crate::logs::parquet`] on the files the page posts it. They live here, outside the
//! `parquet` feature, so that the app speaks the protocol without building the reader: the app's
//! own wasm leaves arrow-rs out and fetches the worker's wasm only when a Parquet file is chosen.

use serde::{Deserialize, Serialize};

use crate::Report;

/// What the page asks of the worker, with the chosen files posted beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "job", rename_all = "snake_case")]
pub enum ParquetJob {
    /// The first file's footer summary and its header plus first `rows` rows as CSV text.
    Preview {
        /// Data rows to return (the form mapper's guess reads up to 200).
        rows: usize,
    },
    /// Every file through one mapping (a mapping document, JSON) into one bundle.
    Import {
        /// The mapping document (`docs/import-mapping.md`) as JSON text.
        mapping: String,
    },
}

impl ParquetJob {
    /// The job as JSON (what the page posts).
    pub fn to_json(&self) -> String {
        // A tagged enum of plain fields: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The worker's answer to one [`ParquetJob`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum ParquetReply {
    /// Answer to [`ParquetJob::Preview`].
    Previewed {
        /// The footer in words, e.g. `Parquet: 720 rows in 4 row groups, 10 columns, SNAPPY;
        /// written by parquet-cpp-arrow version 21.0.0`.
        label: String,
        /// The header and first rows as CSV (every field quoted).
        csv: String,
    },
    /// Answer to [`ParquetJob::Import`].
    Imported {
        /// The bundle's `metadata.id`.
        bundle_id: String,
        /// The bundle as compact JSON (what `atlas import` writes).
        bundle: String,
        /// The validation report.
        report: Box<Report>,
    },
    /// The job failed: the reader's error (input, row group or `(footer)`, column) or a malformed
    /// job.
    Failed {
        /// The message shown to the user.
        message: String,
    },
}

impl ParquetReply {
    /// The reply as JSON (what the worker posts).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"reply":"failed","message":"the reply could not be written: {e}"}}"#)
        })
    }
}

/// The worker's script, relative to the page (Trunk's loader shim for the `atlas-parquet-worker`
/// binary; `index.html`).
pub const PARQUET_WORKER_SCRIPT: &str = "atlas-parquet-worker_loader.js";
