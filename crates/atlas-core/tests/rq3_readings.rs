//! `rq3::cell_readings` (the per-cell readouts behind the app's case inspector) on
//! `tests/fixtures/rq3-cases-bundle.json`: single cells against the hand-worked table of
//! `tests/fixtures/rq3-cases-bundle.md`, and the readings summed over cells equal `analyze_rq3`'s joint
//! tables for every rule (the inspector's filters and the RQ3 tables count the same responses).

use atlas_core::rq3::{
    analyze_rq3, cell_readings, CodingRule, Direction, JointCounts, Rq3Settings, SelectionReadout,
};
use atlas_core::Audit;

fn fixture() -> Audit {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/rq3-cases-bundle.json"
    );
    let text = std::fs::read_to_string(path).expect("reads the fixture");
    Audit::from_json(&text).expect("valid fixture")
}

#[test]
fn single_cells_read_as_worked_out_by_hand() {
    let audit = fixture();
    let r = cell_readings(&audit, &Rq3Settings::default()).expect("readings");
    assert!(r.has_rationale());
    assert_eq!(r.selection.len(), 24);
    assert_eq!(r.selection[17], None, "cell 17 has no response");
    assert_eq!(r.selection[4], Some(SelectionReadout::Abstain), "unsure");
    assert_eq!(r.selection[3], Some(SelectionReadout::Valid(false)));
    assert_eq!(
        r.selection[5],
        Some(SelectionReadout::Valid(true)),
        "fallback agree"
    );
    let bm = CodingRule::BinaryMajority;
    assert_eq!(r.direction(bm, 3), Some(Direction::RationaleOnly));
    assert_eq!(r.direction(bm, 6), Some(Direction::SelectionOnly));
    assert_eq!(r.direction(bm, 2), None, "cell 2 agrees (1, 1)");
    assert_eq!(r.pair(bm, 4), None, "Abstain Selection: no pair");
    assert_eq!(r.rationale(bm, 4), Some(false), "cell 4: D D D");
    assert_eq!(r.rationale(bm, 10), None, "E D . has no strict majority");
    // Cell 14 (m-beta, D E E): majority 1; without the self-judge j-beta: D, E → Abstain.
    assert_eq!(r.rationale(bm, 14), Some(true));
    assert_eq!(r.rationale(CodingRule::NoSelfJudge, 14), None);
    assert_eq!(
        r.rationale(CodingRule::BinaryUnanimity, 20),
        Some(false),
        "N D D"
    );
    assert_eq!(
        r.rationale(CodingRule::FiveClassUnanimity, 20),
        None,
        "N D D"
    );
    assert_eq!(r.judges.len(), 3);
    assert_eq!(r.judges[2].self_models, ["m-beta"]);
}

#[test]
fn readings_summed_over_cells_equal_the_report_for_every_rule() {
    let audit = fixture();
    let settings = Rq3Settings::default();
    let r = cell_readings(&audit, &settings).expect("readings");
    let report = analyze_rq3(&audit, &settings).expect("report");
    for rule in CodingRule::ALL {
        let mut joint = JointCounts::default();
        let mut rows = 0u64;
        for cell in 0..audit.cells {
            if r.rationale(rule, cell).is_some() {
                rows += 1;
            }
            match r.pair(rule, cell) {
                Some((false, false)) => joint.both_negative += 1,
                Some((false, true)) => joint.rationale_only += 1,
                Some((true, false)) => joint.selection_only += 1,
                Some((true, true)) => joint.both_positive += 1,
                None => {}
            }
        }
        let want = report.rule(rule).expect("rule in report");
        assert_eq!(joint, want.joint, "{rule:?}: joint table");
        assert_eq!(rows, want.rationale_rows, "{rule:?}: Rationale rows");
    }
}

#[test]
fn a_bundle_without_judges_has_selection_readings_only() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/tiny-bundle.json"
    );
    let text = std::fs::read_to_string(path).expect("reads tiny bundle");
    let audit = Audit::from_json(&text).expect("valid");
    let mut without = audit.clone();
    without.file.responses.judges.clear();
    without.judges.clear();
    let r = cell_readings(&without, &Rq3Settings::default()).expect("no error without judges");
    assert!(!r.has_rationale());
    assert_eq!(r.selection.len(), without.cells);
    assert_eq!(r.rationale(CodingRule::BinaryMajority, 0), None);
    assert_eq!(r.direction(CodingRule::BinaryMajority, 0), None);
}
