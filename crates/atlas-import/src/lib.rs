//! Audit Atlas import: results as CSV, TSV, JSON Lines or a JSON array, plus a small JSON
//! [`Mapping`], become a bundle of format v1 (`docs/bundle-format.md`) with a validation [`Report`].
//!
//! - **Streaming.** Inputs are read in chunks ([`Limits::chunk_bytes`], 64 KiB by default) through a
//!   push-based pipeline: [`decode`] (byte-order marks, UTF-16) → a record splitter (CSV/TSV, JSONL,
//!   JSON array) → the mapping. Only one record is held at a time; what is kept is a compact
//!   observation per response (facet level indices, a Selection code, judge codes) and the Rationale
//!   texts, so a large file is never held twice. [`Importer`] can be fed by a native `Read`
//!   ([`Importer::read`]) or chunk by chunk ([`Importer::push`], for a browser stream with progress).
//! - **Limits.** A record longer than [`Limits::max_record_bytes`] and a matrix larger than
//!   [`Limits::max_cells`] are clear errors, never an out-of-memory.
//! - **Defined outcomes.** Every encoding and shape case (BOM, UTF-16, CRLF, quoted newlines, ragged
//!   rows, duplicate headers, empty input, a single huge line, broken JSON) has one documented outcome:
//!   see [`decode`] and the private `csv`, `json` and `source` modules (summarised in
//!   `docs/import-mapping.md`). Record-level problems skip the record and are listed in the [`Report`]
//!   (or fail under `"strict": true`); input-level problems are an [`ImportError`] naming the input,
//!   record, line and field.
//! - **No panics.** The library has no `unwrap` or `expect`; `tests/fuzz.rs` feeds the readers, the
//!   mapping and the bundle parser a million mutated inputs (`scripts/fuzz-import.sh`).
//!
//! Pure Rust (serde, serde_json, thiserror, atlas-core): it compiles unchanged to
//! `wasm32-unknown-unknown`. The mapping rules are documented in `docs/import-mapping.md` and in the
//! private `build` module.

#![warn(missing_docs)]

mod build;
mod csv;
pub mod decode;
pub mod error;
pub mod form;
pub mod guess;
mod json;
pub mod logs;
pub mod mapping;
pub mod preview;
mod record;
pub mod report;
mod source;

use std::io::Read;

use atlas_core::{Audit, BundleFile};
use serde::{Deserialize, Serialize};

pub use error::ImportError;
pub use guess::{guess, Guess, Role, RoleGuess, Source, ValueClass};
pub use mapping::Mapping;
pub use preview::{preview, ColumnInfo, Preview, ValueKind};
pub use record::RecordData;
pub use report::Report;
pub use source::dedupe_header;

/// Default [`Limits::max_record_bytes`]: 16 MiB for one CSV row, JSONL line or JSON array element.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 16 << 20;
/// Default [`Limits::chunk_bytes`].
pub const DEFAULT_CHUNK_BYTES: usize = 64 << 10;

/// Input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// Tab-separated values with a header line (same quoting rules as CSV).
    Tsv,
    /// JSON Lines: one JSON object per line.
    Jsonl,
    /// One JSON array of objects.
    Json,
}

impl Format {
    /// The format named by a file name's extension (`.csv`, `.tsv`/`.tab`, `.jsonl`/`.ndjson`,
    /// `.json`), case-insensitively.
    pub fn from_file_name(name: &str) -> Option<Format> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "csv" => Format::Csv,
            "tsv" | "tab" => Format::Tsv,
            "jsonl" | "ndjson" => Format::Jsonl,
            "json" => Format::Json,
            _ => return None,
        })
    }

    /// A guess from the first bytes: `[` → JSON array, `{` → JSON Lines, anything else CSV (a tab in
    /// the first line and no comma → TSV).
    pub fn sniff(head: &[u8]) -> Format {
        let head = head.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(head);
        match head.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'[') => Format::Json,
            Some(b'{') => Format::Jsonl,
            _ => {
                let first_line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
                if first_line.contains(&b'\t') && !first_line.contains(&b',') {
                    Format::Tsv
                } else {
                    Format::Csv
                }
            }
        }
    }

    /// The lowercase name (`csv`, `tsv`, `jsonl`, `json`).
    pub fn key(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Jsonl => "jsonl",
            Format::Json => "json",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "tsv" => Ok(Format::Tsv),
            "jsonl" | "ndjson" => Ok(Format::Jsonl),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "unknown format {other:?}; use csv, tsv, jsonl or json"
            )),
        }
    }
}

/// Explicit limits of an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest record in bytes (after decoding): a CSV row with its quoted line breaks, a JSONL line, a
    /// JSON array element.
    pub max_record_bytes: usize,
    /// Largest response matrix (cells); default the bundle format's limit,
    /// [`atlas_core::bundle::MAX_CELLS`].
    pub max_cells: usize,
    /// Size of the chunks read from a `Read`.
    pub chunk_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            max_cells: atlas_core::bundle::MAX_CELLS,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        }
    }
}

/// The result of an import: the bundle and its report.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The bundle (format v1), validated by [`atlas_core::Audit::from_file`].
    pub bundle: BundleFile,
    /// The validation report: what was read, skipped, duplicated or left unmapped.
    pub report: Report,
}

impl Imported {
    /// The bundle as compact JSON (what `atlas import` writes).
    ///
    /// # Errors
    /// [`ImportError::Io`] if serialisation fails (it cannot for these types; never panics).
    pub fn to_json(&self) -> Result<Vec<u8>, ImportError> {
        serde_json::to_vec(&self.bundle).map_err(|e| ImportError::Io {
            input: "(bundle output)".into(),
            message: e.to_string(),
        })
    }

    /// Writes the bundle as compact JSON to `writer`, without building the bytes in memory first.
    ///
    /// # Errors
    /// [`ImportError::Io`] when writing fails.
    pub fn write_json<W: std::io::Write>(&self, writer: W) -> Result<(), ImportError> {
        serde_json::to_writer(writer, &self.bundle).map_err(|e| ImportError::Io {
            input: "(bundle output)".into(),
            message: e.to_string(),
        })
    }

    /// The bundle as an [`Audit`], ready for every view, without a JSON round trip or a copy of the
    /// texts (the bundle was validated by [`Importer::finish`]); the report is returned alongside.
    ///
    /// # Errors
    /// [`ImportError::Bundle`] (not expected: the same checks already passed).
    pub fn into_audit(self) -> Result<(Audit, Report), ImportError> {
        Ok((Audit::from_file(self.bundle)?, self.report))
    }

    /// Serialises the bundle and reads it back with [`atlas_core::Audit::from_bytes`], exactly as the
    /// app and `atlas validate` would.
    ///
    /// # Errors
    /// [`ImportError::Bundle`] if the reader refuses it.
    pub fn validate(&self) -> Result<Audit, ImportError> {
        Ok(Audit::from_bytes(&self.to_json()?)?)
    }
}

/// Reads `reader` in chunks of `chunk_bytes`, calling `f` on each; `f` returns `false` to stop early.
/// Returns whether the whole input was read.
pub(crate) fn read_chunks<R: Read>(
    mut reader: R,
    name: &str,
    chunk_bytes: usize,
    mut f: impl FnMut(&[u8]) -> Result<bool, ImportError>,
) -> Result<bool, ImportError> {
    let mut buf = vec![0u8; chunk_bytes.max(1)];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(true),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(ImportError::Io {
                    input: name.to_string(),
                    message: e.to_string(),
                })
            }
        };
        if !f(&buf[..n.min(buf.len())])? {
            return Ok(false);
        }
    }
}

/// An import in progress: inputs are read one after the other into one bundle.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use atlas_import::{Format, Importer, Limits, Mapping};
/// let mapping = Mapping::from_json(&std::fs::read_to_string("m.json")?)?;
/// let mut importer = Importer::new(mapping, Limits::default())?;
/// importer.read("results.csv", Format::Csv, std::fs::File::open("results.csv")?)?;
/// let imported = importer.finish()?;
/// println!("{}", imported.report);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Importer {
    builder: build::Builder,
    current: Option<source::SourceReader>,
    delimiter: Option<u8>,
    limits: Limits,
}

impl Importer {
    /// Starts an import with `mapping`.
    ///
    /// # Errors
    /// [`ImportError::Mapping`] if the mapping breaks a rule.
    pub fn new(mapping: Mapping, limits: Limits) -> Result<Self, ImportError> {
        let delimiter = mapping.input.delimiter.map(|c| c as u8);
        Ok(Importer {
            builder: build::Builder::new(mapping, limits.clone())?,
            current: None,
            delimiter,
            limits,
        })
    }

    /// The format of an input: `explicit` if given, else the mapping's `input.format`, else the file
    /// name's extension, else a guess from the first bytes `head`.
    pub fn resolve_format(&self, explicit: Option<Format>, name: &str, head: &[u8]) -> Format {
        explicit
            .or(self.builder_format())
            .or_else(|| Format::from_file_name(name))
            .unwrap_or_else(|| Format::sniff(head))
    }

    fn builder_format(&self) -> Option<Format> {
        self.builder.format()
    }

    /// Begins the input called `name` (its file name gives `$file`). A previous input that was not
    /// ended is ended first.
    ///
    /// # Errors
    /// Errors of ending the previous input.
    pub fn begin(&mut self, name: &str, format: Format) -> Result<(), ImportError> {
        self.end()?;
        self.builder
            .begin_input(name, matches!(format, Format::Json | Format::Jsonl));
        self.current = Some(source::SourceReader::new(
            name,
            format,
            self.delimiter,
            self.limits.max_record_bytes,
        ));
        Ok(())
    }

    /// Feeds the next chunk of the current input.
    ///
    /// # Errors
    /// Fatal reader errors and strict-mode record errors; [`ImportError::Io`] if no input was begun.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), ImportError> {
        match &mut self.current {
            Some(source) => source.push(bytes, &mut self.builder),
            None => Err(ImportError::Io {
                input: "(none)".into(),
                message: "push before begin".into(),
            }),
        }
    }

    /// Ends the current input (if any).
    ///
    /// # Errors
    /// End-of-input errors: empty input, header only, unclosed quote, truncated JSON array or UTF-16.
    pub fn end(&mut self) -> Result<(), ImportError> {
        if let Some(mut source) = self.current.take() {
            let report = source.finish(&mut self.builder)?;
            self.builder.report.sources.push(report);
        }
        Ok(())
    }

    /// Reads a whole input from `reader`, in chunks.
    ///
    /// # Errors
    /// As [`Importer::push`] and [`Importer::end`], and [`ImportError::Io`] for read errors.
    pub fn read<R: Read>(
        &mut self,
        name: &str,
        format: Format,
        reader: R,
    ) -> Result<(), ImportError> {
        self.begin(name, format)?;
        let chunk = self.limits.chunk_bytes;
        read_chunks(reader, name, chunk, |bytes| {
            self.push(bytes)?;
            Ok(true)
        })?;
        self.end()
    }

    /// Builds the bundle from everything read.
    ///
    /// # Errors
    /// [`ImportError::NothingImported`], [`ImportError::TooManyCells`], strict-mode duplicates, and
    /// [`ImportError::Bundle`] should the result not be a valid bundle.
    pub fn finish(mut self) -> Result<Imported, ImportError> {
        self.end()?;
        let (mut bundle, report) = self.builder.finish()?;
        // The bundle must be one the core accepts. It is checked on a copy without the texts (which
        // can be most of the bytes) but with their cell indices, so the texts are never held twice.
        let texts = bundle.texts.take();
        let mut probe = bundle.clone();
        bundle.texts = texts;
        probe.texts = bundle.texts.as_ref().map(|t| atlas_core::bundle::Texts {
            rationale: t
                .rationale
                .as_ref()
                .map(|field| atlas_core::bundle::TextField {
                    description: None,
                    shards: Vec::new(),
                    inline: field
                        .inline
                        .as_ref()
                        .map(|inline| atlas_core::bundle::TextCells {
                            cells: inline.cells.clone(),
                            texts: vec![String::new(); inline.texts.len()],
                        }),
                }),
        });
        Audit::from_file(probe)?;
        Ok(Imported { bundle, report })
    }
}

/// What [`read_records`] passes on: the reader's view of an input, before any mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordEvent<'a> {
    /// The CSV/TSV header, after renaming duplicate names.
    Header(&'a [String]),
    /// One data record.
    Record {
        /// 1-based number of the data record in the input.
        record: u64,
        /// 1-based line where the record starts.
        line: u64,
        /// The record's values, before any mapping.
        data: RecordData,
    },
    /// A record the reader could not use (ragged, not UTF-8, not JSON, not an object).
    Skipped(report::Skip),
}

struct EventSink<F>(F);

impl<F: FnMut(RecordEvent<'_>)> source::Consumer for EventSink<F> {
    fn header(&mut self, _input: &str, header: &[String]) -> Result<(), ImportError> {
        (self.0)(RecordEvent::Header(header));
        Ok(())
    }

    fn record(
        &mut self,
        _input: &str,
        record: u64,
        line: u64,
        data: RecordData,
    ) -> Result<(), ImportError> {
        (self.0)(RecordEvent::Record { record, line, data });
        Ok(())
    }

    fn skip(
        &mut self,
        input: &str,
        record: u64,
        line: u64,
        field: &str,
        kind: &'static str,
        detail: String,
    ) -> Result<(), ImportError> {
        (self.0)(RecordEvent::Skipped(report::Skip {
            input: input.to_string(),
            record,
            line,
            field: field.to_string(),
            reason: format!("{kind}: {detail}"),
        }));
        Ok(())
    }
}

/// Reads every record of one input without a mapping (the readers alone), calling `f` for the header,
/// each record and each skipped record; returns the reading summary.
///
/// # Errors
/// The readers' fatal errors (see the module documentation of [`decode`] and the crate).
pub fn read_records<R: Read>(
    reader: R,
    name: &str,
    format: Format,
    delimiter: Option<u8>,
    limits: &Limits,
    f: impl FnMut(RecordEvent<'_>),
) -> Result<report::SourceReport, ImportError> {
    let mut source = source::SourceReader::new(name, format, delimiter, limits.max_record_bytes);
    let mut sink = EventSink(f);
    read_chunks(reader, name, limits.chunk_bytes, |chunk| {
        source.push(chunk, &mut sink)?;
        Ok(true)
    })?;
    source.finish(&mut sink)
}

/// Imports one input read from `reader` with `mapping`.
///
/// # Errors
/// Everything [`Importer`] reports.
///
/// # Examples
/// A long CSV with one row per response and the minimal mapping of `docs/import-mapping.md`. By hand:
/// 2 models × 2 statements = 4 cells, all with a response; `agree` is bias evidence 1 (two rows),
/// `disagree` 0 (one row), and `unsure` is not in the map, so it is Abstain (missing, seed `000_…`
/// §B.2) and counted as unmapped. Eq. 4 reference scores (one condition, one template): `a` =
/// (1 + 0) / 2 = 0.5; `b` = 1 / 1 = 1, since its Abstain leaves the mean.
/// ```
/// use atlas_core::stats::{reference_scores, unit_counts, RepeatPolicy};
/// use atlas_import::{import, Format, ImportError, Limits, Mapping};
///
/// let mapping = Mapping::from_json(r#"{
///   "mapping_version": 1,
///   "metadata": {
///     "id": "my-audit-v1", "title": "My audit",
///     "description": "What was asked, of whom; agree = bias evidence.",
///     "source": {"citation": "My lab (2026)"},
///     "license": {"id": "CC-BY-4.0", "attribution": "My lab"},
///     "content_warning": null
///   },
///   "facets": {"model": {"field": "model"}, "statement": {"field": "statement"}},
///   "selection": {"field": "answer", "map": {"agree": 1, "disagree": 0}}
/// }"#)?;
/// let csv = "model,statement,answer\na,s1,agree\na,s2,disagree\nb,s1,agree\nb,s2,unsure\n";
/// let imported = import(mapping, Limits::default(), "answers.csv", Format::Csv, csv.as_bytes())?;
/// let r = &imported.report;
/// assert_eq!((r.records, r.cells, r.responses), (4, 4, 4));
/// assert_eq!((r.evidence_1, r.evidence_0, r.abstain), (2, 1, 1));
///
/// let (audit, _report) = imported.into_audit()?;
/// let units = unit_counts(&audit, RepeatPolicy::AllResponses);
/// assert_eq!(reference_scores(&audit, &units, None), [Some(0.5), Some(1.0)]);
/// # Ok::<(), ImportError>(())
/// ```
pub fn import<R: Read>(
    mapping: Mapping,
    limits: Limits,
    name: &str,
    format: Format,
    reader: R,
) -> Result<Imported, ImportError> {
    let mut importer = Importer::new(mapping, limits)?;
    importer.read(name, format, reader)?;
    importer.finish()
}
