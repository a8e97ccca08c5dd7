//! HTTP-date parsing for `Retry-After` (RFC 9110 §5.6.7 "Date/Time Formats",
//! <https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7>): a recipient must accept all three formats.
//!
//! * IMF-fixdate, the preferred format: `Sun, 06 Nov 1994 08:49:37 GMT`;
//! * the obsolete RFC 850 format: `Sunday, 06-Nov-94 08:49:37 GMT` (two-digit year: `00`–`69` →
//!   2000–2069, `70`–`99` → 1970–1999);
//! * the obsolete ANSI C `asctime()` format: `Sun Nov  6 08:49:37 1994`.
//!
//! Times are UTC (`GMT`). The weekday name must be a valid name but is not checked against the date.

/// Seconds since 1970-01-01T00:00:00Z of an HTTP-date in any of the three formats, or `None` when the
/// text is not one (or is before 1970). Leading and trailing whitespace is ignored; a second of 60
/// (leap second) is accepted and counted as 60.
pub fn parse_http_date(text: &str) -> Option<u64> {
    let s = text.trim();
    parse_imf_fixdate(s)
        .or_else(|| parse_rfc850(s))
        .or_else(|| parse_asctime(s))
}

const SHORT_DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn parse_imf_fixdate(s: &str) -> Option<u64> {
    let (day_name, rest) = s.split_once(", ")?;
    if !SHORT_DAYS.contains(&day_name) {
        return None;
    }
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day = digits(day, 2)?;
    let month = month_number(month)?;
    let year = digits(year, 4)?;
    let (h, m, sec) = clock(time)?;
    unix_seconds(i64::from(year), month, day, h, m, sec)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn parse_rfc850(s: &str) -> Option<u64> {
    let (day_name, rest) = s.split_once(", ")?;
    if !LONG_DAYS.contains(&day_name) {
        return None;
    }
    let parts: Vec<&str> = rest.split(' ').collect();
    let [date, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let date: Vec<&str> = date.split('-').collect();
    let [day, month, year] = date.as_slice() else {
        return None;
    };
    let day = digits(day, 2)?;
    let month = month_number(month)?;
    let yy = digits(year, 2)?;
    let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
    let (h, m, sec) = clock(time)?;
    unix_seconds(i64::from(year), month, day, h, m, sec)
}

/// `Sun Nov  6 08:49:37 1994`
fn parse_asctime(s: &str) -> Option<u64> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [day_name, month, day, time, year] = parts.as_slice() else {
        return None;
    };
    if !SHORT_DAYS.contains(day_name) {
        return None;
    }
    let month = month_number(month)?;
    let day = if day.len() == 1 {
        digits(day, 1)?
    } else {
        digits(day, 2)?
    };
    let year = digits(year, 4)?;
    let (h, m, sec) = clock(time)?;
    unix_seconds(i64::from(year), month, day, h, m, sec)
}

fn month_number(name: &str) -> Option<u32> {
    MONTHS.iter().position(|&m| m == name).map(|i| i as u32 + 1)
}

/// Exactly `len` ASCII digits.
fn digits(s: &str, len: usize) -> Option<u32> {
    if s.len() != len || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `HH:MM:SS`
fn clock(s: &str) -> Option<(u32, u32, u32)> {
    let parts: Vec<&str> = s.split(':').collect();
    let [h, m, sec] = parts.as_slice() else {
        return None;
    };
    let (h, m, sec) = (digits(h, 2)?, digits(m, 2)?, digits(sec, 2)?);
    (h < 24 && m < 60 && sec <= 60).then_some((h, m, sec))
}

fn unix_seconds(year: i64, month: u32, day: u32, h: u32, m: u32, sec: u32) -> Option<u64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if day == 0 || day > days_in_month {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(h) * 3_600 + i64::from(m) * 60 + i64::from(sec);
    u64::try_from(secs).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible Low-Level Date
/// Algorithms", `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
