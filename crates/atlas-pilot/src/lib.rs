//! Audit Atlas pilot audits, the pure part: everything a browser needs to run a small bias audit with
//! the user's own API keys **except** the network. The app does `fetch`; this crate builds each request
//! as data ([`provider::build_request`] → [`provider::HttpRequest`]), reads each response body
//! ([`provider::parse_response`] → [`provider::Completion`] or a classified [`provider::ProviderError`]),
//! schedules retries ([`retry`]), reads the `Selection:` / `Rationale:` fields ([`mod@extract`], through the
//! one normaliser of math / LaTeX markup and invisible characters that every reader shares,
//! [`normalise`]), codes
//! Rationales with judge models ([`judge`]), designs the pilot ([`plan`]); propositions ([`proposition`]) rendered as the four task paradigms of seed `000_…` Table 10, with likelihood scores and the clarification probe of §G.2 ([`paradigm`]); and keeps the run's state and
//! turns it into a format-v1 bundle ([`run`]); judge coding of an already loaded bundle's Rationales
//! adds judge columns to that bundle ([`bundle_judge`]); the clinical protocol of seed `001_…`
//! (MedQA items, demographic prefixes, counterfactual and judge prompts with dependencies between
//! calls, lenient field parsers, CFV outcomes, the clinical bundle) is [`clinical`]; the results tables a
//! runner shows, kept current call by call, are [`rows`] (and [`clinical::rows`]); why a provider
//! cannot be reached ("Test connection", the message of a provider stopped early) is [`connection`].
//!
//! Definitions follow seed `000_…` (BiAxisBias, `../shared/seeds/000_*`): the forced dual output
//! `Selection:` / `Rationale:` and how a Selection is obtained (§3.3), the judge rubric E/QE/N/D/R and the
//! strict binary majority (§3.3, B.3), the conditions of Table 6, the five equivalent agreement wordings
//! of Table 7, and the equal-budget designs of §3.5 / D.1 (through [`atlas_core::rq2`]). Request and
//! response shapes follow each provider's public API reference, cited where they are built.
//!
//! **Keys.** An API key only ever lives in a [`provider::SecretKey`], whose `Debug` and `Display` print
//! `***` and which implements no serde trait; it is an argument of [`provider::build_request`] (and of
//! the error scrubbing helpers) and is stored in no type of this crate. The persisted run state, the plan
//! and the bundle cannot hold it (`tests/keys.rs`).
//!
//! Pure Rust with no web dependency and no I/O: it builds for `wasm32-unknown-unknown` unchanged, and
//! every function is deterministic given its inputs (seeds and the current time are arguments).

#![warn(missing_docs)]

pub mod bundle_judge;
pub mod clinical;
pub mod connection;
pub mod extract;
pub mod http_date;
pub mod judge;
pub mod normalise;
pub mod paradigm;
pub mod plan;
pub mod proposition;
pub mod provider;
pub mod retry;
pub mod rows;
pub mod run;

pub use bundle_judge::{
    merge_judge_columns, plan_bundle_judging, BundleJudgeDesign, BundleJudgePlan, JudgeScope,
};
pub use extract::{extract, extract_completion, AnswerSpace, Extraction};
pub use judge::{majority, parse_judge_label, JudgeConfig, Rubric};
pub use plan::{build_plan, PilotDesign, Plan, PlannedCall, Sampling};
pub use provider::{
    build_request, parse_response, parse_response_scrubbed, Completion, HttpRequest, Params,
    Prompt, Provider, ProviderError, SecretKey,
};
pub use retry::BackoffPolicy;
pub use rows::{JudgedRow, JudgedRows, PilotRow, PilotRows};
pub use run::{
    to_bundle, AttemptOutcome, BundleInfo, CallState, CallStatus, FailureKind, HttpResponse, Job,
    KeyOwner, Next, RunState, Settled, Settling,
};

/// 64-bit FNV-1a of `bytes` (Fowler–Noll–Vo, offset basis `0xcbf29ce484222325`, prime
/// `0x100000001b3`): the stable, platform-independent hash behind call ids and plan fingerprints.
pub(crate) fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        // Length prefix, so that ("ab", "c") and ("a", "bc") hash differently.
        for b in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// At most `max` characters of `text` (whole characters, never a split UTF-8 sequence), with `…`
/// appended when something was cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}
