//! "Test connection" in the browser: gathers the facts that `atlas_pilot::connection::diagnose`
//! classifies — one call with `fetch` (status, headers, body, latency), and when it fails two probes
//! that send no key and cost nothing: a `GET` of the same URL in `mode: "no-cors"` (it resolves
//! whenever the server answers at all) and a `GET` in `cors` mode without custom headers (it needs no
//! preflight, so it resolves when the server allows this page on plain requests). Plus the page's
//! origin and `navigator.onLine`. The classification and every word of the advice are the crate's.
//!
//! The same probes explain a provider stopped early by network errors
//! ([`diagnose_network_failure`]: no call, only the two probes). Nothing here logs; the key travels
//! only in the call's header, and every text shown is scrubbed of it.

use atlas_pilot::connection::{
    diagnose, test_request, ConnectionFacts, Diagnosis, ProbeResult, Reason,
};
use atlas_pilot::provider::{HttpRequest, Provider, SecretKey};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::browser::fetch::fetch_within;
use crate::pilot::form::error::FormError;
use crate::pilot::store::Keys;

/// The timeout of a connection test's call, ms.
pub const TEST_TIMEOUT_MS: u32 = 30_000;

/// The timeout of each probe, ms.
const PROBE_TIMEOUT_MS: u32 = 10_000;

fn now() -> f64 {
    js_sys::Date::now()
}

fn page_origin() -> Option<String> {
    web_sys::window().and_then(|w| w.location().origin().ok())
}

fn online() -> bool {
    web_sys::window().is_none_or(|w| w.navigator().on_line())
}

/// One `fetch`: `request` in `cors` mode with its headers, or a bare `GET` of `url` in `mode`
/// ([`crate::browser::fetch::fetch_within`]); a failure's message is scrubbed of `key`.
async fn fetch_once(
    url: &str,
    request: Option<&HttpRequest>,
    mode: web_sys::RequestMode,
    timeout_ms: u32,
    key: &SecretKey,
) -> ProbeResult {
    let Ok(controller) = web_sys::AbortController::new() else {
        return ProbeResult::Failed {
            message: "the browser could not create an AbortController".into(),
        };
    };
    match fetch_within(url, request, mode, &controller, timeout_ms).await {
        ProbeResult::Failed { message } => ProbeResult::Failed {
            message: key.scrub(&message),
        },
        other => other,
    }
}

/// The two probes after a failed call: `no-cors`, then a simple `cors` `GET` (only when the first
/// reached the server).
async fn probes(url: &str, key: &SecretKey) -> (ProbeResult, Option<ProbeResult>) {
    let no_cors = fetch_once(
        url,
        None,
        web_sys::RequestMode::NoCors,
        PROBE_TIMEOUT_MS,
        key,
    )
    .await;
    let simple = match no_cors {
        ProbeResult::Opaque => {
            Some(fetch_once(url, None, web_sys::RequestMode::Cors, PROBE_TIMEOUT_MS, key).await)
        }
        _ => None,
    };
    (no_cors, simple)
}

/// Sends the one test call of `provider` with `key` ([`test_request`]) and classifies what came
/// back ([`diagnose`]).
pub async fn test_connection(provider: &Provider, key: &SecretKey) -> Diagnosis {
    let request = match test_request(provider, key) {
        Ok(r) => r,
        Err(e) => {
            return Diagnosis {
                reason: Reason::CannotBuild,
                status: None,
                latency_ms: 0,
                headline: format!("The call cannot be made: {}", key.scrub(&e.to_string())),
                provider_message: None,
                advice: Vec::new(),
            }
        }
    };
    let started = now();
    let call = fetch_once(
        &request.url,
        Some(&request),
        web_sys::RequestMode::Cors,
        TEST_TIMEOUT_MS,
        key,
    )
    .await;
    let elapsed_ms = (now() - started).max(0.0) as u64;
    let (no_cors, simple_cors) = match call {
        ProbeResult::Failed { .. } => {
            let (n, s) = probes(&request.url, key).await;
            (Some(n), s)
        }
        _ => (None, None),
    };
    diagnose(
        provider,
        key,
        &ConnectionFacts {
            url: request.url.clone(),
            page_origin: page_origin(),
            online: online(),
            call,
            no_cors,
            simple_cors,
            elapsed_ms,
            timeout_ms: u64::from(TEST_TIMEOUT_MS),
        },
    )
}

/// Why the calls to `url` of `provider` failed without a response (`message`: the browser's error),
/// from the two probes alone: no call is sent again.
pub async fn diagnose_network_failure(
    provider: &Provider,
    url: &str,
    message: String,
    key: &SecretKey,
) -> Diagnosis {
    let (no_cors, simple_cors) = probes(url, key).await;
    diagnose(
        provider,
        key,
        &ConnectionFacts {
            url: url.to_string(),
            page_origin: page_origin(),
            online: online(),
            call: ProbeResult::Failed { message },
            no_cors: Some(no_cors),
            simple_cors,
            elapsed_ms: 0,
            timeout_ms: u64::from(TEST_TIMEOUT_MS),
        },
    )
}

/// A provider row's "Test connection" button (`pilot-test-{row}`) and its result
/// (`pilot-test-result-{row}`, with `data-reason` = [`Reason::key`], `data-status`, `data-latency`,
/// and `data-run`, the number of tests done on the row):
/// the headline (status, latency, the provider's message or the reason) and the advice. `provider`
/// reads the row when clicked; the key is the row's in [`Keys`].
pub fn test_button(
    row: String,
    provider: impl Fn() -> Result<Provider, FormError> + Copy + Send + Sync + 'static,
    keys: Keys,
) -> impl IntoView {
    let result = RwSignal::new(None::<Result<Diagnosis, String>>);
    let busy = RwSignal::new(false);
    // Tests done on this row (`data-run` of the result), so a new result is told from the last one.
    let runs = RwSignal::new(0u32);
    let row_for_click = row.clone();
    let result_id = format!("pilot-test-result-{row}");
    let on_click = move |_| {
        let key = keys.get(&row_for_click);
        match provider() {
            Err(e) => {
                runs.update(|n| *n += 1);
                result.set(Some(Err(e.to_string())));
            }
            Ok(p) => {
                busy.set(true);
                result.set(None);
                spawn_local(async move {
                    let d = test_connection(&p, &key).await;
                    runs.update(|n| *n += 1);
                    result.set(Some(Ok(d)));
                    busy.set(false);
                });
            }
        }
    };
    view! {
        <button type="button" id=format!("pilot-test-{row}") prop:disabled=move || busy.get()
            title="Sends one short call (\"Reply with the single word OK.\", at most 8 tokens) with this row's provider, model and key, and says what came back or why nothing did"
            on:click=on_click>"Test connection"</button>
        {move || busy.get().then(|| view! { <span class="hint">" testing…"</span> })}
        {move || result.get().map(|r| match r {
            Ok(d) => {
                let status = d.status.map(|s| s.to_string()).unwrap_or_default();
                let class = if d.reason == Reason::Ok { "connection-test ok" } else { "connection-test failed" };
                view! {
                    <div class=class id=result_id.clone() role="status" data-reason=d.reason.key()
                        data-status=status data-latency=d.latency_ms data-run=move || runs.get()>
                        <strong>{d.headline}</strong>
                        <ul>{d.advice.into_iter().map(|a| view! { <li>{a}</li> }).collect_view()}</ul>
                    </div>
                }.into_any()
            }
            Err(e) => view! {
                <div class="connection-test failed error" id=result_id.clone() role="status" data-reason="cannot_build"
                    data-run=move || runs.get()>{e}</div>
            }.into_any(),
        })}
    }
}
