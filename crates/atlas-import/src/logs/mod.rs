//! Readers for the logs evaluation tools write: Inspect AI ([`inspect`]) and promptfoo
//! ([`promptfoo`]).
//!
//! Each reader turns the tool's own structure into flat JSON records (one per response) and feeds them,
//! as JSON Lines, through the same [`Importer`] and [`crate::Mapping`] as a results file: limits, skip and
//! exclusion counts and the [`crate::Report`] are those of every import. Each reader has a documented
//! **preset** mapping (`docs/import-mapping.md`, "Logs of evaluation tools") built from what the log
//! recorded; the form mapper starts from it and may change any role. Problems of the log's structure
//! (a truncated zip, a missing member, a member that is not JSON, a field of the wrong type) are
//! [`ImportError::Log`], naming the input, the member or record, and the field.

pub mod inspect;
pub mod promptfoo;

use serde_json::Value;

use crate::{Format, ImportError, Importer};

/// [`ImportError::Log`] for `input` at `location` (a zip member, `samples[3]`, `results[12]`), field
/// `field`.
pub(crate) fn log_error(
    input: &str,
    location: impl Into<String>,
    field: impl Into<String>,
    message: impl Into<String>,
) -> ImportError {
    ImportError::Log {
        input: input.to_string(),
        location: location.into(),
        field: field.into(),
        message: message.into(),
    }
}

/// Feeds `records` (flat JSON objects) to `importer` as the JSON Lines input `name`: record *n* is
/// line *n*, so the report's record numbers are the reader's record order.
pub(crate) fn feed(
    importer: &mut Importer,
    name: &str,
    records: impl IntoIterator<Item = Result<Value, ImportError>>,
) -> Result<(), ImportError> {
    importer.begin(name, Format::Jsonl)?;
    let mut line = Vec::new();
    for record in records {
        line.clear();
        serde_json::to_writer(&mut line, &record?).map_err(|e| ImportError::Io {
            input: name.to_string(),
            message: e.to_string(),
        })?;
        line.push(b'\n');
        importer.push(&line)?;
    }
    importer.end()
}

/// The text of a JSON scalar as the mapping reads it (a string is itself, a number or boolean its
/// JSON text, `null` empty); `None` for arrays and objects.
pub(crate) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// The first of `candidates` that is a key of every object in `objects` with a non-empty scalar
/// value (at least one object required).
pub(crate) fn common_key<'a>(
    objects: &[&serde_json::Map<String, Value>],
    candidates: &[&'a str],
) -> Option<&'a str> {
    if objects.is_empty() {
        return None;
    }
    candidates.iter().copied().find(|k| {
        objects.iter().all(|o| {
            o.get(*k)
                .and_then(scalar_text)
                .is_some_and(|s| !s.is_empty())
        })
    })
}

/// A bundle id from free text: lowercase ASCII letters, digits and `-`.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("log");
    }
    out.truncate(80);
    out
}

/// Parses `bytes` as JSON, naming `input`, `location` and the line/column of a syntax error.
pub(crate) fn parse_json(input: &str, location: &str, bytes: &[u8]) -> Result<Value, ImportError> {
    serde_json::from_slice(bytes).map_err(|e| {
        log_error(
            input,
            location,
            "(document)",
            format!("not valid JSON: {e}"),
        )
    })
}

/// Whether `head` (the first bytes of a JSON text) has the key `key` followed by `:` and `open` (`{`
/// or `[`), e.g. `"eval": {`. A heuristic for format detection on the first few KiB; it never
/// decides an import, the reader's own errors do.
pub(crate) fn has_key_opening(head: &[u8], key: &str, open: u8) -> bool {
    let needle = format!("\"{key}\"");
    let n = needle.as_bytes();
    let mut from = 0;
    while let Some(pos) = head[from..].windows(n.len()).position(|w| w == n) {
        let mut i = from + pos + n.len();
        while head.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if head.get(i) == Some(&b':') {
            i += 1;
            while head.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            if head.get(i) == Some(&open) || (open == 0 && i < head.len()) {
                return true;
            }
        }
        from += pos + 1;
    }
    false
}

/// Whether `head` starts (after a byte-order mark and white space) with a JSON object.
pub(crate) fn starts_object(head: &[u8]) -> bool {
    let head = head.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(head);
    head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}
