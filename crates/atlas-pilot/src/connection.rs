//! Why a provider cannot be reached, in words a user can act on: the "Test connection" control of
//! each provider row, and the message of a provider stopped early ([`crate::run`]).
//!
//! The runner gathers the facts — the response (status, headers, body) or how the request failed,
//! and in the browser two extra probes — and [`diagnose`] turns them into a [`Diagnosis`]: a
//! [`Reason`], a one-line headline with the status, latency and the provider's own message, and the
//! advice (what the server must allow, which port to use, …). Pure: no I/O, no clock.
//!
//! **What a browser can tell apart.** A `fetch` that fails rejects with one `TypeError` ("Failed to
//! fetch" in Chromium) whether nothing listens, the name does not resolve, the certificate is
//! refused, the port is blocked or the CORS check fails; the page never sees the network error code.
//! What it *can* do:
//!
//! * a **`mode: "no-cors"` probe** (a `GET` of the same URL without custom headers): it resolves with
//!   an opaque response whenever the server answers at all, and rejects when nothing answers — so
//!   "server reachable but CORS denied" is told apart from "nothing there";
//! * a **simple CORS probe** (a `GET` in `cors` mode without custom headers, which needs no
//!   preflight): when it resolves, the server does send `Access-Control-Allow-Origin` on its answers,
//!   so what failed was the preflight (`OPTIONS`) that the real request's headers require;
//! * the URL itself: a port on the Fetch standard's **bad port** list ([`BAD_PORTS`]) is refused by
//!   Chromium (`net::ERR_UNSAFE_PORT`) before any packet is sent; a loopback or IP-literal
//!   host involves no DNS; `http:` involves no TLS; an `http:` URL from an `https:` page to a host
//!   that is not loopback is blocked as mixed content; `navigator.onLine` false means offline.
//!
//! What stays ambiguous (a host name that cannot be reached: DNS, refused or TLS) is said as such,
//! with how to find out (open the URL in a tab; `atlas pilot` on the command line reports the exact
//! error and has no CORS). Natively (`atlas pilot`) the error text names the cause
//! ([`network_cause`]).
//!
//! The key is an argument only to scrub the provider's message ([`crate::provider::SecretKey::scrub`]);
//! it is never part of a URL, a headline or advice.

use serde::Serialize;

use crate::clip;
use crate::provider::{
    build_request, parse_response_scrubbed, HttpRequest, Params, Prompt, Provider, ProviderKind,
    RequestError, SecretKey,
};

/// The ports browsers refuse to connect to over `http:` and `https:` before anything is sent: the
/// Fetch standard's bad ports (<https://fetch.spec.whatwg.org/#port-blocking>) as Chromium refuses
/// them (`net::ERR_UNSAFE_PORT`; all 80 checked in Chromium 156 by `tests/e2e/pilot_failures.mjs`).
/// The standard's list also has [`FETCH_ONLY_BAD_PORTS`].
pub const BAD_PORTS: [u16; 80] = [
    1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102,
    103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465,
    512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993,
    995, 1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669,
    6697, 10080,
];

/// Bad ports the Fetch standard added in 2024 (4190 sieve, 6679 osaut; whatwg/fetch#1663) that
/// Chromium 156 still connects to: browsers that follow the standard refuse them, so a failed call to
/// one of them gets that possibility in its advice.
pub const FETCH_ONLY_BAD_PORTS: [u16; 2] = [4190, 6679];

/// Whether browsers refuse to connect to `port` ([`BAD_PORTS`]).
pub fn is_bad_port(port: u16) -> bool {
    BAD_PORTS.binary_search(&port).is_ok()
}

/// The request headers a provider's calls carry, which a server must allow in its CORS preflight
/// answer (`Access-Control-Allow-Headers`) for the browser to send them
/// ([`crate::provider::build_request`]; `authorization` only once a key is set).
pub fn cors_request_headers(kind: ProviderKind) -> &'static [&'static str] {
    match kind {
        ProviderKind::OpenAiCompatible => &["authorization", "content-type"],
        ProviderKind::Anthropic => &[
            "x-api-key",
            "anthropic-version",
            "anthropic-dangerous-direct-browser-access",
            "content-type",
        ],
        ProviderKind::Gemini => &["x-goog-api-key", "content-type"],
    }
}

/// The one call "Test connection" sends: the user prompt `Reply with the single word OK.`, no
/// system prompt, temperature 0, at most 8 output tokens (a few tokens of the user's budget).
///
/// # Errors
/// [`RequestError`] as [`build_request`] (no model name, a bad base URL, a missing key, …).
pub fn test_request(provider: &Provider, key: &SecretKey) -> Result<HttpRequest, RequestError> {
    build_request(
        provider,
        &Prompt {
            system: String::new(),
            user: "Reply with the single word OK.".into(),
        },
        &Params {
            temperature: 0.0,
            max_tokens: 8,
        },
        key,
    )
}

/// Scheme, host and port of a URL, as far as the diagnosis needs them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Endpoint {
    /// `http` or `https` (lower case).
    pub scheme: String,
    /// The host as written (lower case; an IPv6 address without its brackets).
    pub host: String,
    /// The port: explicit, else 80 for `http` and 443 for `https`.
    pub port: u16,
    /// `scheme://host[:port]` as written in the URL (lower case).
    pub origin: String,
}

impl Endpoint {
    /// The endpoint of `url` (`http(s)://host[:port]/…`), `None` for anything else.
    pub fn of(url: &str) -> Option<Endpoint> {
        let (scheme, rest) = url.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let authority = rest
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
            let (host, after) = inner.split_once(']')?;
            (host.to_string(), after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.clone(), None),
            }
        };
        if host.is_empty() {
            return None;
        }
        let port = match port {
            None | Some("") => default_port,
            Some(p) => p.parse().ok()?,
        };
        Some(Endpoint {
            origin: format!("{scheme}://{authority}"),
            scheme,
            host,
            port,
        })
    }

    /// `localhost`, `*.localhost`, `127.x.x.x` or `::1`: the browser treats it as trustworthy (no
    /// mixed-content block) and no DNS server is asked.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self.host.ends_with(".localhost")
            || self.host == "::1"
            || self
                .host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// An IP address (v4 or v6) rather than a name: no DNS involved.
    pub fn is_ip_literal(&self) -> bool {
        self.host.parse::<std::net::IpAddr>().is_ok()
    }

    /// `host:port` for messages (IPv6 in brackets).
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// What an error text without a response says went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkCause {
    /// Nothing accepted the connection (ECONNREFUSED).
    Refused,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake or the certificate failed.
    Tls,
    /// The connection was reset or dropped mid-way.
    Dropped,
    /// The text does not say (the browser's `TypeError: Failed to fetch`).
    Unknown,
}

impl NetworkCause {
    /// Machine name: `refused`, `dns`, `tls`, `dropped`, `unknown`.
    pub fn key(self) -> &'static str {
        match self {
            NetworkCause::Refused => "refused",
            NetworkCause::Dns => "dns",
            NetworkCause::Tls => "tls",
            NetworkCause::Dropped => "dropped",
            NetworkCause::Unknown => "unknown",
        }
    }

    /// Plain words: `connection refused`, `host name not found (DNS)`, ….
    pub fn label(self) -> &'static str {
        match self {
            NetworkCause::Refused => "connection refused",
            NetworkCause::Dns => "host name not found (DNS)",
            NetworkCause::Tls => "TLS / certificate failure",
            NetworkCause::Dropped => "connection dropped",
            NetworkCause::Unknown => "no cause given",
        }
    }
}

/// The cause named by an error text without a response: the native client's (`ureq`: `io:
/// Connection refused (os error 111)`, `host not found`, `rustls: invalid peer certificate: …`,
/// `io: Connection reset by peer`) or a browser's net error name when one is given
/// (`net::ERR_CONNECTION_REFUSED`, `ERR_NAME_NOT_RESOLVED`, `ERR_CERT_…`). Case is ignored. The
/// browser's own `TypeError: Failed to fetch` names none: [`NetworkCause::Unknown`].
pub fn network_cause(message: &str) -> NetworkCause {
    let m = message.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| m.contains(n));
    if has(&[
        "connection refused",
        "os error 111)",
        "os error 61)",
        "os error 10061)",
        "econnrefused",
        "err_connection_refused",
    ]) {
        NetworkCause::Refused
    } else if has(&[
        "host not found",
        "failed to lookup address",
        "name or service not known",
        "nodename nor servname",
        "no such host",
        "name resolution",
        "err_name_not_resolved",
        "enotfound",
    ]) {
        NetworkCause::Dns
    } else if has(&[
        "certificate",
        "rustls",
        "tls",
        "ssl",
        "handshake",
        "err_cert",
    ]) {
        NetworkCause::Tls
    } else if has(&[
        "connection reset",
        "os error 104)",
        "broken pipe",
        "connection closed",
        "unexpected eof",
        "err_connection_reset",
        "econnreset",
    ]) {
        NetworkCause::Dropped
    } else {
        NetworkCause::Unknown
    }
}

/// What one request gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeResult {
    /// An HTTP response the page (or the native client) can read.
    Response {
        /// HTTP status.
        status: u16,
        /// Response headers (those the page may read).
        headers: Vec<(String, String)>,
        /// Body text.
        body: String,
    },
    /// A `no-cors` response: the server answered; the page may not read it.
    Opaque,
    /// No response: `fetch` rejected (browser) or the connection failed (native), with the error
    /// text.
    Failed {
        /// The error text (scrubbed of the key by [`diagnose`] before it is shown).
        message: String,
    },
    /// No answer within the timeout.
    TimedOut,
}

/// Everything [`diagnose`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionFacts {
    /// The URL the call went to (the provider's endpoint; never holds a key).
    pub url: String,
    /// The page's origin (`http://127.0.0.1:8080`) in a browser; `None` natively (no CORS).
    pub page_origin: Option<String>,
    /// `navigator.onLine` (true natively).
    pub online: bool,
    /// The call itself.
    pub call: ProbeResult,
    /// Browser only, after a failed call: a `GET` of the URL in `mode: "no-cors"` (`None` when not
    /// made).
    pub no_cors: Option<ProbeResult>,
    /// Browser only, after a failed call: a `GET` of the URL in `cors` mode without custom headers,
    /// which needs no preflight (`None` when not made).
    pub simple_cors: Option<ProbeResult>,
    /// How long the call took, ms.
    pub elapsed_ms: u64,
    /// The per-call timeout that applied, ms (for the timeout's message).
    pub timeout_ms: u64,
}

/// The classified outcome of a connection test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The provider answered with a completion.
    Ok,
    /// An HTTP error response (401 bad key, 404 unknown model or path, 429, 5xx, …).
    HttpError,
    /// A 2xx response that is not the provider's documented shape (wrong provider or base URL).
    WrongResponse,
    /// No answer within the timeout.
    Timeout,
    /// The browser refuses the port (Fetch standard bad port, `net::ERR_UNSAFE_PORT`).
    BlockedPort,
    /// An `http:` URL from an `https:` page to a host that is not loopback (mixed content).
    MixedContent,
    /// The browser is offline.
    Offline,
    /// The server answers, but not with `Access-Control-Allow-Origin` for this page.
    Cors,
    /// The server answers simple requests with CORS headers but refuses the preflight the call's
    /// headers need.
    CorsPreflight,
    /// Nothing accepts connections at the host and port.
    ConnectionRefused,
    /// The host name does not resolve.
    Dns,
    /// The TLS handshake or certificate failed.
    Tls,
    /// The connection was dropped before an answer.
    Dropped,
    /// Not reachable, and the browser does not say whether by DNS, refusal or TLS.
    Unreachable,
    /// The base URL is not `http(s)://host…`.
    BadUrl,
    /// The request cannot be built (no model name, a bad base URL, a key missing for a provider that
    /// needs one, …): nothing was sent.
    CannotBuild,
}

impl Reason {
    /// Machine name, the `data-reason` the end-to-end tests read: `ok`, `http_error`,
    /// `wrong_response`, `timeout`, `blocked_port`, `mixed_content`, `offline`, `cors`,
    /// `cors_preflight`, `connection_refused`, `dns`, `tls`, `dropped`, `unreachable`, `bad_url`,
    /// `cannot_build`.
    pub fn key(self) -> &'static str {
        match self {
            Reason::Ok => "ok",
            Reason::HttpError => "http_error",
            Reason::WrongResponse => "wrong_response",
            Reason::Timeout => "timeout",
            Reason::BlockedPort => "blocked_port",
            Reason::MixedContent => "mixed_content",
            Reason::Offline => "offline",
            Reason::Cors => "cors",
            Reason::CorsPreflight => "cors_preflight",
            Reason::ConnectionRefused => "connection_refused",
            Reason::Dns => "dns",
            Reason::Tls => "tls",
            Reason::Dropped => "dropped",
            Reason::Unreachable => "unreachable",
            Reason::BadUrl => "bad_url",
            Reason::CannotBuild => "cannot_build",
        }
    }
}

/// What the user reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    /// The classification.
    pub reason: Reason,
    /// The HTTP status, when the page saw a response.
    pub status: Option<u16>,
    /// How long the call took, ms.
    pub latency_ms: u64,
    /// One line: what happened, with the status, latency and the provider's message.
    pub headline: String,
    /// The provider's own message (its error message, or the model's reply), scrubbed of the key
    /// and cut at 300 characters.
    pub provider_message: Option<String>,
    /// What to do, one sentence each.
    pub advice: Vec<String>,
}

impl Diagnosis {
    /// The headline and the advice as one text.
    pub fn text(&self) -> String {
        std::iter::once(self.headline.as_str())
            .chain(self.advice.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

const NO_CORS_IN_CLI: &str = "`atlas pilot` on the command line sends the same calls without CORS (docs/pilot.md, \"Native runner\").";

/// What the server must allow for the browser to send `kind`'s calls from `page_origin`.
fn cors_allowance(kind: ProviderKind, page_origin: &str) -> String {
    format!(
        "The server must allow the page's origin `{page_origin}` (`Access-Control-Allow-Origin`), the method `POST` and the request headers `{}` (`Access-Control-Allow-Headers`), also in its answer to the `OPTIONS` preflight; for example Ollama's `OLLAMA_ORIGINS={page_origin}`, or vLLM's `--allowed-origins` and `--allowed-headers`.",
        cors_request_headers(kind).join(", ")
    )
}

/// Advice for an HTTP error status.
fn status_advice(status: u16, provider: &Provider) -> Option<String> {
    Some(match status {
        401 => "The key was refused: check the key typed for this row (and that it belongs to this provider).".to_string(),
        402 => "The provider asks for payment: check the account's credit or billing.".to_string(),
        403 => "The key may not use this model or endpoint (or the input was refused by moderation).".to_string(),
        404 => format!(
            "Not found: check the base URL `{}` (an OpenAI-compatible URL ends with its version path, e.g. `/v1`) and the model name `{}`.",
            provider.base_url(),
            provider.model()
        ),
        405 => "The server does not accept POST at this path: check the base URL.".to_string(),
        429 => "Rate limited or out of quota: the run retries and honours Retry-After; check the account's limits.".to_string(),
        s if s >= 500 => "The provider's server failed: the run retries; try again later.".to_string(),
        _ => return None,
    })
}

/// Classifies one connection test ([module docs](self)): a response is read with
/// [`parse_response_scrubbed`] under `provider` (a completion is [`Reason::Ok`], an error
/// [`Reason::HttpError`] or [`Reason::WrongResponse`] with the provider's message); a timeout is
/// [`Reason::Timeout`]; a failed call is classified from the URL, the page's origin, `online` and the
/// two browser probes, or natively from the error text ([`network_cause`]). Every text is scrubbed
/// of `key`.
pub fn diagnose(provider: &Provider, key: &SecretKey, facts: &ConnectionFacts) -> Diagnosis {
    let latency = facts.elapsed_ms;
    let mut d = Diagnosis {
        reason: Reason::Unreachable,
        status: None,
        latency_ms: latency,
        headline: String::new(),
        provider_message: None,
        advice: Vec::new(),
    };
    let Some(endpoint) = Endpoint::of(&facts.url) else {
        d.reason = Reason::BadUrl;
        d.headline = format!(
            "The URL `{}` is not http(s)://host…: check the base URL.",
            key.scrub(&facts.url)
        );
        return d;
    };
    let browser = facts.page_origin.as_deref();
    match &facts.call {
        ProbeResult::Response {
            status,
            headers,
            body,
        } => {
            d.status = Some(*status);
            match parse_response_scrubbed(provider, *status, headers, body, key) {
                Ok(c) => {
                    d.reason = Reason::Ok;
                    let reply = clip(c.text.trim(), 300);
                    d.headline = format!(
                        "Connected: HTTP {status} in {latency} ms; {} answered {:?}.",
                        c.model.as_deref().unwrap_or(provider.model()),
                        reply
                    );
                    d.provider_message = Some(reply);
                }
                Err(e) => {
                    let message = clip(&e.to_string(), 300);
                    d.reason = if (200..300).contains(status) {
                        Reason::WrongResponse
                    } else {
                        Reason::HttpError
                    };
                    d.headline = format!("HTTP {status} in {latency} ms: {message}");
                    d.provider_message = Some(message);
                    if d.reason == Reason::WrongResponse {
                        d.advice.push(format!(
                            "The server answered, but not as {} does: check the provider and the base URL.",
                            provider.kind().name()
                        ));
                    } else if let Some(a) = status_advice(*status, provider) {
                        d.advice.push(a);
                    }
                }
            }
        }
        ProbeResult::TimedOut => {
            d.reason = Reason::Timeout;
            d.headline = format!(
                "No answer from {} within {} s.",
                endpoint.host_port(),
                facts.timeout_ms.div_ceil(1000)
            );
            d.advice.push("The server accepted the connection but did not answer in time, or a firewall drops the packets; a local model that is still loading may need a longer timeout per call.".into());
        }
        ProbeResult::Opaque => {
            // A no-cors answer as the call itself does not happen; read it as reachable.
            d.reason = Reason::Cors;
            d.headline = format!(
                "{} answers, but the page may not read the answer (CORS).",
                endpoint.origin
            );
        }
        ProbeResult::Failed { message } => {
            let message = key.scrub(message);
            match browser {
                Some(page_origin) => {
                    classify_browser_failure(&mut d, provider, &endpoint, page_origin, facts)
                }
                None => classify_native_failure(&mut d, &endpoint, &message),
            }
            if browser.is_some() {
                d.provider_message = None;
            } else {
                d.provider_message = Some(clip(&message, 300));
            }
        }
    }
    d
}

fn classify_native_failure(d: &mut Diagnosis, endpoint: &Endpoint, message: &str) {
    let hp = endpoint.host_port();
    let (reason, headline, advice) = match network_cause(message) {
        NetworkCause::Refused => (
            Reason::ConnectionRefused,
            format!("Connection refused at {hp}: nothing listens there."),
            "Start the server, or correct the port in the base URL.".to_string(),
        ),
        NetworkCause::Dns => (
            Reason::Dns,
            format!("The host name {} was not found (DNS).", endpoint.host),
            "Check the spelling of the host in the base URL and the network's name service.".into(),
        ),
        NetworkCause::Tls => (
            Reason::Tls,
            format!("The TLS connection to {hp} failed (certificate or handshake)."),
            "Check that the URL's scheme matches the server (http vs https) and that its certificate is valid for the host.".into(),
        ),
        NetworkCause::Dropped => (
            Reason::Dropped,
            format!("The connection to {hp} was dropped before an answer."),
            "The server or a proxy closed the connection; try again, and check the server's log.".into(),
        ),
        NetworkCause::Unknown => (
            Reason::Unreachable,
            format!("{hp} could not be reached: {}", clip(message, 200)),
            "Check the base URL and that the server is running.".into(),
        ),
    };
    d.reason = reason;
    d.headline = headline;
    d.advice.push(advice);
}

fn classify_browser_failure(
    d: &mut Diagnosis,
    provider: &Provider,
    endpoint: &Endpoint,
    page_origin: &str,
    facts: &ConnectionFacts,
) {
    let hp = endpoint.host_port();
    let page_https = page_origin.to_ascii_lowercase().starts_with("https:");
    let same_way = "The browser reports every failed request with the same `TypeError` and does not say why; this is what the page could find out.";
    if page_https && endpoint.scheme == "http" && !endpoint.is_loopback() {
        d.reason = Reason::MixedContent;
        d.headline = format!(
            "Blocked as mixed content: this page is https, so the browser does not send to the http URL {}.",
            endpoint.origin
        );
        d.advice.push("Use an https base URL, or run Audit Atlas itself over http (e.g. locally), or use `atlas pilot` on the command line.".into());
        return;
    }
    if !facts.online {
        d.reason = Reason::Offline;
        d.headline = "The browser is offline.".into();
        d.advice
            .push("Reconnect to the network, then test again.".into());
        return;
    }
    if FETCH_ONLY_BAD_PORTS.contains(&endpoint.port) {
        d.advice.push(format!(
            "Port {} is on the Fetch standard's list of bad ports since 2024: browsers that follow it refuse to connect (Chromium 156 does not yet); if the server runs, try another port.",
            endpoint.port
        ));
    }
    if is_bad_port(endpoint.port) {
        d.reason = Reason::BlockedPort;
        d.headline = format!(
            "Port {} is blocked by the browser (net::ERR_UNSAFE_PORT): it is on the Fetch standard's list of bad ports, so nothing is sent to {hp}.",
            endpoint.port
        );
        d.advice.push("Run the server on another port (e.g. 8000, 8080 or 11434) and change the base URL; `atlas pilot` on the command line has no such list.".into());
        return;
    }
    match facts.no_cors {
        Some(ProbeResult::Opaque | ProbeResult::Response { .. }) => {
            let simple_ok = matches!(facts.simple_cors, Some(ProbeResult::Response { .. }));
            if simple_ok {
                d.reason = Reason::CorsPreflight;
                d.headline = format!(
                    "{} answers, and allows this page on plain requests, but refused the CORS preflight (OPTIONS) that the call's headers need, so the browser did not send the call.",
                    endpoint.origin
                );
            } else {
                d.reason = Reason::Cors;
                d.headline = format!(
                    "{} answers, but its answers lack CORS permission for this page (Access-Control-Allow-Origin), so the browser refused the call (a CORS or preflight failure).",
                    endpoint.origin
                );
            }
            d.advice.push(cors_allowance(provider.kind(), page_origin));
            d.advice.push(NO_CORS_IN_CLI.into());
        }
        Some(ProbeResult::Failed { .. } | ProbeResult::TimedOut) => {
            let no_dns = endpoint.is_loopback() || endpoint.is_ip_literal();
            if no_dns && endpoint.scheme == "http" {
                d.reason = Reason::ConnectionRefused;
                d.headline = format!(
                    "Nothing answers at {hp} (connection refused, or a firewall drops the connection): even a plain request without CORS got no answer."
                );
                d.advice.push("Start the server, or correct the port in the base URL (an IP address needs no DNS and http no TLS, so the server is not listening there).".into());
            } else {
                d.reason = Reason::Unreachable;
                d.headline = format!(
                    "{hp} cannot be reached: even a plain request without CORS got no answer. {same_way}"
                );
                d.advice.push(format!(
                    "It is one of: the host name is not found (DNS), nothing listens (connection refused){}. Open {} in a new tab: the browser's error page names it (ERR_NAME_NOT_RESOLVED, ERR_CONNECTION_REFUSED, ERR_CERT_…).",
                    if endpoint.scheme == "https" { ", or the TLS certificate is refused" } else { "" },
                    endpoint.origin
                ));
                d.advice.push(
                    "`atlas pilot` on the command line reports the exact error and has no CORS."
                        .into(),
                );
            }
        }
        None => {
            d.reason = Reason::Unreachable;
            d.headline = format!("The call to {hp} failed without an answer. {same_way}");
            d.advice.push(format!(
                "It is one of: connection refused, DNS, TLS or CORS. If the server runs, it must allow CORS. {}",
                cors_allowance(provider.kind(), page_origin)
            ));
            d.advice.push(NO_CORS_IN_CLI.into());
        }
    }
}
