//! Likelihood readouts (`responses.likelihood`, docs/bundle-format.md "Likelihood readouts"): the
//! reader's rules with named errors, the round trip, old bundles unchanged, and the
//! stereotyped-candidate preference (seed `000_…` §C.2) on hand-worked cells.

use atlas_core::likelihood::{stereotype_preference, Basis};
use atlas_core::{Audit, BundleError};
use serde_json::{json, Value};

fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// 1 model × 2 conditions × 3 statements = 6 cells, axes model, condition, statement.
fn bundle(likelihood: Value) -> Value {
    json!({
        "format": "audit-atlas-bundle", "version": 1,
        "metadata": {"id": "lk-test", "title": "t", "description": "d", "source": {"citation": "c"},
            "license": {"id": "CC0-1.0", "attribution": "none"}, "content_warning": null,
            "produced_by": {"tool": "hand"}},
        "facets": [
            {"id": "model", "levels": [{"id": "m"}]},
            {"id": "condition", "levels": [{"id": "crows", "has_selection": true}, {"id": "stereoset", "has_selection": false}]},
            {"id": "statement", "levels": [{"id": "s1", "text": "a"}, {"id": "s2", "text": "b"}, {"id": "s3", "text": "c"}]}
        ],
        "responses": {"axes": ["model", "condition", "statement"],
            "selection": {"values": [{"raw": "x", "evidence": 1, "obtained": "regex"}], "codes": "0-----"},
            "likelihood": likelihood}
    })
}

fn good() -> Value {
    // Cell order: (crows, s1) (crows, s2) (crows, s3) (stereoset, s1) (stereoset, s2) (stereoset, s3).
    json!({
        "candidates": 2,
        "stereotyped": "001-1-",
        "logprob_sum": [-6.0, -5.0,  -4.0, -2.0,  -3.0, -3.0,  null, null,  -1.0, null,  null, null],
        "token_count": [3, 2,  2, 1,  1, 1,  null, null,  2, 2,  null, null]
    })
}

fn load(v: &Value) -> Result<Audit, BundleError> {
    Audit::from_json(&v.to_string())
}

fn error_of(mut change: impl FnMut(&mut Value)) -> String {
    let mut v = bundle(good());
    change(&mut v["responses"]["likelihood"]);
    match load(&v) {
        Ok(_) => panic!("accepted a broken likelihood column"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn likelihood_readouts_round_trip_through_the_reader() {
    let audit = load(&bundle(good())).expect("valid");
    let l = audit.file.responses.likelihood.clone().expect("kept");
    assert_eq!(l.candidates, 2);
    assert_eq!(l.stereotyped, "001-1-");
    // The serde image written back (as a producer writes it) reads back to the same readouts.
    let file: atlas_core::BundleFile = serde_json::from_value(bundle(good())).expect("serde image");
    let text = serde_json::to_string(&file).expect("serialises");
    let again = Audit::from_json(&text).expect("reads back");
    assert_eq!(again.file.responses.likelihood, Some(l));
}

#[test]
fn bundles_without_likelihood_readouts_load_unchanged() {
    for name in [
        "tiny-bundle.json",
        "loader-tiny-bundle.json",
        "one-model-bundle.json",
    ] {
        let path = repo().join("tests/fixtures").join(name);
        let text = std::fs::read_to_string(&path).expect("fixture");
        let audit = Audit::from_json(&text).expect("old bundle loads");
        assert!(audit.file.responses.likelihood.is_none(), "{name}");
        assert!(
            stereotype_preference(&audit, Basis::Sum).is_none(),
            "{name}"
        );
        // Writing it back adds no `likelihood` key.
        let out = serde_json::to_value(&audit.file).expect("serialises");
        assert!(out["responses"].get("likelihood").is_none(), "{name}");
    }
}

#[test]
fn preference_counts_ties_and_missing_readouts_by_hand() {
    let audit = load(&bundle(good())).expect("valid");
    // Mean per token. (crows,s1): −6/3 = −2 vs −5/2 = −2.5 → preferred. (crows,s2): −4/2 = −2 vs
    // −2/1 = −2 → tie. (crows,s3): stereotyped 1: −3/1 vs −3/1 → tie. (stereoset,s2): candidate 1
    // has no sum → missing.
    let t = stereotype_preference(&audit, Basis::MeanPerToken).expect("readouts");
    let (_, p) = &t.models[0];
    assert_eq!(
        (p.readouts, p.preferred, p.not_preferred, p.ties, p.missing),
        (4, 1, 0, 2, 1)
    );
    assert_eq!(p.share(), Some(1.0 / 3.0));
    assert_eq!(t.by_condition.len(), 2);
    let (m, c, crows) = &t.by_condition[0];
    assert_eq!(
        (m.as_str(), c.as_str(), crows.valid(), crows.preferred),
        ("m", "crows", 3, 1)
    );
    let (_, c, stereoset) = &t.by_condition[1];
    assert_eq!(
        (
            c.as_str(),
            stereoset.readouts,
            stereoset.missing,
            stereoset.share()
        ),
        ("stereoset", 1, 1, None)
    );
    // By sum. (crows,s1): −6 < −5 → not preferred; (crows,s2): −4 < −2 → not; (crows,s3): tie.
    let s = stereotype_preference(&audit, Basis::Sum).expect("readouts");
    let (_, p) = &s.models[0];
    assert_eq!(
        (p.preferred, p.not_preferred, p.ties, p.missing),
        (0, 2, 1, 1)
    );
    assert_eq!(p.share(), Some(0.0));
}

#[test]
fn a_wrong_length_names_the_field_and_both_counts() {
    let e = error_of(|l| {
        l["logprob_sum"].as_array_mut().unwrap().pop();
    });
    assert!(
        e.contains("responses.likelihood.logprob_sum")
            && e.contains("11 entries")
            && e.contains("6 × 2 = 12"),
        "{e}"
    );
    let e = error_of(|l| l["stereotyped"] = json!("00"));
    assert!(
        e.contains("responses.likelihood.stereotyped") && e.contains('2') && e.contains('6'),
        "{e}"
    );
}

#[test]
fn a_bad_stereotyped_mark_names_the_cell() {
    let e = error_of(|l| l["stereotyped"] = json!("002-1-"));
    assert!(
        e.contains("responses.likelihood.stereotyped")
            && e.contains("'2'")
            && e.contains("condition=crows, statement=s3"),
        "{e}"
    );
}

#[test]
fn a_positive_log_probability_names_the_entry_and_cell() {
    let e = error_of(|l| l["logprob_sum"][3] = json!(0.5));
    assert!(
        e.contains("responses.likelihood.logprob_sum[3]")
            && e.contains("≤ 0")
            && e.contains("statement=s2"),
        "{e}"
    );
}

#[test]
fn a_zero_token_count_and_numbers_on_a_cell_without_readout_are_refused() {
    let e = error_of(|l| l["token_count"][0] = json!(0));
    assert!(
        e.contains("responses.likelihood.token_count[0]") && e.contains("at least one token"),
        "{e}"
    );
    let e = error_of(|l| l["logprob_sum"][6] = json!(-1.0));
    assert!(
        e.contains("responses.likelihood.logprob_sum[6]")
            && e.contains("must have null entries")
            && e.contains("condition=stereoset, statement=s1"),
        "{e}"
    );
}

#[test]
fn candidates_outside_two_to_ten_and_unknown_keys_are_refused() {
    let e = error_of(|l| l["candidates"] = json!(1));
    assert!(
        e.contains("responses.likelihood.candidates") && e.contains("2 to 10"),
        "{e}"
    );
    let e = error_of(|l| l["extra"] = json!(true));
    assert!(e.contains("extra"), "{e}");
}
