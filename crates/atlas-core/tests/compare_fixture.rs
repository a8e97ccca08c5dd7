//! `atlas_core::compare` on `tests/fixtures/tiny-bundle.json`, worked by hand, and its errors.
//!
//! The fixture: models `model-a` (A) and `model-b` (B), conditions R1 and S2, statements s0 and s1,
//! templates t0 and t1, repeats r0 and r1 (crossed, every template in every condition). Its Selection
//! codes (`0`, `2` agree = evidence E; `1` disagree = no evidence n; `3`–`5` unsure / parser failure /
//! refusal = Abstain A; `-` no response), read off the code string
//! `01001113020-14111110551100011011` (axes model, condition, statement, template, repeat):
//!
//! ```text
//! unit (c s t r)   A  B   all_responses         first_repeat (r0)    unit_majority (per c s t)
//! R1 s0 t0 r0      E  n   b                     b                    A {E,n} tie → Abstain,
//! R1 s0 t0 r1      n  n   n00                                          B {n,n} → n: invalid A only
//! R1 s0 t1 r0      E  n   b                     b                    A {E,E} → E, B {n,E} tie →
//! R1 s0 t1 r1      E  E   n11                                          Abstain: invalid B only
//! R1 s1 t0 r0      n  A   invalid B only        invalid B only       A n, B {A,A} → Abstain:
//! R1 s1 t0 r1      n  A   invalid B only                               invalid B only
//! R1 s1 t1 r0      n  n   n00                   n00                  A {n,A} → n, B {n,n} → n:
//! R1 s1 t1 r1      A  n   invalid A only                               n00
//! S2 s0 t0 r0      E  E   n11                   n11                  A E, B E: n11
//! S2 s0 t0 r1      E  E   n11
//! S2 s0 t1 r0      E  E   n11                   n11                  A {E,-} → E, B {E,n} tie →
//! S2 s0 t1 r1      -  n   invalid A only                               Abstain: invalid B only
//! S2 s1 t0 r0      n  n   n00                   n00                  A {n,A} → n, B {n,E} tie →
//! S2 s1 t0 r1      A  E   invalid A only                               Abstain: invalid B only
//! S2 s1 t1 r0      n  n   n00                   n00                  A n, B n: n00
//! S2 s1 t1 r1      n  n   n00
//! ```
//!
//! So, A = model-a and B = model-b:
//! * all_responses: n11 = 4, b = 2, c = 0, n00 = 5 (11 matched); invalid A only 3, B only 2, both 0.
//!   McNemar: X ~ Bin(2, ½), P(X ≤ 0) = ¼, exact p = 2 · ¼ = ½, mid-p = ½ − ¼ = ¼. BER on matched
//!   units A = 6/11, B = 4/11, difference 100 · 2/11 pp.
//! * first_repeat: n11 = 2, b = 2, c = 0, n00 = 3 (7 matched); invalid B only 1. Same p-values.
//! * unit_majority: n11 = 1, b = c = 0, n00 = 2 (3 matched); invalid A only 1, B only 4. b + c = 0:
//!   p = 1 with a note.
//!
//! With one pair, BH and Holm equal the raw p.

use std::path::PathBuf;

use atlas_core::compare::{CompareError, CompareOptions, Comparison, TwoByTwo};
use atlas_core::reweight::ConditionWeights;
use atlas_core::tolerance::{CLOSED_FORM, EXACT_PP};
use atlas_core::{Audit, RepeatPolicy};

fn fixture(name: &str) -> Audit {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    Audit::from_json(&text).unwrap()
}

fn options(policy: RepeatPolicy) -> CompareOptions {
    CompareOptions {
        policy,
        reps: 500,
        ..CompareOptions::default()
    }
}

fn table(policy: RepeatPolicy) -> (TwoByTwo, atlas_core::compare::PairComparison) {
    let audit = fixture("tiny-bundle.json");
    let c = Comparison::new(&audit, options(policy)).unwrap();
    let r = c.report(&ConditionWeights::equal(c.basis())).unwrap();
    assert_eq!(r.pairs.len(), 1);
    (r.pairs[0].table, r.pairs[0].clone())
}

#[test]
fn all_responses_pairs_the_rth_samples_and_gives_the_hand_worked_2x2_and_p_values() {
    let (t, p) = table(RepeatPolicy::AllResponses);
    assert_eq!(
        (p.model_a.as_str(), p.model_b.as_str()),
        ("model-a", "model-b")
    );
    assert_eq!((t.both, t.a_only, t.b_only, t.neither), (4, 2, 0, 5));
    assert_eq!(
        (
            t.excluded.invalid_a_only,
            t.excluded.invalid_b_only,
            t.excluded.invalid_both
        ),
        (3, 2, 0)
    );
    assert_eq!(t.design_units(), 16);
    assert!((p.mcnemar.p_exact - 0.5).abs() < CLOSED_FORM);
    assert!((p.mcnemar.p_mid - 0.25).abs() < CLOSED_FORM);
    assert!(p.mcnemar.note.is_none());
    assert_eq!((p.p_bh, p.p_holm), (p.mcnemar.p_exact, p.mcnemar.p_exact));
    assert!(!p.separable, "p = 0.5 is not ≤ 0.05");
    assert!((p.ber_a.unwrap() - 6.0 / 11.0).abs() < CLOSED_FORM);
    assert!((p.ber_b.unwrap() - 4.0 / 11.0).abs() < CLOSED_FORM);
    assert!((p.ber_diff_pp.unwrap() - 200.0 / 11.0).abs() < EXACT_PP);
    // Per condition: R1 has b = 2 (rows 1 and 3), S2 has none.
    assert_eq!(p.conditions[0].table.a_only, 2);
    assert_eq!(
        p.conditions[1].table.a_only + p.conditions[1].table.b_only,
        0
    );
}

#[test]
fn first_repeat_reads_only_repeat_zero() {
    let (t, p) = table(RepeatPolicy::FirstRepeat);
    assert_eq!((t.both, t.a_only, t.b_only, t.neither), (2, 2, 0, 3));
    assert_eq!(
        (
            t.excluded.invalid_a_only,
            t.excluded.invalid_b_only,
            t.excluded.invalid_both
        ),
        (0, 1, 0)
    );
    assert!((p.mcnemar.p_exact - 0.5).abs() < CLOSED_FORM);
}

#[test]
fn unit_majority_without_discordant_units_gives_p_one_and_says_why() {
    let (t, p) = table(RepeatPolicy::UnitMajority);
    assert_eq!((t.both, t.a_only, t.b_only, t.neither), (1, 0, 0, 2));
    assert_eq!(
        (
            t.excluded.invalid_a_only,
            t.excluded.invalid_b_only,
            t.excluded.invalid_both
        ),
        (1, 4, 0)
    );
    assert_eq!((p.mcnemar.p_exact, p.mcnemar.p_mid), (1.0, 1.0));
    let note = p.mcnemar.note.expect("a note for b + c = 0");
    assert!(note.contains("b + c = 0"), "{note}");
}

#[test]
fn the_same_seed_gives_the_same_report_and_another_seed_other_replicates() {
    let audit = fixture("tiny-bundle.json");
    let run = |seed| {
        let c = Comparison::new(
            &audit,
            CompareOptions {
                seed,
                ..options(RepeatPolicy::AllResponses)
            },
        )
        .unwrap();
        let r = c.report(&ConditionWeights::equal(c.basis())).unwrap();
        (c.bootstrap().replicate_means().to_vec(), r)
    };
    let ((reps_a, a), (reps_b, b), (reps_other, other)) = (run(7), run(7), run(8));
    assert_eq!(a, b);
    assert_eq!(a.seed, 7);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&reps_a), bits(&reps_b));
    // With two statements the interval ends are coarse; the replicates themselves differ.
    assert_ne!(
        bits(&reps_a),
        bits(&reps_other),
        "a different seed draws other statements"
    );
    // The point values do not depend on the seed.
    assert_eq!(a.pairs[0].score_diff_pp, other.pairs[0].score_diff_pp);
}

#[test]
fn every_report_names_bundle_policy_weights_seed_and_replicates() {
    let audit = fixture("tiny-bundle.json");
    let c = Comparison::new(&audit, options(RepeatPolicy::FirstRepeat)).unwrap();
    let w = ConditionWeights::custom(c.basis(), vec![2.0, 1.0]).unwrap();
    let r = c.report(&w).unwrap();
    let line = r.provenance();
    for part in [
        &r.bundle,
        "first_repeat",
        "R1=2",
        "20260722",
        "500 replicates",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line:?}");
    }
    let csv = atlas_core::compare::pairs_csv(&r, &[0]);
    let row = csv.lines().nth(1).unwrap();
    assert!(
        row.starts_with(&format!("{},first_repeat,responses,", r.bundle)),
        "{row}"
    );
    assert!(
        row.contains(",20260722,500,model-a,model-b,7,2,2,0,3,0,1,0,"),
        "{row}"
    );
}

#[test]
fn bad_inputs_are_refused_with_a_clear_error() {
    let one = fixture("one-model-bundle.json");
    assert_eq!(
        Comparison::new(&one, options(RepeatPolicy::AllResponses)).unwrap_err(),
        CompareError::TooFewModels { models: 1 }
    );
    let audit = fixture("tiny-bundle.json");
    for alpha in [0.0, 1.0, f64::NAN, -0.1] {
        let err = Comparison::new(
            &audit,
            CompareOptions {
                alpha,
                ..options(RepeatPolicy::AllResponses)
            },
        )
        .unwrap_err();
        assert!(matches!(err, CompareError::BadAlpha(_)), "{err}");
    }
    let c = Comparison::new(&audit, options(RepeatPolicy::AllResponses)).unwrap();
    let err = c.model_index("model-c").unwrap_err();
    assert_eq!(
        err.to_string(),
        "the bundle has no model \"model-c\"; its models are: model-a, model-b"
    );
    assert_eq!(c.model_index("model-b"), Ok(1));
}
