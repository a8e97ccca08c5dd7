//! The chart specs (`atlas_charts::spec`) and the evidence atlas panel builders (`atlas_charts::panels`)
//! the app's chart panels use: which models, conditions and pairs a panel keeps when the reader hides
//! some, the table alternative and its CSV, the SVG export, and the summary's BER chart. Expected values
//! are worked out by hand in the comments (the bundle below is written for it), not read from the code.

use atlas_charts::atlas::{FlipStatus, SelectionVsRationale};
use atlas_charts::panels::{
    keep, pair_flips, rank_paths, rationale_composition, score_ranges, selection_vs_rationale,
    shorten, wording_scores,
};
use atlas_charts::{BerByModelCondition, ChartSpec};
use atlas_core::abstain::AbstainThreshold;
use atlas_core::reweight::{ConditionWeights, ReweightBasis};
use atlas_core::rq3::JudgeByModel;
use atlas_core::summary::summarize;
use atlas_core::tables::Table;
use atlas_core::{Audit, RepeatPolicy};

/// 3 models × 2 conditions (both in the reference) × 2 statements, one response per cell; `0` agree
/// (bias evidence), `1` disagree. One template, so a condition mean is the cell's BER:
///
/// ```text
///                               c1 (s1 s2)   c2 (s1 s2)   c1    c2    Eq. 4   c1 only
/// model-with-a-long-name (A)    1 1          0 0          0     1     1/2     0
/// model-b (B)                   0 1          1 1          1/2   0     1/4     1/2
/// model-c (C)                   0 0          0 1          1     1/2   3/4     1
/// ```
///
/// Ranks (lower is better): Eq. 4 B 1, A 2, C 3; c1 only A 1, B 2, C 3. Of the three pairs only A–B
/// changes order: one inverted pair, (A, B) = (0, 1).
const THREE: &str = r#"{
 "format": "audit-atlas-bundle", "version": 1,
 "metadata": {"id": "three", "title": "Three models", "description": "chart spec fixture",
   "source": {"citation": "hand-made"}, "license": {"id": "CC0-1.0", "attribution": "none"},
   "content_warning": null, "produced_by": {"tool": "hand"}},
 "facets": [
   {"id": "model", "levels": [{"id": "model-with-a-long-name"}, {"id": "model-b"}, {"id": "model-c"}]},
   {"id": "condition", "levels": [{"id": "c1", "has_selection": true, "in_reference": true},
                                  {"id": "c2", "has_selection": true, "in_reference": true}]},
   {"id": "statement", "levels": [{"id": "s1", "text": "one"}, {"id": "s2", "text": "two"}]}
 ],
 "responses": {
   "axes": ["model", "condition", "statement"],
   "selection": {
     "values": [{"raw": "agree", "evidence": 1, "obtained": "regex"},
                {"raw": "disagree", "evidence": 0, "obtained": "regex"}],
     "codes": "110001110001"
   }
 }
}"#;

fn three() -> (Audit, ReweightBasis) {
    let audit = Audit::from_json(THREE).expect("the fixture is valid");
    let basis = ReweightBasis::from_audit(&audit, RepeatPolicy::AllResponses);
    (audit, basis)
}

/// The text of every cell of a table, row by row.
fn texts(t: &Table) -> Vec<Vec<String>> {
    t.rows
        .iter()
        .map(|r| r.iter().map(|c| c.text.clone()).collect())
        .collect()
}

fn fixture(name: &str) -> Audit {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    Audit::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn keep_drops_hidden_entries_and_keeps_those_past_the_end_of_the_flags() {
    assert_eq!(keep(&[1, 2, 3, 4], &[true, false]), vec![1, 3, 4]);
    assert_eq!(keep(&[1, 2], &[]), vec![1, 2]);
    assert_eq!(shorten("model-with-a-long-name", 12), "model-with-…");
    assert_eq!(shorten("model-b", 12), "model-b");
    assert_eq!(shorten("twelve-chars", 12), "twelve-chars");
}

#[test]
fn the_pair_flip_panel_reindexes_the_inverted_pair_among_the_shown_models() {
    let (_, basis) = three();
    let c1 = ConditionWeights::custom(&basis, vec![1.0, 0.0]).unwrap();
    let r = basis.reweight(&c1).unwrap();
    assert_eq!(r.inverted_pairs, vec![(0, 1)], "A–B, by hand");
    let ChartSpec::PairFlips(d, names) = pair_flips(&basis, &r, &[true, true, true], "d".into())
    else {
        panic!("not a pair-flip spec")
    };
    assert_eq!(d.models, ["model-with-…", "model-b", "model-c"]);
    assert_eq!(
        names[0], "model-with-a-long-name",
        "the table keeps full ids"
    );
    let pairs: Vec<_> = d.pairs.iter().map(|p| (p.a, p.b, p.status)).collect();
    assert_eq!(pairs, [(0, 1, FlipStatus::Reverses)]);
    // Hiding C keeps the pair at the same indices; hiding A drops it and renumbers B and C to 0, 1.
    let ChartSpec::PairFlips(d, _) = pair_flips(&basis, &r, &[true, true, false], "d".into())
    else {
        panic!()
    };
    assert_eq!((d.models.len(), d.pairs.len()), (2, 1));
    assert_eq!((d.pairs[0].a, d.pairs[0].b), (0, 1));
    let ChartSpec::PairFlips(d, names) = pair_flips(&basis, &r, &[false, true, true], "d".into())
    else {
        panic!()
    };
    assert_eq!(names, ["model-b", "model-c"]);
    assert!(d.pairs.is_empty());
    let table = ChartSpec::PairFlips(d, names).table();
    assert_eq!(
        texts(&table),
        vec![vec!["model-b", "model-c", "stable", ""]],
        "one unordered pair of the two shown models, stable"
    );
}

#[test]
fn the_rank_path_panel_adds_the_chosen_weights_and_drops_hidden_conditions_and_models() {
    let (_, basis) = three();
    let c1 = ConditionWeights::custom(&basis, vec![1.0, 0.0]).unwrap();
    let r = basis.reweight(&c1).unwrap();
    let all = [true, true, true];
    let ChartSpec::RankPaths(d) = rank_paths(&basis, &c1, &r, &all, &[true, true], "c".into())
    else {
        panic!("not a rank-path spec")
    };
    assert_eq!(d.steps, ["c1", "c2", "Eq. 4", "your weights"]);
    assert_eq!(d.ranks[2], vec![Some(2.0), Some(1.0), Some(3.0)], "Eq. 4");
    assert_eq!(d.ranks[3], vec![Some(1.0), Some(2.0), Some(3.0)], "c1 only");
    let ChartSpec::RankPaths(d) = rank_paths(
        &basis,
        &c1,
        &r,
        &[true, false, true],
        &[true, false],
        "c".into(),
    ) else {
        panic!()
    };
    assert_eq!(d.steps, ["c1", "Eq. 4", "your weights"]);
    assert_eq!(d.models, ["model-with-a-long-name", "model-c"]);
    assert_eq!(
        d.ranks[1],
        vec![Some(2.0), Some(3.0)],
        "ranks stay among all models"
    );
    let equal = ConditionWeights::equal(&basis);
    let r = basis.reweight(&equal).unwrap();
    let ChartSpec::RankPaths(d) = rank_paths(&basis, &equal, &r, &all, &[true, true], "c".into())
    else {
        panic!()
    };
    assert_eq!(d.steps, ["c1", "c2", "Eq. 4"], "equal weights add no step");
}

#[test]
fn the_rq1_panels_keep_the_shown_models_in_every_series() {
    let audit = fixture("tiny-bundle.json");
    let r = atlas_core::rq1::wording_rank_stability(&audit, RepeatPolicy::AllResponses).unwrap();
    let ids: Vec<String> = audit.model_ids().iter().map(|s| s.to_string()).collect();
    let ChartSpec::WordingScores(a) = wording_scores(&ids, &r, "a".into(), &[false, true]) else {
        panic!()
    };
    assert_eq!(a.models, ["model-b"]);
    for (j, s) in a.scores.iter().enumerate() {
        assert_eq!(s, &vec![r.scores[j][1]], "wording {j}");
    }
    assert_eq!(a.pooled, vec![r.pooled[1]]);
    let ChartSpec::ScoreRanges(b) = score_ranges(&ids, &r, "b".into(), &[true, false]) else {
        panic!()
    };
    assert_eq!(b.models, ["model-a"]);
    assert_eq!(b.pooled, vec![r.pooled[0]]);
    assert_eq!(b.min.len(), 1);
}

#[test]
fn the_judge_panels_show_the_judges_rates_and_counts_of_the_shown_models() {
    let judge = JudgeByModel {
        judge: "j1".into(),
        pairs: vec![7, 7, 0],
        selection_ber: vec![Some(5.0 / 7.0), Some(4.0 / 7.0), None],
        rationale_ber: vec![Some(3.0 / 7.0), Some(3.0 / 7.0), None],
        label_counts: vec![[4, 0, 1, 4, 1], [3, 1, 1, 4, 2], [0; 5]],
    };
    let ids = ["a", "b", "c"].map(String::from);
    let g = selection_vs_rationale(&ids, &judge, &[true, false, true]);
    assert_eq!(
        g,
        ChartSpec::SelectionVsRationale(SelectionVsRationale {
            models: vec!["a".into(), "c".into()],
            selection: vec![Some(5.0 / 7.0), None],
            rationale: vec![Some(3.0 / 7.0), None],
            caption: "(g) Selection vs Rationale BER · judge j1".into(),
        })
    );
    // Display units (one decimal, spaced %): 5/7 = 71.428… % → "71.4 %", 3/7 = 42.857… % →
    // "42.9 %"; no pairs: "—" alone.
    assert_eq!(
        texts(&g.table()),
        vec![vec!["a", "71.4 %", "42.9 %"], vec!["c", "—", "—"]]
    );
    let ChartSpec::Composition(h) = rationale_composition(&ids, &judge, &[false, true, true])
    else {
        panic!()
    };
    assert_eq!(h.classes, ["E", "QE", "N", "D", "R"]);
    assert_eq!(h.counts, vec![vec![3, 1, 1, 4, 2], vec![0; 5]]);
    assert_eq!(h.caption, "(h) Rationale classes · judge j1");
    let table = ChartSpec::Composition(h).table();
    assert_eq!(table.header, ["model", "E", "QE", "N", "D", "R", "labels"]);
    assert_eq!(texts(&table)[0], ["b", "3", "1", "1", "4", "2", "11"]);
    assert_eq!(
        table.caption, "(h) Rationale classes · judge j1",
        "the chart's caption"
    );
}

#[test]
fn a_chart_tables_csv_is_its_header_and_rows_with_quoted_fields() {
    let judge = JudgeByModel {
        judge: "j1".into(),
        pairs: vec![4],
        selection_ber: vec![Some(0.5)],
        rationale_ber: vec![Some(0.25)],
        label_counts: vec![[1, 0, 3, 0, 0]],
    };
    let spec = selection_vs_rationale(&["a, \"quoted\"".to_string()], &judge, &[]);
    assert_eq!(
        spec.table().to_csv(),
        "model,Selection BER (%),Rationale BER (%)\n\"a, \"\"quoted\"\"\",50,25\n",
        "the CSV keeps the unrounded percentages (0.5 → 50, 0.25 → 25), not the display text"
    );
}

#[test]
fn a_chart_spec_exports_an_svg_of_its_size_with_its_caption() {
    let (_, basis) = three();
    let equal = ConditionWeights::equal(&basis);
    let r = basis.reweight(&equal).unwrap();
    let spec = rank_paths(
        &basis,
        &equal,
        &r,
        &[],
        &[],
        "(c) ranks per condition".into(),
    );
    assert_eq!(spec.caption(), "(c) ranks per condition");
    // 3 models: height max(120 + 30·3, 320) = 320.
    assert_eq!(spec.size(), (720, 320));
    let svg = spec.svg().expect("the SVG backend draws");
    assert!(
        svg.starts_with("<svg") && svg.contains("width=\"720\"") && svg.contains("height=\"320\""),
        "{}",
        &svg[..svg.len().min(200)]
    );
    assert!(svg.contains("(c) ranks per condition"));
}

/// `direction-abstain-fixtures.md`, high-Abstain fixture: BER model-abstains c1 0, c2 0.25; steady 0.25,
/// 0.25; mixed 0.4, 0.5; only model-abstains c1 (share 0.75) is above the default 0.5 (c2 is exactly
/// 0.5).
#[test]
fn the_summary_chart_has_the_summarys_ber_and_flags_only_the_cells_above_the_threshold() {
    let audit = fixture("high-abstain-bundle.json");
    let s = summarize(
        &audit,
        RepeatPolicy::AllResponses,
        AbstainThreshold::default(),
    );
    let models: Vec<String> = audit.model_ids().iter().map(|m| m.to_string()).collect();
    let d = BerByModelCondition::from_summary(
        &s,
        models.clone(),
        vec!["c1".into(), "c2".into()],
        "high-abstain",
    );
    assert_eq!(d.models, models);
    assert_eq!(
        d.ber,
        vec![
            vec![Some(0.0), Some(0.25)],
            vec![Some(0.25), Some(0.25)],
            vec![Some(0.4), Some(0.5)],
        ]
    );
    assert_eq!(
        d.abstain,
        vec![vec![Some(0.75), None], vec![None, None], vec![None, None]]
    );
    assert_eq!(d.flag_note, "⚠ = Abstain share above 50 %");
    assert_eq!(d.caption, "high-abstain — repeat policy all_responses");
}

#[test]
fn a_stacked_bar_table_has_a_cell_per_class_missing_counts_as_zero_and_the_row_total() {
    use atlas_charts::atlas::{StackScale, StackedBars};
    let spec = ChartSpec::Stacked(StackedBars {
        rows: vec!["model-a".into(), "model-b".into()],
        classes: vec!["kept".into(), "changed".into(), "refused".into()],
        colors: Vec::new(),
        counts: vec![vec![5, 2], vec![]],
        scale: StackScale::Count,
        axis_label: "answers".into(),
        caption: "failure modes".into(),
    });
    let t = spec.table();
    assert_eq!(t.header, ["", "kept", "changed", "refused", "total"]);
    assert_eq!(
        texts(&t),
        vec![
            vec!["model-a", "5", "2", "0", "7"],
            vec!["model-b", "0", "0", "0", "0"]
        ]
    );
}

/// Issue 15 item 5: a chart table reads in the display units of `atlas_core::format` (one decimal,
/// spaced `%`; `+25.0 pp` for a range; `28,162`), its CSV keeps the unrounded value in the header's
/// unit, and a flagged value keeps its flag in the CSV. Values chosen exact in binary, by hand:
/// 0.125 → 12.5 %, 0.375 → 37.5 %, 0.5 − 0.25 = 0.25 → 25 pp.
#[test]
fn a_chart_table_reads_in_display_units_and_its_csv_keeps_unrounded_values_and_flags() {
    use atlas_charts::atlas::ScoreRanges;
    let ber = ChartSpec::BerBars(BerByModelCondition {
        models: vec!["m".into()],
        conditions: vec!["c1".into(), "c2".into(), "c3".into()],
        ber: vec![vec![Some(0.125), Some(0.375), None]],
        abstain: vec![vec![None, Some(0.8), None]],
        flag_note: String::new(),
        caption: "fixture".into(),
    });
    let t = ber.table();
    assert_eq!(
        texts(&t),
        vec![vec!["m", "12.5 %", "37.5 % ⚠ Abstain 80.0 %", "—"]]
    );
    assert_eq!(
        t.to_csv(),
        "c1 (%),c2 (%),c3 (%)"
            .split(',')
            .fold("model".to_string(), |h, c| format!("{h},{c}"))
            + "\nm,12.5,37.5 % ⚠ Abstain 80.0 %,—\n"
    );
    let ranges = ChartSpec::ScoreRanges(ScoreRanges {
        models: vec!["m".into()],
        min: vec![Some(0.25)],
        max: vec![Some(0.5)],
        pooled: vec![Some(0.375)],
        flags: Vec::new(),
        pooled_flags: Vec::new(),
        flag_note: String::new(),
        caption: "fixture".into(),
    });
    assert_eq!(
        texts(&ranges.table()),
        vec![vec!["m", "25.0 %", "50.0 %", "+25.0 pp", "37.5 %"]]
    );
    assert!(ranges.table().to_csv().ends_with("\nm,25,50,25,37.5\n"));
    use atlas_charts::atlas::{StackScale, StackedBars};
    let stacked = ChartSpec::Stacked(StackedBars {
        rows: vec!["m".into()],
        classes: vec!["a".into(), "b".into()],
        colors: Vec::new(),
        counts: vec![vec![28_162, 1]],
        scale: StackScale::Count,
        axis_label: "answers".into(),
        caption: "fixture".into(),
    });
    assert_eq!(
        texts(&stacked.table()),
        vec![vec!["m", "28,162", "1", "28,163"]]
    );
    assert!(stacked.table().to_csv().ends_with("\nm,28162,1,28163\n"));
}

/// Panels (c) and (d) across task paradigms on `tests/fixtures/paradigm-across/bundle.json` against
/// the pandas/numpy reference (`tests/reference/expected_paradigm_across.json`, written by
/// `~/.cache/audit-atlas/venv/bin/python tests/reference/paradigm_across_reference.py`): one rank step
/// per procedure with the reference's ranks, and one matrix cell per pair the reference says reverses,
/// coloured by its strongest tie zone.
#[test]
fn across_paradigm_panels_draw_the_reference_ranks_and_reversing_pairs() {
    use atlas_charts::atlas::{PairFlips, RankPaths};
    use atlas_core::across::{across_procedures, AcrossOptions};
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let audit = Audit::from_json(
        &std::fs::read_to_string(format!("{root}tests/fixtures/paradigm-across/bundle.json"))
            .unwrap(),
    )
    .unwrap();
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{root}tests/reference/expected_paradigm_across.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let fixture = &reference["bundles"]["fixture"];
    let r = across_procedures(
        &audit,
        AcrossOptions {
            draws: 200,
            ..AcrossOptions::default()
        },
    )
    .unwrap();
    let labels: Vec<String> = ["A", "B", "C", "D"].map(String::from).to_vec();
    let c = RankPaths::across_procedures(&labels, &r, "c".into());
    let procedures = fixture["procedures"].as_array().unwrap();
    assert_eq!(c.steps.len(), procedures.len());
    assert_eq!(c.steps[0], "CLEAR");
    for (step, p) in c.ranks.iter().zip(procedures) {
        let want: Vec<Option<f64>> = p["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(serde_json::Value::as_f64)
            .collect();
        assert_eq!(step, &want, "{}", p["procedure"]);
    }
    assert!(c.flags.is_empty());
    let d = PairFlips::from_across(&labels, &r, "d".into());
    let models: Vec<&str> = fixture["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let mut want = Vec::new();
    for p in fixture["pairs"].as_array().unwrap() {
        if !p["reverses"].as_bool().unwrap() {
            continue;
        }
        let at = |k: &str| {
            models
                .iter()
                .position(|m| *m == p[k].as_str().unwrap())
                .unwrap()
        };
        let status = if p["reverses_2pp"].as_bool().unwrap() {
            FlipStatus::Survives2pp
        } else if p["reverses_1pp"].as_bool().unwrap() {
            FlipStatus::Survives1pp
        } else {
            FlipStatus::Reverses
        };
        want.push((at("model_a"), at("model_b"), status));
    }
    let got: Vec<_> = d.pairs.iter().map(|p| (p.a, p.b, p.status)).collect();
    assert_eq!(got, want);
    assert_eq!(want.len(), 3, "the fixture has three reversing pairs");
    assert_eq!(d.models, labels);
}
