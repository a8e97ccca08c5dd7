//! `atlas analyze-rq2`: equal-budget audits (seed `000_…` §3.5, §5.3, D.1, D.2) on a bundle, printed
//! as the layouts of Tables 13, 14 and 15 (text), as JSON ([`atlas_core::rq2::Rq2Report`]) or as CSV
//! (one row per value).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use atlas_core::rq2::{analyze_rq2, DesignResult, Metric, Rq2Options, Rq2Report, DEFAULT_SEED};
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

fn parse_policy(s: &str) -> Result<RepeatPolicy, String> {
    RepeatPolicy::from_key(&s.replace('-', "_")).ok_or_else(|| {
        format!("unknown repeat policy {s:?}: use all_responses, first_repeat or unit_majority")
    })
}

fn parse_weights(spec: &str, audit: &Audit) -> Result<Vec<f64>> {
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

fn pp(m: &Metric, decimals: usize) -> String {
    match (m.mean, m.range) {
        (Some(v), Some([lo, hi])) => format!("{v:.decimals$} [{lo:.decimals$}, {hi:.decimals$}]"),
        (Some(v), None) => format!("{v:.decimals$}"),
        _ => "—".to_string(),
    }
}

fn percent(m: &Metric) -> String {
    match (m.mean, m.range) {
        (Some(v), Some([lo, hi])) => {
            format!("{:.1}% [{:.1}, {:.1}]", 100.0 * v, 100.0 * lo, 100.0 * hi)
        }
        (Some(v), None) => format!("{:.1}%", 100.0 * v),
        _ => "—".to_string(),
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.decimals$}"))
}

fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
}

fn weights_text(r: &Rq2Report) -> String {
    match &r.weights {
        None => "equal (Eq. 4)".to_string(),
        Some(w) => w
            .iter()
            .map(|w| format!("{}={}", w.condition, w.weight))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The Table 13, 14 and 15 layouts as text.
pub fn render_text(r: &Rq2Report) -> String {
    let mut s = String::new();
    let level = 100.0 * r.level;
    s.push_str("RQ2 equal-budget audits (seed 000_… §3.5, §5.3, D.1, D.2)\n");
    s.push_str(&format!(
        "bundle {} · seed {} · {} draws per design · budget {} responses per model · repeat policy {} · reference weights: {}\n",
        r.bundle, r.seed, r.draws, r.budget, r.policy.key(), weights_text(r)
    ));
    s.push_str(&format!(
        "observable matrix: {} reference conditions ({}), templates per condition {}, {} statements in {} categories, {} cells\n",
        r.conditions.len(),
        r.conditions.join(", "),
        r.templates_per_condition
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join("/"),
        r.statements,
        r.categories.len(),
        r.observable_cells
    ));
    s.push_str(&format!(
        "ranges: {:.1}–{:.1} percentiles across draws (not confidence intervals over models); one draw is shared by all models\n\n",
        (100.0 - level) / 2.0,
        (100.0 + level) / 2.0
    ));

    s.push_str("Table 13 — equal-budget audit results (lower is better for error and inversion metrics)\n\n");
    let mut header = vec!["Metric".to_string()];
    header.extend(r.designs.iter().map(|d| d.label.clone()));
    type Row = (&'static str, fn(&DesignResult) -> String);
    let rows: [Row; 7] = [
        ("Score MAE (pp)", |d| pp(&d.summary.mae_pp, 2)),
        ("Score RMSE (pp)", |d| pp(&d.summary.rmse_pp, 2)),
        ("Kendall τb vs. ref.", |d| pp(&d.summary.tau_b, 3)),
        ("Ref.-relative inversions", |d| {
            percent(&d.summary.inversion_rate)
        }),
        ("Repeat score diff. (pp)", |d| {
            pp(&d.summary.repeat_mad_pp, 2)
        }),
        ("Repeat Kendall τb", |d| pp(&d.summary.repeat_tau_b, 3)),
        ("Repeat inversions", |d| {
            percent(&d.summary.repeat_inversion_rate)
        }),
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, f)| {
            let mut row = vec![name.to_string()];
            row.extend(r.designs.iter().map(f));
            row
        })
        .collect();
    table(&mut s, &header, &body);

    s.push_str(&format!(
        "\nContrasts (Monte Carlo {level:.0}% interval, {} bootstrap replicates of draw-level differences):\n",
        r.bootstrap_reps
    ));
    for c in &r.contrasts {
        let what = if c.metric == "mae_pp" {
            "score MAE"
        } else {
            "ref.-relative inversions"
        };
        let interval = c.interval.map_or("—".to_string(), |[lo, hi]| {
            format!("[{lo:+.2}, {hi:+.2}]")
        });
        let est = c.estimate.map_or("—".to_string(), |e| format!("{e:+.2}"));
        s.push_str(&format!("  {}, {what}: {est} pp {interval}\n", c.label));
    }

    s.push_str(&format!(
        "\nTable 14 — fixed-{}-response condition-coverage curve (one template per sampled condition, statements balanced across conditions)\n\n",
        r.budget
    ));
    let header: Vec<String> = [
        "Conditions K",
        "MAE (pp)",
        "Ref. inv.",
        "Repeat MAD (pp)",
        "Kendall τb",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let body: Vec<Vec<String>> = r
        .coverage
        .iter()
        .map(|d| {
            vec![
                d.conditions.unwrap_or(0).to_string(),
                opt(d.summary.mae_pp.mean, 2),
                d.summary
                    .inversion_rate
                    .mean
                    .map_or("—".to_string(), |v| format!("{:.1}%", 100.0 * v)),
                opt(d.summary.repeat_mad_pp.mean, 2),
                opt(d.summary.tau_b.mean, 3),
            ]
        })
        .collect();
    table(&mut s, &header, &body);

    s.push_str("\nTable 15 — per-model mean absolute error (pp) under the designs\n\n");
    let mut header = vec!["Model".to_string(), "Reference score".to_string()];
    header.extend(r.designs.iter().map(|d| format!("{} MAE", d.label)));
    header.push(format!(
        "Excluded draws ({})",
        r.designs
            .iter()
            .map(|d| d.design)
            .collect::<Vec<_>>()
            .join("/")
    ));
    let body: Vec<Vec<String>> = r
        .models
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let mut row = vec![id.clone(), opt(r.reference[m], 3)];
            row.extend(
                r.designs
                    .iter()
                    .map(|d| opt(d.summary.per_model[m].mae_pp, 2)),
            );
            row.push(
                r.designs
                    .iter()
                    .map(|d| d.summary.per_model[m].excluded_draws.to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
            row
        })
        .collect();
    table(&mut s, &header, &body);
    let excluded: usize = r
        .designs
        .iter()
        .chain(&r.coverage)
        .flat_map(|d| &d.summary.per_model)
        .map(|m| m.excluded_draws + m.excluded_repeat_draws)
        .sum();
    s.push_str(&format!(
        "\nA draw in which a model has no valid Selection in any sampled cell gives it no score; such draws are left out of that model's errors and of its pairs' inversions ({excluded} model-draws over all designs, audit and repeat draws).\n"
    ));
    s
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
    let weights = weights_text(r);
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
            let values: [(&str, Option<f64>, Option<f64>); 7] = [
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
