//! Float tolerances, in one place: every comparison of floats in the crates and their tests uses one of
//! these, so a reader sees what each allowance is for and how large it is relative to the rounding it
//! absorbs. All are **absolute** differences unless the name says `RELATIVE`.
//!
//! | constant | value | for |
//! |---|---|---|
//! | [`CLOSED_FORM`] | 1e-15 | a few float operations on values of order 1 against a closed form |
//! | [`EXACT`] | 1e-12 | the same deterministic arithmetic in another order or by another program |
//! | [`EXACT_PP`] | 1e-10 | [`EXACT`] for values in percentage points (100 × a fraction) |
//! | [`LONG_SUM`] | 1e-10 | sums of hundreds of thousands of terms in another order |
//! | [`TIE_ZONE_SLACK`] | 1e-12 | a difference on a tie zone's edge counts as tied |
//! | [`BOOTSTRAP_INTERVAL_PP`] | 0.3 pp | bootstrap interval ends from different random streams |
//! | [`monte_carlo_mean`], [`monte_carlo_proportion`] | `z` SE | a Monte Carlo estimate vs its expectation |
//! | [`FLOAT32_EMBEDDING`] | 1e-5 | float32 embeddings against another implementation's float32 |
//! | [`FLOAT32_BATCHING`] | 1e-6 | the same float32 model on the same text in another batch |
//! | [`FLOAT16_RELATIVE`] | 2⁻¹¹ | a value stored as float16 and read back |
//! | [`EMBEDDING_NORM`] | 1e-4 | an embedding row's L2 norm counts as 1 |
//! | [`SIX_DECIMALS`] | 1e-6 | a reference value printed to six decimals |
//! | [`WHOLE_NUMBER`] | 1e-6 | a chart coordinate counts as a whole number |
//!
//! For scale: one ulp of an `f64` near 1 is 2.2e-16, near 100 it is 1.4e-14; one ulp of an `f32` near
//! 1 is 1.2e-7. The smallest difference that matters in an audit is one response in a million
//! (1e-6 as a fraction), far above every deterministic tolerance here.

/// A few floating-point operations on values of order 1 (a mean of a handful of 0/1 values, a ratio
/// of small counts) against the closed form written in the test (`11.0 / 19.0`): equal to within a
/// few ulps (2.2e-16 each).
pub const CLOSED_FORM: f64 = 1e-15;

/// Exact arithmetic up to float rounding: a fraction (a BER, an Eq. 4 reference score, a rate, a
/// τ-b, a percentile) computed here and by an independent program or hand calculation doing the same
/// arithmetic in another order (numpy, scipy, a rational written in the test). The two sides may
/// differ by a few ulps (~1e-16, ~1e-14 for values up to 100); 1e-12 is orders of magnitude above
/// that and far below any difference that matters (the closest two DecodingTrust reference scores
/// are 3e-3 apart). Also used for small counts, costs and durations computed both ways.
pub const EXACT: f64 = 1e-12;

/// [`EXACT`] for values in percentage points (`100 ×` a fraction): the factor 100 scales the
/// rounding too.
pub const EXACT_PP: f64 = 100.0 * EXACT;

/// Sums of hundreds of thousands of terms in another order (seed `000_…` C.3's sums of squares over
/// the 475,643 valid rows of the default bundle): the rounding grows with the number of terms.
pub const LONG_SUM: f64 = 1e-10;

/// Slack added to a tie zone so that a difference meant to be exactly on the zone's edge counts as
/// tied despite binary rounding (`0.51 − 0.50 = 0.010000000000000009 > 0.01`). It is far below any
/// difference between two rates of a real audit (1 response in 10⁶ is 10⁻⁶). Used by
/// [`crate::rank::pairwise_inversions_with_tie_zone`] (as [`crate::rank::TIE_ZONE_SLACK`]).
pub const TIE_ZONE_SLACK: f64 = EXACT;

/// Monte Carlo: the ends of a bootstrap percentile interval (in pp) computed from different random
/// streams (numpy's generator in the reference, ChaCha8 here) on the seed bundle's data (seed `000_…`
/// C.1, C.2: 20,000 unit resamples, 10,000 statement-cluster draws). About 3× the largest difference
/// between the reference's own two numpy seeds (0.0975 pp when recorded,
/// `ci_spread_between_numpy_seeds_pp` in `tests/reference/expected_rq1.json`).
pub const BOOTSTRAP_INTERVAL_PP: f64 = 0.3;

/// Monte Carlo: `z` standard errors of the mean of `n` independent draws of standard deviation `sd`,
/// `z · sd / √n`, in the units of `sd`. A seeded test whose mean lies within it of the expectation is
/// a `z`-sigma check (4–5 in this project's tests).
///
/// # Examples
/// ```
/// use atlas_core::tolerance::monte_carlo_mean;
/// // Uniform draws on 0..=1000 ms (sd = √(1001² − 1)/12 ≈ 288.96 ms), 4,000 of them, 5 SE:
/// // 5 · 288.96 / √4000 = 5 · 4.569 = 22.84 ms.
/// let sd = ((1001.0f64 * 1001.0 - 1.0) / 12.0).sqrt();
/// assert!((monte_carlo_mean(5.0, sd, 4_000) - 22.844).abs() < 1e-3);
/// ```
pub fn monte_carlo_mean(z: f64, sd: f64, n: usize) -> f64 {
    z * sd / (n as f64).sqrt()
}

/// Monte Carlo: `z` standard errors of a proportion `p` estimated from `n` independent trials,
/// `z · √(p (1 − p) / n)` (a fraction, as `p`).
///
/// # Examples
/// ```
/// use atlas_core::tolerance::monte_carlo_proportion;
/// // p = 0.25 over 10,000 trials: SE = √(0.25 · 0.75 / 10⁴) = 0.00433; 4 SE = 0.01732.
/// assert!((monte_carlo_proportion(4.0, 0.25, 10_000) - 0.017_320_5).abs() < 1e-7);
/// ```
pub fn monte_carlo_proportion(z: f64, p: f64, n: usize) -> f64 {
    z * (p * (1.0 - p) / n as f64).sqrt()
}

/// Float32 embeddings (all-MiniLM-L6-v2, seed `001_…` Eq. 1) computed here (candle, f32) against the
/// same model's output from another implementation (sentence-transformers / torch, f32), per
/// component of a unit vector (and for its norm): the two run the same operations with different
/// kernels and reduction orders, so they agree to a few hundred f32 ulps (1.2e-7 each).
pub const FLOAT32_EMBEDDING: f64 = 1e-5;

/// The same float32 model on the same text in another batch (padded next to a longer text, or with
/// surrounding whitespace): the same kernels with other reduction orders, per component.
pub const FLOAT32_BATCHING: f64 = 1e-6;

/// Relative error of a value stored as IEEE float16 and read back (`f16le` embeddings): half the
/// spacing of f16's 10-bit fraction, 2⁻¹¹.
pub const FLOAT16_RELATIVE: f64 = 1.0 / 2048.0;

/// Largest deviation of a row's L2 norm from 1 for an embedding matrix to be marked `normalized`
/// (seed `001_…` Eq. 1 uses normalised embeddings): float32 vectors normalised by another program
/// deviate by about 1e-7; rows written with 4–5 decimals by about 1e-5.
pub const EMBEDDING_NORM: f64 = 1e-4;

/// A reference value that a hand-worked table prints to six decimals (the clinical fixture's README,
/// whose mean EDDs come from f32 embeddings): half a unit in the sixth decimal is 5e-7, so 1e-6.
pub const SIX_DECIMALS: f64 = 1e-6;

/// A chart coordinate or axis value within this of a whole number is treated as that whole number
/// (a band index for a model row, an integer tick label): axis key points are float steps (0.5 or
/// more apart) whose rounding is far below 1e-6.
pub const WHOLE_NUMBER: f64 = 1e-6;
