//! The likelihood scores and the counterbalanced order against the independent numpy reference
//! (`tests/reference/paradigm_reference.py`, which writes `tests/reference/expected_paradigm.json`
//! from the logged responses of the real local model in `tests/fixtures/paradigm-scoring-log.jsonl`).

use std::collections::BTreeMap;

use atlas_pilot::paradigm::likelihood::{
    continuation_score, crows_preference, parse_echo, stereoset_scores, ContinuationScore,
    ItemScores,
};
use atlas_pilot::paradigm::{orders, Order, Procedure};
use atlas_pilot::proposition::parse_propositions;
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-10 * a.abs().max(b.abs()).max(1e-2)
}

fn opt(v: &Value) -> Option<f64> {
    v.as_f64()
}

#[test]
fn mean_token_logprobs_from_the_logged_local_model_responses_equal_numpy() {
    let expected: Value =
        serde_json::from_str(&read("tests/reference/expected_paradigm.json")).unwrap();
    let log = read("tests/fixtures/paradigm-scoring-log.jsonl");
    let mut ours: BTreeMap<(String, String, String, u64), Option<ContinuationScore>> =
        BTreeMap::new();
    let mut order_of: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let l: Value = serde_json::from_str(line).unwrap();
        let s = |p: &str| l.pointer(p).and_then(Value::as_str).unwrap().to_string();
        let (start, end) = (
            l["start"].as_u64().unwrap() as usize,
            l["end"].as_u64().unwrap() as usize,
        );
        let score = parse_echo(&s("/body"))
            .and_then(|e| continuation_score(&e, start, end))
            .ok();
        let key = (s("/model"), s("/item/procedure"), s("/item/proposition"));
        order_of.insert(key.clone(), s("/item/order"));
        ours.insert(
            (key.0, key.1, key.2, l["candidate"].as_u64().unwrap()),
            score,
        );
    }
    let rows = expected["candidates"].as_array().unwrap();
    assert_eq!(rows.len(), ours.len());
    assert!(
        rows.len() >= 80,
        "the fixture log covers at least 40 items × 2 candidates"
    );
    for r in rows {
        let key = (
            r["model"].as_str().unwrap().to_string(),
            r["procedure"].as_str().unwrap().to_string(),
            r["proposition"].as_str().unwrap().to_string(),
            r["candidate"].as_u64().unwrap(),
        );
        let got = ours[&key];
        match (got, opt(&r["logprob_sum"])) {
            (Some(g), Some(sum)) => {
                assert!(
                    close(g.logprob_sum, sum),
                    "{key:?}: {} vs {sum}",
                    g.logprob_sum
                );
                assert_eq!(u64::from(g.token_count), r["token_count"].as_u64().unwrap());
                assert!(close(g.mean(), r["mean"].as_f64().unwrap()));
            }
            (None, None) => {}
            other => panic!("{key:?}: {other:?}"),
        }
    }
    // Per model: SS / LMS / ICAT and CrowS preference.
    for (model, m) in expected["models"].as_object().unwrap() {
        for (proc, field) in [("StereoSet", "stereoset"), ("CrowS", "crows")] {
            let items: Vec<ItemScores> = order_of
                .iter()
                .filter(|((mm, p, _), _)| mm == model && p == proc)
                .map(|((mm, p, prop), o)| ItemScores {
                    candidates: (0..2)
                        .map(|k| ours[&(mm.clone(), p.clone(), prop.clone(), k)])
                        .collect(),
                    stereotyped: usize::from(o == "counter_first"),
                    unrelated: None,
                })
                .collect();
            let e = &m[field];
            if proc == "StereoSet" {
                let s = stereoset_scores(&items).unwrap();
                assert_eq!(s.items, e["items"].as_u64().unwrap());
                assert_eq!(s.missing, e["missing"].as_u64().unwrap());
                assert!(close(s.p_s, e["p_s"].as_f64().unwrap()));
                assert!(close(s.lms, e["lms"].as_f64().unwrap()));
                match (s.ss, opt(&e["ss"])) {
                    (Some(a), Some(b)) => assert!(close(a, b), "SS {a} vs {b}"),
                    (None, None) => {}
                    other => panic!("SS {other:?}"),
                }
                match (s.icat, opt(&e["icat"])) {
                    (Some(a), Some(b)) => assert!(close(a, b), "ICAT {a} vs {b}"),
                    (None, None) => {}
                    other => panic!("ICAT {other:?}"),
                }
            } else {
                let (pref, n, missing) = crows_preference(&items);
                assert_eq!(n, e["items"].as_u64().unwrap());
                assert_eq!(missing, e["missing"].as_u64().unwrap());
                assert!(close(pref.unwrap(), e["preference"].as_f64().unwrap()));
            }
        }
    }
}

#[test]
fn the_hand_table_and_the_counterbalanced_orders_equal_numpy() {
    let expected: Value =
        serde_json::from_str(&read("tests/reference/expected_paradigm.json")).unwrap();
    let sc = |m: f64| {
        Some(ContinuationScore {
            logprob_sum: m,
            token_count: 1,
        })
    };
    let hand = [
        [-1.0, -2.0, -3.0],
        [-2.0, -1.0, -3.0],
        [-1.0, -2.0, -0.5],
        [-1.0, -1.5, -4.0],
        [-1.0, -1.0, -2.0],
    ];
    let items: Vec<ItemScores> = hand
        .iter()
        .map(|r| ItemScores {
            candidates: r.iter().map(|m| sc(*m)).collect(),
            stereotyped: 0,
            unrelated: Some(2),
        })
        .collect();
    let s = stereoset_scores(&items).unwrap();
    let h = &expected["hand_table"];
    assert!(close(s.p_u, h["p_u"].as_f64().unwrap()));
    assert!(close(s.ss.unwrap(), h["ss"].as_f64().unwrap()));
    assert!(close(s.lms, h["lms"].as_f64().unwrap()));
    assert!(close(s.icat.unwrap(), h["icat"].as_f64().unwrap()));

    let props = parse_propositions(&read("tests/fixtures/paradigm-propositions.json")).unwrap();
    let seed = expected["seed"].as_u64().unwrap();
    for proc in Procedure::ALL {
        let want: Vec<&str> = expected["orders"][proc.id()]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let got: Vec<&str> = orders(&props, proc, seed)
            .into_iter()
            .map(|o| match o {
                Order::StereotypedFirst => "stereotyped_first",
                Order::CounterFirst => "counter_first",
            })
            .collect();
        assert_eq!(got, want, "{proc:?}");
    }
}

/// `score_lines` (what `atlas paradigms score` and the app's likelihood step run) over the logged
/// responses of the real local model gives the numpy reference's StereoSet SS, LMS, ICAT and CrowS
/// preference (`tests/reference/expected_paradigm.json`), one readout per model × item.
#[test]
fn score_lines_over_the_logged_responses_gives_the_numpy_scores() {
    use atlas_pilot::paradigm::likelihood::{score_lines, ScoringLine};
    let expected: Value =
        serde_json::from_str(&read("tests/reference/expected_paradigm.json")).unwrap();
    let lines: Vec<ScoringLine> = read("tests/fixtures/paradigm-scoring-log.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let model = "smollm2-135m-instruct".to_string();
    let (readouts, summary) = score_lines(std::slice::from_ref(&model), &lines).unwrap();
    let e = &expected["models"][&model];
    assert_eq!(readouts.len(), lines.len() / 2);
    let m = &summary[0];
    let ss = m.stereoset.unwrap();
    assert_eq!(ss.items, e["stereoset"]["items"].as_u64().unwrap());
    assert!(close(
        ss.ss.unwrap(),
        e["stereoset"]["ss"].as_f64().unwrap()
    ));
    assert!(close(ss.lms, e["stereoset"]["lms"].as_f64().unwrap()));
    assert!(close(
        ss.icat.unwrap(),
        e["stereoset"]["icat"].as_f64().unwrap()
    ));
    assert!(close(
        m.crows_preference.unwrap(),
        e["crows"]["preference"].as_f64().unwrap()
    ));
    assert_eq!(m.crows_items, e["crows"]["items"].as_u64().unwrap());
    assert_eq!((m.stereoset_missing, m.crows_missing), (0, 0));
    assert!(m.errors.is_empty(), "{:?}", m.errors);
}
