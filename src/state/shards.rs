//! The Rationale texts of the loaded bundle: inline, or in text shards fetched next to the bundle file
//! ([`fetch_shard`], checked against the bundle), with their load state per shard ([`ShardState`]);
//! what a cell's text is, given the load states, is [`atlas_core::cases::text_at`].

use std::collections::HashMap;
use std::sync::Arc;

use atlas_core::TextShard;
use leptos::prelude::*;
use leptos::task::spawn_local;

pub use atlas_core::cases::{text_at, texts_in_bundle, ShardState, TextAt};

use crate::browser::loader::{fetch_bytes, resolve_url};
use crate::state::Loaded;

/// Fetches text shard `k` of a loaded bundle (its path is relative to the bundle's URL) and checks it
/// against the bundle. Also used by the judge coding of a loaded bundle's Rationales.
///
/// # Errors
/// A message naming the shard's path: no such shard, a bundle opened from a local file (its shards are
/// not readable from the page), an invalid address, a failed fetch, or a shard that does not validate.
pub async fn fetch_shard(loaded: &Loaded, k: usize) -> Result<TextShard, String> {
    let path = loaded
        .audit
        .file
        .texts
        .as_ref()
        .and_then(|t| t.rationale.as_ref())
        .and_then(|r| r.shards.get(k))
        .map(|s| s.path.clone())
        .ok_or_else(|| format!("the bundle names no text shard number {k}"))?;
    let base = loaded.base_url.clone().ok_or_else(|| {
        format!("{path} sits next to the bundle file; texts of a local file are not readable from the page — open the bundle by URL")
    })?;
    let url = resolve_url(&path, &base).ok_or_else(|| format!("{path}: not a valid address"))?;
    let bytes = fetch_bytes(&url, |_, _| {})
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    TextShard::from_bytes(&bytes, &loaded.audit).map_err(|e| format!("{path}: {e}"))
}

/// Starts fetching shard `k` (if not already loaded or loading).
pub fn load_shard(loaded: &Arc<Loaded>, k: usize, shards: RwSignal<HashMap<usize, ShardState>>) {
    if shards.with_untracked(|s| s.contains_key(&k)) {
        return;
    }
    shards.update(|s| {
        s.insert(k, ShardState::Pending);
    });
    let loaded = loaded.clone();
    spawn_local(async move {
        let result = match fetch_shard(&loaded, k).await {
            Ok(shard) => ShardState::Ready(Arc::new(shard)),
            Err(e) => ShardState::Failed(e),
        };
        shards.try_update(|s| {
            s.insert(k, result);
        });
    });
}
