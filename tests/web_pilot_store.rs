//! The pilot's IndexedDB writer (`cargo test --target wasm32-unknown-unknown -p audit-atlas --test
//! web_pilot_store`): `written(seq)` returns only once the state queued with that number, or a newer
//! state of the same record, is in IndexedDB. The browser runner holds a call's concurrency slot until
//! then, so a closed tab sends again at most `concurrency` calls.
#![cfg(target_arch = "wasm32")]

use audit_atlas::pilot::store::{
    clear_judging, persist_judging, written, SavedJudging, DB_NAME, JUDGING, JUDGING_FORMAT, STORE,
};
use leptos::prelude::*;
use rexie::{Rexie, TransactionMode};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn saved(i: usize) -> SavedJudging {
    SavedJudging {
        format: JUDGING_FORMAT.to_string(),
        form: serde_json::json!({ "i": i }),
        plan_fingerprint: "fixture".into(),
        // A large state, so that a write takes long enough for later states to queue behind it.
        state: format!("state {i} {}", "x".repeat(200_000)),
        cancelled: false,
        source: "test".into(),
    }
}

/// The number `i` of the judging record now in IndexedDB, read with its own connection.
async fn stored_index() -> Option<u64> {
    let db = Rexie::builder(DB_NAME).build().await.expect("open");
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadOnly)
        .expect("transaction");
    let value = tx
        .store(STORE)
        .expect("store")
        .get(JsValue::from_str(JUDGING))
        .await
        .expect("get")?;
    let saved: SavedJudging = serde_json::from_str(&value.as_string()?).expect("a SavedJudging");
    saved.form["i"].as_u64()
}

#[wasm_bindgen_test]
async fn written_returns_only_once_that_state_or_a_newer_one_is_in_indexeddb() {
    // The writer runs on Leptos' executor (as in the app, where `mount_to_body` sets it up).
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let owner = Owner::new();
    owner.set();
    let error = RwSignal::new(None::<String>);
    // Five states queued at once: one writer, the newest wins, each number counts as written once a
    // state at least as new is on disk.
    let seqs: Vec<u64> = (0..5)
        .map(|i| persist_judging(&saved(i), error).expect("serialisable"))
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequence numbers increase: {seqs:?}"
    );

    written(seqs[0]).await;
    let first = stored_index().await;
    assert!(
        first.is_some(),
        "after written(first) a state is stored: {first:?}"
    );
    written(seqs[2]).await;
    let third = stored_index().await;
    assert!(
        third.is_some_and(|i| i >= 2),
        "after written(third) the stored state is the third or newer: {third:?}"
    );
    written(seqs[4]).await;
    assert_eq!(
        stored_index().await,
        Some(4),
        "after written(last) the last state is stored"
    );
    // A number already written returns at once.
    written(seqs[1]).await;
    assert_eq!(error.get_untracked(), None, "no write failed");

    // A later state of the same record waits for its own write, not the earlier one's.
    let later = persist_judging(&saved(7), error).expect("serialisable");
    assert!(later > seqs[4]);
    written(later).await;
    assert_eq!(stored_index().await, Some(7));

    clear_judging().await.expect("clear");
    assert_eq!(stored_index().await, None, "cleared");
}
