//! `atlas_core::rq2` on a small hand-built bundle: the designs draw what seed `000_…` §3.5 / D.1 say
//! (and what `docs/statistics.md` documents), the missing-unit rule gives the hand-worked values
//! below, and the same seed reproduces the same report.
//!
//! # The fixture
//!
//! Models {A, B, C}; conditions {c1, c2 (both in the reference), c3 (`in_reference: false`)};
//! templates {t1 (crossed), t2 (nested in c2)}, so `T_c1 = {t1}`, `T_c2 = {t1, t2}`; statements s1..s6
//! with categories s1 x, s2 y, s3 x, s4 z, s5 y, s6 x (strata in byte order: x = {s1, s3, s6},
//! y = {s2, s5}, z = {s4}); one response per cell (no repeat facet). Codes: `0` disagree, `1` agree,
//! `2` Abstain, `-` no response.
//!
//! ```text
//!        c1 t1    c1 t2    c2 t1    c2 t2    c3 t1    c3 t2
//! A      101010   ------   000000   110012   111111   ------
//! B      111111   ------   010101   000000   111111   ------
//! C      222222   ------   100000   111000   111111   ------
//! ```
//!
//! C abstains everywhere in c1. The observable matrix has 6 (c1 t1) + 12 (c2 t1, c2 t2) = 18 cells,
//! numbered c1 t1 s1..s6 = 0..5, c2 t1 s1..s6 = 6..11, c2 t2 s1..s6 = 12..17 (c3 and c1 t2 are not
//! observable).
//!
//! # Reference (Eq. 4), by hand
//! * A: c1 = 3/6 = 1/2; c2: t1 = 0, t2 = (1+1+0+0+1)/5 = 3/5 (s6 Abstain leaves) → c2 = 3/10;
//!   μ_A = (1/2 + 3/10)/2 = 2/5.
//! * B: c1 = 1; c2: t1 = 1/2, t2 = 0 → 1/4; μ_B = 5/8.
//! * C: c1 has no valid unit and leaves; c2: t1 = 1/6, t2 = 1/2 → 1/3; μ_C = 1/3.

mod common;

use std::collections::BTreeSet;

use atlas_core::rq2::{
    analyze_rq2, summarize_draws, AuditDraw, Cell, Design, Rq2Error, Rq2Matrix, Rq2Options,
};
use atlas_core::{Audit, DrawStream, RepeatPolicy};
use common::assert_fraction;
use serde_json::{json, Value};

const ROWS: [[&str; 6]; 3] = [
    ["101010", "------", "000000", "110012", "111111", "------"],
    ["111111", "------", "010101", "000000", "111111", "------"],
    ["222222", "------", "100000", "111000", "111111", "------"],
];

fn fixture() -> Audit {
    let codes: String = ROWS.iter().flatten().copied().collect();
    let statements: Vec<Value> = ["x", "y", "x", "z", "y", "x"]
        .iter()
        .enumerate()
        .map(|(i, c)| json!({ "id": format!("s{}", i + 1), "text": format!("Statement {}.", i + 1), "category": c }))
        .collect();
    let doc = json!({
        "format": "audit-atlas-bundle",
        "version": 1,
        "metadata": {
            "id": "rq2-fixture",
            "title": "Hand-built RQ2 fixture",
            "description": "3 models x 3 conditions x 2 templates x 6 statements",
            "source": { "citation": "hand-made for atlas-core tests" },
            "license": { "id": "CC0-1.0", "attribution": "none required" },
            "content_warning": null,
            "produced_by": { "tool": "hand" }
        },
        "facets": [
            { "id": "model", "levels": [{ "id": "A" }, { "id": "B" }, { "id": "C" }] },
            { "id": "condition", "levels": [
                { "id": "c1", "has_selection": true },
                { "id": "c2", "has_selection": true },
                { "id": "c3", "has_selection": true, "in_reference": false }
            ]},
            { "id": "template", "levels": [
                { "id": "t1", "text": "crossed" },
                { "id": "t2", "text": "nested in c2", "condition": "c2" }
            ]},
            { "id": "statement", "levels": statements }
        ],
        "responses": {
            "axes": ["model", "condition", "template", "statement"],
            "selection": {
                "values": [
                    { "raw": "disagree", "evidence": 0, "obtained": "regex" },
                    { "raw": "agree", "evidence": 1, "obtained": "regex" },
                    { "raw": "unreadable", "evidence": null, "obtained": "parser_failure" }
                ],
                "codes": codes
            }
        }
    });
    Audit::from_json(&doc.to_string()).expect("the fixture is a valid bundle")
}

fn matrix() -> Rq2Matrix {
    Rq2Matrix::new(&fixture(), RepeatPolicy::AllResponses, None).unwrap()
}

/// (condition, template) pairs that are observable, as bundle indices.
fn observable(c: usize, t: usize) -> bool {
    matches!((c, t), (0, 0) | (1, 0) | (1, 1))
}

#[test]
fn the_observable_matrix_and_reference_are_the_hand_worked_ones() {
    let m = matrix();
    assert_eq!(m.cells(), 18);
    assert_eq!(m.reference_conditions(), &[0, 1]);
    assert_eq!(m.templates(), &[vec![0], vec![0, 1]]);
    let strata: Vec<(Option<&str>, Vec<u32>)> = m
        .categories()
        .iter()
        .map(|c| (c.name.as_deref(), c.statements.clone()))
        .collect();
    assert_eq!(
        strata,
        vec![
            (Some("x"), vec![0, 2, 5]),
            (Some("y"), vec![1, 4]),
            (Some("z"), vec![3])
        ]
    );
    assert_eq!(
        m.cell(13).unwrap(),
        Cell {
            condition: 1,
            template: 1,
            statement: 1
        }
    );
    assert_eq!(m.cell(18), None, "beyond the observable matrix");
    assert_eq!(m.value(3, 0), None, "no model 3");
    assert_fraction(m.reference()[0], Some(2.0 / 5.0), "μ_A");
    assert_fraction(m.reference()[1], Some(5.0 / 8.0), "μ_B");
    assert_fraction(m.reference()[2], Some(1.0 / 3.0), "μ_C");
    // C abstains everywhere in c1: every c1 unit of C is missing.
    assert!((0..6).all(|cell| m.value(2, cell).is_none()));
    assert_eq!(m.value(0, 17), None, "A c2 t2 s6 is an Abstain");
}

#[test]
fn missing_units_leave_their_mean_and_a_model_without_any_valid_unit_gets_no_score() {
    let m = matrix();
    // Two groups: c1 t1 {s1, s2} and c2 t2 {s1, s6}.
    //   A: c1 (1 + 0)/2 = 1/2; c2 s1 = 1, s6 Abstain leaves → 1; score (1/2 + 1)/2 = 3/4.
    //   B: c1 (1 + 1)/2 = 1; c2 (0 + 0)/2 = 0; score 1/2.
    //   C: c1 has no valid unit → the condition leaves; c2 (1 + 0)/2 = 1/2; score 1/2.
    let draw = AuditDraw {
        groups: vec![vec![0, 1], vec![12, 17]],
    };
    let (s, dropped) = m.score_with_drops(&draw);
    assert_fraction(s[0], Some(0.75), "A");
    assert_fraction(s[1], Some(0.5), "B");
    assert_fraction(s[2], Some(0.5), "C");
    assert_eq!(dropped, vec![0, 0, 1], "C loses c1 and keeps a score");
    assert_eq!(m.score(&draw), s);
    // One group c1 t1 {s1, s2, s3}: A (1 + 0 + 1)/3 = 2/3, B 1, C no valid unit at all → no score.
    let s = m.score(&AuditDraw {
        groups: vec![vec![0, 1, 2]],
    });
    assert_fraction(s[0], Some(2.0 / 3.0), "A");
    assert_fraction(s[1], Some(1.0), "B");
    assert_eq!(s[2], None, "C has no valid unit in the draw");
    let (_, dropped) = m.score_with_drops(&AuditDraw {
        groups: vec![vec![0, 1, 2]],
    });
    assert_eq!(dropped, vec![0, 0, 1], "C's only group leaves: no score");
}

#[test]
fn summarize_draws_leaves_out_a_model_without_a_score_hand_worked() {
    // Reference A 0.1, B 0.2, C 0.3. Draw 0: A 0.1, B 0.3, C 0.2 (errors 0, +10, −10 pp; pair B–C
    // inverted: 1 of 3 pairs; τ-b (2 − 1)/3 = 1/3). Draw 1: A 0.2, B no score, C 0.3 (errors +10, 0;
    // only the pair A–C, not inverted: 0 of 1; τ-b 1).
    // MAE_A = (0 + 10)/2 = 5, MAE_B = 10 (one draw), MAE_C = (10 + 0)/2 = 5 → MAE 20/3.
    // RMSE_A = RMSE_C = √50, RMSE_B = 10 → (2√50 + 10)/3. Inversion rate (1/3 + 0)/2 = 1/6; τ-b 2/3.
    // Repeats: r0 = the reference, r1 = (none, 0.2, 0.3). Draw 0 vs r0: |Δ| 0, 10, 10, 1 of 3 pairs
    // inverted, τ 1/3. Draw 1 vs r1: only C in both (|Δ| 0): no pair, no τ.
    // Repeat MAD: A 0 (one draw), B 10, C (10 + 0)/2 = 5 → 5.
    let models = vec!["A".to_string(), "B".to_string(), "C".to_string()];
    let reference = [Some(0.1), Some(0.2), Some(0.3)];
    let main = vec![
        vec![Some(0.1), Some(0.3), Some(0.2)],
        vec![Some(0.2), None, Some(0.3)],
    ];
    let repeat = vec![
        vec![Some(0.1), Some(0.2), Some(0.3)],
        vec![None, Some(0.2), Some(0.3)],
    ];
    // Dropped conditions per draw and model: draw 0 A 1 (partial drop), draw 1 A 2 (partial drop, 2
    // conditions) and B 1 (B has no score there: an excluded draw, not a partial drop). Repeat draw 1:
    // A 1, but A has no repeat score there; C 3 → one partial repeat drop of 3 conditions.
    let dropped = vec![vec![1, 0, 0], vec![2, 1, 0]];
    let repeat_dropped = vec![vec![0, 0, 0], vec![1, 0, 3]];
    let s = summarize_draws(
        &models,
        &reference,
        &main,
        &repeat,
        &dropped,
        &repeat_dropped,
        0.95,
    );
    let close = |a: Option<f64>, b: f64, what: &str| {
        let a = a.unwrap_or_else(|| panic!("{what}: missing"));
        assert!(
            (a - b).abs() < atlas_core::tolerance::EXACT,
            "{what}: {a} vs {b}"
        );
    };
    close(s.mae_pp.mean, 20.0 / 3.0, "MAE");
    close(s.rmse_pp.mean, (2.0 * 50f64.sqrt() + 10.0) / 3.0, "RMSE");
    close(s.inversion_rate.mean, 1.0 / 6.0, "inversion rate");
    close(s.tau_b.mean, 2.0 / 3.0, "τ-b");
    close(s.repeat_mad_pp.mean, 5.0, "repeat MAD");
    close(s.repeat_inversion_rate.mean, 1.0 / 3.0, "repeat inversions");
    assert_eq!(s.repeat_inversion_rate.draws, 1);
    assert_eq!(s.repeat_tau_b.draws, 1);
    close(s.per_model[0].mae_pp, 5.0, "MAE_A");
    close(s.per_model[1].mae_pp, 10.0, "MAE_B");
    let excluded: Vec<(usize, usize)> = s
        .per_model
        .iter()
        .map(|m| (m.excluded_draws, m.excluded_repeat_draws))
        .collect();
    assert_eq!(excluded, vec![(0, 1), (1, 0), (0, 0)]);
    let partial: Vec<[usize; 4]> = s
        .per_model
        .iter()
        .map(|m| {
            [
                m.partial_drop_draws,
                m.dropped_conditions,
                m.partial_drop_repeat_draws,
                m.dropped_repeat_conditions,
            ]
        })
        .collect();
    assert_eq!(partial, vec![[2, 3, 0, 0], [0, 0, 0, 0], [0, 0, 1, 3]]);
    // No drop counts given (a single-mean design): nothing is a partial drop.
    let none = summarize_draws(&models, &reference, &main, &repeat, &[], &[], 0.95);
    assert!(none
        .per_model
        .iter()
        .all(|m| m.partial_drop_draws + m.dropped_conditions + m.partial_drop_repeat_draws == 0));
    // Draw-level MAE: draw 0 (0 + 10 + 10)/3, draw 1 (10 + 0)/2; the contributions average to the MAE.
    assert_eq!(s.mae_pp.draws, 2);
    let c = &s.mae_contributions;
    close(Some(c[0]), 10.0, "v_0 = (0 + 2·10 + 10)/3");
    close(Some(c[1]), 10.0 / 3.0, "v_1 = (10 + 0)/3");
    close(Some((c[0] + c[1]) / 2.0), 20.0 / 3.0, "mean v");
}

#[test]
fn the_missing_unit_rule_in_a_full_run_counts_exactly_the_draws_without_a_score() {
    let audit = fixture();
    let m = matrix();
    let options = Rq2Options {
        draws: 400,
        budget: 2,
        seed: 7,
        bootstrap_reps: 50,
        ..Rq2Options::default()
    };
    let report = analyze_rq2(&audit, &options).unwrap();
    // Replay each design's audit stream: C has no score exactly when every drawn cell is in c1.
    for (design, result) in [
        (Design::Concentrated, report.design("concentrated").unwrap()),
        (Design::Srs, report.design("srs").unwrap()),
        (Design::Stratified, report.design("stratified").unwrap()),
        (Design::Coverage(1), &report.coverage[0]),
    ] {
        // Draw i reads its own run of the stream (DrawStream::for_draw, the per-draw layout).
        let mut without_c = 0;
        for i in 0..options.draws {
            let mut stream = DrawStream::for_draw(options.seed, design.audit_stream(), i as u64);
            let draw = m.draw(design, options.budget, &mut stream).unwrap();
            if draw.cells().all(|cell| cell < 6) {
                without_c += 1;
            }
        }
        let pm = &result.summary.per_model;
        assert_eq!(pm[2].excluded_draws, without_c, "{design:?}: C");
        assert_eq!(pm[0].excluded_draws, 0, "{design:?}: A");
        assert_eq!(pm[1].excluded_draws, 0, "{design:?}: B");
        if design == Design::Stratified {
            assert_eq!(without_c, 0, "stratified always covers c2");
        } else {
            assert!(without_c > 0, "{design:?} sometimes reads c1 only");
        }
        // τ-b and the inversion rate are still defined in every draw (A and B are always scored).
        assert_eq!(result.summary.inversion_rate.draws, options.draws);
    }
}

#[test]
fn a_sampled_condition_without_a_valid_selection_is_counted_as_a_partial_drop_hand_worked() {
    // C abstains everywhere in c1, so every draw that samples c1 beside c2 loses c1 for C and keeps
    // a score: every stratified, balanced and coverage K' = 2 draw (both conditions are sampled). A's
    // only missing unit is c2 t2 s6 (cell 17): with budget 2 the stratified design reads one statement
    // per condition, so A loses c2 exactly in the draws whose c2 group is {17}. Balanced reads three
    // c2 statements (one per category) and A never loses c2; B has no missing unit.
    let audit = fixture();
    let m = matrix();
    let options = Rq2Options {
        draws: 400,
        budget: 2,
        seed: 11,
        bootstrap_reps: 50,
        ..Rq2Options::default()
    };
    let report = analyze_rq2(&audit, &options).unwrap();
    let counts = |d: &atlas_core::rq2::DesignResult| -> Vec<[usize; 4]> {
        d.summary
            .per_model
            .iter()
            .map(|p| {
                [
                    p.partial_drop_draws,
                    p.dropped_conditions,
                    p.partial_drop_repeat_draws,
                    p.dropped_repeat_conditions,
                ]
            })
            .collect()
    };
    let mut a_loses_c2 = 0;
    for i in 0..options.draws {
        let mut stream =
            DrawStream::for_draw(options.seed, Design::Stratified.audit_stream(), i as u64);
        let draw = m.draw(Design::Stratified, 2, &mut stream).unwrap();
        assert_eq!(draw.groups.len(), 2, "one group per reference condition");
        if draw.groups[1] == [17] {
            a_loses_c2 += 1;
        }
    }
    assert!(a_loses_c2 > 0, "A sometimes reads only its Abstain in c2");
    let strat = report.design("stratified").unwrap();
    assert!(strat.averages_conditions());
    let c = counts(strat);
    assert_eq!(c[0][..2], [a_loses_c2, a_loses_c2], "A, stratified");
    assert_eq!(c[1], [0; 4], "B, stratified");
    assert_eq!(c[2], [400; 4], "C loses c1 in every stratified draw");
    let bal = report.design("balanced").unwrap();
    assert_eq!(counts(bal), vec![[0; 4], [0; 4], [400; 4]], "balanced");
    let k2 = &report.coverage[1];
    assert!(k2.averages_conditions());
    assert_eq!(counts(k2)[2], [400; 4], "C, coverage K' = 2");
    // One group per draw: a lost condition is the whole draw (an excluded draw, counted apart).
    for d in [
        report.design("concentrated").unwrap(),
        report.design("srs").unwrap(),
        &report.coverage[0],
    ] {
        assert!(!d.averages_conditions(), "{}", d.label);
        assert_eq!(counts(d), vec![[0; 4]; 3], "{}", d.label);
        assert!(d.summary.per_model[2].excluded_draws > 0, "{}", d.label);
    }
    // Partial drops are never excluded draws: C keeps a score in every stratified draw.
    assert_eq!(strat.summary.per_model[2].excluded_draws, 0);

    // The tables the CLI prints and the app shows carry the same counts.
    let (_, tables) = atlas_core::tables::rq2(&report);
    let row = |t: usize, name: &str| -> Vec<String> {
        tables[t]
            .rows
            .iter()
            .find(|r| r[0].text == name)
            .unwrap_or_else(|| panic!("table {t} has no row {name:?}"))
            .iter()
            .map(|c| c.text.clone())
            .collect()
    };
    // Table 13, designs concentrated, SRS, stratified, balanced.
    let partial_total = a_loses_c2 + 400;
    assert_eq!(
        row(0, "Model-draws with a condition dropped")[1..],
        [
            "—".to_string(),
            "—".into(),
            partial_total.to_string(),
            "400".into()
        ]
    );
    let unscored: Vec<String> = report
        .designs
        .iter()
        .map(|d| {
            d.summary
                .per_model
                .iter()
                .map(|p| p.excluded_draws)
                .sum::<usize>()
                .to_string()
        })
        .collect();
    assert_eq!(row(0, "Model-draws without a score")[1..], unscored[..]);
    // Table 14: coverage K' = 1 averages one mean; K' = 2 loses c1 for C in every draw, and c2 for A
    // when its one c2 statement is s6 under t2 (cell 17), counted here on the replayed draws.
    let mut a_cov = 0;
    for i in 0..options.draws {
        let mut stream =
            DrawStream::for_draw(options.seed, Design::Coverage(2).audit_stream(), i as u64);
        let draw = m.draw(Design::Coverage(2), 2, &mut stream).unwrap();
        if draw.groups.iter().any(|g| g == &[17]) {
            a_cov += 1;
        }
    }
    assert_eq!(counts(k2)[0][0], a_cov, "A, coverage K' = 2");
    let t14: Vec<&str> = tables[1]
        .rows
        .iter()
        .map(|r| r.last().unwrap().text.as_str())
        .collect();
    assert_eq!(t14, ["—".to_string(), (400 + a_cov).to_string()]);
    // Table 15: per model, stratified/balanced; the note names C's drops.
    assert_eq!(
        tables[2].header.last().unwrap(),
        "Draws with a condition dropped (stratified/balanced)"
    );
    assert_eq!(row(2, "A").last().unwrap(), &format!("{a_loses_c2}/0"));
    assert_eq!(row(2, "B").last().unwrap(), "0/0");
    assert_eq!(row(2, "C").last().unwrap(), "400/400");
    let note = tables[2].notes.last().unwrap();
    assert!(
        note.contains("C: Stratified 2, 400 draws (400 conditions dropped; 400 repeat draws); Balanced 6, 400 draws"),
        "{note}"
    );
    let unscored_total: usize = report
        .designs
        .iter()
        .flat_map(|d| &d.summary.per_model)
        .map(|p| p.excluded_draws)
        .sum();
    assert_eq!(
        atlas_core::tables::rq2_exclusions_phrase(&report.designs),
        format!(
            "{unscored_total} unscored, {} partial-drop model-draws",
            partial_total + 400
        )
    );
}

#[test]
fn srs_never_repeats_a_cell_and_draws_only_observable_cells() {
    let m = matrix();
    let mut stream = DrawStream::with_stream(1, 99);
    let mut seen = BTreeSet::new();
    for _ in 0..500 {
        let draw = m.draw(Design::Srs, 10, &mut stream).unwrap();
        assert_eq!(draw.groups.len(), 1);
        let cells: Vec<u32> = draw.cells().collect();
        let distinct: BTreeSet<u32> = cells.iter().copied().collect();
        assert_eq!(distinct.len(), 10, "no cell twice: {cells:?}");
        for &cell in &cells {
            assert!(cell < 18);
            let Cell {
                condition,
                template,
                ..
            } = m.cell(cell).unwrap();
            assert!(observable(condition, template), "{condition} {template}");
            seen.insert(cell);
        }
    }
    assert_eq!(
        seen.len(),
        18,
        "every observable cell is drawn at some point"
    );
    // The whole matrix: every cell exactly once; one more is an error.
    let all: BTreeSet<u32> = m
        .draw(Design::Srs, 18, &mut stream)
        .unwrap()
        .cells()
        .collect();
    assert_eq!(all, (0..18).collect());
    assert!(m.draw(Design::Srs, 19, &mut stream).is_err());
}

#[test]
fn stratified_allocation_sums_to_the_budget_and_is_balanced_over_conditions_and_categories() {
    let m = matrix();
    let mut stream = DrawStream::with_stream(3, 48);
    let draws = 20_000;
    let mut inclusion = [[0usize; 6]; 2];
    for _ in 0..draws {
        let draw = m.draw(Design::Stratified, 5, &mut stream).unwrap();
        assert_eq!(draw.groups.len(), 2, "every reference condition");
        let sizes: Vec<usize> = draw.groups.iter().map(Vec::len).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 5, "allocation sums to B");
        assert!(
            sizes.iter().all(|&n| n == 2 || n == 3),
            "⌊5/2⌋ or ⌈5/2⌉: {sizes:?}"
        );
        for (k, group) in draw.groups.iter().enumerate() {
            let cells: Vec<Cell> = group.iter().map(|&c| m.cell(c).unwrap()).collect();
            assert!(cells.iter().all(|c| c.condition == k));
            let templates: BTreeSet<usize> = cells.iter().map(|c| c.template).collect();
            assert_eq!(templates.len(), 1, "one template per condition");
            assert!(observable(k, *templates.first().unwrap()));
            let statements: BTreeSet<usize> = cells.iter().map(|c| c.statement).collect();
            assert_eq!(statements.len(), group.len(), "distinct statements");
            // Per category, ⌊n·N_g/6⌋ or ⌈n·N_g/6⌉ statements (N = 3, 2, 1).
            let n = group.len();
            for (members, size) in [(&[0usize, 2, 5][..], 3), (&[1, 4][..], 2), (&[3][..], 1)] {
                let got = statements.iter().filter(|s| members.contains(s)).count();
                let quota = (n * size) as f64 / 6.0;
                assert!(
                    got == quota.floor() as usize || got == quota.ceil() as usize,
                    "n = {n}, category of size {size}: {got} statements"
                );
            }
            for s in statements {
                inclusion[k][s] += 1;
            }
        }
    }
    // Systematic rounding makes every statement's inclusion probability E[n_k]/|S| = 2.5/6.
    for (k, row) in inclusion.iter().enumerate() {
        for (s, &count) in row.iter().enumerate() {
            let p = count as f64 / draws as f64;
            // Binomial(draws, 2.5/6) / draws: 5 standard errors (0.0174 at 20,000 draws).
            let tolerance = atlas_core::tolerance::monte_carlo_proportion(5.0, 2.5 / 6.0, draws);
            assert!(
                (p - 2.5 / 6.0).abs() < tolerance,
                "c{} s{}: {p}",
                k + 1,
                s + 1
            );
        }
    }
}

#[test]
fn balanced_takes_one_statement_per_category_per_condition() {
    let m = matrix();
    let mut stream = DrawStream::with_stream(5, 64);
    for _ in 0..200 {
        let draw = m.draw(Design::Balanced, 999, &mut stream).unwrap();
        assert_eq!(draw.groups.len(), 2);
        for (k, group) in draw.groups.iter().enumerate() {
            let cells: Vec<Cell> = group.iter().map(|&c| m.cell(c).unwrap()).collect();
            assert_eq!(cells.len(), 3, "one per category x, y, z");
            assert!(cells.iter().all(|c| c.condition == k));
            assert!([0, 2, 5].contains(&cells[0].statement), "x first");
            assert!([1, 4].contains(&cells[1].statement), "then y");
            assert_eq!(cells[2].statement, 3, "then z");
        }
    }
    assert_eq!(m.design_budget(Design::Balanced, 200).unwrap(), 2 * 3);
}

#[test]
fn coverage_and_concentrated_draw_what_they_should() {
    let m = matrix();
    let mut stream = DrawStream::with_stream(11, 0);
    for _ in 0..200 {
        let conc = m.draw(Design::Concentrated, 4, &mut stream).unwrap();
        let cells: Vec<Cell> = conc.cells().map(|c| m.cell(c).unwrap()).collect();
        assert_eq!(cells.len(), 4);
        assert!(cells
            .iter()
            .all(|c| c.condition == cells[0].condition && c.template == cells[0].template));
        let cov = m.draw(Design::Coverage(2), 5, &mut stream).unwrap();
        let mut sizes: Vec<usize> = cov.groups.iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, vec![2, 3]);
        let conditions: BTreeSet<usize> = cov
            .groups
            .iter()
            .map(|g| m.cell(g[0]).unwrap().condition)
            .collect();
        assert_eq!(conditions.len(), 2);
    }
}

#[test]
fn draws_consume_the_stream_as_documented() {
    // Concentrated: k = index(K), t = index(|T_k|), statements = swor(|S|, B).
    let m = matrix();
    let seed = 20_260_722;
    for i in 0..20u64 {
        let mut a = DrawStream::with_stream(seed + i, Design::Concentrated.audit_stream());
        let mut b = a.clone();
        let draw = m.draw(Design::Concentrated, 3, &mut a).unwrap();
        let k = b.index(2).unwrap() as usize;
        let t = b.index(m.templates()[k].len() as u32).unwrap() as usize;
        let statements = b.sample_without_replacement(6, 3).unwrap();
        let want: Vec<Cell> = statements
            .iter()
            .map(|&s| Cell {
                condition: k,
                template: m.templates()[k][t],
                statement: s as usize,
            })
            .collect();
        let got: Vec<Cell> = draw.cells().map(|c| m.cell(c).unwrap()).collect();
        assert_eq!(got, want);
        assert_eq!(a.next_u32(), b.next_u32(), "same words consumed");

        // Balanced: per condition t = index(|T_k|), then per category index(N_g).
        let mut a = DrawStream::with_stream(seed + i, Design::Balanced.audit_stream());
        let mut b = a.clone();
        let got: Vec<Cell> = m
            .draw(Design::Balanced, 1, &mut a)
            .unwrap()
            .cells()
            .map(|c| m.cell(c).unwrap())
            .collect();
        let mut want = Vec::new();
        for k in 0..2 {
            let t = m.templates()[k][b.index(m.templates()[k].len() as u32).unwrap() as usize];
            for members in [&[0usize, 2, 5][..], &[1, 4], &[3]] {
                let p = b.index(members.len() as u32).unwrap() as usize;
                want.push(Cell {
                    condition: k,
                    template: t,
                    statement: members[p],
                });
            }
        }
        assert_eq!(got, want);
        assert_eq!(a.next_u32(), b.next_u32());

        // Stratified with B = 5: swor(2, 1) = the condition with 3; per condition index(|T_k|),
        // j = index(6), then per category swor(N_g, n_g) with n_g from the systematic rounding.
        let mut a = DrawStream::with_stream(seed + i, Design::Stratified.audit_stream());
        let mut b = a.clone();
        let got: Vec<Cell> = m
            .draw(Design::Stratified, 5, &mut a)
            .unwrap()
            .cells()
            .map(|c| m.cell(c).unwrap())
            .collect();
        let mut n_k = [2u64, 2];
        n_k[b.sample_without_replacement(2, 1).unwrap()[0] as usize] += 1;
        let mut want = Vec::new();
        for (k, &n) in n_k.iter().enumerate() {
            let t = m.templates()[k][b.index(m.templates()[k].len() as u32).unwrap() as usize];
            let j = u64::from(b.index(6).unwrap());
            let mut cum = 0u64;
            for members in [&[0usize, 2, 5][..], &[1, 4], &[3]] {
                let before = (n * cum + j) / 6;
                cum += members.len() as u64;
                let n_g = ((n * cum + j) / 6 - before) as u32;
                for p in b
                    .sample_without_replacement(members.len() as u32, n_g)
                    .unwrap()
                {
                    want.push(Cell {
                        condition: k,
                        template: t,
                        statement: members[p as usize],
                    });
                }
            }
        }
        assert_eq!(got, want);
        assert_eq!(a.next_u32(), b.next_u32());
    }
}

#[test]
fn same_seed_same_report_and_different_seed_different_draws() {
    let audit = fixture();
    let options = Rq2Options {
        draws: 300,
        budget: 4,
        seed: 42,
        bootstrap_reps: 100,
        ..Rq2Options::default()
    };
    let a = serde_json::to_string(&analyze_rq2(&audit, &options).unwrap()).unwrap();
    let b = serde_json::to_string(&analyze_rq2(&audit, &options).unwrap()).unwrap();
    assert_eq!(a, b);
    let other = Rq2Options {
        seed: 43,
        ..options.clone()
    };
    let c = serde_json::to_string(&analyze_rq2(&audit, &other).unwrap()).unwrap();
    assert_ne!(a, c);
    // And the draws themselves differ.
    let m = matrix();
    let draws = |seed: u64| -> Vec<AuditDraw> {
        let mut s = DrawStream::with_stream(seed, Design::Srs.audit_stream());
        (0..20)
            .map(|_| m.draw(Design::Srs, 4, &mut s).unwrap())
            .collect()
    };
    assert_eq!(draws(42), draws(42));
    assert_ne!(draws(42), draws(43));
    // The audit and repeat streams of a design differ.
    let mut audit_stream = DrawStream::with_stream(42, Design::Srs.audit_stream());
    let mut repeat_stream = DrawStream::with_stream(42, Design::Srs.repeat_stream());
    assert_ne!(
        m.draw(Design::Srs, 4, &mut audit_stream).unwrap(),
        m.draw(Design::Srs, 4, &mut repeat_stream).unwrap()
    );
}

#[test]
fn invalid_settings_are_errors() {
    let audit = fixture();
    let run = |budget: usize, draws: usize| {
        analyze_rq2(
            &audit,
            &Rq2Options {
                draws,
                budget,
                bootstrap_reps: 10,
                ..Rq2Options::default()
            },
        )
    };
    assert_eq!(
        run(7, 10).unwrap_err(),
        Rq2Error::BudgetExceedsStatements {
            budget: 7,
            statements: 6
        }
    );
    assert_eq!(
        run(1, 10).unwrap_err(),
        Rq2Error::BudgetBelowConditions {
            budget: 1,
            conditions: 2
        }
    );
    assert_eq!(run(0, 10).unwrap_err(), Rq2Error::ZeroBudget);
    assert_eq!(run(2, 0).unwrap_err(), Rq2Error::ZeroDraws);
    let bad = Rq2Options {
        weights: Some(vec![1.0]),
        ..Rq2Options::default()
    };
    assert!(matches!(
        analyze_rq2(&audit, &bad),
        Err(Rq2Error::WeightsLength {
            given: 1,
            conditions: 3
        })
    ));
}

#[test]
fn weights_change_the_reference_only() {
    // Weights c1 = 1, c2 = 3 (c3 is not in the reference): μ_A = (1/2 + 3 · 3/10)/4 = 7/20,
    // μ_B = (1 + 3/4)/4 = 7/16, μ_C = 1/3 (c1 has no valid unit and leaves with its weight).
    let audit = fixture();
    let options = Rq2Options {
        draws: 50,
        budget: 2,
        bootstrap_reps: 10,
        weights: Some(vec![1.0, 3.0, 5.0]),
        ..Rq2Options::default()
    };
    let r = analyze_rq2(&audit, &options).unwrap();
    assert_fraction(r.reference[0], Some(7.0 / 20.0), "μ_A");
    assert_fraction(r.reference[1], Some(7.0 / 16.0), "μ_B");
    assert_fraction(r.reference[2], Some(1.0 / 3.0), "μ_C");
    let w = r.weights.as_ref().unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!((w[1].condition.as_str(), w[1].weight), ("c2", 3.0));
    // Same draws as without weights (weights do not touch the designs).
    let plain = analyze_rq2(
        &audit,
        &Rq2Options {
            weights: None,
            ..options.clone()
        },
    )
    .unwrap();
    let means = |r: &atlas_core::rq2::Rq2Report| -> Vec<Option<f64>> {
        r.designs[0]
            .summary
            .per_model
            .iter()
            .map(|m| m.mean_score)
            .collect()
    };
    assert_eq!(means(&r), means(&plain));
}
