//! A preview of an input: its first records and the detected type of each column (CSV/TSV header
//! names, or the leaf paths of the JSON objects, e.g. `model_responses.response_a.extracted_answer`).
//! It reads only as much of the input as the requested rows need.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Serialize;
use serde_json::Value;

use crate::error::ImportError;
use crate::record::RecordData;
use crate::report::{Skip, SourceReport, MAX_EXAMPLES};
use crate::source::{Consumer, SourceReader};
use crate::{read_chunks, Format, Limits};

/// The kind of a value. For CSV text: empty, `true`/`false`, an integer, a number, or text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// `null`, a missing key, or `""`.
    Empty,
    /// `true` or `false`.
    Boolean,
    /// An integer, e.g. `3`, `-1`.
    Integer,
    /// A number that is not an integer, e.g. `0.5`, `1e-3`.
    Number,
    /// Any other text.
    Text,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
    /// Several non-empty kinds in one column.
    Mixed,
}

/// One column (or JSON leaf path) of the preview.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnInfo {
    /// The name to use in a mapping.
    pub name: String,
    /// The kind of its non-empty values: one kind, `number` for integers mixed with numbers, `mixed`
    /// otherwise, `empty` when every value is empty.
    pub detected: ValueKind,
    /// Values per kind over the previewed records.
    pub kinds: BTreeMap<ValueKind, usize>,
    /// Up to three distinct non-empty example values (shortened).
    pub examples: Vec<String>,
    /// Distinct non-empty scalar values with their counts over the previewed records, most frequent
    /// first (ties in first-seen order), exactly as a mapping's `map` keys match them (a JSON number or
    /// boolean as its JSON text). For an array column: the scalar elements of its arrays. At most
    /// [`MAX_VALUE_COUNTS`] distinct values of at most [`MAX_VALUE_CHARS`] characters are listed;
    /// `distinct` counts them all. Used by [`mod@crate::guess`] and the app's value-mapping table.
    pub values: Vec<(String, usize)>,
    /// Distinct non-empty values over the previewed records (an array counts as one value).
    pub distinct: usize,
    /// Non-empty values over the previewed records.
    pub non_empty: usize,
    /// Longest value in characters (an array: its longest scalar element).
    pub max_chars: usize,
    /// Shortest and longest array, for array columns (`None` when no value was an array).
    pub array_len: Option<(usize, usize)>,
}

/// At most this many distinct values per column are counted in [`ColumnInfo::values`].
pub const MAX_VALUE_COUNTS: usize = 64;
/// Longer values are not listed in [`ColumnInfo::values`] (they are free text, not answer codes).
pub const MAX_VALUE_CHARS: usize = 64;

/// The first records of an input with their detected column types.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preview {
    /// The reading summary of the previewed part of the input.
    pub source: SourceReport,
    /// One entry per column (CSV/TSV header order) or JSON leaf path (first-seen order).
    pub columns: Vec<ColumnInfo>,
    /// The previewed records, one value per column (shortened; `""` where absent).
    pub rows: Vec<Vec<String>>,
    /// Records the reader could not use (ragged, not UTF-8, not JSON), among those previewed.
    pub skipped: Vec<Skip>,
}

const EXAMPLE_CHARS: usize = 60;

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(EXAMPLE_CHARS).collect();
    if s.chars().nth(EXAMPLE_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// The kind of a CSV field.
pub fn text_kind(s: &str) -> ValueKind {
    let t = s.trim();
    if t.is_empty() {
        ValueKind::Empty
    } else if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
        ValueKind::Boolean
    } else if t.parse::<i64>().is_ok() {
        ValueKind::Integer
    } else if t.parse::<f64>().is_ok_and(f64::is_finite) {
        ValueKind::Number
    } else {
        ValueKind::Text
    }
}

fn json_kind(v: &Value) -> ValueKind {
    match v {
        Value::Null => ValueKind::Empty,
        Value::Bool(_) => ValueKind::Boolean,
        Value::Number(n) if n.is_i64() || n.is_u64() => ValueKind::Integer,
        Value::Number(_) => ValueKind::Number,
        Value::String(s) if s.is_empty() => ValueKind::Empty,
        Value::String(_) => ValueKind::Text,
        Value::Array(_) => ValueKind::Array,
        Value::Object(_) => ValueKind::Object,
    }
}

fn json_display(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => shorten(s),
        Value::Array(items) => {
            let inner = serde_json::to_string(v).unwrap_or_default();
            format!("{} ({} items)", shorten(&inner), items.len())
        }
        other => shorten(&other.to_string()),
    }
}

/// Leaf paths of a JSON object (objects are descended up to 16 levels; arrays are leaves).
fn flatten<'v>(prefix: &str, v: &'v Value, depth: usize, out: &mut Vec<(String, &'v Value)>) {
    match v {
        Value::Object(map) if depth < 16 && !map.is_empty() => {
            for (k, child) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&path, child, depth + 1, out);
            }
        }
        _ => out.push((prefix.to_string(), v)),
    }
}

/// Value statistics of one column.
#[derive(Debug, Default)]
struct Stats {
    counts: Vec<(String, usize)>,
    seen: std::collections::HashSet<String>,
    non_empty: usize,
    max_chars: usize,
    array_len: Option<(usize, usize)>,
}

impl Stats {
    fn scalar(&mut self, text: &str) {
        let chars = text.chars().count();
        self.max_chars = self.max_chars.max(chars);
        if chars > MAX_VALUE_CHARS {
            return;
        }
        if let Some(entry) = self.counts.iter_mut().find(|(v, _)| v == text) {
            entry.1 += 1;
        } else if self.counts.len() < MAX_VALUE_COUNTS {
            self.counts.push((text.to_string(), 1));
        }
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.non_empty += 1;
        self.seen.insert(text.to_string());
        self.scalar(text);
    }

    fn json(&mut self, v: &Value) {
        match v {
            Value::Null => {}
            Value::String(s) => self.text(s),
            Value::Bool(_) | Value::Number(_) => self.text(&v.to_string()),
            Value::Array(items) => {
                self.non_empty += 1;
                self.seen.insert(v.to_string());
                let n = items.len();
                self.array_len = Some(self.array_len.map_or((n, n), |(a, b)| (a.min(n), b.max(n))));
                for item in items {
                    match item {
                        Value::String(s) if !s.is_empty() => self.scalar(s),
                        Value::Bool(_) | Value::Number(_) => self.scalar(&item.to_string()),
                        _ => {}
                    }
                }
            }
            Value::Object(_) => {
                self.non_empty += 1;
                self.seen.insert(v.to_string());
            }
        }
    }
}

#[derive(Debug, Default)]
struct Collector {
    wanted: usize,
    names: Vec<String>,
    index: BTreeMap<String, usize>,
    kinds: Vec<BTreeMap<ValueKind, usize>>,
    examples: Vec<Vec<String>>,
    stats: Vec<Stats>,
    rows: Vec<BTreeMap<usize, String>>,
    skipped: Vec<Skip>,
    seen: usize,
}

impl Collector {
    fn column(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        self.kinds.push(BTreeMap::new());
        self.examples.push(Vec::new());
        self.stats.push(Stats::default());
        i
    }

    fn observe(&mut self, column: usize, kind: ValueKind, shown: String) {
        *self.kinds[column].entry(kind).or_insert(0) += 1;
        let ex = &mut self.examples[column];
        if kind != ValueKind::Empty && ex.len() < 3 && !ex.contains(&shown) {
            ex.push(shown.clone());
        }
        if let Some(row) = self.rows.last_mut() {
            row.insert(column, shown);
        }
    }
}

impl Consumer for Collector {
    fn header(&mut self, _input: &str, header: &[String]) -> Result<(), ImportError> {
        for h in header {
            self.column(h);
        }
        Ok(())
    }

    fn record(
        &mut self,
        _input: &str,
        _record: u64,
        _line: u64,
        data: RecordData,
    ) -> Result<(), ImportError> {
        self.seen += 1;
        self.rows.push(BTreeMap::new());
        match &data {
            RecordData::Csv(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    if i >= self.names.len() {
                        self.column(&format!("column {}", i + 1));
                    }
                    self.observe(i, text_kind(f), shorten(f));
                    self.stats[i].text(f);
                }
            }
            RecordData::Json(v) => {
                let mut leaves = Vec::new();
                flatten("", v, 0, &mut leaves);
                for (path, leaf) in leaves {
                    let c = self.column(&path);
                    self.observe(c, json_kind(leaf), json_display(leaf));
                    self.stats[c].json(leaf);
                }
            }
        }
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
        self.seen += 1;
        if self.skipped.len() < MAX_EXAMPLES {
            self.skipped.push(Skip {
                input: input.to_string(),
                record,
                line,
                field: field.to_string(),
                reason: format!("{kind}: {detail}"),
            });
        }
        Ok(())
    }

    fn wants_more(&self) -> bool {
        self.seen < self.wanted
    }
}

/// Reads the first `rows` records of `reader` and detects the column types.
///
/// # Errors
/// The reader's fatal errors within the part read (an empty input, an encoding problem, a record over
/// the limit, a broken JSON array).
pub fn preview<R: Read>(
    reader: R,
    name: &str,
    format: Format,
    delimiter: Option<u8>,
    limits: &Limits,
    rows: usize,
) -> Result<Preview, ImportError> {
    let mut source = SourceReader::new(name, format, delimiter, limits.max_record_bytes);
    let mut collector = Collector {
        wanted: rows,
        ..Collector::default()
    };
    let complete = read_chunks(reader, name, limits.chunk_bytes, |chunk| {
        source.push(chunk, &mut collector)?;
        Ok(collector.wants_more())
    })?;
    let report = if complete {
        source.finish(&mut collector)?
    } else {
        source.report()
    };
    let columns = collector
        .names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let kinds = collector.kinds[i].clone();
            let non_empty: Vec<ValueKind> = kinds
                .keys()
                .copied()
                .filter(|k| *k != ValueKind::Empty)
                .collect();
            let detected = match non_empty.as_slice() {
                [] => ValueKind::Empty,
                [one] => *one,
                [ValueKind::Integer, ValueKind::Number] => ValueKind::Number,
                _ => ValueKind::Mixed,
            };
            let stats = &collector.stats[i];
            let mut values = stats.counts.clone();
            // Most frequent first; the sort is stable, so ties keep their first-seen order.
            values.sort_by_key(|v| std::cmp::Reverse(v.1));
            ColumnInfo {
                name: name.clone(),
                detected,
                kinds,
                examples: collector.examples[i].clone(),
                values,
                distinct: stats.seen.len(),
                non_empty: stats.non_empty,
                max_chars: stats.max_chars,
                array_len: stats.array_len,
            }
        })
        .collect();
    let n = collector.names.len();
    let rows = collector
        .rows
        .iter()
        .map(|r| {
            (0..n)
                .map(|c| r.get(&c).cloned().unwrap_or_default())
                .collect()
        })
        .collect();
    Ok(Preview {
        source: report,
        columns,
        rows,
        skipped: collector.skipped,
    })
}
