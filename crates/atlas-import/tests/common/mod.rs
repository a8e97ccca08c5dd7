//! Helpers shared by the atlas-import tests: small mappings and readers over in-memory bytes.
#![allow(dead_code)]

use atlas_import::{
    read_records, Format, ImportError, Imported, Importer, Limits, Mapping, RecordData, RecordEvent,
};

/// The metadata block every test mapping uses.
pub const METADATA: &str = r#"{
    "id": "test-import",
    "title": "test",
    "description": "test",
    "source": {"citation": "hand-made"},
    "license": {"id": "CC0-1.0", "attribution": "none"},
    "content_warning": null
}"#;

/// A mapping with the given `facets`, `selection` and further top-level members (JSON fragments).
pub fn mapping(facets: &str, selection: &str, extra: &str) -> Mapping {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {extra}")
    };
    let text = format!(
        r#"{{"mapping_version": 1, "metadata": {METADATA}, "facets": {facets}, "selection": {selection}{extra}}}"#
    );
    Mapping::from_json(&text).unwrap_or_else(|e| panic!("test mapping: {e}\n{text}"))
}

/// model ← `model`, statement ← `statement`, Selection ← `answer` with agree → 1, disagree → 0.
pub fn simple_mapping() -> Mapping {
    mapping(
        r#"{"model": {"field": "model"}, "statement": {"field": "statement"}}"#,
        r#"{"field": "answer", "map": {"agree": 1, "disagree": 0}}"#,
        "",
    )
}

/// Imports `bytes` as one input called `name`, pushing it in chunks of `chunk` bytes.
pub fn import_chunked(
    mapping: Mapping,
    limits: Limits,
    name: &str,
    format: Format,
    bytes: &[u8],
    chunk: usize,
) -> Result<Imported, ImportError> {
    let mut importer = Importer::new(mapping, limits)?;
    importer.begin(name, format)?;
    for part in bytes.chunks(chunk.max(1)) {
        importer.push(part)?;
    }
    importer.finish()
}

/// Imports `bytes` with the default limits, read through `Read` in the default chunks.
pub fn import(mapping: Mapping, format: Format, bytes: &[u8]) -> Result<Imported, ImportError> {
    atlas_import::import(mapping, Limits::default(), "input", format, bytes)
}

/// What the readers saw: the header, records (as CSV fields or JSON text) with (record, line), and
/// skips as (record, line, field, reason).
#[derive(Debug, Default, PartialEq)]
pub struct Seen {
    pub header: Vec<String>,
    pub records: Vec<(u64, u64, Vec<String>)>,
    pub skipped: Vec<(u64, u64, String, String)>,
}

pub fn read(format: Format, bytes: &[u8], limits: &Limits) -> Result<Seen, ImportError> {
    let mut seen = Seen::default();
    read_records(bytes, "input", format, None, limits, |ev| match ev {
        RecordEvent::Header(h) => seen.header = h.to_vec(),
        RecordEvent::Record { record, line, data } => {
            let fields = match data {
                RecordData::Csv(f) => f,
                RecordData::Json(v) => vec![v.to_string()],
            };
            seen.records.push((record, line, fields));
        }
        RecordEvent::Skipped(s) => seen.skipped.push((s.record, s.line, s.field, s.reason)),
    })?;
    Ok(seen)
}

pub fn read_default(format: Format, bytes: &[u8]) -> Result<Seen, ImportError> {
    read(format, bytes, &Limits::default())
}

/// `text` encoded as UTF-16 (little- or big-endian) with a byte-order mark.
pub fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
    let mut out = if big_endian {
        vec![0xFE, 0xFF]
    } else {
        vec![0xFF, 0xFE]
    };
    for unit in text.encode_utf16() {
        if big_endian {
            out.extend_from_slice(&unit.to_be_bytes());
        } else {
            out.extend_from_slice(&unit.to_le_bytes());
        }
    }
    out
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}
