//! Clinical perturbation audits (seed `001_…`, "Beyond Accuracy: Counterfactual Fragility and
//! Demographic Bias in Clinical Evaluation of LLMs"): the bundle's `clinical` object
//! ([`mod@format`]), the metrics of §3.3–3.5, §4 and Tables 5–7 ([`metrics`]) and the data of the
//! case views of Tables 1–4 ([`cases`]). The format is specified in `docs/clinical.md`.

pub mod cases;
pub mod format;
pub mod metrics;

pub use format::{
    CfvOutcome, Clinical, ConflictKind, Counterfactual, Direction, DirectionRecord, EmbeddingDtype,
    EmbeddingMatrix, Embeddings, Plausibility, PrefixConflict, Severity, StereotypeJudgement,
};
