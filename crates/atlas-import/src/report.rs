//! The validation report of an import: what was read, what was skipped and why, duplicates, unmapped
//! values, and the cells per Selection value. Nothing is dropped without a line here.

use std::collections::BTreeMap;
use std::fmt;

use atlas_core::bundle::Obtained;
use serde::{Deserialize, Serialize};

use crate::decode::TextEncoding;
use crate::Format;

/// How many examples of each kind the report lists (counts are always complete).
pub const MAX_EXAMPLES: usize = 100;
/// How many distinct unmapped values per field the report counts one by one; the rest are summed in
/// `other_values`.
pub const MAX_DISTINCT_UNMAPPED: usize = 1000;

/// One input's reading summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceReport {
    /// Name of the input (a file name).
    pub name: String,
    /// The format it was read as.
    pub format: Option<Format>,
    /// The text encoding detected (byte-order mark or UTF-8).
    pub encoding: Option<TextEncoding>,
    /// Bytes read, before decoding.
    pub bytes: u64,
    /// Data records read (a CSV header is not a record; blank lines are not records).
    pub records: u64,
    /// Blank lines skipped (not records).
    pub blank_lines: u64,
    /// CSV/TSV header as used by the mapping (after renaming duplicates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header: Vec<String>,
    /// Duplicate header names and what they were renamed to: `[original, renamed]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_headers: Vec<(String, String)>,
}

/// A skipped record or value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skip {
    /// Name of the input (a file name).
    pub input: String,
    /// 1-based number of the data record in the input.
    pub record: u64,
    /// 1-based line where the record starts.
    pub line: u64,
    /// The column / path (or mapping key) concerned.
    pub field: String,
    /// Why it was skipped, with the value.
    pub reason: String,
}

/// A record that fills a cell another record filled before; the first is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duplicate {
    /// Name of the input of the dropped record.
    pub input: String,
    /// 1-based number of the dropped record in its input.
    pub record: u64,
    /// Name of the input of the kept (earlier) record.
    pub first_input: String,
    /// 1-based number of the kept record in its input.
    pub first_record: u64,
    /// The cell's facet levels, `facet=level` joined by `, `.
    pub cell: String,
}

/// Cells per Selection dictionary entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueCount {
    /// The Selection as read.
    pub raw: String,
    /// Mapped bias evidence: `1`, `0`, or `None` = Abstain.
    pub evidence: Option<u8>,
    /// How the Selection was obtained.
    pub obtained: Obtained,
    /// Cells holding this value.
    pub cells: u64,
}

/// Counts of values that a map did not list, for one field (as read, before duplicates are dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnmappedCounts {
    /// Occurrences of each unmapped value, for the first [`MAX_DISTINCT_UNMAPPED`] distinct ones.
    pub values: BTreeMap<String, u64>,
    /// Occurrences of values beyond the first [`MAX_DISTINCT_UNMAPPED`] distinct ones.
    pub other_values: u64,
}

/// Level attributes that differ between records of the same level (the first value is kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttributeConflict {
    /// Facet id of the level.
    pub facet: String,
    /// The attribute whose values differ.
    pub attribute: String,
    /// Records whose value differed from the kept one.
    pub records: u64,
    /// The first level where it happened.
    pub first_level: String,
}

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// One summary per input, in reading order.
    pub sources: Vec<SourceReport>,
    /// Data records read, all inputs.
    pub records: u64,
    /// Records that gave at least one response.
    pub records_imported: u64,
    /// Records skipped as a whole (not UTF-8, ragged, not JSON, missing facet value, …).
    pub records_skipped: u64,
    /// Values skipped inside a record that was otherwise imported (e.g. a Selection that is an
    /// object), and Rationales / labels that could not be stored.
    pub values_skipped: u64,
    /// Skips by reason (the reason text without the value).
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// The first [`MAX_EXAMPLES`] skips.
    pub skipped: Vec<Skip>,
    /// Responses that fell on a cell already filled (dropped; the first is kept).
    pub duplicates: u64,
    /// The first [`MAX_EXAMPLES`] duplicates.
    pub duplicate_examples: Vec<Duplicate>,
    /// Responses read (before duplicates are dropped).
    pub responses_read: u64,
    /// Selection arrays that were empty (a record with no repeats for that level).
    pub empty_arrays: u64,
    /// Levels per facet, in axis order.
    pub levels: Vec<(String, usize)>,
    /// Cells of the response matrix (product of the level counts).
    pub cells: u64,
    /// Cells holding a response.
    pub responses: u64,
    /// Cells without a response (`-`).
    pub no_response: u64,
    /// Response cells with bias evidence 1.
    pub evidence_1: u64,
    /// Response cells with bias evidence 0.
    pub evidence_0: u64,
    /// Response cells that are Abstain (evidence null).
    pub abstain: u64,
    /// Cells per Selection dictionary entry, in dictionary order.
    pub values: Vec<ValueCount>,
    /// Unmapped values per field (`selection.field`, `selection.evidence_field`, `judges[i].field`).
    pub unmapped: BTreeMap<String, UnmappedCounts>,
    /// Rationale texts stored.
    pub texts: u64,
    /// Cells with a likelihood readout (`responses.likelihood`).
    pub likelihood_readouts: u64,
    /// Of those, cells with a likelihood readout and no Selection (`-`).
    pub likelihood_only: u64,
    /// Level attributes that differ between records of the same level.
    pub attribute_conflicts: Vec<AttributeConflict>,
}

impl Report {
    pub(crate) fn add_unmapped(&mut self, field: &str, value: &str) {
        let entry = self.unmapped.entry(field.to_string()).or_default();
        if let Some(n) = entry.values.get_mut(value) {
            *n += 1;
        } else if entry.values.len() < MAX_DISTINCT_UNMAPPED {
            entry.values.insert(value.to_string(), 1);
        } else {
            entry.other_values += 1;
        }
    }
}

fn evidence_text(e: Option<u8>) -> String {
    e.map_or_else(|| "Abstain".to_string(), |v| v.to_string())
}

fn obtained_text(o: Obtained) -> &'static str {
    match o {
        Obtained::Regex => "regex",
        Obtained::Fallback => "fallback",
        Obtained::ParserFailure => "parser_failure",
        Obtained::Refusal => "refusal",
    }
}

impl fmt::Display for Report {
    /// A plain-text summary for the command line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.sources {
            writeln!(
                f,
                "input {}: {} records, {} blank lines, {} bytes{}",
                s.name,
                s.records,
                s.blank_lines,
                s.bytes,
                s.encoding
                    .map(|e| format!(", encoding {e:?}"))
                    .unwrap_or_default()
            )?;
            for (from, to) in &s.renamed_headers {
                writeln!(f, "  duplicate header {from:?} renamed to {to:?}")?;
            }
        }
        writeln!(
            f,
            "records: {} read, {} imported, {} skipped; {} values skipped; {} duplicates dropped (first kept)",
            self.records,
            self.records_imported,
            self.records_skipped,
            self.values_skipped,
            self.duplicates
        )?;
        let levels: Vec<String> = self
            .levels
            .iter()
            .map(|(id, n)| format!("{id} {n}"))
            .collect();
        writeln!(
            f,
            "matrix: {} = {} cells; {} responses, {} without response (-)",
            levels.join(" x "),
            self.cells,
            self.responses,
            self.no_response
        )?;
        writeln!(
            f,
            "evidence: 1 = {}, 0 = {}, Abstain = {}; Rationale texts: {}",
            self.evidence_1, self.evidence_0, self.abstain, self.texts
        )?;
        if self.likelihood_readouts > 0 {
            writeln!(
                f,
                "likelihood readouts: {} cells ({} of them without a Selection)",
                self.likelihood_readouts, self.likelihood_only
            )?;
        }
        writeln!(f, "Selection values (cells):")?;
        for v in &self.values {
            writeln!(
                f,
                "  {:>10}  {:<24} -> {:<7} {}",
                v.cells,
                format!("{:?}", v.raw),
                evidence_text(v.evidence),
                obtained_text(v.obtained)
            )?;
        }
        for (field, u) in &self.unmapped {
            let total: u64 = u.values.values().sum::<u64>() + u.other_values;
            writeln!(f, "unmapped values of {field} ({total}):")?;
            let mut sorted: Vec<_> = u.values.iter().collect();
            sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (value, n) in sorted.iter().take(20) {
                writeln!(f, "  {n:>10}  {value:?}")?;
            }
            if sorted.len() > 20 || u.other_values > 0 {
                writeln!(
                    f,
                    "  … {} more distinct values",
                    sorted.len().saturating_sub(20)
                )?;
            }
        }
        if !self.skipped_by_reason.is_empty() {
            writeln!(f, "skipped, by reason:")?;
            for (reason, n) in &self.skipped_by_reason {
                writeln!(f, "  {n:>10}  {reason}")?;
            }
            for s in self.skipped.iter().take(10) {
                writeln!(
                    f,
                    "  e.g. {} record {} (line {}), `{}`: {}",
                    s.input, s.record, s.line, s.field, s.reason
                )?;
            }
        }
        for d in self.duplicate_examples.iter().take(10) {
            writeln!(
                f,
                "duplicate: {} record {} repeats {} record {} ({})",
                d.input, d.record, d.first_input, d.first_record, d.cell
            )?;
        }
        for c in &self.attribute_conflicts {
            writeln!(
                f,
                "attribute {}.{}: {} records differ from the first value (first at level {:?}; first kept)",
                c.facet, c.attribute, c.records, c.first_level
            )?;
        }
        Ok(())
    }
}
