//! Numbers a person types: the one reading rule for every number field of the app — condition and
//! sweep weights, seeds, bootstrap sizes, draws, budgets, pilot parameters, prices, caps — and for the
//! numbers of `atlas reweight --weights`.
//!
//! A field is read as it stands, never rewritten: the text `0.` is the number 0 and `2.` is 2, while
//! `-`, `1e` or `.` are *incomplete* ([`NumberError::Incomplete`]), so a caller that reads the field
//! on every keystroke can show a message and keep its last valid value until the text is a number
//! again.
//!
//! # Decimal numbers ([`DecimalRule`])
//! Optional sign, digits with an optional decimal point (`0.5`, `.5`, `2.`), optional exponent
//! (`1e-3`, `2.5E2`); spaces around the text are ignored. A comma is not a decimal separator: `0,5`
//! is refused with a message that suggests `0.5` ([`NumberError::DecimalComma`]). `inf`, `NaN` and
//! numbers too large for a 64-bit float are refused ([`NumberError::NotFinite`]). `-0` reads as 0.
//!
//! # Whole numbers ([`WholeRule`])
//! Digits with an optional leading `+`; thousands may be grouped with `,` (`20,000`, groups of three
//! only), `_`, spaces or thin spaces (`20 000`). `2.5` is [`NumberError::NotWhole`]; `-1` is
//! [`NumberError::Negative`]. Values are `u64` (seeds go up to 18,446,744,073,709,551,615).
//!
//! Both rules then check their bounds ([`NumberError::BelowMin`], [`NumberError::AboveMax`]) and
//! whether an empty field is allowed (`optional`: empty reads as `None`).
//!
//! # Examples
//! ```
//! use atlas_core::number::{DecimalRule, NumberError, WholeRule};
//!
//! let weight = DecimalRule::at_least(0.0);
//! assert_eq!(weight.read("0.5"), Ok(Some(0.5)));
//! assert_eq!(weight.read(".5"), Ok(Some(0.5)));
//! assert_eq!(weight.read("1e"), Err(NumberError::Incomplete { text: "1e".into() }));
//! assert_eq!(weight.read("-1"), Err(NumberError::Negative { text: "-1".into() }));
//!
//! let reps = WholeRule::between(1, 100_000);
//! assert_eq!(reps.read("20,000"), Ok(Some(20_000)));
//! assert!(reps.read("2.5").is_err());
//! ```

use std::fmt;

/// Why a typed number cannot be used. `text` is the text as typed, trimmed. The `Display` text is a
/// sentence fragment that a caller prefixes with the field's name ("Replicates: …").
#[derive(Debug, Clone, PartialEq)]
pub enum NumberError {
    /// Nothing typed, where a number is required.
    Empty,
    /// The beginning of a number that is not one yet: `-`, `+`, `.`, `1e`, `1e-`.
    Incomplete {
        /// The text as typed, trimmed.
        text: String,
    },
    /// A comma used as the decimal separator (`0,5`); `suggestion` is the same number with a point.
    DecimalComma {
        /// The text as typed, trimmed.
        text: String,
        /// The same number with a decimal point.
        suggestion: String,
    },
    /// Not a number at all.
    NotANumber {
        /// The text as typed, trimmed.
        text: String,
    },
    /// `inf`, `NaN`, or a number too large for a 64-bit float.
    NotFinite {
        /// The text as typed, trimmed.
        text: String,
    },
    /// A fraction where a whole number is required.
    NotWhole {
        /// The text as typed, trimmed.
        text: String,
    },
    /// Below zero, where the smallest allowed value is 0 or more.
    Negative {
        /// The text as typed, trimmed.
        text: String,
    },
    /// Below the smallest allowed value (`min`, as the rule states it).
    BelowMin {
        /// The text as typed, trimmed.
        text: String,
        /// The smallest allowed value, as the rule states it.
        min: String,
    },
    /// Above the largest allowed value (`max`, as the rule states it).
    AboveMax {
        /// The text as typed, trimmed.
        text: String,
        /// The largest allowed value, as the rule states it.
        max: String,
    },
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberError::Empty => write!(f, "empty: type a number"),
            NumberError::Incomplete { text } => write!(f, "“{text}” is not a complete number yet"),
            NumberError::DecimalComma { text, suggestion } => write!(
                f,
                "“{text}” uses a comma as the decimal separator: write {suggestion}"
            ),
            NumberError::NotANumber { text } => write!(f, "“{text}” is not a number"),
            NumberError::NotFinite { text } => write!(f, "“{text}” is not a finite number"),
            NumberError::NotWhole { text } => write!(f, "“{text}” is not a whole number"),
            NumberError::Negative { text } => write!(f, "“{text}” is negative: use 0 or more"),
            NumberError::BelowMin { text, min } => {
                write!(f, "“{text}” is below the smallest allowed value, {min}")
            }
            NumberError::AboveMax { text, max } => {
                write!(f, "“{text}” is above the largest allowed value, {max}")
            }
        }
    }
}

impl std::error::Error for NumberError {}

/// A decimal number between `min` and `max` (inclusive), optionally empty.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecimalRule {
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value (`f64::MAX`: no upper bound).
    pub max: f64,
    /// Whether an empty field is allowed (it reads as `None`).
    pub optional: bool,
}

impl DecimalRule {
    /// A required number in `[min, max]`.
    pub const fn between(min: f64, max: f64) -> Self {
        DecimalRule {
            min,
            max,
            optional: false,
        }
    }

    /// A required number of at least `min`, with no upper bound.
    pub const fn at_least(min: f64) -> Self {
        DecimalRule::between(min, f64::MAX)
    }

    /// The same rule, with an empty field allowed.
    pub const fn or_empty(self) -> Self {
        DecimalRule {
            optional: true,
            ..self
        }
    }

    /// Reads `text`: `Ok(None)` for an empty optional field.
    ///
    /// # Errors
    /// Every [`NumberError`] but [`NumberError::NotWhole`], as the module docs describe.
    pub fn read(&self, text: &str) -> Result<Option<f64>, NumberError> {
        let Some(t) = non_empty(text, self.optional)? else {
            return Ok(None);
        };
        let v = read_decimal(t)?;
        if v < self.min {
            return Err(if v < 0.0 && self.min >= 0.0 {
                NumberError::Negative { text: t.into() }
            } else {
                NumberError::BelowMin {
                    text: t.into(),
                    min: format_bound(self.min),
                }
            });
        }
        if v > self.max {
            return Err(NumberError::AboveMax {
                text: t.into(),
                max: format_bound(self.max),
            });
        }
        Ok(Some(v))
    }

    /// [`DecimalRule::read`] for a required field.
    ///
    /// # Errors
    /// As [`DecimalRule::read`]; an empty field is [`NumberError::Empty`] even when `optional`.
    pub fn value(&self, text: &str) -> Result<f64, NumberError> {
        self.read(text)?.ok_or(NumberError::Empty)
    }
}

/// A whole number between `min` and `max` (inclusive), optionally empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeRule {
    /// Smallest allowed value.
    pub min: u64,
    /// Largest allowed value.
    pub max: u64,
    /// Whether an empty field is allowed (it reads as `None`).
    pub optional: bool,
}

impl WholeRule {
    /// A required whole number in `[min, max]`.
    pub const fn between(min: u64, max: u64) -> Self {
        WholeRule {
            min,
            max,
            optional: false,
        }
    }

    /// Any `u64` (a seed).
    pub const fn any() -> Self {
        WholeRule::between(0, u64::MAX)
    }

    /// The same rule, with an empty field allowed.
    pub const fn or_empty(self) -> Self {
        WholeRule {
            optional: true,
            ..self
        }
    }

    /// Reads `text`: `Ok(None)` for an empty optional field.
    ///
    /// # Errors
    /// Every [`NumberError`] but [`NumberError::DecimalComma`], as the module docs describe.
    pub fn read(&self, text: &str) -> Result<Option<u64>, NumberError> {
        let Some(t) = non_empty(text, self.optional)? else {
            return Ok(None);
        };
        let v = read_whole(t)?;
        if v < self.min {
            return Err(NumberError::BelowMin {
                text: t.into(),
                min: group_thousands(self.min),
            });
        }
        if v > self.max {
            return Err(NumberError::AboveMax {
                text: t.into(),
                max: group_thousands(self.max),
            });
        }
        Ok(Some(v))
    }

    /// [`WholeRule::read`] for a required field.
    ///
    /// # Errors
    /// As [`WholeRule::read`]; an empty field is [`NumberError::Empty`] even when `optional`.
    pub fn value(&self, text: &str) -> Result<u64, NumberError> {
        self.read(text)?.ok_or(NumberError::Empty)
    }
}

/// Either rule, for code that checks fields of both kinds alike (a form's inline messages).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// A whole number.
    Whole(WholeRule),
    /// A decimal number.
    Decimal(DecimalRule),
}

impl Rule {
    /// Whether `text` can be used.
    ///
    /// # Errors
    /// The reading's [`NumberError`].
    pub fn check(&self, text: &str) -> Result<(), NumberError> {
        match self {
            Rule::Whole(r) => r.read(text).map(drop),
            Rule::Decimal(r) => r.read(text).map(drop),
        }
    }
}

/// A bound as the messages show it: whole values with grouped thousands, others as Rust prints them.
/// The trimmed text of a field, `Ok(None)` when it is empty and allowed to be, [`NumberError::Empty`]
/// when it is empty and required.
fn non_empty(text: &str, optional: bool) -> Result<Option<&str>, NumberError> {
    match text.trim() {
        "" if optional => Ok(None),
        "" => Err(NumberError::Empty),
        t => Ok(Some(t)),
    }
}

fn format_bound(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let s = group_thousands(v.abs() as u64);
        if v < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else {
        v.to_string()
    }
}

/// `1234567` → `1,234,567`.
fn group_thousands(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The shape of a decimal (sign, integer digits, point, fraction digits, exponent): `Ok(true)` a
/// complete number, `Ok(false)` the beginning of one (`-`, `.`, `1e`), `Err(())` neither.
fn decimal_shape(t: &str) -> Result<bool, ()> {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - s;
    }
    let mantissa = int_digits + frac_digits > 0;
    if i == b.len() {
        return Ok(mantissa);
    }
    if !mantissa || (b[i] != b'e' && b[i] != b'E') {
        return Err(());
    }
    i += 1;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let s = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i != b.len() {
        return Err(());
    }
    Ok(i > s)
}

fn read_decimal(t: &str) -> Result<f64, NumberError> {
    match decimal_shape(t) {
        Ok(true) => {}
        Ok(false) => return Err(NumberError::Incomplete { text: t.into() }),
        Err(()) => {
            // `0,5` / `-1,25`: digits, one comma, digits, and no point.
            let body = t.trim_start_matches(['+', '-']);
            if let Some((a, b)) = body.split_once(',') {
                let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
                if digits(a) && digits(b) {
                    return Err(NumberError::DecimalComma {
                        text: t.into(),
                        suggestion: t.replacen(',', ".", 1),
                    });
                }
            }
            let lower = body.to_ascii_lowercase();
            if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
                return Err(NumberError::NotFinite { text: t.into() });
            }
            return Err(NumberError::NotANumber { text: t.into() });
        }
    }
    let v: f64 = t
        .parse()
        .map_err(|_| NumberError::NotANumber { text: t.into() })?;
    if !v.is_finite() {
        return Err(NumberError::NotFinite { text: t.into() });
    }
    // `-0` is 0.
    Ok(if v == 0.0 { 0.0 } else { v })
}

fn read_whole(t: &str) -> Result<u64, NumberError> {
    let body = t.strip_prefix('+').unwrap_or(t);
    if let Some(rest) = body.strip_prefix('-') {
        // A negative number (whole or not) or the lone sign of one.
        return Err(if rest.is_empty() {
            NumberError::Incomplete { text: t.into() }
        } else if decimal_shape(rest) == Ok(true) || whole_digits(rest).is_some() {
            NumberError::Negative { text: t.into() }
        } else {
            NumberError::NotANumber { text: t.into() }
        });
    }
    if body.is_empty() {
        return Err(NumberError::Incomplete { text: t.into() });
    }
    if let Some(digits) = whole_digits(body) {
        return digits.parse::<u64>().map_err(|_| NumberError::AboveMax {
            text: t.into(),
            max: group_thousands(u64::MAX),
        });
    }
    match decimal_shape(body) {
        // `2.5`, `1e3`, `2.`: a decimal; whole only when it has no fraction and no exponent.
        Ok(true) => {
            if let Some(int) = body.strip_suffix('.') {
                if let Some(digits) = whole_digits(int) {
                    return digits.parse::<u64>().map_err(|_| NumberError::AboveMax {
                        text: t.into(),
                        max: group_thousands(u64::MAX),
                    });
                }
            }
            Err(NumberError::NotWhole { text: t.into() })
        }
        Ok(false) => Err(NumberError::Incomplete { text: t.into() }),
        Err(()) => Err(NumberError::NotANumber { text: t.into() }),
    }
}

/// The digits of a whole number written with optional thousands separators (`,` in groups of three;
/// `_`, space, no-break space, thin space anywhere between digits), or `None`.
fn whole_digits(s: &str) -> Option<String> {
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if !s.ends_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if s.contains(',') {
        let groups: Vec<&str> = s.split(',').collect();
        let ok = groups.iter().enumerate().all(|(i, g)| {
            let n = g.chars().count();
            g.chars().all(|c| c.is_ascii_digit())
                && if i == 0 { (1..=3).contains(&n) } else { n == 3 }
        });
        return ok.then(|| groups.concat());
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '0'..='9' => out.push(c),
            '_' | ' ' | '\u{a0}' | '\u{2009}' | '\u{202f}' => {}
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(t: &str) -> NumberError {
        NumberError::Incomplete { text: t.into() }
    }

    #[test]
    fn every_prefix_of_a_typed_decimal_is_complete_or_incomplete_never_a_different_number() {
        // Typing "0.5" key by key: "0" → 0, "0." → 0, "0.5" → 0.5; "2.5": 2, 2, 2.5; ".5": ., 0.5.
        let rule = DecimalRule::at_least(0.0);
        assert_eq!(rule.read("0"), Ok(Some(0.0)));
        assert_eq!(rule.read("0."), Ok(Some(0.0)));
        assert_eq!(rule.read("0.5"), Ok(Some(0.5)));
        assert_eq!(rule.read("2."), Ok(Some(2.0)));
        assert_eq!(rule.read("2.5"), Ok(Some(2.5)));
        assert_eq!(rule.read("."), Err(inc(".")));
        assert_eq!(rule.read(".5"), Ok(Some(0.5)));
        assert_eq!(rule.read("1e"), Err(inc("1e")));
        assert_eq!(rule.read("1e-"), Err(inc("1e-")));
        assert_eq!(rule.read("1e-3"), Ok(Some(0.001)));
        assert_eq!(rule.read("2.5E2"), Ok(Some(250.0)));
    }

    #[test]
    fn a_minus_sign_is_incomplete_and_a_negative_weight_is_named_negative() {
        let rule = DecimalRule::at_least(0.0);
        assert_eq!(rule.read("-"), Err(inc("-")));
        assert_eq!(
            rule.read("-1"),
            Err(NumberError::Negative { text: "-1".into() })
        );
        assert_eq!(rule.read("-0"), Ok(Some(0.0)));
        assert!(rule.read("-0").unwrap().unwrap().is_sign_positive());
    }

    #[test]
    fn empty_is_an_error_unless_the_rule_allows_it() {
        assert_eq!(
            DecimalRule::at_least(0.0).read("  "),
            Err(NumberError::Empty)
        );
        assert_eq!(DecimalRule::at_least(0.0).or_empty().read(""), Ok(None));
        assert_eq!(WholeRule::any().read(""), Err(NumberError::Empty));
        assert_eq!(WholeRule::any().or_empty().read(" "), Ok(None));
        assert_eq!(
            WholeRule::any().or_empty().value(""),
            Err(NumberError::Empty)
        );
    }

    #[test]
    fn a_decimal_comma_is_refused_with_the_point_spelling() {
        let e = DecimalRule::at_least(0.0).read("0,5").unwrap_err();
        assert_eq!(
            e,
            NumberError::DecimalComma {
                text: "0,5".into(),
                suggestion: "0.5".into()
            }
        );
        assert!(e.to_string().contains("write 0.5"), "{e}");
    }

    #[test]
    fn infinities_nans_and_overflow_are_not_finite() {
        let rule = DecimalRule::at_least(0.0);
        for t in ["inf", "-inf", "Infinity", "NaN", "1e999"] {
            assert_eq!(
                rule.read(t),
                Err(NumberError::NotFinite { text: t.into() }),
                "{t}"
            );
        }
    }

    #[test]
    fn words_and_stray_characters_are_not_numbers() {
        let rule = DecimalRule::at_least(0.0);
        for t in ["abc", "1.2.3", "1 2", "0x10", "e5", "1e5x", "½"] {
            assert_eq!(
                rule.read(t),
                Err(NumberError::NotANumber { text: t.into() }),
                "{t}"
            );
        }
    }

    #[test]
    fn decimal_bounds_name_the_limit() {
        let temperature = DecimalRule::between(0.0, 2.0);
        assert_eq!(temperature.read("2"), Ok(Some(2.0)));
        let e = temperature.read("2.5").unwrap_err();
        assert_eq!(
            e,
            NumberError::AboveMax {
                text: "2.5".into(),
                max: "2".into()
            }
        );
        let timeout = DecimalRule::between(1.0, 600.0);
        assert_eq!(
            timeout.read("0.5"),
            Err(NumberError::BelowMin {
                text: "0.5".into(),
                min: "1".into()
            })
        );
    }

    #[test]
    fn whole_numbers_accept_thousands_grouping_and_refuse_fractions_and_signs() {
        let rule = WholeRule::between(1, 100_000);
        assert_eq!(rule.read("20,000"), Ok(Some(20_000)));
        assert_eq!(rule.read("20 000"), Ok(Some(20_000)));
        assert_eq!(rule.read("20_000"), Ok(Some(20_000)));
        assert_eq!(rule.read("+7"), Ok(Some(7)));
        assert_eq!(rule.read("7."), Ok(Some(7)));
        assert_eq!(
            rule.read("2,5"),
            Err(NumberError::NotANumber { text: "2,5".into() })
        );
        assert_eq!(
            rule.read("2.5"),
            Err(NumberError::NotWhole { text: "2.5".into() })
        );
        assert_eq!(
            rule.read("1e3"),
            Err(NumberError::NotWhole { text: "1e3".into() })
        );
        assert_eq!(rule.read("1e"), Err(inc("1e")));
        assert_eq!(rule.read("-"), Err(inc("-")));
        assert_eq!(
            rule.read("-3"),
            Err(NumberError::Negative { text: "-3".into() })
        );
        assert_eq!(
            rule.read("0"),
            Err(NumberError::BelowMin {
                text: "0".into(),
                min: "1".into()
            })
        );
        assert_eq!(
            rule.read("100,001"),
            Err(NumberError::AboveMax {
                text: "100,001".into(),
                max: "100,000".into()
            })
        );
    }

    #[test]
    fn seeds_reach_the_largest_u64_and_one_more_is_above_it() {
        assert_eq!(
            WholeRule::any().read("18446744073709551615"),
            Ok(Some(u64::MAX))
        );
        assert!(matches!(
            WholeRule::any().read("18446744073709551616"),
            Err(NumberError::AboveMax { .. })
        ));
    }

    #[test]
    fn messages_quote_the_text_and_say_what_to_do() {
        assert_eq!(
            NumberError::Negative { text: "-1".into() }.to_string(),
            "“-1” is negative: use 0 or more"
        );
        assert_eq!(NumberError::Empty.to_string(), "empty: type a number");
        assert_eq!(inc("1e").to_string(), "“1e” is not a complete number yet");
    }
}
