//! A `File` / `Blob` as an [`atlas_import::logs::ranged::RangedSource`]: each range is one
//! `Blob.slice(start, end)` read with `arrayBuffer()`, so an Inspect AI `.eval` is read member by
//! member and never as one string or one whole buffer.

use std::future::Future;

use atlas_import::logs::ranged::RangedSource;
use js_sys::Uint8Array;
use wasm_bindgen_futures::JsFuture;

use crate::browser::loader::js_message;

/// A blob read by ranges.
#[derive(Debug, Clone)]
pub struct BlobSource {
    blob: web_sys::Blob,
    len: u64,
}

impl BlobSource {
    /// A source over `blob` (a `File` is a `Blob`).
    pub fn new(blob: web_sys::Blob) -> Self {
        let len = blob.size() as u64;
        BlobSource { blob, len }
    }
}

impl RangedSource for BlobSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, len: u64) -> impl Future<Output = Result<Vec<u8>, String>> {
        let end = offset.saturating_add(len).min(self.len);
        let slice = self.blob.slice_with_f64_and_f64(offset as f64, end as f64);
        async move {
            let slice = slice.map_err(|e| js_message(&e))?;
            let buffer = JsFuture::from(slice.array_buffer())
                .await
                .map_err(|e| js_message(&e))?;
            Ok(Uint8Array::new(&buffer).to_vec())
        }
    }
}
