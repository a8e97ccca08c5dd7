//! Across task paradigms (seed `000_…` §5.2, Table 11; `atlas_core::across`): scores, ranks, reversals
//! and tie zones on the hand-worked fixture `tests/fixtures/paradigm-across/bundle.json` (its Selections
//! are the `ROWS` of `tests/fixtures/paradigm-across/make_bundle.py`), worked out by hand below, and
//! against the independent pandas/numpy reference `tests/reference/paradigm_across_reference.py`
//! (`tests/reference/expected_paradigm_across.json`), also on the local-model demo (one model).

use atlas_core::across::{across_procedures, AcrossOptions, AcrossReport};
use atlas_core::Audit;
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn audit(path: &str) -> Audit {
    Audit::from_json(&std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()).unwrap()
}

fn report(path: &str, draws: usize, seed: u64) -> AcrossReport {
    across_procedures(
        &audit(path),
        AcrossOptions {
            draws,
            seed,
            ..AcrossOptions::default()
        },
    )
    .unwrap()
}

const FIXTURE: &str = "tests/fixtures/paradigm-across/bundle.json";
const DEMO: &str = "tests/fixtures/paradigm-demo/bundle.json";

fn pair<'a>(r: &'a AcrossReport, a: &str, b: &str) -> &'a atlas_core::across::PairAcross {
    r.pairs
        .iter()
        .find(|p| p.model_a == a && p.model_b == b)
        .unwrap()
}

/// One procedure's hand counts: its name, (stereotyped selections, non-Abstain propositions) per
/// model a..d, and the ranks.
type HandRow = (&'static str, [(u32, u32); 4], [f64; 4]);

#[test]
fn scores_and_ranks_per_procedure_equal_the_hand_counts_of_the_fixture() {
    let r = report(FIXTURE, 100, 1);
    // (stereotyped selections, non-Abstain propositions) per model a..d, counted off ROWS by hand.
    let hand: [HandRow; 5] = [
        // CLEAR: 10/12, 2/12, 4/12, 6/12 → lower is better: b 1, c 2, d 3, a 4.
        (
            "CLEAR",
            [(10, 12), (2, 12), (4, 12), (6, 12)],
            [4.0, 1.0, 2.0, 3.0],
        ),
        // BBQ-ambig: 6/12, 1/12, 3/12, 9/12 → b 1, c 2, a 3, d 4.
        (
            "BBQ-ambig",
            [(6, 12), (1, 12), (3, 12), (9, 12)],
            [3.0, 1.0, 2.0, 4.0],
        ),
        // BBQ-disambig: 2/12, 0/12, 2/11 (one NEITHER), 6/12 → b 1, a 2, c 3, d 4.
        (
            "BBQ-disambig",
            [(2, 12), (0, 12), (2, 11), (6, 12)],
            [2.0, 1.0, 3.0, 4.0],
        ),
        // StereoSet: 3/12, 1/11 (one NEITHER), 1/12, 4/12 → c 1, b 2, a 3, d 4.
        (
            "StereoSet",
            [(3, 12), (1, 11), (1, 12), (4, 12)],
            [3.0, 2.0, 1.0, 4.0],
        ),
        // CrowS: 7/12, 3/12, 5/12, 7/12 → b 1, c 2, a and d share 3 and 4: 3.5.
        (
            "CrowS",
            [(7, 12), (3, 12), (5, 12), (7, 12)],
            [3.5, 1.0, 2.0, 3.5],
        ),
    ];
    assert_eq!(r.models, ["a-model", "b-model", "c-model", "d-model"]);
    assert_eq!(r.procedures.len(), 5);
    for (col, (id, counts, ranks)) in r.procedures.iter().zip(hand) {
        assert_eq!(col.procedure, id);
        for m in 0..4 {
            let (k, n) = counts[m];
            let want = f64::from(k) / f64::from(n);
            assert!(
                (col.scores[m].unwrap() - want).abs() < 1e-12,
                "{id} model {m}"
            );
            assert_eq!(col.propositions[m], n as usize, "{id} model {m}");
            assert_eq!(col.ranks[m], Some(ranks[m]), "{id} model {m}");
        }
    }
    // a-model: scores 83.33, 50, 16.67, 25, 58.33 → range 66.67 pp; ranks 2..4.
    assert!((r.score_range_pp[0].unwrap() - 100.0 * (10.0 / 12.0 - 2.0 / 12.0)).abs() < 1e-9);
    assert_eq!(r.rank_range[0], Some((2.0, 4.0)));
}

#[test]
fn reversals_and_the_1_and_2_pp_tie_zones_are_the_hand_worked_ones() {
    let r = report(FIXTURE, 200, 7);
    assert_eq!(r.pairs.len(), 6);
    // a vs d: δ CLEAR = 100(10/12 − 6/12) = +33.33, BBQ-disambig = 100(2/12 − 6/12) = −33.33:
    // reverses beyond both zones.
    let ad = pair(&r, "a-model", "d-model");
    assert!(ad.reverses && ad.reverses_1pp && ad.reverses_2pp);
    assert_eq!(ad.negative.as_ref().unwrap().condition_id, "BBQ-disambig");
    assert_eq!(ad.positive.as_ref().unwrap().condition_id, "CLEAR");
    // CrowS: 7/12 − 7/12 = 0 exactly, neither side.
    assert_eq!(ad.deltas[4].delta_pp, 0.0);
    // a vs c: the only negative δ is BBQ-disambig 100(2/12 − 2/11) = −1.515 pp (inside 2 pp, outside
    // 1 pp), the largest positive CLEAR 100(10/12 − 4/12) = +50: survives 1 pp, a tie within 2 pp.
    let ac = pair(&r, "a-model", "c-model");
    let neg = ac.negative.as_ref().unwrap();
    assert_eq!(neg.condition_id, "BBQ-disambig");
    assert!((neg.delta_pp - 100.0 * (2.0 / 12.0 - 2.0 / 11.0)).abs() < 1e-9);
    assert!((neg.delta_pp + 1.515_151_515).abs() < 1e-6);
    assert!(ac.reverses && ac.reverses_1pp && !ac.reverses_2pp);
    // b vs c: the only positive δ is StereoSet 100(1/11 − 1/12) = +0.758 pp: reverses, a tie within
    // 1 pp.
    let bc = pair(&r, "b-model", "c-model");
    let pos = bc.positive.as_ref().unwrap();
    assert_eq!(pos.condition_id, "StereoSet");
    assert!((pos.delta_pp - 100.0 * (1.0 / 11.0 - 1.0 / 12.0)).abs() < 1e-9);
    assert!(bc.reverses && !bc.reverses_1pp && !bc.reverses_2pp);
    // a vs b (a above b everywhere), b vs d and c vs d (below d everywhere): no reversal.
    for (a, b) in [
        ("a-model", "b-model"),
        ("b-model", "d-model"),
        ("c-model", "d-model"),
    ] {
        let p = pair(&r, a, b);
        assert!(!p.reverses && !p.reverses_1pp && !p.reverses_2pp, "{a} {b}");
    }
    assert_eq!((r.reversing, r.reversing_1pp, r.reversing_2pp), (3, 2, 1));
    assert!(
        r.note.starts_with("3 of 6 model pair(s) reverse"),
        "{}",
        r.note
    );
}

#[test]
fn the_bootstrap_intervals_repeat_for_the_same_seed_and_move_with_another() {
    let a = report(FIXTURE, 500, 20_260_716);
    let b = report(FIXTURE, 500, 20_260_716);
    let c = report(FIXTURE, 500, 20_260_717);
    assert_eq!(a, b);
    // Another seed draws other propositions: some interval of some pair moves (with 12
    // propositions many percentile ends are the same few values, so not every one does).
    let cis = |r: &AcrossReport| -> Vec<Option<(f64, f64)>> {
        r.pairs
            .iter()
            .flat_map(|p| p.deltas.iter().map(|d| d.ci_pp))
            .collect()
    };
    assert_ne!(cis(&a), cis(&c));
    // The points do not depend on the seed.
    assert_eq!(a.procedures, c.procedures);
    // Every interval holds its point δ when the δ is not at the edge of what resampling can give.
    for p in &a.pairs {
        for d in &p.deltas {
            let (lo, hi) = d.ci_pp.unwrap();
            assert!(lo <= hi, "{} {} {}", p.model_a, p.model_b, d.condition_id);
        }
    }
}

#[test]
fn the_one_model_demo_says_there_are_no_pairs_and_still_scores_every_procedure() {
    let r = report(DEMO, 1000, 20_260_716);
    assert_eq!(r.models.len(), 1);
    assert!(r.pairs.is_empty());
    assert_eq!((r.reversing, r.reversing_1pp, r.reversing_2pp), (0, 0, 0));
    assert!(r.note.contains("no model pairs"), "{}", r.note);
    assert_eq!(r.procedures.len(), 5);
    for c in &r.procedures {
        assert_eq!(c.ranks[0], c.scores[0].map(|_| 1.0));
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-10 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn scores_ranks_reversals_and_intervals_equal_the_pandas_numpy_reference() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{ROOT}/tests/reference/expected_paradigm_across.json"
        ))
        .unwrap(),
    )
    .unwrap();
    // Monte Carlo tolerance of the intervals: ChaCha8 here, numpy's generator there, 10,000 draws
    // each; twice the spread between two numpy seeds plus 1 pp (a 12-proposition percentile moves
    // in steps of about 0.7 pp).
    let spread = expected["ci_spread_between_numpy_seeds_pp"]
        .as_f64()
        .unwrap();
    let tol = 2.0 * spread + 1.0;
    for (name, path) in [("fixture", FIXTURE), ("demo", DEMO)] {
        let want = &expected["bundles"][name];
        let r = report(path, 10_000, 20_260_716);
        let models: Vec<&str> = want["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(r.models, models, "{name}");
        let cols = want["procedures"].as_array().unwrap();
        assert_eq!(r.procedures.len(), cols.len(), "{name}");
        for (c, w) in r.procedures.iter().zip(cols) {
            assert_eq!(c.procedure, w["procedure"].as_str().unwrap());
            for m in 0..models.len() {
                match (c.scores[m], w["scores"][m].as_f64()) {
                    (Some(x), Some(y)) => {
                        assert!(close(x, y), "{name} {} {m}: {x} vs {y}", c.procedure)
                    }
                    (x, y) => assert_eq!(x, y, "{name} {} {m}", c.procedure),
                }
                assert_eq!(
                    c.ranks[m],
                    w["ranks"][m].as_f64(),
                    "{name} {} {m}",
                    c.procedure
                );
                assert_eq!(
                    c.propositions[m] as u64,
                    w["propositions"][m].as_u64().unwrap()
                );
            }
        }
        let pairs = want["pairs"].as_array().unwrap();
        assert_eq!(r.pairs.len(), pairs.len(), "{name}");
        for (p, w) in r.pairs.iter().zip(pairs) {
            assert_eq!(p.model_a, w["model_a"].as_str().unwrap());
            assert_eq!(p.model_b, w["model_b"].as_str().unwrap());
            for flag in ["reverses", "reverses_1pp", "reverses_2pp"] {
                let ours = match flag {
                    "reverses" => p.reverses,
                    "reverses_1pp" => p.reverses_1pp,
                    _ => p.reverses_2pp,
                };
                assert_eq!(
                    Some(ours),
                    w[flag].as_bool(),
                    "{name} {} {} {flag}",
                    p.model_a,
                    p.model_b
                );
            }
            for d in &p.deltas {
                let wd = &w["deltas"][&d.condition_id];
                assert!(close(d.delta_pp, wd["delta_pp"].as_f64().unwrap()));
                let (lo, hi) = d.ci_pp.unwrap();
                let (wlo, whi) = (
                    wd["ci_pp"][0].as_f64().unwrap(),
                    wd["ci_pp"][1].as_f64().unwrap(),
                );
                assert!(
                    (lo - wlo).abs() <= tol && (hi - whi).abs() <= tol,
                    "{name} {} {} {}: [{lo}, {hi}] vs numpy [{wlo}, {whi}] (tolerance {tol})",
                    p.model_a,
                    p.model_b,
                    d.condition_id
                );
            }
        }
        for k in ["reversing", "reversing_1pp", "reversing_2pp"] {
            let ours = match k {
                "reversing" => r.reversing,
                "reversing_1pp" => r.reversing_1pp,
                _ => r.reversing_2pp,
            };
            assert_eq!(Some(ours as u64), want[k].as_u64(), "{name} {k}");
        }
    }
}

/// The tables the CLI prints and the app shows (`atlas_core::tables::paradigms`) carry the numbers of
/// the pandas/numpy reference (`tests/reference/expected_paradigm_across.json`) in their cell values:
/// every score, proposition count and δ, keyed by model, procedure and pair; the exclusions note counts
/// the two model × procedure units without a valid Selection (the reference's counts: 5 × 4 × 12 − sum).
#[test]
fn the_across_tables_carry_the_reference_scores_counts_and_deltas() {
    use atlas_core::tables::paradigms;
    let a = audit(FIXTURE);
    let r = report(FIXTURE, 200, 20_260_716);
    let (summary, tables) = paradigms::across(&a, &r);
    assert!(
        summary[1].starts_with("3 of 6 model pairs reverse"),
        "{summary:?}"
    );
    let value = |key: &str| -> f64 {
        tables
            .iter()
            .flat_map(|t| t.rows.iter().flatten())
            .find(|c| c.key.as_deref() == Some(key))
            .and_then(|c| c.value.as_deref())
            .unwrap_or_else(|| panic!("no cell {key}"))
            .parse()
            .unwrap()
    };
    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{ROOT}/tests/reference/expected_paradigm_across.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let f = &reference["bundles"]["fixture"];
    let models: Vec<&str> = f["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let mut counted = 0.0;
    for p in f["procedures"].as_array().unwrap() {
        let proc = p["procedure"].as_str().unwrap();
        for (m, id) in models.iter().enumerate() {
            let want = p["scores"][m].as_f64().unwrap();
            assert!(
                (value(&format!("score/{id}/{proc}")) - want).abs() < 1e-12,
                "{id} {proc}"
            );
            let n = p["propositions"][m].as_f64().unwrap();
            assert_eq!(value(&format!("propositions/{id}/{proc}")), n);
            counted += n;
        }
    }
    for p in f["pairs"].as_array().unwrap() {
        let pair = format!(
            "{}–{}",
            p["model_a"].as_str().unwrap(),
            p["model_b"].as_str().unwrap()
        );
        for (proc, d) in p["deltas"].as_object().unwrap() {
            let want = d["delta_pp"].as_f64().unwrap();
            assert!(
                (value(&format!("delta_pp/{pair}/{proc}")) - want).abs() < 1e-9,
                "{pair} {proc}"
            );
        }
    }
    let excluded = 5.0 * 4.0 * 12.0 - counted;
    assert_eq!(excluded, 2.0);
    let note = &tables[1].notes[0];
    assert!(
        note.contains("Of 12 propositions; 2 model × procedure × proposition units are excluded"),
        "{note}"
    );
}

/// Both paradigm bundles (the fixture and the local-model demo) are recognised as such; an ordinary
/// bundle (the tiny one, one condition without a sweep) is not.
#[test]
fn paradigm_bundles_are_recognised_by_their_task_paradigm_sweep() {
    use atlas_core::across::is_paradigm_bundle;
    assert!(is_paradigm_bundle(&audit(FIXTURE)));
    assert!(is_paradigm_bundle(&audit(DEMO)));
    assert!(!is_paradigm_bundle(&audit(
        "tests/fixtures/tiny-bundle.json"
    )));
}
