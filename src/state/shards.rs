//! The Rationale texts of the loaded bundle: inline, or in text shards fetched next to the bundle file
//! ([`fetch_shard`], checked against the bundle). One cache per page ([`ShardCache`], in
//! [`crate::state::AtlasState`]) holds every shard's load state, keyed by its index in the loaded
//! bundle's `texts.rationale.shards`, for every view that shows texts (the case inspector, the Clinical
//! view): a shard is fetched at most once per loaded bundle, even when two views ask for it at once,
//! because the first request marks it pending before its fetch starts. What a cell's text is, given the
//! load states, is [`atlas_core::cases::text_at`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Weak};

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

/// The shards of one bundle and their load states.
#[derive(Default)]
struct Held {
    /// The bundle the states belong to (compared by address; a `Weak` keeps the address from being
    /// reused by a later bundle).
    bundle: Weak<Loaded>,
    /// Per shard index: its load state. A shard not in the map has not been asked for.
    states: HashMap<usize, ShardState>,
}

impl Held {
    fn holds(&self, loaded: &Loaded) -> bool {
        std::ptr::eq(self.bundle.as_ptr(), loaded)
    }
}

/// The page's one text-shard cache: the load state of every shard of the loaded bundle that a view
/// asked for. It holds one bundle at a time; the first request for a shard of another bundle drops the
/// previous bundle's shards, and a fetch that ends after that is discarded. Views use it through a
/// [`BundleShards`] handle ([`ShardCache::for_bundle`]).
#[derive(Clone, Copy)]
pub struct ShardCache {
    held: RwSignal<Held>,
}

impl Default for ShardCache {
    fn default() -> Self {
        Self::new()
    }
}

impl ShardCache {
    /// An empty cache (created once, with the page's state).
    pub fn new() -> Self {
        ShardCache {
            held: RwSignal::new(Held::default()),
        }
    }

    /// A view's handle on the shards of `loaded` (owned by the calling view: create it when the view
    /// is built).
    pub fn for_bundle(self, loaded: &Arc<Loaded>) -> BundleShards {
        BundleShards {
            cache: self,
            loaded: StoredValue::new(loaded.clone()),
        }
    }
}

/// One view's handle on the [`ShardCache`] for the bundle it shows. Every view holding a handle for the
/// same loaded bundle sees the same load states, and its reads subscribe to them like a signal's.
#[derive(Clone, Copy)]
pub struct BundleShards {
    cache: ShardCache,
    loaded: StoredValue<Arc<Loaded>>,
}

impl BundleShards {
    /// `f` of the load states of this bundle's shards (by shard index), tracked: a reactive closure
    /// that reads them runs again when a shard starts or finishes loading. Empty while the cache holds
    /// another bundle's shards.
    pub fn with<R>(self, f: impl FnOnce(&HashMap<usize, ShardState>) -> R) -> R {
        self.read(true, f)
    }

    /// [`with`](Self::with) without subscribing.
    pub fn with_untracked<R>(self, f: impl FnOnce(&HashMap<usize, ShardState>) -> R) -> R {
        self.read(false, f)
    }

    /// Subscribes the running reactive closure to the load states.
    pub fn track(self) {
        self.cache.held.track();
    }

    /// Starts fetching shard `k` ([`fetch_shard`]) unless it is loaded, being fetched or failed already
    /// (a failed shard is not asked for again for this bundle).
    pub fn load(self, k: usize) {
        self.load_with(k, |loaded, k| async move { fetch_shard(&loaded, k).await });
    }

    /// [`load`](Self::load) with the fetch given: `fetch(bundle, k)` is called at most once per shard
    /// and loaded bundle, and its result becomes the shard's state (ready or failed) unless another
    /// bundle's shards were asked for meanwhile.
    pub fn load_with<F, Fut>(self, k: usize, fetch: F)
    where
        F: FnOnce(Arc<Loaded>, usize) -> Fut,
        Fut: Future<Output = Result<TextShard, String>> + 'static,
    {
        let Some(loaded) = self.loaded.try_get_value() else {
            return;
        };
        let asked = self
            .cache
            .held
            .with_untracked(|h| h.holds(&loaded) && h.states.contains_key(&k));
        if asked {
            return;
        }
        self.cache.held.update(|h| {
            if !h.holds(&loaded) {
                *h = Held {
                    bundle: Arc::downgrade(&loaded),
                    states: HashMap::new(),
                };
            }
            h.states.insert(k, ShardState::Pending);
        });
        let held = self.cache.held;
        let fetching = fetch(loaded.clone(), k);
        spawn_local(async move {
            let result = match fetching.await {
                Ok(shard) => ShardState::Ready(Arc::new(shard)),
                Err(e) => ShardState::Failed(e),
            };
            held.try_update(|h| {
                if h.holds(&loaded) {
                    h.states.insert(k, result);
                }
            });
        });
    }

    fn read<R>(self, tracked: bool, f: impl FnOnce(&HashMap<usize, ShardState>) -> R) -> R {
        let Some(loaded) = self.loaded.try_get_value() else {
            return f(&HashMap::new());
        };
        let read = |h: &Held| {
            if h.holds(&loaded) {
                f(&h.states)
            } else {
                f(&HashMap::new())
            }
        };
        if tracked {
            self.cache.held.with(read)
        } else {
            self.cache.held.with_untracked(read)
        }
    }
}
