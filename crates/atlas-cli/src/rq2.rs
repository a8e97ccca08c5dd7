//! `atlas analyze-rq2`: equal-budget audits (seed `000_…` §3.5, §5.3, D.1, D.2) on a bundle, printed
//! as the layouts of Tables 13, 14 and 15 (text), as JSON ([`atlas_core::rq2::Rq2Report`]) or as CSV
//! (one row per value). Every exclusion is counted per model and design: draws without a score
//! (`excluded_draws`) and partial drops, draws that lost a sampled condition (`partial_drop_draws`,
//! `dropped_conditions`, and the same for the repeat draws).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use atlas_core::rq2::{analyze_rq2, Metric, Rq2Options, Rq2Report, DEFAULT_SEED};
use atlas_core::{Audit, RepeatPolicy};
use clap::ValueEnum;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Csv,
}

/// Arguments of `atlas analyze-rq2`.
#[derive(clap::Args)]
pub struct AnalyzeRq2Args {
    /// The bundle file.
    pub bundle: PathBuf,
    /// Draws per design (seed D.2: 10,000).
    #[arg(long, default_value_t = 10_000)]
    pub draws: usize,
    /// Responses per model per audit (seed §3.5: 200).
    #[arg(long, default_value_t = 200)]
    pub budget: usize,
    /// Seed of every random stream (seed D.2: 20260722).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Repeat policy: all_responses, first_repeat or unit_majority (dashes accepted).
    #[arg(long, default_value = "all_responses", value_parser = parse_policy)]
    pub policy: RepeatPolicy,
    /// Reference condition weights, e.g. `benign=1,targeted=2`; unlisted conditions weigh 1
    /// (default: equal weights, Eq. 4). They change the reference only, not the designs.
    #[arg(long)]
    pub weights: Option<String>,
    /// Bootstrap replicates of the contrast intervals (seed D.2: 2,000).
    #[arg(long, default_value_t = 2_000)]
    pub bootstrap: usize,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub(crate) fn parse_policy(s: &str) -> Result<RepeatPolicy, String> {
    RepeatPolicy::from_key(&s.replace('-', "_")).ok_or_else(|| {
        format!("unknown repeat policy {s:?}: use all_responses, first_repeat or unit_majority")
    })
}

pub(crate) fn parse_weights(spec: &str, audit: &Audit) -> Result<Vec<f64>> {
    let ids = audit.condition_ids();
    let mut weights = vec![1.0; ids.len()];
    for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
        let (id, w) = part
            .split_once('=')
            .with_context(|| format!("weight {part:?}: expected CONDITION=WEIGHT"))?;
        let c = ids.iter().position(|x| *x == id.trim()).with_context(|| {
            format!(
                "weight {part:?}: no condition {:?} in the bundle",
                id.trim()
            )
        })?;
        let w: f64 = w
            .trim()
            .parse()
            .with_context(|| format!("weight {part:?}: not a number"))?;
        if !w.is_finite() || w < 0.0 {
            bail!("weight {part:?}: must be finite and not negative");
        }
        weights[c] = w;
    }
    Ok(weights)
}

/// Runs the subcommand.
pub fn run(args: AnalyzeRq2Args) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.bundle)
        .with_context(|| format!("reading {}", args.bundle.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", args.bundle.display()))?;
    let weights = args
        .weights
        .as_deref()
        .map(|w| parse_weights(w, &audit))
        .transpose()?;
    let options = Rq2Options {
        draws: args.draws,
        budget: args.budget,
        seed: args.seed,
        policy: args.policy,
        weights,
        bootstrap_reps: args.bootstrap,
        ..Rq2Options::default()
    };
    let report = analyze_rq2(&audit, &options)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Csv => write_csv(&report, &mut out)?,
        Format::Text => write!(out, "{}", render_text(&report))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The Table 13, 14 and 15 layouts as text — the same tables the app shows
/// ([`atlas_core::tables::rq2`]).
pub fn render_text(r: &Rq2Report) -> String {
    let (summary, tables) = atlas_core::tables::rq2(r);
    atlas_core::tables::render_text(&summary, &tables)
}

fn write_csv(r: &Rq2Report, out: &mut impl Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "bundle",
        "seed",
        "draws",
        "policy",
        "weights",
        "section",
        "design",
        "label",
        "conditions",
        "budget",
        "model",
        "metric",
        "value",
        "mc_se",
        "lo",
        "hi",
        "n",
    ])?;
    let weights = atlas_core::tables::weights_text(r);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    let common = [
        r.bundle.clone(),
        r.seed.to_string(),
        r.draws.to_string(),
        r.policy.key().to_string(),
        weights,
    ];
    let mut record = |fields: [String; 12]| -> Result<()> {
        let all: Vec<&str> = common
            .iter()
            .chain(fields.iter())
            .map(String::as_str)
            .collect();
        w.write_record(&all)?;
        Ok(())
    };
    for d in r.designs.iter().chain(&r.coverage) {
        let s = &d.summary;
        let metrics: [(&str, &Metric); 7] = [
            ("mae_pp", &s.mae_pp),
            ("rmse_pp", &s.rmse_pp),
            ("tau_b", &s.tau_b),
            ("inversion_rate", &s.inversion_rate),
            ("repeat_mad_pp", &s.repeat_mad_pp),
            ("repeat_tau_b", &s.repeat_tau_b),
            ("repeat_inversion_rate", &s.repeat_inversion_rate),
        ];
        let conditions = d.conditions.map_or(String::new(), |c| c.to_string());
        for (name, m) in metrics {
            record([
                "design".into(),
                d.design.into(),
                d.label.clone(),
                conditions.clone(),
                d.budget.to_string(),
                String::new(),
                name.into(),
                num(m.mean),
                num(m.mc_se),
                num(m.range.map(|x| x[0])),
                num(m.range.map(|x| x[1])),
                m.draws.to_string(),
            ])?;
        }
        for pm in &s.per_model {
            let values: [(&str, Option<f64>, Option<f64>); 11] = [
                ("reference", pm.reference, None),
                ("mean_score", pm.mean_score, None),
                ("mae_pp", pm.mae_pp, pm.mae_mc_se),
                ("rmse_pp", pm.rmse_pp, None),
                ("repeat_mad_pp", pm.repeat_mad_pp, None),
                ("excluded_draws", Some(pm.excluded_draws as f64), None),
                (
                    "excluded_repeat_draws",
                    Some(pm.excluded_repeat_draws as f64),
                    None,
                ),
                (
                    "partial_drop_draws",
                    Some(pm.partial_drop_draws as f64),
                    None,
                ),
                (
                    "dropped_conditions",
                    Some(pm.dropped_conditions as f64),
                    None,
                ),
                (
                    "partial_drop_repeat_draws",
                    Some(pm.partial_drop_repeat_draws as f64),
                    None,
                ),
                (
                    "dropped_repeat_conditions",
                    Some(pm.dropped_repeat_conditions as f64),
                    None,
                ),
            ];
            for (name, v, se) in values {
                record([
                    "model".into(),
                    d.design.into(),
                    d.label.clone(),
                    conditions.clone(),
                    d.budget.to_string(),
                    pm.model.clone(),
                    name.into(),
                    num(v),
                    num(se),
                    String::new(),
                    String::new(),
                    String::new(),
                ])?;
            }
        }
    }
    for c in &r.contrasts {
        record([
            "contrast".into(),
            String::new(),
            c.label.clone(),
            String::new(),
            r.budget.to_string(),
            String::new(),
            c.metric.into(),
            num(c.estimate),
            String::new(),
            num(c.interval.map(|x| x[0])),
            num(c.interval.map(|x| x[1])),
            c.replicates.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}
