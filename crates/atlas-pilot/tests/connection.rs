//! "Test connection": what the facts a runner gathers (the response, or how the call failed, and in a
//! browser the `no-cors` and simple-CORS probes) are classified as, and the advice each gives. The
//! browser cases are the ones `tests/e2e/pilot_failures.mjs` meets for real in Chromium (a dead
//! port, a blocked port, a server whose preflight is denied); the native ones use `ureq`'s error
//! texts.

use atlas_pilot::connection::{
    cors_request_headers, diagnose, is_bad_port, network_cause, test_request, ConnectionFacts,
    Endpoint, NetworkCause, ProbeResult, Reason, BAD_PORTS, FETCH_ONLY_BAD_PORTS,
};
use atlas_pilot::provider::{Provider, ProviderKind, SecretKey};

const KEY: &str = "sk-test-DO-NOT-LEAK";
const PAGE: &str = "http://127.0.0.1:4173";

fn local(port: u16) -> Provider {
    Provider::OpenAiCompatible {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "mock".into(),
    }
}

fn url(p: &Provider) -> String {
    p.endpoint().unwrap()
}

fn facts(p: &Provider, page: Option<&str>, call: ProbeResult) -> ConnectionFacts {
    ConnectionFacts {
        url: url(p),
        page_origin: page.map(str::to_string),
        online: true,
        call,
        no_cors: None,
        simple_cors: None,
        elapsed_ms: 42,
        timeout_ms: 30_000,
    }
}

fn rejected() -> ProbeResult {
    ProbeResult::Failed {
        message: "TypeError: Failed to fetch".into(),
    }
}

fn shown(d: &atlas_pilot::connection::Diagnosis) -> String {
    format!(
        "{} | {:?} | {}",
        d.text(),
        d.provider_message,
        d.reason.key()
    )
}

#[test]
fn the_bad_port_list_is_the_fetch_standards_and_sorted_for_the_lookup() {
    // The Fetch standard's "bad port" list as written in web-platform-tests
    // fetch/api/request/request-bad-port.any.js (2024, after whatwg/fetch#1663 added 4190 and 6679):
    // BAD_PORTS is that list without the two, which Chromium 156 does not refuse
    // (tests/e2e/pilot_failures.mjs), and FETCH_ONLY_BAD_PORTS the two.
    let wpt: [u16; 82] = [
        1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101,
        102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389,
        427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636,
        989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665,
        6666, 6667, 6668, 6669, 6679, 6697, 10080,
    ];
    let mut both: Vec<u16> = BAD_PORTS
        .iter()
        .chain(&FETCH_ONLY_BAD_PORTS)
        .copied()
        .collect();
    both.sort_unstable();
    assert_eq!(both, wpt);
    assert!(BAD_PORTS.windows(2).all(|w| w[0] < w[1]));
    assert!(BAD_PORTS.iter().all(|&p| is_bad_port(p)));
    assert!(!is_bad_port(4190) && !is_bad_port(6679));
    for ok in [80, 443, 3000, 5000, 8000, 8080, 8765, 11434, 65535] {
        assert!(!is_bad_port(ok), "{ok}");
    }
}

#[test]
fn endpoints_are_read_with_default_ports_ipv6_and_loopback_names() {
    let e = Endpoint::of("https://API.example.com/v1/chat").unwrap();
    assert_eq!(
        (
            e.scheme.as_str(),
            e.host.as_str(),
            e.port,
            e.origin.as_str()
        ),
        ("https", "api.example.com", 443, "https://api.example.com")
    );
    assert!(!e.is_loopback() && !e.is_ip_literal());
    let e = Endpoint::of("http://[::1]:8000/v1").unwrap();
    assert_eq!((e.host.as_str(), e.port), ("::1", 8000));
    assert_eq!(e.host_port(), "[::1]:8000");
    assert!(e.is_loopback() && e.is_ip_literal());
    let e = Endpoint::of("http://localhost/v1").unwrap();
    assert_eq!(e.port, 80);
    assert!(e.is_loopback() && !e.is_ip_literal());
    assert!(Endpoint::of("http://127.0.0.2:1/").unwrap().is_loopback());
    assert!(!Endpoint::of("http://10.0.0.5:8000/").unwrap().is_loopback());
    assert!(Endpoint::of("ftp://x/").is_none());
    assert!(Endpoint::of("http://:80/").is_none());
    assert!(Endpoint::of("http://h:99999/").is_none());
}

#[test]
fn native_error_texts_name_their_cause() {
    for (text, cause) in [
        (
            "io: Connection refused (os error 111)",
            NetworkCause::Refused,
        ),
        (
            "io: Connection refused (os error 61)",
            NetworkCause::Refused,
        ),
        ("host not found", NetworkCause::Dns),
        (
            "io: failed to lookup address information: Name or service not known",
            NetworkCause::Dns,
        ),
        (
            "rustls: invalid peer certificate: UnknownIssuer",
            NetworkCause::Tls,
        ),
        (
            "io: Connection reset by peer (os error 104)",
            NetworkCause::Dropped,
        ),
        ("net::ERR_CONNECTION_REFUSED", NetworkCause::Refused),
        ("TypeError: Failed to fetch", NetworkCause::Unknown),
        (
            "TypeError: NetworkError when attempting to fetch resource.",
            NetworkCause::Unknown,
        ),
    ] {
        assert_eq!(network_cause(text), cause, "{text}");
    }
}

#[test]
fn a_completion_reports_the_status_the_latency_and_the_models_reply() {
    let p = local(8000);
    let d = diagnose(
        &p,
        &SecretKey::new(KEY),
        &facts(
            &p,
            Some(PAGE),
            ProbeResult::Response {
                status: 200,
                headers: Vec::new(),
                body: r#"{"choices": [{"message": {"role": "assistant", "content": " OK "}, "finish_reason": "stop"}], "model": "mock-1"}"#.into(),
            },
        ),
    );
    assert_eq!(d.reason, Reason::Ok);
    assert_eq!((d.status, d.latency_ms), (Some(200), 42));
    assert_eq!(
        d.headline,
        "Connected: HTTP 200 in 42 ms; mock-1 answered \"OK\"."
    );
    assert_eq!(d.provider_message.as_deref(), Some("OK"));
    assert!(d.advice.is_empty());
}

#[test]
fn http_errors_show_the_providers_message_scrubbed_of_the_key_and_what_to_check() {
    let p = Provider::anthropic("claude-x");
    let body = format!(
        r#"{{"type": "error", "error": {{"type": "authentication_error", "message": "invalid x-api-key: {KEY}"}}}}"#
    );
    let d = diagnose(
        &p,
        &SecretKey::new(KEY),
        &facts(
            &p,
            Some(PAGE),
            ProbeResult::Response {
                status: 401,
                headers: Vec::new(),
                body,
            },
        ),
    );
    assert_eq!((d.reason, d.status), (Reason::HttpError, Some(401)));
    let all = shown(&d);
    assert!(all.contains("HTTP 401 in 42 ms: request refused by the provider (HTTP 401, authentication_error): invalid x-api-key: ***"), "{all}");
    assert!(all.contains("The key was refused"), "{all}");
    assert!(!all.contains("DO-NOT-LEAK"), "{all}");

    let p = local(8000);
    let d = diagnose(
        &p,
        &SecretKey::new(""),
        &facts(
            &p,
            None,
            ProbeResult::Response {
                status: 404,
                headers: Vec::new(),
                body: r#"{"error": {"message": "The model `mock` does not exist.", "type": "invalid_request_error"}}"#.into(),
            },
        ),
    );
    assert_eq!(d.reason, Reason::HttpError);
    assert!(d.text().contains("The model `mock` does not exist."));
    assert!(d
        .text()
        .contains("check the base URL `http://127.0.0.1:8000/v1`"));
    assert!(d.text().contains("the model name `mock`"));

    // A 200 that is not the provider's shape: the wrong provider or base URL.
    let d = diagnose(
        &p,
        &SecretKey::new(""),
        &facts(
            &p,
            None,
            ProbeResult::Response {
                status: 200,
                headers: Vec::new(),
                body: r#"{"models": []}"#.into(),
            },
        ),
    );
    assert_eq!(d.reason, Reason::WrongResponse);
    assert!(d.text().contains("check the provider and the base URL"));
}

#[test]
fn in_a_browser_a_dead_loopback_port_is_a_refused_connection() {
    // The call and the no-cors probe both rejected; 127.0.0.1 needs no DNS and http no TLS.
    let p = local(45_678);
    let mut f = facts(&p, Some(PAGE), rejected());
    f.no_cors = Some(rejected());
    f.simple_cors = Some(rejected());
    let d = diagnose(&p, &SecretKey::new(KEY), &f);
    assert_eq!(d.reason, Reason::ConnectionRefused, "{}", shown(&d));
    assert!(d.headline.contains("Nothing answers at 127.0.0.1:45678"));
    assert!(d.text().contains("Start the server, or correct the port"));
    assert!(!d.text().contains("Access-Control"));
    assert!(d.status.is_none());
}

#[test]
fn in_a_browser_a_port_on_the_bad_port_list_is_named_as_blocked() {
    let p = local(6000);
    let mut f = facts(&p, Some(PAGE), rejected());
    f.no_cors = Some(rejected());
    let d = diagnose(&p, &SecretKey::new(KEY), &f);
    assert_eq!(d.reason, Reason::BlockedPort);
    assert!(d
        .headline
        .contains("Port 6000 is blocked by the browser (net::ERR_UNSAFE_PORT)"));
    assert!(d.text().contains("another port"));
    // 4190: Chromium connects; nothing listens here, and the advice names the standard's list.
    let p = local(4190);
    let mut f = facts(&p, Some(PAGE), rejected());
    f.no_cors = Some(rejected());
    let d = diagnose(&p, &SecretKey::new(KEY), &f);
    assert_eq!(d.reason, Reason::ConnectionRefused);
    assert!(d
        .text()
        .contains("Port 4190 is on the Fetch standard's list of bad ports since 2024"));
}

#[test]
fn a_server_that_answers_simple_requests_but_refuses_the_preflight_is_told_what_to_allow() {
    // no-cors: opaque (the server answers); a simple CORS GET: readable → the preflight failed.
    let p = local(45_679);
    let mut f = facts(&p, Some(PAGE), rejected());
    f.no_cors = Some(ProbeResult::Opaque);
    f.simple_cors = Some(ProbeResult::Response {
        status: 404,
        headers: Vec::new(),
        body: String::new(),
    });
    let d = diagnose(&p, &SecretKey::new(KEY), &f);
    assert_eq!(d.reason, Reason::CorsPreflight);
    let t = d.text();
    assert!(t.contains("refused the CORS preflight (OPTIONS)"), "{t}");
    assert!(
        t.contains("the page's origin `http://127.0.0.1:4173`"),
        "{t}"
    );
    assert!(
        t.contains("the request headers `authorization, content-type`"),
        "{t}"
    );
    assert!(
        t.contains("`atlas pilot` on the command line sends the same calls without CORS"),
        "{t}"
    );

    // The same server lacking Access-Control-Allow-Origin altogether (the simple probe rejected too),
    // for Anthropic: its own headers are listed.
    let p = Provider::Anthropic {
        base_url: "http://127.0.0.1:45679".into(),
        model: "claude-x".into(),
    };
    let mut f = facts(&p, Some(PAGE), rejected());
    f.no_cors = Some(ProbeResult::Opaque);
    f.simple_cors = Some(rejected());
    let d = diagnose(&p, &SecretKey::new(KEY), &f);
    assert_eq!(d.reason, Reason::Cors);
    assert!(d.text().contains(
        "`x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access, content-type`"
    ));
    assert_eq!(
        cors_request_headers(ProviderKind::Gemini),
        ["x-goog-api-key", "content-type"]
    );
}

#[test]
fn an_unreachable_host_name_says_what_the_browser_cannot_tell_apart_and_how_to_find_out() {
    let p = Provider::OpenAiCompatible {
        base_url: "https://llm.example.invalid/v1".into(),
        model: "m".into(),
    };
    let mut f = facts(&p, Some(PAGE), rejected());
    f.no_cors = Some(rejected());
    let d = diagnose(&p, &SecretKey::new(KEY), &f);
    assert_eq!(d.reason, Reason::Unreachable);
    let t = d.text();
    assert!(t.contains("host name is not found (DNS), nothing listens (connection refused), or the TLS certificate is refused"), "{t}");
    assert!(
        t.contains("Open https://llm.example.invalid in a new tab"),
        "{t}"
    );
    assert!(
        t.contains("`atlas pilot` on the command line reports the exact error"),
        "{t}"
    );
}

#[test]
fn mixed_content_offline_and_timeouts_are_named() {
    let remote = Provider::OpenAiCompatible {
        base_url: "http://10.0.0.5:8000/v1".into(),
        model: "m".into(),
    };
    let mut f = facts(&remote, Some("https://atlas.example.org"), rejected());
    f.no_cors = Some(rejected());
    assert_eq!(
        diagnose(&remote, &SecretKey::new(KEY), &f).reason,
        Reason::MixedContent
    );
    // Loopback is trustworthy: not mixed content, a refused connection.
    let p = local(45_680);
    let mut f = facts(&p, Some("https://atlas.example.org"), rejected());
    f.no_cors = Some(rejected());
    assert_eq!(
        diagnose(&p, &SecretKey::new(KEY), &f).reason,
        Reason::ConnectionRefused
    );
    let mut f = facts(&p, Some(PAGE), rejected());
    f.online = false;
    assert_eq!(
        diagnose(&p, &SecretKey::new(KEY), &f).reason,
        Reason::Offline
    );
    let d = diagnose(
        &p,
        &SecretKey::new(KEY),
        &facts(&p, Some(PAGE), ProbeResult::TimedOut),
    );
    assert_eq!(d.reason, Reason::Timeout);
    assert!(d.headline.contains("within 30 s"));
}

#[test]
fn natively_the_error_text_decides_and_the_key_is_scrubbed_from_it() {
    let p = local(45_681);
    let key = SecretKey::new(KEY);
    for (text, reason) in [
        (
            "io: Connection refused (os error 111)",
            Reason::ConnectionRefused,
        ),
        ("host not found", Reason::Dns),
        (
            "rustls: invalid peer certificate: UnknownIssuer",
            Reason::Tls,
        ),
        (
            "io: Connection reset by peer (os error 104)",
            Reason::Dropped,
        ),
    ] {
        let d = diagnose(
            &p,
            &key,
            &facts(
                &p,
                None,
                ProbeResult::Failed {
                    message: text.into(),
                },
            ),
        );
        assert_eq!(d.reason, reason, "{text}");
        assert!(!d.text().contains("CORS"), "{text}");
    }
    let d = diagnose(
        &p,
        &key,
        &facts(
            &p,
            None,
            ProbeResult::Failed {
                message: format!("proxy said: bad token {KEY}"),
            },
        ),
    );
    assert_eq!(d.reason, Reason::Unreachable);
    assert!(!shown(&d).contains("DO-NOT-LEAK"), "{}", shown(&d));
    assert!(shown(&d).contains("bad token ***"));
}

#[test]
fn the_test_call_is_one_tiny_request_with_the_key_only_in_its_header() {
    let key = SecretKey::new(KEY);
    let g = Provider::gemini("gemini-x");
    let req = test_request(&g, &key).unwrap();
    assert!(!req.url.contains(KEY) && !req.url.contains("key="));
    assert_eq!(req.header("x-goog-api-key"), Some(KEY));
    let body: serde_json::Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 8);
    assert_eq!(
        body["contents"][0]["parts"][0]["text"],
        "Reply with the single word OK."
    );
    // A missing key is refused before anything is sent.
    assert!(test_request(&g, &SecretKey::new("")).is_err());
}
