//! The dummy key `sk-test-DO-NOT-LEAK` is used for a whole run — every request is built with it, and a
//! provider error echoes it — and must then be absent from every serialised form (run state, plan,
//! bundle) and from the Debug output of every value the app might log.

mod common;

use atlas_pilot::provider::{ProviderError, SecretKey};
use atlas_pilot::run::{to_bundle, BundleInfo, FailureReason, RunState};
use common::{run_scenario, DUMMY_KEY};

#[test]
fn the_key_is_sent_only_in_request_headers_and_is_absent_from_state_plan_bundle_and_logs() {
    let key = SecretKey::new(DUMMY_KEY);
    let (plan, state, debug_log) = run_scenario(&key);

    // The key does reach the provider: in the credential header of the request, and nowhere else.
    let req = state.request(&plan, &plan.calls[1].id, &key).unwrap();
    assert_eq!(req.header("x-api-key"), Some(DUMMY_KEY));
    assert!(!req.url.contains(DUMMY_KEY) && !req.body.contains(DUMMY_KEY));

    let state_json = state.to_json().unwrap();
    let plan_json = serde_json::to_string(&plan).unwrap();
    let bundle = to_bundle(&state, &plan, &BundleInfo::new("keys-test", "Keys test")).unwrap();
    let bundle_json = serde_json::to_string(&bundle).unwrap();
    let restored = RunState::from_json(&state_json).unwrap();
    let debug = format!(
        "{state:?}\n{plan:?}\n{bundle:?}\n{restored:?}\n{key:?}\n{key}\n{}",
        debug_log.join("\n")
    );
    for (name, text) in [
        ("run state JSON", &state_json),
        ("plan JSON", &plan_json),
        ("bundle JSON", &bundle_json),
        ("Debug output", &debug),
    ] {
        assert!(!text.contains(DUMMY_KEY), "the key leaked into the {name}");
        assert!(
            !text.contains("DO-NOT-LEAK"),
            "part of the key leaked into the {name}"
        );
    }
    // The provider's message was kept, with the key masked.
    assert!(state_json.contains("invalid x-api-key: ***"));
    assert!(bundle_json.contains("invalid x-api-key: ***"));
}

#[test]
fn a_network_error_message_carrying_the_key_is_scrubbed_before_it_is_stored() {
    let key = SecretKey::new(DUMMY_KEY);
    let err = ProviderError::Network {
        message: format!("fetch failed for https://x.test/?key={DUMMY_KEY}"),
    };
    let reason = FailureReason::from_error(&err, &key);
    assert_eq!(
        reason.message,
        "network error: fetch failed for https://x.test/?key=***"
    );
    assert!(!serde_json::to_string(&reason).unwrap().contains(DUMMY_KEY));
}
