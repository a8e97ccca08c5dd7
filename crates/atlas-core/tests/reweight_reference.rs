//! `atlas_core::reweight` against the independent numpy/scipy reference.
//!
//! Reference values: `tests/reference/expected_reweight.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/reweight_reference.py` (re-check with
//! `--check`). For the default bundle the script reads the labels from the RAW DecodingTrust file, not
//! from the bundle; for `tests/fixtures/tiny-bundle.json` it decodes the dense code string itself. It
//! derives the preset weights from the condition attributes, and computes the weighted scores, ranks
//! (`scipy.stats.rankdata`), τ-b (`scipy.stats.kendalltau`), inverted pairs, maximum displacement and the
//! statement-cluster bootstrap intervals (its own ChaCha8 from `rank_reference.py`, `numpy.percentile`).
//!
//! Comparison: fractions and τ-b within [`atlas_core::tolerance::EXACT`] (1e-12), `delta_pp` within
//! [`atlas_core::tolerance::EXACT_PP`] (100× that
//! (it is a fraction × 100); weights, ranks, counts and pairs exactly.

mod common;

use std::path::PathBuf;

use atlas_core::reweight::{ConditionWeights, ReweightBasis, ReweightBootstrap, WeightPreset};
use atlas_core::stats::{reference_scores, unit_counts};
use atlas_core::tolerance::EXACT_PP;
use atlas_core::{Audit, RepeatPolicy};
use common::{assert_fraction, opt_f64s};
use serde_json::Value;

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn reference() -> Value {
    let path = repo_file("tests/reference/expected_reweight.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load(section: &Value) -> Audit {
    let path = repo_file(section["bundle"].as_str().unwrap());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    Audit::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn weights_of(basis: &ReweightBasis, case: &Value) -> ConditionWeights {
    let name = case["name"].as_str().unwrap();
    let preset: WeightPreset = serde_json::from_value(case["preset"].clone())
        .unwrap_or_else(|e| panic!("{name}: preset {}: {e}", case["preset"]));
    let custom = case["custom"].as_array().map(|a| {
        a.iter()
            .map(|v| v.as_f64().expect("custom weight"))
            .collect::<Vec<f64>>()
    });
    ConditionWeights::from_preset(basis, &preset, custom).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn policy_of(key: &str) -> RepeatPolicy {
    RepeatPolicy::from_key(key).unwrap_or_else(|| panic!("unknown policy {key}"))
}

fn by_model(map: &Value, models: &[String], what: &str) -> Vec<Option<f64>> {
    models
        .iter()
        .map(|m| {
            let v = &map[m.as_str()];
            assert!(
                !v.is_null() || map.get(m.as_str()).is_some(),
                "{what}: no {m}"
            );
            v.as_f64()
        })
        .collect()
}

/// Every case of every bundle and policy: weights, scores, ranks, Δ, τ-b, inversions, pairs.
#[test]
fn weighted_scores_ranks_tau_and_inverted_pairs_match_numpy_and_scipy() {
    let reference = reference();
    let mut cases_seen = 0;
    for (bundle_name, section) in reference["bundles"].as_object().unwrap() {
        let audit = load(section);
        for (policy_key, policy) in section["policies"].as_object().unwrap() {
            let units = unit_counts(&audit, policy_of(policy_key));
            let basis = ReweightBasis::new(&audit, &units);
            let models: Vec<String> = basis.models().to_vec();
            let expected_models: Vec<String> = section["models"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(models, expected_models, "{bundle_name}: model order");

            // Condition means, the precomputed basis.
            for (m, model) in models.iter().enumerate() {
                let expected = opt_f64s(&policy["condition_means"][model.as_str()], model);
                for (c, e) in expected.iter().enumerate() {
                    assert_fraction(
                        basis.condition_mean(m, c),
                        *e,
                        &format!("{bundle_name}/{policy_key}: ȳ of {model} under condition {c}"),
                    );
                }
            }

            for case in policy["cases"].as_array().unwrap() {
                cases_seen += 1;
                let what = format!(
                    "{bundle_name}/{policy_key}/{}",
                    case["name"].as_str().unwrap()
                );
                let weights = weights_of(&basis, case);
                let expected_w: Vec<f64> = case["weights"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                assert_eq!(weights.as_slice(), &expected_w[..], "{what}: weights");
                let r = basis.reweight(&weights).unwrap();
                let scores = by_model(&case["scores"], &models, &what);
                let ranks = by_model(&case["ranks"], &models, &what);
                let delta = by_model(&case["delta_pp"], &models, &what);
                for m in 0..models.len() {
                    assert_fraction(r.scores[m], scores[m], &format!("{what}: score of {m}"));
                    assert_eq!(r.ranks[m], ranks[m], "{what}: rank of {}", models[m]);
                    match (r.delta_pp[m], delta[m]) {
                        (Some(a), Some(e)) => assert!(
                            (a - e).abs() <= EXACT_PP,
                            "{what}: Δ of {}: {a} vs {e}",
                            models[m]
                        ),
                        (a, e) => assert_eq!(a, e, "{what}: Δ of {}", models[m]),
                    }
                }
                assert_fraction(r.tau_b, case["tau_b"].as_f64(), &format!("{what}: τ-b"));
                assert_eq!(
                    r.inversions.inverted as u64,
                    case["inversions"]["inverted"].as_u64().unwrap(),
                    "{what}: inverted"
                );
                assert_eq!(
                    r.inversions.pairs as u64,
                    case["inversions"]["pairs"].as_u64().unwrap(),
                    "{what}: pairs"
                );
                let pairs: Vec<(String, String)> = r
                    .inverted_pairs
                    .iter()
                    .map(|&(a, b)| (models[a].clone(), models[b].clone()))
                    .collect();
                let expected_pairs: Vec<(String, String)> = case["inverted_pairs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p[0].as_str().unwrap().to_string(),
                            p[1].as_str().unwrap().to_string(),
                        )
                    })
                    .collect();
                assert_eq!(pairs, expected_pairs, "{what}: inverted pairs");
                assert_eq!(
                    r.max_displacement,
                    case["max_displacement"].as_f64(),
                    "{what}: maximum displacement"
                );
            }
        }
    }
    assert!(cases_seen >= 20, "only {cases_seen} cases");
}

/// The equal preset is Eq. 4: the same bits as `stats::reference_scores(…, None)` on both bundles and
/// under every repeat policy.
#[test]
fn equal_weights_reproduce_reference_scores_bit_for_bit_on_the_reference_bundles() {
    let reference = reference();
    for (bundle_name, section) in reference["bundles"].as_object().unwrap() {
        let audit = load(section);
        for policy in RepeatPolicy::ALL {
            let units = unit_counts(&audit, policy);
            let basis = ReweightBasis::new(&audit, &units);
            let scores = basis.scores(&ConditionWeights::equal(&basis)).unwrap();
            let eq4 = reference_scores(&audit, &units, None);
            let bits = |v: &[Option<f64>]| -> Vec<Option<u64>> {
                v.iter().map(|x| x.map(f64::to_bits)).collect()
            };
            assert_eq!(bits(&scores), bits(&eq4), "{bundle_name} {policy:?}");
            assert_eq!(bits(basis.equal_scores()), bits(&eq4));
        }
    }
}

/// The statement-cluster bootstrap draws the documented stream and recomputes the condition means with
/// statement multiplicities: its intervals equal the Python re-implementation's.
#[test]
fn bootstrap_intervals_match_the_python_reimplementation_of_the_stream() {
    let reference = reference();
    for (bundle_name, section) in reference["bundles"].as_object().unwrap() {
        let audit = load(section);
        let boot = &section["bootstrap"];
        let units = unit_counts(&audit, policy_of(boot["policy"].as_str().unwrap()));
        let basis = ReweightBasis::new(&audit, &units);
        let reps = boot["reps"].as_u64().unwrap() as usize;
        let seed = boot["seed"].as_u64().unwrap();
        assert_eq!(
            boot["stream"].as_u64(),
            Some(atlas_core::reweight::BOOTSTRAP_STREAM)
        );
        let run = ReweightBootstrap::run(&audit, &units, reps, seed).unwrap();
        for case in boot["cases"].as_array().unwrap() {
            let what = format!("{bundle_name}/bootstrap/{}", case["name"].as_str().unwrap());
            let weights = weights_of(&basis, case);
            let intervals = run
                .intervals(&weights, boot["level"].as_f64().unwrap())
                .unwrap();
            for (m, model) in basis.models().iter().enumerate() {
                let expected = &case["intervals"][model.as_str()];
                let got = intervals[m];
                match (got, expected.as_array()) {
                    (Some(iv), Some(e)) => {
                        assert_fraction(Some(iv.lo), e[0].as_f64(), &format!("{what}: lo {model}"));
                        assert_fraction(Some(iv.hi), e[1].as_f64(), &format!("{what}: hi {model}"));
                        assert_eq!(
                            iv.replicates as u64,
                            case["replicates"][model.as_str()].as_u64().unwrap(),
                            "{what}: replicates of {model}"
                        );
                    }
                    (None, None) => {}
                    (g, e) => panic!("{what}: {model}: got {g:?}, expected {e:?}"),
                }
            }
        }
    }
}
