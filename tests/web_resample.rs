//! The portable draw stream in headless Chromium (`cargo test --target wasm32-unknown-unknown -p
//! audit-atlas --test web_resample`): the same seed must give the same draws, samples, bootstrap means
//! and percentile intervals in wasm32 as natively (seed `000_…` D.2 uses seed 20260722).
#![cfg(target_arch = "wasm32")]

use atlas_core::rank::{kendall_tau_b, pairwise_inversions};
use atlas_core::resample::{
    bootstrap_mean, percentile, percentile_interval, portability_fingerprint, DrawStream,
};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// `portability_fingerprint(20260722)` as the NATIVE build computes it — the same constant as
/// `FINGERPRINT_20260722` in `crates/atlas-core/tests/resample_reference.rs`, obtained by running that
/// native test once. It checks cross-target equality, not correctness (the native reference tests
/// check correctness against an independent Python ChaCha8 and numpy): if wasm32 drew a different
/// index, sample or shuffle, or summed a bootstrap mean differently, this value would differ.
const FINGERPRINT_20260722: u64 = 602_387_322_449_957_447;

#[wasm_bindgen_test]
fn the_fingerprint_of_seed_20260722_equals_the_native_one() {
    assert_eq!(portability_fingerprint(20260722), Ok(FINGERPRINT_20260722));
}

/// The first 10 `index(1000)` draws of seed 20260722, from the independent pure-Python ChaCha8 of
/// `tests/reference/rank_reference.py` (`draw_stream.index_1000_first10` in
/// `tests/reference/expected_rank.json`).
#[wasm_bindgen_test]
fn the_first_draws_of_seed_20260722_equal_the_python_reference() {
    let mut s = DrawStream::new(20260722);
    let draws: Vec<u32> = (0..10).map(|_| s.index(1000).unwrap()).collect();
    assert_eq!(draws, [173, 191, 770, 785, 257, 561, 804, 709, 971, 454]);
}

/// The 2000-replicate unit bootstrap of `draw_stream.bootstrap_mean` in
/// `tests/reference/expected_rank.json`: the Python replicate means and numpy's 2.5th and 97.5th
/// percentiles of them.
#[wasm_bindgen_test]
fn the_bootstrap_interval_equals_the_python_and_numpy_reference() {
    let values = [
        0.125, -3.5, 2.0, 7.25, 0.1, 0.2, 0.3, 0.001, 42.0, -0.75, 5.5, 3.0,
    ];
    let means = bootstrap_mean(&values, 2000, &mut DrawStream::new(20260722)).unwrap();
    assert!((means[0] - 4.875).abs() <= 1e-12);
    let (lo, hi) = percentile_interval(&means, 0.95).unwrap();
    assert!((lo - 0.06659375).abs() <= 1e-12, "{lo}");
    assert!((hi - 11.970289583333326).abs() <= 1e-12, "{hi}");
}

#[wasm_bindgen_test]
fn rank_statistics_and_percentiles_agree_with_scipy_and_numpy_in_the_browser() {
    // scipy.stats.kendalltau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]) (its docstring example).
    let tau = kendall_tau_b(&[12.0, 2.0, 1.0, 12.0, 2.0], &[1.0, 4.0, 7.0, 1.0, 0.0]).unwrap();
    assert!((tau - -0.4714045207910316).abs() <= 1e-12);
    let some = |v: &[f64]| v.iter().copied().map(Some).collect::<Vec<_>>();
    let inv = pairwise_inversions(
        &some(&[0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45]),
        &some(&[0.10, 0.20, 0.25, 0.15, 0.35, 0.40, 0.30, 0.45]),
    )
    .unwrap();
    assert_eq!((inv.inverted, inv.pairs), (4, 28));
    // numpy.percentile([0.1, 0.7, 0.2, 0.9, 0.4, 0.6], 2.5) and 97.5.
    let v = [0.1, 0.7, 0.2, 0.9, 0.4, 0.6];
    assert!((percentile(&v, 2.5).unwrap() - 0.1125).abs() <= 1e-12);
    assert!((percentile(&v, 97.5).unwrap() - 0.875).abs() <= 1e-12);
}

/// FNV-1a 64, as in `crates/atlas-core/tests/cross_target.rs`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The RQ1 and RQ2 reports of the default bundle hash to the values the NATIVE build gives
/// (`RQ1_FINGERPRINT`, `RQ2_FINGERPRINT` in `crates/atlas-core/tests/cross_target.rs`, same settings):
/// same bundle, same seed, same numbers in the browser. A cross-target guard, not a correctness check.
#[wasm_bindgen_test]
fn rq1_and_rq2_reports_equal_the_native_ones_for_the_same_seed() {
    use atlas_core::rq1::{condition_reversals, wording_sensitivity, Rq1Options};
    use atlas_core::rq2::{analyze_rq2, Rq2Options};
    use atlas_core::{Audit, RepeatPolicy};
    let audit = Audit::from_json(include_str!(
        "../static/bundles/decodingtrust-stereotype/bundle.json"
    ))
    .unwrap();
    let rq1_options = Rq1Options {
        unit_bootstrap_reps: 500,
        cluster_bootstrap_reps: 200,
        seed: 20_260_716,
        ..Rq1Options::default()
    };
    let wording = wording_sensitivity(&audit, &rq1_options).unwrap();
    let reversals =
        condition_reversals(&audit, RepeatPolicy::AllResponses, 200, 20_260_716).unwrap();
    let rq1 = serde_json::to_string(&(wording, reversals)).unwrap();
    let rq2_options = Rq2Options {
        draws: 200,
        budget: 200,
        bootstrap_reps: 200,
        ..Rq2Options::default()
    };
    let rq2 = serde_json::to_string(&analyze_rq2(&audit, &rq2_options).unwrap()).unwrap();
    assert_eq!(
        fnv1a(rq1.as_bytes()),
        9_291_688_427_133_396_670,
        "RQ1 report differs from native"
    );
    assert_eq!(
        fnv1a(rq2.as_bytes()),
        430_341_843_830_986_112,
        "RQ2 report differs from native"
    );
}
