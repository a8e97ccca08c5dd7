//! Errors raised while reading a bundle or a text shard.

use thiserror::Error;

/// Everything that can be wrong with a bundle (or a text shard) handed to
/// [`crate::bundle::Audit::from_json`] / [`crate::bundle::TextShard::from_json`].
///
/// Every variant names *what* is wrong and *where*: a JSON line/column for syntax errors, a field path
/// such as `facets[2].levels[17].id` for type errors, and a record (cell) index plus the facet levels of
/// that cell for errors inside the dense response columns. Reading never panics on any input; the
/// caller keeps whatever it had loaded before.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BundleError {
    /// The input is empty or only whitespace.
    #[error("the bundle is empty: no JSON at all")]
    EmptyInput,
    /// The JSON ends before the document is complete (a truncated download or file).
    #[error("the JSON is truncated: it ends early at line {line}, column {column}")]
    Truncated {
        /// Line (1-based) where the JSON ends.
        line: usize,
        /// Column (1-based) where the JSON ends.
        column: usize,
    },
    /// The text is not JSON (this includes `NaN` and `Infinity`, which JSON does not allow).
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// Line (1-based) of the first invalid character.
        line: usize,
        /// Column (1-based) of the first invalid character.
        column: usize,
        /// The JSON parser's message, without its position.
        message: String,
    },
    /// A field is missing, unknown, or has the wrong type.
    #[error("field `{path}`: {message}")]
    Field {
        /// Path of the field, e.g. `facets[2].levels[17].id` (`(top level)` for the document).
        path: String,
        /// What is wrong with it (the deserializer's message).
        message: String,
    },
    /// `format` is not `audit-atlas-bundle` (or `audit-atlas-text-shard` for a shard).
    #[error("`format` is {found:?}; expected {expected:?}")]
    WrongFormat {
        /// The `format` value read.
        found: String,
        /// The `format` value this reader expects.
        expected: &'static str,
    },
    /// A version this build cannot read.
    #[error("unsupported format version {found}; this build reads version {supported}")]
    UnsupportedVersion {
        /// The `version` value read.
        found: u64,
        /// The version this build reads ([`crate::bundle::FORMAT_VERSION`]).
        supported: u32,
    },
    /// `facets` is an empty list.
    #[error("the bundle declares no facets (an empty bundle)")]
    NoFacets,
    /// A facet with zero levels, which would make the response matrix empty.
    #[error("`facets[{index}]` ({id:?}) has no levels, so the response matrix is empty")]
    EmptyFacet {
        /// Position of the facet in `facets`.
        index: usize,
        /// The facet's id.
        id: String,
    },
    /// A facet every bundle must declare (`model`, `statement`) is absent.
    #[error("the required facet {0:?} is not declared in `facets`")]
    MissingFacet(String),
    /// Two records of one list share an id.
    #[error("duplicate id {id:?} in `{field}`: records {first} and {second}")]
    DuplicateId {
        /// Path of the list, e.g. `facets[1].levels`.
        field: String,
        /// The repeated id.
        id: String,
        /// Position of the first record with the id.
        first: usize,
        /// Position of the second record with the id.
        second: usize,
    },
    /// A rule of the format is broken by one field (the message says which rule).
    #[error("`{field}`: {message}")]
    Invalid {
        /// Path of the field that breaks the rule.
        field: String,
        /// The rule it breaks.
        message: String,
    },
    /// A dense column does not have one entry per cell of the response matrix.
    #[error("`{field}` has {found} entries but the response matrix has {expected} cells (the product of the axis sizes)")]
    LengthMismatch {
        /// Path of the column, e.g. `responses.selection.codes`.
        field: String,
        /// Cells of the response matrix (the product of the axis sizes).
        expected: usize,
        /// Entries of the column.
        found: usize,
    },
    /// A character in a dense column that is not a code of that column.
    #[error("`{field}`, record {index} ({cell}): unknown code {code:?}")]
    UnknownCode {
        /// Path of the column.
        field: String,
        /// Record (cell) index of the character.
        index: usize,
        /// The character read.
        code: char,
        /// The facet levels of the cell, e.g. `model=a, statement=s3`.
        cell: String,
    },
    /// An index (a code or a cell number) that points past the end of what it indexes.
    #[error("`{field}`, record {index}: {value} is out of range (must be below {bound})")]
    IndexOutOfRange {
        /// Path of the field holding the index.
        field: String,
        /// Record index of the entry within that field.
        index: usize,
        /// The index read.
        value: u64,
        /// The exclusive upper bound it must stay below.
        bound: u64,
    },
    /// More cells than this build holds in memory.
    #[error("the response matrix has {cells} cells, more than the limit of {limit}")]
    TooLarge {
        /// Cells the axes declare (the product of the axis sizes).
        cells: u128,
        /// [`crate::bundle::MAX_CELLS`].
        limit: usize,
    },
}

impl BundleError {
    /// Converts a `serde_path_to_error` failure into the variant that says the most.
    pub(crate) fn from_serde(err: serde_path_to_error::Error<serde_json::Error>) -> Self {
        let path = err.path().to_string();
        let inner = err.into_inner();
        match inner.classify() {
            serde_json::error::Category::Eof => BundleError::Truncated {
                line: inner.line(),
                column: inner.column(),
            },
            serde_json::error::Category::Syntax | serde_json::error::Category::Io => {
                BundleError::Syntax {
                    line: inner.line(),
                    column: inner.column(),
                    message: strip_position(&inner.to_string()),
                }
            }
            serde_json::error::Category::Data => BundleError::Field {
                path: if path.is_empty() || path == "." {
                    "(top level)".to_string()
                } else {
                    path
                },
                message: inner.to_string(),
            },
        }
    }
}

/// serde_json appends " at line L column C" to its messages; the variant carries them separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(pos) => message[..pos].to_string(),
        None => message.to_string(),
    }
}
