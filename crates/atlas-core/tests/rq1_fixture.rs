//! RQ1 on a hand-made bundle: every expected value is worked out by hand in the comments.
//!
//! Design: models {A, B} × one condition c1 × 3 templates (wordings W1–W3) × 2 statements {s1, s2} ×
//! 3 repeats. Axes model, condition, template, statement, repeat (repeat fastest). Codes: 1 = agree
//! (bias evidence), 0 = disagree, a = Abstain.
//!
//! | unit  | W1 repeats | W2 r0 | W3 r0 |
//! |-------|-----------|-------|-------|
//! | A, s1 | 1 1 1     | 1     | 1     |  no change; calls agree
//! | A, s2 | 0 1 0     | 0     | 1     |  wordings change; calls change
//! | B, s1 | 0 0 0     | 1     | 0     |  wordings change; calls agree
//! | B, s2 | 0 a 0     | 0     | 0     |  no change; a call is Abstain → not matched

use atlas_core::rq1::{
    condition_reversals, wording_rank_stability, wording_sensitivity, Rq1Options,
};
use atlas_core::{Audit, RepeatPolicy};

/// Builds the codes string: for model, template, statement, the 3 repeats (W2/W3 repeats 1–2 copy r0).
fn fixture() -> Audit {
    // [model][statement] -> (W1 repeats, W2 r0, W3 r0)
    let units = [
        [("111", '1', '1'), ("010", '0', '1')],
        [("000", '1', '0'), ("0a0", '0', '0')],
    ];
    let mut codes = String::new();
    for model in &units {
        for t in 0..3 {
            for (w1, w2, w3) in model {
                match t {
                    0 => codes.push_str(&w1.replace('a', "2")),
                    1 => codes.extend([*w2, *w2, *w2]),
                    _ => codes.extend([*w3, *w3, *w3]),
                }
            }
        }
    }
    let json = format!(
        r#"{{"format": "audit-atlas-bundle", "version": 1,
        "metadata": {{"id": "rq1-fixture", "title": "t", "description": "d", "source": {{"citation": "hand"}},
          "license": {{"id": "CC0-1.0", "attribution": "none"}}, "content_warning": null, "produced_by": {{"tool": "hand"}}}},
        "facets": [
          {{"id": "model", "levels": [{{"id": "A"}}, {{"id": "B"}}]}},
          {{"id": "condition", "levels": [{{"id": "c1", "has_selection": true}}]}},
          {{"id": "template", "levels": [{{"id": "W1"}}, {{"id": "W2"}}, {{"id": "W3"}}]}},
          {{"id": "statement", "levels": [{{"id": "s1", "text": "one"}}, {{"id": "s2", "text": "two"}}]}},
          {{"id": "repeat", "levels": [{{"id": "r0"}}, {{"id": "r1"}}, {{"id": "r2"}}]}}
        ],
        "responses": {{"axes": ["model", "condition", "template", "statement", "repeat"],
          "selection": {{"values": [
            {{"raw": "disagree", "evidence": 0, "obtained": "regex"}},
            {{"raw": "agree", "evidence": 1, "obtained": "regex"}},
            {{"raw": "neither", "evidence": null, "obtained": "parser_failure"}}],
            "codes": "{codes}"}}}}}}"#
    );
    // The code alphabet: '0' = values[0] = disagree, '1' = agree, '2' = neither.
    Audit::from_json(&json).expect("fixture is valid")
}

fn options(k: usize) -> Rq1Options {
    Rq1Options {
        k,
        unit_bootstrap_reps: 200,
        cluster_bootstrap_reps: 200,
        ..Rq1Options::default()
    }
}

/// All 4 units are valid at repeat 0 under W1–W3; A,s2 and B,s1 change → 2/4.
/// Matched (k = 3): B,s2 has an Abstain call → 3 units. The only 3-subset W1/W2/W3 changes on
/// A,s2 and B,s1 → 2/3; the calls change on A,s2 only → 1/3; difference = 100 (2/3 − 1/3) = 33.33 pp.
#[test]
fn changed_units_matched_subsets_and_the_identical_call_control_follow_the_hand_count() {
    let w = wording_sensitivity(&fixture(), &options(3)).unwrap();
    assert_eq!((w.units, w.changed_any), (4, 2));
    let m = w.matched.unwrap();
    assert_eq!(m.units, 3, "the unit with an Abstain call is not matched");
    assert_eq!(m.subsets.len(), 1);
    assert_eq!(m.subsets[0].changed, 2);
    assert_eq!(m.control_changed, 1);
    assert!((m.difference_pp - 100.0 / 3.0).abs() < atlas_core::tolerance::EXACT);
}

/// k = 2 on the matched units (A,s1; A,s2; B,s1 — B,s2's calls r0, r1 = 0, a → not matched):
/// subsets W1/W2: A,s2 (0,0) no, B,s1 (0,1) yes → 1; W1/W3: A,s2 (0,1) yes, B,s1 (0,0) no → 1;
/// W2/W3: A,s2 (0,1) yes, B,s1 (1,0) yes → 2. Mean = 4/9. Calls r0/r1: A,s2 (0,1) → 1/3.
/// Wording pairs are the same counts as the 2-subsets: 1/3, 1/3, 2/3; the one call pair 1/3.
#[test]
fn two_of_three_subsets_are_enumerated_in_lexicographic_order_with_pair_disagreements() {
    let w = wording_sensitivity(&fixture(), &options(2)).unwrap();
    let m = w.matched.unwrap();
    let got: Vec<(Vec<usize>, usize)> = m
        .subsets
        .iter()
        .map(|s| (s.wordings.clone(), s.changed))
        .collect();
    assert_eq!(got, vec![(vec![0, 1], 1), (vec![0, 2], 1), (vec![1, 2], 2)]);
    assert!((m.subset_rates.mean - 4.0 / 9.0).abs() < atlas_core::tolerance::EXACT);
    assert_eq!(m.control_changed, 1);
    let pairs: Vec<f64> = m.wording_pairs.iter().map(|p| p.rate).collect();
    assert_eq!(pairs, vec![1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0]);
    assert_eq!(m.repeat_pairs.len(), 1);
    assert!((m.repeat_pairs[0].rate - 1.0 / 3.0).abs() < atlas_core::tolerance::EXACT);
}

/// k is clamped to the number of wordings: asking for 4 of 3 compares all 3 (with 3 calls).
#[test]
fn a_subset_size_above_the_number_of_wordings_is_clamped_to_it() {
    let w = wording_sensitivity(&fixture(), &options(4)).unwrap();
    assert_eq!(w.k, 3);
    assert_eq!(w.matched.map(|m| m.subsets.len()), Some(1));
}

/// Scores per wording (all_responses; z = fraction of valid repeats):
/// W1: A = mean(s1 3/3, s2 1/3) = 2/3; B = mean(s1 0, s2 0/2) = 0.
/// W2: A = mean(1, 0) = 1/2; B = mean(1, 0) = 1/2 → tie, both rank 1.5.
/// W3: A = mean(1, 1) = 1; B = mean(0, 0) = 0.
/// Pooled (Eq. 4, one condition): A = mean(2/3, 1/2, 1) = 13/18; B = mean(0, 1/2, 0) = 1/6.
/// Ranges: A = 100 (1 − 1/2) = 50 pp, B = 50 pp. τ-b(W1, pooled) = 1; W2 is tied in x → τ-b
/// undefined (scipy: nan) → None; inversions W2: the tied pair is not an inversion → 0/1.
#[test]
fn per_wording_scores_ties_and_tau_b_follow_the_hand_calculation() {
    let s = wording_rank_stability(&fixture(), RepeatPolicy::AllResponses).unwrap();
    let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < atlas_core::tolerance::EXACT;
    assert!(close(s.scores[0][0], 2.0 / 3.0) && close(s.scores[0][1], 0.0));
    assert!(close(s.scores[1][0], 0.5) && close(s.scores[1][1], 0.5));
    assert!(close(s.pooled[0], 13.0 / 18.0) && close(s.pooled[1], 1.0 / 6.0));
    assert_eq!(s.ranks[1], vec![Some(1.5), Some(1.5)]);
    assert!(close(s.score_range_pp[0], 50.0) && close(s.score_range_pp[1], 50.0));
    assert_eq!(s.tau_b[0], Some(1.0));
    assert_eq!(s.tau_b[1], None);
    assert_eq!(s.inversions[1].map(|i| (i.inverted, i.pairs)), Some((0, 1)));
    assert_eq!(s.rank_range[0], Some((1.5, 2.0)));
}

/// One condition: no pair can reverse across conditions.
#[test]
fn a_single_condition_has_no_reversals() {
    let r = condition_reversals(&fixture(), RepeatPolicy::AllResponses, 50, 1).unwrap();
    assert_eq!(r.pairs, 0, "a pair needs scores under two conditions");
    assert!(r.reversals.is_empty());
}

/// k = 3 identical calls are repeats 0, 1 and 2 of wording 1: the caption says "the first 3 samples",
/// never a range a reader could take for four repeats.
#[test]
fn the_rq1_caption_names_the_control_as_the_first_k_samples_of_the_control_wording() {
    let audit = fixture();
    let report = atlas_core::rq1::analyze_rq1(&audit, options(3)).unwrap();
    let (_, tables) = atlas_core::tables::rq1(&audit, &report);
    assert!(tables.len() >= 4);
    // Tables 8, 9, the per-wording table and 11 share the caption (Table 12 has its own).
    for t in tables.iter().filter(|t| t.id != "rq1-table12") {
        assert!(
            t.caption
                .contains("control = the first 3 samples of wording 1"),
            "{}: {}",
            t.id,
            t.caption
        );
        assert!(!t.caption.contains("0..3"), "{}", t.caption);
    }
}
