//! `atlas clinical stats FILE [--format text|json|csv]`: the metrics of a clinical bundle (seed
//! `001_…` §3.3–3.5, §4, Tables 5–7; `docs/clinical.md`, "Metrics") as text tables, as the JSON of
//! [`atlas_core::clinical::metrics::ClinicalReport`] (rates as fractions), or as CSV (one row per value,
//! unrounded).
//!
//! `atlas clinical embed FILE --out FILE [--embed-dir DIR]`: adds the all-MiniLM-L6-v2 embeddings of
//! every stored explanation (the Rationale texts, inline or in shards next to the bundle) as
//! `clinical.embeddings` (f32le), so that EDD (§3.5 Eq. 1) can be computed — for a clinical bundle
//! made in the browser, which cannot run the model.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use atlas_core::bundle::TextShardFile;
use atlas_core::clinical::metrics::{analyze, ClinicalReport};
use atlas_core::clinical::Embeddings;
use atlas_core::{Audit, BundleFile, TextShard};
use clap::{Subcommand, ValueEnum};

/// Output format of `atlas clinical stats`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables in the Clinical view's layout: profile (Table 5), accuracy and answer change per model ×
    /// variant, EDD, CFV with the Spearman line, failure modes (Table 6), stereotype flags, severities
    /// (Table 7), categories, directions.
    Text,
    /// The whole report as JSON (rates are fractions 0..1).
    Json,
    /// One row per value: `bundle,section,model,key,metric,value`.
    Csv,
}

/// `atlas clinical …`.
#[derive(Subcommand)]
pub enum ClinicalCommand {
    /// Accuracy, answer change, EDD, CFV and failure modes, stereotype flags, directions, the
    /// difficulty × validity Spearman and the per-model profile of a clinical bundle (seed 001).
    Stats {
        /// The bundle file.
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Adds all-MiniLM-L6-v2 embeddings of every stored explanation (Rationale text) as
    /// `clinical.embeddings`, for EDD; the rest of the bundle is kept as it is.
    Embed {
        /// The clinical bundle (text shards are read next to it).
        file: PathBuf,
        /// Where to write the bundle with embeddings (may be FILE itself).
        #[arg(long)]
        out: PathBuf,
        /// The all-MiniLM-L6-v2 weights (`scripts/setup.sh --test` installs them there).
        #[arg(long, default_value_os_t = default_embed_dir())]
        embed_dir: PathBuf,
        /// Replace embeddings the bundle already has.
        #[arg(long)]
        replace: bool,
    },
}

fn default_embed_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".cache/audit-atlas/minilm")
}

/// `(cell, text)` of every stored Rationale text of `file`, cells increasing: inline texts and the
/// texts of shards read from `dir`.
fn stored_texts(file: &BundleFile, audit: &Audit, dir: &Path) -> Result<Vec<(u64, String)>> {
    let Some(field) = file.texts.as_ref().and_then(|t| t.rationale.as_ref()) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<(u64, String)> = Vec::new();
    if let Some(inline) = &field.inline {
        out.extend(
            inline
                .cells
                .iter()
                .copied()
                .zip(inline.texts.iter().cloned()),
        );
    }
    for shard in &field.shards {
        let path = dir.join(&shard.path);
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "cannot read the text shard {} (it sits next to the bundle)",
                path.display()
            )
        })?;
        TextShard::from_bytes(&bytes, audit)
            .with_context(|| format!("{} is not a text shard of this bundle", path.display()))?;
        let data: TextShardFile = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a text shard", path.display()))?;
        out.extend(data.data.cells.into_iter().zip(data.data.texts));
    }
    out.sort_by_key(|(c, _)| *c);
    Ok(out)
}

fn embed(file: &Path, out: &Path, embed_dir: &Path, replace: bool) -> Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let audit =
        Audit::from_json(&text).map_err(|e| anyhow!("{}: invalid bundle: {e}", file.display()))?;
    // The file as written (the reader keeps a decoded copy of the response columns, not the text).
    let mut bundle: BundleFile =
        serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text))
            .with_context(|| format!("{}: reading the bundle again", file.display()))?;
    let Some(clinical) = bundle.clinical.as_ref() else {
        bail!(
            "{}: not a clinical bundle (no `clinical` object; docs/clinical.md)",
            file.display()
        );
    };
    if clinical.embeddings.is_some() && !replace {
        bail!(
            "{}: `clinical.embeddings` is already there; give --replace to compute them again",
            file.display()
        );
    }
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let texts = stored_texts(&bundle, &audit, dir)?;
    if texts.is_empty() {
        bail!(
            "{}: no stored explanation (texts.rationale) to embed",
            file.display()
        );
    }
    let t0 = std::time::Instant::now();
    let embedder = atlas_embed::Embedder::load(embed_dir)?;
    let refs: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
    let vectors = embedder.embed(&refs)?;
    let cells: Vec<u64> = texts.iter().map(|(c, _)| *c).collect();
    let embeddings = Embeddings::from_vectors(atlas_embed::MODEL_NAME, cells, &vectors)
        .map_err(|e| anyhow!("encoding the embeddings: {e}"))?;
    if let Some(c) = bundle.clinical.as_mut() {
        c.embeddings = Some(embeddings);
    }
    let json = serde_json::to_string(&bundle)?;
    Audit::from_json(&json).context("the bundle with embeddings does not read back")?;
    crate::pilot::write_atomic(out, json.as_bytes())?;
    println!(
        "wrote {}: {} explanation(s) embedded with {} in {:.1} s",
        out.display(),
        texts.len(),
        atlas_embed::MODEL_NAME,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs `atlas clinical …`.
///
/// # Errors
/// An unreadable file or an invalid bundle (the reader's message names the record and field).
pub fn run(command: ClinicalCommand) -> Result<ExitCode> {
    match command {
        ClinicalCommand::Stats { file, format } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let audit = Audit::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", file.display()))?;
            if audit.file.clinical.is_none() {
                eprintln!(
                    "note: {} has no `clinical` object; only accuracy is computed (docs/clinical.md)",
                    file.display()
                );
            }
            let report = analyze(&audit);
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match format {
                Format::Text => out.write_all(render_text(&audit, &report).as_bytes())?,
                Format::Json => {
                    serde_json::to_writer_pretty(&mut out, &report)?;
                    writeln!(out)?;
                }
                Format::Csv => write_csv(&report, &mut out)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        ClinicalCommand::Embed {
            file,
            out,
            embed_dir,
            replace,
        } => embed(&file, &out, &embed_dir, replace),
    }
}

/// The text report: the tables of [`atlas_core::tables::clinical::report`] (Table 5, 6 and 7 in the
/// Clinical view's layout, and the other clinical tables), as [`atlas_core::tables::render_text`]
/// prints them.
pub fn render_text(audit: &Audit, r: &ClinicalReport) -> String {
    let (summary, tables) = atlas_core::tables::clinical::report(audit, r);
    atlas_core::tables::render_text(&summary, &tables)
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

/// CSV: one row per value, `bundle,section,model,key,metric,value`; rates unrounded fractions, an
/// undefined rate an empty value.
///
/// # Errors
/// A write error.
pub fn write_csv(r: &ClinicalReport, out: &mut impl Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["bundle", "section", "model", "key", "metric", "value"])?;
    let b = r.bundle.as_str();
    write_rows(r, &mut |section, model, key, metric, value| {
        w.write_record([b, section, model, key, metric, value.as_str()])
    })?;
    w.flush()?;
    Ok(())
}

/// Calls `row(section, model, key, metric, value)` for every value of the report.
fn write_rows(
    r: &ClinicalReport,
    row: &mut impl FnMut(&str, &str, &str, &str, String) -> csv::Result<()>,
) -> csv::Result<()> {
    for a in &r.accuracy {
        row(
            "accuracy",
            &a.model,
            &a.condition,
            "correct",
            a.correct.to_string(),
        )?;
        row(
            "accuracy",
            &a.model,
            &a.condition,
            "answered",
            a.answered.to_string(),
        )?;
        row(
            "accuracy",
            &a.model,
            &a.condition,
            "parse_failures",
            a.parse_failures.to_string(),
        )?;
        row(
            "accuracy",
            &a.model,
            &a.condition,
            "accuracy",
            opt(a.accuracy),
        )?;
        row(
            "accuracy",
            &a.model,
            &a.condition,
            "asked",
            a.asked.to_string(),
        )?;
        row(
            "accuracy",
            &a.model,
            &a.condition,
            "accuracy_unreadable_wrong",
            opt(a.accuracy_unreadable_wrong),
        )?;
    }
    for a in &r.answer_change {
        row(
            "answer_change",
            &a.model,
            &a.condition,
            "changed",
            a.changed.to_string(),
        )?;
        row(
            "answer_change",
            &a.model,
            &a.condition,
            "comparisons",
            a.comparisons.to_string(),
        )?;
        row("answer_change", &a.model, &a.condition, "rate", opt(a.rate))?;
    }
    for a in &r.answer_change_overall {
        row(
            "answer_change_overall",
            &a.model,
            "",
            "changed",
            a.changed.to_string(),
        )?;
        row(
            "answer_change_overall",
            &a.model,
            "",
            "comparisons",
            a.comparisons.to_string(),
        )?;
        row("answer_change_overall", &a.model, "", "rate", opt(a.rate))?;
    }
    for e in &r.edd {
        let key = format!("{}/{}", e.statement, e.repeat.as_deref().unwrap_or(""));
        row(
            "edd",
            &e.model,
            &key,
            "n_variants",
            e.n_variants.to_string(),
        )?;
        row("edd", &e.model, &key, "edd", e.edd.to_string())?;
    }
    for c in &r.cfv {
        row("cfv", &c.model, "", "valid", c.valid.to_string())?;
        row("cfv", &c.model, "", "attempts", c.attempts.to_string())?;
        row("cfv", &c.model, "", "cfv", opt(c.cfv))?;
    }
    for c in &r.cfv_by_difficulty {
        let key = c.difficulty.as_deref().unwrap_or("");
        row(
            "cfv_by_difficulty",
            &c.model,
            key,
            "valid",
            c.valid.to_string(),
        )?;
        row(
            "cfv_by_difficulty",
            &c.model,
            key,
            "attempts",
            c.attempts.to_string(),
        )?;
        row("cfv_by_difficulty", &c.model, key, "cfv", opt(c.cfv))?;
    }
    for f in &r.failure_modes {
        let model = f.model.as_deref().unwrap_or("(all)");
        row(
            "failure_modes",
            model,
            f.outcome.as_str(),
            "count",
            f.count.to_string(),
        )?;
        row(
            "failure_modes",
            model,
            f.outcome.as_str(),
            "share",
            opt(f.share),
        )?;
    }
    for m in &r.stereotype.per_model {
        row("stereotype", &m.model, "", "judged", m.judged.to_string())?;
        row(
            "stereotype",
            &m.model,
            "",
            "unparsed",
            m.unparsed.to_string(),
        )?;
        row("stereotype", &m.model, "", "flags", m.flags.to_string())?;
        row(
            "stereotype",
            &m.model,
            "",
            "questions",
            m.questions.to_string(),
        )?;
        row(
            "stereotype",
            &m.model,
            "",
            "flags_per_question",
            opt(m.flags_per_question),
        )?;
    }
    for x in &r.stereotype.by_severity {
        let key = x.severity.map_or("", |v| v.as_str());
        row(
            "stereotype_severity",
            "(all)",
            key,
            "count",
            x.count.to_string(),
        )?;
        row("stereotype_severity", "(all)", key, "share", opt(x.share))?;
    }
    for x in &r.stereotype.by_category {
        let key = x.category.as_deref().unwrap_or("");
        row(
            "stereotype_category",
            "(all)",
            key,
            "count",
            x.count.to_string(),
        )?;
        row("stereotype_category", "(all)", key, "share", opt(x.share))?;
    }
    for d in &r.directions {
        row(
            "directions",
            &d.model,
            d.direction.as_str(),
            "count",
            d.count.to_string(),
        )?;
        row(
            "directions",
            &d.model,
            d.direction.as_str(),
            "share",
            opt(d.share),
        )?;
    }
    let sp = &r.spearman_difficulty_validity;
    row(
        "spearman_difficulty_validity",
        "(all)",
        "",
        "rho",
        opt(sp.rho),
    )?;
    row(
        "spearman_difficulty_validity",
        "(all)",
        "",
        "n",
        sp.n.to_string(),
    )?;
    for p in &r.profile {
        row("profile", &p.model, "", "accuracy", opt(p.accuracy))?;
        row("profile", &p.model, "", "answered", p.answered.to_string())?;
        row(
            "profile",
            &p.model,
            "",
            "accuracy_unreadable_wrong",
            opt(p.accuracy_unreadable_wrong),
        )?;
        row("profile", &p.model, "", "asked", p.asked.to_string())?;
        row("profile", &p.model, "", "cfv", opt(p.cfv))?;
        row(
            "profile",
            &p.model,
            "",
            "answer_change",
            opt(p.answer_change),
        )?;
        row("profile", &p.model, "", "mean_edd", opt(p.mean_edd))?;
        row(
            "profile",
            &p.model,
            "",
            "flags_per_question",
            opt(p.flags_per_question),
        )?;
    }
    Ok(())
}
