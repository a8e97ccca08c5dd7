//! Shared by the integration tests of `atlas-core`: the one place where float tolerances live.

#![allow(dead_code)]

/// Largest absolute difference accepted between a fraction (a BER or an Eq. 4 reference score, both
/// in `[0, 1]`) computed by `atlas_core::stats` and its independently computed reference value. The
/// two sides sum the same numbers in different orders, so they may differ by a few ulps (~1e-16);
/// 1e-12 is four orders of magnitude above that and far below any difference that matters (the
/// closest two DecodingTrust reference scores are 3e-3 apart).
pub const FRACTION_TOL: f64 = 1e-12;

/// Asserts `actual` is within [`FRACTION_TOL`] of `expected`, both present or both missing.
#[track_caller]
pub fn assert_fraction(actual: Option<f64>, expected: Option<f64>, what: &str) {
    match (actual, expected) {
        (Some(a), Some(e)) => assert!(
            (a - e).abs() <= FRACTION_TOL,
            "{what}: got {a:.17}, expected {e:.17} (|diff| = {:.3e} > {FRACTION_TOL:e})",
            (a - e).abs()
        ),
        (None, None) => {}
        _ => panic!("{what}: got {actual:?}, expected {expected:?}"),
    }
}
