//! `atlas import`: CSV / TSV / JSONL / JSON results + a mapping file → a bundle (format v1), with the
//! validation report; `--preview` shows the detected columns and types (and, with a mapping, the value
//! counts of the whole import) without writing anything. The logic lives in the `atlas-import` crate;
//! the bundle is validated by `Importer::finish` and streamed to the output file.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use atlas_import::{Format, Importer, Limits, Mapping, Preview, DEFAULT_MAX_RECORD_BYTES};

#[derive(clap::Args)]
pub struct ImportArgs {
    /// Input files, read in this order into one bundle (`$file` in the mapping is each file's name
    /// without directory and extension).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The mapping file (docs/import-mapping.md). Required unless --preview.
    #[arg(long)]
    pub mapping: Option<PathBuf>,
    /// The bundle file to write. Required unless --preview.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Input format: csv, tsv, jsonl or json (default: the mapping's `input.format`, else the file
    /// extension, else guessed from the first bytes).
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
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

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
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
    if args.preview {
        for path in &args.inputs {
            let (head, reader) = open(path)?;
            let name = path.display().to_string();
            let format = args
                .format
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
        let format = importer.resolve_format(args.format, &name, &head);
        importer.read(&name, format, reader)?;
    }
    let mut imported = importer.finish()?;
    imported.bundle.metadata.produced_by.command = Some(command_line);
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
