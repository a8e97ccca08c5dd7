//! [`ImportError`]: every way an import can fail, naming the input, the record (and its line) and the
//! field where the problem is.
//!
//! Problems confined to one record (a ragged CSV row, a JSONL line that is not JSON, a missing facet
//! value) are not errors: the record is skipped and listed in the [`crate::Report`]. They become
//! [`ImportError::Record`] only when the mapping sets `"strict": true`.

use atlas_core::BundleError;

/// An import failure. `input` is the name of the input (a file name); `record` is the 1-based number
/// of the data record in that input (a CSV header is not a record); `line` is the 1-based line where
/// the record starts.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input holds nothing: zero bytes, only a byte-order mark, or only whitespace / blank lines.
    #[error("{input}: the input is empty (no header and no records)")]
    Empty {
        /// Name of the input (a file name).
        input: String,
    },

    /// A CSV/TSV input with a header line but no data record, or a JSON array `[]`.
    #[error("{input}: no data records (only {what})")]
    NoRecords {
        /// Name of the input (a file name).
        input: String,
        /// What the input holds instead, e.g. `a header line`.
        what: &'static str,
    },

    /// A text-encoding problem: UTF-16 with an unpaired surrogate or an odd number of bytes, UTF-32,
    /// or UTF-16 without a byte-order mark. (Invalid UTF-8 inside a record skips that record instead.)
    #[error("{input}: text encoding: {message} (at byte {offset})")]
    Encoding {
        /// Name of the input (a file name).
        input: String,
        /// Byte offset in the input where the problem was found.
        offset: u64,
        /// What is wrong.
        message: String,
    },

    /// One record (a CSV row including its quoted line breaks, a JSONL line, a JSON array element)
    /// is longer than [`crate::Limits::max_record_bytes`].
    #[error(
        "{input}, record {record} (line {line}): the record is longer than the limit of {limit} bytes \
         (a single huge line, or a quote that is never closed); raise the limit (--max-record-bytes) if \
         the record is genuine"
    )]
    RecordTooLarge {
        /// Name of the input (a file name).
        input: String,
        /// 1-based number of the data record in the input (a CSV header is not a record).
        record: u64,
        /// 1-based line where the record starts.
        line: u64,
        /// [`crate::Limits::max_record_bytes`].
        limit: usize,
    },

    /// A CSV/TSV quoted field that is still open at the end of the input.
    #[error(
        "{input}, record {record} (line {line}): a quoted field opened on line {quote_line} is never \
         closed (the input ends inside quotes)"
    )]
    UnclosedQuote {
        /// Name of the input (a file name).
        input: String,
        /// 1-based number of the data record in the input (a CSV header is not a record).
        record: u64,
        /// 1-based line where the record starts.
        line: u64,
        /// 1-based line where the open quote starts.
        quote_line: u64,
    },

    /// The structure of a JSON-array input is broken (not an array, a missing `,`, text after the
    /// closing `]`, the input ends before the array is closed). Elements that are not valid JSON on
    /// their own are skipped and reported instead.
    #[error("{input}, line {line}: {message}")]
    Syntax {
        /// Name of the input (a file name).
        input: String,
        /// 1-based line of the broken structure.
        line: u64,
        /// What is broken.
        message: String,
    },

    /// The mapping file is not valid JSON or does not have the expected shape.
    #[error("mapping: {0}")]
    MappingJson(String),

    /// The mapping is well-formed JSON but breaks a rule (field path names the mapping key).
    #[error("mapping `{field}`: {message}")]
    Mapping {
        /// Path of the mapping key that breaks the rule.
        field: String,
        /// The rule it breaks.
        message: String,
    },

    /// A CSV/TSV column named by the mapping is not in the input's header.
    #[error("{input}: column {column:?} (mapping `{field}`) is not in the header; the columns are: {available}")]
    MissingColumn {
        /// Name of the input (a file name).
        input: String,
        /// The mapping key that names the column.
        field: String,
        /// The column name the mapping gives.
        column: String,
        /// The header's columns, comma-separated.
        available: String,
    },

    /// A record-level problem that is fatal: any skip under `"strict": true`, or an
    /// unmapped Selection value under `"unmapped": "error"`.
    #[error("{input}, record {record} (line {line}), field `{field}`: {message}")]
    Record {
        /// Name of the input (a file name).
        input: String,
        /// 1-based number of the data record in the input (a CSV header is not a record).
        record: u64,
        /// 1-based line where the record starts.
        line: u64,
        /// The mapping field (or input column) where the problem is.
        field: String,
        /// What is wrong with the record.
        message: String,
    },

    /// Under `"strict": true`, a response for a cell that an earlier record already filled.
    #[error(
        "{input}, record {record}: a second response for the cell ({cell}), first given by \
         {first_input} record {first_record} (the mapping is strict)"
    )]
    Duplicate {
        /// Name of the input (a file name).
        input: String,
        /// 1-based number of the data record in the input (a CSV header is not a record).
        record: u64,
        /// Name of the input of the earlier record.
        first_input: String,
        /// 1-based number of the earlier record in its input.
        first_record: u64,
        /// The cell's facet levels, e.g. `model=a, statement=s1`.
        cell: String,
    },

    /// More than 62 distinct (raw, evidence, obtained) Selection values: the bundle's code alphabet
    /// has 62 characters.
    #[error(
        "{input}, record {record} (line {line}): Selection value {raw:?} would be the 63rd distinct \
         value; a bundle holds at most 62. Map the values (`map`, `only`) or set `collapse_unmapped`"
    )]
    TooManyValues {
        /// Name of the input (a file name).
        input: String,
        /// 1-based number of the data record in the input (a CSV header is not a record).
        record: u64,
        /// 1-based line where the record starts.
        line: u64,
        /// The Selection as read, which would be the 63rd distinct value.
        raw: String,
    },

    /// The Cartesian product of the facets' levels exceeds [`crate::Limits::max_cells`].
    #[error(
        "the response matrix would have {cells} cells ({sizes}), more than the limit of {limit}"
    )]
    TooManyCells {
        /// Cells of the matrix (the product of the facets' level counts).
        cells: u128,
        /// The level count of each facet, e.g. `model 3 x statement 200`.
        sizes: String,
        /// [`crate::Limits::max_cells`].
        limit: usize,
    },

    /// Every record was skipped (or there were none with a Selection): no bundle can be built.
    #[error("no response could be imported from {records} record(s); {detail}")]
    NothingImported {
        /// Records read.
        records: u64,
        /// Why none became a response: the number of skipped records and the first skip, or that no
        /// record held a response.
        detail: String,
    },

    /// The log of an evaluation tool (Inspect AI, promptfoo; `crate::logs`) does not have the structure
    /// its reader expects: a truncated or unreadable zip, a member missing, an unsupported compression
    /// method, a member or file that is not valid JSON, a field missing or of the wrong type.
    #[error("{input}, {location}, field `{field}`: {message}")]
    Log {
        /// Name of the input (a file name).
        input: String,
        /// Where in the log: a zip member (`member samples/1_epoch_1.json`), a record
        /// (`samples[3]`, `results.results[12]`) or `(file)`.
        location: String,
        /// The field of the tool's structure (`eval.model`, `scores`), or `(document)`.
        field: String,
        /// What is wrong.
        message: String,
    },

    /// A read error of the underlying stream.
    #[error("{input}: read error: {message}")]
    Io {
        /// Name of the input (a file name).
        input: String,
        /// The stream's error message.
        message: String,
    },

    /// A tool log format this build has no reader for (`atlas_import::logs`).
    #[error("this build has no {format} reader")]
    NoLogReader {
        /// The format's name (`inspect`, `promptfoo`, `parquet`).
        format: &'static str,
    },

    /// The assembled bundle was refused by `atlas_core` (an importer bug; reported, never panics).
    #[error("the imported bundle is invalid: {0}")]
    Bundle(#[from] BundleError),
}
