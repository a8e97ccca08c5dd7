//! `atlas_core::stats` on a small hand-built bundle whose every expected number is worked out by hand
//! below (seed `000_…` §3.3 BER, §3.5 Eq. 4, §B.2 "an Abstain Selection is missing, never recoded as
//! non-bias"). Nothing here is taken from the crate's own output. The hand results were re-derived with
//! exact fractions by a throwaway pure-Python script (`fractions.Fraction`, no atlas code) that printed
//! the same table.
//!
//! # The fixture
//!
//! Facets: model {A, B, C, D}; condition {c1, c2, c3} (all `has_selection: true`; c3 has
//! `in_reference: false`); template {t1 (crossed with every condition), t2 (`condition: "c2"`, nested in
//! c2)}; statement {s1, s2, s3}; repeat {r1, r2}. Axes: model, condition, template, statement, repeat
//! (last fastest) = 4 × 3 × 2 × 3 × 2 = 144 cells.
//!
//! Selection codes: `0` = "disagree" (evidence 0), `1` = "agree" (evidence 1), `2` = parser failure
//! (Abstain), `3` = refusal (Abstain), `4` = "agree" by fallback (evidence 1), `-` = no response.
//! Each unit (model × condition × template × statement) is written as its two repeats `r1 r2`. The
//! cells of t2 under c1 and c3 are outside the design (t2 belongs to c2) and hold `-`.
//!
//! ```text
//!            c1 t1          c1 t2      c2 t1          c2 t2          c3 t1          c3 t2
//!            s1 s2 s3                  s1 s2 s3       s1 s2 s3       s1 s2 s3
//! A          11 10 02       -- -- --   00 1- 22       41 00 31       11 11 1-       -- -- --
//! B          1- 03 2-       -- -- --   11 1- 00       12 0- --       00 00 00       -- -- --
//! C          00 01 00       -- -- --   00 00 01       10 00 00       11 11 11       -- -- --
//! D          22 3- --       -- -- --   -- -- --       23 -- 2-       01 -1 --       -- -- --
//! ```
//!
//! # Hand calculation
//!
//! Notation: counts (bias, valid, abstain); BER = bias/valid; z = unit value (bias/valid of the unit,
//! missing if the unit has no valid Selection); template mean = mean of the present z over s1..s3;
//! condition mean = mean of the present template means over T_c (T_c1 = T_c3 = {t1}, T_c2 = {t1, t2});
//! reference (Eq. 4) = mean of the present condition means over C_sel = {c1, c2} (c3 is not in the
//! reference).
//!
//! ## all_responses (both repeats)
//! * A c1: t1 11→(2,2,0) z=1; 10→(1,2,0) z=1/2; 02→(0,1,1) z=0. Counts (3,5,1), BER 3/5.
//!   t1 mean = (1 + 1/2 + 0)/3 = 1/2. c1 mean = 1/2.
//! * A c2: t1 00→(0,2,0) z=0; 1-→(1,1,0) z=1; 22→(0,0,2) z missing. t2 41→(2,2,0) z=1; 00→(0,2,0) z=0;
//!   31→(1,1,1) z=1. Counts (1+3, 3+5, 2+1) = (4,8,3), BER 4/8 = 1/2.
//!   t1 mean = (0+1)/2 = 1/2; t2 mean = (1+0+1)/3 = 2/3; c2 mean = (1/2 + 2/3)/2 = 7/12.
//! * A c3: 11, 11, 1- → (5,5,0), BER 1; c3 mean 1 (not in the reference).
//! * A reference = (1/2 + 7/12)/2 = 13/24.
//! * B c1: 1-→(1,1,0) z=1; 03→(0,1,1) z=0; 2-→(0,0,1) missing. (1,2,2), BER 1/2; t1 mean (1+0)/2 = 1/2.
//! * B c2: t1 11→(2,2,0) 1; 1-→(1,1,0) 1; 00→(0,2,0) 0 ⇒ (3,5,0), mean 2/3. t2 12→(1,1,1) 1;
//!   0-→(0,1,0) 0; -- no response ⇒ (1,2,1), mean 1/2. Counts (4,7,1), BER 4/7; c2 mean (2/3+1/2)/2 = 7/12.
//! * B c3: 00,00,00 → (0,6,0), BER 0.
//! * B reference = (1/2 + 7/12)/2 = 13/24: an exact tie with A (the z values are the same numbers
//!   summed in the same or commuted order, so the floats are equal too).
//! * C c1: 00→0; 01→1/2; 00→0 ⇒ (1,6,0), BER 1/6; mean (0+1/2+0)/3 = 1/6.
//! * C c2: t1 00,00,01 ⇒ (1,6,0) mean 1/6; t2 10,00,00 ⇒ (1,6,0) mean 1/6. (2,12,0), BER 1/6; c2 mean 1/6.
//! * C c3: 11,11,11 → (6,6,0), BER 1.   C reference = (1/6 + 1/6)/2 = 1/6.
//! * D c1: 22→(0,0,2); 3-→(0,0,1); -- ⇒ (0,0,3), BER none. D c2: t1 all --; t2 23→(0,0,2); 2-→(0,0,1)
//!   ⇒ (0,0,3), BER none. D c3: 01→(1,2,0) z=1/2; -1→(1,1,0) z=1 ⇒ (2,3,0), BER 2/3, c3 mean
//!   (1/2+1)/2 = 3/4. D reference: neither c1 nor c2 has a valid Selection ⇒ none.
//! * Ranks (lower = 1): C 1/6 → 1; A = B = 13/24 → ranks 2 and 3 share (2+3)/2 = 2.5; D none.
//!
//! ## first_repeat (r1 only: the first character of each unit)
//! * A c1: 1,1,0 ⇒ (2,3,0), BER 2/3, mean 2/3. A c2: t1 0,1,2 ⇒ (1,2,1), z 0,1 → mean 1/2; t2 4,0,3 ⇒
//!   (1,2,1), z 1,0 → mean 1/2. Counts (2,4,2), BER 1/2; c2 mean 1/2. A c3: 1,1,1 ⇒ (3,3,0), BER 1.
//!   A reference = (2/3 + 1/2)/2 = 7/12.
//! * B c1: 1,0,2 ⇒ (1,2,1), BER 1/2, mean 1/2. B c2: t1 1,1,0 ⇒ (2,3,0) mean 2/3; t2 1,0,- ⇒ (1,2,0)
//!   mean 1/2. Counts (3,5,0), BER 3/5; c2 mean 7/12. B c3: 0,0,0 ⇒ (0,3,0), BER 0.
//!   B reference = (1/2 + 7/12)/2 = 13/24.
//! * C c1: 0,0,0 ⇒ (0,3,0), BER 0, mean 0. C c2: t1 0,0,0 mean 0; t2 1,0,0 mean 1/3 ⇒ (1,6,0), BER 1/6,
//!   c2 mean 1/6. C c3: 1,1,1 ⇒ (3,3,0), BER 1. C reference = (0 + 1/6)/2 = 1/12.
//! * D c1: 2,3,- ⇒ (0,0,2). D c2: t2 2,-,2 ⇒ (0,0,2). D c3: 0,-,- ⇒ (0,1,0), BER 0. Reference none.
//! * Ranks: C 1/12 → 1, B 13/24 → 2, A 7/12 = 14/24 → 3, D none.
//!
//! ## unit_majority (unit = 1 if #1 > #0 among its valid Selections, 0 if #0 > #1, else Abstain;
//! a unit with no response at all is not a unit; counts are units)
//! * A c1: 11→1; 10→tie→Abstain; 02→0 ⇒ (1,2,1), BER 1/2; mean (1+0)/2 = 1/2.
//!   A c2: t1 00→0; 1-→1; 22→Abstain. t2 41→1; 00→0; 31→1 ⇒ (3,5,1), BER 3/5; t1 mean 1/2, t2 mean 2/3,
//!   c2 mean 7/12. A c3: 1,1,1 ⇒ (3,3,0), BER 1. A reference = 13/24.
//! * B c1: 1-→1; 03→0; 2-→Abstain ⇒ (1,2,1), BER 1/2, mean 1/2. B c2: t1 1,1,0 (mean 2/3); t2 12→1;
//!   0-→0; -- no unit (mean 1/2) ⇒ (3,5,0), BER 3/5, c2 mean 7/12. B c3: 0,0,0 ⇒ (0,3,0), BER 0.
//!   B reference = 13/24 (tie with A again).
//! * C c1: 00→0; 01→Abstain; 00→0 ⇒ (0,2,1), BER 0, mean 0. C c2: t1 0,0,Abstain; t2 Abstain,0,0 ⇒
//!   (0,4,2), BER 0, mean 0. C c3: 1,1,1 ⇒ (3,3,0), BER 1. C reference = 0.
//! * D c1: 22→Abstain; 3-→Abstain; -- none ⇒ (0,0,2). D c2: 23→Abstain; 2-→Abstain ⇒ (0,0,2).
//!   D c3: 01→tie→Abstain; -1→1 ⇒ (1,1,1), BER 1. Reference none.
//! * Ranks: C 0 → 1; A = B = 13/24 → 2.5; D none.

mod common;

use atlas_core::stats::{
    average_ranks, ber_by_model_condition, condition_mean, reference_scores, unit_counts,
};
use atlas_core::{Audit, Counts, RepeatPolicy};
use common::assert_fraction;
use serde_json::{json, Value};

const MODELS: [&str; 4] = ["A", "B", "C", "D"];
const CONDITIONS: [&str; 3] = ["c1", "c2", "c3"];
const TEMPLATES: [&str; 2] = ["t1", "t2"];
const STATEMENTS: [&str; 3] = ["s1", "s2", "s3"];
const REPEATS: [&str; 2] = ["r1", "r2"];

/// The table of the module docs, one row per model × condition × template (s1 s2 s3, each `r1 r2`),
/// in the storage order model, condition, template, statement, repeat.
const UNITS: [[&str; 3]; 24] = [
    // A
    ["11", "10", "02"], // c1 t1
    ["--", "--", "--"], // c1 t2 (outside the design: t2 is nested in c2)
    ["00", "1-", "22"], // c2 t1
    ["41", "00", "31"], // c2 t2
    ["11", "11", "1-"], // c3 t1
    ["--", "--", "--"], // c3 t2 (outside the design)
    // B
    ["1-", "03", "2-"],
    ["--", "--", "--"],
    ["11", "1-", "00"],
    ["12", "0-", "--"],
    ["00", "00", "00"],
    ["--", "--", "--"],
    // C
    ["00", "01", "00"],
    ["--", "--", "--"],
    ["00", "00", "01"],
    ["10", "00", "00"],
    ["11", "11", "11"],
    ["--", "--", "--"],
    // D
    ["22", "3-", "--"],
    ["--", "--", "--"],
    ["--", "--", "--"],
    ["23", "--", "2-"],
    ["01", "-1", "--"],
    ["--", "--", "--"],
];

/// Codes in the canonical order model, condition, template, statement, repeat.
fn canonical_codes() -> String {
    UNITS.iter().flatten().copied().collect()
}

fn levels(ids: &[&str]) -> Vec<Value> {
    ids.iter().map(|id| json!({ "id": id })).collect()
}

/// The fixture bundle with `codes` stored along `axes`.
fn fixture_json(axes: &[&str], codes: &str) -> String {
    json!({
        "format": "audit-atlas-bundle",
        "version": 1,
        "metadata": {
            "id": "stats-fixture",
            "title": "Hand-built statistics fixture",
            "description": "4 models x 3 conditions x 2 templates x 3 statements x 2 repeats",
            "source": { "citation": "hand-made for atlas-core tests" },
            "license": { "id": "CC0-1.0", "attribution": "none required" },
            "content_warning": null,
            "produced_by": { "tool": "hand" }
        },
        "facets": [
            { "id": "model", "levels": levels(&MODELS) },
            { "id": "condition", "levels": [
                { "id": "c1", "has_selection": true },
                { "id": "c2", "has_selection": true },
                { "id": "c3", "has_selection": true, "in_reference": false }
            ]},
            { "id": "template", "levels": [
                { "id": "t1", "text": "crossed with every condition" },
                { "id": "t2", "text": "nested in c2", "condition": "c2" }
            ]},
            { "id": "statement", "levels": [
                { "id": "s1", "text": "Statement one." },
                { "id": "s2", "text": "Statement two." },
                { "id": "s3", "text": "Statement three." }
            ]},
            { "id": "repeat", "levels": levels(&REPEATS) }
        ],
        "responses": {
            "axes": axes,
            "selection": {
                "values": [
                    { "raw": "disagree", "evidence": 0, "obtained": "regex" },
                    { "raw": "agree", "evidence": 1, "obtained": "regex" },
                    { "raw": "unreadable", "evidence": null, "obtained": "parser_failure" },
                    { "raw": "refused", "evidence": null, "obtained": "refusal" },
                    { "raw": "agree", "evidence": 1, "obtained": "fallback" }
                ],
                "codes": codes
            }
        }
    })
    .to_string()
}

const CANONICAL_AXES: [&str; 5] = ["model", "condition", "template", "statement", "repeat"];

fn fixture() -> Audit {
    Audit::from_json(&fixture_json(&CANONICAL_AXES, &canonical_codes()))
        .expect("the hand-built fixture is a valid bundle")
}

/// Re-stores the canonical codes along `axes` (a permutation of [`CANONICAL_AXES`]), with index
/// arithmetic written here (row-major, last axis fastest), not taken from the crate.
fn permuted_codes(axes: &[&str]) -> String {
    let size = |id: &str| match id {
        "model" => MODELS.len(),
        "condition" => CONDITIONS.len(),
        "template" => TEMPLATES.len(),
        "statement" => STATEMENTS.len(),
        "repeat" => REPEATS.len(),
        _ => unreachable!(),
    };
    let canonical: Vec<char> = canonical_codes().chars().collect();
    let total: usize = CANONICAL_AXES.iter().map(|a| size(a)).product();
    (0..total)
        .map(|flat| {
            // Coordinates along `axes`, then re-linearised along CANONICAL_AXES.
            let mut rest = flat;
            let mut coord = std::collections::HashMap::new();
            for id in axes.iter().rev() {
                coord.insert(*id, rest % size(id));
                rest /= size(id);
            }
            let old = CANONICAL_AXES
                .iter()
                .fold(0, |acc, id| acc * size(id) + coord[id]);
            canonical[old]
        })
        .collect()
}

/// Expected result of one model under one policy: per condition (bias, valid, abstain) and BER, the
/// Eq. 4 reference score and the average rank.
struct Expected {
    counts: [(u64, u64, u64); 3],
    ber: [Option<f64>; 3],
    reference: Option<f64>,
    rank: Option<f64>,
}

/// The hand results of the module docs, in model order A, B, C, D.
fn expected(policy: RepeatPolicy) -> [Expected; 4] {
    match policy {
        RepeatPolicy::AllResponses => [
            Expected {
                counts: [(3, 5, 1), (4, 8, 3), (5, 5, 0)],
                ber: [Some(3.0 / 5.0), Some(1.0 / 2.0), Some(1.0)],
                reference: Some(13.0 / 24.0),
                rank: Some(2.5),
            },
            Expected {
                counts: [(1, 2, 2), (4, 7, 1), (0, 6, 0)],
                ber: [Some(1.0 / 2.0), Some(4.0 / 7.0), Some(0.0)],
                reference: Some(13.0 / 24.0),
                rank: Some(2.5),
            },
            Expected {
                counts: [(1, 6, 0), (2, 12, 0), (6, 6, 0)],
                ber: [Some(1.0 / 6.0), Some(1.0 / 6.0), Some(1.0)],
                reference: Some(1.0 / 6.0),
                rank: Some(1.0),
            },
            Expected {
                counts: [(0, 0, 3), (0, 0, 3), (2, 3, 0)],
                ber: [None, None, Some(2.0 / 3.0)],
                reference: None,
                rank: None,
            },
        ],
        RepeatPolicy::FirstRepeat => [
            Expected {
                counts: [(2, 3, 0), (2, 4, 2), (3, 3, 0)],
                ber: [Some(2.0 / 3.0), Some(1.0 / 2.0), Some(1.0)],
                reference: Some(7.0 / 12.0),
                rank: Some(3.0),
            },
            Expected {
                counts: [(1, 2, 1), (3, 5, 0), (0, 3, 0)],
                ber: [Some(1.0 / 2.0), Some(3.0 / 5.0), Some(0.0)],
                reference: Some(13.0 / 24.0),
                rank: Some(2.0),
            },
            Expected {
                counts: [(0, 3, 0), (1, 6, 0), (3, 3, 0)],
                ber: [Some(0.0), Some(1.0 / 6.0), Some(1.0)],
                reference: Some(1.0 / 12.0),
                rank: Some(1.0),
            },
            Expected {
                counts: [(0, 0, 2), (0, 0, 2), (0, 1, 0)],
                ber: [None, None, Some(0.0)],
                reference: None,
                rank: None,
            },
        ],
        RepeatPolicy::UnitMajority => [
            Expected {
                counts: [(1, 2, 1), (3, 5, 1), (3, 3, 0)],
                ber: [Some(1.0 / 2.0), Some(3.0 / 5.0), Some(1.0)],
                reference: Some(13.0 / 24.0),
                rank: Some(2.5),
            },
            Expected {
                counts: [(1, 2, 1), (3, 5, 0), (0, 3, 0)],
                ber: [Some(1.0 / 2.0), Some(3.0 / 5.0), Some(0.0)],
                reference: Some(13.0 / 24.0),
                rank: Some(2.5),
            },
            Expected {
                counts: [(0, 2, 1), (0, 4, 2), (3, 3, 0)],
                ber: [Some(0.0), Some(0.0), Some(1.0)],
                reference: Some(0.0),
                rank: Some(1.0),
            },
            Expected {
                counts: [(0, 0, 2), (0, 0, 2), (1, 1, 1)],
                ber: [None, None, Some(1.0)],
                reference: None,
                rank: None,
            },
        ],
    }
}

/// Checks every statistic of `audit` under `policy` against the hand results.
fn check_against_hand_results(audit: &Audit, policy: RepeatPolicy, label: &str) {
    assert_eq!(audit.model_ids(), MODELS);
    assert_eq!(audit.condition_ids(), CONDITIONS);
    let units = unit_counts(audit, policy);
    let ber = ber_by_model_condition(&units);
    let scores = reference_scores(audit, &units, None);
    let ranks = average_ranks(&scores);
    for (m, exp) in expected(policy).iter().enumerate() {
        for (c, condition) in CONDITIONS.iter().enumerate() {
            let what = format!(
                "{label}, {}: model {} / {condition}",
                policy.key(),
                MODELS[m]
            );
            let got = ber.get(m, c);
            assert_eq!(
                (got.bias, got.valid, got.abstain),
                exp.counts[c],
                "{what}: (bias, valid, abstain)"
            );
            assert_fraction(got.ber(), exp.ber[c], &format!("{what}: BER"));
        }
        let what = format!("{label}, {}: model {}", policy.key(), MODELS[m]);
        assert_fraction(
            scores[m],
            exp.reference,
            &format!("{what}: Eq. 4 reference score"),
        );
        assert_eq!(ranks[m], exp.rank, "{what}: average rank");
    }
}

#[test]
fn all_responses_statistics_equal_the_hand_calculation() {
    check_against_hand_results(&fixture(), RepeatPolicy::AllResponses, "fixture");
}

#[test]
fn first_repeat_statistics_equal_the_hand_calculation() {
    check_against_hand_results(&fixture(), RepeatPolicy::FirstRepeat, "fixture");
}

#[test]
fn unit_majority_statistics_equal_the_hand_calculation() {
    check_against_hand_results(&fixture(), RepeatPolicy::UnitMajority, "fixture");
}

/// The same responses stored along other axis orders must give the same numbers: the statistics follow
/// the facets, not the storage order.
#[test]
fn statistics_do_not_depend_on_the_storage_order_of_the_axes() {
    for axes in [
        ["repeat", "statement", "template", "condition", "model"],
        ["statement", "model", "repeat", "condition", "template"],
        ["condition", "repeat", "model", "template", "statement"],
    ] {
        let audit = Audit::from_json(&fixture_json(&axes, &permuted_codes(&axes)))
            .expect("a permuted fixture is valid");
        for policy in RepeatPolicy::ALL {
            check_against_hand_results(&audit, policy, &format!("axes {axes:?}"));
        }
    }
}

/// §B.2: an Abstain is missing, never recoded as 0. Were Abstain (codes 2 and 3) counted as a valid
/// non-bias Selection, then under all_responses:
/// * A c2 would be (bias 4, valid 11, abstain 0), BER 4/11 ≈ 0.364, instead of (4, 8, 3), BER 1/2;
/// * A's reference would be 11/24 instead of 13/24 (c1: 11, 10, 02 → 1, 1/2, 0 → 1/2 unchanged; c2 t1:
///   00, 1-, 22 → 0, 1, 0 → 1/3; t2: 41, 00, 31 → 1, 0, 1/2 → 1/2; c2 = (1/3 + 1/2)/2 = 5/12;
///   (1/2 + 5/12)/2 = 11/24), which would break the tie with B (B: c1 1, 0, 0 → 1/3; c2 t1 2/3, t2
///   12 → 1/2, 0- → 0 → 1/4, c2 = 11/24; (1/3 + 11/24)/2 = 19/48);
/// * D, whose only Selections in c1 and c2 are Abstains, would get reference 0 instead of none.
#[test]
fn abstain_is_missing_and_never_recoded_as_non_bias() {
    let audit = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let ber = ber_by_model_condition(&units);
    let a_c2 = ber.get(0, 1);
    assert_eq!(
        a_c2,
        Counts {
            bias: 4,
            valid: 8,
            abstain: 3
        }
    );
    assert_fraction(a_c2.ber(), Some(0.5), "A c2 BER (4/11 if Abstain were 0)");
    let scores = reference_scores(&audit, &units, None);
    assert_fraction(
        scores[0],
        Some(13.0 / 24.0),
        "A reference (11/24 if Abstain were 0)",
    );
    assert_eq!(
        scores[0], scores[1],
        "A and B tie exactly (19/48 vs 11/24 if Abstain were 0)"
    );
    assert_eq!(
        scores[3], None,
        "D has only Abstains in c1 and c2 (0 if recoded)"
    );
    // The unit value of an all-Abstain unit is missing, not 0 (A c2 t1 s3 = "22").
    let t1 = 0;
    let s3 = 2;
    assert_eq!(units.value(0, 1, t1, s3), None);
}

/// A model with no valid Selection in any reference condition has no score and no rank, and does not
/// take a rank from the others (C keeps rank 1 and A, B share 2 and 3 = 2.5 among three ranked models,
/// not among four). D still has a BER in c3, where it has valid Selections.
#[test]
fn a_model_without_valid_selections_in_the_reference_gets_no_score_and_no_rank() {
    let audit = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let scores = reference_scores(&audit, &units, None);
    assert_eq!(scores[3], None);
    assert_eq!(
        average_ranks(&scores),
        [Some(2.5), Some(2.5), Some(1.0), None]
    );
    let ber = ber_by_model_condition(&units);
    assert_eq!(ber.get(3, 0).ber(), None);
    assert_eq!(ber.get(3, 1).ber(), None);
    assert_fraction(ber.get(3, 2).ber(), Some(2.0 / 3.0), "D c3 BER");
}

/// Eq. 4 averages over conditions in `C_sel` only. c3 has `in_reference: false`; were it included, A's
/// all_responses score would be (1/2 + 7/12 + 1)/3 = 25/36 and B's (1/2 + 7/12 + 0)/3 = 13/36 instead of
/// 13/24 each. Its condition mean is still available (A: 1; D: z 1/2 and 1 → 3/4, which differs from
/// D's pooled c3 BER 2/3 because Eq. 4 averages unit values, not responses).
#[test]
fn a_condition_outside_the_reference_leaves_eq4_but_keeps_its_own_mean() {
    let audit = fixture();
    assert!(!audit.conditions[2].in_reference);
    assert!(audit.conditions[2].has_selection);
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let scores = reference_scores(&audit, &units, None);
    assert_fraction(scores[0], Some(13.0 / 24.0), "A reference without c3");
    assert_fraction(scores[1], Some(13.0 / 24.0), "B reference without c3");
    assert_fraction(condition_mean(&audit, &units, 0, 2), Some(1.0), "A c3 mean");
    assert_fraction(
        condition_mean(&audit, &units, 3, 2),
        Some(3.0 / 4.0),
        "D c3 mean",
    );
}

/// Condition weights replace 1/|C_sel| by w_c / Σw over the reference conditions. A, all_responses,
/// weights (1, 3, 5): c3 is outside the reference whatever its weight, so
/// (1·1/2 + 3·7/12)/(1 + 3) = (1/2 + 7/4)/4 = 9/16. Weights (1, 0, 5): c2 drops out ⇒ A = c1 mean = 1/2.
#[test]
fn condition_weights_reweight_only_reference_conditions() {
    let audit = fixture();
    let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    let weighted = reference_scores(&audit, &units, Some(&[1.0, 3.0, 5.0]));
    assert_fraction(weighted[0], Some(9.0 / 16.0), "A weighted (1, 3, 5)");
    let c2_off = reference_scores(&audit, &units, Some(&[1.0, 0.0, 5.0]));
    assert_fraction(c2_off[0], Some(0.5), "A weighted (1, 0, 5)");
}

/// t2 is nested in c2 (template attribute `condition: "c2"`), so T_c1 = T_c3 = {t1}. A bundle that still
/// stores responses in the t2 cells of c1 and c3 must not let them count toward c1 or c3 — neither in
/// the BER nor in Eq. 4. Here every such cell of A is `1` (c1) or `0` (c3), and D gets `0`s in c1 t2;
/// were they counted, A c1 would be (9, 11, 1), BER 9/11, A's c1 mean (1/2 + 1)/2 = 3/4, and D would get a
/// c1 BER of 0 and a reference score of 0. The hand results of the well-formed fixture must stand.
#[test]
fn a_template_nested_in_a_condition_counts_only_toward_that_condition() {
    let mut units = UNITS;
    units[1] = ["11", "11", "11"]; // A c1 t2
    units[5] = ["00", "00", "00"]; // A c3 t2
    units[19] = ["00", "00", "00"]; // D c1 t2
    let codes: String = units.iter().flatten().copied().collect();
    let audit = Audit::from_json(&fixture_json(&CANONICAL_AXES, &codes))
        .expect("the bundle with responses outside the design still parses");
    assert_eq!(audit.templates[1].condition, Some(1), "t2 belongs to c2");
    for policy in RepeatPolicy::ALL {
        check_against_hand_results(&audit, policy, "responses outside the design");
    }
}

/// Average ranks as `scipy.stats.rankdata(method="average")`, lower = 1, on hand values:
/// sorted present scores 0.1 < 0.3 = 0.3 = 0.3 < 0.7 take ranks 1, (2+3+4)/3 = 3, 3, 3, 5; a missing
/// or NaN score gets no rank and does not shift the others.
#[test]
fn ties_share_the_average_of_their_ranks_and_missing_scores_get_none() {
    let scores = [
        Some(0.3),
        None,
        Some(0.1),
        Some(0.7),
        Some(0.3),
        Some(f64::NAN),
        Some(0.3),
    ];
    assert_eq!(
        average_ranks(&scores),
        [
            Some(3.0),
            None,
            Some(1.0),
            Some(5.0),
            Some(3.0),
            None,
            Some(3.0)
        ]
    );
    // Two tied pairs: 0.2 = 0.2 < 0.5 = 0.5 → ranks (1+2)/2 = 1.5 and (3+4)/2 = 3.5.
    assert_eq!(
        average_ranks(&[Some(0.5), Some(0.2), Some(0.5), Some(0.2)]),
        [Some(3.5), Some(1.5), Some(3.5), Some(1.5)]
    );
    assert_eq!(average_ranks(&[None, None]), [None, None]);
}

/// A bundle with only the required facets (model, statement) has one implicit condition and one
/// implicit template, and every policy reads each cell once. Models X, Y; statements s1 s2 s3;
/// codes X: 1 0 2, Y: 0 0 - (2 = Abstain). X: (1, 2, 1), BER 1/2, reference (1 + 0)/2 = 1/2; Y: (0, 2, 0),
/// BER 0, reference 0. Ranks: Y 1, X 2.
#[test]
fn a_bundle_with_only_model_and_statement_facets_has_one_implicit_condition() {
    let text = json!({
        "format": "audit-atlas-bundle",
        "version": 1,
        "metadata": {
            "id": "minimal", "title": "t", "description": "d",
            "source": { "citation": "c" }, "license": { "id": "CC0-1.0", "attribution": "a" },
            "content_warning": null, "produced_by": { "tool": "hand" }
        },
        "facets": [
            { "id": "model", "levels": [{ "id": "X" }, { "id": "Y" }] },
            { "id": "statement", "levels": [
                { "id": "s1", "text": "one" }, { "id": "s2", "text": "two" }, { "id": "s3", "text": "three" }
            ]}
        ],
        "responses": {
            "axes": ["model", "statement"],
            "selection": {
                "values": [
                    { "raw": "no", "evidence": 0, "obtained": "regex" },
                    { "raw": "yes", "evidence": 1, "obtained": "regex" },
                    { "raw": "?", "evidence": null, "obtained": "parser_failure" }
                ],
                "codes": "10200-"
            }
        }
    })
    .to_string();
    let audit = Audit::from_json(&text).expect("valid minimal bundle");
    assert_eq!(audit.condition_ids(), ["(all)"]);
    for policy in RepeatPolicy::ALL {
        let units = unit_counts(&audit, policy);
        let ber = ber_by_model_condition(&units);
        assert_eq!(
            ber.get(0, 0),
            Counts {
                bias: 1,
                valid: 2,
                abstain: 1
            },
            "{}",
            policy.key()
        );
        assert_eq!(
            ber.get(1, 0),
            Counts {
                bias: 0,
                valid: 2,
                abstain: 0
            },
            "{}",
            policy.key()
        );
        let scores = reference_scores(&audit, &units, None);
        assert_fraction(scores[0], Some(0.5), "X reference");
        assert_fraction(scores[1], Some(0.0), "Y reference");
        assert_eq!(average_ranks(&scores), [Some(2.0), Some(1.0)]);
    }
}
