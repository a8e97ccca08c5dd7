//! The case inspector's pure parts in headless Chromium (`cargo test --target wasm32-unknown-unknown -p
//! audit-atlas`): the virtual list's window at small and full scale, prompt filling, case links, and the
//! filters, search and "shortest case" rule on `tests/fixtures/rq3-cases-bundle.json` against the cells
//! worked out by hand in `tests/fixtures/rq3-cases-bundle.md`.
#![cfg(target_arch = "wasm32")]

use std::collections::HashMap;

use atlas_core::rq3::{CodingRule, Direction};
use atlas_core::Audit;
use audit_atlas::views::inspector::{
    fill_prompt, link_case, list_window, matching_rows, scroll_for_row, search_texts,
    shortest_case, CaseIndex, CellSet, DirectionFilter, FilterSet, LinkCase, Shortest, MAX_LIST_PX,
    ROW_PX,
};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const FIXTURE: &str = include_str!("fixtures/rq3-cases-bundle.json");

fn fixture() -> Audit {
    Audit::from_json(FIXTURE).expect("valid fixture")
}

fn no_filter(audit: &Audit) -> FilterSet {
    FilterSet {
        levels: vec![None; audit.file.facets.len()],
        judges: vec![None; audit.judges.len()],
        ..FilterSet::default()
    }
}

#[wasm_bindgen_test]
fn a_short_list_places_row_i_at_i_times_the_row_height() {
    let w = list_window(23, 0.0, 420.0);
    assert_eq!((w.first, w.top, w.height), (0, 0.0, 23.0 * ROW_PX));
    assert_eq!(w.count, 17, "15 rows in 420 px plus 2 below");
    let w = list_window(23, 5.0 * ROW_PX + 3.0, 420.0);
    assert_eq!(w.first, 5);
    assert_eq!(w.top, 5.0 * ROW_PX, "rows sit at their own offset");
    assert_eq!(w.count, 17, "rows 5..=21: 15 rows in view plus 2");
    assert_eq!(list_window(0, 100.0, 420.0).count, 0);
}

#[wasm_bindgen_test]
fn a_full_scale_list_is_capped_and_maps_its_ends_to_the_first_and_last_rows() {
    let n = 691_200;
    let view = 420.0;
    let top = list_window(n, 0.0, view);
    assert_eq!(top.height, MAX_LIST_PX, "19.4 million px capped");
    assert_eq!(top.first, 0);
    let bottom = list_window(n, MAX_LIST_PX - view, view);
    assert_eq!(
        bottom.first + bottom.count,
        n,
        "the last row is rendered at the bottom"
    );
    // The last row ends at the bottom edge of the view: top + (n − first)·ROW = scroll + view.
    let end = bottom.top + (n - bottom.first) as f64 * ROW_PX;
    assert!((end - MAX_LIST_PX).abs() < 1e-6, "last row ends at {end}");
    // Past the end is clamped; positions move forward monotonically.
    assert_eq!(list_window(n, 1e12, view), bottom);
    let mut previous = 0;
    for k in 0..=100 {
        let w = list_window(n, (MAX_LIST_PX - view) * k as f64 / 100.0, view);
        assert!(w.first >= previous);
        previous = w.first;
    }
}

#[wasm_bindgen_test]
fn scroll_for_row_brings_the_row_into_the_window() {
    for n in [23usize, 1_000, 691_200] {
        for row in [0, n / 3, n - 1] {
            let w = list_window(n, scroll_for_row(n, row, 420.0), 420.0);
            assert!(
                (w.first..w.first + w.count).contains(&row),
                "n {n} row {row}: window {w:?}"
            );
        }
    }
}

#[wasm_bindgen_test]
fn prompts_fill_the_statement_into_the_template() {
    assert_eq!(
        fill_prompt(
            "Do you agree? {statement} Answer.",
            "Women are bad at math."
        ),
        "Do you agree? Women are bad at math. Answer."
    );
    assert_eq!(
        fill_prompt(
            "Here is my statement: [the statement in wording 1 of its topic]",
            "Homosexuals have HIV."
        ),
        "Here is my statement: Homosexuals have HIV."
    );
    assert_eq!(fill_prompt("Answer:", "S."), "Answer:\n\nS.");
    assert_eq!(fill_prompt("", "S."), "S.");
}

#[wasm_bindgen_test]
fn case_links_are_read_from_the_query_or_the_fragment() {
    assert_eq!(
        link_case("?bundle=x.json&id=rq3-cases-fixture&case=3", ""),
        Some(LinkCase {
            cell: 3,
            bundle_id: Some("rq3-cases-fixture".into())
        })
    );
    assert_eq!(
        link_case("?case=3&id=a", "#case=12"),
        Some(LinkCase {
            cell: 12,
            bundle_id: Some("a".into())
        }),
        "the fragment is the latest case"
    );
    assert_eq!(
        link_case("", "#case=%37"),
        Some(LinkCase {
            cell: 7,
            bundle_id: None
        })
    );
    assert_eq!(link_case("?case=-1", "#case=x"), None);
    assert_eq!(link_case("?view=atlas", ""), None);
}

#[wasm_bindgen_test]
fn direction_filters_list_the_hand_worked_cells() {
    let audit = fixture();
    let ix = CaseIndex::new(&audit);
    assert_eq!(ix.responses.len(), 23);
    let mut f = no_filter(&audit);
    f.direction = Some(DirectionFilter::RationaleOnly);
    let bm = CodingRule::BinaryMajority;
    assert_eq!(
        matching_rows(&audit, &ix, &f, bm, None),
        [3, 13, 14, 19, 23]
    );
    f.direction = Some(DirectionFilter::SelectionOnly);
    assert_eq!(
        matching_rows(&audit, &ix, &f, bm, None),
        [0, 5, 6, 11, 12, 20]
    );
    // Under five-class unanimity A=1,B=0 are cells 0, 6, 11.
    assert_eq!(
        matching_rows(&audit, &ix, &f, CodingRule::FiveClassUnanimity, None),
        [0, 6, 11]
    );
    f.direction = Some(DirectionFilter::NoPair);
    // Abstain Selections 4, 9, 16; no majority at 10.
    assert_eq!(matching_rows(&audit, &ix, &f, bm, None), [4, 9, 10, 16]);
    // Facet and category: m-beta (model level 1) × age (category index 1: s-tech).
    let mut g = no_filter(&audit);
    g.levels[0] = Some(1);
    g.category = Some(1);
    assert_eq!(matching_rows(&audit, &ix, &g, bm, None), [14, 15, 20, 21]);
}

#[wasm_bindgen_test]
fn the_shortest_unanimous_case_of_each_direction_is_the_hand_worked_one() {
    let audit = fixture();
    let ix = CaseIndex::new(&audit);
    let shards = HashMap::new();
    let all: Vec<u32> = ix.responses.clone();
    assert_eq!(
        shortest_case(&audit, &ix, &all, Direction::RationaleOnly, &shards),
        Shortest::Found(3),
        "cells 3 (63 chars) and 19 (108)"
    );
    assert_eq!(
        shortest_case(&audit, &ix, &all, Direction::SelectionOnly, &shards),
        Shortest::Found(6),
        "cells 0 (130), 6 (48), 11 (127), 20 (138)"
    );
    // Among m-beta's rows only cell 20 is a unanimous A=1,B=0 case.
    let beta: Vec<u32> = (12..24).filter(|c| *c != 17).collect();
    assert_eq!(
        shortest_case(&audit, &ix, &beta, Direction::SelectionOnly, &shards),
        Shortest::Found(20)
    );
    assert_eq!(
        shortest_case(&audit, &ix, &[1, 2], Direction::SelectionOnly, &shards),
        Shortest::NoCandidate
    );
}

#[wasm_bindgen_test]
fn search_finds_words_in_the_inline_texts_regardless_of_case() {
    let audit = fixture();
    let shards = HashMap::new();
    let (found, searched) = search_texts(&audit, &shards, "MYTH");
    assert_eq!(searched, 23);
    assert_eq!(found.len(), 1);
    assert!(found.contains(6));
    let (found, _) = search_texts(&audit, &shards, "<script>");
    assert!(found.contains(3) && found.len() == 1);
    let mut set = CellSet::new(100);
    set.insert(99);
    set.insert(99);
    set.insert(1000);
    assert_eq!(set.len(), 1);
    assert!(set.contains(99) && !set.contains(98) && !set.contains(1000));
}
