//! The loader in headless Chromium (`cargo test --target wasm32-unknown-unknown -p audit-atlas`):
//! bytes streamed through a real `Response` / `Blob`, parsed and summarised by the same core as natively.
#![cfg(target_arch = "wasm32")]

use atlas_core::stats::RepeatPolicy;
use atlas_core::{Audit, BundleError};
use audit_atlas::app::summarize;
use audit_atlas::loader::{read_blob, read_response, LoadError};
use std::cell::Cell;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// 2 models × 2 conditions × 2 statements × 2 repeats. Condition c2 has no Selection readout (like
/// Explain), so it has no responses (`-`) and stays out of the reference score.
/// Codes, axes model, condition, statement, repeat (last fastest):
///   model a: c1 = s1:[agree, disagree] s2:[agree, neither]   c2 = ----
///   model b: c1 = s1:[disagree, disagree] s2:[neither, neither]   c2 = ----
const TINY: &str = r#"{
 "format": "audit-atlas-bundle", "version": 1,
 "metadata": {"id": "tiny", "title": "Tiny", "description": "wasm loader fixture",
   "source": {"citation": "hand-made"}, "license": {"id": "CC0-1.0", "attribution": "none"},
   "content_warning": null, "produced_by": {"tool": "hand"}},
 "facets": [
   {"id": "model", "levels": [{"id": "a"}, {"id": "b"}]},
   {"id": "condition", "levels": [{"id": "c1", "has_selection": true}, {"id": "c2", "has_selection": false}]},
   {"id": "statement", "levels": [{"id": "s1", "text": "S one"}, {"id": "s2", "text": "S two"}]},
   {"id": "repeat", "levels": [{"id": "1"}, {"id": "2"}]}
 ],
 "responses": {
   "axes": ["model", "condition", "statement", "repeat"],
   "selection": {
     "values": [{"raw": "agree", "evidence": 1, "obtained": "regex"},
                {"raw": "disagree", "evidence": 0, "obtained": "regex"},
                {"raw": "neither", "evidence": null, "obtained": "parser_failure"}],
     "codes": "0102----1122----"
   }
 }
}"#;

fn response_of(bytes: &[u8]) -> web_sys::Response {
    let array = js_sys::Uint8Array::from(bytes);
    web_sys::Response::new_with_opt_buffer_source(Some(array.unchecked_ref()))
        .expect("a Response can be built from bytes")
}

#[wasm_bindgen_test]
async fn a_streamed_response_arrives_whole_and_reports_progress() {
    let last = Cell::new((0u64, None));
    let bytes = read_response(&response_of(TINY.as_bytes()), |r, t| last.set((r, t)))
        .await
        .expect("reading a 200 response succeeds");
    assert_eq!(bytes, TINY.as_bytes());
    assert_eq!(
        last.get().0,
        TINY.len() as u64,
        "the last progress call reports every byte"
    );
}

/// Hand calculation (policy all_responses):
///   a/c1: valid = agree, disagree, agree = 3, bias 2, Abstain 1 → BER 2/3.
///   b/c1: valid = disagree, disagree = 2, bias 0, Abstain 2 → BER 0.
///   Eq. 4 over c1 only (c2 has no Selection): a = mean(s1 1/2, s2 1/1) = 0.75; b = mean(s1 0) = 0
///   (s2 all Abstain → missing, not 0). Ranks: b = 1, a = 2.
/// first_repeat: a/c1 = agree, agree → 1.0 (2 valid); b/c1 = disagree, neither → 0/1, Abstain 1.
#[wasm_bindgen_test]
async fn the_browser_computes_the_hand_calculated_numbers() {
    let bytes = read_response(&response_of(TINY.as_bytes()), |_, _| {})
        .await
        .unwrap();
    let audit = Audit::from_bytes(&bytes).expect("the fixture is valid");
    let s = summarize(&audit, RepeatPolicy::AllResponses);
    let a = s.table.get(0, 0);
    assert_eq!((a.bias, a.valid, a.abstain), (2, 3, 1));
    assert!((a.ber().unwrap() - 2.0 / 3.0).abs() < 1e-15);
    let b = s.table.get(1, 0);
    assert_eq!((b.bias, b.valid, b.abstain), (0, 2, 2));
    assert_eq!(s.table.get(0, 1).ber(), None, "no Selection under c2");
    assert_eq!(s.reference, vec![Some(0.75), Some(0.0)]);
    assert_eq!(s.ranks, vec![Some(2.0), Some(1.0)]);
    let f = summarize(&audit, RepeatPolicy::FirstRepeat);
    assert_eq!(f.table.get(0, 0).ber(), Some(1.0));
    let fb = f.table.get(1, 0);
    assert_eq!((fb.bias, fb.valid, fb.abstain), (0, 1, 1));
}

#[wasm_bindgen_test]
async fn an_http_error_status_is_a_load_error_naming_the_status() {
    let init = web_sys::ResponseInit::new();
    init.set_status(404);
    init.set_status_text("Not Found");
    let response = web_sys::Response::new_with_opt_str_and_init(Some("missing"), &init).unwrap();
    let err = read_response(&response, |_, _| {}).await.unwrap_err();
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
    let bytes = read_blob(&blob, |_, _| {}).await.unwrap();
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
