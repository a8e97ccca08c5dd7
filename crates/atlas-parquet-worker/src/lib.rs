//! The Import view's Parquet reader, run in a Web Worker of its own.
//!
//! The app's own wasm leaves [`atlas_import::logs::parquet`] out (arrow-rs's reader adds about
//! 640 KB; `bench/parquet_wasm_size.sh`). When the user picks or drops a Parquet file, the page
//! starts this worker (`atlas-parquet-worker_loader.js`, fetched then and only then) and posts it
//! the chosen `File`s; the worker reads them with `Blob.arrayBuffer()` and answers one
//! [`ParquetReply`] per [`ParquetJob`], as JSON strings. The page never holds the Parquet bytes.
//!
//! The jobs and replies are [`atlas_import::logs::parquet_job`] (which the app uses without the
//! reader); their work is the CLI's own code: [`atlas_import::logs::parquet::summary`] (the footer),
//! [`atlas_import::logs::parquet::head_csv`] (the first rows as CSV, which the form mapper previews
//! and maps like any CSV) and [`atlas_import::logs::parquet::read_owned`] (the import, streamed row
//! group by row group through the same mapping). On wasm32 the codecs are uncompressed, SNAPPY and
//! GZIP; a ZSTD column chunk fails with the error naming the row group, column and codec and
//! pointing to `atlas import`, which reads it.
//!
//! ```
//! use atlas_parquet_worker::{run, ParquetJob, ParquetReply};
//! let reply = run(&ParquetJob::Preview { rows: 5 }, vec![("x.parquet".into(), b"PAR1 cut".to_vec())]);
//! let ParquetReply::Failed { message } = reply else { panic!("a cut file is an error") };
//! assert!(message.contains("x.parquet, (footer)"), "{message}");
//! ```

pub use atlas_import::logs::parquet_job::{ParquetJob, ParquetReply};
use atlas_import::logs::{parquet, LogOptions};
use atlas_import::{Limits, Mapping};

/// The footer summary in one line: rows, row groups, columns, codecs and writer.
pub fn footer_label(s: &parquet::Summary) -> String {
    let mut codecs: Vec<&str> = s
        .columns
        .iter()
        .flat_map(|c| c.codecs.iter().map(String::as_str))
        .collect();
    codecs.sort_unstable();
    codecs.dedup();
    let mut label = format!(
        "Parquet: {} rows in {} row group{}, {} columns, {}",
        atlas_core::format::thousands_u64(s.rows),
        s.row_groups,
        if s.row_groups == 1 { "" } else { "s" },
        s.columns.len(),
        if codecs.is_empty() {
            "no data".to_string()
        } else {
            codecs.join(" + ")
        }
    );
    if let Some(by) = &s.created_by {
        label.push_str("; written by ");
        label.push_str(by);
    }
    label
}

/// Runs `job` on `files` (`(name, bytes)`, in the order chosen). Never panics: every failure is a
/// [`ParquetReply::Failed`] naming its input and place.
pub fn run(job: &ParquetJob, files: Vec<(String, Vec<u8>)>) -> ParquetReply {
    let failed = |message: String| ParquetReply::Failed { message };
    match job {
        ParquetJob::Preview { rows } => {
            let Some((name, bytes)) = files.first() else {
                return failed("no Parquet file was given".into());
            };
            // One copy of the bytes for both: the footer, then the first rows.
            let (summary, head) = match parquet::summary_and_head(name, bytes, *rows) {
                Ok(both) => both,
                Err(e) => return failed(e.to_string()),
            };
            let mut label = footer_label(&summary);
            if files.len() > 1 {
                label.push_str(&format!(", {} files into one bundle", files.len()));
            }
            match head {
                Ok(csv) => ParquetReply::Previewed { label, csv },
                // The footer was read: say what the file holds before what could not be decoded.
                Err(e) => failed(format!("{label}. {e}")),
            }
        }
        ParquetJob::Import { mapping } => {
            let mapping = match Mapping::from_json(mapping) {
                Ok(m) => m,
                Err(e) => return failed(e.to_string()),
            };
            let options = LogOptions {
                mapping: Some(mapping),
                limits: Limits::default(),
                ..LogOptions::default()
            };
            match parquet::read_owned(files, &options) {
                Ok(imported) => match imported.to_json() {
                    Ok(json) => ParquetReply::Imported {
                        bundle_id: imported.bundle.metadata.id.clone(),
                        bundle: String::from_utf8_lossy(&json).into_owned(),
                        report: Box::new(imported.report),
                    },
                    Err(e) => failed(e.to_string()),
                },
                Err(e) => failed(e.to_string()),
            }
        }
    }
}
