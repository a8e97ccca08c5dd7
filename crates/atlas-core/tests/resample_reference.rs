//! `atlas_core::resample` against numpy and an independent Python implementation of its draws, and its
//! properties.
//!
//! Reference values: `tests/reference/expected_rank.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/rank_reference.py` (command and versions
//! recorded in the JSON). Percentiles are `numpy.percentile(v, q)` (default "linear"). The
//! `draw_stream` section is recomputed in pure Python from the specifications — ChaCha8 (its block
//! function checked against RFC 8439 §2.3.2), rand_core's `seed_from_u64` PCG32 key expansion,
//! Lemire's method for `index`, the front-to-back partial Fisher–Yates for
//! `sample_without_replacement`, the sequential-sum unit bootstrap and numpy's percentiles — so
//! agreement checks that the Rust stream is ChaCha8 read as documented, not just that it is stable.
//!
//! Comparison: floats within [`atlas_core::tolerance::EXACT`] (1e-12), integers exactly.

mod common;

use atlas_core::resample::{
    bootstrap_mean, cluster_bootstrap, cluster_bootstrap_means, percentile, percentile_interval,
    percentiles, portability_fingerprint, DrawStream, ResampleError,
};
use atlas_core::tolerance::EXACT;
use common::{assert_close, f64s, rank_reference};
use serde_json::Value;

/// `portability_fingerprint(20260722)` as the native build computes it (obtained by running this test
/// once natively). This constant does not check correctness — the Python reference above does that —
/// it guards cross-target equality: `tests/web_resample.rs` asserts the same constant in headless
/// Chromium (wasm32), so the two targets must produce bit-identical draws, bootstrap means and
/// intervals. Change it only together with the constant there, and only for an intended change of the
/// draw algorithms.
const FINGERPRINT_20260722: u64 = 602_387_322_449_957_447;

fn u32s(v: &Value, what: &str) -> Vec<u32> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}: expected an array"))
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn percentiles_equal_numpy_on_every_reference_vector() {
    let reference = rank_reference();
    for case in reference["percentile"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let values = f64s(&case["values"], name);
        let qs = f64s(&case["q"], name);
        let expected = f64s(&case["percentile"], name);
        for (q, e) in qs.iter().zip(&expected) {
            assert_close(
                percentile(&values, *q),
                Some(*e),
                &format!("{name}, q = {q}"),
            );
        }
        let all = percentiles(&values, &qs).unwrap();
        assert_eq!(all.len(), qs.len());
        for (a, e) in all.iter().zip(&expected) {
            assert_close(Some(*a), Some(*e), name);
        }
    }
}

#[test]
fn the_reference_covers_the_required_percentiles_and_lengths() {
    let reference = rank_reference();
    let cases = reference["percentile"].as_array().unwrap();
    let lengths: Vec<usize> = cases
        .iter()
        .map(|c| c["values"].as_array().unwrap().len())
        .collect();
    assert!(lengths.contains(&1));
    assert!(lengths.iter().any(|n| n % 2 == 0) && lengths.iter().any(|n| n % 2 == 1 && *n > 1));
    let qs = f64s(&cases[0]["q"], "q");
    for q in [0.0, 2.5, 25.0, 50.0, 97.5, 100.0] {
        assert!(qs.contains(&q), "q = {q} missing");
    }
}

#[test]
fn percentile_rejects_empty_input_nan_values_and_q_outside_0_to_100() {
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&[1.0, 2.0], -0.1), None);
    assert_eq!(percentile(&[1.0, 2.0], 100.1), None);
    assert_eq!(percentile(&[1.0, 2.0], f64::NAN), None);
    assert_eq!(percentile(&[1.0, f64::NAN], 50.0), None);
    assert_eq!(percentile(&[1.0, f64::INFINITY], 50.0), None);
    assert_eq!(percentiles(&[1.0, 2.0], &[50.0, 101.0]), None);
}

#[test]
fn the_95_percent_interval_is_the_2_5th_and_97_5th_percentile() {
    let reference = rank_reference();
    for case in reference["percentile"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let values = f64s(&case["values"], name);
        let (lo, hi) = percentile_interval(&values, 0.95).unwrap();
        assert_eq!(Some(lo), percentile(&values, 2.5), "{name}");
        assert_eq!(Some(hi), percentile(&values, 97.5), "{name}");
    }
    assert_eq!(percentile_interval(&[], 0.95), None);
    assert_eq!(percentile_interval(&[1.0], 1.5), None);
    assert_eq!(percentile_interval(&[1.0], f64::NAN), None);
}

#[test]
fn the_stream_for_seed_20260722_equals_the_independent_python_chacha8() {
    let reference = rank_reference();
    let ds = &reference["draw_stream"];
    let seed = ds["seed"].as_u64().unwrap();
    assert_eq!(seed, 20260722);

    let mut s = DrawStream::new(seed);
    let words: Vec<u32> = (0..8).map(|_| s.next_u32()).collect();
    assert_eq!(words, u32s(&ds["next_u32_first8"], "next_u32_first8"));

    let mut s = DrawStream::new(seed);
    let draws: Vec<u32> = (0..10).map(|_| s.index(1000).unwrap()).collect();
    assert_eq!(draws, u32s(&ds["index_1000_first10"], "index_1000_first10"));

    let mut s = DrawStream::new(seed);
    assert_eq!(
        s.sample_without_replacement(1000, 50).unwrap(),
        u32s(&ds["sample_without_replacement_1000_50"], "sample")
    );

    let mut s = DrawStream::with_stream(seed, 2);
    let words: Vec<u32> = (0..4).map(|_| s.next_u32()).collect();
    assert_eq!(words, u32s(&ds["stream_2_next_u32_first4"], "stream 2"));
}

#[test]
fn the_unit_bootstrap_equals_the_python_bootstrap_and_numpy_interval() {
    let reference = rank_reference();
    let ds = &reference["draw_stream"];
    let b = &ds["bootstrap_mean"];
    let values = f64s(&b["values"], "values");
    let reps = b["reps"].as_u64().unwrap() as usize;
    let mut s = DrawStream::new(ds["seed"].as_u64().unwrap());
    let means = bootstrap_mean(&values, reps, &mut s).unwrap();
    assert_eq!(means.len(), reps);
    for (i, e) in f64s(&b["first_means"], "first_means").iter().enumerate() {
        assert_close(Some(means[i]), Some(*e), &format!("mean {i}"));
    }
    assert_close(means.last().copied(), b["last_mean"].as_f64(), "last mean");
    let expected = f64s(&b["percentile_interval_95"], "interval");
    let (lo, hi) = percentile_interval(&means, 0.95).unwrap();
    assert_close(Some(lo), Some(expected[0]), "2.5th percentile");
    assert_close(Some(hi), Some(expected[1]), "97.5th percentile");
}

#[test]
fn the_portability_fingerprint_is_the_recorded_constant() {
    assert_eq!(portability_fingerprint(20260722), Ok(FINGERPRINT_20260722));
}

#[test]
fn index_is_always_below_n() {
    let mut s = DrawStream::new(11);
    for n in [
        1u32,
        2,
        3,
        7,
        10,
        1000,
        1_000_003,
        1 << 31,
        (1 << 31) + 1,
        u32::MAX,
    ] {
        for _ in 0..2000 {
            let i = s.index(n).unwrap();
            assert!(i < n, "index({n}) = {i}");
        }
    }
    assert_eq!(s.index(0), None);
}

#[test]
fn index_is_roughly_uniform() {
    let mut s = DrawStream::new(12);
    let mut counts = [0u32; 10];
    for _ in 0..100_000 {
        counts[s.index(10).unwrap() as usize] += 1;
    }
    for (k, c) in counts.iter().enumerate() {
        // Expected 10,000 per bucket, sd ≈ 95: ±500 is > 5 sd.
        assert!((9_500..=10_500).contains(c), "bucket {k}: {c}");
    }
}

#[test]
fn sample_without_replacement_never_repeats_and_stays_below_n() {
    let mut s = DrawStream::new(13);
    for (n, k) in [
        (1u32, 0u32),
        (1, 1),
        (5, 5),
        (10, 3),
        (100, 100),
        (1000, 50),
        (72_000, 200),
        (1 << 30, 1000),
    ] {
        for _ in 0..20 {
            let sample = s.sample_without_replacement(n, k).unwrap();
            assert_eq!(sample.len(), k as usize);
            let mut sorted = sample.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), k as usize, "n = {n}, k = {k}: a repeat");
            assert!(sample.iter().all(|&v| v < n), "n = {n}, k = {k}");
        }
    }
}

#[test]
fn a_sample_larger_than_the_population_is_an_error() {
    let mut s = DrawStream::new(14);
    assert_eq!(
        s.sample_without_replacement(3, 4),
        Err(ResampleError::SampleTooLarge { n: 3, k: 4 })
    );
}

#[test]
fn every_item_is_equally_likely_to_be_sampled() {
    let mut s = DrawStream::new(15);
    let mut counts = [0u32; 20];
    for _ in 0..20_000 {
        for v in s.sample_without_replacement(20, 5).unwrap() {
            counts[v as usize] += 1;
        }
    }
    // Expected 5,000 each (p = 1/4), sd ≈ 61.
    for (k, c) in counts.iter().enumerate() {
        assert!((4_700..=5_300).contains(c), "item {k}: {c}");
    }
}

#[test]
fn shuffle_is_a_permutation() {
    let mut s = DrawStream::new(16);
    for n in [0usize, 1, 2, 10, 257] {
        let mut v: Vec<usize> = (0..n).collect();
        s.shuffle(&mut v).unwrap();
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn the_same_seed_gives_the_same_draws_and_another_seed_or_stream_does_not() {
    let draws = |mut s: DrawStream| (0..32).map(|_| s.next_u32()).collect::<Vec<_>>();
    assert_eq!(draws(DrawStream::new(5)), draws(DrawStream::new(5)));
    assert_eq!(
        draws(DrawStream::new(5)),
        draws(DrawStream::with_stream(5, 0))
    );
    assert_ne!(draws(DrawStream::new(5)), draws(DrawStream::new(6)));
    assert_ne!(
        draws(DrawStream::new(5)),
        draws(DrawStream::with_stream(5, 2))
    );
}

#[test]
fn bootstrapping_a_constant_vector_gives_that_constant() {
    for c in [0.25, 0.1, -3.7, 0.0] {
        let mut s = DrawStream::new(17);
        let means = bootstrap_mean(&[c; 13], 500, &mut s).unwrap();
        assert!(means.iter().all(|m| (m - c).abs() <= EXACT), "c = {c}");
        let (lo, hi) = percentile_interval(&means, 0.95).unwrap();
        assert!((lo - c).abs() <= EXACT && (hi - c).abs() <= EXACT);
    }
}

#[test]
fn the_bootstrap_interval_contains_the_sample_mean() {
    let values: Vec<f64> = (0..40).map(|i| ((i * 7) % 13) as f64 / 4.0).collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let mut s = DrawStream::new(18);
    let (lo, hi) =
        percentile_interval(&bootstrap_mean(&values, 2000, &mut s).unwrap(), 0.95).unwrap();
    assert!(lo < mean && mean < hi, "[{lo}, {hi}] vs {mean}");
}

#[test]
fn bootstrap_rejects_empty_and_non_finite_input_without_consuming_draws() {
    let mut s = DrawStream::new(19);
    assert_eq!(bootstrap_mean(&[], 10, &mut s), Err(ResampleError::Empty));
    assert_eq!(
        bootstrap_mean(&[1.0, f64::NAN], 10, &mut s),
        Err(ResampleError::NonFinite {
            cluster: None,
            index: 1
        })
    );
    assert_eq!(s.next_u32(), DrawStream::new(19).next_u32());
}

#[test]
fn cluster_bootstrap_keeps_models_paired_on_the_same_clusters() {
    // Model 1 = model 0 + 1 on every cluster (exact in binary): on the same drawn clusters every
    // replicate's difference is exactly 1; unpaired draws would scatter it.
    let per_cluster: Vec<[f64; 2]> = (0..30)
        .map(|c| {
            let v = ((c * 5) % 11) as f64 / 8.0;
            [v, v + 1.0]
        })
        .collect();
    let mut s = DrawStream::new(20);
    let reps = cluster_bootstrap_means(&per_cluster, 1000, &mut s).unwrap();
    assert_eq!(reps.len(), 1000);
    let mut distinct_means = reps.iter().map(|r| r[0].to_bits()).collect::<Vec<_>>();
    distinct_means.sort_unstable();
    distinct_means.dedup();
    assert!(
        distinct_means.len() > 20,
        "the replicates vary: {}",
        distinct_means.len()
    );
    for r in &reps {
        assert_eq!(r.len(), 2);
        assert!((r[1] - r[0] - 1.0).abs() <= EXACT, "{r:?}");
    }
}

#[test]
fn the_unit_and_cluster_bootstraps_draw_the_same_resamples_for_the_same_seed() {
    let values = [0.5, 1.5, -2.0, 4.0, 0.25, 3.0, 7.0];
    let rows: Vec<[f64; 1]> = values.iter().map(|&v| [v]).collect();
    let unit = bootstrap_mean(&values, 300, &mut DrawStream::new(21)).unwrap();
    let clustered = cluster_bootstrap_means(&rows, 300, &mut DrawStream::new(21)).unwrap();
    let general = cluster_bootstrap(7, 300, &mut DrawStream::new(21), |drawn| {
        drawn.iter().map(|&c| values[c as usize]).sum::<f64>() / 7.0
    })
    .unwrap();
    for i in 0..300 {
        assert_eq!(unit[i], clustered[i][0], "replicate {i}");
        assert_eq!(unit[i], general[i], "replicate {i}");
    }
}

#[test]
fn cluster_bootstrap_draws_every_cluster_index_below_the_cluster_count() {
    let mut s = DrawStream::new(22);
    let reps = cluster_bootstrap(9, 200, &mut s, |drawn| drawn.to_vec()).unwrap();
    for drawn in reps {
        assert_eq!(drawn.len(), 9);
        assert!(drawn.iter().all(|&c| c < 9));
    }
    assert_eq!(
        cluster_bootstrap(0, 10, &mut s, |d| d.len()),
        Err(ResampleError::Empty)
    );
}

#[test]
fn ragged_or_non_finite_cluster_tables_are_errors() {
    let mut s = DrawStream::new(23);
    let ragged = vec![vec![1.0, 2.0], vec![3.0]];
    assert_eq!(
        cluster_bootstrap_means(&ragged, 5, &mut s),
        Err(ResampleError::Ragged {
            cluster: 1,
            len: 1,
            expected: 2
        })
    );
    let nan = vec![vec![1.0, 2.0], vec![3.0, f64::INFINITY]];
    assert_eq!(
        cluster_bootstrap_means(&nan, 5, &mut s),
        Err(ResampleError::NonFinite {
            cluster: Some(1),
            index: 1
        })
    );
    let empty: Vec<Vec<f64>> = Vec::new();
    assert_eq!(
        cluster_bootstrap_means(&empty, 5, &mut s),
        Err(ResampleError::Empty)
    );
}
