//! The statistics of `atlas_core::stats` on the shipped DecodingTrust bundle
//! (`static/bundles/decodingtrust-stereotype/bundle.json`) against an independent numpy computation
//! from the RAW staged data (`tests/reference/expected_decodingtrust.json`).
//!
//! The expected file was produced from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/reference_stats.py` (numpy 2.4.6; the command
//! and the numpy version are also recorded at the top of the JSON). That script never reads the bundle:
//! it parses `../shared/data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl`
//! into a numpy array `labels[model, condition, topic, group, template_idx, repeat]` and applies the
//! definitions of seed `000_…` §3.3 (BER), §3.5 Eq. 4 (reference score) and §B.2 (Abstain is missing).
//! So this test checks the converter and the statistics together. Re-check the JSON itself with
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/reference_stats.py --check`.
//!
//! Comparison: fractions (BER, reference score) within [`atlas_core::tolerance::EXACT`]; counts and
//! ranks exactly.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use atlas_core::stats::{average_ranks, ber_by_model_condition, reference_scores, unit_counts};
use atlas_core::{Audit, RepeatPolicy};
use common::assert_fraction;
use serde_json::Value;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn audit() -> &'static Audit {
    static AUDIT: OnceLock<Audit> = OnceLock::new();
    AUDIT.get_or_init(|| {
        let path = repo_root().join("static/bundles/decodingtrust-stereotype/bundle.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        Audit::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
}

fn expected() -> &'static Value {
    static EXPECTED: OnceLock<Value> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        let path = repo_root().join("tests/reference/expected_decodingtrust.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
}

fn opt_f64(v: &Value, what: &str) -> Option<f64> {
    match v {
        Value::Null => None,
        Value::Number(n) => Some(n.as_f64().unwrap()),
        other => panic!("{what}: expected a number or null in the reference JSON, found {other}"),
    }
}

fn count(v: &Value, key: &str, what: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}.{key}: not an unsigned integer in the reference JSON"))
}

/// Compares BER with counts, reference scores and ranks of one policy with the numpy reference.
fn check_policy(policy: RepeatPolicy) {
    let audit = audit();
    let expected = &expected()["policies"][policy.key()];
    assert!(
        expected.is_object(),
        "the reference JSON has no policy {:?}",
        policy.key()
    );

    let models = audit.model_ids();
    let conditions = audit.condition_ids();
    let expected_models: BTreeSet<&str> = expected
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        models.iter().copied().collect::<BTreeSet<_>>(),
        expected_models,
        "the bundle's models differ from the reference's"
    );
    assert_eq!(conditions, ["benign", "untargeted", "targeted"]);

    let units = unit_counts(audit, policy);
    let ber = ber_by_model_condition(&units);
    let scores = reference_scores(audit, &units, None);
    let ranks = average_ranks(&scores);

    for (m, model) in models.iter().enumerate() {
        let exp_model = &expected[*model];
        for (c, cond) in conditions.iter().enumerate() {
            let what = format!("{}: {model} / {cond}", policy.key());
            let exp = &exp_model["conditions"][*cond];
            let got = ber.get(m, c);
            assert_eq!(got.bias, count(exp, "bias", &what), "{what}: bias count");
            assert_eq!(got.valid, count(exp, "valid", &what), "{what}: valid count");
            assert_eq!(
                got.abstain,
                count(exp, "abstain", &what),
                "{what}: abstain count"
            );
            assert_fraction(
                got.ber(),
                opt_f64(&exp["ber"], &what),
                &format!("{what}: BER"),
            );
        }
        let what = format!("{}: {model}", policy.key());
        assert_fraction(
            scores[m],
            opt_f64(&exp_model["reference_score"], &what),
            &format!("{what}: Eq. 4 reference score"),
        );
        // Ranks are exact: average ranks are integers or halves, and the reference scores are far apart
        // (the reference script prints the smallest gap, 3.0e-3, so no tolerance can flip an order).
        assert_eq!(
            ranks[m],
            opt_f64(&exp_model["rank"], &what),
            "{what}: average rank (lowest score = 1)"
        );
    }
}

#[test]
fn all_responses_ber_counts_reference_scores_and_ranks_match_the_numpy_reference() {
    check_policy(RepeatPolicy::AllResponses);
}

#[test]
fn first_repeat_ber_counts_reference_scores_and_ranks_match_the_numpy_reference() {
    check_policy(RepeatPolicy::FirstRepeat);
}

#[test]
fn unit_majority_ber_counts_reference_scores_and_ranks_match_the_numpy_reference() {
    check_policy(RepeatPolicy::UnitMajority);
}

/// Hand arithmetic on the design (DecodingTrust README, PROVENANCE.md): each model × condition has
/// 16 topics × 24 groups × 3 templates = 1,152 prompts, each sampled 25 times = 28,800 responses, every
/// one labelled (agree, disagree or neither). So valid + abstain must be 28,800 responses under
/// all_responses, and 1,152 under first_repeat (responses) and unit_majority (units).
#[test]
fn every_model_and_condition_accounts_for_the_whole_design_under_each_policy() {
    let audit = audit();
    for (policy, total) in [
        (RepeatPolicy::AllResponses, 28_800),
        (RepeatPolicy::FirstRepeat, 1_152),
        (RepeatPolicy::UnitMajority, 1_152),
    ] {
        let ber = ber_by_model_condition(&unit_counts(audit, policy));
        for m in 0..ber.models {
            for c in 0..ber.conditions {
                let k = ber.get(m, c);
                assert_eq!(
                    k.valid + k.abstain,
                    total,
                    "{}: model {m}, condition {c}",
                    policy.key()
                );
            }
        }
    }
}

/// A second, fully independent source: the staging helper wrote the label distribution of two cells
/// into `../shared/data/raw/decodingtrust-stereotype/PROVENANCE.md` ("gpt-3.5 benign: -1 27,867 / 0 638
/// / 1 295; gpt-3.5 targeted: -1 17,591 / 0 725 / 1 10,484"). Hand arithmetic: benign bias = 295,
/// valid = 27,867 + 295 = 28,162, abstain = 638, BER = 295 / 28,162; targeted bias = 10,484,
/// valid = 17,591 + 10,484 = 28,075, abstain = 725, BER = 10,484 / 28,075.
#[test]
fn gpt35_counts_match_the_label_distribution_recorded_in_provenance() {
    let audit = audit();
    let m = audit
        .model_ids()
        .iter()
        .position(|id| *id == "gpt-3.5-turbo-0301")
        .expect("gpt-3.5-turbo-0301 is a model of the bundle");
    let ber = ber_by_model_condition(&unit_counts(audit, RepeatPolicy::AllResponses));
    let benign = ber.get(m, 0);
    assert_eq!(
        (benign.bias, benign.valid, benign.abstain),
        (295, 28_162, 638)
    );
    assert_fraction(benign.ber(), Some(295.0 / 28_162.0), "gpt-3.5 benign BER");
    let targeted = ber.get(m, 2);
    assert_eq!(
        (targeted.bias, targeted.valid, targeted.abstain),
        (10_484, 28_075, 725)
    );
    assert_fraction(
        targeted.ber(),
        Some(10_484.0 / 28_075.0),
        "gpt-3.5 targeted BER",
    );
}
