//! The shareable view's query string (`cargo test --target wasm32-unknown-unknown -p audit-atlas --test
//! web_url_state`): what the app writes into the URL reads back as the same view, odd condition ids and
//! weights survive, unknown keys (anything a link might smuggle in) are dropped, and malformed values
//! fall back to defaults instead of failing. The component codec itself is tested natively in
//! `atlas_core::query`.
#![cfg(target_arch = "wasm32")]

use atlas_core::RepeatPolicy;
use audit_atlas::state::url::{parse_query, PlanQuery, ViewState};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn full_view() -> ViewState {
    ViewState {
        bundle: Some("https://example.org/bundles/a b/bundle.json?x=1&y=2".into()),
        bundle_id: Some("decodingtrust-stereotype-v1".into()),
        view: Some("atlas-d".into()),
        case: Some(3),
        ccase: Some("dr:org/model:7b:q&0017".into()),
        policy: Some(RepeatPolicy::UnitMajority),
        preset: Some("custom".into()),
        sweep: Some("system prompt".into()),
        weights: vec![
            ("benign".into(), "0.5".into()),
            ("a:b&c=d".into(), "2".into()),
            ("ü+%".into(), "1e-3".into()),
        ],
        sweep_weights: vec![
            ("task".into(), "1".into()),
            ("(no sweep)".into(), "0".into()),
        ],
        seed: Some(u64::MAX),
        reps: Some(200),
        models: Some(vec!["gpt-4-0314".into(), "Llama-2-7b-chat-hf".into()]),
        conditions: Some(vec!["untargeted".into()]),
        compare_a: Some("gpt-4-0314".into()),
        compare_b: Some("org/model:7b&x".into()),
        plan: PlanQuery {
            designs: vec!["srs".into(), "coverage:2".into()],
            budget: Some(150),
            models: Some(vec!["gpt-4-0314".into()]),
            mae: Some("2".into()),
            inversions: Some("5".into()),
            pair: Some("gpt-4-0314,mpt-7b-chat".into()),
            pair_pct: Some("90".into()),
        },
    }
}

#[wasm_bindgen_test]
fn the_plan_views_settings_read_back_and_a_malformed_budget_is_ignored() {
    let v = ViewState::from_query("?view=plan&pd=srs&pd=stratified&pb=abc&pmae=2.5&pm=a&pm=b");
    assert_eq!(v.plan.designs, ["srs", "stratified"]);
    assert_eq!(v.plan.budget, None);
    assert_eq!(v.plan.mae.as_deref(), Some("2.5"));
    assert_eq!(v.plan.models, Some(vec!["a".to_string(), "b".to_string()]));
    assert_eq!(
        v.to_query(),
        "view=plan&pd=srs&pd=stratified&pm=a&pm=b&pmae=2.5"
    );
}

#[wasm_bindgen_test]
fn a_view_written_to_the_query_reads_back_unchanged() {
    let view = full_view();
    let query = view.to_query();
    assert_eq!(ViewState::from_query(&query), view, "{query}");
    assert_eq!(ViewState::from_query(&format!("?{query}")), view);
    // The browser's own parser agrees with ours on every pair.
    let params = web_sys::UrlSearchParams::new_with_str(&query).unwrap();
    let ours = parse_query(&query);
    for (k, v) in &ours {
        let theirs: Vec<String> = params
            .get_all(k)
            .iter()
            .filter_map(|v| v.as_string())
            .collect();
        assert!(theirs.contains(v), "{k}={v} not in {theirs:?}");
    }
}

#[wasm_bindgen_test]
fn the_default_view_is_an_empty_query() {
    assert_eq!(ViewState::default().to_query(), "");
    assert_eq!(ViewState::from_query(""), ViewState::default());
}

#[wasm_bindgen_test]
fn unknown_keys_are_dropped_and_malformed_values_ignored() {
    let view = ViewState::from_query(
        "?token=secret&api_key=k&policy=nonsense&seed=-4&reps=many&w=novalue&bundle=x.json",
    );
    assert_eq!(view.policy, None);
    assert_eq!(view.seed, None);
    assert_eq!(view.reps, None);
    assert!(view.weights.is_empty());
    assert_eq!(view.bundle.as_deref(), Some("x.json"));
    let query = view.to_query();
    assert_eq!(query, "bundle=x.json");
    assert!(!query.contains("secret") && !query.contains("token"));
}
