//! How numbers read wherever they are shown — the app's tables, the CLI's text, chart labels — so a
//! value prints the same in the browser and in the terminal: one rendering of a missing value
//! ([`NO_VALUE`]), of a fraction as a percentage ([`percent`]) or as bare percentage points
//! ([`points`]), of a plain number ([`number`]) and of a count ([`thousands`]).
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

#[cfg(test)]
mod tests {
    use super::*;

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
