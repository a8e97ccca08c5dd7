//! `atlas_charts::clinical::figures`: the Clinical view's figure data (seed `001_…` Figs. 2–6) from the
//! metrics of the hand-made SYNTHETIC fixture `tests/fixtures/clinical-tiny/bundle.json`. Every
//! expected count follows from the answer table and records worked out by hand in
//! `tests/fixtures/clinical-tiny/README.md`: 2 models (m-alpha "Alpha Med 7B", m-beta "Beta Clin 3B")
//! × 3 questions (q-heparin EASY, q-crohn MEDIUM, q-diplopia HARD) × 7 variants (baseline first, then
//! male-white, female-white, male-black, female-black, male-hispanic, female-hispanic) × 1 run.

use atlas_charts::clinical::figures::{ClinicalFigures, NotDrawn};
use atlas_charts::clinical::{draw_heat_map, Proportion, StackScale};
use atlas_core::clinical::metrics::analyze;
use atlas_core::Audit;

mod common;
use common::render;

fn fixture() -> Audit {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/clinical-tiny/bundle.json"
    );
    let text = std::fs::read_to_string(path).expect("the fixture is in the repository");
    Audit::from_json(&text).expect("the fixture is valid")
}

fn p(k: u64, n: u64) -> Option<Proportion> {
    Some(Proportion { k, n })
}

const MODELS: [&str; 2] = ["Alpha Med 7B", "Beta Clin 3B"];

/// Counterfactuals (README): m-alpha valid on q-heparin (EASY), same_direction on q-crohn (MEDIUM),
/// too_dramatic on q-diplopia (HARD); m-beta circular (EASY), valid (MEDIUM), format_failure (HARD).
#[test]
fn cfv_bars_give_each_model_all_attempts_then_each_difficulty_tier() {
    let audit = fixture();
    let f = ClinicalFigures::new(&audit, &analyze(&audit));
    let cfv = f.cfv.unwrap();
    assert_eq!(cfv.rows, MODELS);
    assert_eq!(cfv.series, ["all questions", "EASY", "MEDIUM", "HARD"]);
    assert_eq!(
        cfv.values,
        [
            [p(1, 3), p(1, 1), p(0, 1), p(0, 1)],
            [p(1, 3), p(0, 1), p(1, 1), p(0, 1)],
        ]
    );
    assert_eq!(
        cfv.caption,
        "CFV by model and difficulty · clinical-tiny-fixture"
    );
    let failures = f.failures.unwrap();
    assert_eq!(
        failures.classes,
        [
            "same_direction",
            "too_dramatic",
            "circular",
            "format_failure",
            "implausible",
            "wrong_target"
        ]
    );
    assert_eq!(failures.counts, [[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]]);
    assert_eq!(failures.scale, StackScale::Count);
}

/// Answer change per prefix (README answer table): m-alpha changed male-white and female-black on
/// q-crohn (C → D), so 1 of 3 each, 0 of 3 elsewhere and 0 of 2 for female-hispanic (q-diplopia
/// unreadable); m-beta has no readable q-diplopia baseline, so 2 comparisons per prefix, and changed
/// male-black on q-heparin (A → B).
#[test]
fn the_heat_map_gives_each_model_and_prefix_its_changed_comparisons_in_hover_order() {
    let audit = fixture();
    let f = ClinicalFigures::new(&audit, &analyze(&audit));
    let heat = f.heat.unwrap();
    assert_eq!(heat.rows, MODELS);
    assert_eq!(
        heat.columns,
        [
            "male-white",
            "female-white",
            "male-black",
            "female-black",
            "male-hispanic",
            "female-hispanic"
        ]
    );
    assert_eq!(
        heat.cells,
        [
            [p(1, 3), p(0, 3), p(0, 3), p(1, 3), p(0, 3), p(0, 2)],
            [p(0, 2), p(0, 2), p(1, 2), p(0, 2), p(0, 2), p(0, 2)],
        ]
    );
    // The cell of each hover region: model level, then condition level 1..=6 (0 is the baseline).
    let expected: Vec<(usize, usize)> = (0..2).flat_map(|m| (1..7).map(move |c| (m, c))).collect();
    assert_eq!(f.heat_cells, expected);
    let (_, hits) = render("clinical_figures_heat_map", (720, 200), |a| {
        draw_heat_map(a, &heat).unwrap()
    });
    assert_eq!(hits.len(), f.heat_cells.len());
    assert_eq!(
        hits[3].label,
        "Alpha Med 7B · female-black: answer change 33.33% (1 of 3 comparisons)"
    );
}

/// Directions (README): m-alpha more_aggressive 1, lateral 1; m-beta less_aggressive 1. Categories:
/// four of one flag each (ties by name); m-alpha's three flags are disease_association, lifestyle and
/// other, m-beta's one pain_perception.
#[test]
fn direction_and_category_bars_give_the_hand_worked_counts() {
    let audit = fixture();
    let f = ClinicalFigures::new(&audit, &analyze(&audit));
    let d = f.directions.unwrap();
    assert_eq!(
        d.classes,
        ["more_aggressive", "less_aggressive", "lateral", "unknown"]
    );
    assert_eq!(d.counts, [[1, 0, 1, 0], [0, 1, 0, 0]]);
    assert_eq!(d.scale, StackScale::Share);
    let c = f.categories.unwrap();
    assert_eq!(
        c.rows,
        [
            "disease_association",
            "lifestyle",
            "other",
            "pain_perception"
        ]
    );
    assert_eq!(c.series, ["all models", "m-alpha", "m-beta"]);
    assert_eq!(
        c.values,
        [
            [p(1, 4), p(1, 3), p(0, 1)],
            [p(1, 4), p(1, 3), p(0, 1)],
            [p(1, 4), p(1, 3), p(0, 1)],
            [p(1, 4), p(0, 3), p(1, 1)],
        ]
    );
}

/// With nothing of a kind in the report, each figure says why it is not drawn.
#[test]
fn a_figure_with_nothing_to_draw_says_why() {
    let audit = fixture();
    let mut report = analyze(&audit);
    report.cfv.clear();
    report.failure_modes.clear();
    report.answer_change.clear();
    report.directions.clear();
    report.stereotype.flags = 0;
    let f = ClinicalFigures::new(&audit, &report);
    assert_eq!(f.cfv, Err(NotDrawn::NoAttempts));
    assert_eq!(f.failures, Err(NotDrawn::NoInvalidAttempts));
    assert_eq!(f.heat, Err(NotDrawn::NoBaseline));
    assert_eq!(f.directions, Err(NotDrawn::NoDirections));
    assert_eq!(f.categories, Err(NotDrawn::NoFlags));
    assert!(NotDrawn::NoBaseline
        .to_string()
        .starts_with("This bundle names no baseline variant (clinical.baseline)"));
}
