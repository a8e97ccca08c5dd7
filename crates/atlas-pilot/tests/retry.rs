//! The backoff schedule: exponential ceilings, full jitter within them, determinism for a seed and a
//! call, Retry-After winning when longer, and the give-up rules.

use atlas_pilot::provider::{ProviderError, RetryAfter};
use atlas_pilot::retry::{
    decide, delay_ms, jitter_schedule, BackoffPolicy, GiveUpReason, PolicyError, RetryDecision,
};

fn policy() -> BackoffPolicy {
    BackoffPolicy {
        base_ms: 1_000,
        cap_ms: 60_000,
        max_attempts: 8,
        max_wait_ms: 120_000,
    }
}

fn rate_limited(retry_after: Option<RetryAfter>) -> ProviderError {
    ProviderError::RateLimited {
        status: 429,
        message: "slow down".into(),
        retry_after,
    }
}

#[test]
fn ceilings_double_from_the_base_and_stop_at_the_cap() {
    let p = policy();
    let ceilings: Vec<u64> = (0..8).map(|k| p.ceiling_ms(k)).collect();
    assert_eq!(
        ceilings,
        [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]
    );
    assert_eq!(p.ceiling_ms(63), 60_000);
    assert_eq!(p.ceiling_ms(500), 60_000);
}

#[test]
fn the_schedule_is_the_same_for_the_same_seed_and_call_and_stays_within_each_ceiling() {
    let p = policy();
    let a = jitter_schedule(&p, 20_260_722, 3).unwrap();
    assert_eq!(a, jitter_schedule(&p, 20_260_722, 3).unwrap());
    assert_eq!(a.len(), 7);
    for (k, d) in a.iter().enumerate() {
        assert!(*d <= p.ceiling_ms(k as u32), "retry {k}: {d}");
    }
    // Another call or seed draws another schedule.
    assert_ne!(a, jitter_schedule(&p, 20_260_722, 4).unwrap());
    assert_ne!(a, jitter_schedule(&p, 1, 3).unwrap());
    // delay_ms replays the same draws.
    for (k, d) in a.iter().enumerate() {
        assert_eq!(delay_ms(&p, 20_260_722, 3, k as u32, None).unwrap(), *d);
    }
}

#[test]
fn full_jitter_spreads_over_the_whole_range_from_zero_to_the_ceiling() {
    // 4,000 calls' first retries (ceiling 1,000 ms): uniform on 0..=1000 has mean 500 and standard
    // deviation √((1001² − 1)/12) ≈ 289 ms, so a standard error of 289/√4000 ≈ 4.6 ms; the mean is
    // checked within 5 of them (22.8 ms). Both ends of the range are reached within 100 ms.
    let p = policy();
    let first: Vec<u64> = (0..4_000)
        .map(|call| jitter_schedule(&p, 99, call).unwrap()[0])
        .collect();
    let mean = first.iter().sum::<u64>() as f64 / first.len() as f64;
    let sd = ((1001.0f64 * 1001.0 - 1.0) / 12.0).sqrt();
    let tolerance = atlas_core::tolerance::monte_carlo_mean(5.0, sd, first.len());
    assert!((mean - 500.0).abs() < tolerance, "mean {mean}");
    assert!(first.iter().any(|&d| d < 100));
    assert!(first.iter().any(|&d| d > 900));
    assert!(first.iter().all(|&d| d <= 1_000));
}

#[test]
fn retry_after_wins_when_longer_than_the_jitter() {
    let p = policy();
    let jitter = jitter_schedule(&p, 5, 0).unwrap()[0];
    assert_eq!(delay_ms(&p, 5, 0, 0, Some(20_000)).unwrap(), 20_000);
    assert_eq!(delay_ms(&p, 5, 0, 0, Some(0)).unwrap(), jitter);
    let now = 1_000_000_000_000;
    let decision = decide(
        &p,
        5,
        0,
        1,
        &rate_limited(Some(RetryAfter::At {
            unix_ms: now + 30_000,
            date_unix_ms: None,
        })),
        now,
    )
    .unwrap();
    assert_eq!(
        decision,
        RetryDecision::Retry {
            delay_ms: 30_000,
            next_attempt: 2
        }
    );
}

#[test]
fn decide_gives_up_on_errors_that_are_not_retryable_and_when_attempts_run_out_and_pauses_on_too_long_waits(
) {
    let p = policy();
    let unauthorized = ProviderError::Client {
        status: 401,
        kind: None,
        message: "bad key".into(),
    };
    assert_eq!(
        decide(&p, 1, 0, 1, &unauthorized, 0).unwrap(),
        RetryDecision::GiveUp {
            reason: GiveUpReason::NotRetryable
        }
    );
    assert_eq!(
        decide(&p, 1, 0, 8, &rate_limited(None), 0).unwrap(),
        RetryDecision::GiveUp {
            reason: GiveUpReason::AttemptsExhausted { attempts: 8 }
        }
    );
    assert_eq!(
        decide(
            &p,
            1,
            0,
            1,
            &rate_limited(Some(RetryAfter::Delay { ms: 3_600_000 })),
            0
        )
        .unwrap(),
        RetryDecision::Pause {
            wait_ms: 3_600_000,
            limit_ms: 120_000,
            next_attempt: 2
        }
    );
    // Attempt 3 failed with a 500: the next wait is retry 2's jitter.
    let server = ProviderError::Server {
        status: 500,
        kind: None,
        message: "oops".into(),
        retry_after: None,
    };
    let expected = jitter_schedule(&p, 1, 0).unwrap()[2];
    assert_eq!(
        decide(&p, 1, 0, 3, &server, 0).unwrap(),
        RetryDecision::Retry {
            delay_ms: expected,
            next_attempt: 4
        }
    );
}

#[test]
fn invalid_policies_are_refused_naming_the_field() {
    let bad = |f: fn(&mut BackoffPolicy)| {
        let mut p = policy();
        f(&mut p);
        p.validate().unwrap_err()
    };
    assert_eq!(bad(|p| p.base_ms = 0), PolicyError::ZeroBase);
    assert_eq!(
        bad(|p| p.cap_ms = 10),
        PolicyError::CapBelowBase {
            base_ms: 1_000,
            cap_ms: 10
        }
    );
    assert_eq!(bad(|p| p.max_attempts = 0), PolicyError::Attempts(0));
    assert!(matches!(
        bad(|p| p.cap_ms = u64::MAX),
        PolicyError::CapTooLarge(_)
    ));
    assert_eq!(BackoffPolicy::default().validate(), Ok(()));
}

#[test]
fn the_longest_server_wait_defaults_to_ten_minutes_and_may_not_exceed_a_day() {
    use atlas_pilot::retry::{server_wait_message, DEFAULT_MAX_WAIT_MS, MAX_MAX_WAIT_MS};
    assert_eq!(BackoffPolicy::default().max_wait_ms, 600_000);
    assert_eq!(DEFAULT_MAX_WAIT_MS, 10 * 60 * 1000);
    let p = BackoffPolicy {
        max_wait_ms: MAX_MAX_WAIT_MS + 1,
        ..BackoffPolicy::default()
    };
    assert_eq!(p.validate(), Err(PolicyError::MaxWait(86_400_001)));
    let zero = BackoffPolicy {
        max_wait_ms: 0,
        ..BackoffPolicy::default()
    };
    // 0: any Retry-After pauses, even one second.
    assert!(matches!(
        decide(
            &zero,
            1,
            0,
            1,
            &rate_limited(Some(RetryAfter::Delay { ms: 1_000 })),
            0
        )
        .unwrap(),
        RetryDecision::Pause { wait_ms: 1_000, .. }
    ));
    // Minutes round up; waits under two minutes are said in seconds.
    assert!(server_wait_message("c1", 1_800_001, 600_000).contains("the server asks 31 min"));
    assert!(server_wait_message("c1", 90_000, 0).contains("the server asks 90 s"));
}
