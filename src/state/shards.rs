//! The Rationale texts of the loaded bundle: inline, or in text shards fetched next to the bundle file
//! ([`fetch_shard`], checked against the bundle), with their load state per shard ([`ShardState`]).

use std::collections::HashMap;
use std::sync::Arc;

use atlas_core::{Audit, TextShard};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::browser::loader::{fetch_bytes, resolve_url};
use crate::state::Loaded;

/// What the bundle holds for the Rationale text of a cell, given the shards loaded so far.
#[derive(Debug, Clone, PartialEq)]
pub enum TextAt<'a> {
    /// The text.
    Text(&'a str),
    /// Its shard is being fetched.
    Loading,
    /// Its shard is not loaded yet (index into `texts.rationale.shards`).
    NotLoaded(usize),
    /// Its shard could not be loaded.
    Failed(&'a str),
    /// The bundle holds no text for this cell.
    Absent,
}

/// Load state of one text shard.
#[derive(Debug, Clone)]
pub enum ShardState {
    /// Being fetched.
    Pending,
    /// Fetched and checked against the bundle.
    Ready(Arc<TextShard>),
    /// Could not be fetched or did not validate (the message names the shard's path).
    Failed(String),
}

/// The Rationale text of `cell`: inline in the bundle, or in a loaded shard.
pub fn text_at<'a>(
    audit: &'a Audit,
    shards: &'a HashMap<usize, ShardState>,
    cell: usize,
) -> TextAt<'a> {
    if let Some(t) = audit.inline_rationale(cell) {
        return TextAt::Text(t);
    }
    let Some(k) = audit.rationale_shard_for(cell) else {
        return TextAt::Absent;
    };
    match shards.get(&k) {
        None => TextAt::NotLoaded(k),
        Some(ShardState::Pending) => TextAt::Loading,
        Some(ShardState::Failed(e)) => TextAt::Failed(e),
        Some(ShardState::Ready(s)) => s.text(cell).map_or(TextAt::Absent, TextAt::Text),
    }
}

/// Number of Rationale texts the bundle holds (inline and in shards).
pub fn texts_in_bundle(audit: &Audit) -> usize {
    audit
        .file
        .texts
        .as_ref()
        .and_then(|t| t.rationale.as_ref())
        .map_or(0, |r| {
            r.inline.as_ref().map_or(0, |i| i.cells.len())
                + r.shards.iter().map(|s| s.count).sum::<usize>()
        })
}

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
