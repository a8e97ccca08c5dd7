//! Readers for the logs that evaluation tools write — Inspect AI, lm-evaluation-harness, promptfoo,
//! Parquet tables — turned into format-v1 bundles through the same [`Importer`],
//! [`Mapping`] and [`Report`](crate::Report) as a CSV import, so limits, exclusion
//! counts and errors are the same (issue 16).
//!
//! **The shape every reader has** (one file per format, pure Rust, building for wasm32):
//!
//! ```text
//! pub fn read(inputs: &[LogInput<'_>], options: &LogOptions) -> Result<Imported, ImportError>
//! pub fn preset(...) -> Mapping        // the documented mapping the form mapper starts from
//! ```
//!
//! A reader turns the tool's structure into one flat JSON record per response (the tool's own fields
//! kept under their names, plus the fields its preset mapping reads), streams those records through an
//! [`Importer`] with the preset (or with [`LogOptions::mapping`] when the user gives
//! one), and returns the [`Imported`] bundle and report. Several inputs (one per model or task) go into
//! one bundle. A structure the reader does not know is an [`ImportError`] naming the input, the
//! line (or member) and the field. [`read`] dispatches on a [`LogFormat`]; [`LogFormat::detect`]
//! recognises a format from a file's name and first bytes.
//!
//! Readers present in this build: [`inspect`] (Inspect AI `.eval` / `.json`), [`promptfoo`],
//! [`lmeval`] (lm-evaluation-harness) and, with the cargo feature `parquet` (on by default and for the
//! CLI, off for the browser app), `parquet` (long tables through the CSV mapping). Problems of a log's structure are [`ImportError::Log`] (Inspect, promptfoo) or
//! [`ImportError::Record`] with the line (lm-eval), naming the input, the member or line, and the field.

pub mod inspect;
pub mod lmeval;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod parquet_job;
pub mod promptfoo;
pub mod ranged;

use serde_json::Value;

use crate::{Format, ImportError, Imported, Importer, Limits, Mapping};

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

/// Bytes [`LogFormat::detect`] looks at (the caller may pass fewer or more).
pub const DETECT_BYTES: usize = 64 << 10;

/// A tool log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogFormat {
    /// Inspect AI: `.eval` (a zip of JSON members) or a `.json` log (`eval` + `samples`/`version`).
    Inspect,
    /// lm-evaluation-harness `--log_samples` files: `samples_<task>_<time>.jsonl` (a line holds
    /// `doc_id`, `doc`, `resps`) and the run's `results_<time>.json`.
    LmEval,
    /// promptfoo `-o results.json` (`results` + `config`/`version`).
    Promptfoo,
    /// Apache Parquet (`PAR1`).
    Parquet,
}

impl LogFormat {
    /// The name used on the command line: `inspect`, `lm-eval`, `promptfoo`, `parquet`.
    pub fn key(self) -> &'static str {
        match self {
            LogFormat::Inspect => "inspect",
            LogFormat::LmEval => "lm-eval",
            LogFormat::Promptfoo => "promptfoo",
            LogFormat::Parquet => "parquet",
        }
    }

    /// Every format, in the order above.
    pub const ALL: [LogFormat; 4] = [
        LogFormat::Inspect,
        LogFormat::LmEval,
        LogFormat::Promptfoo,
        LogFormat::Parquet,
    ];

    /// The log format of a file from its name and first bytes, or `None` (then it is a plain
    /// CSV/TSV/JSONL/JSON input for the mapping). Rules, in order: zip magic `PK\x03\x04` → Inspect
    /// `.eval`; `PAR1` → Parquet; a first JSON line with `doc_id`, `doc` and `resps` → lm-eval
    /// samples; a JSON object whose top-level keys include `n-shot`, `configs` + `versions`, or
    /// `lm_eval_version` → lm-eval results; `eval` with `samples` or `version` → Inspect `.json`;
    /// `results` with `config` or `version` → promptfoo. Only the top-level keys of the bytes given
    /// are looked at, so a truncated head still detects.
    ///
    /// ```
    /// use atlas_import::logs::LogFormat;
    /// let line = br#"{"doc_id": 0, "doc": {"sent_more": "a"}, "target": 0, "resps": [[[-1.5, false]]]}"#;
    /// assert_eq!(LogFormat::detect("samples_crows_2026.jsonl", line), Some(LogFormat::LmEval));
    /// assert_eq!(LogFormat::detect("x.parquet", b"PAR1\x15\x04"), Some(LogFormat::Parquet));
    /// assert_eq!(LogFormat::detect("answers.csv", b"model,statement\n"), None);
    /// ```
    pub fn detect(name: &str, head: &[u8]) -> Option<LogFormat> {
        let _ = name;
        if head.starts_with(b"PK\x03\x04") {
            return Some(LogFormat::Inspect);
        }
        if head.starts_with(b"PAR1") {
            return Some(LogFormat::Parquet);
        }
        let head = head.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(head);
        let keys = top_level_keys(head);
        let has = |k: &str| keys.iter().any(|x| x == k);
        if has("doc_id") && has("doc") && has("resps") {
            return Some(LogFormat::LmEval);
        }
        if has("n-shot") || has("lm_eval_version") || (has("configs") && has("versions")) {
            return Some(LogFormat::LmEval);
        }
        if inspect::sniff(head) || (has("eval") && (has("samples") || has("version"))) {
            return Some(LogFormat::Inspect);
        }
        if promptfoo::sniff(head) || (has("results") && (has("config") || has("version"))) {
            return Some(LogFormat::Promptfoo);
        }
        None
    }
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "inspect" => Ok(LogFormat::Inspect),
            "lm-eval" | "lmeval" | "lm_eval" => Ok(LogFormat::LmEval),
            "promptfoo" => Ok(LogFormat::Promptfoo),
            "parquet" => Ok(LogFormat::Parquet),
            other => Err(format!(
                "unknown log format {other:?}; use inspect, lm-eval, promptfoo or parquet"
            )),
        }
    }
}

/// The keys of the first JSON object in `bytes` at depth 1, in order, as far as the bytes go (a
/// truncated object gives the keys seen so far). Not a validator: the readers parse for real.
fn top_level_keys(bytes: &[u8]) -> Vec<String> {
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut i = match bytes.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(p) if bytes[p] == b'{' => p,
        _ => return keys,
    };
    let mut expect_key = false;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => {
                depth += 1;
                expect_key = bytes[i] == b'{' && depth == 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            b',' if depth == 1 => expect_key = true,
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && expect_key {
                    if let Some(k) = bytes.get(start..j.min(bytes.len())) {
                        keys.push(String::from_utf8_lossy(k).into_owned());
                    }
                    expect_key = false;
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    keys
}

/// One input file of a log import.
#[derive(Debug, Clone, Copy)]
pub struct LogInput<'a> {
    /// The file name (the path is allowed; lm-eval reads the task and run time from it).
    pub name: &'a str,
    /// The whole file.
    pub bytes: &'a [u8],
}

/// Options of a log import.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// Record and matrix limits, as for any import.
    pub limits: Limits,
    /// A mapping over the reader's flat records instead of its preset (`docs/import-mapping.md`,
    /// "Tool logs"); `None` = the preset.
    pub mapping: Option<Mapping>,
    /// The model id when the log does not name one (lm-eval without `results_*.json`), or to
    /// override it.
    pub model: Option<String>,
}

/// Reads `inputs`, all of format `format`, into one bundle.
///
/// # Errors
/// The reader's errors; [`ImportError::NoLogReader`] for a format this build has no reader for.
pub fn read(
    format: LogFormat,
    inputs: &[LogInput<'_>],
    options: &LogOptions,
) -> Result<Imported, ImportError> {
    let pairs: Vec<(&str, &[u8])> = inputs.iter().map(|i| (i.name, i.bytes)).collect();
    match format {
        LogFormat::LmEval => lmeval::read(inputs, options),
        LogFormat::Inspect => inspect::read_all(
            &pairs,
            options.mapping.clone(),
            &inspect::Options::default(),
            options.limits.clone(),
        ),
        LogFormat::Promptfoo => {
            promptfoo::read_all(&pairs, options.mapping.clone(), options.limits.clone())
        }
        #[cfg(feature = "parquet")]
        LogFormat::Parquet => parquet::read(inputs, options),
        #[cfg(not(feature = "parquet"))]
        LogFormat::Parquet => {
            let _ = inputs;
            Err(ImportError::NoLogReader { format: "parquet" })
        }
    }
}

/// What the Import view shows of tool logs before importing them.
#[derive(Debug, Clone)]
pub struct LogPreview {
    /// The detected format in words, e.g. `Inspect AI log (.eval, 9 members)`,
    /// `lm-evaluation-harness samples`, `promptfoo results v3`.
    pub label: String,
    /// The reader's documented preset mapping (the form mapper starts from it).
    pub preset: Mapping,
    /// The first flat records the reader builds (the fields the preset reads).
    pub records: Vec<Value>,
}

/// The label, preset and first `rows` records of `inputs` (all of format `format`), read whole; for
/// large `.eval` files the browser reads [`ranged::preview_eval`] instead.
///
/// # Errors
/// The reader's errors; [`ImportError::NoLogReader`] for Parquet (its preview is the CLI's
/// `atlas import --preview`).
pub fn preview(
    format: LogFormat,
    inputs: &[LogInput<'_>],
    options: &LogOptions,
    rows: usize,
) -> Result<LogPreview, ImportError> {
    let pairs: Vec<(&str, &[u8])> = inputs.iter().map(|i| (i.name, i.bytes)).collect();
    let (label, (preset, records)) = match format {
        LogFormat::Inspect => {
            let Some((name, bytes)) = pairs.first() else {
                return Err(ImportError::NothingImported {
                    records: 0,
                    detail: "no Inspect log was given".into(),
                });
            };
            let label = if bytes.starts_with(b"PK") {
                let n = inspect::EvalArchive::open(name, bytes)?.members().len();
                format!("Inspect AI log (.eval, {n} members)")
            } else {
                "Inspect AI log (.json)".to_string()
            };
            let inspect_options = inspect::Options::default();
            (
                label,
                inspect::preview(name, bytes, &inspect_options, rows)?,
            )
        }
        LogFormat::LmEval => {
            let samples = inputs
                .iter()
                .filter(|i| lmeval::samples_name(i.name).is_some())
                .count();
            let label = match (samples, inputs.len() - samples) {
                (_, 0) => "lm-evaluation-harness samples".to_string(),
                (0, _) => "lm-evaluation-harness results".to_string(),
                _ => "lm-evaluation-harness samples + results".to_string(),
            };
            (label, lmeval::preview(inputs, options, rows)?)
        }
        LogFormat::Promptfoo => {
            let (preset, records, version) = promptfoo::preview(&pairs, rows)?;
            let label = if version.is_empty() {
                "promptfoo results".to_string()
            } else {
                format!("promptfoo results v{version}")
            };
            (label, (preset, records))
        }
        LogFormat::Parquet => return Err(ImportError::NoLogReader { format: "parquet" }),
    };
    Ok(LogPreview {
        label,
        preset,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_tells_the_four_formats_and_plain_inputs_apart() {
        assert_eq!(
            LogFormat::detect("a.eval", b"PK\x03\x04rest"),
            Some(LogFormat::Inspect)
        );
        assert_eq!(
            LogFormat::detect(
                "a.json",
                br#"{"version": 2, "status": "success", "eval": {"task": "t"}}"#
            ),
            Some(LogFormat::Inspect)
        );
        assert_eq!(
            LogFormat::detect(
                "r.json",
                br#"{"evalId": "x", "results": {"version": 3}, "config": {}}"#
            ),
            Some(LogFormat::Promptfoo)
        );
        assert_eq!(
            LogFormat::detect(
                "results_2026.json",
                br#"{"results": {"t": {}}, "configs": {}, "versions": {}, "n-shot": {}}"#
            ),
            Some(LogFormat::LmEval)
        );
        // A key deep inside is not a top-level key.
        assert_eq!(
            LogFormat::detect("x.jsonl", br#"{"doc": {"doc_id": 1, "resps": 2}}"#),
            None
        );
        assert_eq!(LogFormat::detect("x.jsonl", br#"{"model": "a"}"#), None);
        assert_eq!(LogFormat::detect("x.csv", b""), None);
    }

    #[test]
    fn a_truncated_head_still_gives_the_keys_seen() {
        assert_eq!(
            top_level_keys(br#"{"doc_id": 3, "doc": {"a": "x\"y"}, "resps": [[["-1.0", "Fal"#),
            ["doc_id", "doc", "resps"]
        );
    }

    #[test]
    fn the_preview_of_lm_eval_samples_has_rows_and_the_model_of_the_results_file() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/logs/lm-eval/"
        );
        let samples = std::fs::read(format!(
            "{dir}samples_atlas_crows_pairs_2026-12-02T03-13-24.369283.jsonl"
        ))
        .expect("samples");
        let results = std::fs::read(format!("{dir}results_2026-12-02T03-13-24.369283.json"))
            .expect("results");
        let inputs = [
            LogInput {
                name: "samples_atlas_crows_pairs_2026-12-02T03-13-24.369283.jsonl",
                bytes: &samples,
            },
            LogInput {
                name: "results_2026-12-02T03-13-24.369283.json",
                bytes: &results,
            },
        ];
        let p = preview(LogFormat::LmEval, &inputs, &LogOptions::default(), 8).expect("preview");
        assert_eq!(p.label, "lm-evaluation-harness samples + results");
        assert_eq!(p.records.len(), 8);
        assert!(p.records.iter().all(|r| r["model"].is_string()));
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn parquet_dispatches_to_its_reader() {
        let err = read(LogFormat::Parquet, &[], &LogOptions::default()).unwrap_err();
        assert!(err.to_string().contains("no Parquet file"), "{err}");
    }
}
