//! `atlas_core::headline` against the independent numpy computation of
//! `tests/reference/headline_reference.py` (issue 15, "Overview first"): on the default DecodingTrust
//! bundle, the judge-labelled RQ3 fixture and the clinical fixture, the size, the Eq. 4 ranking with
//! its ranks, high-Abstain flags and 95 % statement-cluster bootstrap intervals, the score ranges
//! across conditions, the order flips (seed Table 11), the Selection–Rationale disagreement (Table 18),
//! the Abstain coverage and the clinical answer change and CFV — counts exactly, fractions and
//! percentage points within 1e-12.
//!
//! Expected values: `tests/reference/expected_headline.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/headline_reference.py` (re-check with
//! `--check`, which also compares the recorded sha256 of each bundle's bytes).

use std::path::PathBuf;

use atlas_core::headline::{headline, Headline, HeadlineOptions, Unit};
use atlas_core::{AbstainThreshold, Audit, RepeatPolicy};
use serde_json::Value;

const TOL: f64 = 1e-12;

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn reference() -> Value {
    let path = repo_file("tests/reference/expected_headline.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).expect("expected_headline.json is JSON")
}

fn computed(section: &Value) -> Headline {
    let path = repo_file(section["path"].as_str().expect("path"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let audit = Audit::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    headline(
        &audit,
        HeadlineOptions {
            policy: RepeatPolicy::AllResponses,
            reps: section["reps"].as_u64().expect("reps") as usize,
            seed: 20_260_722,
            threshold: AbstainThreshold::default(),
        },
    )
}

/// Every key of `expected` is in `actual` with an equal value: integers exactly, other numbers within
/// [`TOL`], strings, booleans and null exactly, lists of the same length. Keys only `actual` has
/// (labels, texts) are not compared. Returns the differences as `path: expected vs actual`.
fn subset_diff(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                match a.get(k) {
                    Some(av) => subset_diff(ev, av, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing from the headline")),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                out.push(format!(
                    "{path}: {} items expected, {} computed",
                    e.len(),
                    a.len()
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                subset_diff(ev, av, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            let exact = e.is_u64() && a.is_u64();
            let ok = if exact {
                e.as_u64() == a.as_u64()
            } else {
                let (x, y) = (e.as_f64().unwrap(), a.as_f64().unwrap());
                (x - y).abs() <= TOL
            };
            if !ok {
                out.push(format!("{path}: expected {e} vs computed {a}"));
            }
        }
        (e, a) if e == a => {}
        (e, a) => out.push(format!("{path}: expected {e} vs computed {a}")),
    }
}

fn check(name: &str) -> Headline {
    let reference = reference();
    let section = &reference["bundles"][name];
    let h = computed(section);
    let actual = serde_json::to_value(&h).expect("a headline serialises");
    let mut problems = Vec::new();
    for key in [
        "size",
        "ranking",
        "score_ranges",
        "score_ranges_excluded",
        "flips",
        "disagreement",
        "abstain",
        "clinical",
    ] {
        subset_diff(&section[key], &actual[key], key, &mut problems);
    }
    assert_eq!(actual["bundle"], section["bundle"]);
    assert!(
        problems.is_empty(),
        "{name}: the headline differs from tests/reference/expected_headline.json in {} place(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    h
}

/// Each finding's number is the structured number it summarises, in the unit it names.
fn check_findings(h: &Headline) {
    let find = |key: &str| {
        h.findings
            .iter()
            .find(|f| f.key == key)
            .unwrap_or_else(|| panic!("no finding {key}"))
    };
    let range = find("score_range");
    assert_eq!((range.view, range.unit), ("scores", Unit::Pp));
    assert_eq!(range.value, h.score_ranges.first().map(|r| r.range_pp));
    let flips = find("order_flips");
    assert_eq!((flips.view, flips.unit), ("analyses", Unit::Count));
    assert_eq!(flips.value, Some(h.flips.flipped as f64));
    let rat = find("selection_rationale");
    assert_eq!((rat.view, rat.unit), ("rationale", Unit::Fraction));
    assert_eq!(rat.value, h.disagreement.as_ref().and_then(|d| d.rate));
    let abstain = find("abstain");
    assert_eq!((abstain.view, abstain.unit), ("scores", Unit::Fraction));
    assert_eq!(abstain.value, h.abstain.share);
    assert!(h
        .findings
        .iter()
        .all(|f| ["scores", "analyses", "rationale", "cases", "clinical"].contains(&f.view)));
}

#[test]
fn the_default_bundle_headline_equals_the_independent_numpy_computation() {
    let h = check("default");
    check_findings(&h);
    // The default bundle is not a degenerate case: flips, flagged cells and intervals exist.
    assert!(h.flips.flipped > 0 && h.abstain.flagged_cells > 0);
    assert!(h.ranking.iter().all(|r| r.interval.is_some()));
    let rat = h
        .findings
        .iter()
        .find(|f| f.key == "selection_rationale")
        .unwrap();
    assert!(rat.text.contains("no judge labels"), "{}", rat.text);
    assert!(h.disagreement.is_none() && h.clinical.is_none());
}

#[test]
fn the_judge_labelled_fixture_headline_reports_the_table_18_disagreement_as_numpy_does() {
    let h = check("rq3_cases");
    check_findings(&h);
    let d = h
        .disagreement
        .as_ref()
        .expect("the fixture has judge columns");
    assert!(d.disagree > 0 && d.pairs > d.disagree, "{d:?}");
}

#[test]
fn the_clinical_fixture_headline_reports_answer_change_and_cfv_as_numpy_does() {
    let h = check("clinical");
    check_findings(&h);
    let views: Vec<(&str, &str)> = h.findings.iter().map(|f| (f.key, f.view)).collect();
    assert!(
        views.contains(&("clinical_answer_change", "clinical")),
        "{views:?}"
    );
    assert!(views.contains(&("clinical_cfv", "clinical")), "{views:?}");
    let c = h.clinical.as_ref().expect("a clinical bundle");
    assert!(c.changed > 0 && c.comparisons > c.changed, "{c:?}");
}

#[test]
fn the_subset_comparison_fails_on_a_changed_count_or_score() {
    let expected = serde_json::json!({"n": 3, "score": 0.25, "list": [1, 2]});
    let mut out = Vec::new();
    subset_diff(
        &expected,
        &serde_json::json!({"n": 3, "score": 0.25, "list": [1, 2], "extra": 1}),
        "$",
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    for changed in [
        serde_json::json!({"n": 4, "score": 0.25, "list": [1, 2]}),
        serde_json::json!({"n": 3, "score": 0.25 + 1e-9, "list": [1, 2]}),
        serde_json::json!({"n": 3, "score": 0.25, "list": [1]}),
        serde_json::json!({"score": 0.25, "list": [1, 2]}),
    ] {
        let mut out = Vec::new();
        subset_diff(&expected, &changed, "$", &mut out);
        assert_eq!(out.len(), 1, "{changed}: {out:?}");
    }
}
