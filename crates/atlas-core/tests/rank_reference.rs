//! `atlas_core::rank` against scipy, and its properties.
//!
//! Reference values: `tests/reference/expected_rank.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/rank_reference.py` (the command and the
//! python, numpy and scipy versions are recorded at the top of the JSON; re-check with `--check`).
//! Kendall τ_b is `scipy.stats.kendalltau(x, y, variant="b").statistic` (null where scipy gives nan),
//! average ranks are `scipy.stats.rankdata(method="average")`. The three `seed_8_models_*` cases are
//! 8-model vectors built to reproduce the summary values of seed `000_…` §5.1 / C.1 (τ_b 0.982, 0.929,
//! 0.714; inversions 0, 1 and 4 of 28 = 0, 3.6 and 14.3%; maximum displacement 2), with inversions and
//! displacement counted by the script itself.
//!
//! Comparison: floats within [`atlas_core::tolerance::EXACT`] (1e-12); counts and ranks exactly.
//! Property tests draw their inputs from the inline [`common::SplitMix64`], not from the crate.

mod common;

use atlas_core::rank::{
    average_ranks, kendall_tau_b, max_displacement, paired_present, pairwise_inversions,
    pairwise_inversions_with_tie_zone, Inversions,
};
use atlas_core::tolerance::EXACT;
use common::{assert_close, f64s, opt_f64s, rank_reference, SplitMix64};

fn some(v: &[f64]) -> Vec<Option<f64>> {
    v.iter().copied().map(Some).collect()
}

#[test]
fn kendall_tau_b_equals_scipy_on_every_reference_vector() {
    let reference = rank_reference();
    let cases = reference["kendall_tau_b"].as_array().unwrap();
    assert!(cases.len() >= 8, "only {} τ-b cases", cases.len());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let x = f64s(&case["x"], name);
        let y = f64s(&case["y"], name);
        let expected = case["tau_b"].as_f64();
        assert_close(kendall_tau_b(&x, &y), expected, name);
    }
}

#[test]
fn the_seed_8_model_cases_give_the_reported_tau_inversions_and_displacement() {
    let reference = rank_reference();
    let mut seen = 0;
    for case in reference["kendall_tau_b"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        if !name.starts_with("seed_8_models") {
            continue;
        }
        seen += 1;
        let pooled = some(&f64s(&case["x"], name));
        let wording = some(&f64s(&case["y"], name));
        let inv = pairwise_inversions(&pooled, &wording).unwrap();
        assert_eq!(
            inv,
            Inversions {
                inverted: case["inverted"].as_u64().unwrap() as usize,
                pairs: case["pairs"].as_u64().unwrap() as usize,
            },
            "{name}"
        );
        assert_eq!(inv.pairs, 28, "{name}: 8 models form 28 unordered pairs");
        let displacement = max_displacement(&average_ranks(&pooled), &average_ranks(&wording));
        assert_eq!(displacement, case["max_displacement"].as_f64(), "{name}");
    }
    assert_eq!(seen, 3);
    // The numbers the seed reports (§5.1), rounded as it rounds them.
    let pooled = some(&[0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45]);
    let template_5 = some(&[0.10, 0.20, 0.25, 0.15, 0.35, 0.40, 0.30, 0.45]);
    let (x, y) = paired_present(&pooled, &template_5).unwrap();
    let tau = kendall_tau_b(&x, &y).unwrap();
    assert_eq!(format!("{tau:.3}"), "0.714");
    let rate = pairwise_inversions(&pooled, &template_5)
        .unwrap()
        .rate()
        .unwrap();
    assert_eq!(format!("{:.1}", 100.0 * rate), "14.3");
    assert_eq!(
        max_displacement(&average_ranks(&pooled), &average_ranks(&template_5)),
        Some(2.0)
    );
}

#[test]
fn average_ranks_equal_scipy_rankdata_on_the_present_scores() {
    let reference = rank_reference();
    for case in reference["average_ranks"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let scores = opt_f64s(&case["scores"], name);
        let expected = opt_f64s(&case["ranks"], name);
        assert_eq!(average_ranks(&scores), expected, "{name}");
    }
}

/// The direction of `case` (`better`, `target`) as an [`atlas_core::Direction`].
fn direction_of(case: &serde_json::Value) -> atlas_core::Direction {
    match case["better"].as_str().unwrap() {
        "lower" => atlas_core::Direction::Lower,
        "higher" => atlas_core::Direction::Higher,
        _ => atlas_core::Direction::Target {
            target: case["target"].as_f64().unwrap(),
        },
    }
}

/// Score direction: ranks are `scipy.stats.rankdata` of the ranking keys (`s`, `−s`,
/// `numpy.abs(s − t)`), including the Eq. 4 scores of the target-50 fixture and ties at equal distance.
#[test]
fn ranks_in_a_direction_equal_scipy_rankdata_of_the_ranking_keys() {
    let reference = rank_reference();
    let cases = reference["directional_ranks"]["ranks"].as_array().unwrap();
    assert!(cases.len() >= 8);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let scores = opt_f64s(&case["scores"], name);
        let expected = opt_f64s(&case["ranks"], name);
        assert_eq!(direction_of(case).ranks(&scores), expected, "{name}");
    }
}

/// τ-b and inversions of two score vectors under a direction equal scipy's on the keys.
#[test]
fn kendall_tau_b_and_inversions_of_ranking_keys_equal_scipy() {
    let reference = rank_reference();
    for case in reference["directional_ranks"]["kendall_tau_b"]
        .as_array()
        .unwrap()
    {
        let name = case["name"].as_str().unwrap();
        let d = direction_of(case);
        let x = d.keys(&some(&f64s(&case["x"], name)));
        let y = d.keys(&some(&f64s(&case["y"], name)));
        let (px, py) = paired_present(&x, &y).unwrap();
        assert_close(kendall_tau_b(&px, &py), case["tau_b"].as_f64(), name);
        assert_eq!(
            pairwise_inversions(&x, &y).unwrap().inverted as u64,
            case["inversions"].as_u64().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn kendall_tau_b_is_none_for_a_nan_a_constant_vector_or_fewer_than_two_items() {
    assert_eq!(kendall_tau_b(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 3.0]), None);
    assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0, f64::NAN]), None);
    assert_eq!(kendall_tau_b(&[0.5; 4], &[1.0, 2.0, 3.0, 4.0]), None);
    assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0, 4.0], &[0.5; 4]), None);
    assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
    assert_eq!(kendall_tau_b(&[], &[]), None);
}

#[test]
fn kendall_tau_b_orders_infinities_like_other_values() {
    // scipy: kendalltau([-inf, 0, inf], [1, 2, 3]) = 1.0; kendalltau([inf, inf, 1], [1, 2, 3]) =
    // -0.816496580927726 (scipy 1.17.1).
    let tau = kendall_tau_b(&[f64::NEG_INFINITY, 0.0, f64::INFINITY], &[1.0, 2.0, 3.0]);
    assert_eq!(tau, Some(1.0));
    let tau = kendall_tau_b(&[f64::INFINITY, f64::INFINITY, 1.0], &[1.0, 2.0, 3.0]);
    assert_close(tau, Some(-0.816496580927726), "two infinities tied");
}

/// A vector of `n` values drawn from `levels` distinct values (ties likely when `levels` is small).
fn random_vector(rng: &mut SplitMix64, n: usize, levels: u64) -> Vec<f64> {
    (0..n).map(|_| rng.below(levels) as f64 / 16.0).collect()
}

/// `n` distinct values in random order.
fn random_permutation(rng: &mut SplitMix64, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n).map(|i| i as f64 / 16.0).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

#[test]
fn kendall_tau_b_always_lies_between_minus_one_and_one() {
    let mut rng = SplitMix64(1);
    for trial in 0..2000 {
        let n = 2 + rng.below(15) as usize;
        let levels = 1 + rng.below(8);
        let x = random_vector(&mut rng, n, levels);
        let y = random_vector(&mut rng, n, levels);
        if let Some(tau) = kendall_tau_b(&x, &y) {
            assert!((-1.0..=1.0).contains(&tau), "trial {trial}: τ = {tau}");
        }
    }
}

#[test]
fn kendall_tau_b_of_a_vector_without_ties_with_itself_is_one() {
    let mut rng = SplitMix64(2);
    for n in 2..40 {
        let x = random_permutation(&mut rng, n);
        let tau = kendall_tau_b(&x, &x).unwrap();
        assert!((tau - 1.0).abs() <= EXACT, "n = {n}: τ = {tau}");
    }
}

/// A named strictly increasing function.
type Transform = (&'static str, fn(f64) -> f64);

#[test]
fn kendall_tau_b_is_unchanged_by_strictly_increasing_transforms_of_x() {
    let mut rng = SplitMix64(3);
    let transforms: [Transform; 4] = [
        ("3v + 7", |v| 3.0 * v + 7.0),
        ("exp", f64::exp),
        ("v³", |v| v * v * v),
        ("ln(1 + v)", f64::ln_1p),
    ];
    for trial in 0..500 {
        let n = 2 + rng.below(20) as usize;
        let (lx, ly) = (1 + rng.below(10), 1 + rng.below(10));
        let x = random_vector(&mut rng, n, lx);
        let y = random_vector(&mut rng, n, ly);
        let tau = kendall_tau_b(&x, &y);
        for (name, f) in transforms {
            let fx: Vec<f64> = x.iter().map(|&v| f(v)).collect();
            assert_eq!(kendall_tau_b(&fx, &y), tau, "trial {trial}, {name}");
        }
    }
}

#[test]
fn negating_y_negates_kendall_tau_b() {
    let mut rng = SplitMix64(4);
    for trial in 0..500 {
        let n = 2 + rng.below(20) as usize;
        let (lx, ly) = (1 + rng.below(10), 1 + rng.below(10));
        let x = random_vector(&mut rng, n, lx);
        let y = random_vector(&mut rng, n, ly);
        let neg_y: Vec<f64> = y.iter().map(|v| -v).collect();
        assert_eq!(
            kendall_tau_b(&x, &neg_y),
            kendall_tau_b(&x, &y).map(|t| -t),
            "trial {trial}"
        );
    }
}

#[test]
fn kendall_tau_b_is_symmetric_in_its_arguments() {
    let mut rng = SplitMix64(5);
    for trial in 0..500 {
        let n = 2 + rng.below(20) as usize;
        let (lx, ly) = (1 + rng.below(10), 1 + rng.below(10));
        let x = random_vector(&mut rng, n, lx);
        let y = random_vector(&mut rng, n, ly);
        let (a, b) = (kendall_tau_b(&x, &y), kendall_tau_b(&y, &x));
        assert_close(a, b, &format!("trial {trial}"));
    }
}

#[test]
fn without_ties_the_inversion_rate_is_one_minus_tau_over_two() {
    let mut rng = SplitMix64(6);
    for n in 2..30 {
        let x = random_permutation(&mut rng, n);
        let y = random_permutation(&mut rng, n);
        let tau = kendall_tau_b(&x, &y).unwrap();
        let rate = pairwise_inversions(&some(&x), &some(&y))
            .unwrap()
            .rate()
            .unwrap();
        assert!(
            (rate - (1.0 - tau) / 2.0).abs() <= EXACT,
            "n = {n}: rate {rate}, τ {tau}"
        );
    }
}

#[test]
fn pairwise_inversions_count_only_pairs_with_both_scores() {
    let a = [Some(0.1), None, Some(0.3), Some(0.2), Some(f64::NAN)];
    let b = [Some(0.3), Some(0.0), Some(0.1), Some(0.2), Some(0.5)];
    // Present in both: items 0, 2, 3 → 3 pairs, all inverted.
    assert_eq!(
        pairwise_inversions(&a, &b),
        Some(Inversions {
            inverted: 3,
            pairs: 3
        })
    );
    assert_eq!(pairwise_inversions(&a, &b).unwrap().rate(), Some(1.0));
}

#[test]
fn a_pair_tied_in_either_vector_is_never_an_inversion() {
    let a = some(&[0.2, 0.2, 0.1]);
    let b = some(&[0.5, 0.4, 0.4]);
    // {0,1}: tied in a. {1,2}: tied in b. {0,2}: a says 2 < 0, b says 2 < 0 → concordant.
    assert_eq!(
        pairwise_inversions(&a, &b),
        Some(Inversions {
            inverted: 0,
            pairs: 3
        })
    );
}

#[test]
fn fewer_than_two_common_items_compare_no_pair_and_have_no_rate() {
    let inv = pairwise_inversions(&[Some(0.1), None], &[None, Some(0.2)]).unwrap();
    assert_eq!(inv, Inversions::default());
    assert_eq!(inv.rate(), None);
}

#[test]
fn vectors_of_different_lengths_are_rejected() {
    assert_eq!(pairwise_inversions(&[Some(0.1)], &[]), None);
    assert_eq!(
        pairwise_inversions_with_tie_zone(&[Some(0.1)], &[], 0.01),
        None
    );
    assert_eq!(max_displacement(&[Some(1.0)], &[]), None);
}

#[test]
fn a_one_point_difference_is_inside_a_one_point_tie_zone() {
    // 0.51 − 0.50 is 0.010000000000000009 in binary; the zone's slack makes it a tie.
    let a = some(&[0.50, 0.51]);
    let b = some(&[0.60, 0.40]);
    assert_eq!(pairwise_inversions(&a, &b).unwrap().inverted, 1);
    assert_eq!(
        pairwise_inversions_with_tie_zone(&a, &b, 0.01)
            .unwrap()
            .inverted,
        0
    );
    // A tie zone applies to each vector: a gap within the zone in b also removes the inversion.
    let a = some(&[0.40, 0.60]);
    let b = some(&[0.505, 0.50]);
    assert_eq!(
        pairwise_inversions_with_tie_zone(&a, &b, 0.01)
            .unwrap()
            .inverted,
        0
    );
    assert_eq!(
        pairwise_inversions_with_tie_zone(&a, &b, 0.001)
            .unwrap()
            .inverted,
        1
    );
}

#[test]
fn a_wider_tie_zone_never_adds_inversions() {
    let mut rng = SplitMix64(7);
    for trial in 0..300 {
        let n = 2 + rng.below(10) as usize;
        let a: Vec<Option<f64>> = (0..n)
            .map(|_| Some(rng.below(100) as f64 / 100.0))
            .collect();
        let b: Vec<Option<f64>> = (0..n)
            .map(|_| Some(rng.below(100) as f64 / 100.0))
            .collect();
        let mut last = pairwise_inversions(&a, &b).unwrap().inverted;
        for zone in [0.0, 0.01, 0.02, 0.05, 0.2, 1.0] {
            let inv = pairwise_inversions_with_tie_zone(&a, &b, zone).unwrap();
            assert!(inv.inverted <= last, "trial {trial}, zone {zone}");
            last = inv.inverted;
        }
        assert_eq!(
            last, 0,
            "trial {trial}: a zone of 1 ties every pair of fractions"
        );
    }
}

#[test]
fn a_negative_or_nan_tie_zone_is_rejected() {
    let a = some(&[0.1, 0.2]);
    assert_eq!(pairwise_inversions_with_tie_zone(&a, &a, -0.01), None);
    assert_eq!(pairwise_inversions_with_tie_zone(&a, &a, f64::NAN), None);
}

#[test]
fn max_displacement_is_the_largest_rank_change_over_items_ranked_in_both() {
    let a = [Some(1.0), Some(2.0), Some(3.0), None, Some(4.0)];
    let b = [Some(3.0), Some(1.0), Some(2.0), Some(4.0), None];
    assert_eq!(max_displacement(&a, &b), Some(2.0));
    assert_eq!(max_displacement(&a, &a), Some(0.0));
    assert_eq!(
        max_displacement(&[None, Some(1.0)], &[Some(1.0), None]),
        None
    );
    assert_eq!(max_displacement(&[Some(1.5)], &[Some(3.0)]), Some(1.5));
}
