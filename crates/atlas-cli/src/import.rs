//! `atlas import`: CSV / TSV / JSONL / JSON results + a mapping file, or tool logs (lm-evaluation-harness
//! samples and results files, Inspect AI `.eval` / `.json`, promptfoo results, Parquet long tables with
//! the CSV mapping; `--format auto` detects them from their bytes) with the reader's preset
//! mapping → a bundle (format v1), with the validation report; `--preview` shows the detected columns and types (and, with a mapping, the value
//! counts of the whole import) without writing anything. The logic lives in the `atlas-import` crate;
//! the bundle is validated by `Importer::finish` and streamed to the output file.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use atlas_import::logs::{LogFormat, LogInput, LogOptions, DETECT_BYTES};
use atlas_import::{Format, Importer, Limits, Mapping, Preview, DEFAULT_MAX_RECORD_BYTES};

/// `--format`: a table format, a tool log format, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// Detect a tool log from each file's bytes; otherwise a table format as before.
    Auto,
    /// CSV, TSV, JSONL or JSON with a mapping.
    Table(Format),
    /// A tool log read with its reader.
    Log(LogFormat),
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// Input files, read in this order into one bundle (`$file` in the mapping is each file's name
    /// without directory and extension).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The mapping file (docs/import-mapping.md). Required for CSV/TSV/JSONL/JSON unless --preview;
    /// for a tool log it replaces the reader's preset (it then maps the reader's flat records).
    #[arg(long)]
    pub mapping: Option<PathBuf>,
    /// The bundle file to write. Required unless --preview.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Input format: auto, csv, tsv, jsonl, json, lm-eval, inspect, promptfoo or parquet. auto (the
    /// default) detects a tool log from the bytes (zip, PAR1, JSON shape); other inputs take the
    /// mapping's `input.format`, else the file extension, else a guess from the first bytes.
    #[arg(long, value_parser = parse_format, default_value = "auto")]
    pub format: InputFormat,
    /// Model id for a tool log that does not name one (lm-eval samples without results_*.json), or
    /// to override the log's.
    #[arg(long)]
    pub model: Option<String>,
    /// Print the detected columns and types of the first rows; with --mapping also run the import and
    /// print its value counts and report. Writes nothing.
    #[arg(long)]
    pub preview: bool,
    /// Rows shown by --preview.
    #[arg(long, default_value_t = 10)]
    pub rows: usize,
    /// Also write the validation report as JSON to this file.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Longest record (CSV row, JSONL line, JSON array element) in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_RECORD_BYTES)]
    pub max_record_bytes: usize,
}

fn parse_format(s: &str) -> Result<InputFormat, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(InputFormat::Auto);
    }
    if let Ok(f) = s.parse::<Format>() {
        return Ok(InputFormat::Table(f));
    }
    s.parse::<LogFormat>().map(InputFormat::Log).map_err(|_| {
        format!("unknown format {s:?}; use auto, csv, tsv, jsonl, json, lm-eval, inspect, promptfoo or parquet")
    })
}

/// The first `n` bytes of a file (fewer if it is shorter).
fn head_of(path: &Path, n: usize) -> Result<Vec<u8>> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut head = Vec::with_capacity(n.min(1 << 16));
    file.take(n as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(head)
}

/// The tool log format of the inputs, if they are logs: all must be of one format.
fn log_format(args: &ImportArgs) -> Result<Option<LogFormat>> {
    match args.format {
        InputFormat::Log(f) => return Ok(Some(f)),
        InputFormat::Table(_) => return Ok(None),
        InputFormat::Auto => {}
    }
    let mut found: Vec<(String, Option<LogFormat>)> = Vec::new();
    for path in &args.inputs {
        let name = path.display().to_string();
        let detected = LogFormat::detect(&name, &head_of(path, DETECT_BYTES)?);
        found.push((name, detected));
    }
    let first = found.first().and_then(|f| f.1);
    if found.iter().all(|f| f.1 == first) {
        return Ok(first);
    }
    let list = found
        .iter()
        .map(|(n, f)| {
            format!(
                "{n}: {}",
                f.map_or("a table (csv/tsv/jsonl/json)", LogFormat::key)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Err(anyhow!(
        "the inputs are of different formats ({list}); import one format at a time or give --format"
    ))
}

/// Opens `path` and returns its first bytes (for format sniffing) and a reader of the whole file.
fn open(path: &Path) -> Result<(Vec<u8>, impl Read)> {
    let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut head = vec![0u8; 4096];
    let mut n = 0;
    while n < head.len() {
        let k = file
            .read(&mut head[n..])
            .with_context(|| format!("reading {}", path.display()))?;
        if k == 0 {
            break;
        }
        n += k;
    }
    head.truncate(n);
    let reader = std::io::Cursor::new(head.clone()).chain(file);
    Ok((head, reader))
}

fn print_preview(p: &Preview) {
    let s = &p.source;
    println!(
        "{}: format {}, encoding {}, {} record(s) previewed",
        s.name,
        s.format.map_or("?", Format::key),
        s.encoding.map_or("?".to_string(), |e| format!("{e:?}")),
        p.rows.len()
    );
    for (from, to) in &s.renamed_headers {
        println!("  duplicate header {from:?} renamed to {to:?}");
    }
    println!("  {:<48} {:<8} examples", "column / path", "type");
    for c in &p.columns {
        let kind = serde_json::to_value(c.detected)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        println!(
            "  {:<48} {:<8} {}",
            format!("{:?}", c.name),
            kind,
            c.examples
                .iter()
                .map(|e| format!("{e:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for skip in &p.skipped {
        println!(
            "  skipped record {} (line {}), `{}`: {}",
            skip.record, skip.line, skip.field, skip.reason
        );
    }
}

pub fn run(args: &ImportArgs, command_line: String) -> Result<ExitCode> {
    let limits = Limits {
        max_record_bytes: args.max_record_bytes,
        ..Limits::default()
    };
    let mapping = match &args.mapping {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(Mapping::from_json(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?)
        }
        None => None,
    };
    if let Some(format) = log_format(args)? {
        if args.preview && format == LogFormat::Parquet {
            // A Parquet long table is a table: its columns come from the schema, as the form
            // mapper shows them.
            for path in &args.inputs {
                let bytes =
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
                let name = path.display().to_string();
                let s = atlas_import::logs::parquet::summary(&name, &bytes)?;
                println!(
                    "{name}: Parquet, {} row(s) in {} row group(s){}",
                    s.rows,
                    s.row_groups,
                    s.created_by
                        .as_deref()
                        .map_or(String::new(), |w| format!(", written by {w}"))
                );
                for c in &s.columns {
                    println!("  {:<48} {:<10} {}", c.name, c.physical, c.codecs.join(" "));
                }
                print_preview(&atlas_import::logs::parquet::preview(
                    &name, &bytes, args.rows,
                )?);
            }
            return Ok(ExitCode::SUCCESS);
        }
        if args.preview {
            return Err(anyhow!(
                "--preview reads tables; {} logs are imported with their reader's preset (docs/import-mapping.md)",
                format.key()
            ));
        }
        let out = args
            .out
            .clone()
            .ok_or_else(|| anyhow!("-o/--out is required"))?;
        let mut files = Vec::with_capacity(args.inputs.len());
        for path in &args.inputs {
            let bytes =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            files.push((path.display().to_string(), bytes));
        }
        let inputs: Vec<LogInput<'_>> = files
            .iter()
            .map(|(name, bytes)| LogInput { name, bytes })
            .collect();
        let options = LogOptions {
            limits,
            mapping,
            model: args.model.clone(),
        };
        println!("format: {} (reader: atlas_import::logs)", format.key());
        let mut imported = if format == LogFormat::Parquet {
            // Owned bytes: the reader keeps them without a second copy.
            drop(inputs);
            atlas_import::logs::parquet::read_owned(files, &options)?
        } else {
            atlas_import::logs::read(format, &inputs, &options)?
        };
        imported.bundle.metadata.produced_by.command = Some(command_line);
        return finish(args, imported, Some(out));
    }
    let table_format = match args.format {
        InputFormat::Table(f) => Some(f),
        _ => None,
    };
    if args.preview {
        for path in &args.inputs {
            let (head, reader) = open(path)?;
            let name = path.display().to_string();
            let format = table_format
                .or(mapping.as_ref().and_then(|m| m.input.format))
                .or_else(|| Format::from_file_name(&name))
                .unwrap_or_else(|| Format::sniff(&head));
            let delimiter = mapping
                .as_ref()
                .and_then(|m| m.input.delimiter)
                .map(|c| c as u8);
            let p = atlas_import::preview(reader, &name, format, delimiter, &limits, args.rows)?;
            print_preview(&p);
        }
        if mapping.is_none() {
            return Ok(ExitCode::SUCCESS);
        }
        println!();
    }
    let Some(mapping) = mapping else {
        return Err(anyhow!("--mapping is required (or use --preview)"));
    };
    let out = match (&args.out, args.preview) {
        (Some(out), _) => Some(out.clone()),
        (None, true) => None,
        (None, false) => return Err(anyhow!("-o/--out is required (or use --preview)")),
    };
    let mut importer = Importer::new(mapping, limits)?;
    for path in &args.inputs {
        let (head, reader) = open(path)?;
        let name = path.display().to_string();
        let format = importer.resolve_format(table_format, &name, &head);
        importer.read(&name, format, reader)?;
    }
    let mut imported = importer.finish()?;
    imported.bundle.metadata.produced_by.command = Some(command_line);
    finish(args, imported, out)
}

/// Prints the report, writes it (`--report`) and the bundle (`-o`).
fn finish(
    args: &ImportArgs,
    imported: atlas_import::Imported,
    out: Option<PathBuf>,
) -> Result<ExitCode> {
    print!("{}", imported.report);
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&imported.report)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    let Some(out) = out else {
        println!("preview: nothing written");
        return Ok(ExitCode::SUCCESS);
    };
    // `Importer::finish` has validated the bundle with the core's checks (those of `Audit::from_bytes`
    // after parsing); it is streamed to the file so that large texts are not held twice.
    let file = File::create(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut writer = std::io::BufWriter::new(file);
    imported.write_json(&mut writer)?;
    writer
        .write_all(b"\n")
        .and_then(|()| writer.flush())
        .with_context(|| format!("writing {}", out.display()))?;
    let bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or_default();
    println!(
        "wrote {} ({bytes} bytes): valid bundle {:?}, {} cells",
        out.display(),
        imported.bundle.metadata.id,
        imported.report.cells
    );
    Ok(ExitCode::SUCCESS)
}
