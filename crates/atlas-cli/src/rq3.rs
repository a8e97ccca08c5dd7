//! `atlas analyze-rq3`: Selection versus judge-coded Rationale (seed `000_…` §3.3, §3.6, §5.4, E.2, E.3)
//! on a bundle with judge columns, printed as the layouts of Tables 3, 18 and 19 plus the per model ×
//! condition cells (text, the same tables the app's RQ3 panel shows), as JSON
//! ([`atlas_core::rq3::Rq3Report`]) or as CSV (one row per value, unrounded).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use atlas_core::rq3::{
    analyze_rq3, tables, CodingRule, HumanSettings, Rq3Report, Rq3Settings, RuleResult, SelfJudge,
};
use atlas_core::Audit;
use clap::ValueEnum;

/// Output format of `atlas analyze-rq3`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables 3, 18, the per-cell table and Table 19 as text.
    Text,
    /// The whole report as JSON.
    Json,
    /// One row per value: `bundle,rule,primary,section,model,condition,metric,value`.
    Csv,
}

/// Arguments of `atlas analyze-rq3`.
#[derive(clap::Args)]
pub struct AnalyzeRq3Args {
    /// The bundle file (it needs judge columns, `responses.judges`).
    pub bundle: PathBuf,
    /// The coding rule behind Table 3 and the per-cell table: binary_majority (seed default),
    /// binary_unanimity, five_class_unanimity or no_self_judge (dashes accepted). Table 18 always
    /// shows all four.
    #[arg(long, default_value = "binary_majority", value_parser = parse_rule)]
    pub rule: CodingRule,
    /// The judge panel by judge id, comma-separated (default: every judge column).
    #[arg(long)]
    pub judges: Option<String>,
    /// Explicit self-judge pair `JUDGE=MODEL[+MODEL…]` for the row-wise no-self-judge rule; repeat
    /// for several judges. Without it judges are matched to models by name.
    #[arg(long = "self-judge")]
    pub self_judges: Vec<String>,
    /// The two human annotators compared by Cohen's κ, `A,B` (default: the first two non-final columns).
    #[arg(long)]
    pub annotators: Option<String>,
    /// The human column with the adjudicated final labels (default: one named `final` or `adjudicated`).
    #[arg(long)]
    pub final_annotator: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Parses a [`CodingRule::key`]; dashes are accepted for underscores.
pub fn parse_rule(s: &str) -> Result<CodingRule, String> {
    CodingRule::from_key(&s.trim().replace('-', "_")).ok_or_else(|| {
        format!(
            "unknown coding rule {s:?}: use {}",
            CodingRule::ALL.map(CodingRule::key).join(", ")
        )
    })
}

fn list(spec: &str) -> Vec<String> {
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// The settings the arguments describe.
///
/// # Errors
/// A self-judge pair without `=` or without a model, or `--annotators` that are not two ids.
pub fn settings(args: &AnalyzeRq3Args) -> Result<Rq3Settings> {
    let self_judges = if args.self_judges.is_empty() {
        None
    } else {
        let mut pairs = Vec::new();
        for spec in &args.self_judges {
            let (judge, models) = spec
                .split_once('=')
                .with_context(|| format!("--self-judge {spec:?}: expected JUDGE=MODEL[+MODEL…]"))?;
            let models: Vec<String> = models
                .split('+')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_string)
                .collect();
            if judge.trim().is_empty() || models.is_empty() {
                bail!("--self-judge {spec:?}: expected JUDGE=MODEL[+MODEL…]");
            }
            pairs.push(SelfJudge {
                judge: judge.trim().to_string(),
                models,
            });
        }
        Some(pairs)
    };
    let annotators = match args.annotators.as_deref().map(list) {
        None => None,
        Some(ids) => match <[String; 2]>::try_from(ids) {
            Ok(pair) => Some(pair),
            Err(ids) => bail!(
                "--annotators: expected two annotator ids A,B, got {}",
                ids.len()
            ),
        },
    };
    Ok(Rq3Settings {
        judges: args.judges.as_deref().map(list),
        primary: args.rule,
        self_judges,
        human: HumanSettings {
            annotators,
            final_annotator: args.final_annotator.clone(),
        },
    })
}

/// Runs the subcommand.
pub fn run(args: AnalyzeRq3Args) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.bundle)
        .with_context(|| format!("reading {}", args.bundle.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", args.bundle.display()))?;
    let settings = settings(&args)?;
    let report = analyze_rq3(&audit, &settings)
        .map_err(|e| anyhow::anyhow!("{}: RQ3 is not available: {e}", args.bundle.display()))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Csv => write_csv(&report, &mut out)?,
        Format::Text => write!(out, "{}", render_text(&report))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The Table 3, 18, per-cell and 19 layouts as text — the same tables the app's RQ3 panel shows
/// ([`atlas_core::rq3::tables`]).
pub fn render_text(report: &Rq3Report) -> String {
    let (summary, tables) = tables(report);
    atlas_core::tables::render_text(&summary, &tables)
}

/// Columns of the CSV output.
pub const CSV_COLUMNS: [&str; 8] = [
    "bundle",
    "rule",
    "primary",
    "section",
    "model",
    "condition",
    "metric",
    "value",
];

fn num(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or_else(String::new, |x| x.to_string())
}

fn rule_values(r: &RuleResult) -> Vec<(&'static str, String)> {
    let d = &r.disagreement;
    let s = &r.summaries;
    vec![
        ("rationale_rows", r.rationale_rows.to_string()),
        ("rationale_bias", r.rationale_bias.to_string()),
        ("rationale_bias_rate", num(r.rationale_bias_rate)),
        ("rationale_abstain", r.rationale_abstain.to_string()),
        ("abstain_ties", r.abstain_ties.to_string()),
        ("abstain_too_few_votes", r.abstain_too_few_votes.to_string()),
        ("pairs", r.pairs.to_string()),
        ("pair_coverage", num(r.pair_coverage)),
        (
            "rationale_rows_without_selection",
            r.rationale_rows_without_selection.to_string(),
        ),
        ("both_negative", r.joint.both_negative.to_string()),
        ("rationale_only", r.joint.rationale_only.to_string()),
        ("selection_only", r.joint.selection_only.to_string()),
        ("both_positive", r.joint.both_positive.to_string()),
        ("ber_sel", num(s.sel)),
        ("ber_rat", num(s.rat)),
        ("ber_cor", num(s.cor)),
        ("ber_union", num(s.union)),
        ("disagreement", num(d.rate)),
        ("selection_only_rate", num(d.selection_only_rate)),
        ("rationale_only_rate", num(d.rationale_only_rate)),
        (
            "dominant",
            d.dominant.map_or_else(String::new, |x| {
                match x {
                    atlas_core::rq3::Direction::SelectionOnly => "selection_only",
                    atlas_core::rq3::Direction::RationaleOnly => "rationale_only",
                }
                .to_string()
            }),
        ),
        ("cells_with_pairs", r.cells_with_pairs.to_string()),
        (
            "cells_where_dominant_holds",
            r.cells_where_dominant_holds.to_string(),
        ),
        (
            "dominant_holds_in_every_cell",
            r.dominant_holds_in_every_cell
                .map_or_else(String::new, |b| b.to_string()),
        ),
    ]
}

/// Writes the report as CSV ([`CSV_COLUMNS`]): the Selection coverage (`section` = `coverage`, no
/// rule), then per rule its Table 18 / Table 3 values (`rule`) and per model × condition cell (`cell`),
/// then the human QC when present (`human`). Numbers unrounded (fractions, not %); empty = undefined.
pub fn write_csv(report: &Rq3Report, out: &mut impl Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_COLUMNS)?;
    let primary = report.settings.primary;
    let mut row = |rule: &str,
                   is_primary: &str,
                   section: &str,
                   model: &str,
                   condition: &str,
                   metric: &str,
                   value: &str|
     -> Result<()> {
        w.write_record([
            report.bundle.as_str(),
            rule,
            is_primary,
            section,
            model,
            condition,
            metric,
            value,
        ])?;
        Ok(())
    };
    let s = &report.selection;
    for (metric, value) in [
        ("responses", s.responses),
        ("valid", s.valid),
        ("abstain", s.abstain),
        ("no_readout", s.no_readout),
    ] {
        row("", "", "coverage", "", "", metric, &value.to_string())?;
    }
    for r in &report.rules {
        let key = r.rule.key();
        let is_primary = (r.rule == primary).to_string();
        for (metric, value) in rule_values(r) {
            row(key, &is_primary, "rule", "", "", metric, &value)?;
        }
        for c in &r.cells {
            let values = [
                ("responses", c.responses.to_string()),
                ("rationale_rows", c.rationale_rows.to_string()),
                ("pairs", c.joint.total().to_string()),
                ("both_negative", c.joint.both_negative.to_string()),
                ("rationale_only", c.joint.rationale_only.to_string()),
                ("selection_only", c.joint.selection_only.to_string()),
                ("both_positive", c.joint.both_positive.to_string()),
                ("disagreement", num(c.disagreement)),
                (
                    "dominant_holds",
                    c.dominant_holds.map_or_else(String::new, |b| b.to_string()),
                ),
            ];
            for (metric, value) in values {
                row(
                    key,
                    &is_primary,
                    "cell",
                    &c.model,
                    &c.condition,
                    metric,
                    &value,
                )?;
            }
        }
    }
    if let Some(h) = &report.human {
        if let Some(ia) = &h.inter_annotator {
            for (name, k) in [
                ("selection_all_classes", &ia.selection_all_classes),
                ("selection_binary", &ia.selection_binary),
                ("rationale_five_class", &ia.rationale_five_class),
                ("rationale_binary", &ia.rationale_binary),
            ] {
                row(
                    "",
                    "",
                    "human",
                    "",
                    "",
                    &format!("{name}/n"),
                    &k.n.to_string(),
                )?;
                row(
                    "",
                    "",
                    "human",
                    "",
                    "",
                    &format!("{name}/agree"),
                    &k.agree.to_string(),
                )?;
                row(
                    "",
                    "",
                    "human",
                    "",
                    "",
                    &format!("{name}/kappa"),
                    &num(k.kappa),
                )?;
            }
        }
        let agreement = |a: &atlas_core::rq3::ReadoutAgreement| {
            [
                ("compared", a.compared.to_string()),
                ("agree", a.agree.to_string()),
                ("agreement", num(a.agreement)),
                ("automatic_missing", a.automatic_missing.to_string()),
            ]
        };
        for (metric, value) in agreement(&h.selection) {
            row(
                "",
                "",
                "human",
                "",
                "",
                &format!("selection/{metric}"),
                &value,
            )?;
        }
        for ra in &h.rationale {
            let key = ra.rule.key();
            let is_primary = (ra.rule == primary).to_string();
            for (metric, value) in agreement(&ra.agreement) {
                row(
                    key,
                    &is_primary,
                    "human",
                    "",
                    "",
                    &format!("rationale/{metric}"),
                    &value,
                )?;
            }
        }
    }
    w.flush()?;
    Ok(())
}
