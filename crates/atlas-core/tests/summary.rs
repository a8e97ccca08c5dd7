//! `atlas_core::summary` — the table of `atlas stats` and of the app's summary — on hand-calculated
//! bundles: the two-model loader fixture (hand calculation below; the browser test of the loader checks
//! the same numbers in wasm32), and the high-Abstain and target fixtures of
//! `tests/fixtures/direction-abstain-fixtures.md` (every number worked out by hand there). Nothing here
//! comes from the crate's own output.

mod common;

use atlas_core::abstain::AbstainThreshold;
use atlas_core::summary::summarize;
use atlas_core::tolerance::CLOSED_FORM;
use atlas_core::{Audit, RepeatPolicy};
use common::assert_fraction;

/// `tests/fixtures/loader-tiny-bundle.json` (the loader's browser tests read it too): 2 models × 2
/// conditions × 2 statements × 2 repeats. Condition c2 has no Selection readout (like Explain), so it
/// has no responses (`-`) and stays out of the reference score.
/// Codes, axes model, condition, statement, repeat (last fastest):
///   model a: c1 = s1:[agree, disagree] s2:[agree, neither]   c2 = ----
///   model b: c1 = s1:[disagree, disagree] s2:[neither, neither]   c2 = ----
const TINY: &str = include_str!("../../../tests/fixtures/loader-tiny-bundle.json");

fn fixture(name: &str) -> Audit {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Audit::from_json(&text).expect("the fixture is a valid bundle")
}

fn threshold(t: f64) -> AbstainThreshold {
    AbstainThreshold::new(t).expect("a fraction in [0, 1]")
}

/// Hand calculation (policy all_responses):
///   a/c1: valid = agree, disagree, agree = 3, bias 2, Abstain 1 → BER 2/3.
///   b/c1: valid = disagree, disagree = 2, bias 0, Abstain 2 → BER 0.
///   Eq. 4 over c1 only (c2 has no Selection): a = mean(s1 1/2, s2 1/1) = 0.75; b = mean(s1 0) = 0
///   (s2 all Abstain → missing, not 0). Ranks: b = 1, a = 2.
/// first_repeat: a/c1 = agree, agree → 1.0 (2 valid); b/c1 = disagree, neither → 0/1, Abstain 1.
#[test]
fn the_summary_has_the_hand_calculated_ber_reference_scores_and_ranks() {
    let audit = Audit::from_bytes(TINY.as_bytes()).expect("the fixture is valid");
    let s = summarize(
        &audit,
        RepeatPolicy::AllResponses,
        AbstainThreshold::default(),
    );
    assert_eq!(s.policy, RepeatPolicy::AllResponses);
    let a = s.table.get(0, 0);
    assert_eq!((a.bias, a.valid, a.abstain), (2, 3, 1));
    assert!((a.ber().unwrap() - 2.0 / 3.0).abs() < CLOSED_FORM);
    let b = s.table.get(1, 0);
    assert_eq!((b.bias, b.valid, b.abstain), (0, 2, 2));
    assert_eq!(s.table.get(0, 1).ber(), None, "no Selection under c2");
    assert_eq!(s.reference, vec![Some(0.75), Some(0.0)]);
    assert_eq!(s.ranks, vec![Some(2.0), Some(1.0)]);
    let f = summarize(
        &audit,
        RepeatPolicy::FirstRepeat,
        AbstainThreshold::default(),
    );
    assert_eq!(f.table.get(0, 0).ber(), Some(1.0));
    let fb = f.table.get(1, 0);
    assert_eq!((fb.bias, fb.valid, fb.abstain), (0, 1, 1));
}

/// Hand calculation (all_responses, default threshold 0.5): a's only reference cell c1 has Abstain
/// share 1/4, b's 2/4 = 0.5 — not strictly above 0.5, so nothing is flagged; cells with a response are
/// a/c1 and b/c1 (c2 has none) → "0 of 2 BER cells flagged; 0 of 2 ranks". At threshold 0.3 b/c1 (0.5)
/// is flagged and b has a rank → 1 of 2 cells, 1 of 2 ranks.
#[test]
fn a_cell_at_exactly_the_threshold_is_not_flagged_and_one_above_it_is() {
    let audit = Audit::from_bytes(TINY.as_bytes()).expect("the fixture is valid");
    let s = summarize(
        &audit,
        RepeatPolicy::AllResponses,
        AbstainThreshold::default(),
    );
    assert_fraction(s.abstain[0].share, Some(0.25), "a's pooled Abstain share");
    assert_fraction(s.abstain[1].share, Some(0.5), "b's pooled Abstain share");
    assert_eq!(s.flagged_cells(), (0, 2));
    assert_eq!((s.flagged_ranks(), s.ranked()), (0, 2));
    assert!(!s.rank_flagged(1));
    let low = summarize(&audit, RepeatPolicy::AllResponses, threshold(0.3));
    assert_eq!(low.flagged_cells(), (1, 2));
    assert_eq!((low.flagged_ranks(), low.ranked()), (1, 2));
    assert!(!low.rank_flagged(0) && low.rank_flagged(1));
    assert!(
        !low.rank_flagged(2),
        "no third model: not flagged, no panic"
    );
}

/// `direction-abstain-fixtures.md`, high-Abstain fixture: Eq. 4 = 0.125, 0.25, 0.45 → ranks 1, 2, 3;
/// pooled reference Abstain shares 0.625, 0, 0.1875; flags at 0.5: 1 of 6 cells, 1 of 3 ranks
/// (model-abstains); at 0.3: 3 of 6, 2 of 3; at 0.8: 0 of 6, 0 of 3.
#[test]
fn the_model_ranked_first_by_abstaining_has_its_rank_flagged_with_the_hand_counts() {
    let audit = fixture("high-abstain-bundle.json");
    let s = summarize(
        &audit,
        RepeatPolicy::AllResponses,
        AbstainThreshold::default(),
    );
    for (m, expected) in [0.125, 0.25, 0.45].into_iter().enumerate() {
        assert_fraction(s.reference[m], Some(expected), &format!("reference {m}"));
    }
    assert_eq!(s.ranks, vec![Some(1.0), Some(2.0), Some(3.0)]);
    for (m, expected) in [0.625, 0.0, 0.1875].into_iter().enumerate() {
        assert_fraction(s.abstain[m].share, Some(expected), &format!("share {m}"));
    }
    assert_eq!(s.flagged_cells(), (1, 6));
    assert_eq!((s.flagged_ranks(), s.ranked()), (1, 3));
    assert_eq!(
        (0..3).map(|m| s.rank_flagged(m)).collect::<Vec<_>>(),
        [true, false, false]
    );
    assert_eq!(
        s.flag_caption(),
        "⚠ = Abstain share above 50 % (the BiAxisBias paper §B.2: an Abstain is missing, so the rate rests on the other answers): 1 of 6 BER cells flagged; 1 of 3 ranks rest on a flagged cell."
    );
    let low = summarize(&audit, RepeatPolicy::AllResponses, threshold(0.3));
    assert_eq!(low.flagged_cells(), (3, 6));
    assert_eq!(low.flagged_ranks(), 2);
    let high = summarize(&audit, RepeatPolicy::AllResponses, threshold(0.8));
    assert_eq!(high.flagged_cells(), (0, 6));
    assert_eq!(high.flagged_ranks(), 0);
}

/// `direction-abstain-fixtures.md`, target fixture: the bundle declares a 50 % target, so the ranks
/// are those of |score − 0.5| = 0, 0.25, 0.375, 0.375 → 1, 2, 3.5, 3.5.
#[test]
fn the_summary_ranks_in_the_bundles_declared_direction() {
    let audit = fixture("target-50-bundle.json");
    let s = summarize(
        &audit,
        RepeatPolicy::AllResponses,
        AbstainThreshold::default(),
    );
    assert!(s.direction.declared);
    for (m, expected) in [0.5, 0.25, 0.875, 0.125].into_iter().enumerate() {
        assert_fraction(s.reference[m], Some(expected), &format!("reference {m}"));
    }
    assert_eq!(s.ranks, vec![Some(1.0), Some(2.0), Some(3.5), Some(3.5)]);
}
