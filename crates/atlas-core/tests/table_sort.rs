//! The sort order of the app's table component (`atlas_core::tables::sort_order`, issue 15 item 5)
//! and the display units (`atlas_core::format::display_*`), against orders and texts worked out by
//! hand in the comments.

use atlas_core::format::{
    display_percent, display_points, display_table_cell, n_equals, thousands, NO_VALUE,
};
use atlas_core::tables::{is_numeric_column, plain_text_order, sort_order, Cell, SortKey, Table};

fn keys(cells: &[Cell]) -> Vec<SortKey> {
    cells.iter().map(Cell::sort_key).collect()
}

#[test]
fn a_numeric_column_sorts_by_value_not_by_text_and_puts_missing_values_last() {
    // Values (fractions) 0.134, 0.09, missing, 0.5, 0.1338 — as text "13.40", "9.00", "—", "50.00",
    // "13.38". By text "9.00" would sort after "50.00"; by value the ascending order is
    // 0.09 (row 1) < 0.1338 (row 4) < 0.134 (row 0) < 0.5 (row 3), then the missing row 2.
    let cells = vec![
        Cell::percent("a", Some(0.134)),
        Cell::percent("b", Some(0.09)),
        Cell::percent("c", None),
        Cell::percent("d", Some(0.5)),
        Cell::percent("e", Some(0.1338)),
    ];
    let k = keys(&cells);
    assert!(is_numeric_column(&k));
    assert_eq!(
        sort_order(&k, true, false, plain_text_order),
        [1, 4, 0, 3, 2]
    );
    // Descending: 0.5, 0.134, 0.1338, 0.09, and the missing row still last.
    assert_eq!(
        sort_order(&k, true, true, plain_text_order),
        [3, 0, 4, 1, 2]
    );
}

#[test]
fn numbers_are_read_from_text_cells_with_separators_signs_and_flags() {
    // Chart tables hold text cells only: "28,162" = 28162, "+1.20" = 1.2, "-3.5" = −3.5,
    // "12.34 ⚠ Abstain 80.8 %" = 12.34, "3 of 10" = 3. Ascending: −3.5 (2), 1.2 (1), 3 (4),
    // 12.34 (3), 28162 (0).
    let texts = [
        "28,162",
        "+1.20",
        "-3.5",
        "12.34 ⚠ Abstain 80.8 %",
        "3 of 10",
    ];
    let k: Vec<SortKey> = texts.iter().map(|t| Cell::text(*t).sort_key()).collect();
    assert_eq!(
        k.iter().map(|k| k.number).collect::<Vec<_>>(),
        [Some(28162.0), Some(1.2), Some(-3.5), Some(12.34), Some(3.0)]
    );
    assert!(is_numeric_column(&k));
    assert_eq!(
        sort_order(&k, true, false, plain_text_order),
        [2, 1, 4, 3, 0]
    );
}

#[test]
fn a_text_column_sorts_case_insensitively_and_a_mixed_column_sorts_as_text() {
    // "gpt-4", "Alpaca", "claude", "—": case-insensitively alpaca < claude < gpt-4; the dash last.
    let k: Vec<SortKey> = ["gpt-4", "Alpaca", "claude", NO_VALUE]
        .iter()
        .map(|t| Cell::text(*t).sort_key())
        .collect();
    assert!(!is_numeric_column(&k));
    assert_eq!(sort_order(&k, false, false, plain_text_order), [1, 2, 0, 3]);
    assert_eq!(sort_order(&k, false, true, plain_text_order), [0, 2, 1, 3]);
    // A model id starting with a digit among names: the column is text, not numbers.
    let mixed: Vec<SortKey> = ["7b-chat", "llama"]
        .iter()
        .map(|t| Cell::text(*t).sort_key())
        .collect();
    assert!(!is_numeric_column(&mixed));
    // SortKey::text never reads a number, even from "7b".
    assert_eq!(SortKey::text("7b").number, None);
    // A column of missing values only is not numeric.
    assert!(!is_numeric_column(&[
        SortKey::missing(),
        SortKey::number(None)
    ]));
}

#[test]
fn ties_keep_the_table_order_and_sorting_never_changes_a_cell() {
    // Ranks 2, 1, 2, 3.5, 3.5 (average ranks): ascending 1 (row 1), 2 (rows 0, 2 in table order),
    // 3.5 (rows 3, 4 in table order); descending keeps the tied rows' table order too.
    let k: Vec<SortKey> = [2.0, 1.0, 2.0, 3.5, 3.5]
        .iter()
        .map(|v| SortKey::number(Some(*v)))
        .collect();
    assert_eq!(
        sort_order(&k, true, false, plain_text_order),
        [1, 0, 2, 3, 4]
    );
    assert_eq!(
        sort_order(&k, true, true, plain_text_order),
        [3, 4, 0, 2, 1]
    );

    let table = Table {
        id: "t".into(),
        title: "t".into(),
        caption: "c".into(),
        header: vec!["Model".into(), "score (%)".into()],
        rows: vec![
            vec![Cell::text("b"), Cell::percent("b/s", Some(0.25))],
            vec![Cell::text("a"), Cell::percent("a/s", Some(0.75))],
        ],
        notes: vec![],
    };
    let before = table.to_csv();
    let k: Vec<SortKey> = table.rows.iter().map(|r| r[1].sort_key()).collect();
    let order = sort_order(&k, true, true, plain_text_order);
    assert_eq!(order, [1, 0]);
    // The sorted rows are the same cells, and the table (and so its CSV) is untouched.
    let sorted: Vec<&Vec<Cell>> = order.iter().map(|&i| &table.rows[i]).collect();
    assert_eq!(sorted[0][1].value.as_deref(), Some("0.75"));
    assert_eq!(table.to_csv(), before);
}

#[test]
fn the_display_units_read_as_worked_out_by_hand() {
    // 3768 of 28162 valid Selections: 3768 / 28162 = 0.13379732... = 13.38 % → "13.4 %".
    assert_eq!(display_percent(Some(3768.0 / 28162.0)), "13.4 %");
    assert_eq!(display_percent(None), NO_VALUE);
    assert!(!display_percent(None).contains('%'));
    // A change of +1.234 percentage points reads "+1.2 pp"; −0.96 pp reads "-1.0 pp".
    assert_eq!(display_points(Some(1.234)), "+1.2 pp");
    assert_eq!(display_points(Some(-0.96)), "-1.0 pp");
    assert_eq!(n_equals(28162), "n = 28,162");
    assert_eq!(thousands(1_000_000), "1,000,000");
}

#[test]
fn a_core_table_cell_reads_in_display_units_but_flags_ranges_and_texts_stay_as_written() {
    // A `(%)` column's cell as Cell::percent writes it: 1/3 → text "33.33", value 0.333… → "33.3 %".
    assert_eq!(
        display_table_cell("pooled (%)", "33.33", Some(1.0 / 3.0)),
        "33.3 %"
    );
    assert_eq!(display_table_cell("%", "12.50", Some(0.125)), "12.5 %");
    // The same column with a flag appended keeps the table's text (the flag is information).
    assert_eq!(
        display_table_cell("pooled (%)", "33.33 ⚠", Some(1.0 / 3.0)),
        "33.33 ⚠"
    );
    // A missing value stays the dash alone, never "—%".
    assert_eq!(display_table_cell("pooled (%)", NO_VALUE, None), NO_VALUE);
    // A `(pp)` column: 1.234 pp written "1.23" → "+1.2 pp"; −0.5 written "-0.50" → "-0.5 pp".
    assert_eq!(
        display_table_cell("range (pp)", "1.23", Some(1.234)),
        "+1.2 pp"
    );
    assert_eq!(display_table_cell("Δ (pp)", "-0.50", Some(-0.5)), "-0.5 pp");
    // Counts gain thousands separators: 28162 → "28,162"; a small count is unchanged.
    assert_eq!(
        display_table_cell("Changed", "28162", Some(28162.0)),
        "28,162"
    );
    assert_eq!(display_table_cell("draws", "7", Some(7.0)), "7");
    // A ratio or a rank range is left as written.
    assert_eq!(display_table_cell("inversions", "3/28", Some(3.0)), "3/28");
    assert_eq!(display_table_cell("rank range", "1–3", None), "1–3");
    // A decimal that is not a percentage column is left as written (τ-b 0.714).
    assert_eq!(display_table_cell("τ-b", "0.714", Some(0.7142857)), "0.714");
}
