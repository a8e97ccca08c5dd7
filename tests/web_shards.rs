//! The page's one text-shard cache (`cargo test --target wasm32-unknown-unknown -p audit-atlas --test
//! web_shards`): two views that ask for the same shard of the loaded bundle at once (the case inspector
//! and the Clinical view each hold a handle) fetch it once and both see it arrive; a failed shard is
//! not asked for again; a request for another bundle's shard drops the previous bundle's, and a fetch
//! of the previous bundle that ends after that is discarded. The fetches are stand-ins counted by the
//! test; the bundle is `tests/fixtures/rq3-cases-bundle.json`.
#![cfg(target_arch = "wasm32")]

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use atlas_core::bundle::{TextCells, TextShardFile};
use atlas_core::{Audit, TextShard};
use audit_atlas::state::shards::{ShardCache, ShardState};
use audit_atlas::state::Loaded;
use leptos::prelude::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const FIXTURE: &str = include_str!("fixtures/rq3-cases-bundle.json");

fn loaded() -> Arc<Loaded> {
    Arc::new(Loaded {
        audit: Audit::from_json(FIXTURE).expect("valid fixture"),
        source: "fixture".into(),
        base_url: None,
        data: Arc::from(Vec::new()),
        read_ms: 0.0,
        parse_ms: 0.0,
    })
}

/// A one-text shard of `loaded`'s bundle.
fn shard(loaded: &Loaded) -> TextShard {
    TextShard {
        file: TextShardFile {
            format: "audit-atlas-text-shard".into(),
            version: 1,
            bundle: loaded.audit.metadata().id.clone(),
            field: "rationale".into(),
            data: TextCells {
                cells: vec![19],
                texts: vec!["A text from the shard.".into()],
            },
        },
    }
}

/// What a stand-in fetch returns.
type Fetching = std::pin::Pin<Box<dyn Future<Output = Result<TextShard, String>>>>;

/// A stand-in fetch that counts its calls and answers `ok` (a shard) or fails.
fn counted(calls: &Rc<Cell<usize>>, ok: bool) -> impl FnOnce(Arc<Loaded>, usize) -> Fetching {
    let calls = calls.clone();
    move |loaded, k| {
        calls.set(calls.get() + 1);
        Box::pin(async move {
            if ok {
                Ok(shard(&loaded))
            } else {
                Err(format!("shard {k}: 404"))
            }
        })
    }
}

/// Lets the spawned fetches run to their end (they are ready at once).
async fn settle() {
    for _ in 0..20 {
        let _ =
            wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&JsValue::NULL)).await;
    }
}

fn state(s: &HashMap<usize, ShardState>, k: usize) -> &'static str {
    match s.get(&k) {
        None => "not asked",
        Some(ShardState::Pending) => "pending",
        Some(ShardState::Ready(_)) => "ready",
        Some(ShardState::Failed(_)) => "failed",
    }
}

#[wasm_bindgen_test]
async fn two_views_asking_for_one_shard_at_once_fetch_it_once() {
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let owner = Owner::new();
    owner.set();
    let cache = ShardCache::new();
    let bundle = loaded();
    let inspector = cache.for_bundle(&bundle);
    let clinical = cache.for_bundle(&bundle);
    let calls = Rc::new(Cell::new(0));
    inspector.load_with(0, counted(&calls, true));
    clinical.load_with(0, counted(&calls, true));
    assert_eq!(calls.get(), 1, "the second view finds the shard pending");
    assert_eq!(clinical.with_untracked(|s| state(s, 0)), "pending");
    settle().await;
    assert_eq!(inspector.with_untracked(|s| state(s, 0)), "ready");
    assert_eq!(clinical.with_untracked(|s| state(s, 0)), "ready");
    clinical.load_with(0, counted(&calls, true));
    assert_eq!(calls.get(), 1, "a loaded shard is not fetched again");
    assert_eq!(inspector.with_untracked(|s| state(s, 1)), "not asked");
}

#[wasm_bindgen_test]
async fn a_failed_shard_stays_failed_and_another_bundle_starts_afresh() {
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let owner = Owner::new();
    owner.set();
    let cache = ShardCache::new();
    let first = loaded();
    let view = cache.for_bundle(&first);
    let calls = Rc::new(Cell::new(0));
    view.load_with(2, counted(&calls, false));
    settle().await;
    assert_eq!(view.with_untracked(|s| state(s, 2)), "failed");
    view.load_with(2, counted(&calls, true));
    assert_eq!(calls.get(), 1, "a failed shard is not asked for again");

    // The first bundle's shard 3 is still on its way when a view of a newly opened bundle asks for
    // its shard 3: the cache now holds the new bundle only, and the late result is dropped.
    view.load_with(3, counted(&calls, true));
    let second = loaded();
    let next_view = cache.for_bundle(&second);
    assert_eq!(next_view.with_untracked(|s| state(s, 3)), "not asked");
    next_view.load_with(3, counted(&calls, false));
    assert_eq!(calls.get(), 3, "the new bundle's shard is fetched for it");
    settle().await;
    assert_eq!(
        next_view.with_untracked(|s| state(s, 3)),
        "failed",
        "its own result"
    );
    assert_eq!(next_view.with_untracked(|s| state(s, 2)), "not asked");
    assert_eq!(
        view.with_untracked(|s| s.len()),
        0,
        "the old bundle's view sees nothing"
    );
}
