//! The state of a pilot run, pure: every planned call (and every judge call) with its status, the
//! transitions the app makes as requests go out and come back, counts for the progress bar, JSON for
//! persistence (IndexedDB) and [`to_bundle`], which turns the run into a format-v1 bundle.
//!
//! # Statuses and transitions
//! ```text
//! Pending{attempts, last_error, not_before_ms}
//!    │ begin(id, now)                         (attempt = attempts + 1)
//!    ▼
//! InFlight{attempt, started_ms} ── answer(id, completion, now) ──▶ Answered{completion, attempts, duration_ms}
//!    │
//!    ├─ fail_attempt(id, error, seed, at): retryable and attempts left
//!    │      ──▶ Pending{attempts = attempt, last_error, not_before_ms = now + backoff delay}
//!    ├─ fail_attempt(…): not retryable, attempts exhausted, or Retry-After too long
//!    │      ──▶ Failed{reason, attempts}
//!    └─ interrupt(): pause, cancel, reload ──▶ Pending{attempts = attempt} (the attempt counts)
//! Failed ── retry_failed() ──▶ Pending{attempts: 0}
//! ```
//! Any other transition is [`RunError::Transition`]. A call that finally fails stays in the state with
//! its reason; nothing is dropped, and every id appears exactly once. A `Retry-After` longer than the
//! policy's longest wait leaves the call pending until the server's time and returns [`Next::Pause`]:
//! the runner pauses the whole run ([`crate::retry::server_wait_message`]).
//!
//! # Early stop
//! Runners settle every attempt through [`Job::settle_attempt`], which watches each provider (the
//! model or judge id of [`Job::provider_of`]): when, before any call of a provider has answered,
//! [`EARLY_STOP_CALLS`] (3) distinct calls in a row fail the same way ([`FailureReason::group_key`])
//! with a failure that says the provider is unusable ([`FailureReason::counts_for_early_stop`]:
//! network errors, bodies that are not JSON or not the provider's shape, HTTP 401, 402, 404, 405,
//! 407), the provider is **stopped early**: its pending calls fail at once — those never sent with
//! the kind `stopped_early`, those already tried keeping their own reason — and calls in flight fail
//! without retries when they come back, with one message ([`EarlyStop`]) naming the reason and the
//! count. Rate limits (429) and server errors (5xx) never stop a provider: they say "later", and keep
//! their retries and `Retry-After`; HTTP 400, 403 and 422 neither, since they can depend on the
//! prompt (content filters, moderation); timeouts neither: the server took the call and may only be
//! slow (a local model on a busy machine answers after the first calls time out). Three calls,
//! because one failure can be a blip and two the same coincidence, while three distinct calls
//! failing identically before anything answered is a provider that does not work; with
//! `concurrency` calls at once a dead provider then gets a handful of attempts (the three calls, any
//! of their retries that came due meanwhile, the calls in flight) instead of 5 for every call.
//! [`RunState::retry_failed`] clears the watch, so a fixed provider gets a fresh start.
//! [`RunState::failure_groups`] groups the finally failed calls by reason (count, first example).
//!
//! Judge calls (id `{call id}:{judge id}`) follow the same statuses; [`RunState::ensure_judge_calls`]
//! adds them for every answered call whose response has text, marking a judge that is the audited
//! model ([`crate::judge::is_self_judge`]).
//!
//! # Persistence
//! [`RunState::to_json`] / [`RunState::from_json`]: `{"format": "audit-atlas-pilot-run", "version":
//! 1, "plan_fingerprint", "calls": [{"id", "status": {"state": "pending" | "in_flight" | "answered" |
//! "failed", …}}], "judge_calls": [{"id", "call", "judge", "self_judge", "status"}]}`. No type in it can
//! hold a key; failure messages are scrubbed of the key ([`FailureReason::from_error`]).

use std::collections::HashMap;

use atlas_core::bundle::{
    BundleFile, Facet, JudgeColumn, Level, License, Metadata, Obtained, Production, RationaleLabel,
    Responses, SelectionColumn, SelectionValue, Source, TextCells, TextField, Texts, CODE_ALPHABET,
    FORMAT_NAME, FORMAT_VERSION, NO_RESPONSE,
};
use atlas_core::{Audit, BundleError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::connection::{is_bad_port, network_cause, Endpoint, NetworkCause};
use crate::extract::{extract_completion, Extraction, Rule};
use crate::judge::{is_self_judge, label_code, majority_counts, read_judge_label, JudgeError};
use crate::plan::{Plan, PlannedCall};
use crate::provider::{
    parse_response_scrubbed, Completion, HttpRequest, Provider, ProviderError, RequestError,
    SecretKey,
};
use crate::retry::{decide, BackoffPolicy, PolicyError, RetryDecision};

/// `format` of a persisted run state.
pub const RUN_FORMAT: &str = "audit-atlas-pilot-run";
/// `version` of a persisted run state.
pub const RUN_VERSION: u32 = 1;
/// The producing tool named in bundles.
pub const TOOL: &str = concat!("atlas-pilot ", env!("CARGO_PKG_VERSION"));

/// What kind of failure a call had (persisted as its snake-case key: `network`, `client`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// HTTP 429 ([`ProviderError::RateLimited`]).
    RateLimited,
    /// HTTP 5xx ([`ProviderError::Server`]).
    Server,
    /// No answer within the timeout per call, or HTTP 408 / 504 ([`ProviderError::Timeout`]).
    Timeout,
    /// No response: refused, DNS, TLS, dropped ([`ProviderError::Network`]).
    Network,
    /// Another HTTP 4xx ([`ProviderError::Client`]).
    Client,
    /// The body is not JSON ([`ProviderError::Malformed`]).
    Malformed,
    /// JSON, but not the provider's documented shape ([`ProviderError::UnexpectedShape`]).
    UnexpectedShape,
    /// The attempt was interrupted (pause, cancel, reload) before it answered.
    Interrupted,
    /// The request could not be built.
    Request,
    /// Not sent: the call's provider was stopped early (module docs, "Early stop").
    StoppedEarly,
}

impl FailureKind {
    /// The persisted key: [`ProviderError::kind_key`] for a provider error, else `interrupted`,
    /// `request`, `stopped_early`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RateLimited => "rate_limited",
            FailureKind::Server => "server",
            FailureKind::Timeout => "timeout",
            FailureKind::Network => "network",
            FailureKind::Client => "client",
            FailureKind::Malformed => "malformed",
            FailureKind::UnexpectedShape => "unexpected_shape",
            FailureKind::Interrupted => "interrupted",
            FailureKind::Request => "request",
            FailureKind::StoppedEarly => "stopped_early",
        }
    }

    /// The kind of a provider error.
    pub fn of(error: &ProviderError) -> Self {
        match error {
            ProviderError::RateLimited { .. } => FailureKind::RateLimited,
            ProviderError::Server { .. } => FailureKind::Server,
            ProviderError::Timeout { .. } => FailureKind::Timeout,
            ProviderError::Network { .. } => FailureKind::Network,
            ProviderError::Client { .. } => FailureKind::Client,
            ProviderError::Malformed { .. } => FailureKind::Malformed,
            ProviderError::UnexpectedShape { .. } => FailureKind::UnexpectedShape,
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a call failed (persisted; shown to the user).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureReason {
    /// What kind of failure.
    pub kind: FailureKind,
    /// HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The error's message (the provider's message included), scrubbed of the key.
    pub message: String,
}

impl FailureReason {
    /// From a provider error, with every occurrence of `key` replaced by `***`.
    pub fn from_error(error: &ProviderError, key: &SecretKey) -> Self {
        let e = error.scrubbed(key);
        FailureReason {
            kind: FailureKind::of(&e),
            status: e.status(),
            message: e.to_string(),
        }
    }

    fn interrupted() -> Self {
        FailureReason {
            kind: FailureKind::Interrupted,
            status: None,
            message: "the attempt was interrupted (pause, cancel or reload) before it answered"
                .into(),
        }
    }

    /// Calls that failed "the same way" share this key: `kind/status/cause`, the status `-` when
    /// there was no response, and the cause ([`network_cause`]: `refused`, `dns`, `tls`,
    /// `dropped`, `unknown`) only for network errors — their message is the one thing that tells a
    /// refused connection from a DNS failure; other messages (the provider's) vary with the call and
    /// are left out. The early stop's test and the grouping of failures ([`RunState::failure_groups`]).
    pub fn group_key(&self) -> String {
        let status = self.status.map_or("-".to_string(), |s| s.to_string());
        let cause = if self.kind == FailureKind::Network {
            network_cause(&self.message).key()
        } else {
            ""
        };
        format!("{}/{status}/{cause}", self.kind.as_str())
    }

    /// The group in plain words: `network error — connection refused`, `HTTP 401 — key refused`,
    /// `no answer within the timeout per call`, `not sent — the provider was stopped early`, ….
    pub fn group_label(&self) -> String {
        let status = self.status.unwrap_or(0);
        match self.kind {
            FailureKind::Network => {
                format!("network error — {}", network_cause(&self.message).label())
            }
            FailureKind::Timeout if self.status.is_some() => {
                format!("HTTP {status} — request timeout")
            }
            FailureKind::Timeout => "no answer within the timeout per call".into(),
            FailureKind::Client => format!(
                "HTTP {status} — {}",
                match status {
                    400 => "bad request",
                    401 => "key refused",
                    402 => "payment required",
                    403 => "forbidden",
                    404 => "not found (base URL or model)",
                    405 => "method not allowed (base URL)",
                    407 => "proxy authentication required",
                    413 => "request too large",
                    422 => "invalid request",
                    _ => "request refused",
                }
            ),
            FailureKind::RateLimited => format!("HTTP {status} — rate limited"),
            FailureKind::Server => format!("HTTP {status} — provider server error"),
            FailureKind::Malformed => format!("HTTP {status} — the answer is not valid JSON"),
            FailureKind::UnexpectedShape => {
                format!("HTTP {status} — not the provider's documented answer")
            }
            FailureKind::Request => "the request could not be built".into(),
            FailureKind::StoppedEarly => "not sent — the provider was stopped early".into(),
            FailureKind::Interrupted => "interrupted (pause, cancel or reload)".into(),
        }
    }

    /// Whether this failure says the provider is unusable, so that [`EARLY_STOP_CALLS`] of them in
    /// a row stop it (module docs, "Early stop"): network errors, `malformed` and
    /// `unexpected_shape` bodies, and HTTP 401, 402, 404, 405, 407. Not rate limits, server errors
    /// (they say "later"), HTTP 400, 403, 422 (they can depend on the prompt), timeouts (a slow
    /// server is not a broken one), interruptions.
    pub fn counts_for_early_stop(&self) -> bool {
        match self.kind {
            FailureKind::Network | FailureKind::Malformed | FailureKind::UnexpectedShape => true,
            FailureKind::Client => matches!(self.status, Some(401 | 402 | 404 | 405 | 407)),
            FailureKind::RateLimited
            | FailureKind::Server
            | FailureKind::Timeout
            | FailureKind::Interrupted
            | FailureKind::Request
            | FailureKind::StoppedEarly => false,
        }
    }
}

/// Distinct calls to one provider that must fail the same way, before any of its calls answered, for
/// the provider to be stopped early (module docs, "Early stop").
pub const EARLY_STOP_CALLS: usize = 3;

/// The early-stop watch of one provider (persisted with the run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderWatch {
    /// The provider's id in the job ([`Job::provider_of`]: a model or judge id).
    pub provider: String,
    /// A call of this provider answered: it is not stopped early any more in this run.
    #[serde(default)]
    pub answered: bool,
    /// Distinct calls, in order, whose last attempts failed the same way, with no answer before.
    #[serde(default)]
    pub streak: Vec<String>,
    /// The first failure of the streak.
    #[serde(default)]
    pub first: Option<FailureReason>,
    /// Set once the provider was stopped.
    #[serde(default)]
    pub stopped: Option<EarlyStop>,
}

/// A provider stopped early (module docs, "Early stop").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EarlyStop {
    /// The provider's id (a model or judge id).
    pub provider: String,
    /// The endpoint its calls go to (no key in it), for a diagnosis ([`crate::connection`]).
    pub url: String,
    /// Calls that failed the same way ([`EARLY_STOP_CALLS`]).
    pub calls: usize,
    /// Calls of the provider failed without being sent (kind [`FailureKind::StoppedEarly`]).
    pub not_sent: usize,
    /// The first failure of the streak (the reason).
    pub reason: FailureReason,
    /// The one message for the user: the provider, the reason, the count, what to do.
    pub message: String,
}

/// One reason of [`RunState::failure_groups`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureGroup {
    /// [`FailureReason::group_key`].
    pub key: String,
    /// [`FailureReason::group_label`].
    pub label: String,
    /// Finally failed calls (audited and judge calls) with this reason.
    pub count: usize,
    /// The first such call in run order (audited calls, then judge calls).
    pub first_call: String,
    /// Its message (scrubbed of the key).
    pub first_message: String,
}

/// The status of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case", deny_unknown_fields)]
pub enum CallStatus {
    /// Not running. `attempts` made so far; `not_before_ms` = earliest retry time (ms since 1970).
    Pending {
        /// Attempts made so far.
        attempts: u32,
        /// Why the last attempt did not answer, if one was made.
        #[serde(default)]
        last_error: Option<FailureReason>,
        /// Earliest time of the next attempt (ms since 1970); `None` = now.
        #[serde(default)]
        not_before_ms: Option<u64>,
    },
    /// Attempt number `attempt` (from 1) was sent at `started_ms`.
    InFlight {
        /// This attempt's number, from 1.
        attempt: u32,
        /// When it was sent (ms since 1970).
        started_ms: u64,
    },
    /// Answered after `attempts` attempts; `duration_ms` of the last attempt.
    Answered {
        /// The provider's answer.
        completion: Completion,
        /// Attempts made, the answered one included.
        attempts: u32,
        /// Duration of the answered attempt, ms.
        duration_ms: u64,
    },
    /// Finally failed after `attempts` attempts.
    Failed {
        /// Why, with the provider's message.
        reason: FailureReason,
        /// Attempts made.
        attempts: u32,
    },
}

/// Where a call stands, without its details: the variant of a [`CallStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallState {
    /// [`CallStatus::Pending`].
    Pending,
    /// [`CallStatus::InFlight`].
    InFlight,
    /// [`CallStatus::Answered`].
    Answered,
    /// [`CallStatus::Failed`].
    Failed,
}

impl CallState {
    /// The persisted `state` key (`pending`, `in_flight`, `answered`, `failed`), also the
    /// `data-status` of the app's result rows.
    pub fn as_str(self) -> &'static str {
        match self {
            CallState::Pending => "pending",
            CallState::InFlight => "in_flight",
            CallState::Answered => "answered",
            CallState::Failed => "failed",
        }
    }
}

impl std::fmt::Display for CallState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CallStatus {
    /// Where the call stands, without the details.
    pub fn state(&self) -> CallState {
        match self {
            CallStatus::Pending { .. } => CallState::Pending,
            CallStatus::InFlight { .. } => CallState::InFlight,
            CallStatus::Answered { .. } => CallState::Answered,
            CallStatus::Failed { .. } => CallState::Failed,
        }
    }

    /// Attempts made so far: those counted while pending, the one in flight, or all of an answered
    /// or failed call.
    pub fn attempts(&self) -> u32 {
        match self {
            CallStatus::Pending { attempts, .. }
            | CallStatus::Answered { attempts, .. }
            | CallStatus::Failed { attempts, .. } => *attempts,
            CallStatus::InFlight { attempt, .. } => *attempt,
        }
    }

    fn fresh() -> Self {
        CallStatus::Pending {
            attempts: 0,
            last_error: None,
            not_before_ms: None,
        }
    }
}

/// An audited call's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallRecord {
    /// The planned call's id.
    pub id: String,
    /// Where the call stands.
    pub status: CallStatus,
}

/// A judge call's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeRecord {
    /// `{call id}:{judge id}`.
    pub id: String,
    /// The judged call's id.
    pub call: String,
    /// The judge's id.
    pub judge: String,
    /// Whether the judge model is the audited model.
    pub self_judge: bool,
    /// Where the judge call stands.
    pub status: CallStatus,
}

/// What went wrong with the run state.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("no call {0:?} in this run")]
    /// No call or judge call with this id.
    UnknownCall(String),
    #[error("call {id:?} is {from}; it cannot {action}")]
    /// A move the call's status does not allow.
    Transition {
        /// The call's id.
        id: String,
        /// The call's status: `pending`, `in_flight`, `answered` or `failed`.
        from: &'static str,
        /// The move asked for, e.g. `be answered`.
        action: &'static str,
    },
    #[error("the run state belongs to plan {found}, not to this plan ({expected})")]
    /// The state belongs to another plan.
    PlanMismatch {
        /// Fingerprint of the plan given ([`crate::plan::Plan::fingerprint`]).
        expected: String,
        /// Fingerprint of the plan the run state belongs to.
        found: String,
    },
    #[error("run state JSON: {0}")]
    /// The persisted text is not a run state.
    Json(String),
    #[error("`format` is {0:?}; expected \"audit-atlas-pilot-run\"")]
    /// `format` is not [`RUN_FORMAT`].
    WrongFormat(String),
    #[error("unsupported run state version {0}; this build reads version 1")]
    /// `version` is not [`RUN_VERSION`].
    Version(u32),
    #[error("call {0:?} has no response text to judge")]
    /// A judge call for a response without text.
    NothingToJudge(String),
    #[error("judge {0:?} is not in the plan")]
    /// A judge id the plan does not have.
    UnknownJudge(String),
    #[error("more than 62 distinct Selection values; the bundle's code alphabet has 62")]
    /// More distinct Selection values than the code alphabet holds.
    TooManySelectionValues,
    #[error(transparent)]
    /// A judge prompt could not be built.
    Judge(#[from] JudgeError),
    #[error(transparent)]
    /// A request could not be built.
    Request(#[from] RequestError),
    #[error(transparent)]
    /// The backoff policy is invalid.
    Policy(#[from] PolicyError),
    #[error("the bundle built from the run is invalid: {0}")]
    /// The bundle built from the run does not validate.
    Bundle(#[from] BundleError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Call(usize),
    Judge(usize),
}

/// The run state (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    /// Always [`RUN_FORMAT`].
    pub format: String,
    /// Always [`RUN_VERSION`].
    pub version: u32,
    /// [`Plan::fingerprint`] of the plan the state belongs to.
    pub plan_fingerprint: String,
    /// One record per planned call, in plan order.
    pub calls: Vec<CallRecord>,
    /// Judge calls, in the order they were added.
    #[serde(default)]
    pub judge_calls: Vec<JudgeRecord>,
    /// The early-stop watch of each provider that has settled an attempt (module docs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watches: Vec<ProviderWatch>,
    #[serde(skip)]
    index: HashMap<String, Slot>,
}

/// What [`RunState::fail_attempt`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "next", rename_all = "snake_case")]
pub enum Next {
    /// Back to pending; retry at `not_before_ms` (ms since 1970).
    Retry {
        /// When to begin again (ms since 1970).
        not_before_ms: u64,
        /// The backoff delay, ms.
        delay_ms: u64,
    },
    /// The call has finally failed.
    Failed,
    /// The server asked to wait `wait_ms`, longer than the policy's `max_wait_ms` (`limit_ms`): the
    /// call is pending until `not_before_ms` (the server's time) and the runner pauses the run.
    Pause {
        /// When the call may be sent again (ms since 1970).
        not_before_ms: u64,
        /// The wait the server asked for, ms.
        wait_ms: u64,
        /// The policy's longest wait, ms.
        limit_ms: u64,
    },
}

/// What [`RunState::record_response`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The call is answered.
    Answered,
    /// The response was an error (scrubbed of the key): retried later or finally failed.
    Error {
        /// The error, scrubbed of the key.
        error: ProviderError,
        /// Retry or failed.
        next: Next,
    },
}

/// Status counts for the progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StatusCounts {
    /// All calls.
    pub total: usize,
    /// Not running (waiting to start or to retry).
    pub pending: usize,
    /// Sent, no answer yet.
    pub in_flight: usize,
    /// Answered.
    pub answered: usize,
    /// Finally failed.
    pub failed: usize,
}

impl StatusCounts {
    /// Answered + failed.
    pub fn done(&self) -> usize {
        self.answered + self.failed
    }

    /// Pending + in flight.
    pub fn remaining(&self) -> usize {
        self.pending + self.in_flight
    }

    fn add(&mut self, status: &CallStatus) {
        self.total += 1;
        match status {
            CallStatus::Pending { .. } => self.pending += 1,
            CallStatus::InFlight { .. } => self.in_flight += 1,
            CallStatus::Answered { .. } => self.answered += 1,
            CallStatus::Failed { .. } => self.failed += 1,
        }
    }
}

/// Progress of the audited calls and of the judge calls.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Progress {
    /// The audited calls.
    pub calls: StatusCounts,
    /// The judge calls.
    pub judge_calls: StatusCounts,
    /// Mean duration of the answered attempts (audited and judge), ms; `None` before the first answer.
    pub mean_duration_ms: Option<f64>,
}

impl Progress {
    /// Estimated time left with `concurrency` calls at once: mean duration × remaining calls /
    /// concurrency, in ms (retry waits not included). `None` before the first answer.
    pub fn eta_ms(&self, concurrency: usize) -> Option<u64> {
        let mean = self.mean_duration_ms?;
        let remaining = (self.calls.remaining() + self.judge_calls.remaining()) as f64;
        Some((mean * remaining / concurrency.max(1) as f64).ceil() as u64)
    }
}

impl RunState {
    /// A fresh state: every planned call pending, no judge call yet.
    pub fn new(plan: &Plan) -> Self {
        let mut state = RunState {
            format: RUN_FORMAT.to_string(),
            version: RUN_VERSION,
            plan_fingerprint: plan.fingerprint.clone(),
            calls: plan
                .calls
                .iter()
                .map(|c| CallRecord {
                    id: c.id.clone(),
                    status: CallStatus::fresh(),
                })
                .collect(),
            judge_calls: Vec::new(),
            watches: Vec::new(),
            index: HashMap::new(),
        };
        state.reindex();
        state
    }

    /// A fresh state over calls that come from no pilot plan — judge coding of a loaded bundle
    /// ([`crate::bundle_judge::BundleJudgePlan::new_state`]): one pending record per id, in the order
    /// given, no judge calls; `fingerprint` is the job's, checked by its [`Job::check_state`].
    pub fn for_calls(fingerprint: &str, ids: impl IntoIterator<Item = String>) -> Self {
        let mut state = RunState {
            format: RUN_FORMAT.to_string(),
            version: RUN_VERSION,
            plan_fingerprint: fingerprint.to_string(),
            calls: ids
                .into_iter()
                .map(|id| CallRecord {
                    id,
                    status: CallStatus::fresh(),
                })
                .collect(),
            judge_calls: Vec::new(),
            watches: Vec::new(),
            index: HashMap::new(),
        };
        state.reindex();
        state
    }

    fn reindex(&mut self) {
        self.index = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), Slot::Call(i)))
            .chain(
                self.judge_calls
                    .iter()
                    .enumerate()
                    .map(|(i, j)| (j.id.clone(), Slot::Judge(i))),
            )
            .collect();
    }

    /// The JSON text to persist.
    ///
    /// # Errors
    /// [`RunError::Json`] (not expected: the state holds strings and numbers only).
    pub fn to_json(&self) -> Result<String, RunError> {
        serde_json::to_string(self).map_err(|e| RunError::Json(e.to_string()))
    }

    /// A state read back from [`RunState::to_json`]. In-flight calls stay in flight: call
    /// [`RunState::interrupt`] when resuming after a reload.
    ///
    /// # Errors
    /// [`RunError::Json`], [`RunError::WrongFormat`], [`RunError::Version`].
    pub fn from_json(text: &str) -> Result<Self, RunError> {
        let mut state: RunState =
            serde_json::from_str(text).map_err(|e| RunError::Json(e.to_string()))?;
        if state.format != RUN_FORMAT {
            return Err(RunError::WrongFormat(state.format));
        }
        if state.version != RUN_VERSION {
            return Err(RunError::Version(state.version));
        }
        state.reindex();
        Ok(state)
    }

    /// Checks that the state belongs to `plan` (same fingerprint, same call ids in the same order).
    ///
    /// # Errors
    /// [`RunError::PlanMismatch`].
    pub fn check_plan(&self, plan: &Plan) -> Result<(), RunError> {
        self.check_calls(&plan.fingerprint, plan.calls.iter().map(|c| c.id.as_str()))
    }

    /// Whether this state was made for the plan of `fingerprint` whose calls have the ids `ids`, in
    /// order — what every job's `check_state` asks ([`RunState::check_plan`], the clinical protocol,
    /// judge coding, the clarification probe).
    ///
    /// # Errors
    /// [`RunError::PlanMismatch`] naming both fingerprints.
    pub fn check_calls<'a>(
        &self,
        fingerprint: &str,
        ids: impl ExactSizeIterator<Item = &'a str>,
    ) -> Result<(), RunError> {
        let same_calls =
            self.calls.len() == ids.len() && self.calls.iter().zip(ids).all(|(r, id)| r.id == id);
        if self.plan_fingerprint != fingerprint || !same_calls {
            return Err(RunError::PlanMismatch {
                expected: fingerprint.to_string(),
                found: self.plan_fingerprint.clone(),
            });
        }
        Ok(())
    }

    /// The status of call or judge call `id`.
    pub fn status(&self, id: &str) -> Option<&CallStatus> {
        match self.index.get(id)? {
            Slot::Call(i) => self.calls.get(*i).map(|c| &c.status),
            Slot::Judge(i) => self.judge_calls.get(*i).map(|j| &j.status),
        }
    }

    /// The position of audited call `id` in [`RunState::calls`] (plan order); `None` for a judge
    /// call or an unknown id.
    pub fn call_index(&self, id: &str) -> Option<usize> {
        match self.index.get(id)? {
            Slot::Call(i) => Some(*i),
            Slot::Judge(_) => None,
        }
    }

    /// The record of judge call `id`; `None` for an audited call or an unknown id.
    pub fn judge_call(&self, id: &str) -> Option<&JudgeRecord> {
        match self.index.get(id)? {
            Slot::Judge(i) => self.judge_calls.get(*i),
            Slot::Call(_) => None,
        }
    }

    fn status_mut(&mut self, id: &str) -> Result<&mut CallStatus, RunError> {
        let slot = *self
            .index
            .get(id)
            .ok_or_else(|| RunError::UnknownCall(id.to_string()))?;
        let status = match slot {
            Slot::Call(i) => self.calls.get_mut(i).map(|c| &mut c.status),
            Slot::Judge(i) => self.judge_calls.get_mut(i).map(|j| &mut j.status),
        };
        status.ok_or_else(|| RunError::UnknownCall(id.to_string()))
    }

    /// Pending → in flight. Returns the attempt number (from 1).
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::Transition`] unless pending.
    pub fn begin(&mut self, id: &str, now_ms: u64) -> Result<u32, RunError> {
        let status = self.status_mut(id)?;
        let CallStatus::Pending { attempts, .. } = status else {
            return Err(transition(id, status, "begin"));
        };
        let attempt = *attempts + 1;
        *status = CallStatus::InFlight {
            attempt,
            started_ms: now_ms,
        };
        Ok(attempt)
    }

    /// In flight → answered.
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::Transition`] unless in flight.
    pub fn answer(
        &mut self,
        id: &str,
        completion: Completion,
        now_ms: u64,
    ) -> Result<(), RunError> {
        let status = self.status_mut(id)?;
        let CallStatus::InFlight {
            attempt,
            started_ms,
        } = *status
        else {
            return Err(transition(id, status, "be answered"));
        };
        *status = CallStatus::Answered {
            completion,
            attempts: attempt,
            duration_ms: now_ms.saturating_sub(started_ms),
        };
        Ok(())
    }

    /// In flight → pending (retry scheduled by [`crate::retry::decide`] under `at.policy` with the
    /// job's `seed` and the call's index) or failed. `at.key` scrubs the stored message.
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::Transition`] unless in flight, [`RunError::Policy`].
    pub fn fail_attempt(
        &mut self,
        id: &str,
        error: &ProviderError,
        seed: u64,
        at: &Settling<'_>,
    ) -> Result<Next, RunError> {
        let (key, policy, now_ms) = (at.key, at.policy, at.now_ms);
        let call_index = match self.index.get(id) {
            Some(Slot::Call(i)) => *i as u64,
            // Judge calls draw from streams after every audited call's.
            Some(Slot::Judge(i)) => (self.calls.len() + *i) as u64,
            None => return Err(RunError::UnknownCall(id.to_string())),
        };
        let status = self.status_mut(id)?;
        let CallStatus::InFlight { attempt, .. } = *status else {
            return Err(transition(id, status, "fail an attempt"));
        };
        let reason = FailureReason::from_error(error, key);
        match decide(policy, seed, call_index, attempt, error, now_ms)? {
            RetryDecision::Retry { delay_ms, .. } => {
                let not_before_ms = now_ms.saturating_add(delay_ms);
                *status = CallStatus::Pending {
                    attempts: attempt,
                    last_error: Some(reason),
                    not_before_ms: Some(not_before_ms),
                };
                Ok(Next::Retry {
                    not_before_ms,
                    delay_ms,
                })
            }
            RetryDecision::Pause {
                wait_ms, limit_ms, ..
            } => {
                let not_before_ms = now_ms.saturating_add(wait_ms);
                *status = CallStatus::Pending {
                    attempts: attempt,
                    last_error: Some(reason),
                    not_before_ms: Some(not_before_ms),
                };
                Ok(Next::Pause {
                    not_before_ms,
                    wait_ms,
                    limit_ms,
                })
            }
            RetryDecision::GiveUp { reason: why } => {
                let mut reason = reason;
                reason.message = format!("{} ({})", reason.message, why.describe());
                *status = CallStatus::Failed {
                    reason,
                    attempts: attempt,
                };
                Ok(Next::Failed)
            }
        }
    }

    /// The whole response step for call or judge call `id` (in flight): reads `response` with
    /// [`crate::provider::parse_response_scrubbed`] under the call's provider (the audited model's, or
    /// the judge's), then [`RunState::answer`] or [`RunState::fail_attempt`]. Returns what happened;
    /// the error (if any) is scrubbed of `at.key`.
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::UnknownJudge`], [`RunError::Transition`] unless in
    /// flight, [`RunError::Policy`].
    pub fn record_response(
        &mut self,
        plan: &Plan,
        id: &str,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError> {
        let provider = match self.index.get(id) {
            Some(Slot::Call(i)) => plan
                .calls
                .get(*i)
                .and_then(|c| plan.model_of(c))
                .map(|m| &m.provider),
            Some(Slot::Judge(i)) => match self.judge_calls.get(*i) {
                Some(record) => Some(&judge_parts(plan, record)?.2.provider),
                None => None,
            },
            None => None,
        }
        .ok_or_else(|| RunError::UnknownCall(id.to_string()))?;
        self.settle(id, provider, plan.design.seed, response, at)
    }

    /// The response step every [`Job`] shares: reads `response` of in-flight call `id` under
    /// `provider` ([`parse_response_scrubbed`]), then [`RunState::answer`], or
    /// [`RunState::fail_attempt`] with the retry jitter `seed` (retry later or finally failed).
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::Transition`] unless in flight, [`RunError::Policy`].
    pub fn settle(
        &mut self,
        id: &str,
        provider: &Provider,
        seed: u64,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError> {
        let HttpResponse {
            status,
            headers,
            body,
        } = *response;
        match parse_response_scrubbed(provider, status, headers, body, at.key) {
            Ok(completion) => {
                self.answer(id, completion, at.now_ms)?;
                Ok(Settled::Answered)
            }
            Err(error) => {
                let next = self.fail_attempt(id, &error, seed, at)?;
                Ok(Settled::Error { error, next })
            }
        }
    }

    /// In flight → failed at once, e.g. when the request could not even be built. `key` scrubs the
    /// message.
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::Transition`] unless in flight.
    pub fn fail_now(
        &mut self,
        id: &str,
        kind: FailureKind,
        message: &str,
        key: &SecretKey,
    ) -> Result<(), RunError> {
        let status = self.status_mut(id)?;
        let CallStatus::InFlight { attempt, .. } = *status else {
            return Err(transition(id, status, "fail"));
        };
        *status = CallStatus::Failed {
            reason: FailureReason {
                kind,
                status: None,
                message: key.scrub(message),
            },
            attempts: attempt,
        };
        Ok(())
    }

    /// Every in-flight call back to pending, its attempt counted (pause, cancel, or resuming after a
    /// reload or crash). Returns how many.
    pub fn interrupt(&mut self) -> usize {
        let mut n = 0;
        let statuses = self
            .calls
            .iter_mut()
            .map(|c| &mut c.status)
            .chain(self.judge_calls.iter_mut().map(|j| &mut j.status));
        for status in statuses {
            if let CallStatus::InFlight { attempt, .. } = *status {
                *status = CallStatus::Pending {
                    attempts: attempt,
                    last_error: Some(FailureReason::interrupted()),
                    not_before_ms: None,
                };
                n += 1;
            }
        }
        n
    }

    /// Every failed call (and judge call) back to pending with no attempts counted, for a user's
    /// "retry failed"; the early-stop watches start again (a stopped provider is tried afresh).
    /// Returns how many.
    pub fn retry_failed(&mut self) -> usize {
        self.watches.clear();
        let mut n = 0;
        let statuses = self
            .calls
            .iter_mut()
            .map(|c| &mut c.status)
            .chain(self.judge_calls.iter_mut().map(|j| &mut j.status));
        for status in statuses {
            if let CallStatus::Failed { reason, .. } = status {
                *status = CallStatus::Pending {
                    attempts: 0,
                    last_error: Some(reason.clone()),
                    not_before_ms: None,
                };
                n += 1;
            }
        }
        n
    }

    /// Up to `limit` ids ready to begin at `now_ms` (pending and past `not_before_ms`): audited calls
    /// in plan order first, then judge calls.
    pub fn ready(&self, now_ms: u64, limit: usize) -> Vec<&str> {
        let is_ready = |s: &CallStatus| {
            matches!(s, CallStatus::Pending { not_before_ms, .. }
                if not_before_ms.is_none_or(|t| t <= now_ms))
        };
        self.calls
            .iter()
            .filter(|c| is_ready(&c.status))
            .map(|c| c.id.as_str())
            .chain(
                self.judge_calls
                    .iter()
                    .filter(|j| is_ready(&j.status))
                    .map(|j| j.id.as_str()),
            )
            .take(limit)
            .collect()
    }

    /// Up to `limit` ids of audited calls, in plan order, that are pending, past `not_before_ms` at
    /// `now_ms`, and for which `depends_met(index)` holds: the `Job::ready` of jobs whose calls wait
    /// for earlier answers (the clinical protocol, the clarification probe).
    pub fn ready_where(
        &self,
        now_ms: u64,
        limit: usize,
        depends_met: impl Fn(usize) -> bool,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for (i, record) in self.calls.iter().enumerate() {
            if out.len() >= limit {
                break;
            }
            let CallStatus::Pending { not_before_ms, .. } = &record.status else {
                continue;
            };
            if not_before_ms.is_some_and(|t| t > now_ms) {
                continue;
            }
            if depends_met(i) {
                out.push(record.id.clone());
            }
        }
        out
    }

    /// The earliest `not_before_ms` among pending calls that are waiting, for the scheduler's timer.
    pub fn next_wake_ms(&self) -> Option<u64> {
        self.calls
            .iter()
            .map(|c| &c.status)
            .chain(self.judge_calls.iter().map(|j| &j.status))
            .filter_map(|s| match s {
                CallStatus::Pending { not_before_ms, .. } => *not_before_ms,
                _ => None,
            })
            .min()
    }

    /// StatusCounts and mean duration.
    pub fn progress(&self) -> Progress {
        let mut p = Progress::default();
        let (mut sum, mut n) = (0.0, 0u64);
        for c in &self.calls {
            p.calls.add(&c.status);
            if let CallStatus::Answered { duration_ms, .. } = c.status {
                sum += duration_ms as f64;
                n += 1;
            }
        }
        for j in &self.judge_calls {
            p.judge_calls.add(&j.status);
            if let CallStatus::Answered { duration_ms, .. } = j.status {
                sum += duration_ms as f64;
                n += 1;
            }
        }
        p.mean_duration_ms = (n > 0).then(|| sum / n as f64);
        p
    }

    /// The providers stopped early, in the order they were stopped.
    pub fn early_stops(&self) -> Vec<&EarlyStop> {
        self.watches
            .iter()
            .filter_map(|w| w.stopped.as_ref())
            .collect()
    }

    /// The finally failed calls (audited, then judge calls) grouped by
    /// [`FailureReason::group_key`]: count, label and the first example; the largest group first
    /// (ties in order of first appearance).
    pub fn failure_groups(&self) -> Vec<FailureGroup> {
        let mut groups: Vec<FailureGroup> = Vec::new();
        let failed = self
            .calls
            .iter()
            .map(|c| (&c.id, &c.status))
            .chain(self.judge_calls.iter().map(|j| (&j.id, &j.status)));
        for (id, status) in failed {
            let CallStatus::Failed { reason, .. } = status else {
                continue;
            };
            let key = reason.group_key();
            match groups.iter_mut().find(|g| g.key == key) {
                Some(g) => g.count += 1,
                None => groups.push(FailureGroup {
                    label: reason.group_label(),
                    key,
                    count: 1,
                    first_call: id.clone(),
                    first_message: reason.message.clone(),
                }),
            }
        }
        // A stable sort keeps the order of first appearance among equal counts.
        groups.sort_by_key(|g| std::cmp::Reverse(g.count));
        groups
    }

    /// The early-stop step after an attempt of call `id` settled (module docs, "Early stop"):
    /// updates the watch of the call's provider and, when its streak reaches [`EARLY_STOP_CALLS`],
    /// stops the provider; a stopped provider's pending calls (this one included) fail at once.
    fn watch<J: Job + ?Sized>(&mut self, job: &J, id: &str, answered: bool) {
        let Some((provider, url)) = job
            .provider_of(self, id)
            .map(|(name, p)| (name.to_string(), p.endpoint().unwrap_or_default()))
        else {
            return;
        };
        let w = match self.watches.iter().position(|w| w.provider == provider) {
            Some(w) => w,
            None => {
                self.watches.push(ProviderWatch {
                    provider: provider.clone(),
                    answered: false,
                    streak: Vec::new(),
                    first: None,
                    stopped: None,
                });
                self.watches.len() - 1
            }
        };
        if self.watches[w].stopped.is_some() {
            self.stop_pending(job, w);
            return;
        }
        if answered {
            self.watches[w].answered = true;
            return;
        }
        if self.watches[w].answered {
            return;
        }
        let reason = match self.status(id) {
            Some(CallStatus::Pending {
                last_error: Some(r),
                ..
            }) => r.clone(),
            Some(CallStatus::Failed { reason, .. }) => reason.clone(),
            _ => return,
        };
        if !reason.counts_for_early_stop() {
            return;
        }
        let watch = &mut self.watches[w];
        let same = watch
            .first
            .as_ref()
            .is_some_and(|f| f.group_key() == reason.group_key());
        if !same {
            watch.first = Some(reason);
            watch.streak.clear();
        }
        if !watch.streak.iter().any(|c| c == id) {
            watch.streak.push(id.to_string());
        }
        if watch.streak.len() < EARLY_STOP_CALLS {
            return;
        }
        let Some(first) = watch.first.clone() else {
            return;
        };
        let calls = watch.streak.len();
        watch.stopped = Some(EarlyStop {
            provider: provider.clone(),
            url: url.clone(),
            calls,
            not_sent: 0,
            reason: first.clone(),
            message: String::new(),
        });
        let (not_sent, in_flight) = self.stop_pending(job, w);
        let label = job
            .provider_of(self, id)
            .map(|(_, p)| format!("{provider} ({} at {})", p.model(), p.base_url()))
            .unwrap_or_else(|| provider.clone());
        let message = early_stop_message(&label, &url, &first, calls, not_sent, in_flight);
        if let Some(stop) = self.watches[w].stopped.as_mut() {
            stop.not_sent = not_sent;
            stop.message = message;
        }
    }

    /// Every pending call of stopped provider `self.watches[w]` fails now: tried calls keep their
    /// last reason (noted "not retried"), the others get [`FailureKind::StoppedEarly`]. Returns (not sent, still
    /// in flight).
    fn stop_pending<J: Job + ?Sized>(&mut self, job: &J, w: usize) -> (usize, usize) {
        let Some(stop) = self.watches.get(w).and_then(|w| w.stopped.clone()) else {
            return (0, 0);
        };
        let ids: Vec<String> = self
            .calls
            .iter()
            .map(|c| c.id.as_str())
            .chain(self.judge_calls.iter().map(|j| j.id.as_str()))
            .filter(|id| {
                job.provider_of(self, id)
                    .is_some_and(|(p, _)| p == stop.provider)
            })
            .map(str::to_string)
            .collect();
        let (mut not_sent, mut in_flight) = (0, 0);
        for id in ids {
            let Ok(status) = self.status_mut(&id) else {
                continue;
            };
            match status {
                CallStatus::Pending {
                    attempts,
                    last_error,
                    ..
                } => {
                    let attempts = *attempts;
                    let reason = match last_error.take() {
                        Some(mut r) if attempts > 0 && r.kind != FailureKind::Interrupted => {
                            r.message = format!(
                                "{} (not retried: {} was stopped early)",
                                r.message, stop.provider
                            );
                            r
                        }
                        _ => {
                            not_sent += 1;
                            FailureReason {
                                kind: FailureKind::StoppedEarly,
                                status: None,
                                message: format!(
                                    "not sent: {} was stopped early after its first {} calls failed the same way ({})",
                                    stop.provider,
                                    stop.calls,
                                    stop.reason.group_label()
                                ),
                            }
                        }
                    };
                    *status = CallStatus::Failed { reason, attempts };
                }
                CallStatus::InFlight { .. } => in_flight += 1,
                CallStatus::Answered { .. } | CallStatus::Failed { .. } => {}
            }
        }
        (not_sent, in_flight)
    }

    /// Applies the early stops to calls added since (a pilot's judge calls of a stopped judge).
    fn apply_stops<J: Job + ?Sized>(&mut self, job: &J) {
        for w in 0..self.watches.len() {
            if self.watches[w].stopped.is_some() {
                self.stop_pending(job, w);
            }
        }
    }

    /// Whether every audited and judge call is answered or failed.
    pub fn finished(&self) -> bool {
        self.progress().calls.remaining() == 0 && self.progress().judge_calls.remaining() == 0
    }

    /// The text a judge reads for an answered call: its Rationale, else the whole response text;
    /// `None` when not answered or the text is empty.
    pub fn judged_text(&self, plan: &Plan, call_id: &str) -> Option<String> {
        let Some(Slot::Call(i)) = self.index.get(call_id) else {
            return None;
        };
        let CallStatus::Answered { completion, .. } = &self.calls.get(*i)?.status else {
            return None;
        };
        let call = plan.calls.get(*i)?;
        let template = plan.template_of(call)?;
        bundle_text(
            &extract_completion(completion, &template.answer_space),
            completion,
        )
    }

    /// Adds a pending judge call for every answered call with text and every judge of the plan that
    /// has none yet (idempotent). Returns how many were added.
    pub fn ensure_judge_calls(&mut self, plan: &Plan) -> usize {
        let mut added = 0;
        for (i, record) in self.calls.iter().enumerate() {
            let Some(call) = plan.calls.get(i) else {
                continue;
            };
            if !matches!(record.status, CallStatus::Answered { .. }) {
                continue;
            }
            let audited = plan.model_of(call).map_or("", |m| m.provider.model());
            for judge in &plan.design.judges {
                let id = format!("{}:{}", record.id, judge.id);
                if self.index.contains_key(&id) {
                    continue;
                }
                if self.judged_text(plan, &record.id).is_none() {
                    continue;
                }
                self.index
                    .insert(id.clone(), Slot::Judge(self.judge_calls.len()));
                self.judge_calls.push(JudgeRecord {
                    id,
                    call: record.id.clone(),
                    judge: judge.id.clone(),
                    self_judge: is_self_judge(judge.provider.model(), audited),
                    status: CallStatus::fresh(),
                });
                added += 1;
            }
        }
        added
    }

    /// The HTTP request for call or judge call `id`, with `key` (the key of that call's provider).
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::NothingToJudge`], [`RunError::UnknownJudge`],
    /// [`RunError::Judge`], [`RunError::Request`].
    pub fn request(&self, plan: &Plan, id: &str, key: &SecretKey) -> Result<HttpRequest, RunError> {
        match self.index.get(id) {
            Some(Slot::Call(i)) => {
                let call = plan
                    .calls
                    .get(*i)
                    .ok_or_else(|| RunError::UnknownCall(id.to_string()))?;
                Ok(plan.request(call, key)?)
            }
            Some(Slot::Judge(i)) => {
                let record = self
                    .judge_calls
                    .get(*i)
                    .ok_or_else(|| RunError::UnknownCall(id.to_string()))?;
                let (call, j, judge) = judge_parts(plan, record)?;
                let text = self
                    .judged_text(plan, &record.call)
                    .ok_or_else(|| RunError::NothingToJudge(record.call.clone()))?;
                let prompt = plan.judge_prompt(call, j, &text)?;
                Ok(crate::provider::build_request(
                    &judge.provider,
                    &prompt,
                    &judge.params,
                    key,
                )?)
            }
            None => Err(RunError::UnknownCall(id.to_string())),
        }
    }
}

/// The one message of an early stop: the provider, the shared reason, the counts, what the failure
/// most likely means, and how to try again.
fn early_stop_message(
    label: &str,
    url: &str,
    first: &FailureReason,
    calls: usize,
    not_sent: usize,
    in_flight: usize,
) -> String {
    let endpoint = Endpoint::of(url);
    let hp = endpoint
        .as_ref()
        .map_or_else(|| url.to_string(), Endpoint::host_port);
    let hint = match first.kind {
        FailureKind::Network => match network_cause(&first.message) {
            NetworkCause::Refused => format!(" Nothing listens at {hp}: start the server or correct the port in the base URL."),
            NetworkCause::Dns => " The host name was not found: check the base URL.".to_string(),
            NetworkCause::Tls => " Check http vs https and the server's certificate.".to_string(),
            NetworkCause::Dropped => " The server or a proxy dropped the connection.".to_string(),
            NetworkCause::Unknown if endpoint.as_ref().is_some_and(|e| is_bad_port(e.port)) => format!(
                " Port {} is on the browsers' list of blocked ports (net::ERR_UNSAFE_PORT): use another port.",
                endpoint.as_ref().map_or(0, |e| e.port)
            ),
            NetworkCause::Unknown => " A browser reports a refused connection, a DNS or TLS failure, a blocked port and a CORS refusal alike; \"Test connection\" on the provider's row tells them apart.".to_string(),
        },
        FailureKind::Client => match first.status {
            Some(401) => " Check the key.".to_string(),
            Some(404) => " Check the base URL (with its version path, e.g. /v1) and the model name.".to_string(),
            _ => String::new(),
        },
        FailureKind::Malformed | FailureKind::UnexpectedShape => " Check the provider and the base URL: the server does not answer as that provider does.".to_string(),
        _ => String::new(),
    };
    let in_flight = if in_flight > 0 {
        format!(" ({in_flight} call(s) in flight finish without retries.)")
    } else {
        String::new()
    };
    format!(
        "Stopped {label} early: its first {calls} calls all failed the same way — {}: {}.{hint} {not_sent} other call(s) to it were not sent.{in_flight} Fix the cause, then retry the failed calls (\"Retry failed calls\"; `--retry-failed` on the command line).",
        first.group_label(),
        first.message
    )
}

/// What one attempt came back with, as a runner saw it ([`Job::settle_attempt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// An HTTP response (any status).
    Response {
        /// HTTP status.
        status: u16,
        /// Response headers (in a browser, those the page may read).
        headers: Vec<(String, String)>,
        /// Body text.
        body: String,
    },
    /// The runner's per-call timeout fired.
    TimedOut,
    /// No response: `fetch` rejected, or the connection failed (refused, DNS, TLS, dropped).
    Network {
        /// The error text (scrubbed of the key before it is stored).
        message: String,
    },
}

/// One HTTP response of an in-flight call, as it came back (borrowed from an
/// [`AttemptOutcome::Response`] or a runner's buffers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpResponse<'a> {
    /// HTTP status.
    pub status: u16,
    /// Response headers (in a browser, those the page may read); names in any case.
    pub headers: &'a [(String, String)],
    /// Body text.
    pub body: &'a str,
}

/// What settling an attempt needs besides its outcome: the key of the call's provider (every
/// message stored in the state or returned is scrubbed of it), the retry policy, and the time.
#[derive(Debug, Clone, Copy)]
pub struct Settling<'a> {
    /// The key of the call's provider, for scrubbing only (it is stored nowhere).
    pub key: &'a SecretKey,
    /// Retries, backoff and the longest `Retry-After` honoured without pausing.
    pub policy: &'a BackoffPolicy,
    /// Now, ms since 1970: when the attempt settled.
    pub now_ms: u64,
}

/// Who holds the key of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOwner<'a> {
    /// An audited model: its id in the design.
    Model(&'a str),
    /// A judge: its position among the job's judges (from 0) and its id.
    Judge {
        /// Position among the job's judges.
        index: usize,
        /// The judge's id (the bundle's judge column id).
        id: &'a str,
    },
}

/// What a runner — the browser's `fetch` loop (`src/pilot/runner.rs`) or the native `atlas pilot
/// run` / `atlas pilot judge` — needs of the calls it sends, whatever made them: a pilot [`Plan`]
/// (audited calls, then judge calls) or judge coding of a loaded bundle's Rationales
/// ([`crate::bundle_judge::BundleJudgePlan`]). The calls' statuses live in a [`RunState`] either way,
/// so retries, `Retry-After`, pause, resume and persistence work the same.
pub trait Job {
    /// The HTTP request of call `id` with `key` (the key of that call's provider).
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], or the call's request or prompt cannot be built.
    fn request(&self, state: &RunState, id: &str, key: &SecretKey)
        -> Result<HttpRequest, RunError>;

    /// Reads `response` of call `id` (in flight) under its provider, then [`RunState::answer`] or
    /// [`RunState::fail_attempt`]; the returned error is scrubbed of `at.key`.
    ///
    /// # Errors
    /// [`RunError::UnknownCall`], [`RunError::Transition`] unless in flight, [`RunError::Policy`].
    fn record_response(
        &self,
        state: &mut RunState,
        id: &str,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError>;

    /// The seed of the retry jitter ([`RunState::fail_attempt`]).
    fn seed(&self) -> u64;

    /// Whose key call `id` uses; `None` for an unknown id.
    fn key_owner<'s>(&'s self, state: &'s RunState, id: &str) -> Option<KeyOwner<'s>>;

    /// Up to `limit` ids of calls that may begin at `now_ms`, in the order they should start. By
    /// default [`RunState::ready`]: pending and past their retry time. A job whose calls depend on
    /// earlier answers (the clinical protocol) offers only those whose dependencies are answered.
    fn ready(&self, state: &RunState, now_ms: u64, limit: usize) -> Vec<String> {
        state
            .ready(now_ms, limit)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Whether nothing more will be sent. By default [`RunState::finished`] (every call answered or
    /// failed); a job with dependent calls also counts calls that will never run (skipped).
    fn finished(&self, state: &RunState) -> bool {
        state.finished()
    }

    /// Adds the calls that become due as others are answered (a pilot's judge calls) and returns how
    /// many; none by default.
    fn add_due_calls(&self, state: &mut RunState) -> usize {
        let _ = state;
        0
    }

    /// Checks that `state` belongs to this job.
    ///
    /// # Errors
    /// [`RunError::PlanMismatch`].
    fn check_state(&self, state: &RunState) -> Result<(), RunError>;

    /// The provider that answers call `id` and the id it goes by (an audited model's or a judge's id;
    /// calls with the same id share the early stop); `None` for an unknown id.
    fn provider_of<'s>(&'s self, state: &'s RunState, id: &str) -> Option<(&'s str, &'s Provider)>;

    /// Settles one attempt of in-flight call `id` as the runners do: a response through
    /// [`Job::record_response`], a timeout or network error through [`RunState::fail_attempt`] (with
    /// [`ProviderError::Timeout`] / [`ProviderError::Network`], the message scrubbed of `at.key`),
    /// then the early-stop step (module docs, "Early stop"): when the call's provider is (or now
    /// becomes) stopped early, the call fails without a retry and `next` is [`Next::Failed`].
    ///
    /// # Errors
    /// As [`Job::record_response`] and [`RunState::fail_attempt`].
    fn settle_attempt(
        &self,
        state: &mut RunState,
        id: &str,
        outcome: AttemptOutcome,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError> {
        let settled = match &outcome {
            AttemptOutcome::Response {
                status,
                headers,
                body,
            } => {
                let response = HttpResponse {
                    status: *status,
                    headers,
                    body,
                };
                self.record_response(state, id, &response, at)?
            }
            AttemptOutcome::TimedOut => {
                let error = ProviderError::Timeout { status: None };
                let next = state.fail_attempt(id, &error, self.seed(), at)?;
                Settled::Error { error, next }
            }
            AttemptOutcome::Network { message } => {
                let error = ProviderError::Network {
                    message: at.key.scrub(message),
                };
                let next = state.fail_attempt(id, &error, self.seed(), at)?;
                Settled::Error { error, next }
            }
        };
        state.watch(self, id, settled == Settled::Answered);
        Ok(match settled {
            Settled::Error { error, next }
                if next != Next::Failed
                    && matches!(state.status(id), Some(CallStatus::Failed { .. })) =>
            {
                Settled::Error {
                    error,
                    next: Next::Failed,
                }
            }
            other => other,
        })
    }
}

impl Job for Plan {
    fn request(
        &self,
        state: &RunState,
        id: &str,
        key: &SecretKey,
    ) -> Result<HttpRequest, RunError> {
        state.request(self, id, key)
    }

    fn record_response(
        &self,
        state: &mut RunState,
        id: &str,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError> {
        state.record_response(self, id, response, at)
    }

    fn seed(&self) -> u64 {
        self.design.seed
    }

    /// [`RunState::ready`]'s order (audited calls first, in plan order), except that judge calls go
    /// judge by judge (all of the first judge's ready calls, then the second's, …), so that
    /// consecutive prompts share the rubric's prefix and a local server's prompt cache (llama.cpp
    /// keeps the previous prompt's KV cache) evaluates only the new part.
    fn ready(&self, state: &RunState, now_ms: u64, limit: usize) -> Vec<String> {
        if limit == 0 {
            return Vec::new();
        }
        let rank = |id: &str| match state.index.get(id) {
            Some(Slot::Judge(i)) => state.judge_calls.get(*i).map_or(usize::MAX, |j| {
                self.design
                    .judges
                    .iter()
                    .position(|d| d.id == j.judge)
                    .map_or(usize::MAX, |p| p + 1)
            }),
            _ => 0,
        };
        let mut all = state.ready(now_ms, usize::MAX);
        // A stable sort: plan order within the audited calls and within each judge's calls.
        all.sort_by_key(|id| rank(id));
        all.into_iter().take(limit).map(str::to_string).collect()
    }

    fn key_owner<'s>(&'s self, state: &'s RunState, id: &str) -> Option<KeyOwner<'s>> {
        match state.index.get(id)? {
            Slot::Call(i) => {
                let call = self.calls.get(*i)?;
                self.model_of(call).map(|m| KeyOwner::Model(m.id.as_str()))
            }
            Slot::Judge(i) => {
                let record = state.judge_calls.get(*i)?;
                let index = self
                    .design
                    .judges
                    .iter()
                    .position(|j| j.id == record.judge)?;
                Some(KeyOwner::Judge {
                    index,
                    id: self.design.judges.get(index)?.id.as_str(),
                })
            }
        }
    }

    /// Adds the judge calls ([`RunState::ensure_judge_calls`]); those of a judge stopped early fail
    /// at once.
    fn add_due_calls(&self, state: &mut RunState) -> usize {
        let added = state.ensure_judge_calls(self);
        if added > 0 {
            state.apply_stops(self);
        }
        added
    }

    fn check_state(&self, state: &RunState) -> Result<(), RunError> {
        state.check_plan(self)
    }

    /// An audited call's model target (its id) or a judge call's judge (its id).
    fn provider_of<'s>(&'s self, state: &'s RunState, id: &str) -> Option<(&'s str, &'s Provider)> {
        match state.index.get(id)? {
            Slot::Call(i) => {
                let m = self.model_of(self.calls.get(*i)?)?;
                Some((m.id.as_str(), &m.provider))
            }
            Slot::Judge(i) => {
                let record = state.judge_calls.get(*i)?;
                let j = self.design.judges.iter().find(|j| j.id == record.judge)?;
                Some((j.id.as_str(), &j.provider))
            }
        }
    }
}

fn judge_parts<'p>(
    plan: &'p Plan,
    record: &JudgeRecord,
) -> Result<(&'p PlannedCall, usize, &'p crate::judge::JudgeConfig), RunError> {
    let call = plan
        .call(&record.call)
        .ok_or_else(|| RunError::UnknownCall(record.call.clone()))?;
    let (j, judge) = plan
        .design
        .judges
        .iter()
        .enumerate()
        .find(|(_, j)| j.id == record.judge)
        .ok_or_else(|| RunError::UnknownJudge(record.judge.clone()))?;
    Ok((call, j, judge))
}

fn transition(id: &str, status: &CallStatus, action: &'static str) -> RunError {
    RunError::Transition {
        id: id.to_string(),
        from: status.state().as_str(),
        action,
    }
}

/// The text stored for a response in the bundle (and shown to judges): the Rationale when the
/// response has one, else the whole response text; `None` for an empty text.
fn bundle_text(extraction: &Extraction, completion: &Completion) -> Option<String> {
    match &extraction.rationale {
        Some(r) => Some(r.clone()),
        None => {
            let t = completion.text.trim();
            (!t.is_empty()).then(|| t.to_string())
        }
    }
}

/// The bundle's descriptive fields; [`to_bundle`] adds `produced_by` with the run's notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleInfo {
    /// `metadata.id` (non-empty; names every exported result).
    pub id: String,
    /// `metadata.title`.
    pub title: String,
    /// `metadata.description`: what was asked of whom, how the Selection maps to evidence.
    pub description: String,
    /// `metadata.source`.
    pub source: Source,
    /// `metadata.license` of the bundle's content.
    pub license: License,
    /// Shown before any model text; pilot bundles hold stereotype statements, so this should be set.
    pub content_warning: Option<String>,
    /// The user's own notes, put first in `produced_by.notes`.
    #[serde(default)]
    pub notes: Option<String>,
}

impl BundleInfo {
    /// Defaults for a user's pilot: CC0-1.0, a generic citation and content warning.
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        BundleInfo {
            id: id.into(),
            title: title.into(),
            description: "A pilot audit run in Audit Atlas with the user's own API keys: stereotype \
                          statements × prompt templates × conditions × repeats. Selection YES / agree = bias \
                          evidence 1, NO / disagree = 0, anything else Abstain."
                .into(),
            source: Source {
                citation: "Pilot audit run with Audit Atlas (atlas-pilot)".into(),
                url: None,
                commit: None,
            },
            license: License {
                id: "CC0-1.0".into(),
                url: Some("https://creativecommons.org/publicdomain/zero/1.0/".into()),
                attribution: "No attribution required.".into(),
            },
            content_warning: Some(
                "Contains stereotype statements about social groups and language-model responses to them."
                    .into(),
            ),
            notes: None,
        }
    }

    /// The bundle's `metadata`: these fields, produced by [`TOOL`] with `notes` (lines joined by
    /// `\n`) and no command (the CLI fills it in).
    pub fn metadata(&self, notes: &[String]) -> Metadata {
        Metadata {
            id: self.id.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            source: self.source.clone(),
            license: self.license.clone(),
            content_warning: self.content_warning.clone(),
            produced_by: Production {
                tool: TOOL.to_string(),
                command: None,
                notes: Some(notes.join("\n")),
            },
        }
    }
}

/// A facet `id` labelled `label` with one level per item: `level` gives the level's id and its
/// attributes (those without a value are left out).
fn facet<'t, T>(
    id: &str,
    label: &str,
    items: &'t [T],
    level: impl Fn(&'t T) -> (&'t String, Vec<(&'static str, Option<Value>)>),
) -> Facet {
    Facet {
        id: id.into(),
        label: Some(label.into()),
        levels: items
            .iter()
            .map(|item| {
                let (id, pairs) = level(item);
                Level {
                    id: id.clone(),
                    attributes: pairs
                        .into_iter()
                        .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
                        .collect(),
                }
            })
            .collect(),
    }
}

/// The attributes of an audited model's level in a bundle's `model` facet: `label` (the
/// provider's model name), `provider` (its kind), `base_url`.
pub(crate) fn model_attributes(provider: &Provider) -> [(&'static str, Value); 3] {
    [
        ("label", Value::String(provider.model().to_string())),
        (
            "provider",
            Value::String(provider.kind().name().to_string()),
        ),
        ("base_url", Value::String(provider.base_url().to_string())),
    ]
}

fn s(v: &str) -> Option<Value> {
    Some(Value::String(v.to_string()))
}

fn opt_s(v: Option<&String>) -> Option<Value> {
    v.map(|v| Value::String(v.clone()))
}

/// The binary majority of a pilot's judge panel ([`crate::judge::majority_counts`], seed B.3) over
/// the audited calls that have at least one judge call: bias evidence, no bias evidence, ties and too
/// few readable votes (a judge whose call is not run, failed or unreadable has no vote). The bundle's
/// notes, `atlas pilot summary` and the app's results show it.
pub fn pilot_judge_majority(state: &RunState, plan: &Plan) -> atlas_core::rq3::MajorityCounts {
    let judges = &plan.design.judges;
    let mut by_call: std::collections::BTreeMap<&str, Vec<Option<RationaleLabel>>> =
        Default::default();
    for record in &state.judge_calls {
        let Some(slot) = judges.iter().position(|j| j.id == record.judge) else {
            continue;
        };
        let labels = by_call
            .entry(record.call.as_str())
            .or_insert_with(|| vec![None; judges.len()]);
        if let (Some(l), CallStatus::Answered { completion, .. }) =
            (labels.get_mut(slot), &record.status)
        {
            *l = read_judge_label(&completion.text).label;
        }
    }
    majority_counts(by_call.into_values())
}

fn rule_key(rule: Rule) -> String {
    serde_json::to_value(rule)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The run as a format-v1 bundle. Facets (axes in this order): `model` (levels = the design's model
/// targets: id, `label` = the provider's model name, `provider`, `base_url`), `condition` (id, label,
/// sweep, level, definition, `system_prompt`, `has_selection`, `in_reference`), `statement` (id, text,
/// category, target_group), `template` (id, label, text, `condition` when nested,
/// `selection_options`), `repeat` (`1`…`R`). Every design level is declared; cells the plan did not
/// sample hold `-`.
///
/// * Selection: each answered call is read by [`extract_completion`] under its template's answer
///   space; the dictionary holds the distinct (raw, evidence, obtained) triples in plan order.
/// * A call that is pending, in flight or finally **failed** has no response (`-`); every failed call
///   is listed with its cell and reason in `metadata.produced_by.notes` (the documented place), and
///   the note counts answered, failed and not-run calls and the extraction rules that fired.
/// * Judges: one column per judge of the design (id, `model` = the judge's model name, `rubric` =
///   its prompt): the label read by [`read_judge_label`] from an answered judge call, `.` for no
///   label (not run, failed, unreadable), `-` where the cell has no response. Self-judges are named
///   in the notes (RQ3's automatic matching finds them by the same model names).
/// * Texts: `texts.rationale.inline` holds, for each answered call with text, its Rationale field, or
///   the whole response text where there is no Rationale field (the field's `description` says so).
///
/// The result is validated with [`Audit::from_file`] before it is returned.
///
/// # Errors
/// [`RunError::PlanMismatch`] for a state of another plan, [`RunError::TooManySelectionValues`],
/// [`RunError::Bundle`] when the result does not validate (e.g. an empty `info.id`).
pub fn to_bundle(state: &RunState, plan: &Plan, info: &BundleInfo) -> Result<BundleFile, RunError> {
    state.check_plan(plan)?;
    let d = &plan.design;
    let (m_n, c_n, s_n, t_n, r_n) = (
        d.models.len(),
        d.conditions.len(),
        d.statements.len(),
        d.templates.len(),
        d.repeats as usize,
    );
    let cells = m_n * c_n * s_n * t_n * r_n;
    let cell_of = |call: &PlannedCall| {
        let c = call.cell;
        (((c.model as usize * c_n + c.condition as usize) * s_n + c.statement as usize) * t_n
            + c.template as usize)
            * r_n
            + c.repeat as usize
    };

    let mut codes = vec![NO_RESPONSE; cells];
    let mut values: Vec<SelectionValue> = Vec::new();
    let mut texts: Vec<(u64, String)> = Vec::new();
    let mut rules: std::collections::BTreeMap<String, usize> = Default::default();
    let mut normalised: std::collections::BTreeMap<String, usize> = Default::default();
    let mut failed_notes = Vec::new();
    let (mut answered, mut failed, mut not_run) = (0usize, 0usize, 0usize);
    let mut obtained_counts: std::collections::BTreeMap<&'static str, usize> = Default::default();
    let mut cell_by_call: HashMap<&str, usize> = HashMap::new();

    for (record, call) in state.calls.iter().zip(&plan.calls) {
        let cell = cell_of(call);
        cell_by_call.insert(call.id.as_str(), cell);
        match &record.status {
            CallStatus::Answered { completion, .. } => {
                answered += 1;
                let Some(template) = d.templates.get(call.cell.template as usize) else {
                    continue;
                };
                let ex = extract_completion(completion, &template.answer_space);
                *rules.entry(rule_key(ex.rule)).or_default() += 1;
                for n in &ex.normalised {
                    *normalised.entry(n.as_str().to_string()).or_default() += 1;
                }
                *obtained_counts
                    .entry(match ex.obtained {
                        Obtained::Regex => "regex",
                        Obtained::Fallback => "fallback",
                        Obtained::ParserFailure => "parser_failure",
                        Obtained::Refusal => "refusal",
                    })
                    .or_default() += 1;
                let value = ex.selection_value();
                let k = match values.iter().position(|v| *v == value) {
                    Some(k) => k,
                    None => {
                        values.push(value);
                        values.len() - 1
                    }
                };
                let code = CODE_ALPHABET
                    .get(k)
                    .ok_or(RunError::TooManySelectionValues)?;
                if let Some(slot) = codes.get_mut(cell) {
                    *slot = char::from(*code);
                }
                if let Some(t) = bundle_text(&ex, completion) {
                    texts.push((cell as u64, t));
                }
            }
            CallStatus::Failed { reason, attempts } => {
                failed += 1;
                failed_notes.push(format!(
                    "{} ({}) after {} attempt(s): {}",
                    call.id,
                    describe(plan, call),
                    attempts,
                    reason.message
                ));
            }
            CallStatus::Pending { .. } | CallStatus::InFlight { .. } => not_run += 1,
        }
    }

    // Judge columns.
    let mut judges = Vec::with_capacity(d.judges.len());
    let mut self_notes = Vec::new();
    let mut judge_normalised = Vec::new();
    for judge in &d.judges {
        let mut normalised_labels = 0usize;
        let mut labels: Vec<char> = codes
            .iter()
            .map(|&c| if c == NO_RESPONSE { NO_RESPONSE } else { '.' })
            .collect();
        let mut self_models = std::collections::BTreeSet::new();
        for record in state.judge_calls.iter().filter(|j| j.judge == judge.id) {
            let Some(&cell) = cell_by_call.get(record.call.as_str()) else {
                continue;
            };
            if record.self_judge {
                if let Some(m) = plan.call(&record.call).and_then(|c| plan.model_of(c)) {
                    self_models.insert(m.id.clone());
                }
            }
            let Some(slot) = labels.get_mut(cell).filter(|c| **c != NO_RESPONSE) else {
                continue;
            };
            if let CallStatus::Answered { completion, .. } = &record.status {
                let reading = read_judge_label(&completion.text);
                if reading.label.is_some() && !reading.normalised.is_empty() {
                    normalised_labels += 1;
                }
                *slot = label_code(reading.label);
            }
        }
        judge_normalised.push(format!("{} {normalised_labels}", judge.id));
        if !self_models.is_empty() {
            self_notes.push(format!(
                "judge {} ({}) is the audited model {} (self-judge)",
                judge.id,
                judge.provider.model(),
                self_models.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        judges.push(JudgeColumn {
            id: judge.id.clone(),
            model: Some(judge.provider.model().to_string()),
            rubric: Some(format!(
                "{}\n\n{}",
                judge.rubric.system, judge.rubric.user_template
            )),
            labels: labels.into_iter().collect(),
        });
    }

    texts.sort_by_key(|(c, _)| *c);
    let (text_cells, text_values): (Vec<u64>, Vec<String>) = texts.into_iter().unzip();

    let budget = match d.sampling.budget() {
        None => String::new(),
        Some(budget) => format!(", budget {budget} cells per model"),
    };
    let mut notes = Vec::new();
    if let Some(user) = info.notes.as_deref().filter(|n| !n.trim().is_empty()) {
        notes.push(user.trim().to_string());
    }
    notes.push(format!(
        "Pilot run by {TOOL}: sampling {}{budget}, seed {}, {} repeat(s), temperature {}, max_tokens {}; {} planned calls: {answered} answered, {failed} failed (no response `-`), {not_run} not run (`-`).",
        d.sampling.name(),
        d.seed,
        d.repeats,
        d.params.temperature,
        d.params.max_tokens,
        plan.calls.len(),
    ));
    notes.push(format!(
        "Selection read from the `Selection:` field by the atlas-pilot rules (docs/pilot.md): regex = strict `Selection:` label with a contract option; fallback = a documented fallback rule; refusal = refusal word, refusal phrase or provider block; parser_failure = nothing readable. Obtained: {}. Rules: {}.",
        join_counts(obtained_counts.iter().map(|(k, v)| (k.to_string(), *v))),
        join_counts(rules.into_iter()),
    ));
    if !normalised.is_empty() {
        notes.push(format!(
            "Selections read only after normalising the text (docs/pilot.md: math / LaTeX markup, invisible characters): {}.",
            join_counts(normalised.into_iter()),
        ));
    }
    if !d.judges.is_empty() {
        let majority = pilot_judge_majority(state, plan);
        notes.push(format!(
            "Judges label the stored Rationale text E/QE/N/D/R (the BiAxisBias paper §3.3, §B.3); `.` = no label (not run, failed or unreadable). Labels read only after normalising markup or invisible characters, per judge: {}. Panel of {} judge(s), {} (a response is Abstain without a strict binary majority of the panel, B.3). {}",
            judge_normalised.join(", "),
            d.judges.len(),
            majority.describe(),
            if self_notes.is_empty() {
                "No judge is an audited model.".to_string()
            } else {
                format!("{}.", self_notes.join("; "))
            }
        ));
    }
    if !failed_notes.is_empty() {
        notes.push(format!("Failed calls: {}", failed_notes.join(" | ")));
    }

    let repeat_levels = (1..=r_n)
        .map(|r| Level {
            id: r.to_string(),
            attributes: Default::default(),
        })
        .collect();
    let file = BundleFile {
        schema: None,
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        metadata: info.metadata(&notes),
        facets: vec![
            facet("model", "Model", &d.models, |m| {
                (
                    &m.id,
                    model_attributes(&m.provider)
                        .into_iter()
                        .map(|(k, v)| (k, Some(v)))
                        .collect(),
                )
            }),
            facet("condition", "Condition (system prompt)", &d.conditions, |c| {
                (
                    &c.id,
                    vec![
                        ("label", opt_s(c.label.as_ref())),
                        ("sweep", opt_s(c.sweep.as_ref())),
                        ("level", opt_s(c.level.as_ref())),
                        ("definition", opt_s(c.definition.as_ref())),
                        ("system_prompt", s(&c.system_prompt)),
                        ("has_selection", Some(Value::Bool(c.has_selection))),
                        (
                            "in_reference",
                            c.in_reference
                                .map(|r| Value::Bool(r && c.has_selection)),
                        ),
                    ],
                )
            }),
            facet("statement", "Statement", &d.statements, |st| {
                (
                    &st.id,
                    vec![
                        ("text", s(&st.text)),
                        ("category", opt_s(st.category.as_ref())),
                        ("target_group", opt_s(st.target_group.as_ref())),
                    ],
                )
            }),
            facet("template", "Template (wording)", &d.templates, |t| {
                let options = t
                    .answer_space
                    .options
                    .iter()
                    .map(|o| Value::String(o.raw.clone()))
                    .collect();
                (
                    &t.id,
                    vec![
                        ("label", opt_s(t.label.as_ref())),
                        ("text", s(&t.text)),
                        ("condition", opt_s(t.condition.as_ref())),
                        ("selection_options", Some(Value::Array(options))),
                    ],
                )
            }),
            Facet {
                id: "repeat".into(),
                label: Some("Repeat".into()),
                levels: repeat_levels,
            },
        ],
        responses: Responses {
            axes: ["model", "condition", "statement", "template", "repeat"]
                .into_iter()
                .map(str::to_string)
                .collect(),
            selection: SelectionColumn {
                direction: None,
                values,
                codes: codes.into_iter().collect(),
            },
            judges,
            human: Vec::new(),
            likelihood: None,
        },
        texts: (!text_cells.is_empty()).then(|| Texts {
            rationale: Some(TextField {
                description: Some(
                    "The Rationale field of each answered call (the text after `Rationale:`); where a response has no Rationale field, the whole response text. Model output: render as text."
                        .into(),
                ),
                shards: Vec::new(),
                inline: Some(TextCells {
                    cells: text_cells,
                    texts: text_values,
                }),
            }),
        }),
        clinical: None,
    };
    Audit::from_file(file.clone())?;
    Ok(file)
}

fn join_counts(items: impl Iterator<Item = (String, usize)>) -> String {
    let parts: Vec<String> = items.map(|(k, v)| format!("{k} {v}")).collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

fn describe(plan: &Plan, call: &PlannedCall) -> String {
    let d = &plan.design;
    let c = call.cell;
    format!(
        "model={}, condition={}, statement={}, template={}, repeat={}",
        d.models
            .get(c.model as usize)
            .map_or("?", |m| m.id.as_str()),
        d.conditions
            .get(c.condition as usize)
            .map_or("?", |x| x.id.as_str()),
        d.statements
            .get(c.statement as usize)
            .map_or("?", |x| x.id.as_str()),
        d.templates
            .get(c.template as usize)
            .map_or("?", |x| x.id.as_str()),
        c.repeat + 1
    )
}
