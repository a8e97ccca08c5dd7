//! How numbers read wherever they are shown — the app's tables, the CLI's text, chart labels — so a
//! value prints the same in the browser and in the terminal: one rendering of a missing value
//! ([`NO_VALUE`]), of a fraction as a percentage ([`percent`]) or as bare percentage points
//! ([`points`]), of a plain number ([`number`]) and of a count ([`thousands`]).
//!
//! **Display style of the app's tables** (issue 15 item 5; the CLI's text and every CSV export keep
//! their own documented formats above, and CSV exports keep full precision): a fraction reads as a
//! percentage with one decimal and a spaced sign ([`display_percent`], `0.13382` → `13.4 %`); a value
//! already in percentage points as a signed number with `pp` ([`display_points`], `+1.2 pp`); a count
//! with thousands separators ([`thousands`], `28,162`; [`n_equals`] → `n = 28,162`); a missing value
//! as [`NO_VALUE`] alone, never followed by a unit.
//!
//! ```
//! use atlas_core::format::{percent, points, thousands, NO_VALUE};
//! assert_eq!(percent(Some(0.123456), 2), "12.35%");
//! assert_eq!(points(Some(0.123456), 1), "12.3");
//! assert_eq!(percent(None, 2), NO_VALUE);
//! assert_eq!(thousands(691_200), "691,200");
//! ```

/// What every table and text shows where there is no value (an undefined BER, a model without a
/// score, a rank that cannot be given): an em dash.
pub const NO_VALUE: &str = "—";

/// A fraction as a percentage with `decimals` decimals and a `%` sign (`0.1234` → `12.34%`), or
/// [`NO_VALUE`]. Non-finite values also read as [`NO_VALUE`].
pub fn percent(fraction: Option<f64>, decimals: usize) -> String {
    match fraction.filter(|x| x.is_finite()) {
        Some(x) => format!("{:.decimals$}%", 100.0 * x),
        None => NO_VALUE.to_string(),
    }
}

/// A fraction as bare percentage points with `decimals` decimals (`0.1234` → `12.34`; the column
/// header says the unit), or [`NO_VALUE`]. Non-finite values also read as [`NO_VALUE`].
pub fn points(fraction: Option<f64>, decimals: usize) -> String {
    match fraction.filter(|x| x.is_finite()) {
        Some(x) => format!("{:.decimals$}", 100.0 * x),
        None => NO_VALUE.to_string(),
    }
}

/// A number with `decimals` decimals (`number(Some(2.0 / 3.0), 3)` → `0.667`), or [`NO_VALUE`].
/// Non-finite values also read as [`NO_VALUE`].
pub fn number(value: Option<f64>, decimals: usize) -> String {
    match value.filter(|x| x.is_finite()) {
        Some(x) => format!("{x:.decimals$}"),
        None => NO_VALUE.to_string(),
    }
}

/// A count with a comma between thousands: `691200` → `691,200`.
pub fn thousands(n: usize) -> String {
    thousands_u64(n as u64)
}

/// [`thousands`] of a 64-bit count (`u64`: the counts of `atlas_core::stats`).
pub fn thousands_u64(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A fraction as the app's tables show it: a percentage with one decimal and a spaced `%`
/// (`0.13382` → `13.4 %`), or [`NO_VALUE`] alone (never `—%`) for `None` and non-finite values.
pub fn display_percent(fraction: Option<f64>) -> String {
    match fraction.filter(|x| x.is_finite()) {
        Some(x) => format!("{:.1} %", 100.0 * x),
        None => NO_VALUE.to_string(),
    }
}

/// A value **already in percentage points** as the app's tables show it: signed, one decimal, ` pp`
/// (`1.234` → `+1.2 pp`, `-0.04` → `-0.0 pp`, `0.0` → `+0.0 pp`), or [`NO_VALUE`] alone.
pub fn display_points(pp: Option<f64>) -> String {
    match pp.filter(|x| x.is_finite()) {
        Some(x) => format!("{x:+.1} pp"),
        None => NO_VALUE.to_string(),
    }
}

/// A sample size as the app shows it: `n = 28,162` ([`thousands`]).
pub fn n_equals(n: u64) -> String {
    format!("n = {}", thousands_u64(n))
}

/// How a cell of a core table (`atlas_core::tables::Table`) reads in the app, from its column
/// header, the text the table wrote (the CLI's) and its unrounded value:
/// - in a `%` or `… (%)` column, a plain two-decimal percentage ([`points`] of the value, a fraction)
///   reads [`display_percent`] (`13.38` → `13.4 %`);
/// - in a `… (pp)` column, a plain value in points (two or one decimals, signed or not) reads
///   [`display_points`] (`1.23` → `+1.2 pp`);
/// - a plain whole count (text = the value's digits) reads with [`thousands`] (`28162` → `28,162`);
/// - anything else (a flagged value, a range, a ratio, a text, [`NO_VALUE`]) as the table wrote it.
///
/// The table's CSV keeps its own text and unrounded values; only the page reads this.
pub fn display_table_cell(header: &str, text: &str, value: Option<f64>) -> String {
    let Some(v) = value.filter(|v| v.is_finite()) else {
        return text.to_string();
    };
    let h = header.trim();
    if (h == "%" || h.ends_with("(%)")) && text == points(Some(v), 2) {
        return display_percent(Some(v));
    }
    if h.contains("(pp)")
        && [
            format!("{v:.2}"),
            format!("{v:+.2}"),
            format!("{v:.1}"),
            format!("{v:+.1}"),
        ]
        .iter()
        .any(|t| t == text)
    {
        return display_points(Some(v));
    }
    if v >= 0.0 && v.fract() == 0.0 && v < 1e15 && text == format!("{}", v as u64) {
        return thousands_u64(v as u64);
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_percent_has_one_decimal_a_spaced_sign_and_no_unit_on_a_missing_value() {
        // 3768 / 28162 = 0.133797... → 13.3797...% → one decimal: 13.4.
        assert_eq!(display_percent(Some(3768.0 / 28162.0)), "13.4 %");
        // 1/3 = 33.333...% → 33.3; 2/3 = 66.666...% → 66.7.
        assert_eq!(display_percent(Some(1.0 / 3.0)), "33.3 %");
        assert_eq!(display_percent(Some(2.0 / 3.0)), "66.7 %");
        assert_eq!(display_percent(Some(1.0)), "100.0 %");
        assert_eq!(display_percent(Some(0.0)), "0.0 %");
        assert_eq!(display_percent(None), "—");
        assert_eq!(display_percent(Some(f64::NAN)), "—");
    }

    #[test]
    fn display_points_are_signed_with_one_decimal_and_pp() {
        assert_eq!(display_points(Some(1.234)), "+1.2 pp");
        assert_eq!(display_points(Some(-12.36)), "-12.4 pp");
        assert_eq!(display_points(Some(0.0)), "+0.0 pp");
        assert_eq!(display_points(None), "—");
        assert_eq!(display_points(Some(f64::INFINITY)), "—");
    }

    #[test]
    fn n_equals_groups_thousands() {
        assert_eq!(n_equals(28162), "n = 28,162");
        assert_eq!(n_equals(7), "n = 7");
    }

    #[test]
    fn percent_rounds_an_exact_tie_to_even_and_marks_missing_values() {
        // 0.0625 × 100 = 6.25 exactly (binary 110.01); Rust formats an exact tie to the even digit: 6.2.
        assert_eq!(percent(Some(0.0625), 1), "6.2%");
        assert_eq!(percent(Some(1.0), 0), "100%");
        assert_eq!(percent(Some(0.0), 2), "0.00%");
        assert_eq!(percent(Some(f64::NAN), 2), "—");
        assert_eq!(percent(None, 2), "—");
    }

    #[test]
    fn points_are_percentages_without_the_sign() {
        assert_eq!(points(Some(0.5), 2), "50.00");
        assert_eq!(points(Some(-0.0123), 1), "-1.2");
        assert_eq!(points(Some(f64::INFINITY), 1), NO_VALUE);
    }

    #[test]
    fn number_and_thousands_read_as_written_out_by_hand() {
        assert_eq!(number(Some(2.0 / 3.0), 3), "0.667");
        assert_eq!(number(None, 3), NO_VALUE);
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (691_200, "691,200"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), text);
        }
    }
}
