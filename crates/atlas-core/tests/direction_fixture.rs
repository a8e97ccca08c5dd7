//! Score direction and high-Abstain flags on the two hand-designed fixtures
//! `tests/fixtures/target-50-bundle.json` and `tests/fixtures/high-abstain-bundle.json`. Every expected
//! number is worked out by hand in `tests/fixtures/direction-abstain-fixtures.md` (the ranks of the
//! target fixture are also recomputed by scipy in `tests/reference/rank_reference.py`); nothing here
//! comes from the crate's own output.

mod common;

use atlas_core::abstain::{flagged_cells, reference_abstain, AbstainThreshold, CellShare};
use atlas_core::direction::Direction;
use atlas_core::reweight::{ConditionWeights, ReweightBasis};
use atlas_core::rq1::{condition_reversals, wording_rank_stability};
use atlas_core::rq2::{summarize_draws, summarize_draws_in, DesignDraws};
use atlas_core::stats::{ber_by_model_condition, reference_scores, unit_counts};
use atlas_core::{Audit, BundleError, RepeatPolicy};
use common::assert_fraction;
use serde_json::Value;

fn fixture_text(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn target_json() -> Value {
    serde_json::from_str(&fixture_text("target-50-bundle.json")).expect("fixture JSON")
}

/// The target fixture with its `direction` replaced (`None` = removed).
fn target_with(direction: Option<Value>) -> Result<Audit, BundleError> {
    let mut v = target_json();
    let selection = v["responses"]["selection"].as_object_mut().expect("object");
    match direction {
        Some(d) => selection.insert("direction".into(), d),
        None => selection.remove("direction"),
    };
    Audit::from_json(&v.to_string())
}

fn ranks(audit: &Audit) -> Vec<Option<f64>> {
    let units = unit_counts(audit, RepeatPolicy::AllResponses);
    audit
        .direction
        .direction
        .ranks(&reference_scores(audit, &units, None))
}

#[test]
fn a_target_of_fifty_percent_ranks_by_the_distance_from_it_and_says_so() {
    let audit = Audit::from_json(&fixture_text("target-50-bundle.json")).expect("valid");
    assert_eq!(audit.direction.direction, Direction::Target { target: 0.5 });
    assert!(audit.direction.declared);
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let scores = reference_scores(&audit, &units, None);
    for (got, want) in scores.iter().zip([0.5, 0.25, 0.875, 0.125]) {
        assert_fraction(*got, Some(want), "Eq. 4");
    }
    // |score − 0.5| = 0, 0.25, 0.375, 0.375: c and d tie.
    assert_eq!(ranks(&audit), [Some(1.0), Some(2.0), Some(3.5), Some(3.5)]);
    assert_eq!(
        audit.direction.describe(),
        "closest to 50 % is best (ranked by |score − 50 %|; declared by the bundle)"
    );
}

#[test]
fn the_same_scores_rank_lowest_first_without_a_declaration_and_highest_first_with_higher() {
    let lower = target_with(None).expect("valid without direction");
    assert!(!lower.direction.declared);
    assert_eq!(
        lower.direction.describe(),
        "lower is better (default: the bundle declares no direction)"
    );
    assert_eq!(ranks(&lower), [Some(3.0), Some(2.0), Some(4.0), Some(1.0)]);
    let higher = target_with(Some(serde_json::json!({"better": "higher"}))).expect("valid");
    assert_eq!(ranks(&higher), [Some(2.0), Some(3.0), Some(1.0), Some(4.0)]);
    assert_eq!(
        higher.direction.describe(),
        "higher is better (declared by the bundle)"
    );
    let declared_lower = target_with(Some(serde_json::json!({"better": "lower"}))).expect("valid");
    assert_eq!(
        declared_lower.direction.describe(),
        "lower is better (declared by the bundle)"
    );
}

#[test]
fn reversals_across_conditions_compare_distances_from_the_target() {
    let audit = Audit::from_json(&fixture_text("target-50-bundle.json")).expect("valid");
    let r = condition_reversals(&audit, RepeatPolicy::AllResponses, 0, 1).expect("runs");
    assert_eq!(r.pairs, 6);
    assert_eq!(r.reversals.len(), 1, "{:?}", r.reversals);
    let rev = &r.reversals[0];
    assert_eq!(
        (rev.model_a.as_str(), rev.model_b.as_str()),
        ("model-c", "model-d")
    );
    assert_eq!(rev.negative.condition_id, "c1");
    assert!((rev.negative.delta_pp - -25.0).abs() < atlas_core::tolerance::EXACT);
    assert_eq!(rev.positive.condition_id, "c2");
    assert!((rev.positive.delta_pp - 25.0).abs() < atlas_core::tolerance::EXACT);
    assert!(rev.survives_1pp && rev.survives_2pp);
    // Lower is better: c–d differ by +75 pp under both conditions; nothing reverses.
    let lower = target_with(None).expect("valid");
    let r = condition_reversals(&lower, RepeatPolicy::AllResponses, 0, 1).expect("runs");
    assert_eq!((r.pairs, r.reversals.len()), (6, 0));
}

#[test]
fn reweighting_ranks_and_tau_b_follow_the_target() {
    let audit = Audit::from_json(&fixture_text("target-50-bundle.json")).expect("valid");
    let basis = ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    assert_eq!(
        basis.equal_ranks(),
        [Some(1.0), Some(2.0), Some(3.5), Some(3.5)]
    );
    let w = ConditionWeights::custom(&basis, vec![2.0, 1.0]).expect("valid weights");
    let r = basis.reweight(&w).expect("reweights");
    assert_eq!(r.ranks, [Some(1.0), Some(2.0), Some(3.0), Some(4.0)]);
    // 5 concordant pairs, c–d tied in the equal-weight keys only: 5 / sqrt(5 · 6).
    let tau = r.tau_b.expect("defined");
    assert!(
        (tau - 5.0 / 30f64.sqrt()).abs() < atlas_core::tolerance::EXACT,
        "{tau}"
    );
    assert_eq!((r.inversions.inverted, r.inversions.pairs), (0, 6));
    assert!(r.inverted_pairs.is_empty());
}

#[test]
fn rq2_rank_metrics_compare_ranking_keys() {
    // Reference 0.5, 0.25, 0.875; one draw 0.6, 0.1, 0.9. Lower: both order b < a < c, τ-b = 1.
    // Target 0.5: reference keys 0, 0.25, 0.375, draw keys 0.1, 0.4, 0.4 (b–c tied in the draw only):
    // P = 2, Q = 0, T_draw = 1 → τ-b = 2 / sqrt(3 · 2).
    let models = ["a".to_string(), "b".to_string(), "c".to_string()];
    let reference = [Some(0.5), Some(0.25), Some(0.875)];
    let main = vec![vec![Some(0.6), Some(0.1), Some(0.9)]];
    let lower = summarize_draws(&models, &reference, &main, &main, &[], &[], 0.95);
    assert_eq!(lower.tau_b.mean, Some(1.0));
    let target = summarize_draws_in(
        Direction::Target { target: 0.5 },
        &models,
        &reference,
        &DesignDraws {
            main: &main,
            repeat: &main,
            dropped: &[],
            repeat_dropped: &[],
        },
        0.95,
    );
    let tau = target.tau_b.mean.expect("defined");
    assert!(
        (tau - 2.0 / 6f64.sqrt()).abs() < atlas_core::tolerance::EXACT,
        "{tau}"
    );
    // Score errors stay score differences: |0.6 − 0.5|, |0.1 − 0.25|, |0.9 − 0.875| in pp.
    assert_eq!(target.mae_pp.mean, lower.mae_pp.mean);
}

#[test]
fn a_bad_direction_is_refused_naming_the_field() {
    let message = |d: Value| match target_with(Some(d)) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    let m = message(serde_json::json!({"better": "lowest"}));
    assert!(
        m.contains("responses.selection.direction.better")
            && m.contains("unknown variant `lowest`")
            && m.contains("`target`"),
        "{m}"
    );
    let m = message(serde_json::json!({"better": "target"}));
    assert!(
        m.contains("`responses.selection.direction.target`: missing"),
        "{m}"
    );
    let m = message(serde_json::json!({"better": "target", "target": 50}));
    assert!(
        m.contains("`responses.selection.direction.target`: is 50; the target is a fraction in [0, 1] (write 0.5 for 50 %)"),
        "{m}"
    );
    let m = message(serde_json::json!({"better": "target", "target": -0.1}));
    assert!(
        m.contains("is -0.1; the target is a fraction in [0, 1]"),
        "{m}"
    );
    let m = message(serde_json::json!({"better": "lower", "target": 0.5}));
    assert!(
        m.contains("`responses.selection.direction.target`")
            && m.contains("only read with \"better\": \"target\""),
        "{m}"
    );
    let m = message(serde_json::json!({"better": "target", "target": "50%"}));
    assert!(m.contains("responses.selection.direction.target"), "{m}");
    let m = message(serde_json::json!({"better": "higher", "ideal": 1}));
    assert!(
        m.contains("responses.selection.direction") && m.contains("unknown field `ideal`"),
        "{m}"
    );
    // Boundary targets are allowed.
    for t in [0.0, 1.0] {
        assert!(target_with(Some(serde_json::json!({"better": "target", "target": t}))).is_ok());
    }
}

#[test]
fn a_bundle_written_before_directions_still_loads_with_the_default() {
    let audit = Audit::from_json(&fixture_text("tiny-bundle.json")).expect("valid");
    assert!(!audit.direction.declared);
    assert_eq!(audit.direction.direction, Direction::Lower);
}

#[test]
fn the_model_that_mostly_abstains_is_flagged_with_its_share_and_so_is_its_rank() {
    let audit = Audit::from_json(&fixture_text("high-abstain-bundle.json")).expect("valid");
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let table = ber_by_model_condition(&units);
    let k = table.get(0, 0);
    assert_eq!((k.bias, k.valid, k.abstain), (0, 2, 6));
    assert_eq!(k.abstain_share(), Some(0.75));
    assert_eq!(table.get(0, 1).abstain_share(), Some(0.5));
    assert_eq!(table.get(2, 0).abstain_share(), Some(0.375));
    let scores = reference_scores(&audit, &units, None);
    assert_eq!(
        audit.direction.direction.ranks(&scores),
        [Some(1.0), Some(2.0), Some(3.0)]
    );
    let abstain = reference_abstain(&table, &[true, true], &["c1", "c2"]);
    assert_eq!(abstain[0].share, Some(0.625));
    assert_eq!(abstain[1].share, Some(0.0));
    assert_eq!(abstain[2].share, Some(0.1875));
    let default = AbstainThreshold::default();
    assert_eq!(default.value(), 0.5);
    assert_eq!(flagged_cells(&table, default), (1, 6));
    assert_eq!(
        abstain[0].flagged(default),
        [&CellShare {
            condition: "c1".into(),
            share: Some(0.75)
        }]
    );
    assert_eq!(abstain[0].flag_text(default), "⚠ Abstain 75.0 % (c1)");
    assert!(!abstain[1].is_flagged(default) && !abstain[2].is_flagged(default));
    let low = AbstainThreshold::new(0.3).expect("valid");
    assert_eq!(flagged_cells(&table, low), (3, 6));
    let flagged: Vec<bool> = abstain.iter().map(|a| a.is_flagged(low)).collect();
    assert_eq!(flagged, [true, false, true]);
    let high = AbstainThreshold::new(0.8).expect("valid");
    assert_eq!(flagged_cells(&table, high), (0, 6));
    // The re-weighted score rests only on the weighted cells: c2 alone is not above 0.5.
    let basis = ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    let r = basis
        .reweight(&ConditionWeights::custom(&basis, vec![0.0, 1.0]).expect("valid"))
        .expect("reweights");
    assert!(!r.abstain[0].is_flagged(default));
    assert_eq!(r.abstain[0].share, Some(0.5));
    let r = basis
        .reweight(&ConditionWeights::equal(&basis))
        .expect("reweights");
    assert!(r.abstain[0].is_flagged(default));
}

#[test]
fn rq1_keeps_the_abstain_shares_behind_each_wording_score() {
    // Tiny example (docs/bundle-format.md): model-a under R1 has 7 valid + 1 Abstain, under S2 6 + 1
    // (and one cell without response): pooled share 2/15. Wording 1 (t1) of model-a: R1 cells 0, 1, 4,
    // 5 = codes 0 1 1 1 (no Abstain); S2 cells 8, 9, 12, 13 = codes 0 2 1 4 (cell 13 a parser failure):
    // shares 0 and 1/4, pooled 1/8.
    let audit = Audit::from_json(&fixture_text("tiny-bundle.json")).expect("valid");
    let r = wording_rank_stability(&audit, RepeatPolicy::AllResponses).expect("runs");
    assert_eq!(r.pooled_abstain[0].share, Some(2.0 / 15.0));
    let w1 = &r.abstain[0][0];
    assert_eq!(w1.share, Some(0.125));
    let shares: Vec<(&str, Option<f64>)> = w1
        .cells
        .iter()
        .map(|c| (c.condition.as_str(), c.share))
        .collect();
    assert_eq!(shares, [("R1", Some(0.0)), ("S2", Some(0.25))]);
    assert!(!r.direction.declared);
}
