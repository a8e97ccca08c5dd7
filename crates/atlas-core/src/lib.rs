//! Audit Atlas analysis core: the bundle format v1 ([`bundle`]), the audit statistics ([`stats`]),
//! ranks and ranking-stability metrics ([`rank`]), portable seeded resampling ([`resample`]) and live
//! condition re-weighting of the reference score ([`reweight`]).
//!
//! Pure Rust with no web dependency: it builds and tests natively in seconds and compiles unchanged to
//! `wasm32-unknown-unknown` for the browser app, so the same inputs give the same numbers in both.
//! Definitions follow the seeds in `../shared/seeds/` (BiAxisBias = seed `000_…`); every public
//! statistic cites the section or equation it implements.

#![warn(missing_docs)]

pub mod abstain;
pub mod across;
pub mod bundle;
pub mod cases;
pub mod clinical;
pub mod compare;
pub mod decode;
pub mod direction;
pub mod error;
pub mod format;
pub mod glossary;
pub mod headline;
pub mod likelihood;
pub mod number;
pub mod plan;
pub mod query;
pub mod rank;
pub mod resample;
pub mod reweight;
pub mod rq1;
pub mod rq2;
pub mod rq3;
pub mod stats;
pub mod summary;
pub mod tables;
pub mod tolerance;
pub mod variance;

pub use abstain::{AbstainThreshold, ScoreAbstain};
pub use bundle::{Audit, BundleFile, TextShard};
pub use direction::{Direction, ScoreDirection};
pub use error::BundleError;
pub use rank::Inversions;
pub use resample::{DrawStream, ResampleError};
pub use stats::{Counts, RepeatPolicy};
