//! The early stop of a provider whose first calls all fail the same way, the grouping of failures by
//! reason, and the pause on a `Retry-After` longer than the longest wait allowed — through
//! `Job::settle_attempt`, the step both runners (the browser's `fetch` loop and `atlas pilot run`)
//! take after every attempt. The runs are driven by a small loop like theirs: a fake clock, calls
//! taken from `Job::ready` up to the concurrency, answers in the order they were sent.
//!
//! The design is `common::small_design`: 2 models × 2 conditions × 2 statements × 2 wordings ×
//! 2 repeats = 32 calls, 16 per model; the plan alternates model m-a (OpenAI-compatible at
//! 127.0.0.1:8000) and m-b (Anthropic) cell by cell; judges j1 (m-a's endpoint) and j2 (Gemini).

mod common;

use std::collections::{BTreeMap, VecDeque};

use atlas_pilot::provider::{ProviderKind, SecretKey};
use atlas_pilot::retry::BackoffPolicy;
use atlas_pilot::run::{
    AttemptOutcome, CallStatus, FailureKind, FailureReason, Next, Settled, Settling,
    EARLY_STOP_CALLS,
};
use atlas_pilot::{build_plan, Job, Plan, RunState};
use common::{small_design, DUMMY_KEY};

const T0: u64 = 1_700_000_000_000;

fn ok_body(text: &str) -> String {
    serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3}
    })
    .to_string()
}

fn anthropic_ok(text: &str) -> String {
    serde_json::json!({
        "type": "message", "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 3}
    })
    .to_string()
}

fn gemini_ok(text: &str) -> String {
    serde_json::json!({
        "candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}]
    })
    .to_string()
}

/// A successful answer in the shape of the call's provider: a Selection for audited calls, a label
/// for judge calls.
fn answer(plan: &Plan, state: &RunState, id: &str) -> AttemptOutcome {
    let kind = plan.provider_of(state, id).map(|(_, p)| p.kind());
    let text = if id.contains(':') {
        "Label: D"
    } else {
        "Selection: NO\nRationale: A stereotype."
    };
    AttemptOutcome::Response {
        status: 200,
        headers: Vec::new(),
        body: match kind {
            Some(ProviderKind::Anthropic) => anthropic_ok(text),
            Some(ProviderKind::Gemini) => gemini_ok(text),
            _ => ok_body(text),
        },
    }
}

fn refused() -> AttemptOutcome {
    AttemptOutcome::Network {
        message: "io: Connection refused (os error 111)".into(),
    }
}

/// What a run loop saw: attempts sent per provider id, and the `Next` of every failed attempt.
#[derive(Default)]
struct Log {
    attempts: BTreeMap<String, usize>,
    distinct: BTreeMap<String, std::collections::BTreeSet<String>>,
    nexts: Vec<(String, Next)>,
}

/// Runs `plan` like the runners: up to `concurrency` calls in flight, each settled in the order sent
/// (10 ms later on the fake clock) with `respond(provider id, call id, attempt)`; when nothing is
/// ready the clock jumps to the next retry time; judge calls are added once the audited calls are
/// settled. Stops when the job is finished or nothing can start.
fn drive(
    plan: &Plan,
    state: &mut RunState,
    policy: &BackoffPolicy,
    concurrency: usize,
    mut respond: impl FnMut(&Plan, &RunState, &str, &str, u32) -> AttemptOutcome,
) -> Log {
    let key = SecretKey::new(DUMMY_KEY);
    let mut log = Log::default();
    let mut now = T0;
    let mut in_flight: VecDeque<(String, u32)> = VecDeque::new();
    for _ in 0..10_000 {
        if in_flight.is_empty() && state.progress().calls.remaining() == 0 {
            plan.add_due_calls(state);
        }
        let free = concurrency - in_flight.len();
        for id in plan.ready(state, now, free) {
            let attempt = state.begin(&id, now).unwrap();
            let provider = plan.provider_of(state, &id).unwrap().0.to_string();
            *log.attempts.entry(provider.clone()).or_default() += 1;
            log.distinct.entry(provider).or_default().insert(id.clone());
            in_flight.push_back((id, attempt));
        }
        let Some((id, attempt)) = in_flight.pop_front() else {
            match state.next_wake_ms() {
                Some(at) if at > now => {
                    now = at;
                    continue;
                }
                _ => break,
            }
        };
        now += 10;
        let provider = plan.provider_of(state, &id).unwrap().0.to_string();
        let outcome = respond(plan, state, &provider, &id, attempt);
        match plan
            .settle_attempt(
                state,
                &id,
                outcome,
                &Settling {
                    key: &key,
                    policy,
                    now_ms: now,
                },
            )
            .unwrap()
        {
            Settled::Answered => {}
            Settled::Error { next, .. } => log.nexts.push((id, next)),
        }
    }
    log
}

fn calls_of<'a>(plan: &'a Plan, state: &'a RunState, provider: &str) -> Vec<&'a CallStatus> {
    state
        .calls
        .iter()
        .filter(|c| plan.provider_of(state, &c.id).unwrap().0 == provider)
        .map(|c| &c.status)
        .collect()
}

fn failed_reason(status: &CallStatus) -> Option<&FailureReason> {
    match status {
        CallStatus::Failed { reason, .. } => Some(reason),
        _ => None,
    }
}

#[test]
fn three_calls_refused_in_a_row_stop_the_provider_and_the_other_thirteen_are_not_sent() {
    // One attempt per call (max_attempts 1), one call at a time: m-a's calls 1, 2, 3 are refused,
    // the third stops m-a; its other 16 − 3 = 13 calls fail unsent; m-b answers all 16.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let policy = BackoffPolicy {
        max_attempts: 1,
        ..BackoffPolicy::default()
    };
    let log = drive(
        &plan,
        &mut state,
        &policy,
        1,
        |plan, state, provider, id, _| {
            if provider == "m-a" {
                refused()
            } else {
                answer(plan, state, id)
            }
        },
    );
    assert_eq!(log.attempts.get("m-a"), Some(&3));
    let ma = calls_of(&plan, &state, "m-a");
    let kinds: Vec<Option<FailureKind>> = ma
        .iter()
        .map(|s| failed_reason(s).map(|r| r.kind))
        .collect();
    assert_eq!(&kinds[..3], [Some(FailureKind::Network); 3]);
    assert_eq!(&kinds[3..], [Some(FailureKind::StoppedEarly); 13]);
    // m-b is another provider: untouched.
    assert!(calls_of(&plan, &state, "m-b")
        .iter()
        .all(|s| matches!(s, CallStatus::Answered { .. })));
    let stops = state.early_stops();
    assert_eq!(stops.len(), 1);
    let stop = stops[0];
    assert_eq!(
        (stop.provider.as_str(), stop.calls, stop.not_sent),
        ("m-a", EARLY_STOP_CALLS, 13)
    );
    assert_eq!(stop.url, "http://127.0.0.1:8000/v1/chat/completions");
    assert!(
        stop.message
            .contains("first 3 calls all failed the same way")
            && stop.message.contains("network error — connection refused")
            && stop
                .message
                .contains("13 other call(s) to it were not sent")
            && stop.message.contains("Nothing listens at 127.0.0.1:8000")
            && stop.message.contains("--retry-failed"),
        "{}",
        stop.message
    );
    assert!(!stop.message.contains(DUMMY_KEY));
    // The unsent calls say why, naming the provider and the reason.
    let unsent = failed_reason(ma[3]).unwrap();
    assert_eq!(
        unsent.message,
        "not sent: m-a was stopped early after its first 3 calls failed the same way (network error — connection refused)"
    );
    // The judges judge m-b's 16 answers only: 32 judge calls, none of m-a's calls has text.
    assert_eq!(state.judge_calls.len(), 32);
}

#[test]
fn with_retries_and_concurrency_a_dead_provider_gets_a_few_attempts_instead_of_five_per_call() {
    // Default policy (5 attempts) and 2 calls at a time. Without the early stop, the 16 calls of m-a
    // would take 16 × 5 = 80 attempts. With it: the stop comes with the third distinct call's first
    // failure; by then at most the retries of the first two calls that came due and the one other
    // call in flight were sent.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let log = drive(
        &plan,
        &mut state,
        &BackoffPolicy::default(),
        2,
        |plan, state, provider, id, _| {
            if provider == "m-a" {
                refused()
            } else {
                answer(plan, state, id)
            }
        },
    );
    let distinct = log.distinct.get("m-a").map_or(0, |s| s.len());
    let attempts = log.attempts.get("m-a").copied().unwrap_or(0);
    assert!(
        (EARLY_STOP_CALLS..=EARLY_STOP_CALLS + 1).contains(&distinct),
        "{distinct} distinct calls"
    );
    // At most 2 × 4 retries of the two earlier calls, the three calls and the one in flight.
    assert!(attempts <= 12, "{attempts} attempts to m-a");
    let ma = calls_of(&plan, &state, "m-a");
    assert!(ma.iter().all(|s| matches!(s, CallStatus::Failed { .. })));
    let unsent = ma
        .iter()
        .filter(|s| failed_reason(s).is_some_and(|r| r.kind == FailureKind::StoppedEarly))
        .count();
    assert_eq!(unsent, 16 - distinct);
    // Tried calls keep their own reason, noted as not retried.
    let tried: Vec<&FailureReason> = ma
        .iter()
        .filter_map(|s| failed_reason(s))
        .filter(|r| r.kind == FailureKind::Network)
        .collect();
    assert_eq!(tried.len(), distinct);
    assert!(tried
        .iter()
        .all(|r| r.message.contains("Connection refused")));
    assert!(
        tried
            .iter()
            .filter(|r| r.message.contains("(not retried: m-a was stopped early)"))
            .count()
            >= 2
    );
    // Every attempt sent is counted in the state (the one in flight at the stop came back and
    // failed without a retry), and the last settled attempt of m-a's calls was final.
    let counted: u32 = ma
        .iter()
        .map(|s| match s {
            CallStatus::Failed { attempts, .. } => *attempts,
            _ => 0,
        })
        .sum();
    assert_eq!(counted as usize, attempts);
    let last_ma = log.nexts.iter().rev().find(|(id, _)| {
        plan.provider_of(&state, id)
            .is_some_and(|(p, _)| p == "m-a")
    });
    assert!(matches!(last_ma, Some((_, Next::Failed))), "{last_ma:?}");
    assert!(calls_of(&plan, &state, "m-b")
        .iter()
        .all(|s| matches!(s, CallStatus::Answered { .. })));
}

#[test]
fn a_provider_that_answered_once_is_never_stopped_early() {
    // m-a answers its first call, then refuses every other: no early stop; each later call makes
    // its 2 attempts (max_attempts 2) and fails with its own reason.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let first = plan.calls[0].id.clone();
    let policy = BackoffPolicy {
        max_attempts: 2,
        ..BackoffPolicy::default()
    };
    let log = drive(
        &plan,
        &mut state,
        &policy,
        1,
        |plan, state, provider, id, _| {
            if provider == "m-a" && id != first {
                refused()
            } else {
                answer(plan, state, id)
            }
        },
    );
    assert!(state.early_stops().is_empty());
    assert_eq!(log.attempts.get("m-a"), Some(&(1 + 15 * 2)));
    let failed = calls_of(&plan, &state, "m-a")
        .iter()
        .filter(|s| failed_reason(s).is_some_and(|r| r.kind == FailureKind::Network))
        .count();
    assert_eq!(failed, 15);
}

#[test]
fn calls_failing_in_different_ways_restart_the_count_and_rate_limits_and_timeouts_never_count() {
    // m-a: call 1 refused, calls 2–4 get HTTP 401, each once (not retryable). The 401s are three in a
    // row after the refusal, so the stop comes with call 4 and names the 401; 16 − 4 = 12 unsent.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let ids: Vec<String> = plan.calls.iter().map(|c| c.id.clone()).collect();
    let policy = BackoffPolicy {
        max_attempts: 1,
        ..BackoffPolicy::default()
    };
    let unauthorized = || {
        AttemptOutcome::Response {
        status: 401,
        headers: Vec::new(),
        body: r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#
            .into(),
    }
    };
    drive(
        &plan,
        &mut state,
        &policy,
        1,
        |plan, state, provider, id, _| match (provider, ids.iter().position(|x| x == id)) {
            ("m-a", Some(0)) => refused(),
            ("m-a", _) => unauthorized(),
            _ => answer(plan, state, id),
        },
    );
    let stop = state.early_stops()[0].clone();
    assert_eq!(stop.reason.kind, FailureKind::Client);
    assert_eq!(stop.reason.status, Some(401));
    assert_eq!(stop.not_sent, 12);
    assert!(
        stop.message.contains("HTTP 401 — key refused"),
        "{}",
        stop.message
    );
    assert!(stop.message.contains("Check the key."), "{}", stop.message);

    // Rate limits: every m-a call gets 429 (Retry-After: 1) until its 2 attempts are spent: no stop.
    let mut state = RunState::new(&plan);
    let policy = BackoffPolicy {
        max_attempts: 2,
        ..BackoffPolicy::default()
    };
    let log = drive(
        &plan,
        &mut state,
        &policy,
        2,
        |plan, state, provider, id, _| {
            if provider == "m-a" {
                AttemptOutcome::Response {
                    status: 429,
                    headers: vec![("retry-after".into(), "1".into())],
                    body: r#"{"error": {"message": "slow down"}}"#.into(),
                }
            } else {
                answer(plan, state, id)
            }
        },
    );
    assert!(state.early_stops().is_empty());
    assert_eq!(log.attempts.get("m-a"), Some(&32));

    // Timeouts neither: a slow server is not a broken one. Every m-a call times out twice.
    let mut state = RunState::new(&plan);
    let log = drive(
        &plan,
        &mut state,
        &policy,
        2,
        |plan, state, provider, id, _| {
            if provider == "m-a" {
                AttemptOutcome::TimedOut
            } else {
                answer(plan, state, id)
            }
        },
    );
    assert!(state.early_stops().is_empty());
    assert_eq!(log.attempts.get("m-a"), Some(&32));
}

#[test]
fn a_judge_stopped_early_gets_no_more_calls_and_retry_failed_starts_the_watch_again() {
    // The audited models answer; judge j2 (Gemini) answers its first three calls 404 (an unknown
    // model; one attempt each): j2 is stopped, its other judge calls fail unsent; j1 answers all.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let policy = BackoffPolicy {
        max_attempts: 1,
        ..BackoffPolicy::default()
    };
    drive(
        &plan,
        &mut state,
        &policy,
        1,
        |plan, state, provider, id, _| {
            match provider {
            "j2" => AttemptOutcome::Response {
                status: 404,
                headers: Vec::new(),
                body: r#"{"error": {"code": 404, "message": "models/gemini-judge is not found for API version v1beta", "status": "NOT_FOUND"}}"#.into(),
            },
            _ => answer(plan, state, id),
        }
        },
    );
    let j2: Vec<&CallStatus> = state
        .judge_calls
        .iter()
        .filter(|j| j.judge == "j2")
        .map(|j| &j.status)
        .collect();
    assert_eq!(j2.len(), 32);
    let kinds: Vec<Option<FailureKind>> = j2
        .iter()
        .map(|s| failed_reason(s).map(|r| r.kind))
        .collect();
    let count = |kind| kinds.iter().filter(|k| **k == Some(kind)).count();
    assert_eq!(count(FailureKind::Client), 3);
    assert_eq!(count(FailureKind::StoppedEarly), 29);
    assert!(state
        .judge_calls
        .iter()
        .filter(|j| j.judge == "j1")
        .all(|j| matches!(j.status, CallStatus::Answered { .. })));
    let stop = state.early_stops()[0];
    assert!(
        stop.message
            .contains("HTTP 404 — not found (base URL or model)")
            && stop.message.contains("models/gemini-judge is not found")
            && stop.message.contains(
                "Check the base URL (with its version path, e.g. /v1) and the model name."
            ),
        "{}",
        stop.message
    );

    // The stop survives a save and reload.
    let reloaded = RunState::from_json(&state.to_json().unwrap()).unwrap();
    assert_eq!(reloaded.early_stops(), state.early_stops());

    // "Retry failed calls": the 32 j2 calls are pending again, the watch is cleared, and this time
    // j2 answers.
    assert_eq!(state.retry_failed(), 32);
    assert!(state.early_stops().is_empty());
    drive(&plan, &mut state, &policy, 1, |plan, state, _, id, _| {
        answer(plan, state, id)
    });
    assert!(state
        .judge_calls
        .iter()
        .all(|j| matches!(j.status, CallStatus::Answered { .. })));
}

#[test]
fn failures_are_grouped_by_reason_with_the_count_and_the_first_example() {
    // m-a refused (3 tried + 13 unsent, one attempt each); m-b's first two calls get a 400 (not a
    // stopping reason), the rest answer. Groups, largest first: stopped_early 13, network/refused 3,
    // client 400 2.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    // The plan alternates the models: calls 0, 2, 4, … are m-a's, 1, 3, 5, … m-b's.
    let of = |i: usize| plan.provider_of(&state, &plan.calls[i].id).unwrap().0;
    assert_eq!(
        (of(0), of(1), of(2), of(3), of(6)),
        ("m-a", "m-b", "m-a", "m-b", "m-a")
    );
    let mb_first: Vec<String> = [1, 3].iter().map(|&i| plan.calls[i].id.clone()).collect();
    let policy = BackoffPolicy {
        max_attempts: 1,
        ..BackoffPolicy::default()
    };
    drive(
        &plan,
        &mut state,
        &policy,
        1,
        |plan, state, provider, id, _| {
            if provider == "m-a" {
                refused()
            } else if mb_first.iter().any(|x| x == id) {
                AttemptOutcome::Response {
                status: 400,
                headers: Vec::new(),
                body: r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}"#.into(),
            }
            } else {
                answer(plan, state, id)
            }
        },
    );
    let groups = state.failure_groups();
    let summary: Vec<(&str, usize, &str)> = groups
        .iter()
        .map(|g| (g.key.as_str(), g.count, g.first_call.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("stopped_early/-/", 13, plan.calls[6].id.as_str()),
            ("network/-/refused", 3, plan.calls[0].id.as_str()),
            ("client/400/", 2, plan.calls[1].id.as_str()),
        ]
    );
    assert_eq!(groups[1].label, "network error — connection refused");
    assert_eq!(groups[2].label, "HTTP 400 — bad request");
    assert!(groups[2].first_message.contains("prompt is too long"));
    assert_eq!(groups[0].label, "not sent — the provider was stopped early");
}

#[test]
fn a_retry_after_longer_than_the_longest_wait_pauses_measured_against_the_date_header() {
    // The server's clock is 2 hours behind the client's: Date 10:00:00, Retry-After 10:30:00 (an
    // HTTP-date). Against the Date header the wait is 30 min; against the client's clock the moment
    // would be long past (0 s). With a longest wait of 10 min the run pauses, the call pending until
    // the client's now + 30 min.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let policy = BackoffPolicy {
        max_wait_ms: 600_000,
        ..BackoffPolicy::default()
    };
    let id = plan.calls[0].id.clone();
    // 2023-11-14 10:00:00 UTC = 1,699,956,000 s (19,675 days × 86,400 + 10 × 3,600).
    let server_date = "Tue, 14 Nov 2023 10:00:00 GMT";
    let retry_at = "Tue, 14 Nov 2023 10:30:00 GMT";
    let now = 1_699_956_000_000 + 2 * 3_600_000;
    state.begin(&id, now).unwrap();
    let settled = plan
        .settle_attempt(
            &mut state,
            &id,
            AttemptOutcome::Response {
                status: 429,
                headers: vec![
                    ("date".into(), server_date.into()),
                    ("retry-after".into(), retry_at.into()),
                ],
                body: r#"{"error": {"message": "quota"}}"#.into(),
            },
            &Settling {
                key: &SecretKey::new(DUMMY_KEY),
                policy: &policy,
                now_ms: now,
            },
        )
        .unwrap();
    let Settled::Error { next, .. } = settled else {
        panic!("a 429 is an error");
    };
    assert_eq!(
        next,
        Next::Pause {
            not_before_ms: now + 1_800_000,
            wait_ms: 1_800_000,
            limit_ms: 600_000
        }
    );
    assert!(matches!(
        state.status(&id),
        Some(CallStatus::Pending {
            attempts: 1,
            not_before_ms: Some(t),
            ..
        }) if *t == now + 1_800_000
    ));
    let message = atlas_pilot::retry::server_wait_message(&id, 1_800_000, 600_000);
    assert!(message.contains("the server asks 30 min"), "{message}");
    assert!(message.contains("(10 min)"), "{message}");

    // Within the longest wait (an hour allowed): an ordinary retry after the 30 min.
    let mut state = RunState::new(&plan);
    state.begin(&id, now).unwrap();
    let generous = BackoffPolicy {
        max_wait_ms: 3_600_000,
        ..BackoffPolicy::default()
    };
    let settled = plan
        .settle_attempt(
            &mut state,
            &id,
            AttemptOutcome::Response {
                status: 429,
                headers: vec![
                    ("date".into(), server_date.into()),
                    ("retry-after".into(), retry_at.into()),
                ],
                body: "{}".into(),
            },
            &Settling {
                key: &SecretKey::new(DUMMY_KEY),
                policy: &generous,
                now_ms: now,
            },
        )
        .unwrap();
    assert!(matches!(
        settled,
        Settled::Error {
            next: Next::Retry {
                delay_ms: 1_800_000,
                ..
            },
            ..
        }
    ));

    // Without a Date header the same HTTP-date is measured against the client's clock: past, so
    // the wait is the backoff jitter alone (at most the first ceiling, 1 s), no pause.
    let mut state = RunState::new(&plan);
    state.begin(&id, now).unwrap();
    let settled = plan
        .settle_attempt(
            &mut state,
            &id,
            AttemptOutcome::Response {
                status: 429,
                headers: vec![("retry-after".into(), retry_at.into())],
                body: "{}".into(),
            },
            &Settling {
                key: &SecretKey::new(DUMMY_KEY),
                policy: &policy,
                now_ms: now,
            },
        )
        .unwrap();
    assert!(
        matches!(settled, Settled::Error { next: Next::Retry { delay_ms, .. }, .. } if delay_ms <= 1_000),
        "{settled:?}"
    );
}
