//! The loader in headless Chromium (`cargo test --target wasm32-unknown-unknown -p audit-atlas`):
//! bytes streamed through a real `Response` / `Blob`, parsed and summarised by the same core as natively;
//! and the rule that loads cannot race (`LoadGate`, `AtlasState::load_with` / `open_bytes`): the open
//! asked for last is the one shown, an earlier one is aborted and its result (bundle or error) dropped.
#![cfg(target_arch = "wasm32")]

use atlas_core::stats::RepeatPolicy;
use atlas_core::summary::summarize;
use atlas_core::{AbstainThreshold, Audit, BundleError};
use audit_atlas::browser::loader::{fetch_bytes_with_signal, read_blob, read_response, LoadError};
use audit_atlas::state::load_gate::LoadGate;
use audit_atlas::state::{AtlasState, LoadStatus};
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{AbortController, AbortSignal};

wasm_bindgen_test_configure!(run_in_browser);

/// 2 models × 2 conditions × 2 statements × 2 repeats. Condition c2 has no Selection readout (like
/// Explain), so it has no responses (`-`) and stays out of the reference score.
/// Codes, axes model, condition, statement, repeat (last fastest):
///   model a: c1 = s1:[agree, disagree] s2:[agree, neither]   c2 = ----
///   model b: c1 = s1:[disagree, disagree] s2:[neither, neither]   c2 = ----
const TINY: &str = include_str!("fixtures/loader-tiny-bundle.json");

fn response_of(bytes: &[u8]) -> web_sys::Response {
    let array = js_sys::Uint8Array::from(bytes);
    web_sys::Response::new_with_opt_buffer_source(Some(array.unchecked_ref()))
        .expect("a Response can be built from bytes")
}

#[wasm_bindgen_test]
async fn a_streamed_response_arrives_whole_and_reports_progress() {
    let last = Cell::new((0u64, None));
    let bytes = read_response(&response_of(TINY.as_bytes()), None, |r, t| last.set((r, t)))
        .await
        .expect("reading a 200 response succeeds");
    assert_eq!(bytes, TINY.as_bytes());
    assert_eq!(
        last.get().0,
        TINY.len() as u64,
        "the last progress call reports every byte"
    );
}

/// The same core in the browser: the bytes read through a `Response` give the hand-calculated summary
/// of `crates/atlas-core/tests/summary.rs` (same fixture; the hand calculation is there): a/c1 (bias,
/// valid, Abstain) = (2, 3, 1), b/c1 = (0, 2, 2); Eq. 4 a 0.75, b 0; ranks a 2, b 1; first_repeat a/c1
/// BER 1.
#[wasm_bindgen_test]
async fn the_browser_computes_the_hand_calculated_numbers() {
    let bytes = read_response(&response_of(TINY.as_bytes()), None, |_, _| {})
        .await
        .unwrap();
    let audit = Audit::from_bytes(&bytes).expect("the fixture is valid");
    let threshold = AbstainThreshold::default();
    let s = summarize(&audit, RepeatPolicy::AllResponses, threshold);
    let counts = |m| {
        let k = s.table.get(m, 0);
        (k.bias, k.valid, k.abstain)
    };
    assert_eq!([counts(0), counts(1)], [(2, 3, 1), (0, 2, 2)]);
    assert_eq!(
        (s.reference, s.ranks),
        (vec![Some(0.75), Some(0.0)], vec![Some(2.0), Some(1.0)])
    );
    let f = summarize(&audit, RepeatPolicy::FirstRepeat, threshold);
    assert_eq!(f.table.get(0, 0).ber(), Some(1.0));
}

#[wasm_bindgen_test]
async fn an_http_error_status_is_a_load_error_naming_the_status() {
    let init = web_sys::ResponseInit::new();
    init.set_status(404);
    init.set_status_text("Not Found");
    let response = web_sys::Response::new_with_opt_str_and_init(Some("missing"), &init).unwrap();
    let err = read_response(&response, None, |_, _| {}).await.unwrap_err();
    assert_eq!(
        err,
        LoadError::Http {
            status: 404,
            status_text: "Not Found".into()
        }
    );
    assert!(err.to_string().contains("404"));
}

#[wasm_bindgen_test]
async fn a_dropped_file_with_a_bad_code_names_the_record_and_its_cell() {
    let bad = TINY.replace("0102----1122----", "0102----11#2----");
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bad.as_bytes()));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).unwrap();
    let bytes = read_blob(&blob, None, |_, _| {}).await.unwrap();
    let err = Audit::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(
            &err,
            BundleError::UnknownCode {
                index: 10,
                code: '#',
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("record 10"), "{message}");
    assert!(
        message.contains("model=b, condition=c1, statement=s2, repeat=1"),
        "{message}"
    );
}

/// TINY under another bundle id.
fn tiny_b() -> String {
    TINY.replace(r#""id": "tiny""#, r#""id": "tiny-b""#)
}

/// A promise and the function that resolves it.
fn deferred() -> (js_sys::Promise, js_sys::Function) {
    let mut resolve = None;
    let promise = js_sys::Promise::new(&mut |r, _| resolve = Some(r));
    (promise, resolve.expect("a promise's executor runs at once"))
}

/// Waits `ms` milliseconds (a timer), letting spawned tasks and promise callbacks run.
async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .expect("a window")
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .expect("a timer");
    });
    JsFuture::from(promise).await.expect("a timer resolves");
}

/// The id and source of the bundle `state` shows.
fn shown(state: &AtlasState) -> Option<(String, String)> {
    state.loaded.with_untracked(|l| {
        l.as_ref()
            .map(|l| (l.audit.metadata().id.clone(), l.source.clone()))
    })
}

fn fresh_state() -> AtlasState {
    let _ = any_spawner::Executor::init_wasm_bindgen();
    AtlasState::new()
}

/// A load through `state.load_with` whose bytes arrive only when the returned function is called: it
/// reports 5 of 10 bytes, then waits, then yields `outcome` — whatever its abort signal says (a reader
/// that ignores the signal, so the discard rule is tested on its own). The signal it got is kept in the
/// returned cell.
fn slow_load(
    state: AtlasState,
    source: &str,
    outcome: Result<Vec<u8>, LoadError>,
) -> (js_sys::Function, Rc<RefCell<Option<AbortSignal>>>) {
    let (arrived, release) = deferred();
    let signal_seen = Rc::new(RefCell::new(None));
    let keep = signal_seen.clone();
    state.load_with(source.to_string(), None, move |signal, progress| {
        *keep.borrow_mut() = signal;
        async move {
            progress(5, Some(10));
            let _ = JsFuture::from(arrived).await;
            outcome
        }
    });
    (release, signal_seen)
}

#[wasm_bindgen_test]
fn each_open_supersedes_the_one_before_and_a_finished_load_is_never_aborted() {
    let mut gate = LoadGate::new();
    let first = gate.begin();
    let second = gate.begin();
    assert_eq!((first.generation(), second.generation()), (1, 2));
    assert!(
        first.signal().expect("a signal").aborted(),
        "the second open aborts the first one's reading"
    );
    assert!(!second.signal().expect("a signal").aborted());
    assert!(!gate.is_current(&first) && gate.is_current(&second));
    assert!(
        !gate.settle(&first),
        "a superseded load's result is discarded"
    );
    assert!(
        gate.is_current(&second),
        "a superseded load that settles changes nothing"
    );
    assert!(gate.settle(&second), "the last open's result is shown");
    let third = gate.begin();
    assert!(
        !second.signal().expect("a signal").aborted(),
        "a load that already finished is not aborted by the next open"
    );
    assert_eq!(third.generation(), 3);
    assert!(gate.settle(&third));
}

#[wasm_bindgen_test]
async fn an_abort_ends_a_read_at_once_even_on_a_body_that_never_ends() {
    // A body that sends two bytes and then stays open without another chunk, like a stalled server.
    let stream: web_sys::ReadableStream = js_sys::Function::new_no_args(
        "return new ReadableStream({ start(c) { c.enqueue(new Uint8Array([123, 10])); } });",
    )
    .call0(&JsValue::NULL)
    .expect("a ReadableStream")
    .unchecked_into();
    let response = web_sys::Response::new_with_opt_readable_stream(Some(&stream)).unwrap();
    let controller = AbortController::new().unwrap();
    let signal = controller.signal();
    let result = Rc::new(RefCell::new(None));
    let received = Rc::new(Cell::new(0));
    {
        let (result, received) = (result.clone(), received.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let read = read_response(&response, Some(&signal), |r, _| received.set(r)).await;
            *result.borrow_mut() = Some(read);
        });
    }
    sleep(50).await;
    assert_eq!(received.get(), 2, "the first chunk was read");
    assert!(result.borrow().is_none(), "the read waits for more");
    controller.abort();
    sleep(50).await;
    assert_eq!(
        result.borrow_mut().take(),
        Some(Err(LoadError::Aborted)),
        "an abort ends the waiting read"
    );
}

#[wasm_bindgen_test]
async fn a_file_read_stops_between_chunks_when_it_is_aborted() {
    // 4 MiB: a Blob's stream delivers it in many chunks (64 KiB in Chromium).
    let data = vec![b' '; 4 << 20];
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&data[..]));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).unwrap();
    let controller = AbortController::new().unwrap();
    let signal = controller.signal();
    let last = Cell::new(0u64);
    let err = read_blob(&blob, Some(&signal), |r, _| {
        last.set(r);
        if r > 0 {
            controller.abort();
        }
    })
    .await
    .unwrap_err();
    assert_eq!(err, LoadError::Aborted);
    assert!(
        last.get() > 0 && last.get() < data.len() as u64,
        "stopped after {} of {} bytes",
        last.get(),
        data.len()
    );
}

#[wasm_bindgen_test]
async fn an_aborted_fetch_is_reported_as_aborted_not_as_a_network_failure() {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(TINY.as_bytes()));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).unwrap();
    let url = web_sys::Url::create_object_url_with_blob(&blob).unwrap();
    let fetched = fetch_bytes_with_signal(&url, None, |_, _| {}).await;
    assert_eq!(
        fetched.as_deref(),
        Ok(TINY.as_bytes()),
        "the URL serves TINY"
    );
    let controller = AbortController::new().unwrap();
    let signal = controller.signal();
    let result = Rc::new(RefCell::new(None));
    {
        let (result, url, signal) = (result.clone(), url.clone(), signal.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let read = fetch_bytes_with_signal(&url, Some(&signal), |_, _| {}).await;
            *result.borrow_mut() = Some(read);
        });
    }
    // The fetch has started (its promise is pending); abort it before it answers.
    controller.abort();
    sleep(50).await;
    assert_eq!(result.borrow_mut().take(), Some(Err(LoadError::Aborted)));
    web_sys::Url::revoke_object_url(&url).unwrap();
}

#[wasm_bindgen_test]
async fn a_slow_load_that_finishes_after_a_later_open_is_discarded() {
    let state = fresh_state();
    let (release, signal) = slow_load(state, "slow: tiny", Ok(TINY.as_bytes().to_vec()));
    sleep(0).await;
    assert_eq!(
        state.status.get_untracked(),
        LoadStatus::Reading {
            source: "slow: tiny".into(),
            received: 5,
            total: Some(10)
        }
    );
    let later = state
        .open_bytes(
            "later: tiny-b".into(),
            None,
            Arc::from(tiny_b().as_bytes()),
            0.0,
        )
        .expect("tiny-b is valid");
    assert_eq!(later.audit.metadata().id, "tiny-b");
    assert_eq!(state.status.get_untracked(), LoadStatus::Idle);
    assert!(
        signal.borrow().as_ref().expect("a signal").aborted(),
        "the later open aborted the slow one"
    );
    release.call0(&JsValue::NULL).unwrap();
    sleep(50).await;
    assert_eq!(
        shown(&state),
        Some(("tiny-b".into(), "later: tiny-b".into())),
        "the later bundle stays shown after the slow one completes"
    );
    assert_eq!(state.status.get_untracked(), LoadStatus::Idle);
    assert_eq!(state.error.get_untracked(), None);
}

#[wasm_bindgen_test]
async fn of_two_slow_loads_the_later_wins_even_when_the_earlier_finishes_first() {
    let state = fresh_state();
    let (release_a, _) = slow_load(state, "a", Ok(TINY.as_bytes().to_vec()));
    let (release_b, _) = slow_load(state, "b", Ok(tiny_b().into_bytes()));
    sleep(0).await;
    release_a.call0(&JsValue::NULL).unwrap();
    sleep(50).await;
    assert_eq!(
        shown(&state),
        None,
        "the earlier load's bundle is never shown"
    );
    assert_eq!(
        state.status.get_untracked(),
        LoadStatus::Reading {
            source: "b".into(),
            received: 5,
            total: Some(10)
        },
        "the later load is still shown as loading"
    );
    release_b.call0(&JsValue::NULL).unwrap();
    sleep(50).await;
    assert_eq!(shown(&state), Some(("tiny-b".into(), "b".into())));
    assert_eq!(state.status.get_untracked(), LoadStatus::Idle);
}

#[wasm_bindgen_test]
async fn an_earlier_load_that_fails_after_a_later_one_succeeded_shows_no_error() {
    let state = fresh_state();
    let (release, _) = slow_load(
        state,
        "https://example.invalid/gone.json",
        Err(LoadError::Network("Failed to fetch".into())),
    );
    sleep(0).await;
    state
        .open_bytes("later".into(), None, Arc::from(TINY.as_bytes()), 0.0)
        .expect("TINY is valid");
    release.call0(&JsValue::NULL).unwrap();
    sleep(50).await;
    assert_eq!(state.error.get_untracked(), None);
    assert_eq!(shown(&state), Some(("tiny".into(), "later".into())));
}

#[wasm_bindgen_test]
async fn a_failed_load_names_what_failed_and_keeps_the_loaded_bundle() {
    let state = fresh_state();
    state
        .open_bytes("first".into(), None, Arc::from(TINY.as_bytes()), 0.0)
        .expect("TINY is valid");
    let (release, _) = slow_load(
        state,
        "https://example.org/missing.json",
        Err(LoadError::Http {
            status: 404,
            status_text: "Not Found".into(),
        }),
    );
    release.call0(&JsValue::NULL).unwrap();
    sleep(50).await;
    let error = state.error.get_untracked().expect("an error is shown");
    assert!(
        error.contains("https://example.org/missing.json") && error.contains("HTTP 404"),
        "{error}"
    );
    assert_eq!(shown(&state), Some(("tiny".into(), "first".into())));
    assert_eq!(state.status.get_untracked(), LoadStatus::Idle);
    // A bundle made in the tab that does not parse: its error goes to the caller, nothing changes.
    let bad = state.open_bytes("bad".into(), None, Arc::from(&b"{"[..]), 0.0);
    assert!(bad.is_err());
    assert_eq!(shown(&state), Some(("tiny".into(), "first".into())));
}
