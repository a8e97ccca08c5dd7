//! Tool logs in the Import view: Inspect AI (`.eval`, `.json`), lm-evaluation-harness samples and
//! results, promptfoo results and Parquet, detected from their bytes
//! ([`atlas_import::logs::LogFormat::detect`]), previewed through the reader's preset and imported with
//! the mapping the form holds (`docs/import-mapping.md`, "Tool logs").
//!
//! An Inspect `.eval` is read member by member by byte ranges ([`BlobSource`] over `Blob.slice`,
//! [`atlas_import::logs::ranged`]); the JSON logs are read whole (each is one JSON document or a
//! JSON Lines file the reader parses line by line). A Parquet file is read by the Parquet Web Worker
//! ([`crate::browser::parquet_worker`]; the app's own wasm leaves arrow-rs out, about 640 KB): its
//! footer summary and first rows as CSV come back, and the form mapper previews, guesses and maps
//! them as a CSV; the import runs in the worker with the form's mapping. A codec the browser build
//! cannot decode (ZSTD) fails with the reader's error naming row group, column and codec, and the
//! bundle already loaded stays.

use atlas_import::guess::GUESS_ROWS;
use atlas_import::logs::parquet_job::{ParquetJob, ParquetReply};
use atlas_import::logs::{self, inspect, ranged, LogFormat, LogInput, LogOptions};
use atlas_import::{Format, Guess, Imported, Limits, Mapping, Preview, Report};
use js_sys::Uint8Array;
use serde_json::Value;
use web_sys::File;

use crate::browser::blob_source::BlobSource;
use crate::browser::loader::js_message;

/// Selected tool-log files of one format.
#[derive(Debug, Clone)]
pub struct LogFiles {
    /// The detected format.
    pub format: LogFormat,
    /// The files (several logs, e.g. one per model, go into one bundle).
    pub files: Vec<File>,
}

/// The format's name before its preview says more.
pub fn format_name(format: LogFormat) -> &'static str {
    match format {
        LogFormat::Inspect => "Inspect AI log",
        LogFormat::LmEval => "lm-evaluation-harness log",
        LogFormat::Promptfoo => "promptfoo results",
        LogFormat::Parquet => "Parquet",
    }
}

async fn read_range(file: &File, end: f64) -> Result<Vec<u8>, String> {
    let slice = file
        .slice_with_f64_and_f64(0.0, end.min(file.size()))
        .map_err(|e| js_message(&e))?;
    let buffer = wasm_bindgen_futures::JsFuture::from(slice.array_buffer())
        .await
        .map_err(|e| format!("reading {} failed: {}", file.name(), js_message(&e)))?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// The log format of `file` from its name and first [`logs::DETECT_BYTES`], or `None` (a plain
/// CSV/TSV/JSONL/JSON results file).
///
/// # Errors
/// The read's message.
pub async fn detect(file: &File) -> Result<Option<LogFormat>, String> {
    // The magic numbers first: a zip (.eval) or Parquet file is then never read as a whole head.
    let magic = read_range(file, 4.0).await?;
    if magic.starts_with(b"PK\x03\x04") || magic.starts_with(b"PAR1") {
        return Ok(LogFormat::detect(&file.name(), &magic));
    }
    let head = read_range(file, logs::DETECT_BYTES as f64).await?;
    Ok(LogFormat::detect(&file.name(), &head))
}

fn is_eval(file: &File, head: &[u8]) -> bool {
    head.starts_with(b"PK") || file.name().to_ascii_lowercase().ends_with(".eval")
}

/// Whether every file is an Inspect `.eval` zip (read by ranges).
async fn all_eval(files: &[File]) -> Result<bool, String> {
    for f in files {
        if !is_eval(f, &read_range(f, 4.0).await?) {
            return Ok(false);
        }
    }
    Ok(true)
}

async fn whole(files: &[File]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        out.push((f.name(), read_range(f, f.size()).await?));
    }
    Ok(out)
}

/// A log preview as the form mapper takes it: the detected format in words, the preset mapping as
/// a document, and the reader's first flat records as a JSON Lines preview.
#[derive(Debug)]
pub struct LogPreviewed {
    /// E.g. `Inspect AI log (.eval, 9 members)`.
    pub label: String,
    /// The reader's preset mapping (JSON document).
    pub preset: Value,
    /// The records as JSON Lines and their preview.
    pub bytes: Vec<u8>,
    /// Their preview (columns = the records' leaf paths).
    pub preview: Preview,
    /// How `bytes` are read: JSON Lines (the logs' flat records) or CSV (a Parquet file's rows).
    pub format: Format,
    /// For Parquet, the form mapper's guess from the real column names and values (as for a CSV);
    /// `None` for the logs, whose preset is the reader's.
    pub guess: Option<Guess>,
}

/// Reads what the Import view shows of `files` (format `format`).
///
/// # Errors
/// The reader's named error (input, member or line, field), or the Parquet worker's.
pub async fn preview(format: LogFormat, files: &[File]) -> Result<LogPreviewed, String> {
    let Some(first) = files.first() else {
        return Err("no file was chosen".into());
    };
    let (mut label, preset, records) = match format {
        LogFormat::Parquet => return parquet_preview(files).await,
        LogFormat::Inspect if all_eval(files).await? => {
            let source = BlobSource::new(first.clone().into());
            let p = ranged::preview_eval(
                &first.name(),
                &source,
                &inspect::Options::default(),
                GUESS_ROWS,
            )
            .await
            .map_err(|e| e.to_string())?;
            (
                format!("Inspect AI log (.eval, {} members)", p.members),
                p.preset,
                p.records,
            )
        }
        _ => {
            let read = whole(files).await?;
            let inputs: Vec<LogInput<'_>> = read
                .iter()
                .map(|(name, bytes)| LogInput { name, bytes })
                .collect();
            let p = logs::preview(format, &inputs, &LogOptions::default(), GUESS_ROWS)
                .map_err(|e| e.to_string())?;
            (p.label, p.preset, p.records)
        }
    };
    if files.len() > 1 {
        label.push_str(&format!(", {} files into one bundle", files.len()));
    }
    let mut bytes = Vec::new();
    for r in &records {
        serde_json::to_writer(&mut bytes, r).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
    }
    let preview = atlas_import::preview(
        bytes.as_slice(),
        &first.name(),
        Format::Jsonl,
        None,
        &Limits::default(),
        GUESS_ROWS,
    )
    .map_err(|e| e.to_string())?;
    let preset = serde_json::to_value(&preset).map_err(|e| e.to_string())?;
    Ok(LogPreviewed {
        label,
        preset,
        bytes,
        preview,
        format: Format::Jsonl,
        guess: None,
    })
}

/// The Parquet worker's footer summary and first rows, previewed and guessed as a CSV.
async fn parquet_preview(files: &[File]) -> Result<LogPreviewed, String> {
    let name = files.first().map(File::name).unwrap_or_default();
    let job = ParquetJob::Preview { rows: GUESS_ROWS };
    let (label, csv) = match crate::browser::parquet_worker::ask(&job, files).await? {
        ParquetReply::Previewed { label, csv } => (label, csv),
        ParquetReply::Failed { message } => return Err(message),
        other => {
            return Err(format!(
                "the Parquet worker answered {other:?} to a preview"
            ))
        }
    };
    let bytes = csv.into_bytes();
    let preview = atlas_import::preview(
        bytes.as_slice(),
        &name,
        Format::Csv,
        None,
        &Limits::default(),
        GUESS_ROWS,
    )
    .map_err(|e| e.to_string())?;
    let guess = atlas_import::guess(&name, &preview);
    Ok(LogPreviewed {
        label,
        preset: guess.document.clone(),
        bytes,
        preview,
        format: Format::Csv,
        guess: Some(guess),
    })
}

/// An import's result as the Import view keeps it: the bundle's id, its report and its JSON.
#[derive(Debug)]
pub struct ImportedJson {
    /// The bundle's `metadata.id`.
    pub bundle_id: String,
    /// The validation report.
    pub report: Report,
    /// The bundle as compact JSON.
    pub json: Vec<u8>,
}

impl ImportedJson {
    fn of(imported: Imported) -> Result<Self, String> {
        let json = imported.to_json().map_err(|e| e.to_string())?;
        Ok(Self {
            bundle_id: imported.bundle.metadata.id.clone(),
            report: imported.report,
            json,
        })
    }
}

/// Imports `files` with `mapping` into one bundle; `progress(read, total)` after each `.eval` member.
///
/// # Errors
/// The reader's named error, or the Parquet worker's.
pub async fn import(
    logs: &LogFiles,
    mapping: Mapping,
    progress: impl FnMut(u64, u64),
) -> Result<ImportedJson, String> {
    let files = &logs.files;
    match logs.format {
        LogFormat::Parquet => {
            let mapping = serde_json::to_string(&mapping).map_err(|e| e.to_string())?;
            match crate::browser::parquet_worker::ask(&ParquetJob::Import { mapping }, files)
                .await?
            {
                ParquetReply::Imported {
                    bundle_id,
                    bundle,
                    report,
                } => Ok(ImportedJson {
                    bundle_id,
                    report: *report,
                    json: bundle.into_bytes(),
                }),
                ParquetReply::Failed { message } => Err(message),
                other => Err(format!(
                    "the Parquet worker answered {other:?} to an import"
                )),
            }
        }
        LogFormat::Inspect if all_eval(files).await? => {
            let names: Vec<String> = files.iter().map(File::name).collect();
            let sources: Vec<BlobSource> = files
                .iter()
                .map(|f| BlobSource::new(f.clone().into()))
                .collect();
            let inputs: Vec<(&str, &BlobSource)> = names
                .iter()
                .map(String::as_str)
                .zip(sources.iter())
                .collect();
            ranged::read_eval_logs(
                &inputs,
                Some(mapping),
                &inspect::Options::default(),
                Limits::default(),
                progress,
            )
            .await
            .map_err(|e| e.to_string())
            .and_then(ImportedJson::of)
        }
        format => {
            let read = whole(files).await?;
            let inputs: Vec<LogInput<'_>> = read
                .iter()
                .map(|(name, bytes)| LogInput { name, bytes })
                .collect();
            let options = LogOptions {
                mapping: Some(mapping),
                ..LogOptions::default()
            };
            logs::read(format, &inputs, &options)
                .map_err(|e| e.to_string())
                .and_then(ImportedJson::of)
        }
    }
}

/// `preview` restricted to the columns the mapping document `doc` names (a log's flat records have
/// many nested leaf paths; the preview table shows the ones the preset maps).
pub fn mapped_columns_only(preview: &Preview, doc: &Value) -> Preview {
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut named = Vec::new();
    strings(doc, &mut named);
    let keep: Vec<bool> = preview
        .columns
        .iter()
        .map(|c| named.contains(&c.name))
        .collect();
    let mut out = preview.clone();
    out.columns = preview
        .columns
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(c, _)| c.clone())
        .collect();
    out.rows = preview
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(v, _)| v.clone())
                .collect()
        })
        .collect();
    out
}
