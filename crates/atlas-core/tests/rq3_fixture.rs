//! RQ3 (`atlas_core::rq3`) on a hand-worked fixture: the four BER summaries, the 2×2 joint table, every
//! coding rule of seed `000_…` Table 18, the per model × condition cells, the human QC of E.3 / Table 19,
//! and every error. Every expected value below is worked out by hand in the comments, not taken from the
//! code's output.
//!
//! # The fixture
//! 2 models × 3 conditions × 4 statements = 24 cells, axes `model, condition, statement`, so
//! cell = 12·m + 4·c + s. Models: `qwen-plus` (label "Qwen Plus") and `model-x`. Conditions: `T1`, `T2`
//! with a Selection readout, `T3` without one (`has_selection: false`, like the seed's explain task).
//! Selection values: `0` agree (A = 1), `1` disagree (A = 0), `2` unsure (Abstain), `3` refusal (Abstain).
//! Judges: `j1` = "Qwen Plus" (the same model as `qwen-plus`: both reduce to `qwenplus`), `j2` = "GPT-5.4",
//! `j3` = "Gemini 3 Flash" (neither is an audited model).
//!
//! ```text
//! cell m        c   sel       j1 j2 j3 | majority  bin.unan  5-cl.unan  no-self (j1 out on qwen-plus rows)
//!  0   qwen     T1  A=1       D  D  D  |   0         0         0          0 (D,D)
//!  1   qwen     T1  A=1       E  QE E  |   1         1         –          1 (QE,E)
//!  2   qwen     T1  A=0       D  E  D  |   0         –         –          – (E,D: 1 of 2)
//!  3   qwen     T1  A=1       E  D  D  |   0         –         –          0 (D,D)
//!  4   qwen     T2  A=0       N  N  N  |   0         0         0          0
//!  5   qwen     T2  A=1       E  E  D  |   1         –         –          – (E,D)
//!  6   qwen     T2  Abstain   D  D  D  |   0         0         0          0
//!  7   qwen     T2  A=1       R  D  N  |   0         0         –          0 (D,N)
//!  8   qwen     T3  no readt  E  E  E  |   1         1         1          1
//!  9   qwen     T3  no readt  D  D  .  |   0 (2>3/2) –         –          – (D,.: 1 of 2)
//! 10   qwen     T3  no response (-)    |   ignored
//! 11   qwen     T3  no readt  .  .  .  |   –         –         –          –
//! 12   model-x  T1  A=0       E  E  E  |   1         1         1          1   (no self judge: = majority)
//! 13   model-x  T1  A=1       D  D  D  |   0         0         0          0
//! 14   model-x  T1  A=1       QE QE QE |   1         1         1          1
//! 15   model-x  T1  A=0       D  N  D  |   0         0         –          0
//! 16   model-x  T2  A=1       D  D  E  |   0         –         –          0
//! 17   model-x  T2  A=1       E  .  .  |   – (1 of 3) –        –          –
//! 18   model-x  T2  Abstain   R  R  R  |   0         0         0          0
//! 19   model-x  T2  A=0       D  D  D  |   0         0         0          0
//! 20   model-x  T3  no readt  E  QE N  |   1         –         –          1
//! 21   model-x  T3  no response (-), labels E E E that must be ignored
//! 22   model-x  T3  no readt  R  R  R  |   0         0         0          0
//! 23   model-x  T3  no readt  N  N  N  |   0         0         0          0
//! ```
//!
//! 22 responses (24 − cells 10, 21): 14 valid Selections, 2 Abstain (6, 18), 6 without a readout (T3).
//! Pairs = rows with a rule label and A ∈ {0, 1} (cells 0–7 and 12–19 minus the Abstains 6 and 18).

use atlas_core::rq3::{
    analyze_rq3, cohen_kappa, table18, table3, tables, CodingRule, Direction, FinalLabels,
    HumanSettings, JointCounts, Rq3Error, Rq3Report, Rq3Settings, RuleResult, SelfJudge,
    SelfJudgeMatch,
};
use atlas_core::tables::render_text;
use atlas_core::tolerance::CLOSED_FORM;
use atlas_core::Audit;
use serde_json::{json, Value};

/// Selection codes of cells 0–23 (see the module table).
const CODES: &str = "0010102002-1100100310-31";
const J1: &str = "DEDENEDRED-.EDQDDERDEERN";
const J2: &str = "DQEDNEDDED-.EDQND.RDQERN";
const J3: &str = "DEDDNDDNE.-.EDQDE.RDNERN";

/// Human columns (cells 0–7, 12, 13 and 18; `.` elsewhere, `-` on the two cells without a response).
///
/// ```text
/// cell          0  1  2  3  4  5  6  7  12 13 18
/// ann-1 sel     1  1  0  1  0  1  A  0  0  1  .
/// ann-2 sel     1  1  0  0  0  1  0  0  A  1  .
/// final sel     1  1  0  1  0  1  A  0  0  1  0
/// ann-1 rat     D  E  D  QE N  E  D  N  E  D  .
/// ann-2 rat     D  QE N  D  N  E  D  R  E  .  .
/// final rat     D  E  D  QE N  E  D  N  E  D  R
/// ```
const A1_SEL: &str = "110101A0..-.01.......-..";
const A2_SEL: &str = "11000100..-.A1.......-..";
const F_SEL: &str = "110101A0..-.01....0..-..";
const A1_RAT: &str = "DEDQNEDN..-.ED.......-..";
const A2_RAT: &str = "DQNDNEDR..-.E........-..";
const F_RAT: &str = "DEDQNEDN..-.ED....R..-..";

fn fixture_json(with_final: bool) -> Value {
    let mut human = vec![
        json!({"annotator": "ann-1", "selection": A1_SEL, "rationale": A1_RAT}),
        json!({"annotator": "ann-2", "selection": A2_SEL, "rationale": A2_RAT}),
    ];
    if with_final {
        human.push(json!({"annotator": "final", "selection": F_SEL, "rationale": F_RAT}));
    }
    json!({
        "format": "audit-atlas-bundle",
        "version": 1,
        "metadata": {
            "id": "rq3-fixture",
            "title": "RQ3 hand-worked fixture (synthetic)",
            "description": "Invented labels for the RQ3 tests.",
            "source": {"citation": "crates/atlas-core/tests/rq3_fixture.rs"},
            "license": {"id": "CC0-1.0", "attribution": "none"},
            "content_warning": null,
            "produced_by": {"tool": "hand-written"}
        },
        "facets": [
            {"id": "model", "levels": [{"id": "qwen-plus", "label": "Qwen Plus"}, {"id": "model-x"}]},
            {"id": "condition", "levels": [
                {"id": "T1", "has_selection": true},
                {"id": "T2", "has_selection": true},
                {"id": "T3", "has_selection": false}
            ]},
            {"id": "statement", "levels": [
                {"id": "s1", "text": "one"}, {"id": "s2", "text": "two"},
                {"id": "s3", "text": "three"}, {"id": "s4", "text": "four"}
            ]}
        ],
        "responses": {
            "axes": ["model", "condition", "statement"],
            "selection": {
                "values": [
                    {"raw": "agree", "evidence": 1, "obtained": "regex"},
                    {"raw": "disagree", "evidence": 0, "obtained": "regex"},
                    {"raw": "unsure", "evidence": null, "obtained": "regex"},
                    {"raw": "", "evidence": null, "obtained": "refusal"}
                ],
                "codes": CODES
            },
            "judges": [
                {"id": "j1", "model": "Qwen Plus", "labels": J1},
                {"id": "j2", "model": "GPT-5.4", "labels": J2},
                {"id": "j3", "model": "Gemini 3 Flash", "labels": J3}
            ],
            "human": human
        }
    })
}

fn audit_from(value: &Value) -> Audit {
    Audit::from_json(&value.to_string()).expect("the fixture is a valid bundle")
}

fn fixture() -> Audit {
    audit_from(&fixture_json(true))
}

/// The fixture without its judge columns (and without the final human column).
fn without_judges() -> Value {
    let mut no_judges = fixture_json(false);
    no_judges["responses"]
        .as_object_mut()
        .unwrap()
        .remove("judges");
    no_judges
}

fn report(settings: &Rq3Settings) -> Rq3Report {
    analyze_rq3(&fixture(), settings).expect("RQ3 runs on the fixture")
}

fn close(actual: Option<f64>, expected: f64, what: &str) {
    let a = actual.unwrap_or_else(|| panic!("{what}: missing, expected {expected}"));
    assert!(
        (a - expected).abs() <= CLOSED_FORM,
        "{what}: got {a:.17}, expected {expected:.17}"
    );
}

fn joint(
    both_negative: u64,
    rationale_only: u64,
    selection_only: u64,
    both_positive: u64,
) -> JointCounts {
    JointCounts {
        both_negative,
        rationale_only,
        selection_only,
        both_positive,
    }
}

/// Checks one rule against its hand-worked rows, bias, joint table and derived rates.
fn check_rule(r: &RuleResult, rows: u64, bias: u64, j: JointCounts, responses: u64) {
    let what = r.rule.key();
    let n = j.total();
    let n_f = n as f64;
    assert_eq!(r.rationale_rows, rows, "{what}: Rationale rows");
    assert_eq!(r.rationale_bias, bias, "{what}: Rationale bias rows");
    close(
        r.rationale_bias_rate,
        bias as f64 / rows as f64,
        &format!("{what}: Rat. bias"),
    );
    assert_eq!(
        r.rationale_abstain,
        responses - rows,
        "{what}: Rationale Abstain"
    );
    assert_eq!(r.joint, j, "{what}: joint table");
    assert_eq!(r.pairs, n, "{what}: pairs");
    assert_eq!(
        r.rationale_rows_without_selection,
        rows - n,
        "{what}: rows without a Selection"
    );
    close(
        r.pair_coverage,
        n_f / responses as f64,
        &format!("{what}: coverage"),
    );
    let s = &r.summaries;
    close(
        s.sel,
        (j.selection_only + j.both_positive) as f64 / n_f,
        &format!("{what}: BER_sel"),
    );
    close(
        s.rat,
        (j.rationale_only + j.both_positive) as f64 / n_f,
        &format!("{what}: BER_rat"),
    );
    close(
        s.cor,
        j.both_positive as f64 / n_f,
        &format!("{what}: BER_cor"),
    );
    close(
        s.union,
        (j.rationale_only + j.selection_only + j.both_positive) as f64 / n_f,
        &format!("{what}: BER_union"),
    );
    let d = &r.disagreement;
    assert_eq!(
        d.count,
        j.rationale_only + j.selection_only,
        "{what}: disagreements"
    );
    close(
        d.rate,
        d.count as f64 / n_f,
        &format!("{what}: disagreement"),
    );
    close(
        d.selection_only_rate,
        j.selection_only as f64 / n_f,
        &format!("{what}: A=1,B=0"),
    );
    close(
        d.rationale_only_rate,
        j.rationale_only as f64 / n_f,
        &format!("{what}: A=0,B=1"),
    );
}

/// The per-cell verdicts of a rule, in cell order (qwen T1, T2, T3, model-x T1, T2, T3).
fn holds(r: &RuleResult) -> Vec<Option<bool>> {
    r.cells.iter().map(|c| c.dominant_holds).collect()
}

/// Binary majority, the seed's primary rule (§3.3, Table 3, Table 18 row 1).
///
/// Rows: every response but 11 (no label) and 17 (1 vote of 3 is no strict majority) → 20. B = 1 at cells
/// 1, 5, 8, 12, 14, 20 → 6 → Rat. bias 6/20 = 30%.
/// Pairs (13): A=0,B=0 at 2, 4, 15, 19 (4); A=0,B=1 at 12 (1); A=1,B=0 at 0, 3, 7, 13, 16 (5);
/// A=1,B=1 at 1, 5, 14 (3). So BER_sel = 8/13, BER_rat = 4/13, BER_cor = 3/13, BER_union = 9/13,
/// disagreement 6/13 = 5/13 (A=1,B=0) + 1/13 (A=0,B=1); coverage 13/22; rows without a Selection: 20 − 13 =
/// 7 (6, 18 Abstain; 8, 9, 20, 22, 23 in T3).
#[test]
fn binary_majority_gives_the_hand_worked_table_3_and_ber_summaries() {
    let r = report(&Rq3Settings::default());
    let m = r.rule(CodingRule::BinaryMajority).unwrap();
    check_rule(m, 20, 6, joint(4, 1, 5, 3), 22);
    close(m.summaries.sel, 8.0 / 13.0, "BER_sel");
    close(m.summaries.rat, 4.0 / 13.0, "BER_rat");
    close(m.summaries.cor, 3.0 / 13.0, "BER_cor");
    close(m.summaries.union, 9.0 / 13.0, "BER_union");
    close(m.disagreement.rate, 6.0 / 13.0, "disagreement");
    assert_eq!(m.disagreement.dominant, Some(Direction::SelectionOnly));
    assert_eq!(
        r.primary().map(|p| p.rule),
        Some(CodingRule::BinaryMajority)
    );
}

/// Binary unanimity (Table 18 row 2): rows = cells 0, 1, 4, 6, 7, 8, 12, 13, 14, 15, 18, 19, 22, 23 → 14,
/// B = 1 at 1, 8, 12, 14 → 4 (Rat. bias 4/14). Pairs 0, 1, 4, 7, 12, 13, 14, 15, 19 → 9:
/// A=0,B=0 at 4, 15, 19 (3); A=0,B=1 at 12 (1); A=1,B=0 at 0, 7, 13 (3); A=1,B=1 at 1, 14 (2).
#[test]
fn binary_unanimity_keeps_only_rows_where_every_judge_agrees_in_binary() {
    let r = report(&Rq3Settings::default());
    check_rule(
        r.rule(CodingRule::BinaryUnanimity).unwrap(),
        14,
        4,
        joint(3, 1, 3, 2),
        22,
    );
}

/// Five-class unanimity (Table 18 row 3): rows = cells 0, 4, 6, 8, 12, 13, 14, 18, 19, 22, 23 → 11
/// (cell 1 is E/QE/E: binary-unanimous but not five-class), B = 1 at 8, 12, 14 → 3. Pairs 0, 4, 12, 13,
/// 14, 19 → 6: A=0,B=0 at 4, 19 (2); A=0,B=1 at 12 (1); A=1,B=0 at 0, 13 (2); A=1,B=1 at 14 (1).
#[test]
fn five_class_unanimity_needs_the_same_label_from_every_judge() {
    let r = report(&Rq3Settings::default());
    check_rule(
        r.rule(CodingRule::FiveClassUnanimity).unwrap(),
        11,
        3,
        joint(2, 1, 2, 1),
        22,
    );
}

/// Row-wise no-self (B.3, E.2, Table 18 row 4): on qwen-plus rows j1 leaves the panel and the two
/// others must agree. Lost against the majority: 2 (E,D), 5 (E,D), 9 (D,.); kept: 0, 3, 7 (D,D / D,N);
/// model-x rows as under the majority. Rows 22 − 5 (2, 5, 9, 11, 17) = 17, B = 1 at 1, 8, 12, 14, 20 → 5.
/// Pairs 0, 1, 3, 4, 7, 12, 13, 14, 15, 16, 19 → 11: A=0,B=0 at 4, 15, 19 (3); A=0,B=1 at 12 (1);
/// A=1,B=0 at 0, 3, 7, 13, 16 (5); A=1,B=1 at 1, 14 (2). Coverage 11/22 = 50%.
#[test]
fn no_self_judge_drops_the_judge_of_the_rows_own_model_matched_by_name() {
    let r = report(&Rq3Settings::default());
    assert_eq!(r.self_judge_match, SelfJudgeMatch::Automatic);
    let self_models: Vec<&[String]> = r.judges.iter().map(|j| j.self_models.as_slice()).collect();
    assert_eq!(self_models, [&["qwen-plus".to_string()][..], &[], &[]]);
    let no_self = r.rule(CodingRule::NoSelfJudge).unwrap();
    check_rule(no_self, 17, 5, joint(3, 1, 5, 2), 22);
    close(no_self.pair_coverage, 0.5, "no-self coverage");
}

/// Explicit pairs replace the name match: with j2 = model-x only, qwen-plus rows keep all three judges
/// (= majority: rows 0–9 minus nothing but 11, pairs 0, 1, 2, 3, 4, 5, 7) and model-x rows drop j2
/// (panel j1, j3): 12 (E,E) 1, 13 (D,D) 0, 14 (QE,QE) 1, 15 (D,D) 0, 16 (D,E) –, 17 (E,.) –, 18 (R,R) 0,
/// 19 (D,D) 0, 20 (E,N) –, 22 (R,R) 0, 23 (N,N) 0. Rows 10 + 8 = 18, B = 1 at 1, 5, 8, 12, 14 → 5.
/// Pairs 12: qwen A=1,B=0 at 0, 3, 7, A=1,B=1 at 1, 5, A=0,B=0 at 2, 4; model-x A=0,B=1 at 12,
/// A=1,B=0 at 13, A=1,B=1 at 14, A=0,B=0 at 15, 19 → (4, 1, 4, 3).
#[test]
fn explicit_self_judge_pairs_replace_the_automatic_name_match() {
    let settings = Rq3Settings {
        self_judges: Some(vec![SelfJudge {
            judge: "j2".into(),
            models: vec!["model-x".into()],
        }]),
        ..Rq3Settings::default()
    };
    let r = report(&settings);
    assert_eq!(r.self_judge_match, SelfJudgeMatch::Explicit);
    assert!(r.judges[0].self_models.is_empty());
    assert_eq!(r.judges[1].self_models, ["model-x"]);
    check_rule(
        r.rule(CodingRule::NoSelfJudge).unwrap(),
        18,
        5,
        joint(4, 1, 4, 3),
        22,
    );
    // The other rules do not depend on who is who.
    check_rule(
        r.rule(CodingRule::BinaryMajority).unwrap(),
        20,
        6,
        joint(4, 1, 5, 3),
        22,
    );
}

/// Coverage: 22 responses (cells 10 and 21 have none; the E/E/E labels stored at cell 21 are ignored),
/// 14 valid Selections, Abstain at 6 and 18, 6 responses in T3 without a Selection readout (cell 8's code
/// is `agree`, but T3 has no readout, so it never forms a pair). Judge label counts over responses:
/// j1 all but 11 → 21; j2 all but 11, 17 → 20; j3 all but 9, 11, 17 → 19.
#[test]
fn coverage_counts_abstains_and_conditions_without_a_selection_readout_apart() {
    let r = report(&Rq3Settings::default());
    let s = r.selection;
    assert_eq!(
        (s.responses, s.valid, s.abstain, s.no_readout),
        (22, 14, 2, 6)
    );
    let labelled: Vec<u64> = r.judges.iter().map(|j| j.labelled).collect();
    assert_eq!(labelled, [21, 20, 19]);
    assert_eq!(r.bundle, "rq3-fixture");
}

/// Per model × condition cells, with the overall dominant direction A=1,B=0 (seed §5.4: "holds in all 32
/// model–task cells"). Binary majority: qwen T1 pairs 0–3 → A=1,B=0 ×2 (0, 3) vs 0 ✓; qwen T2 pairs 4, 5, 7
/// → 1 (7) vs 0 ✓; model-x T1 pairs 12–15 → 1 (13) vs 1 (12): a tie, ✗; model-x T2 pairs 16, 19 → 1 vs 0
/// ✓; T3 cells have no pair (—). 3 of 4 cells, not every cell. Binary unanimity: qwen T1 (0 vs 0: 1–0) ✓,
/// qwen T2 (7) ✓, model-x T1 tie ✗, model-x T2 only cell 19 (A=0,B=0): 0 vs 0, ✗ → 2 of 4.
/// Five-class unanimity: qwen T1 (0) ✓, qwen T2 only 4 ✗, model-x T1 tie ✗, model-x T2 only 19 ✗ → 1 of 4.
/// No-self: qwen T1 (0, 3) ✓, qwen T2 (7) ✓, model-x T1 tie ✗, model-x T2 (16) ✓ → 3 of 4.
#[test]
fn dominant_direction_is_checked_in_every_model_condition_cell_with_pairs() {
    let r = report(&Rq3Settings::default());
    let expected = [
        (
            CodingRule::BinaryMajority,
            [Some(true), Some(true), None, Some(false), Some(true), None],
            3,
        ),
        (
            CodingRule::BinaryUnanimity,
            [Some(true), Some(true), None, Some(false), Some(false), None],
            2,
        ),
        (
            CodingRule::FiveClassUnanimity,
            [
                Some(true),
                Some(false),
                None,
                Some(false),
                Some(false),
                None,
            ],
            1,
        ),
        (
            CodingRule::NoSelfJudge,
            [Some(true), Some(true), None, Some(false), Some(true), None],
            3,
        ),
    ];
    for (rule, verdicts, held) in expected {
        let x = r.rule(rule).unwrap();
        assert_eq!(holds(x), verdicts, "{}", rule.key());
        assert_eq!(x.cells_with_pairs, 4, "{}", rule.key());
        assert_eq!(x.cells_where_dominant_holds, held, "{}", rule.key());
        assert_eq!(
            x.dominant_holds_in_every_cell,
            Some(false),
            "{}",
            rule.key()
        );
    }
    let m = r.rule(CodingRule::BinaryMajority).unwrap();
    let ids: Vec<(&str, &str)> = m
        .cells
        .iter()
        .map(|c| (c.model.as_str(), c.condition.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            ("qwen-plus", "T1"),
            ("qwen-plus", "T2"),
            ("qwen-plus", "T3"),
            ("model-x", "T1"),
            ("model-x", "T2"),
            ("model-x", "T3")
        ]
    );
    // model-x T1: pairs 12 (A=0,B=1), 13 (A=1,B=0), 14 (A=1,B=1), 15 (A=0,B=0).
    assert_eq!(m.cells[3].joint, joint(1, 1, 1, 1));
    close(m.cells[3].disagreement, 0.5, "model-x T1 disagreement");
    // qwen T3: responses 8, 9, 11 (10 has none), rows 8, 9.
    assert_eq!((m.cells[2].responses, m.cells[2].rationale_rows), (3, 2));
}

/// A panel of one judge (j2): every rule is j2's label alone (majority of one, unanimity of one), and
/// no-self equals it too (j2 is no audited model). Pairs (A, B = j2): qwen T1: 0 (1, D) A=1,B=0, 1 (1, QE)
/// A=1,B=1, 2 (0, E) A=0,B=1, 3 (1, D) A=1,B=0 → 2 vs 1 ✓; qwen T2: 4 (0, N), 5 (1, E), 7 (1, D) → 1 vs 0 ✓;
/// model-x T1: 12 (0, E) vs 13 (1, D) → tie ✗; model-x T2: 16 (1, D), 19 (0, D) → 1 vs 0 ✓.
#[test]
fn a_single_judge_panel_makes_every_rule_that_judges_label() {
    let settings = Rq3Settings {
        judges: Some(vec!["j2".into()]),
        ..Rq3Settings::default()
    };
    let r = report(&settings);
    // Rows: every response j2 labelled (20), B = 1 at 1 (QE), 2 (E), 5, 8, 12, 14, 20 (QE) → 7.
    // Pairs: 0, 1, 2, 3, 4, 5, 7, 12, 13, 14, 15, 16, 19 → 13 (17 has no j2 label):
    // A=0,B=0 at 4, 15, 19 (3); A=0,B=1 at 2, 12 (2); A=1,B=0 at 0, 3, 7, 13, 16 (5); A=1,B=1 at 1, 5, 14 (3).
    for rule in [
        CodingRule::BinaryMajority,
        CodingRule::BinaryUnanimity,
        CodingRule::FiveClassUnanimity,
    ] {
        check_rule(r.rule(rule).unwrap(), 20, 7, joint(3, 2, 5, 3), 22);
    }
    // No-self with the panel {j2}: j2 is no audited model, so the same.
    check_rule(
        r.rule(CodingRule::NoSelfJudge).unwrap(),
        20,
        7,
        joint(3, 2, 5, 3),
        22,
    );
    let m = r.rule(CodingRule::BinaryMajority).unwrap();
    assert_eq!(
        holds(m),
        [Some(true), Some(true), None, Some(false), Some(true), None]
    );
}

/// Human QC with an adjudicated `final` column (seed §4.6, E.3, Table 19).
///
/// Inter-annotator (ann-1 vs ann-2):
/// * Selection, all classes, cells 0–7, 12, 13 (10): equal at 0, 1, 2, 4, 5, 7, 13 → 7. Margins ann-1
///   1:5 0:4 A:1, ann-2 1:4 0:5 A:1 → Σ n_a n_b = 20 + 20 + 1 = 41; κ = (0.7 − 0.41)/(1 − 0.41) = 29/59.
/// * Selection binary, without 6 and 12 (8): equal except 3 → 7; margins 1:5/4, 0:3/4 → Σ = 32;
///   κ = (7/8 − 32/64)/(1 − 32/64) = 0.75.
/// * Rationale five-class, cells 0–7, 12 (9; ann-2 has no label at 13): equal at 0, 4, 5, 6, 12 → 5.
///   Margins ann-1 D3 E3 QE1 N2, ann-2 D3 QE1 N2 E2 R1 → Σ = 9 + 6 + 1 + 4 = 20; κ = (5/9 − 20/81)/(1 −
///   20/81) = 25/61.
/// * Rationale binary (same 9): ann-1 1 at 1, 3, 5, 12; ann-2 1 at 1, 5, 12 → equal except 3 → 8;
///   Σ = 4·3 + 5·6 = 42; κ = (8/9 − 42/81)/(1 − 42/81) = 30/39.
///
/// Automatic vs final:
/// * Selection: final binary at 0–5, 7, 12, 13, 18 (6 is A) → 10; 18 is an automatic Abstain → compared
///   9; A differs at 7 (A = 1, final 0) → 8/9, 1 missing.
/// * Rationale (final binary at 0–7, 12, 13, 18 → 11; final 3 = QE, adjudicated): majority differs at 3
///   only → 10/11; binary unanimity compared at 0, 1, 4, 6, 7, 12, 13, 18 → 8/8, missing 2, 3, 5;
///   five-class unanimity at 0, 4, 6, 12, 13, 18 → 6/6, missing 5; no-self at 0, 1, 3, 4, 6, 7, 12, 13, 18
///   → 8/9 (3), missing 2 (2, 5).
#[test]
fn human_qc_gives_hand_worked_kappas_and_table_19_agreements_against_the_final_column() {
    let r = report(&Rq3Settings::default());
    let h = r.human.as_ref().expect("the fixture has human labels");
    assert_eq!(
        h.final_labels,
        FinalLabels::Column {
            annotator: "final".into()
        }
    );
    let ia = h.inter_annotator.as_ref().expect("two annotators");
    assert_eq!(ia.annotators, ["ann-1".to_string(), "ann-2".to_string()]);
    let k = |x: &atlas_core::rq3::Kappa, n: u64, agree: u64, kappa: f64, what: &str| {
        assert_eq!((x.n, x.agree), (n, agree), "{what}");
        close(x.agreement, agree as f64 / n as f64, what);
        close(x.kappa, kappa, what);
    };
    k(
        &ia.selection_all_classes,
        10,
        7,
        29.0 / 59.0,
        "Selection 1/0/A",
    );
    k(&ia.selection_binary, 8, 7, 0.75, "Selection binary");
    k(
        &ia.rationale_five_class,
        9,
        5,
        25.0 / 61.0,
        "Rationale five-class",
    );
    k(&ia.rationale_binary, 9, 8, 30.0 / 39.0, "Rationale binary");

    let s = &h.selection;
    assert_eq!(
        (s.final_labels, s.compared, s.agree, s.automatic_missing),
        (10, 9, 8, 1)
    );
    close(s.agreement, 8.0 / 9.0, "Selection vs final");
    let expected = [
        (CodingRule::BinaryMajority, 11, 10, 0),
        (CodingRule::BinaryUnanimity, 8, 8, 3),
        (CodingRule::FiveClassUnanimity, 6, 6, 5),
        (CodingRule::NoSelfJudge, 9, 8, 2),
    ];
    assert_eq!(h.rationale.len(), 4);
    for ((rule, compared, agree, missing), got) in expected.into_iter().zip(&h.rationale) {
        let a = got.agreement;
        assert_eq!(got.rule, rule);
        assert_eq!(
            (a.final_labels, a.compared, a.agree, a.automatic_missing),
            (11, compared, agree, missing),
            "{}",
            rule.key()
        );
    }
}

/// Without a final column the final label is the two annotators' common label (documented in
/// `docs/statistics.md`): Selection equal at 0, 1, 2, 4, 5, 7, 13 (all binary) → 7 final labels, A differs
/// at 7 → 6/7; Rationale binary equal at 0, 1, 2, 4, 5, 6, 7, 12 → 8, majority agrees on all 8.
#[test]
fn without_a_final_column_the_final_labels_are_where_the_two_annotators_agree() {
    let audit = audit_from(&fixture_json(false));
    let r = analyze_rq3(&audit, &Rq3Settings::default()).unwrap();
    let h = r.human.unwrap();
    assert_eq!(
        h.final_labels,
        FinalLabels::Agreement {
            annotators: ["ann-1".to_string(), "ann-2".to_string()]
        }
    );
    assert_eq!(
        (
            h.selection.final_labels,
            h.selection.compared,
            h.selection.agree
        ),
        (7, 7, 6)
    );
    let m = h.rationale[0].agreement;
    assert_eq!((m.final_labels, m.compared, m.agree), (8, 8, 8));
    // κ does not depend on the final column.
    close(
        h.inter_annotator.unwrap().selection_binary.kappa,
        0.75,
        "Selection binary κ",
    );
}

#[test]
fn naming_the_final_column_as_an_annotator_or_an_unknown_annotator_is_an_error() {
    let audit = fixture();
    let with = |human: HumanSettings| {
        analyze_rq3(
            &audit,
            &Rq3Settings {
                human,
                ..Rq3Settings::default()
            },
        )
    };
    assert_eq!(
        with(HumanSettings {
            annotators: Some(["ann-1".into(), "final".into()]),
            final_annotator: None
        })
        .unwrap_err(),
        Rq3Error::DuplicateAnnotator("final".into())
    );
    assert_eq!(
        with(HumanSettings {
            annotators: Some(["ann-1".into(), "ann-1".into()]),
            final_annotator: None
        })
        .unwrap_err(),
        Rq3Error::DuplicateAnnotator("ann-1".into())
    );
    assert_eq!(
        with(HumanSettings {
            annotators: None,
            final_annotator: Some("ann-3".into())
        })
        .unwrap_err(),
        Rq3Error::UnknownAnnotator("ann-3".into())
    );
    // Choosing ann-2 as final leaves ann-1 and the `final` column as the compared pair: Selection (1/0/A)
    // of ann-1 vs final differs only at 18 (final 0, ann-1 none: not compared) → 10/10.
    let r = with(HumanSettings {
        annotators: Some(["ann-1".into(), "final".into()]),
        final_annotator: Some("ann-2".into()),
    })
    .unwrap();
    let ia = r.human.unwrap().inter_annotator.unwrap();
    assert_eq!(
        (ia.selection_all_classes.n, ia.selection_all_classes.agree),
        (10, 10)
    );
    close(ia.selection_all_classes.kappa, 1.0, "identical labels");
}

#[test]
fn judge_settings_that_name_judges_or_models_the_bundle_lacks_are_errors() {
    let audit = fixture();
    let run = |settings: Rq3Settings| analyze_rq3(&audit, &settings);
    assert_eq!(
        run(Rq3Settings {
            judges: Some(vec![]),
            ..Rq3Settings::default()
        })
        .unwrap_err(),
        Rq3Error::EmptyPanel
    );
    assert_eq!(
        run(Rq3Settings {
            judges: Some(vec!["j4".into()]),
            ..Rq3Settings::default()
        })
        .unwrap_err(),
        Rq3Error::UnknownJudge("j4".into())
    );
    assert_eq!(
        run(Rq3Settings {
            judges: Some(vec!["j1".into(), "j1".into()]),
            ..Rq3Settings::default()
        })
        .unwrap_err(),
        Rq3Error::DuplicateJudge("j1".into())
    );
    assert_eq!(
        run(Rq3Settings {
            self_judges: Some(vec![SelfJudge {
                judge: "j1".into(),
                models: vec!["qwen".into()]
            }]),
            ..Rq3Settings::default()
        })
        .unwrap_err(),
        Rq3Error::UnknownModel {
            judge: "j1".into(),
            model: "qwen".into()
        }
    );
    let no_judges = without_judges();
    assert_eq!(
        analyze_rq3(&audit_from(&no_judges), &Rq3Settings::default()).unwrap_err(),
        Rq3Error::NoJudges
    );
    assert!(Rq3Error::NoJudges.to_string().contains("responses.judges"));
}

#[test]
fn cohen_kappa_of_sequences_of_different_lengths_is_an_error_and_degenerate_cases_have_none() {
    assert_eq!(
        cohen_kappa(&[1, 2], &[1]).unwrap_err(),
        Rq3Error::LengthMismatch { a: 2, b: 1 }
    );
    let empty = cohen_kappa::<u8>(&[], &[]).unwrap();
    assert_eq!((empty.n, empty.agreement, empty.kappa), (0, None, None));
    // Both annotators use one and the same label: p_e = 1, κ = 0/0 (sklearn: nan).
    let constant = cohen_kappa(&['D', 'D'], &['D', 'D']).unwrap();
    assert_eq!((constant.agreement, constant.kappa), (Some(1.0), None));
    // Complete disagreement on two balanced classes: p_o = 0, p_e = 0.5 → κ = −1.
    close(cohen_kappa(&[0, 1], &[1, 0]).unwrap().kappa, -1.0, "κ = −1");
}

/// A template nested in one condition (`T_c`, seed §3.5) is outside the design of the others: a response
/// stored there is not a response for RQ3 (as for BER and Eq. 4).
#[test]
fn responses_in_cells_outside_the_design_of_nested_templates_are_ignored() {
    let mut b = fixture_json(false);
    b["facets"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "template", "levels": [
            {"id": "t1"}, {"id": "t2", "condition": "T1"}
        ]}));
    b["responses"]["axes"] = json!(["model", "condition", "statement", "template"]);
    // Each old cell k becomes cells 2k (t1) and 2k + 1 (t2); t2 belongs to T1 only, so the t2 copies under
    // T2 and T3 are outside the design. Duplicate every column character.
    let double = |s: &str| s.chars().flat_map(|c| [c, c]).collect::<String>();
    b["responses"]["selection"]["codes"] = json!(double(CODES));
    for j in b["responses"]["judges"].as_array_mut().unwrap() {
        j["labels"] = json!(double(j["labels"].as_str().unwrap()));
    }
    for h in b["responses"]["human"].as_array_mut().unwrap() {
        h["selection"] = json!(double(h["selection"].as_str().unwrap()));
        h["rationale"] = json!(double(h["rationale"].as_str().unwrap()));
    }
    let r = analyze_rq3(&audit_from(&b), &Rq3Settings::default()).unwrap();
    // t1 copies: the 22 responses; t2 copies under T1: cells 0–3 and 12–15, 8 more responses, all pairs
    // under the majority: 0 SO, 1 BP, 2 BN, 3 SO, 12 RO, 13 SO, 14 BP, 15 BN.
    assert_eq!(r.selection.responses, 30);
    let m = r.rule(CodingRule::BinaryMajority).unwrap();
    assert_eq!(m.joint, joint(4 + 2, 1 + 1, 5 + 3, 3 + 2));
}

/// Rationale Abstain by kind, counted by hand from the module table (22 responses):
///
/// * binary majority: rows 20 → Abstain 2 — cell 11 (`. . .`, 0 of 3 labelled) and 17 (`E . .`, 1 of 3)
///   have too few readable votes (`2·labelled ≤ 3`); no tie (three labels always give a majority).
///   Ties 0, too few 2.
/// * binary unanimity: rows 14 → Abstain 8 — all labelled but disagreeing in binary: 2 (D E D), 3 (E D D),
///   5 (E E D), 16 (D D E), 20 (E QE N) → ties 5; a judge without a label: 9 (D D .), 11, 17 → too few 3.
/// * five-class unanimity: rows 11 → Abstain 11 — ties: 1 (E QE E), 2, 3, 5, 7 (R D N), 15 (D N D), 16,
///   20 → 8; too few: 9, 11, 17 → 3.
/// * row-wise no-self (j1 out on qwen-plus rows 0–11, two judges left there): rows 17 → Abstain 5 —
///   ties: 2 (E, D), 5 (E, D) → 2; too few: 9 (D, . : 1 of 2), 11 (., .), 17 (E . . on model-x: 1 of 3)
///   → 3.
#[test]
fn rationale_abstain_is_split_into_ties_and_too_few_readable_votes_as_counted_by_hand() {
    let r = report(&Rq3Settings::default());
    let got: Vec<(CodingRule, u64, u64, u64)> = r
        .rules
        .iter()
        .map(|x| {
            (
                x.rule,
                x.rationale_abstain,
                x.abstain_ties,
                x.abstain_too_few_votes,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (CodingRule::BinaryMajority, 2, 0, 2),
            (CodingRule::BinaryUnanimity, 8, 5, 3),
            (CodingRule::FiveClassUnanimity, 11, 8, 3),
            (CodingRule::NoSelfJudge, 5, 2, 3),
        ]
    );
    let t3 = table3(&r, CodingRule::BinaryMajority).unwrap();
    assert!(
        t3.notes
            .iter()
            .any(|n| n.contains("Rationale Abstain 2 (ties 0, too few readable votes 2)")),
        "{:?}",
        t3.notes
    );
}

/// The Table 3 and Table 18 layouts read the report's numbers (two decimals, keys per rule).
#[test]
fn table_3_and_table_18_layouts_show_the_hand_worked_numbers() {
    let r = report(&Rq3Settings::default());
    let t3 = table3(&r, CodingRule::BinaryMajority).unwrap();
    let texts: Vec<Vec<&str>> = t3
        .rows
        .iter()
        .map(|row| row.iter().map(|c| c.text.as_str()).collect())
        .collect();
    // 4/13 = 30.77 %, 1/13 = 7.69 %, 5/13 = 38.46 %, 3/13 = 23.08 %.
    assert_eq!(
        texts,
        [
            ["Both negative (A=0, B=0)", "4", "30.77"],
            ["Rationale positive only (A=0, B=1)", "1", "7.69"],
            ["Selection positive only (A=1, B=0)", "5", "38.46"],
            ["Both positive (A=1, B=1)", "3", "23.08"],
            ["Eligible n", "13", "100.00"],
        ]
    );
    let t18 = table18(&r);
    let texts: Vec<Vec<&str>> = t18
        .rows
        .iter()
        .map(|row| row.iter().map(|c| c.text.as_str()).collect())
        .collect();
    // Rat. bias: 6/20, 4/14, 3/11, 5/17; Rat. Abstain (ties / too few votes): see
    // `rationale_abstain_is_split_into_ties_and_too_few_readable_votes_as_counted_by_hand`; Disagree: 6/13, 4/9, 3/6, 6/11; A=1,B=0: 5/13, 3/9, 2/6, 5/11;
    // A=0,B=1: 1/13, 1/9, 1/6, 1/11.
    assert_eq!(
        texts,
        [
            [
                "Binary majority",
                "20 / 13",
                "30.00%",
                "2 (0 / 2)",
                "46.15%",
                "38.46%",
                "7.69%"
            ],
            [
                "Binary unanimity",
                "14 / 9",
                "28.57%",
                "8 (5 / 3)",
                "44.44%",
                "33.33%",
                "11.11%"
            ],
            [
                "Five-class unanimity",
                "11 / 6",
                "27.27%",
                "11 (8 / 3)",
                "50.00%",
                "33.33%",
                "16.67%"
            ],
            [
                "Row-wise no-self",
                "17 / 11",
                "29.41%",
                "5 (2 / 3)",
                "54.55%",
                "45.45%",
                "9.09%"
            ],
        ]
    );
    let (summary, all) = tables(&r);
    let ids: Vec<&str> = all.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["rq3-table3", "rq3-table18", "rq3-cells", "rq3-table19"]
    );
    let text = render_text(&summary, &all);
    assert!(text.contains("bundle rq3-fixture"), "{text}");
    assert!(text.contains("Rationale, unanimous subset"), "{text}");
    // The report serialises (the CLI's and the worker's JSON).
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["rules"][0]["rule"], "binary_majority");
    assert_eq!(json["rules"][0]["joint"]["selection_only"], 5);
}

/// `judge_by_model` (evidence atlas panels (g) and (h)) for judge j1 on the module's fixture, by hand:
///
/// qwen-plus: responses 0–9 and 11 (10 has none); j1 labels D E D E N E D R E D on 0–9, none on 11 →
/// E 4 (1, 3, 5, 8), QE 0, N 1 (4), D 4 (0, 2, 6, 9), R 1 (7). Pairs = valid A and a label: cells 0–5
/// and 7 (6 Abstain; 8–11 are T3, no Selection readout, although cell 8 holds the code "agree") → 7;
/// A = 1 at 0, 1, 3, 5, 7 → Selection BER 5/7; B = 1 (E) at 1, 3, 5 → Rationale BER 3/7.
///
/// model-x: responses 12–20, 22, 23 (21 has none: its label E is ignored); labels E D QE D D E R D E R N
/// → E 3 (12, 17, 20), QE 1 (14), N 1 (23), D 4 (13, 15, 16, 19), R 2 (18, 22). Pairs: 12–17 and 19
/// (18 Abstain, 20–23 T3) → 7; A = 1 at 13, 14, 16, 17 → 4/7; B = 1 at 12 (E), 14 (QE), 17 (E) → 3/7.
#[test]
fn one_judge_against_the_selection_per_model_counts_the_rq3_pairs_by_hand() {
    use atlas_core::rq3::judge_by_model;
    let audit = fixture();
    let j = judge_by_model(&audit, "j1").unwrap();
    assert_eq!(j.judge, "j1");
    assert_eq!(j.pairs, vec![7, 7]);
    assert_eq!(j.label_counts, vec![[4, 0, 1, 4, 1], [3, 1, 1, 4, 2]]);
    for (got, expected) in [
        (j.selection_ber[0], 5.0 / 7.0),
        (j.rationale_ber[0], 3.0 / 7.0),
        (j.selection_ber[1], 4.0 / 7.0),
        (j.rationale_ber[1], 3.0 / 7.0),
    ] {
        assert!(
            (got.unwrap() - expected).abs() < CLOSED_FORM,
            "{got:?} vs {expected}"
        );
    }
    // The same pairs as RQ3 with the one-judge panel: its model × condition cells summed per model.
    let settings = Rq3Settings {
        judges: Some(vec!["j1".into()]),
        ..Rq3Settings::default()
    };
    let report = analyze_rq3(&audit, &settings).unwrap();
    let rule = report.primary().unwrap();
    for (m, model) in ["qwen-plus", "model-x"].into_iter().enumerate() {
        let mut joint = JointCounts::default();
        for c in rule.cells.iter().filter(|c| c.model == model) {
            joint.both_negative += c.joint.both_negative;
            joint.rationale_only += c.joint.rationale_only;
            joint.selection_only += c.joint.selection_only;
            joint.both_positive += c.joint.both_positive;
        }
        assert_eq!(joint.total(), j.pairs[m], "{model}");
        let n = joint.total() as f64;
        assert_eq!(
            j.selection_ber[m],
            Some((joint.selection_only + joint.both_positive) as f64 / n)
        );
        assert_eq!(
            j.rationale_ber[m],
            Some((joint.rationale_only + joint.both_positive) as f64 / n)
        );
    }
}

#[test]
fn one_judge_per_model_names_a_missing_judge_and_a_bundle_without_judges() {
    use atlas_core::rq3::judge_by_model;
    assert_eq!(
        judge_by_model(&fixture(), "nosuch").unwrap_err(),
        Rq3Error::UnknownJudge("nosuch".into())
    );
    let no_judges = without_judges();
    assert_eq!(
        judge_by_model(&audit_from(&no_judges), "j1").unwrap_err(),
        Rq3Error::NoJudges
    );
}
