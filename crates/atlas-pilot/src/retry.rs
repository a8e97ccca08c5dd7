//! Retries: exponential backoff with **full jitter** from a seeded stream, honouring `Retry-After`.
//!
//! Retry `k` (0 for the first retry, after attempt 1) waits
//!
//! ```text
//! ceiling_k = min(cap_ms, base_ms · 2^k)
//! jitter_k  = uniform integer in 0..=ceiling_k            ("full jitter")
//! delay_k   = max(jitter_k, retry_after_ms)               (Retry-After wins when longer)
//! ```
//!
//! Full jitter is the variant of M. Brooker, "Exponential Backoff And Jitter" (AWS Architecture Blog,
//! 2015, <https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/>): `sleep =
//! random_between(0, min(cap, base · 2^attempt))`. The draws come from
//! [`atlas_core::DrawStream`]`::with_stream(seed, RETRY_STREAM_BASE + call_index)` — ChaCha8 with u32
//! draws, identical natively and in wasm32 — one [`atlas_core::DrawStream::index`]`(ceiling_k + 1)` per
//! retry in order, so a call's schedule depends only on the seed and the call's index in the plan,
//! never on what other calls did. [`decide`] turns an error into "retry after this delay", "give up",
//! or — when the server asks for a wait longer than [`BackoffPolicy::max_wait_ms`] — "pause the run":
//! the call keeps the server's wait and the runner stops starting calls until the user resumes
//! ([`RetryDecision::Pause`], [`server_wait_message`]).

use atlas_core::DrawStream;
use serde::{Deserialize, Serialize};

use crate::provider::ProviderError;

/// Stream id offset of the retry draws: call `i` reads stream `RETRY_STREAM_BASE + i` (far from the
/// design streams of [`atlas_core::rq2::Design`], which the plan's sampling uses).
pub const RETRY_STREAM_BASE: u64 = 1 << 40;

/// Largest `cap_ms` (the draw `0..=ceiling` must fit a u32 range): about 49.7 days.
pub const MAX_CAP_MS: u64 = u32::MAX as u64 - 1;

/// Most attempts a policy may allow.
pub const MAX_ATTEMPTS: u32 = 20;

/// Backoff settings. Durations in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackoffPolicy {
    /// Ceiling of the first retry's jitter (`base_ms · 2^0`), at least 1.
    pub base_ms: u64,
    /// Largest ceiling, `base_ms ≤ cap_ms ≤` [`MAX_CAP_MS`].
    pub cap_ms: u64,
    /// Attempts in all, the first included (1 = never retry), at most [`MAX_ATTEMPTS`].
    pub max_attempts: u32,
    /// The longest `Retry-After` honoured without asking: a longer one pauses the run
    /// ([`RetryDecision::Pause`]) instead of waiting unattended. The app's "longest server wait" field
    /// and `atlas pilot run --max-retry-after-s`; default [`DEFAULT_MAX_WAIT_MS`] (10 minutes).
    pub max_wait_ms: u64,
}

/// The default [`BackoffPolicy::max_wait_ms`]: 10 minutes.
pub const DEFAULT_MAX_WAIT_MS: u64 = 600_000;

/// The largest [`BackoffPolicy::max_wait_ms`] a form or flag accepts: 24 hours.
pub const MAX_MAX_WAIT_MS: u64 = 86_400_000;

impl Default for BackoffPolicy {
    /// 1 s base, 60 s cap, 5 attempts, waits up to 10 minutes.
    fn default() -> Self {
        BackoffPolicy {
            base_ms: 1_000,
            cap_ms: 60_000,
            max_attempts: 5,
            max_wait_ms: DEFAULT_MAX_WAIT_MS,
        }
    }
}

/// An invalid [`BackoffPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("backoff base_ms must be at least 1 ms")]
    /// `base_ms` is 0.
    ZeroBase,
    #[error("backoff cap_ms {cap_ms} is below base_ms {base_ms}")]
    /// `cap_ms` is below `base_ms`.
    CapBelowBase {
        /// First backoff delay (ms).
        base_ms: u64,
        /// Largest backoff delay (ms).
        cap_ms: u64,
    },
    #[error("backoff cap_ms {0} is above the largest supported cap, {MAX_CAP_MS} ms")]
    /// `cap_ms` is above [`MAX_CAP_MS`].
    CapTooLarge(u64),
    #[error("max_attempts {0} is outside 1..={MAX_ATTEMPTS}")]
    /// `max_attempts` outside 1..=[`MAX_ATTEMPTS`].
    Attempts(u32),
    #[error("the longest server wait, {0} ms, is above 24 hours ({MAX_MAX_WAIT_MS} ms)")]
    /// `max_wait_ms` above [`MAX_MAX_WAIT_MS`].
    MaxWait(u64),
}

impl BackoffPolicy {
    /// Checks the bounds documented on the fields.
    ///
    /// # Errors
    /// [`PolicyError`] naming the bad field.
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.base_ms == 0 {
            return Err(PolicyError::ZeroBase);
        }
        if self.cap_ms < self.base_ms {
            return Err(PolicyError::CapBelowBase {
                base_ms: self.base_ms,
                cap_ms: self.cap_ms,
            });
        }
        if self.cap_ms > MAX_CAP_MS {
            return Err(PolicyError::CapTooLarge(self.cap_ms));
        }
        if self.max_attempts == 0 || self.max_attempts > MAX_ATTEMPTS {
            return Err(PolicyError::Attempts(self.max_attempts));
        }
        if self.max_wait_ms > MAX_MAX_WAIT_MS {
            return Err(PolicyError::MaxWait(self.max_wait_ms));
        }
        Ok(())
    }

    /// `ceiling_k = min(cap_ms, base_ms · 2^k)` (saturating), in ms.
    pub fn ceiling_ms(&self, retry: u32) -> u64 {
        let factor = 1u64.checked_shl(retry).unwrap_or(u64::MAX);
        self.base_ms.saturating_mul(factor).min(self.cap_ms)
    }
}

/// The jitter of every retry of call `call_index`: `max_attempts − 1` values, entry `k` uniform in
/// `0..=ceiling_ms(k)` (module docs). Deterministic for a seed and call index.
///
/// # Errors
/// [`PolicyError`] when the policy is invalid.
pub fn jitter_schedule(
    policy: &BackoffPolicy,
    seed: u64,
    call_index: u64,
) -> Result<Vec<u64>, PolicyError> {
    policy.validate()?;
    let mut stream = DrawStream::with_stream(seed, RETRY_STREAM_BASE.wrapping_add(call_index));
    Ok((0..policy.max_attempts.saturating_sub(1))
        .map(|k| draw_upto(&mut stream, policy.ceiling_ms(k)))
        .collect())
}

/// A uniform draw from `0..=ceiling` (`ceiling ≤ MAX_CAP_MS`, checked by `validate`).
fn draw_upto(stream: &mut DrawStream, ceiling: u64) -> u64 {
    let n = u32::try_from(ceiling.saturating_add(1)).unwrap_or(u32::MAX);
    stream.index(n).map_or(0, u64::from)
}

/// The delay before retry `retry` of call `call_index`: `max(jitter_k, retry_after_ms)` (module docs).
///
/// # Errors
/// [`PolicyError`] when the policy is invalid.
pub fn delay_ms(
    policy: &BackoffPolicy,
    seed: u64,
    call_index: u64,
    retry: u32,
    retry_after_ms: Option<u64>,
) -> Result<u64, PolicyError> {
    policy.validate()?;
    let mut stream = DrawStream::with_stream(seed, RETRY_STREAM_BASE.wrapping_add(call_index));
    let mut jitter = 0;
    for k in 0..=retry {
        jitter = draw_upto(&mut stream, policy.ceiling_ms(k));
    }
    Ok(jitter.max(retry_after_ms.unwrap_or(0)))
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum RetryDecision {
    /// Wait `delay_ms`, then make attempt number `next_attempt` (counting from 1).
    Retry {
        /// Milliseconds to wait.
        delay_ms: u64,
        /// The number of the next attempt, counting from 1.
        next_attempt: u32,
    },
    /// Stop: the call has finally failed.
    GiveUp {
        /// Why.
        reason: GiveUpReason,
    },
    /// The server asked to wait `wait_ms`, more than the policy's `max_wait_ms`: the call waits as
    /// asked (attempt `next_attempt` after `wait_ms`), and the run pauses until the user resumes it.
    Pause {
        /// The wait the server asked for, ms.
        wait_ms: u64,
        /// [`BackoffPolicy::max_wait_ms`].
        limit_ms: u64,
        /// The number of the next attempt, counting from 1.
        next_attempt: u32,
    },
}

/// Why [`decide`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum GiveUpReason {
    /// The error is not retryable ([`ProviderError::is_retryable`]).
    NotRetryable,
    /// `attempts` attempts were made, the policy's maximum.
    AttemptsExhausted {
        /// Attempts made.
        attempts: u32,
    },
}

impl GiveUpReason {
    /// A sentence for the failure reason.
    pub fn describe(&self) -> String {
        match self {
            GiveUpReason::NotRetryable => "not retryable".to_string(),
            GiveUpReason::AttemptsExhausted { attempts } => {
                format!("gave up after {attempts} attempts")
            }
        }
    }
}

/// A wait for people: `45 s` below two minutes, else whole minutes rounded up (`30 min`).
pub fn describe_wait(ms: u64) -> String {
    if ms < 120_000 {
        format!("{} s", ms.div_ceil(1000))
    } else {
        format!("{} min", ms.div_ceil(60_000))
    }
}

/// The one message of a run paused by a long `Retry-After` ([`RetryDecision::Pause`]): which call,
/// "the server asks N min", the longest wait the user allows, and what resuming does.
pub fn server_wait_message(call_id: &str, wait_ms: u64, limit_ms: u64) -> String {
    format!(
        "Paused: the server asks {} before call {call_id} is sent again (Retry-After), longer than the longest wait you allow ({}). Resume to go on: that call is then sent when the server's wait is over, the other calls right away; or raise the longest server wait.",
        describe_wait(wait_ms),
        describe_wait(limit_ms)
    )
}

/// Decides after attempt number `attempts_made` (≥ 1) of call `call_index` failed with `error`, at
/// time `now_unix_ms` (milliseconds since 1970, used only for an HTTP-date `Retry-After` without a
/// `Date` header, [`crate::provider::RetryAfter::delay_ms`]): give up when the error is not retryable
/// or when `attempts_made ≥ max_attempts`; pause when `Retry-After` exceeds `max_wait_ms`; otherwise
/// retry after [`delay_ms`] with `retry = attempts_made − 1`.
///
/// # Errors
/// [`PolicyError`] when the policy is invalid.
pub fn decide(
    policy: &BackoffPolicy,
    seed: u64,
    call_index: u64,
    attempts_made: u32,
    error: &ProviderError,
    now_unix_ms: u64,
) -> Result<RetryDecision, PolicyError> {
    policy.validate()?;
    if !error.is_retryable() {
        return Ok(RetryDecision::GiveUp {
            reason: GiveUpReason::NotRetryable,
        });
    }
    let attempts_made = attempts_made.max(1);
    if attempts_made >= policy.max_attempts {
        return Ok(RetryDecision::GiveUp {
            reason: GiveUpReason::AttemptsExhausted {
                attempts: attempts_made,
            },
        });
    }
    let retry_after = error.retry_after().map(|r| r.delay_ms(now_unix_ms));
    if let Some(wait) = retry_after.filter(|&w| w > policy.max_wait_ms) {
        return Ok(RetryDecision::Pause {
            wait_ms: wait,
            limit_ms: policy.max_wait_ms,
            next_attempt: attempts_made + 1,
        });
    }
    let delay = delay_ms(policy, seed, call_index, attempts_made - 1, retry_after)?;
    Ok(RetryDecision::Retry {
        delay_ms: delay,
        next_attempt: attempts_made + 1,
    })
}
