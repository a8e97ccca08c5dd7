//! The case inspector's virtual list in headless Chromium (`cargo test --target wasm32-unknown-unknown
//! -p audit-atlas --test web_inspector`): the window of rows at small and full scale. The inspector's
//! logic (filters, search, shortest case, prompt filling, case links) is `atlas_core::cases`, tested
//! natively in `crates/atlas-core/tests/cases.rs`.
#![cfg(target_arch = "wasm32")]

use audit_atlas::views::inspector::{list_window, scroll_for_row, MAX_LIST_PX, ROW_PX};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn a_short_list_places_row_i_at_i_times_the_row_height() {
    let w = list_window(23, 0.0, 420.0);
    assert_eq!((w.first, w.top, w.height), (0, 0.0, 23.0 * ROW_PX));
    // ROW_PX = 44 (touch targets, issue 15): ceil(420 / 44) = ceil(9.55) = 10 rows in view, plus 2 below.
    assert_eq!(w.count, 12, "10 rows in 420 px plus 2 below");
    let w = list_window(23, 5.0 * ROW_PX + 3.0, 420.0);
    assert_eq!(w.first, 5);
    assert_eq!(w.top, 5.0 * ROW_PX, "rows sit at their own offset");
    assert_eq!(w.count, 12, "rows 5..=16: 10 rows in view plus 2");
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
