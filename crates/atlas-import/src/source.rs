//! One input being read: the encoding decoder, the record splitter of its format, the CSV header, UTF-8
//! checks and JSON parsing of each record. Records go to a [`Consumer`] (the bundle builder, or the
//! preview) one at a time.
//!
//! Defined outcomes at this level (tested in `tests/readers.rs`):
//!
//! - an input with no byte other than whitespace (after a byte-order mark) is [`ImportError::Empty`];
//! - a CSV/TSV input whose only record is the header is [`ImportError::NoRecords`];
//! - the CSV header must be UTF-8 ([`ImportError::Encoding`] otherwise); a **duplicate header** name is
//!   renamed with pandas' suffixes (the second `a` becomes `a.1`, the third `a.2`), except that a name
//!   that is already in the header is never taken (that column keeps it and the suffix counts on); the
//!   renaming is listed in the report and the preview, so every column can still be addressed;
//! - a **ragged row** (a record with more or fewer fields than the header) is skipped and reported with
//!   its record and line numbers and both field counts;
//! - a CSV/TSV record with invalid UTF-8 is skipped and reported naming the column (the rest of the input
//!   is read: one bad byte does not lose the file);
//! - a JSONL line or JSON-array element that is not valid JSON or not an object is skipped and reported.

use std::collections::HashSet;

use serde_json::Value;

use crate::csv::{CsvEvent, CsvSplitter};
use crate::decode::Decoder;
use crate::error::ImportError;
use crate::json::{ArraySplitter, JsonlSplitter, TextEvent};
use crate::record::RecordData;
use crate::report::SourceReport;
use crate::Format;

/// Reason kinds of the reader (the report groups skips by these).
pub(crate) mod reasons {
    pub const RAGGED: &str = "ragged row (field count differs from the header)";
    pub const NOT_UTF8: &str = "not UTF-8";
    pub const NOT_JSON: &str = "not valid JSON";
    pub const NOT_OBJECT: &str = "not a JSON object";
}

/// Receives what a [`SourceReader`] reads.
pub(crate) trait Consumer {
    /// The CSV/TSV header (after renaming duplicates). Not called for JSON inputs.
    fn header(&mut self, input: &str, header: &[String]) -> Result<(), ImportError>;
    /// One data record.
    fn record(
        &mut self,
        input: &str,
        record: u64,
        line: u64,
        data: RecordData,
    ) -> Result<(), ImportError>;
    /// One record the reader could not use.
    fn skip(
        &mut self,
        input: &str,
        record: u64,
        line: u64,
        field: &str,
        kind: &'static str,
        detail: String,
    ) -> Result<(), ImportError>;
    /// Whether the consumer wants more records (the preview stops early).
    fn wants_more(&self) -> bool {
        true
    }
}

#[derive(Debug)]
enum Splitter {
    Csv(CsvSplitter),
    Jsonl(JsonlSplitter),
    Array(ArraySplitter),
}

#[derive(Debug)]
struct State {
    name: String,
    format: Format,
    header: Option<Vec<String>>,
    records: u64,
    blank_lines: u64,
    renamed: Vec<(String, String)>,
    any_text: bool,
}

/// Reads one input, chunk by chunk.
#[derive(Debug)]
pub(crate) struct SourceReader {
    decoder: Decoder,
    splitter: Splitter,
    decoded: Vec<u8>,
    state: State,
}

impl SourceReader {
    pub fn new(name: &str, format: Format, delimiter: Option<u8>, max_record_bytes: usize) -> Self {
        let splitter = match format {
            Format::Csv => Splitter::Csv(CsvSplitter::new(
                name,
                delimiter.unwrap_or(b','),
                max_record_bytes,
                true,
            )),
            Format::Tsv => Splitter::Csv(CsvSplitter::new(
                name,
                delimiter.unwrap_or(b'\t'),
                max_record_bytes,
                true,
            )),
            Format::Jsonl => Splitter::Jsonl(JsonlSplitter::new(name, max_record_bytes)),
            Format::Json => Splitter::Array(ArraySplitter::new(name, max_record_bytes)),
        };
        SourceReader {
            decoder: Decoder::new(name),
            splitter,
            decoded: Vec::new(),
            state: State {
                name: name.to_string(),
                format,
                header: None,
                records: 0,
                blank_lines: 0,
                renamed: Vec::new(),
                any_text: false,
            },
        }
    }

    /// Reads the next chunk of raw bytes.
    ///
    /// # Errors
    /// Fatal reader errors (encoding, record too large, JSON-array syntax) and consumer errors.
    pub fn push<C: Consumer>(&mut self, bytes: &[u8], consumer: &mut C) -> Result<(), ImportError> {
        self.decoded.clear();
        // On an encoding error the decoder has still appended everything before it: split that first,
        // so that the first problem in input order is the one reported, whatever the chunk sizes.
        let decoded = self.decoder.push(bytes, &mut self.decoded);
        self.split(consumer)?;
        decoded
    }

    fn split<C: Consumer>(&mut self, consumer: &mut C) -> Result<(), ImportError> {
        let state = &mut self.state;
        if !state.any_text {
            state.any_text = self.decoded.iter().any(|b| !b.is_ascii_whitespace());
        }
        match &mut self.splitter {
            Splitter::Csv(s) => s.push(&self.decoded, &mut |ev| state.on_csv(ev, consumer)),
            Splitter::Jsonl(s) => s.push(&self.decoded, &mut |ev| state.on_text(ev, consumer)),
            Splitter::Array(s) => s.push(&self.decoded, &mut |ev| state.on_text(ev, consumer)),
        }
    }

    /// Ends the input and returns its reading summary.
    ///
    /// # Errors
    /// [`ImportError::Empty`], [`ImportError::NoRecords`], a truncated UTF-16 or JSON-array input, an
    /// unclosed CSV quote, and consumer errors.
    pub fn finish<C: Consumer>(&mut self, consumer: &mut C) -> Result<SourceReport, ImportError> {
        self.decoded.clear();
        let decoded = self.decoder.finish(&mut self.decoded);
        self.split(consumer)?;
        decoded?;
        let state = &mut self.state;
        if !state.any_text {
            return Err(ImportError::Empty {
                input: state.name.clone(),
            });
        }
        match &mut self.splitter {
            Splitter::Csv(s) => s.finish(&mut |ev| state.on_csv(ev, consumer))?,
            Splitter::Jsonl(s) => s.finish(&mut |ev| state.on_text(ev, consumer))?,
            Splitter::Array(s) => s.finish(&mut |ev| state.on_text(ev, consumer))?,
        }
        if matches!(state.format, Format::Csv | Format::Tsv) && state.records == 0 {
            return Err(ImportError::NoRecords {
                input: state.name.clone(),
                what: "a header line",
            });
        }
        Ok(self.report())
    }

    /// The reading summary so far.
    pub fn report(&self) -> SourceReport {
        SourceReport {
            name: self.state.name.clone(),
            format: Some(self.state.format),
            encoding: self.decoder.encoding(),
            bytes: self.decoder.bytes_in(),
            records: self.state.records,
            blank_lines: self.state.blank_lines,
            header: self.state.header.clone().unwrap_or_default(),
            renamed_headers: self.state.renamed.clone(),
        }
    }
}

/// Renames duplicate header names with pandas' suffixes: the second `a` becomes `a.1`, the third
/// `a.2`, skipping any name that is already in the header. Returns the names and the renamings.
pub fn dedupe_header(names: Vec<String>) -> (Vec<String>, Vec<(String, String)>) {
    let originals: HashSet<String> = names.iter().cloned().collect();
    let mut taken: HashSet<String> = HashSet::new();
    let mut renamed = Vec::new();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        if taken.insert(name.clone()) {
            out.push(name);
            continue;
        }
        let mut k = 1u64;
        let new = loop {
            let candidate = format!("{name}.{k}");
            if !originals.contains(&candidate) && !taken.contains(&candidate) {
                break candidate;
            }
            k += 1;
        };
        taken.insert(new.clone());
        renamed.push((name, new.clone()));
        out.push(new);
    }
    (out, renamed)
}

impl State {
    fn on_csv<C: Consumer>(&mut self, ev: CsvEvent, consumer: &mut C) -> Result<(), ImportError> {
        let raw = match ev {
            CsvEvent::BlankLine => {
                self.blank_lines += 1;
                return Ok(());
            }
            CsvEvent::Record(raw) => raw,
        };
        let Some(header) = &self.header else {
            let mut names = Vec::with_capacity(raw.ends.len());
            for (i, f) in raw.fields().enumerate() {
                match std::str::from_utf8(f) {
                    Ok(s) => names.push(s.to_string()),
                    Err(e) => {
                        return Err(ImportError::Encoding {
                            input: self.name.clone(),
                            offset: 0,
                            message: format!(
                                "header column {} is not UTF-8 (invalid byte at position {} of the name); \
                                 re-save the file as UTF-8",
                                i + 1,
                                e.valid_up_to()
                            ),
                        })
                    }
                }
            }
            let (names, renamed) = dedupe_header(names);
            self.renamed = renamed;
            consumer.header(&self.name, &names)?;
            self.header = Some(names);
            return Ok(());
        };
        self.records += 1;
        let record = self.records;
        if !consumer.wants_more() {
            return Ok(());
        }
        if raw.ends.len() != header.len() {
            return consumer.skip(
                &self.name,
                record,
                raw.line,
                "(row)",
                reasons::RAGGED,
                format!("{} fields, the header has {}", raw.ends.len(), header.len()),
            );
        }
        let mut fields = Vec::with_capacity(header.len());
        for (i, f) in raw.fields().enumerate() {
            match std::str::from_utf8(f) {
                Ok(s) => fields.push(s.to_string()),
                Err(e) => {
                    let column = header.get(i).cloned().unwrap_or_default();
                    return consumer.skip(
                        &self.name,
                        record,
                        raw.line,
                        &column,
                        reasons::NOT_UTF8,
                        format!(
                            "invalid byte at position {} of the field (is the file Latin-1 / Windows-1252? re-save it as UTF-8)",
                            e.valid_up_to()
                        ),
                    );
                }
            }
        }
        consumer.record(&self.name, record, raw.line, RecordData::Csv(fields))
    }

    fn on_text<C: Consumer>(
        &mut self,
        ev: TextEvent<'_>,
        consumer: &mut C,
    ) -> Result<(), ImportError> {
        let (bytes, line) = match ev {
            TextEvent::BlankLine => {
                self.blank_lines += 1;
                return Ok(());
            }
            TextEvent::Record { bytes, line } => (bytes, line),
        };
        self.records += 1;
        let record = self.records;
        if !consumer.wants_more() {
            return Ok(());
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(v @ Value::Object(_)) => {
                consumer.record(&self.name, record, line, RecordData::Json(v))
            }
            Ok(other) => {
                let kind = match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                };
                let hint = if self.format == Format::Jsonl && kind == "an array" && record == 1 {
                    " (is the file a JSON array? use the json format)"
                } else {
                    ""
                };
                consumer.skip(
                    &self.name,
                    record,
                    line,
                    "(record)",
                    reasons::NOT_OBJECT,
                    format!("found {kind}{hint}"),
                )
            }
            Err(e) => {
                let hint = if self.format == Format::Jsonl
                    && record == 1
                    && bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
                {
                    " (is the file a JSON array? use the json format)"
                } else {
                    ""
                };
                consumer.skip(
                    &self.name,
                    record,
                    line,
                    "(record)",
                    reasons::NOT_JSON,
                    format!("{e}{hint}"),
                )
            }
        }
    }
}
