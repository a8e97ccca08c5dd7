//! The clinical protocol of seed `001_…` ("Beyond Accuracy: Counterfactual Fragility and Demographic
//! Bias in Clinical Evaluation of LLMs", §3.3–3.5, Tables 1–4) as a pilot: pure, like the rest of the
//! crate (no I/O; builds for wasm32). Documented in `docs/clinical.md` ("Pilot protocol").
//!
//! * [`medqa`]: MedQA items from `phrases_no_exclude_test.jsonl` lines and their seeded selection;
//! * [`prefix`]: the no-demographic baseline and the six prefixes (male/female × White/Black/Hispanic),
//!   the kept opener age (else 45 years) and prefix conflicts with the vignette (§3.4);
//! * [`prompts`]: the main answer prompt (REASONING, KEY_FACTORS, ANSWER, CONFIDENCE), the
//!   counterfactual prompt (CHANGE, MODIFIED_QUESTION, EXPLANATION) with its target, and the
//!   plausibility (SCORE) and stereotype (STEREOTYPE_FOUND) judges (§3.3, §3.5);
//! * [`parse`]: lenient readers of every prompt's fields, with failure reasons (§3.5);
//! * [`cfv`]: the counterfactual-validity outcome of an attempt (§3.3, §4.3, Table 6);
//! * [`protocol`]: the calls per model × question with their dependencies, run through the pilot's
//!   [`crate::RunState`] (retries, persistence, resume);
//! * [`estimate`]: tokens and cost of a plan before it runs, and the hard cap (the pilot's
//!   [`crate::plan::Estimate`] and [`crate::plan::Limits`]);
//! * [`bundle`]: the run as a format-v1 bundle with the `clinical` object (`docs/clinical.md`).

pub mod bundle;
pub mod cfv;
pub mod estimate;
pub mod medqa;
pub mod parse;
pub mod prefix;
pub mod prompts;
pub mod protocol;
pub mod rows;

pub use bundle::{
    clinical_bundle_info, summarize, to_clinical_bundle, ClinicalBundle, ClinicalSummary,
};
pub use estimate::{check_clinical_limits, clinical_estimate};
pub use medqa::{read_medqa, select_items, MedQaError, MedQaItem};
pub use protocol::{
    build_clinical_plan, model_level_id, CallKind, ClinicalCall, ClinicalDesign, ClinicalModel,
    ClinicalPlan, ClinicalProgress, ItemSelection, Readiness,
};
pub use rows::{call_rows, ClinicalCallRow, ClinicalRowStatus, ClinicalRows};

use atlas_core::BundleError;

use crate::plan::PlanError;
use crate::provider::RequestError;
use crate::run::RunError;

/// What went wrong with a clinical plan, run or bundle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClinicalError {
    /// The design is invalid: what and where.
    #[error("clinical design: {0}")]
    Design(String),
    /// The plan's JSON cannot be read.
    #[error("clinical plan JSON: {0}")]
    Json(String),
    /// A MedQA input problem.
    #[error(transparent)]
    MedQa(#[from] MedQaError),
    /// The run state belongs to another plan, or a plan's calls do not match its design.
    #[error("the run state or plan belongs to plan {found}, not to this plan ({expected})")]
    PlanMismatch {
        /// This plan's fingerprint.
        expected: String,
        /// The other one's.
        found: String,
    },
    /// No call with this id.
    #[error("no call {0:?} in this clinical plan")]
    UnknownCall(String),
    /// A call whose dependencies are not answered (or unusable) was asked for its request.
    #[error("call {id:?} cannot start: {why}")]
    NotReady {
        /// The call.
        id: String,
        /// Why.
        why: String,
    },
    /// More distinct Selection values than the bundle's code alphabet holds.
    #[error("more than 62 distinct Selection values; the bundle's code alphabet has 62")]
    TooManySelectionValues,
    /// A run-state transition failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A request could not be built.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The plan is above the hard cap ([`PlanError::OverCallCap`], [`PlanError::OverCostCap`]).
    #[error("the clinical plan is refused: {0}")]
    Cap(PlanError),
    /// The bundle built from the run does not validate.
    #[error("the bundle built from the clinical run is invalid: {0}")]
    Bundle(#[from] BundleError),
}

#[cfg(test)]
mod tests;
