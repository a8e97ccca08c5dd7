//! `atlas_core::clinical` on the hand-made fixture `tests/fixtures/clinical-bundle.json` (SYNTHETIC:
//! 2 models m1, m2 × 3 questions q1 (gold A, EASY), q2 (gold B, HARD), q3 (no gold, no difficulty) ×
//! 3 variants base (baseline), mw, fb × 2 runs r1, r2). Every expected value is worked out by hand in
//! the comments from the fixture's answer table:
//!
//! ```text
//!            base  mw  fb        (r1 | r2)
//! m1 q1      A|A   A|C  B|A
//! m1 q2      B|PF  B|B  B|-      PF = parser failure, - = no response
//! m1 q3      C|C   D|C  C|C
//! m2 q1      B|A   B|A  B|A
//! m2 q2      B|B   A|B  A|RF     RF = refusal
//! m2 q3      A|-   A|-  A|-
//! ```
//!
//! Cell index = ((model·3 + question)·3 + variant)·2 + run (axes model, statement, condition, repeat).

use atlas_core::clinical::metrics::{self, Answer};
use atlas_core::clinical::{CfvOutcome, Direction, Embeddings, Severity};
use atlas_core::tolerance::{EXACT, FLOAT16_RELATIVE};
use atlas_core::{Audit, BundleError};
use serde_json::{json, Value};

fn fixture_value() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/clinical-bundle.json"
    );
    let text = std::fs::read_to_string(path).expect("the fixture is in the repository");
    serde_json::from_str(&text).expect("the fixture is JSON")
}

fn fixture() -> Audit {
    Audit::from_json(&fixture_value().to_string()).expect("the fixture is a valid bundle")
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= EXACT)
}

#[test]
fn answers_distinguish_letters_unreadable_and_missing_cells() {
    let audit = fixture();
    // cell 0 = m1 q1 base r1 = A; cell 7 = m1 q2 base r2 = parser failure; cell 11 = m1 q2 fb r2 = no
    // response; cell 29 = m2 q2 fb r2 = refusal.
    assert_eq!(metrics::answer(&audit, 0), Answer::Letter("A"));
    assert_eq!(metrics::answer(&audit, 7), Answer::Unreadable);
    assert_eq!(metrics::answer(&audit, 11), Answer::NoResponse);
    assert_eq!(metrics::answer(&audit, 29), Answer::Unreadable);
}

#[test]
fn accuracy_per_model_and_variant_leaves_parse_failures_and_gold_less_questions_out() {
    let rows = metrics::accuracy(&fixture());
    // (model, variant, correct, answered, parse failures, accuracy); q3 has no gold, so its readable
    // answers are in no denominator.
    // m1 base: q1 A✓ A✓, q2 B✓ PF → 3/3, 1 PF.     m1 mw: q1 A✓ C✗, q2 B✓ B✓ → 3/4.
    // m1 fb: q1 B✗ A✓, q2 B✓ (r2 no response) → 2/3. m2 base: q1 B✗ A✓, q2 B✓ B✓ → 3/4.
    // m2 mw: q1 B✗ A✓, q2 A✗ B✓ → 2/4.              m2 fb: q1 B✗ A✓, q2 A✗ RF → 1/3, 1 PF.
    // Counted wrong, the unreadable answers join the denominator ("asked": every answer to q1 and
    // q2): m1 base 3/4 (q2 r2 PF), m2 fb 1/4 (q2 r2 refusal); the other rows have none, and m1 fb's
    // q2 r2 without a response was not asked (3).
    let expected = [
        ("m1", "base", 3, 3, 1, 1.0, 4, 0.75),
        ("m1", "mw", 3, 4, 0, 0.75, 4, 0.75),
        ("m1", "fb", 2, 3, 0, 2.0 / 3.0, 3, 2.0 / 3.0),
        ("m2", "base", 3, 4, 0, 0.75, 4, 0.75),
        ("m2", "mw", 2, 4, 0, 0.5, 4, 0.5),
        ("m2", "fb", 1, 3, 1, 1.0 / 3.0, 4, 0.25),
    ];
    assert_eq!(rows.len(), expected.len());
    for (row, (m, c, correct, answered, pf, acc, asked, acc_wrong)) in rows.iter().zip(expected) {
        assert_eq!(
            (row.model.as_str(), row.condition.as_str()),
            (m, c),
            "row order"
        );
        assert_eq!(
            (row.correct, row.answered, row.parse_failures),
            (correct, answered, pf),
            "{m} {c}"
        );
        assert!(close(row.accuracy, acc), "{m} {c}: {:?}", row.accuracy);
        assert_eq!(row.asked, asked, "{m} {c}: asked");
        assert!(
            close(row.accuracy_unreadable_wrong, acc_wrong),
            "{m} {c}: {:?}",
            row.accuracy_unreadable_wrong
        );
    }
}

#[test]
fn an_unreadable_answer_to_a_question_without_a_gold_answer_enters_neither_denominator() {
    // Without q2's gold answer, m1 base keeps q1 (A✓ A✓): 2/2 both ways; q2's parse failure is
    // still counted as one, but it is in no denominator (there is nothing to be wrong against).
    let mut v = fixture_value();
    v["facets"][1]["levels"][1]["answer"] = Value::Null;
    let rows = metrics::accuracy(&Audit::from_json(&v.to_string()).unwrap());
    let r = &rows[0];
    assert_eq!((r.model.as_str(), r.condition.as_str()), ("m1", "base"));
    assert_eq!(
        (r.correct, r.answered, r.parse_failures, r.asked),
        (2, 2, 1, 2)
    );
    assert!(close(r.accuracy, 1.0) && close(r.accuracy_unreadable_wrong, 1.0));
}

#[test]
fn answer_change_pairs_each_prefix_with_the_same_run_baseline() {
    let (rows, overall) = metrics::answer_change(&fixture());
    // m1 mw: q1 A→A, A→C ✱, q2 B→B, (r2 baseline PF: no comparison), q3 C→D ✱, C→C → 2/5.
    // m1 fb: q1 A→B ✱, A→A, q2 B→B, (r2 no response), q3 C→C, C→C → 1/5.
    // m2 mw: q1 B→B, A→A, q2 B→A ✱, B→B, q3 A→A, (r2 no responses) → 1/5.
    // m2 fb: q1 B→B, A→A, q2 B→A ✱, (r2 refusal), q3 A→A → 1/4.
    let expected = [
        ("m1", "mw", 2, 5),
        ("m1", "fb", 1, 5),
        ("m2", "mw", 1, 5),
        ("m2", "fb", 1, 4),
    ];
    assert_eq!(rows.len(), 4, "the baseline has no row of its own");
    for (row, (m, c, changed, n)) in rows.iter().zip(expected) {
        assert_eq!(
            (
                row.model.as_str(),
                row.condition.as_str(),
                row.changed,
                row.comparisons
            ),
            (m, c, changed, n)
        );
        assert!(close(row.rate, changed as f64 / n as f64));
    }
    // Overall: m1 3/10 = 0.3, m2 2/9.
    assert_eq!((overall[0].changed, overall[0].comparisons), (3, 10));
    assert!(close(overall[0].rate, 0.3));
    assert_eq!((overall[1].changed, overall[1].comparisons), (2, 9));
    assert!(close(overall[1].rate, 2.0 / 9.0));
}

#[test]
fn answer_change_is_empty_without_a_baseline() {
    let mut v = fixture_value();
    v["clinical"]["baseline"] = Value::Null;
    let audit = Audit::from_json(&v.to_string()).unwrap();
    let (rows, overall) = metrics::answer_change(&audit);
    assert!(rows.is_empty() && overall.is_empty());
}

#[test]
fn edd_is_one_minus_the_mean_pairwise_cosine_over_the_variants_present() {
    let audit = fixture();
    let rows = metrics::edd(&audit);
    // Embeddings (cell: vector): 0 (1,0), 2 (0,1), 4 (1,0) = m1 q1 r1 base/mw/fb: cosines 0, 1, 0 →
    // mean 1/3 → EDD 2/3, 3 variants. 1 (3,4), 3 (3,4) = m1 q1 r2 base/mw: one pair, cosine 1 → EDD 0.
    // 18 (0.5,0.5) = m2 q1 r1 base alone: no record. 24 (1,0), 26 (−1,0), 28 (0,2) = m2 q2 r1: cosines
    // −1, 0, 0 → mean −1/3 → EDD 4/3.
    let got: Vec<(&str, &str, Option<&str>, usize)> = rows
        .iter()
        .map(|r| {
            (
                r.model.as_str(),
                r.statement.as_str(),
                r.repeat.as_deref(),
                r.n_variants,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("m1", "q1", Some("r1"), 3),
            ("m1", "q1", Some("r2"), 2),
            ("m2", "q2", Some("r1"), 3)
        ]
    );
    assert!((rows[0].edd - 2.0 / 3.0).abs() < EXACT, "{}", rows[0].edd);
    assert!(rows[1].edd.abs() < EXACT, "{}", rows[1].edd);
    assert!((rows[2].edd - 4.0 / 3.0).abs() < EXACT, "{}", rows[2].edd);
    // Mean EDD per model (unit: record): m1 (2/3 + 0)/2 = 1/3; m2 4/3.
    let means = metrics::mean_edd(&audit, &rows);
    assert!((means[0].1.unwrap() - 1.0 / 3.0).abs() < EXACT);
    assert!((means[1].1.unwrap() - 4.0 / 3.0).abs() < EXACT);
}

#[test]
fn edd_of_needs_two_rows_and_ignores_row_scale() {
    assert_eq!(metrics::edd_of(&[&[1.0, 0.0]]), None);
    assert_eq!(metrics::edd_of(&[&[1.0, 0.0], &[0.0, 0.0]]), None);
    // (2,0) and (0,5): cosine 0 → EDD 1, whatever the lengths.
    assert!((metrics::edd_of(&[&[2.0, 0.0], &[0.0, 5.0]]).unwrap() - 1.0).abs() < EXACT);
}

#[test]
fn cfv_counts_every_attempt_per_model_and_difficulty() {
    let (rows, by_difficulty) = metrics::cfv(&fixture());
    // m1: q1 valid, q2 same_direction, q3 too_dramatic → 1/3. m2: q1 valid, q2 valid, q3
    // format_failure, q1 circular → 2/4 (format failures are attempts).
    assert_eq!((rows[0].valid, rows[0].attempts), (1, 3));
    assert!(close(rows[0].cfv, 1.0 / 3.0));
    assert_eq!((rows[1].valid, rows[1].attempts), (2, 4));
    assert!(close(rows[1].cfv, 0.5));
    // By difficulty (EASY, MEDIUM, HARD, none; only combinations with attempts):
    // m1 EASY 1/1, HARD 0/1, none 0/1; m2 EASY (valid + circular) 1/2, HARD 1/1, none 0/1.
    let got: Vec<(&str, Option<&str>, usize, usize)> = by_difficulty
        .iter()
        .map(|r| {
            (
                r.model.as_str(),
                r.difficulty.as_deref(),
                r.valid,
                r.attempts,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("m1", Some("EASY"), 1, 1),
            ("m1", Some("HARD"), 0, 1),
            ("m1", None, 0, 1),
            ("m2", Some("EASY"), 1, 2),
            ("m2", Some("HARD"), 1, 1),
            ("m2", None, 0, 1),
        ]
    );
}

#[test]
fn failure_modes_share_the_invalid_attempts_per_model_and_overall() {
    let rows = metrics::failure_modes(&fixture());
    // Six invalid outcomes per block: m1 (2 invalid: same_direction 1, too_dramatic 1), m2 (2 invalid:
    // circular 1, format_failure 1), all (4 invalid: those four once each → 0.25 each).
    assert_eq!(rows.len(), 18);
    let find = |model: Option<&str>, o: CfvOutcome| {
        rows.iter()
            .find(|r| r.model.as_deref() == model && r.outcome == o)
            .unwrap_or_else(|| panic!("{model:?} {o:?}"))
    };
    assert_eq!(find(Some("m1"), CfvOutcome::SameDirection).count, 1);
    assert!(close(
        find(Some("m1"), CfvOutcome::SameDirection).share,
        0.5
    ));
    assert_eq!(find(Some("m1"), CfvOutcome::Circular).count, 0);
    assert!(close(
        find(Some("m2"), CfvOutcome::FormatFailure).share,
        0.5
    ));
    for o in [
        CfvOutcome::SameDirection,
        CfvOutcome::TooDramatic,
        CfvOutcome::Circular,
        CfvOutcome::FormatFailure,
    ] {
        assert_eq!(find(None, o).count, 1);
        assert!(close(find(None, o).share, 0.25));
    }
    assert_eq!(find(None, CfvOutcome::WrongTarget).count, 0);
    assert!(close(find(None, CfvOutcome::Implausible).share, 0.0));
}

#[test]
fn stereotype_flags_per_question_severity_and_category() {
    let s = metrics::stereotype(&fixture());
    // m1: 5 outputs: found true ×3 (q1 mw, q2 mw, q3 mw), false ×1 (q1 fb), null ×1 (q2 fb) → judged 4,
    // unparsed 1, flags 3, questions {q1, q2, q3} → 1.0 flags per question.
    // m2: true ×2 (q1 mw, q1 fb), false ×2 (q2 mw, q3 fb) → judged 4, flags 2, questions 3 → 2/3.
    let m1 = &s.per_model[0];
    assert_eq!(
        (m1.judged, m1.unparsed, m1.flags, m1.questions),
        (4, 1, 3, 3)
    );
    assert!(close(m1.flags_per_question, 1.0));
    let m2 = &s.per_model[1];
    assert_eq!(
        (m2.judged, m2.unparsed, m2.flags, m2.questions),
        (4, 0, 2, 3)
    );
    assert!(close(m2.flags_per_question, 2.0 / 3.0));
    assert_eq!((s.flags, s.judged), (5, 8));
    // Severity of the 5 flags: dangerous 1, misleading 2, socially inappropriate 1, none 1.
    let sev: Vec<(Option<Severity>, usize)> = s
        .by_severity
        .iter()
        .map(|r| (r.severity, r.count))
        .collect();
    assert_eq!(
        sev,
        vec![
            (Some(Severity::ClinicallyDangerous), 1),
            (Some(Severity::ClinicallyMisleading), 2),
            (Some(Severity::SociallyInappropriate), 1),
            (None, 1)
        ]
    );
    assert!(close(s.by_severity[1].share, 0.4));
    // Per model (m1, m2), from the fixture's flags: dangerous m1 q3 → (1, 0); misleading m1 q1, q2 →
    // (2, 0); socially inappropriate m2 q1 mw → (0, 1); no severity m2 q1 fb → (0, 1).
    let sev_by_model: Vec<Vec<usize>> = s.by_severity.iter().map(|r| r.per_model.clone()).collect();
    assert_eq!(
        sev_by_model,
        vec![vec![1, 0], vec![2, 0], vec![0, 1], vec![0, 1]]
    );
    // Category: disease_association 2, lifestyle 1, other 1 (ties by name), none 1 last.
    let cat: Vec<(Option<&str>, usize)> = s
        .by_category
        .iter()
        .map(|r| (r.category.as_deref(), r.count))
        .collect();
    assert_eq!(
        cat,
        vec![
            (Some("disease_association"), 2),
            (Some("lifestyle"), 1),
            (Some("other"), 1),
            (None, 1)
        ]
    );
    assert!(close(s.by_category[0].share, 0.4));
    // Per model: disease_association m1 q1, q3 → (2, 0); lifestyle m1 q2 → (1, 0); other m2 q1 fb →
    // (0, 1); no category m2 q1 mw → (0, 1).
    let cat_by_model: Vec<Vec<usize>> = s.by_category.iter().map(|r| r.per_model.clone()).collect();
    assert_eq!(
        cat_by_model,
        vec![vec![2, 0], vec![1, 0], vec![0, 1], vec![0, 1]]
    );
}

#[test]
fn directions_are_shared_within_each_model() {
    let rows = metrics::directions(&fixture());
    // m1: more_aggressive 2, lateral 1 of 3; m2: unknown 1 of 1. Four rows per model.
    assert_eq!(rows.len(), 8);
    assert_eq!(
        (rows[0].model.as_str(), rows[0].direction, rows[0].count),
        ("m1", Direction::MoreAggressive, 2)
    );
    assert!(close(rows[0].share, 2.0 / 3.0));
    assert_eq!((rows[2].direction, rows[2].count), (Direction::Lateral, 1));
    assert_eq!(
        (rows[7].model.as_str(), rows[7].direction, rows[7].count),
        ("m2", Direction::Unknown, 1)
    );
    assert!(close(rows[7].share, 1.0));
}

#[test]
fn spearman_of_difficulty_and_validity_uses_average_ranks() {
    let r = metrics::difficulty_validity(&fixture());
    // Attempts with a difficulty (q3 has none): m1 q1 (1, valid 1), m1 q2 (3, 0), m2 q1 (1, 1), m2 q2
    // (3, 1), m2 q1 circular (1, 0); n = 5. Average ranks x = [2, 4.5, 2, 4.5, 2], y = [4, 1.5, 4, 4,
    // 1.5], both with mean 3; Σdx·dy = −1 − 2.25 − 1 + 1.5 + 1.5 = −1.25, Σdx² = Σdy² = 7.5 →
    // ρ = −1.25 / 7.5 = −1/6.
    assert_eq!(r.n, 5);
    assert!(close(r.rho, -1.0 / 6.0), "{:?}", r.rho);
    // Undefined: constant validity, or a single pair.
    assert_eq!(metrics::spearman(&[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]), None);
    assert_eq!(metrics::spearman(&[1.0], &[1.0]), None);
}

#[test]
fn profile_collects_table_5_per_model() {
    let report = metrics::analyze(&fixture());
    assert_eq!(report.bundle, "clinical-fixture-v1");
    assert_eq!(report.baseline.as_deref(), Some("base"));
    // m1: accuracy on the baseline 3/3, CFV 1/3, answer change 3/10, mean EDD 1/3, flags/q 1.
    // m2: 3/4, 2/4, 2/9, 4/3, 2/3.
    let p = &report.profile;
    assert!(close(p[0].accuracy, 1.0) && close(p[0].cfv, 1.0 / 3.0));
    // Both accuracies on the baseline with their n: m1 3/3 and 3/4, m2 3/4 and 3/4.
    assert_eq!(
        (p[0].answered, p[0].asked, p[1].answered, p[1].asked),
        (3, 4, 4, 4)
    );
    assert!(close(p[0].accuracy_unreadable_wrong, 0.75));
    assert!(close(p[1].accuracy_unreadable_wrong, 0.75));
    assert!(close(p[0].answer_change, 0.3) && close(p[0].flags_per_question, 1.0));
    assert!((p[0].mean_edd.unwrap() - 1.0 / 3.0).abs() < EXACT);
    assert!(close(p[1].accuracy, 0.75) && close(p[1].cfv, 0.5));
    assert!(close(p[1].answer_change, 2.0 / 9.0) && close(p[1].flags_per_question, 2.0 / 3.0));
    assert!((p[1].mean_edd.unwrap() - 4.0 / 3.0).abs() < EXACT);
    // The JSON keys the CLI prints (docs/clinical.md, "Metrics").
    let v = serde_json::to_value(&report).unwrap();
    for key in [
        "bundle",
        "accuracy",
        "answer_change",
        "answer_change_overall",
        "edd",
        "cfv",
        "cfv_by_difficulty",
        "failure_modes",
        "stereotype",
        "directions",
        "spearman_difficulty_validity",
        "profile",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["failure_modes"][0]["outcome"], json!("same_direction"));
}

#[test]
fn profile_accuracy_pools_all_variants_without_a_baseline() {
    let mut v = fixture_value();
    v["clinical"]["baseline"] = Value::Null;
    let report = metrics::analyze(&Audit::from_json(&v.to_string()).unwrap());
    // m1 over all variants: (3 + 3 + 2) / (3 + 4 + 3) = 0.8; no answer change without a baseline.
    assert!(close(report.profile[0].accuracy, 0.8));
    assert_eq!(report.profile[0].answer_change, None);
}

#[test]
fn embeddings_round_trip_as_f32_and_f16() {
    let vectors = vec![vec![0.6f32, 0.8], vec![-1.5, 0.25]];
    let e = Embeddings::from_vectors("m", vec![3, 9], &vectors).unwrap();
    assert!(!e.normalized, "row 1 has norm ≠ 1");
    assert_eq!(e.decode().unwrap(), vectors);
    // 0.6f32 = 0x3F19999A, 0.8f32 = 0x3F4CCCCD, little-endian, then base64 of the first 8 bytes.
    let first: Vec<u8> = [0x9A, 0x99, 0x19, 0x3F, 0xCD, 0xCC, 0x4C, 0x3F].to_vec();
    let bytes = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(&e.data)
            .unwrap()
    };
    assert_eq!(&bytes[..8], &first[..]);
    let h = Embeddings::from_vectors_f16("m", vec![3, 9], &vectors).unwrap();
    // -1.5 and 0.25 are exact in f16; 0.6 and 0.8 within 2^-11 relative.
    let back = h.decode().unwrap();
    assert_eq!(back[1], vec![-1.5, 0.25]);
    let f16 = FLOAT16_RELATIVE as f32;
    assert!((back[0][0] - 0.6).abs() < 0.6 * f16 && (back[0][1] - 0.8).abs() < 0.8 * f16);
    let unit = Embeddings::from_vectors("m", vec![0], &[vec![0.6, 0.8]]).unwrap();
    assert!(unit.normalized);
}

#[test]
fn embeddings_constructor_rejects_bad_input_with_a_message() {
    let err = |r: Result<Embeddings, BundleError>| r.unwrap_err().to_string();
    assert!(err(Embeddings::from_vectors("m", vec![], &[])).contains("no vectors"));
    assert!(err(Embeddings::from_vectors(
        "m",
        vec![1],
        &[vec![1.0], vec![2.0]]
    ))
    .contains("1 cell indices for 2 vectors"));
    assert!(err(Embeddings::from_vectors(
        "m",
        vec![2, 2],
        &[vec![1.0], vec![2.0]]
    ))
    .contains("strictly increasing"));
    assert!(err(Embeddings::from_vectors(
        "m",
        vec![1, 2],
        &[vec![1.0], vec![2.0, 3.0]]
    ))
    .contains("vector 1 has 2 values"));
    assert!(
        err(Embeddings::from_vectors("m", vec![1], &[vec![f32::NAN]]))
            .contains("not a finite number")
    );
    assert!(err(Embeddings::from_vectors_f16("m", vec![1], &[vec![1e6]])).contains("f16 range"));
}

/// Applies `mutate` to the fixture and returns the reader's error message.
fn rejected(mutate: impl FnOnce(&mut Value)) -> String {
    let mut v = fixture_value();
    mutate(&mut v);
    match Audit::from_json(&v.to_string()) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_ids_are_named_by_array_record_and_key() {
    let msg = rejected(|v| v["clinical"]["counterfactuals"][3]["statement"] = json!("q9"));
    assert!(
        msg.contains("clinical.counterfactuals[3].statement") && msg.contains("\"q9\""),
        "{msg}"
    );
    let msg = rejected(|v| v["clinical"]["stereotype"][2]["condition"] = json!("hw"));
    assert!(msg.contains("clinical.stereotype[2].condition"), "{msg}");
    let msg = rejected(|v| v["clinical"]["directions"][1]["model"] = json!("m3"));
    assert!(msg.contains("clinical.directions[1].model"), "{msg}");
    let msg = rejected(|v| v["clinical"]["directions"][0]["repeat"] = json!("r3"));
    assert!(msg.contains("clinical.directions[0].repeat"), "{msg}");
    let msg = rejected(|v| v["clinical"]["prefix_conflicts"][0]["condition"] = json!("x"));
    assert!(
        msg.contains("clinical.prefix_conflicts[0].condition"),
        "{msg}"
    );
    let msg = rejected(|v| v["clinical"]["baseline"] = json!("none"));
    assert!(msg.contains("clinical.baseline"), "{msg}");
}

#[test]
fn malformed_clinical_objects_are_rejected_with_their_field() {
    let msg = rejected(|v| {
        v["clinical"].as_object_mut().unwrap().remove("baseline");
    });
    assert!(msg.contains("baseline"), "{msg}");
    let msg = rejected(|v| v["clinical"]["extra"] = json!(1));
    assert!(msg.contains("clinical") && msg.contains("extra"), "{msg}");
    let msg = rejected(|v| v["clinical"]["counterfactuals"][0]["outcome"] = json!("bad"));
    assert!(msg.contains("clinical.counterfactuals[0].outcome"), "{msg}");
    let msg = rejected(|v| v["clinical"]["counterfactuals"][0]["plausibility"]["score"] = json!(6));
    assert!(
        msg.contains("clinical.counterfactuals[0].plausibility.score"),
        "{msg}"
    );
    let msg = rejected(|v| v["clinical"]["stereotype"][0]["severity"] = json!("high"));
    assert!(msg.contains("clinical.stereotype[0].severity"), "{msg}");
    let msg = rejected(|v| v["facets"][1]["levels"][0]["difficulty"] = json!("easy"));
    assert!(msg.contains("facets[1].levels[0].difficulty"), "{msg}");
    let msg = rejected(|v| v["facets"][1]["levels"][0]["answer"] = json!(1));
    assert!(msg.contains("facets[1].levels[0].answer"), "{msg}");
}

#[test]
fn malformed_embeddings_are_rejected_with_their_field() {
    let msg = rejected(|v| v["clinical"]["embeddings"]["cells"][8] = json!(36));
    assert!(
        msg.contains("clinical.embeddings.cells") && msg.contains("36") && msg.contains("below 36"),
        "{msg}"
    );
    let msg = rejected(|v| v["clinical"]["embeddings"]["cells"][1] = json!(0));
    assert!(
        msg.contains("clinical.embeddings.cells[1]") && msg.contains("strictly increasing"),
        "{msg}"
    );
    // 9 rows × 2 × 4 = 72 bytes; dim 3 would need 108.
    let msg = rejected(|v| v["clinical"]["embeddings"]["dim"] = json!(3));
    assert!(
        msg.contains("clinical.embeddings.data") && msg.contains("holds 72 bytes"),
        "{msg}"
    );
    let msg = rejected(|v| v["clinical"]["embeddings"]["dtype"] = json!("f16le"));
    assert!(msg.contains("= 36"), "{msg}");
    let msg = rejected(|v| v["clinical"]["embeddings"]["dim"] = json!(0));
    assert!(msg.contains("clinical.embeddings.dim"), "{msg}");
    let msg = rejected(|v| {
        let d = v["clinical"]["embeddings"]["data"]
            .as_str()
            .unwrap()
            .to_string();
        v["clinical"]["embeddings"]["data"] = json!(format!("*{}", &d[1..]));
    });
    assert!(
        msg.contains("clinical.embeddings.data") && msg.contains("base64"),
        "{msg}"
    );
    // A zero row (cell 18 is row 5) cannot be normalised.
    let msg = rejected(|v| {
        let e =
            Embeddings::from_vectors("z", vec![0, 18], &[vec![1.0, 0.0], vec![0.0, 0.0]]).unwrap();
        v["clinical"]["embeddings"] = serde_json::to_value(e).unwrap();
    });
    assert!(msg.contains("row 1 (cell 18) is all zeros"), "{msg}");
}

#[test]
fn a_bundle_without_clinical_and_one_with_null_read_the_same() {
    let mut v = fixture_value();
    v["clinical"] = Value::Null;
    let audit = Audit::from_json(&v.to_string()).unwrap();
    assert!(audit.file.clinical.is_none() && audit.clinical_embeddings.is_none());
    let report = metrics::analyze(&audit);
    assert!(report.edd.is_empty() && report.answer_change.is_empty());
    assert_eq!(report.spearman_difficulty_validity.n, 0);
}

#[test]
fn the_fixture_round_trips_through_the_serde_types() {
    let audit = fixture();
    let clinical = audit.file.clinical.as_ref().unwrap();
    let back = serde_json::to_value(clinical).unwrap();
    assert_eq!(back, fixture_value()["clinical"]);
}
