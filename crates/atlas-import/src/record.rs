//! One record of any input format, and field references resolved against it.
//!
//! A field reference in a mapping is a string:
//!
//! - `$file` (the input's file name without directory and extension), `$record` (the 1-based record
//!   number) and `$line` are pseudo-fields available in every format;
//! - in CSV/TSV, otherwise the exact header name (dots are ordinary characters);
//! - in JSON/JSONL, otherwise a path of keys separated by `.`; a segment that is a number also indexes
//!   an array (`data.example_ids.0`). Keys that themselves contain a `.` cannot be addressed.

use std::borrow::Cow;

use serde_json::Value;

/// The data of one record.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordData {
    /// CSV/TSV fields, as many as the header has.
    Csv(Vec<String>),
    /// A JSON object.
    Json(Value),
}

/// A field reference compiled for one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldRef {
    Column(usize),
    Path(Vec<String>),
    File,
    Record,
    Line,
}

impl FieldRef {
    /// The pseudo-field called `name`, if it is one.
    pub fn pseudo(name: &str) -> Option<FieldRef> {
        match name {
            "$file" => Some(FieldRef::File),
            "$record" => Some(FieldRef::Record),
            "$line" => Some(FieldRef::Line),
            _ => None,
        }
    }

    /// A JSON path reference.
    pub fn json(name: &str) -> FieldRef {
        FieldRef::pseudo(name)
            .unwrap_or_else(|| FieldRef::Path(name.split('.').map(str::to_string).collect()))
    }
}

/// A value read from a record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val<'a> {
    /// The key is absent (JSON) — CSV columns are never missing.
    Missing,
    /// JSON `null`, or an empty string / empty CSV field.
    Null,
    /// A string, or a number or boolean written as JSON text (`1`, `-1`, `true`).
    Text(Cow<'a, str>),
    Array(&'a [Value]),
    Object,
}

impl<'a> Val<'a> {
    /// The value of a JSON node.
    pub fn of(v: &'a Value) -> Val<'a> {
        match v {
            Value::Null => Val::Null,
            Value::String(s) if s.is_empty() => Val::Null,
            Value::String(s) => Val::Text(Cow::Borrowed(s)),
            Value::Bool(b) => Val::Text(Cow::Borrowed(if *b { "true" } else { "false" })),
            Value::Number(n) => Val::Text(Cow::Owned(n.to_string())),
            Value::Array(a) => Val::Array(a),
            Value::Object(_) => Val::Object,
        }
    }

    /// A short name of the value's kind, for skip reasons.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Missing => "missing",
            Val::Null => "empty",
            Val::Text(_) => "a scalar",
            Val::Array(_) => "an array",
            Val::Object => "an object",
        }
    }
}

/// A record with its position, as seen by the mapping.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub data: &'a RecordData,
    pub file: &'a str,
    pub record: u64,
    pub line: u64,
}

impl<'a> Ctx<'a> {
    /// The value of `field` in this record.
    pub fn get(&self, field: &FieldRef) -> Val<'a> {
        match field {
            FieldRef::File => Val::Text(Cow::Borrowed(self.file)),
            FieldRef::Record => Val::Text(Cow::Owned(self.record.to_string())),
            FieldRef::Line => Val::Text(Cow::Owned(self.line.to_string())),
            FieldRef::Column(i) => match self.data {
                RecordData::Csv(fields) => match fields.get(*i) {
                    Some(s) if s.is_empty() => Val::Null,
                    Some(s) => Val::Text(Cow::Borrowed(s)),
                    None => Val::Missing,
                },
                RecordData::Json(_) => Val::Missing,
            },
            FieldRef::Path(_) => match self.node(field) {
                Some(v) => Val::of(v),
                None => Val::Missing,
            },
        }
    }

    /// The JSON node a path reference points to (`None` for CSV records and missing keys).
    pub fn node(&self, field: &FieldRef) -> Option<&'a Value> {
        let (RecordData::Json(root), FieldRef::Path(path)) = (self.data, field) else {
            return None;
        };
        let mut node = root;
        for seg in path {
            node = match node {
                Value::Object(map) => map.get(seg)?,
                Value::Array(items) => items.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }
}
