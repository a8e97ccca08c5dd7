//! RQ1 analyses on the real default bundle against the independent numpy/scipy reference
//! `tests/reference/rq1_reference.py` (reads the raw DecodingTrust file, not the bundle), recorded in
//! `tests/reference/expected_rq1.json` with the command that produced it.
//!
//! Counts and deterministic rates must match exactly ([`atlas_core::tolerance::EXACT`], 1e-12);
//! bootstrap intervals come from different random streams (numpy's generator there, ChaCha8 here),
//! so they are compared with a Monte Carlo tolerance:
//! [`atlas_core::tolerance::BOOTSTRAP_INTERVAL_PP`] = 0.3 pp, about 3× the largest difference
//! between the reference's two numpy seeds (`ci_spread_between_numpy_seeds_pp`,
//! 0.0975 pp when recorded).

mod common;

use atlas_core::rq1::{
    condition_reversals, wording_rank_stability, wording_sensitivity, Rq1Options,
};
use atlas_core::tolerance::BOOTSTRAP_INTERVAL_PP;
use atlas_core::{Audit, RepeatPolicy};
use common::assert_close;
use serde_json::Value;

fn bundle() -> Audit {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/bundles/decodingtrust-stereotype/bundle.json"
    );
    let text = std::fs::read_to_string(path).expect("the default bundle is in the repository");
    Audit::from_json(&text).expect("the default bundle is valid")
}

fn expected() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/expected_rq1.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("expected_rq1.json exists"))
        .expect("expected_rq1.json is JSON")
}

fn options() -> Rq1Options {
    let e = expected();
    Rq1Options {
        k: e["k"].as_u64().unwrap() as usize,
        unit_bootstrap_reps: e["unit_reps"].as_u64().unwrap() as usize,
        cluster_bootstrap_reps: e["cluster_reps"].as_u64().unwrap() as usize,
        ..Rq1Options::default()
    }
}

#[track_caller]
fn assert_interval(actual: Option<(f64, f64)>, expected: &Value, what: &str) {
    let (lo, hi) = actual.unwrap_or_else(|| panic!("{what}: no interval"));
    let (elo, ehi) = (expected[0].as_f64().unwrap(), expected[1].as_f64().unwrap());
    assert!(
        (lo - elo).abs() <= BOOTSTRAP_INTERVAL_PP && (hi - ehi).abs() <= BOOTSTRAP_INTERVAL_PP,
        "{what}: [{lo}, {hi}] vs numpy [{elo}, {ehi}] (tolerance {BOOTSTRAP_INTERVAL_PP} pp)"
    );
}

#[test]
fn wording_sensitivity_counts_and_matched_comparison_equal_the_numpy_reference() {
    let audit = bundle();
    let e = &expected()["wording_sensitivity"];
    let w = wording_sensitivity(&audit, &options()).unwrap();
    assert_eq!(w.units as u64, e["units"].as_u64().unwrap());
    assert_eq!(w.changed_any as u64, e["changed_any"].as_u64().unwrap());
    let m = w
        .matched
        .expect("25 repeats allow the identical-call control");
    assert_eq!(m.units as u64, e["matched_units"].as_u64().unwrap());
    let subsets = e["subsets"].as_array().unwrap();
    assert_eq!(m.subsets.len(), subsets.len());
    for (got, want) in m.subsets.iter().zip(subsets) {
        let wordings: Vec<usize> = want["wordings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got.wordings, wordings);
        assert_eq!(got.changed as u64, want["changed"].as_u64().unwrap());
    }
    assert_eq!(
        m.control_changed as u64,
        e["control_changed"].as_u64().unwrap()
    );
    assert_close(
        Some(m.difference_pp),
        e["difference_pp"].as_f64(),
        "paired difference (pp)",
    );
    for p in &m.wording_pairs {
        let key = format!("{}-{}", p.a, p.b);
        assert_close(
            Some(p.rate),
            e["wording_pairs"][&key].as_f64(),
            &format!("wording pair {key}"),
        );
    }
    for p in &m.repeat_pairs {
        let key = format!("{}-{}", p.a, p.b);
        assert_close(
            Some(p.rate),
            e["repeat_pairs"][&key].as_f64(),
            &format!("call pair {key}"),
        );
    }
    assert_interval(
        m.unit_bootstrap_ci_pp,
        &e["unit_bootstrap_ci_pp"],
        "unit bootstrap",
    );
    assert_interval(
        m.statement_bootstrap_ci_pp,
        &e["statement_bootstrap_ci_pp"],
        "statement-cluster bootstrap",
    );
}

#[test]
fn per_wording_scores_ranks_tau_b_and_inversions_equal_the_scipy_reference() {
    let audit = bundle();
    let e = &expected()["rank_stability"];
    let s = wording_rank_stability(&audit, RepeatPolicy::AllResponses).unwrap();
    let ids = audit.model_ids();
    for (m, id) in ids.iter().enumerate() {
        assert_close(
            s.pooled[m],
            e["pooled"][*id].as_f64(),
            &format!("pooled {id}"),
        );
        assert_close(
            s.score_range_pp[m],
            e["score_range_pp"][*id].as_f64(),
            &format!("range {id}"),
        );
    }
    let wordings = e["wordings"].as_array().unwrap();
    assert_eq!(s.scores.len(), wordings.len());
    for (j, w) in wordings.iter().enumerate() {
        for (m, id) in ids.iter().enumerate() {
            assert_close(
                s.scores[j][m],
                w["scores"][*id].as_f64(),
                &format!("W{j} {id}"),
            );
            assert_eq!(s.ranks[j][m], w["ranks"][*id].as_f64(), "W{j} rank {id}");
        }
        assert_close(s.tau_b[j], w["tau_b"].as_f64(), &format!("W{j} tau-b"));
        let inv = s.inversions[j].unwrap();
        assert_eq!(
            inv.inverted as u64,
            w["inversions"].as_u64().unwrap(),
            "W{j}"
        );
        assert_eq!(inv.pairs as u64, w["pairs"].as_u64().unwrap(), "W{j}");
        assert_eq!(
            s.max_displacement[j],
            w["max_displacement"].as_f64(),
            "W{j}"
        );
    }
}

#[test]
fn reversing_pairs_deltas_tie_zones_and_bootstrap_intervals_match_the_reference() {
    let audit = bundle();
    let e = &expected()["reversals"];
    let draws = options().cluster_bootstrap_reps;
    let r = condition_reversals(&audit, RepeatPolicy::AllResponses, draws, 20_260_716).unwrap();
    assert_eq!(r.pairs as u64, e["pairs"].as_u64().unwrap());
    let rows = e["reversals"].as_array().unwrap();
    let got: Vec<(&str, &str)> = r
        .reversals
        .iter()
        .map(|x| (x.model_a.as_str(), x.model_b.as_str()))
        .collect();
    let want: Vec<(&str, &str)> = rows
        .iter()
        .map(|x| {
            (
                x["model_a"].as_str().unwrap(),
                x["model_b"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want, "the reversing pairs, in order");
    for (rev, row) in r.reversals.iter().zip(rows) {
        let what = format!("{}–{}", rev.model_a, rev.model_b);
        assert_eq!(
            rev.negative.condition_id,
            row["negative"].as_str().unwrap(),
            "{what}"
        );
        assert_eq!(
            rev.positive.condition_id,
            row["positive"].as_str().unwrap(),
            "{what}"
        );
        assert_eq!(
            rev.survives_1pp,
            row["survives_1pp"].as_bool().unwrap(),
            "{what} ε1"
        );
        assert_eq!(
            rev.survives_2pp,
            row["survives_2pp"].as_bool().unwrap(),
            "{what} ε2"
        );
        for d in &rev.deltas {
            assert_close(
                Some(d.delta_pp),
                row["deltas_pp"][&d.condition_id].as_f64(),
                &format!("{what} δ {}", d.condition_id),
            );
            assert_interval(
                d.ci_pp,
                &row["cis_pp"][&d.condition_id],
                &format!("{what} CI"),
            );
        }
    }
}
