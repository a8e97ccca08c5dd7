//! `atlas_core::compare` against the independent statsmodels / scipy / numpy reference.
//!
//! Reference values: `tests/reference/expected_compare.json`, written from the repository root by
//! `~/.cache/audit-atlas/venv/bin/python tests/reference/compare_reference.py` (re-check with
//! `--check`). The script reads the default bundle's labels from the RAW DecodingTrust file and
//! decodes `tests/fixtures/tiny-bundle.json` itself; McNemar p-values come from
//! `statsmodels.stats.contingency_tables.mcnemar(exact=True)` (checked there against
//! `scipy.stats.binomtest`), mid-p from `scipy.stats.binom`, adjustments from
//! `statsmodels.stats.multitest.multipletests`.
//!
//! Comparison:
//! * counts (the 2×2, exclusions, replicates), separable flags, sign changes and tie groups exactly;
//! * p-values, BER and scores (fractions) within [`EXACT`] (1e-12), pp values within [`EXACT_PP`];
//! * bootstrap intervals and rank bands on the SAME portable stream (seed 20260722, stream 5) within
//!   [`EXACT_PP`] / [`EXACT`]: the same draws leave no Monte Carlo error between the two sides;
//! * the 2,000-replicate intervals against numpy's own generator (`default_rng(20260722)`) within the
//!   Monte Carlo tolerance the script records per interval end (`tolerance_pp`: 5·√2 standard errors
//!   of a 2.5 % quantile of 2,000 draws, normal approximation with the replicates' sd), and rank
//!   bands within one rank.

mod common;

use std::path::PathBuf;

use atlas_core::compare::{
    benjamini_hochberg, holm, mcnemar_exact, CompareOptions, CompareReport, Comparison,
};
use atlas_core::reweight::ConditionWeights;
use atlas_core::tolerance::{EXACT, EXACT_PP};
use atlas_core::{Audit, RepeatPolicy};
use serde_json::Value;

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn reference() -> Value {
    let path = repo_file("tests/reference/expected_compare.json");
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

#[track_caller]
fn close(actual: Option<f64>, expected: &Value, tol: f64, what: &str) {
    match (actual, expected.as_f64()) {
        (Some(a), Some(e)) => assert!(
            (a - e).abs() <= tol,
            "{what}: got {a:.17}, expected {e:.17} (|diff| {:.3e} > {tol:e})",
            (a - e).abs()
        ),
        (None, None) => assert!(expected.is_null(), "{what}: expected {expected}"),
        (a, _) => panic!("{what}: got {a:?}, expected {expected}"),
    }
}

#[track_caller]
fn close_interval(actual: Option<(f64, f64)>, expected: &Value, tol: [f64; 2], what: &str) {
    match (actual, expected.as_array()) {
        (Some((lo, hi)), Some(e)) => {
            close(Some(lo), &e[0], tol[0], &format!("{what} (lower end)"));
            close(Some(hi), &e[1], tol[1], &format!("{what} (upper end)"));
        }
        (None, None) => assert!(expected.is_null()),
        (a, _) => panic!("{what}: got {a:?}, expected {expected}"),
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn report(
    audit: &Audit,
    policy: RepeatPolicy,
    reps: usize,
    weights: &[Value],
) -> (Comparison, CompareReport) {
    let comparison = Comparison::new(
        audit,
        CompareOptions {
            policy,
            reps,
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let w: Vec<f64> = weights.iter().map(|v| v.as_f64().unwrap()).collect();
    let weights = ConditionWeights::custom(comparison.basis(), w).unwrap();
    let r = comparison.report(&weights).unwrap();
    (comparison, r)
}

/// The hand-chosen discordant counts (b + c = 0, b = c, one-sided zeros, n up to 61,000) and the
/// p-value list with ties: exact p, mid-p, BH and Holm to 1e-12.
#[test]
fn mcnemar_and_adjustments_on_hand_chosen_inputs_match_statsmodels_to_1e_12() {
    let r = reference();
    for case in r["hand"]["mcnemar"].as_array().unwrap() {
        let (b, c) = (u(&case["b"]), u(&case["c"]));
        let t = mcnemar_exact(b, c);
        close(
            Some(t.p_exact),
            &case["p_exact"],
            EXACT,
            &format!("exact p, b={b} c={c}"),
        );
        close(
            Some(t.p_mid),
            &case["p_mid"],
            EXACT,
            &format!("mid-p, b={b} c={c}"),
        );
        assert_eq!(t.note.is_some(), b + c == 0, "note iff b + c = 0");
    }
    let p: Vec<f64> = r["hand"]["adjust"]["p"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (got, method) in [(benjamini_hochberg(&p), "fdr_bh"), (holm(&p), "holm")] {
        let want = r["hand"]["adjust"][method].as_array().unwrap();
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            close(Some(*g), w, EXACT, &format!("{method} p[{i}]"));
        }
    }
}

/// Every bundle, policy and pair: the 2×2, exclusions, McNemar, BH, Holm, separable, BER and score
/// differences, sign changes.
#[test]
fn pair_tables_tests_and_differences_match_the_reference_on_every_policy() {
    let r = reference();
    let mut pairs_seen = 0;
    for (bundle_name, section) in r["bundles"].as_object().unwrap() {
        let audit = load(section);
        for (policy_key, expected) in section["policies"].as_object().unwrap() {
            let policy = RepeatPolicy::from_key(policy_key).unwrap();
            for case in expected["scores"].as_array().unwrap() {
                // Few replicates: this test reads the point values only.
                let (_, rep) = report(&audit, policy, 1, case["weights"].as_array().unwrap());
                let what = format!("{bundle_name}/{policy_key}/{}", case["name"]);
                assert_eq!(
                    rep.pairs.len(),
                    expected["pairs"].as_array().unwrap().len(),
                    "{what}"
                );
                assert_eq!(
                    rep.pairs.len(),
                    case["pairs"].as_array().unwrap().len(),
                    "{what}"
                );
                for (p, e) in rep.pairs.iter().zip(expected["pairs"].as_array().unwrap()) {
                    pairs_seen += 1;
                    let w = format!("{what}: {} vs {}", p.model_a, p.model_b);
                    assert_eq!(p.model_a, e["model_a"].as_str().unwrap(), "{w}");
                    assert_eq!(p.model_b, e["model_b"].as_str().unwrap(), "{w}");
                    let t = &e["table"];
                    assert_eq!(
                        [
                            p.table.both,
                            p.table.a_only,
                            p.table.b_only,
                            p.table.neither,
                            p.table.excluded.invalid_a_only,
                            p.table.excluded.invalid_b_only,
                            p.table.excluded.invalid_both
                        ],
                        [
                            u(&t["both"]),
                            u(&t["a_only"]),
                            u(&t["b_only"]),
                            u(&t["neither"]),
                            u(&t["invalid_a_only"]),
                            u(&t["invalid_b_only"]),
                            u(&t["invalid_both"])
                        ],
                        "{w}: 2×2 and exclusions"
                    );
                    close(
                        Some(p.mcnemar.p_exact),
                        &e["p_exact"],
                        EXACT,
                        &format!("{w}: exact p"),
                    );
                    close(
                        Some(p.mcnemar.p_mid),
                        &e["p_mid"],
                        EXACT,
                        &format!("{w}: mid-p"),
                    );
                    close(Some(p.p_bh), &e["p_bh"], EXACT, &format!("{w}: BH p"));
                    close(Some(p.p_holm), &e["p_holm"], EXACT, &format!("{w}: Holm p"));
                    assert_eq!(
                        p.separable,
                        e["separable"].as_bool().unwrap(),
                        "{w}: separable"
                    );
                    let at = |id: &str| rep.models.iter().position(|m| m == id).unwrap();
                    let (ia, ib) = (at(&p.model_a), at(&p.model_b));
                    assert_eq!(rep.separable[ia][ib], p.separable, "{w}: matrix");
                    assert_eq!(
                        rep.separable[ib][ia], p.separable,
                        "{w}: matrix (symmetric)"
                    );
                    close(p.ber_a, &e["ber_a"], EXACT, &format!("{w}: BER A"));
                    close(p.ber_b, &e["ber_b"], EXACT, &format!("{w}: BER B"));
                    close(
                        p.ber_diff_pp,
                        &e["ber_diff_pp"],
                        EXACT_PP,
                        &format!("{w}: BER diff"),
                    );
                    for c in &p.conditions {
                        let ec = &e["conditions"][c.condition.as_str()];
                        assert_eq!(
                            c.table.a_only,
                            u(&ec["table"]["a_only"]),
                            "{w} {}",
                            c.condition
                        );
                        assert_eq!(
                            c.table.b_only,
                            u(&ec["table"]["b_only"]),
                            "{w} {}",
                            c.condition
                        );
                        assert_eq!(c.table.matched(), {
                            let t = &ec["table"];
                            u(&t["both"]) + u(&t["a_only"]) + u(&t["b_only"]) + u(&t["neither"])
                        });
                        close(
                            c.ber_diff_pp,
                            &ec["ber_diff_pp"],
                            EXACT_PP,
                            &format!("{w} {}", c.condition),
                        );
                        close(
                            c.score_diff_pp,
                            &ec["score_diff_pp"],
                            EXACT_PP,
                            &format!("{w} {}", c.condition),
                        );
                    }
                }
                for (p, e) in rep.pairs.iter().zip(case["pairs"].as_array().unwrap()) {
                    let w = format!("{what}: {} vs {}", p.model_a, p.model_b);
                    close(p.score_a, &e["score_a"], EXACT, &format!("{w}: score A"));
                    close(p.score_b, &e["score_b"], EXACT, &format!("{w}: score B"));
                    close(
                        p.score_diff_pp,
                        &e["score_diff_pp"],
                        EXACT_PP,
                        &format!("{w}: score diff"),
                    );
                    let want: Vec<&str> = e["sign_changes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    assert_eq!(p.sign_changes, want, "{w}: sign changes");
                }
                for b in &rep.rank_bands.bands {
                    close(
                        b.rank,
                        &case["ranks"][b.model.as_str()],
                        EXACT,
                        &format!("{what}: rank of {}", b.model),
                    );
                }
            }
        }
    }
    assert!(pairs_seen >= 3 * 28 * 2, "only {pairs_seen} pairs");
}

/// Same stream, same draws: intervals, rank bands and tie groups equal the numpy recomputation.
#[test]
fn bootstrap_intervals_and_rank_bands_on_the_same_stream_equal_numpy() {
    let r = reference();
    for (bundle_name, section) in r["bundles"].as_object().unwrap() {
        let audit = load(section);
        let boot = &section["policies"]["all_responses"]["same_stream"];
        let reps = boot["reps"].as_u64().unwrap() as usize;
        for case in boot["cases"].as_array().unwrap() {
            let (_, rep) = report(
                &audit,
                RepeatPolicy::AllResponses,
                reps,
                case["weights"].as_array().unwrap(),
            );
            let what = format!("{bundle_name}/{}", case["name"]);
            assert_eq!(rep.reps, reps);
            assert_eq!(
                rep.pairs.len(),
                case["pairs"].as_array().unwrap().len(),
                "{what}: pairs"
            );
            for (p, e) in rep.pairs.iter().zip(case["pairs"].as_array().unwrap()) {
                let w = format!("{what}: {} vs {}", p.model_a, p.model_b);
                close_interval(
                    p.ber_diff_ci_pp,
                    &e["ber_diff_ci_pp"],
                    [EXACT_PP; 2],
                    &format!("{w}: BER diff"),
                );
                close_interval(
                    p.score_diff_ci_pp,
                    &e["score_diff_ci_pp"],
                    [EXACT_PP; 2],
                    &format!("{w}: score diff"),
                );
                assert_eq!(p.ber_replicates as u64, u(&e["ber_replicates"]), "{w}");
                assert_eq!(p.score_replicates as u64, u(&e["score_replicates"]), "{w}");
                for c in &p.conditions {
                    close_interval(
                        c.score_diff_ci_pp,
                        &e["conditions"][c.condition.as_str()],
                        [EXACT_PP; 2],
                        &format!("{w}: {} score diff", c.condition),
                    );
                }
            }
            for b in &rep.rank_bands.bands {
                let e = &case["rank_bands"][b.model.as_str()];
                close_interval(
                    b.lo.zip(b.hi),
                    e,
                    [EXACT; 2],
                    &format!("{what}: rank band of {}", b.model),
                );
                assert_eq!(
                    b.replicates as u64,
                    u(&case["rank_replicates"][b.model.as_str()])
                );
            }
            let want: Vec<Vec<String>> =
                serde_json::from_value(case["tie_groups"].clone()).unwrap();
            assert_eq!(rep.rank_bands.tie_groups, want, "{what}: tie groups");
        }
    }
}

/// Independent generators: the 2,000-replicate Rust intervals within Monte Carlo error of numpy's
/// `default_rng` intervals (tolerance per end recorded by the script), rank bands within one rank.
#[test]
fn bootstrap_intervals_with_2000_replicates_lie_within_monte_carlo_error_of_numpys_generator() {
    let r = reference();
    let section = &r["bundles"]["decodingtrust"];
    let audit = load(section);
    let boot = &section["policies"]["all_responses"]["numpy_rng"];
    let reps = boot["reps"].as_u64().unwrap() as usize;
    assert_eq!(reps, 2000);
    for case in boot["cases"].as_array().unwrap() {
        let (_, rep) = report(
            &audit,
            RepeatPolicy::AllResponses,
            reps,
            case["weights"].as_array().unwrap(),
        );
        assert_eq!(rep.pairs.len(), 28, "all pairs of the 8 models");
        assert_eq!(case["pairs"].as_array().unwrap().len(), 28);
        for (p, e) in rep.pairs.iter().zip(case["pairs"].as_array().unwrap()) {
            let w = format!("{}: {} vs {}", case["name"], p.model_a, p.model_b);
            let tb = e["tolerance_pp"]["ber"].as_f64().unwrap();
            let ts = e["tolerance_pp"]["score"].as_f64().unwrap();
            assert!(
                tb > 0.0 && tb < 1.0 && ts > 0.0 && ts < 1.0,
                "{w}: tolerances {tb} {ts}"
            );
            close_interval(
                p.ber_diff_ci_pp,
                &e["ber_diff_ci_pp"],
                [tb; 2],
                &format!("{w}: BER diff"),
            );
            close_interval(
                p.score_diff_ci_pp,
                &e["score_diff_ci_pp"],
                [ts; 2],
                &format!("{w}: score diff"),
            );
        }
        for b in &rep.rank_bands.bands {
            let e = &case["rank_bands"][b.model.as_str()];
            close_interval(
                b.lo.zip(b.hi),
                e,
                [1.0; 2],
                &format!("rank band of {}", b.model),
            );
        }
    }
}
