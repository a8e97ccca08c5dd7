//! `atlas_core::reweight` on a small hand-built bundle whose every expected value is worked out below
//! (not taken from the code): presets, weighted scores, ranks, τ-b, inverted pairs, displacement, the
//! validation errors, and the bootstrap's pairing and reproducibility.
//!
//! # The fixture
//!
//! Models {A, B, C, D}; conditions in seed Table 6 style: B0 (sweep `baseline`, `in_reference: false`),
//! T1 and T3 (sweep `task`; T3 has no Selection readout), P1 and P2 (sweep `perspective`); templates
//! t1, t2 crossed with every condition; statements s1, s2; one response per cell. Codes: `0` disagree,
//! `1` agree (bias evidence), `2` Abstain. Each (model, condition) lists t1s1 t1s2 t2s1 t2s2:
//!
//! ```text
//!        B0     T1     T3     P1     P2
//! A      1111   0000   2222   1010   1010
//! B      0000   1010   2222   1000   1110
//! C      1010   1111   2222   0000   0000
//! D      2222   1111   2222   1200   2222
//! ```
//!
//! Condition means ȳ (mean over templates of the mean over statements; Abstain leaves):
//! `1010` → t1 = t2 = 1/2 → 1/2; `1000` → t1 1/2, t2 0 → 1/4; `1110` → t1 1, t2 1/2 → 3/4;
//! `1200` → t1 = 1 (s2 Abstain leaves), t2 = 0 → 1/2 (the pooled rate 1/3 would differ); `2222` → none.
//!
//! ```text
//!        B0    T1    P1    P2
//! A      1     0     1/2   1/2
//! B      0     1/2   1/4   3/4
//! C      1/2   1     0     0
//! D      —     1     1/2   —
//! ```

mod common;

use atlas_core::rank::{pairwise_inversions, Inversions};
use atlas_core::reweight::{
    ConditionWeights, ReweightBasis, ReweightBootstrap, ReweightError, WeightPreset,
};
use atlas_core::stats::{reference_scores, unit_counts};
use atlas_core::{Audit, RepeatPolicy};
use common::{assert_close, assert_fraction, SplitMix64};
use serde_json::{json, Value};

const ROWS: [(&str, [&str; 5]); 4] = [
    ("A", ["1111", "0000", "2222", "1010", "1010"]),
    ("B", ["0000", "1010", "2222", "1000", "1110"]),
    ("C", ["1010", "1111", "2222", "0000", "0000"]),
    ("D", ["2222", "1111", "2222", "1200", "2222"]),
];

fn bundle(rows: &[(&str, [&str; 5])], with_sweeps: bool) -> Audit {
    let codes: String = rows.iter().flat_map(|(_, r)| r.iter().copied()).collect();
    let models: Vec<Value> = rows.iter().map(|(id, _)| json!({ "id": id })).collect();
    let cond = |id: &str, sweep: &str, sel: bool, in_ref: bool| {
        let mut v = json!({ "id": id, "has_selection": sel, "in_reference": in_ref });
        if with_sweeps {
            v["sweep"] = json!(sweep);
        }
        v
    };
    let doc = json!({
        "format": "audit-atlas-bundle",
        "version": 1,
        "metadata": {
            "id": "reweight-fixture",
            "title": "Hand-built re-weighting fixture",
            "description": "4 models x 5 conditions x 2 templates x 2 statements",
            "source": { "citation": "hand-made for atlas-core tests" },
            "license": { "id": "CC0-1.0", "attribution": "none required" },
            "content_warning": null,
            "produced_by": { "tool": "hand" }
        },
        "facets": [
            { "id": "model", "levels": models },
            { "id": "condition", "levels": [
                cond("B0", "baseline", true, false),
                cond("T1", "task", true, true),
                cond("T3", "task", false, false),
                cond("P1", "perspective", true, true),
                cond("P2", "perspective", true, true)
            ]},
            { "id": "template", "levels": [{ "id": "t1" }, { "id": "t2" }] },
            { "id": "statement", "levels": [
                { "id": "s1", "text": "Statement 1." },
                { "id": "s2", "text": "Statement 2." }
            ]}
        ],
        "responses": {
            "axes": ["model", "condition", "template", "statement"],
            "selection": {
                "values": [
                    { "raw": "disagree", "evidence": 0, "obtained": "regex" },
                    { "raw": "agree", "evidence": 1, "obtained": "regex" },
                    { "raw": "unreadable", "evidence": null, "obtained": "parser_failure" }
                ],
                "codes": codes
            }
        }
    });
    Audit::from_json(&doc.to_string()).expect("the fixture is a valid bundle")
}

fn fixture() -> (Audit, ReweightBasis) {
    let audit = bundle(&ROWS, true);
    let basis = ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    (audit, basis)
}

const THIRD: f64 = 1.0 / 3.0;

#[track_caller]
fn assert_scores(got: &[Option<f64>], expected: &[Option<f64>], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for (m, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_fraction(*g, *e, &format!("{what}: model {m}"));
    }
}

#[test]
fn the_condition_means_are_the_hand_worked_ones() {
    let (_, basis) = fixture();
    let expected = [
        [Some(1.0), Some(0.0), None, Some(0.5), Some(0.5)],
        [Some(0.0), Some(0.5), None, Some(0.25), Some(0.75)],
        [Some(0.5), Some(1.0), None, Some(0.0), Some(0.0)],
        [None, Some(1.0), None, Some(0.5), None],
    ];
    for (m, row) in expected.iter().enumerate() {
        for (c, e) in row.iter().enumerate() {
            assert_eq!(
                basis.condition_mean(m, c),
                *e,
                "ȳ of model {m}, condition {c}"
            );
        }
    }
}

#[test]
fn sweeps_are_listed_in_order_of_first_appearance_with_their_selection_conditions() {
    let (_, basis) = fixture();
    let sweeps: Vec<(Option<&str>, &[usize], &[usize])> = basis
        .sweeps()
        .iter()
        .map(|s| {
            (
                s.name.as_deref(),
                s.conditions.as_slice(),
                s.selection_conditions.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        sweeps,
        vec![
            (Some("baseline"), &[0][..], &[0][..]),
            (Some("task"), &[1, 2][..], &[1][..]),
            (Some("perspective"), &[3, 4][..], &[3, 4][..]),
        ]
    );
}

/// Equal weights (Eq. 4) over C_sel = {T1, P1, P2}; B0 is outside the reference, T3 has no Selection:
/// A = (0 + 1/2 + 1/2)/3 = 1/3, B = (1/2 + 1/4 + 3/4)/3 = 1/2, C = (1 + 0 + 0)/3 = 1/3,
/// D = (1 + 1/2)/2 = 3/4 (P2 missing leaves). Ranks: A and C tie at 1.5, B 3, D 4.
#[test]
fn equal_weights_are_eq4_and_reproduce_reference_scores_bit_for_bit() {
    let (audit, basis) = fixture();
    let equal = ConditionWeights::equal(&basis);
    assert_eq!(equal.as_slice(), &[0.0, 1.0, 0.0, 1.0, 1.0]);
    let r = basis.reweight(&equal).unwrap();
    assert_scores(
        &r.scores,
        &[Some(THIRD), Some(0.5), Some(THIRD), Some(0.75)],
        "equal",
    );
    assert_eq!(r.ranks, vec![Some(1.5), Some(3.0), Some(1.5), Some(4.0)]);
    assert_eq!(r.delta_pp, vec![Some(0.0); 4]);
    assert_eq!(r.tau_b, Some(1.0));
    assert!(r.inverted_pairs.is_empty());
    assert_eq!(r.max_displacement, Some(0.0));
    for policy in RepeatPolicy::ALL {
        let units = unit_counts(&audit, policy);
        let basis = ReweightBasis::new(&audit, &units);
        let bits = |v: &[Option<f64>]| -> Vec<Option<u64>> {
            v.iter().map(|x| x.map(f64::to_bits)).collect()
        };
        assert_eq!(
            bits(&basis.scores(&ConditionWeights::equal(&basis)).unwrap()),
            bits(&reference_scores(&audit, &units, None)),
            "{policy:?}"
        );
    }
}

/// Baseline only = weight on B0: A 1, B 0, C 1/2, D none (B0 all Abstain). Ranks B 1, C 2, A 3.
/// Against equal (A 1/3, B 1/2, C 1/3) over A, B, C: A–B discordant, A–C tied in equal only (T_x = 1),
/// B–C discordant: P = 0, Q = 2, τ-b = −2 / √((0+2+1)(0+2+0)) = −2/√6. Inverted: (A, B) and (B, C) of 3
/// pairs. Displacement, both ranked on {A, B, C}: equal A 1.5, B 3, C 1.5 → |3−1.5|, |1−3|, |2−1.5| → 2.
/// Δ: A +66.67 pp, B −50 pp, C +16.67 pp.
#[test]
fn baseline_only_reverses_two_pairs_as_worked_by_hand() {
    let (_, basis) = fixture();
    let w = ConditionWeights::baseline_only(&basis).unwrap();
    assert_eq!(w.as_slice(), &[1.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(w.preset(), &WeightPreset::BaselineOnly);
    let r = basis.reweight(&w).unwrap();
    assert_scores(&r.scores, &[Some(1.0), Some(0.0), Some(0.5), None], "B0");
    assert_eq!(r.ranks, vec![Some(3.0), Some(1.0), Some(2.0), None]);
    assert_close(r.tau_b, Some(-2.0 / 6f64.sqrt()), "τ-b");
    assert_eq!(r.inverted_pairs, vec![(0, 1), (1, 2)]);
    assert_eq!(
        r.inversions,
        Inversions {
            inverted: 2,
            pairs: 3
        }
    );
    assert_eq!(r.max_displacement, Some(2.0));
    let delta: Vec<Option<f64>> = r.delta_pp.clone();
    assert_close(delta[0], Some(100.0 * (1.0 - THIRD)), "Δ A");
    assert_close(delta[1], Some(-50.0), "Δ B");
    assert_close(delta[2], Some(100.0 * (0.5 - THIRD)), "Δ C");
    assert_eq!(delta[3], None);
}

/// Task only = T1 (T3 has no Selection and stays 0): A 0, B 1/2, C 1, D 1; ranks A 1, B 2, C 3.5, D 3.5.
/// Against equal (1/3, 1/2, 1/3, 3/4), six pairs: A–B, A–D, B–D concordant; A–C tied in equal only;
/// B–C discordant; C–D tied in task only. P = 3, Q = 1, T_x = T_y = 1: τ-b = 2/√(5·5) = 0.4. Inverted:
/// (B, C). Displacement: |1−1.5|, |2−3|, |3.5−1.5|, |3.5−4| → 2.
#[test]
fn task_only_weighs_only_the_selection_conditions_of_the_task_sweep() {
    let (_, basis) = fixture();
    let w = ConditionWeights::sweep_only(&basis, "task").unwrap();
    assert_eq!(w.as_slice(), &[0.0, 1.0, 0.0, 0.0, 0.0]);
    let r = basis.reweight(&w).unwrap();
    assert_scores(
        &r.scores,
        &[Some(0.0), Some(0.5), Some(1.0), Some(1.0)],
        "T",
    );
    assert_eq!(r.ranks, vec![Some(1.0), Some(2.0), Some(3.5), Some(3.5)]);
    assert_close(r.tau_b, Some(0.4), "τ-b");
    assert_eq!(r.inverted_pairs, vec![(1, 2)]);
    assert_eq!(r.inversions.pairs, 6);
    assert_eq!(r.max_displacement, Some(2.0));
}

/// Perspective only = P1, P2: A 1/2, B (1/4 + 3/4)/2 = 1/2, C 0, D 1/2 (P2 missing); ranks C 1, A B D 3.
/// Against equal: A–B, A–D, B–D tied in perspective only (T_y = 3), A–C tied in equal only (T_x = 1),
/// B–C and C–D concordant (P = 2): τ-b = 2/√(3·5) = 2/√15; nothing inverted (ties never are).
/// Displacement: |3−1.5|, |3−3|, |1−1.5|, |3−4| → 1.5.
#[test]
fn perspective_only_ties_three_models_and_inverts_nothing() {
    let (_, basis) = fixture();
    let w = ConditionWeights::sweep_only(&basis, "perspective").unwrap();
    let r = basis.reweight(&w).unwrap();
    assert_scores(
        &r.scores,
        &[Some(0.5), Some(0.5), Some(0.0), Some(0.5)],
        "P",
    );
    assert_eq!(r.ranks, vec![Some(3.0), Some(3.0), Some(1.0), Some(3.0)]);
    assert_close(r.tau_b, Some(2.0 / 15f64.sqrt()), "τ-b");
    assert!(r.inverted_pairs.is_empty());
    assert_eq!(r.max_displacement, Some(1.5));
}

/// Per sweep (baseline 0, task 1, perspective 1): task's one Selection condition T1 gets 1, P1 and P2
/// get 1/2 each → weights (0, 1, 0, 1/2, 1/2). A = (0 + 1/4 + 1/4)/2 = 1/4, B = (1/2 + 1/8 + 3/8)/2 = 1/2,
/// C = (1 + 0 + 0)/2 = 1/2, D = (1 + 1/4)/(1 + 1/2) = 5/6 (P2 missing: its weight leaves the sum).
/// Ranks A 1, B C 2.5, D 4; vs equal: P = 4 (A–B, A–D, B–D, C–D), A–C T_x, B–C T_y: τ-b = 4/5.
#[test]
fn per_sweep_weights_spread_over_each_sweeps_selection_conditions() {
    let (_, basis) = fixture();
    let w = ConditionWeights::per_sweep(&basis, &[0.0, 1.0, 1.0]).unwrap();
    assert_eq!(w.as_slice(), &[0.0, 1.0, 0.0, 0.5, 0.5]);
    let r = basis.reweight(&w).unwrap();
    assert_scores(
        &r.scores,
        &[Some(0.25), Some(0.5), Some(0.5), Some(5.0 / 6.0)],
        "per sweep",
    );
    assert_eq!(r.ranks, vec![Some(1.0), Some(2.5), Some(2.5), Some(4.0)]);
    assert_close(r.tau_b, Some(0.8), "τ-b");
    assert!(r.inverted_pairs.is_empty());
    assert_eq!(
        w.describe(&basis),
        "per sweep: baseline=0, task=1, perspective=1"
    );
}

/// Custom (B0 1, P2 3): A = (1 + 3/2)/4 = 5/8, B = (0 + 9/4)/4 = 9/16, C = (1/2 + 0)/4 = 1/8, D none.
#[test]
fn custom_weights_may_include_the_baseline_outside_eq4() {
    let (_, basis) = fixture();
    let w = ConditionWeights::custom(&basis, vec![1.0, 0.0, 0.0, 0.0, 3.0]).unwrap();
    let r = basis.reweight(&w).unwrap();
    assert_scores(
        &r.scores,
        &[Some(0.625), Some(0.5625), Some(0.125), None],
        "custom",
    );
    assert_eq!(w.describe(&basis), "custom: B0=1, P2=3");
}

/// Weights that are zero outside C_sel are exactly `reference_scores(…, Some(w))`.
#[test]
fn weights_inside_the_reference_reproduce_weighted_reference_scores_bit_for_bit() {
    let (audit, basis) = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    for w in [
        vec![0.0, 2.0, 0.0, 1.0, 0.5],
        vec![0.0, 0.0, 0.0, 1.0, 0.0],
        vec![0.0, 0.1, 0.0, 0.2, 0.7],
    ] {
        let weights = ConditionWeights::custom(&basis, w.clone()).unwrap();
        let got: Vec<Option<u64>> = basis
            .scores(&weights)
            .unwrap()
            .iter()
            .map(|x| x.map(f64::to_bits))
            .collect();
        let expected: Vec<Option<u64>> = reference_scores(&audit, &units, Some(&w))
            .iter()
            .map(|x| x.map(f64::to_bits))
            .collect();
        assert_eq!(got, expected, "{w:?}");
    }
}

#[test]
fn invalid_weights_are_rejected_with_an_error_naming_the_condition() {
    let (_, basis) = fixture();
    let custom = |w: Vec<f64>| ConditionWeights::custom(&basis, w).unwrap_err();
    let e = custom(vec![0.0, 1.0, 0.0, -1.0, 0.0]);
    assert_eq!(
        e,
        ReweightError::Negative {
            condition: "P1".into(),
            value: -1.0
        }
    );
    assert!(e.to_string().contains("\"P1\""), "{e}");
    let e = custom(vec![0.0, f64::NAN, 0.0, 1.0, 0.0]);
    assert!(
        matches!(&e, ReweightError::NotFinite { condition, value } if condition == "T1" && value.is_nan()),
        "{e:?}"
    );
    assert!(e.to_string().contains("\"T1\""), "{e}");
    assert!(matches!(
        custom(vec![0.0, 0.0, 0.0, f64::INFINITY, 0.0]),
        ReweightError::NotFinite { condition, .. } if condition == "P1"
    ));
    let e = custom(vec![0.0, 1.0, 2.0, 0.0, 0.0]);
    assert_eq!(
        e,
        ReweightError::NoSelection {
            condition: "T3".into(),
            value: 2.0
        }
    );
    assert!(e.to_string().contains("\"T3\""), "{e}");
    assert_eq!(custom(vec![0.0; 5]), ReweightError::AllZero);
    assert_eq!(
        custom(vec![1.0; 4]),
        ReweightError::Length {
            given: 4,
            conditions: 5
        }
    );
    assert_eq!(
        custom(vec![f64::MAX, f64::MAX, 0.0, 0.0, 0.0]),
        ReweightError::TooLarge
    );
    assert_eq!(
        ConditionWeights::sweep_only(&basis, "role").unwrap_err(),
        ReweightError::UnknownSweep {
            sweep: "role".into()
        }
    );
    assert_eq!(
        ConditionWeights::per_sweep(&basis, &[1.0, 1.0]).unwrap_err(),
        ReweightError::SweepLength {
            given: 2,
            sweeps: 3
        }
    );
    assert_eq!(
        ConditionWeights::per_sweep(&basis, &[0.0, -1.0, 1.0]).unwrap_err(),
        ReweightError::BadSweepWeight {
            sweep: "task".into(),
            value: -1.0
        }
    );
    assert_eq!(
        ConditionWeights::per_sweep(&basis, &[0.0, 0.0, 0.0]).unwrap_err(),
        ReweightError::AllZero
    );
}

#[test]
fn a_bundle_without_a_baseline_sweep_has_no_baseline_preset() {
    let audit = bundle(&ROWS, false);
    let basis = ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    assert_eq!(
        ConditionWeights::baseline_only(&basis).unwrap_err(),
        ReweightError::NoBaseline
    );
    // Without sweep attributes every condition is in the one unnamed sweep.
    assert_eq!(basis.sweeps().len(), 1);
    assert_eq!(basis.sweeps()[0].name, None);
    assert_eq!(basis.sweeps()[0].selection_conditions, vec![0, 1, 3, 4]);
}

#[test]
fn weights_built_for_another_bundle_are_rejected_not_misread() {
    let (_, basis) = fixture();
    let tiny_text = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/tiny-bundle.json"),
    )
    .unwrap();
    let tiny = Audit::from_json(&tiny_text).unwrap();
    let tiny_basis = ReweightBasis::from_audit(&tiny, RepeatPolicy::AllResponses);
    let tiny_weights = ConditionWeights::equal(&tiny_basis);
    assert_eq!(
        basis.reweight(&tiny_weights).unwrap_err(),
        ReweightError::Length {
            given: 2,
            conditions: 5
        }
    );
}

#[test]
fn presets_round_trip_through_their_serialised_form() {
    let (_, basis) = fixture();
    for preset in [
        WeightPreset::Equal,
        WeightPreset::BaselineOnly,
        WeightPreset::SweepOnly {
            sweep: "task".into(),
        },
        WeightPreset::PerSweep {
            weights: vec![0.0, 2.0, 1.0],
        },
    ] {
        let text = serde_json::to_string(&preset).unwrap();
        let back: WeightPreset = serde_json::from_str(&text).unwrap();
        assert_eq!(back, preset, "{text}");
        let w = ConditionWeights::from_preset(&basis, &back, None).unwrap();
        assert_eq!(w.preset(), &preset);
    }
    assert_eq!(
        serde_json::to_string(&WeightPreset::SweepOnly {
            sweep: "task".into()
        })
        .unwrap(),
        r#"{"preset":"sweep_only","sweep":"task"}"#
    );
}

/// Inverted pairs are exactly the pairs `rank::pairwise_inversions` counts, on random vectors with ties
/// and missing scores (inputs from the tests' own SplitMix64).
#[test]
fn inverted_pairs_list_exactly_the_pairs_that_pairwise_inversions_counts() {
    let mut rng = SplitMix64(20_260_722);
    for _ in 0..500 {
        let n = 1 + rng.below(9) as usize;
        let mut draw = || -> Vec<Option<f64>> {
            (0..n)
                .map(|_| match rng.below(6) {
                    0 => None,
                    k => Some(f64::from(k as u32) / 4.0),
                })
                .collect()
        };
        let a = draw();
        let b = draw();
        let pairs = atlas_core::rank::inverted_pairs(&a, &b).unwrap();
        let count = pairwise_inversions(&a, &b).unwrap();
        assert_eq!(pairs.len(), count.inverted, "{a:?} {b:?}");
        for &(i, j) in &pairs {
            assert!(i < j);
            let (ai, aj, bi, bj) = (a[i].unwrap(), a[j].unwrap(), b[i].unwrap(), b[j].unwrap());
            assert!((ai - aj) * (bi - bj) < 0.0, "{a:?} {b:?} ({i}, {j})");
        }
    }
    assert_eq!(
        atlas_core::rank::inverted_pairs(&[Some(1.0)], &[Some(1.0), None]),
        None
    );
}

/// Two models with identical responses get identical scores in every replicate: one draw of statements
/// serves all models (paired), and the same seed gives the same replicates.
#[test]
fn bootstrap_replicates_are_paired_across_models_and_reproducible() {
    let rows = [ROWS[1], ("B-copy", ROWS[1].1), ROWS[0]];
    let audit = bundle(&rows, true);
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let basis = ReweightBasis::new(&audit, &units);
    let w = ConditionWeights::equal(&basis);
    let run = ReweightBootstrap::run(&audit, &units, 300, 7).unwrap();
    let reps = run.replicate_scores(&w).unwrap();
    assert_eq!(reps.len(), 300);
    assert!(reps.iter().all(|r| r[0] == r[1]));
    // With two statements a replicate draws s1 twice, s2 twice, or each once. B's equal-weight score
    // on s1 only: T1 (t1 1, t2 1) = 1, P1 (1, 0) = 1/2, P2 (1, 1) = 1 → 5/6; on s2 only: T1 0, P1 0,
    // P2 (1, 0) = 1/2 → 1/6; on both: 1/2. So exactly three values, each likely to occur in 300 draws.
    let mut distinct: Vec<f64> = reps.iter().filter_map(|r| r[0]).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{distinct:?}");
    let again = ReweightBootstrap::run(&audit, &units, 300, 7).unwrap();
    assert_eq!(again.replicate_scores(&w).unwrap(), reps);
    let other = ReweightBootstrap::run(&audit, &units, 300, 8).unwrap();
    assert_ne!(other.replicate_scores(&w).unwrap(), reps);
    let iv = run.intervals(&w, 0.95).unwrap();
    assert_eq!(iv[0], iv[1]);
    let iv0 = iv[0].unwrap();
    assert!(
        iv0.lo <= basis.equal_scores()[0].unwrap() && basis.equal_scores()[0].unwrap() <= iv0.hi
    );
    assert_eq!(iv0.replicates, 300);
    assert_eq!(
        run.intervals(&w, 1.0).unwrap_err(),
        ReweightError::BadLevel(1.0)
    );
}

/// A run moved as its flat replicate means (worker → page) gives the same intervals.
#[test]
fn a_bootstrap_rebuilt_from_its_replicate_means_gives_the_same_intervals() {
    let (audit, basis) = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let run = ReweightBootstrap::run(&audit, &units, 40, 11).unwrap();
    let moved = ReweightBootstrap::from_replicate_means(
        run.seed(),
        basis.models().len(),
        basis.conditions().len(),
        run.replicate_means().to_vec(),
    )
    .unwrap();
    assert_eq!(moved.reps(), 40);
    let w = ConditionWeights::sweep_only(&basis, "task").unwrap();
    assert_eq!(
        moved.intervals(&w, 0.95).unwrap(),
        run.intervals(&w, 0.95).unwrap()
    );
    assert_eq!(
        ReweightBootstrap::from_replicate_means(1, 4, 5, vec![0.0; 21]).unwrap_err(),
        ReweightError::ReplicateShape {
            len: 21,
            per_replicate: 20
        }
    );
}

#[test]
fn a_cancelled_bootstrap_stops_with_an_error() {
    let (audit, _) = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let mut calls = Vec::new();
    let e = ReweightBootstrap::run_with_progress(&audit, &units, 200, 1, &mut |done, total| {
        calls.push((done, total));
        done < 128
    })
    .unwrap_err();
    assert_eq!(e, ReweightError::Cancelled);
    assert_eq!(calls, vec![(64, 200), (128, 200)]);
}

/// A model with no valid Selection under any weighted condition has no score in any replicate and so
/// no interval.
#[test]
fn a_model_without_a_score_has_no_interval() {
    let (audit, basis) = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let run = ReweightBootstrap::run(&audit, &units, 50, 3).unwrap();
    let iv = run
        .intervals(&ConditionWeights::baseline_only(&basis).unwrap(), 0.95)
        .unwrap();
    assert_eq!(iv[3], None);
    assert!(iv[0].is_some());
}

// Weight specs and presets (`atlas_core::reweight::spec`): the parsing and matching shared by `atlas
// reweight` and the app's re-weighting panel, on the fixture above.

use atlas_core::reweight::{
    format_weight, format_weight_list, parse_weight_list, weights_from_entries, PresetKind,
    WeightEntry, WeightOf, WeightSpecError, WeightsRequest,
};

/// `T1=2` over the equal weights [B0 0, T1 1, T3 0, P1 1, P2 1] gives [0, 2, 0, 1, 1]:
/// A = (2·0 + 1/2 + 1/2)/4 = 1/4, B = (2·1/2 + 1/4 + 3/4)/4 = 1/2, C = (2·1 + 0 + 0)/4 = 1/2,
/// D = (2·1 + 1/2)/3 = 5/6 (P2 missing leaves, its weight with it).
const T1_TWICE: [Option<f64>; 4] = [Some(0.25), Some(0.5), Some(0.5), Some(5.0 / 6.0)];

/// Per sweep baseline 1, task 2, perspective 1: B0 1/1, T1 2/1 (T3 has no Selection), P1 = P2 = 1/2:
/// A = (1 + 0 + 1/4 + 1/4)/4 = 3/8, B = (0 + 1 + 1/8 + 3/8)/4 = 3/8, C = (1/2 + 2 + 0 + 0)/4 = 5/8,
/// D = (2·1 + 1/2·1/2)/(2 + 1/2) = 9/10 (B0 and P2 missing).
const TASK_TWICE: [Option<f64>; 4] = [Some(0.375), Some(0.375), Some(0.625), Some(0.9)];

#[test]
fn a_condition_weight_list_overrides_the_listed_conditions_and_keeps_eq4_for_the_rest() {
    let (_, basis) = fixture();
    let w = WeightsRequest::parse_conditions("T1=2")
        .unwrap()
        .weights(&basis)
        .unwrap();
    assert_eq!(w.as_slice(), &[0.0, 2.0, 0.0, 1.0, 1.0]);
    assert_eq!(w.preset(), &WeightPreset::Custom);
    assert_scores(&basis.scores(&w).unwrap(), &T1_TWICE, "T1=2");
    // Spaces, empty entries and a repeated name (the last wins) as typed on a command line.
    let w = WeightsRequest::parse_conditions(" T1 = 1 ,, T1=2 ,")
        .unwrap()
        .weights(&basis)
        .unwrap();
    assert_eq!(w.as_slice(), &[0.0, 2.0, 0.0, 1.0, 1.0]);
}

#[test]
fn preset_texts_build_the_weights_of_their_constructors() {
    let (_, basis) = fixture();
    let weights = |text: &str| {
        WeightsRequest::parse_preset(text)
            .unwrap()
            .weights(&basis)
            .unwrap()
    };
    assert_eq!(weights(" equal ").as_slice(), &[0.0, 1.0, 0.0, 1.0, 1.0]);
    assert_eq!(weights("baseline").as_slice(), &[1.0, 0.0, 0.0, 0.0, 0.0]);
    let task = weights("sweep: task");
    assert_eq!(task.as_slice(), &[0.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(
        task.preset(),
        &WeightPreset::SweepOnly {
            sweep: "task".into()
        }
    );
    let per_sweep = weights("per-sweep:task=2");
    assert_eq!(per_sweep.as_slice(), &[1.0, 2.0, 0.0, 0.5, 0.5]);
    assert_scores(
        &basis.scores(&per_sweep).unwrap(),
        &TASK_TWICE,
        "per-sweep:task=2",
    );
}

#[test]
fn bad_weight_specs_are_errors_naming_the_entry_condition_or_sweep() {
    let (_, basis) = fixture();
    let message = |r: Result<ConditionWeights, WeightSpecError>| r.unwrap_err().to_string();
    let request =
        |spec: &str| WeightsRequest::parse_conditions(spec).and_then(|r| r.weights(&basis));
    assert_eq!(
        message(request("T1")),
        "weight \"T1\": expected NAME=WEIGHT"
    );
    assert_eq!(
        message(request("T1=-1")),
        "the weight of \"T1\": “-1” is negative: use 0 or more"
    );
    assert_eq!(
        message(request("T1=1e")),
        "the weight of \"T1\": “1e” is not a complete number yet"
    );
    assert_eq!(
        message(request("X9=1")),
        "no condition \"X9\" in the bundle (conditions: B0, T1, T3, P1, P2)"
    );
    assert_eq!(
        request("T3=1").unwrap_err(),
        WeightSpecError::Reweight(ReweightError::NoSelection {
            condition: "T3".into(),
            value: 1.0
        })
    );
    let preset = |text: &str| WeightsRequest::parse_preset(text).and_then(|r| r.weights(&basis));
    assert_eq!(
        message(preset("per-sweep:nosuch=2")),
        "no sweep \"nosuch\" in the bundle (sweeps: baseline, task, perspective)"
    );
    assert_eq!(
        message(preset("bogus")),
        "unknown preset \"bogus\": use equal, baseline, sweep:NAME or per-sweep:NAME=W,…"
    );
    assert_eq!(
        preset("sweep:nosuch").unwrap_err(),
        WeightSpecError::Reweight(ReweightError::UnknownSweep {
            sweep: "nosuch".into()
        })
    );
}

#[test]
fn the_panels_entries_give_the_same_weights_as_the_equivalent_spec() {
    let (_, basis) = fixture();
    let text = |t: &str| WeightEntry::Text(t.into());
    // A slider's number and a typed text of the same weight are the same weights; T3 (no Selection,
    // its field disabled) may stay blank.
    let custom = weights_from_entries(
        &basis,
        PresetKind::Custom,
        "",
        &[
            WeightEntry::Value(0.0),
            WeightEntry::Value(2.0),
            text(" "),
            text("1"),
            text("1."),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(custom.as_slice(), &[0.0, 2.0, 0.0, 1.0, 1.0]);
    assert_scores(&basis.scores(&custom).unwrap(), &T1_TWICE, "custom entries");
    // A missing sweep entry weighs 1.
    let per_sweep = weights_from_entries(
        &basis,
        PresetKind::PerSweep,
        "",
        &[],
        &[text("1"), WeightEntry::Value(2.0)],
    )
    .unwrap();
    assert_eq!(per_sweep.as_slice(), &[1.0, 2.0, 0.0, 0.5, 0.5]);
    assert_scores(
        &basis.scores(&per_sweep).unwrap(),
        &TASK_TWICE,
        "per-sweep entries",
    );
    let sweep = weights_from_entries(&basis, PresetKind::Sweep, "perspective", &[], &[]).unwrap();
    assert_eq!(sweep.as_slice(), &[0.0, 0.0, 0.0, 1.0, 1.0]);
    let equal = weights_from_entries(&basis, PresetKind::Equal, "", &[text("x")], &[]).unwrap();
    assert_eq!(
        equal,
        ConditionWeights::equal(&basis),
        "entries are ignored"
    );
}

#[test]
fn a_bad_entry_names_its_condition_or_sweep_and_a_bad_number_is_refused_by_the_constructor() {
    let (_, basis) = fixture();
    let text = |t: &str| WeightEntry::Text(t.into());
    let custom = |entries: &[WeightEntry]| {
        weights_from_entries(&basis, PresetKind::Custom, "", entries, &[]).unwrap_err()
    };
    assert_eq!(
        custom(&[text(""), text("1"), text(""), text("1"), text("1")]).to_string(),
        "the weight of condition \"B0\": empty: type a number"
    );
    assert_eq!(
        custom(&[text("0"), text("0,5"), text(""), text("1"), text("1")]).to_string(),
        "the weight of condition \"T1\": “0,5” uses a comma as the decimal separator: write 0.5"
    );
    assert_eq!(
        custom(&[
            text("0"),
            WeightEntry::Value(-1.0),
            text(""),
            text("1"),
            text("1")
        ]),
        WeightSpecError::Reweight(ReweightError::Negative {
            condition: "T1".into(),
            value: -1.0
        })
    );
    let err = weights_from_entries(
        &basis,
        PresetKind::PerSweep,
        "",
        &[],
        &[text("1"), text("-1")],
    )
    .unwrap_err();
    assert_eq!(
        err,
        WeightSpecError::BadNumber {
            of: WeightOf::Sweep("task".into()),
            problem: atlas_core::number::NumberError::Negative { text: "-1".into() }
        }
    );
    assert_eq!(
        err.to_string(),
        "the weight of sweep \"task\": “-1” is negative: use 0 or more"
    );
}

#[test]
fn a_weight_list_written_out_reads_back_to_the_same_floats() {
    let pairs = [
        ("a", 0.1),
        ("b", 1.0 / 3.0),
        ("c", 2.5),
        ("d", 1e-3),
        ("e", 2.0),
    ];
    let text = format_weight_list(pairs);
    assert_eq!(text, "a=0.1,b=0.3333333333333333,c=2.5,d=0.001,e=2");
    let back = parse_weight_list(&text).unwrap();
    for ((name, w), (back_name, back_w)) in pairs.iter().zip(&back) {
        assert_eq!((*name, w.to_bits()), (back_name.as_str(), back_w.to_bits()));
    }
    assert_eq!(format_weight(0.5), "0.5");
    assert_eq!(WeightEntry::Value(0.1).text(), "0.1");
    assert_eq!(
        WeightEntry::Text("0.50".into()).text(),
        "0.50",
        "a typed text stays as typed"
    );
}

#[test]
fn presets_have_one_key_and_label_each_and_their_weights_know_their_kind() {
    let keys: Vec<&str> = PresetKind::ALL.iter().map(|p| p.key()).collect();
    assert_eq!(keys, ["equal", "baseline", "sweep", "per_sweep", "custom"]);
    let labels: Vec<&str> = PresetKind::ALL.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "Equal weights (Eq. 4)",
            "Baseline only",
            "One sweep only",
            "Per sweep",
            "Custom"
        ]
    );
    for p in PresetKind::ALL {
        assert_eq!(PresetKind::from_key(p.key()), Some(p));
    }
    assert_eq!(PresetKind::from_key("per-sweep"), None);
    let (_, basis) = fixture();
    let kinds: Vec<PresetKind> = [
        ConditionWeights::equal(&basis),
        ConditionWeights::baseline_only(&basis).unwrap(),
        ConditionWeights::sweep_only(&basis, "task").unwrap(),
        ConditionWeights::per_sweep(&basis, &[1.0, 1.0, 1.0]).unwrap(),
        ConditionWeights::custom(&basis, vec![0.0, 1.0, 0.0, 0.0, 0.0]).unwrap(),
    ]
    .iter()
    .map(|w| w.preset().kind())
    .collect();
    assert_eq!(kinds, PresetKind::ALL);
}
