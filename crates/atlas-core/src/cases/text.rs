//! Rationale texts of a bundle: inline in the bundle file or in text shards that are loaded on demand
//! ([`ShardState`]); the text of one cell ([`text_at`]) and a search over the texts loaded so far
//! ([`search_texts`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::index::CellSet;
use crate::{Audit, TextShard};

/// What the bundle holds for the Rationale text of a cell, given the shards loaded so far.
#[derive(Debug, Clone, PartialEq)]
pub enum TextAt<'a> {
    /// The text.
    Text(&'a str),
    /// Its shard is being fetched.
    Loading,
    /// Its shard is not loaded yet (index into `texts.rationale.shards`).
    NotLoaded(usize),
    /// Its shard could not be loaded (the reason).
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
    /// Could not be loaded (the reason, naming the shard's path).
    Failed(String),
}

/// The Rationale text of `cell`: inline in the bundle, or in its shard when `shards` (by index into
/// `texts.rationale.shards`) holds it loaded.
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

/// The cells whose loaded Rationale text (inline, then the ready shards in index order) contains
/// `query` (case-insensitive: both lower-cased), and the number of texts searched.
pub fn search_texts(
    audit: &Audit,
    shards: &HashMap<usize, ShardState>,
    query: &str,
) -> (CellSet, usize) {
    let needle = query.to_lowercase();
    let mut set = CellSet::new(audit.cells);
    let mut searched = 0usize;
    let mut scan = |cells: &[u64], texts: &[String]| {
        for (&c, t) in cells.iter().zip(texts) {
            searched += 1;
            if t.to_lowercase().contains(&needle) {
                set.insert(c as usize);
            }
        }
    };
    if let Some(inline) = audit
        .file
        .texts
        .as_ref()
        .and_then(|t| t.rationale.as_ref())
        .and_then(|r| r.inline.as_ref())
    {
        scan(&inline.cells, &inline.texts);
    }
    let mut keys: Vec<&usize> = shards.keys().collect();
    keys.sort_unstable();
    for k in keys {
        if let Some(ShardState::Ready(s)) = shards.get(k) {
            scan(&s.file.data.cells, &s.file.data.texts);
        }
    }
    (set, searched)
}

/// Number of Rationale texts the bundle holds (inline and in shards, as the bundle file declares).
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
