//! Shared by the integration tests of `atlas-core`: assertions on optional floats, reference-file
//! readers and a tiny generator. The tolerances themselves live in `atlas_core::tolerance`.

#![allow(dead_code)]

use atlas_core::tolerance::EXACT;

/// Asserts `actual` is within [`EXACT`] of `expected`, both present or both missing: a fraction (a
/// BER or an Eq. 4 reference score, both in `[0, 1]`) computed by `atlas_core::stats` against its
/// independently computed reference value (the two sides sum the same numbers in different orders).
#[track_caller]
pub fn assert_fraction(actual: Option<f64>, expected: Option<f64>, what: &str) {
    match (actual, expected) {
        (Some(a), Some(e)) => assert!(
            (a - e).abs() <= EXACT,
            "{what}: got {a:.17}, expected {e:.17} (|diff| = {:.3e} > {EXACT:e})",
            (a - e).abs()
        ),
        (None, None) => {}
        _ => panic!("{what}: got {actual:?}, expected {expected:?}"),
    }
}

/// Asserts `actual` is within [`EXACT`] of `expected`, both present or both missing: a rank
/// statistic, percentile or bootstrap summary of `atlas_core::{rank, resample}` against its
/// scipy/numpy reference (`tests/reference/expected_rank.json`; both sides do the same few
/// floating-point operations).
#[track_caller]
pub fn assert_close(actual: Option<f64>, expected: Option<f64>, what: &str) {
    match (actual, expected) {
        (Some(a), Some(e)) => assert!(
            (a - e).abs() <= EXACT,
            "{what}: got {a:.17}, expected {e:.17} (|diff| = {:.3e} > {EXACT:e})",
            (a - e).abs()
        ),
        (None, None) => {}
        _ => panic!("{what}: got {actual:?}, expected {expected:?}"),
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny deterministic generator for property tests, kept
/// apart from `atlas_core::resample` so the rank properties do not depend on the code under test.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An integer in `0..n` (slightly biased for huge `n`; irrelevant for tests).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The reference values of `tests/reference/expected_rank.json` (written by
/// `~/.cache/audit-atlas/venv/bin/python tests/reference/rank_reference.py`).
pub fn rank_reference() -> serde_json::Value {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/reference/expected_rank.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON array of numbers (or nulls, as `None`) as `Vec<Option<f64>>`.
pub fn opt_f64s(v: &serde_json::Value, what: &str) -> Vec<Option<f64>> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}: expected an array"))
        .iter()
        .map(|x| match x {
            serde_json::Value::Null => None,
            other => Some(
                other
                    .as_f64()
                    .unwrap_or_else(|| panic!("{what}: {other} is not a number")),
            ),
        })
        .collect()
}

/// A JSON array of numbers as `Vec<f64>`.
pub fn f64s(v: &serde_json::Value, what: &str) -> Vec<f64> {
    opt_f64s(v, what)
        .into_iter()
        .map(|x| x.unwrap_or_else(|| panic!("{what}: unexpected null")))
        .collect()
}

/// The bundle `tests/fixtures/PATH` of the repository, read as an [`atlas_core::Audit`] (panics,
/// naming the file, when it is missing or invalid).
pub fn repo_fixture(path: &str) -> atlas_core::Audit {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(path);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    atlas_core::Audit::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
