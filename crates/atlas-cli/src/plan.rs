//! `atlas plan-audit`: plan an audit on a bundle used as the finite reference (issue 17 §2;
//! [`atlas_core::plan`]): per design, the predicted score MAE (mean, 95 % range, 95th percentile),
//! RMSE, τ-b, inversion rate and a chosen pair's probability of the right order, over a budget grid,
//! and the smallest budget per design meeting each target. Text (default) or `--json`
//! ([`atlas_core::plan::PlanReport`]); `--timing` adds the wall time of every estimate (stderr).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use atlas_core::plan::{
    parse_design, EstimateOptions, PlanOptions, PlanReport, Planner, Targets, DEFAULT_BUDGETS,
    DEFAULT_DRAWS,
};
use atlas_core::rq2::{Design, DEFAULT_SEED};
use atlas_core::{Audit, RepeatPolicy};

use crate::rq2::{parse_policy, parse_weights};

/// Arguments of `atlas plan-audit`.
#[derive(clap::Args)]
pub struct PlanAuditArgs {
    /// The bundle file (the finite reference).
    pub bundle: PathBuf,
    /// Designs: concentrated, srs, stratified, balanced, coverage:K (K of the reference
    /// conditions); repeat the flag or separate by commas. Default: concentrated, srs, stratified.
    #[arg(long = "design", value_delimiter = ',', value_parser = parse_design)]
    pub designs: Vec<Design>,
    /// One budget (responses per model per audit).
    #[arg(long, conflicts_with = "budgets")]
    pub budget: Option<usize>,
    /// A budget grid, e.g. 20,50,100,200 (default 20,30,50,75,100,150,200,300,400,500,750,1000,1500,2000).
    #[arg(long, value_delimiter = ',')]
    pub budgets: Vec<usize>,
    /// Models to score (ids, comma-separated; default: every model of the bundle).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Draws per estimate.
    #[arg(long, default_value_t = DEFAULT_DRAWS)]
    pub draws: usize,
    /// Seed of every stream (the same as analyze-rq2's, so estimates equal RQ2's draws).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Repeat policy: all_responses, first_repeat or unit_majority (dashes accepted).
    #[arg(long, default_value = "all_responses", value_parser = parse_policy)]
    pub policy: RepeatPolicy,
    /// Reference condition weights, e.g. `benign=1,targeted=2` (unlisted conditions weigh 1).
    #[arg(long)]
    pub weights: Option<String>,
    /// Target: score MAE at most this many percentage points in 95 % of audits.
    #[arg(long)]
    pub target_mae: Option<f64>,
    /// Target: mean inversion rate at most this many percent of model pairs.
    #[arg(long)]
    pub target_inversions: Option<f64>,
    /// A pair of model ids A,B whose order the audit should get right.
    #[arg(long)]
    pub pair: Option<String>,
    /// Target: the pair's order right in at least this many percent of audits.
    #[arg(long, requires = "pair")]
    pub target_pair: Option<f64>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the wall time of each estimate (min and median of 7 runs) to stderr, after the plan.
    #[arg(long)]
    pub timing: bool,
}

fn read_bundle(path: &PathBuf) -> Result<Audit> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Audit::from_json(&text).map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", path.display()))
}

/// Runs the subcommand.
pub fn run(args: PlanAuditArgs) -> Result<ExitCode> {
    let audit = read_bundle(&args.bundle)?;
    let weights = args
        .weights
        .as_deref()
        .map(|w| parse_weights(w, &audit))
        .transpose()?;
    let pair = match args.pair.as_deref() {
        None => None,
        Some(p) => {
            let Some((a, b)) = p.split_once(',') else {
                bail!("--pair {p:?}: expected two model ids separated by a comma, A,B");
            };
            Some((a.trim().to_string(), b.trim().to_string()))
        }
    };
    let defaults = PlanOptions::default();
    let options = PlanOptions {
        designs: if args.designs.is_empty() {
            defaults.designs.clone()
        } else {
            args.designs.clone()
        },
        budgets: match args.budget {
            Some(b) => vec![b],
            None if args.budgets.is_empty() => DEFAULT_BUDGETS.to_vec(),
            None => args.budgets.clone(),
        },
        models: (!args.models.is_empty()).then(|| args.models.clone()),
        draws: args.draws,
        seed: args.seed,
        policy: args.policy,
        weights,
        pair,
        targets: Targets {
            mae_pp: args.target_mae,
            inversion_pct: args.target_inversions,
            pair_pct: args.target_pair,
        },
        ..defaults
    };
    let started = Instant::now();
    let planner = Planner::new(&audit, options.policy, options.weights.as_deref())?;
    let built = started.elapsed();
    let report = planner
        .plan(&options)
        .with_context(|| format!("planning an audit of {}", args.bundle.display()))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", render_text(&report))?;
    }
    out.flush()?;
    if args.timing {
        timing(&planner, &options, &report, built.as_secs_f64())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs per estimate of `--timing` (the minimum is the least disturbed by other processes).
const TIMING_RUNS: usize = 7;

/// `--timing`: each estimate of the plan again, timed alone [`TIMING_RUNS`] times (stderr), with the
/// matrix build time; each run must equal the plan's estimate.
fn timing(planner: &Planner, options: &PlanOptions, report: &PlanReport, built: f64) -> Result<()> {
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "timing: observable matrix built in {:.1} ms; one estimate = {} draws, {} models",
        1e3 * built,
        options.draws,
        report.models.len()
    )?;
    let models: Vec<usize> = report
        .models
        .iter()
        .map(|m| planner.model_index(m))
        .collect::<Result<_, _>>()?;
    let pair = match &options.pair {
        Some((a, b)) => Some((planner.model_index(a)?, planner.model_index(b)?)),
        None => None,
    };
    let est = EstimateOptions {
        draws: options.draws,
        seed: options.seed,
        level: options.level,
        models: Some(models),
        pair,
    };
    for (design, plan) in options.designs.iter().zip(&report.designs) {
        for e in &plan.estimates {
            let mut times = Vec::with_capacity(TIMING_RUNS);
            for _ in 0..TIMING_RUNS {
                let t0 = Instant::now();
                let again = planner.estimate(*design, e.requested_budget, &est)?;
                times.push(1e3 * t0.elapsed().as_secs_f64());
                if &again != e {
                    bail!(
                        "{} at {}: a timed estimate differs from the plan's",
                        plan.design,
                        e.budget
                    );
                }
            }
            times.sort_by(f64::total_cmp);
            writeln!(
                err,
                "timing: {:<14} budget {:>5}: min {:8.2} ms, median {:8.2} ms of {TIMING_RUNS}",
                plan.design,
                e.budget,
                times[0],
                times[TIMING_RUNS / 2]
            )?;
        }
    }
    Ok(())
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.digits$}"))
}

/// The plan as text: the header naming bundle, seed, draws, policy, weights, models and designs; one
/// table per design (the curve); the answers.
pub fn render_text(r: &PlanReport) -> String {
    let mut s = String::new();
    let weights = r.weights.as_ref().map_or("equal (Eq. 4)".to_string(), |w| {
        w.iter()
            .map(|x| format!("{x}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    s += &format!(
        "Plan an audit of bundle {}: seed {}, {} draws per estimate, policy {}, condition weights {}\n",
        r.bundle,
        r.seed,
        r.draws,
        r.policy.key(),
        weights
    );
    s += &format!(
        "finite reference: {} reference conditions, {} statements, {} observable cells; models: {}\n",
        r.reference_conditions,
        r.statements,
        r.observable_cells,
        r.models.join(", ")
    );
    s += &format!(
        "designs: {}; budgets (responses per model){}: {}\n",
        r.designs
            .iter()
            .map(|d| d.design.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        if r.default_grid { ", default grid" } else { "" },
        r.budgets
            .iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    s += &format!("note: {}\n", r.note);
    let pct = r.level * 100.0;
    for d in &r.designs {
        s += &format!(
            "\n{} (stream {})\n| budget | score MAE (pp) | {pct:.0} % range (pp) | MAE in 95 % of audits ≤ (pp) | RMSE (pp) | τ-b | inversions (%) |",
            d.design, d.audit_stream
        );
        if let Some((a, b)) = &r.pair {
            s += &format!(" {a} vs {b} right (%) |");
        }
        s += "\n";
        for e in &d.estimates {
            s += &format!(
                "| {} | {} | {}–{} | {} | {} | {} | {} |",
                e.budget,
                num(e.mae_pp.mean, 2),
                num(e.mae_pp.range.map(|x| x[0]), 2),
                num(e.mae_pp.range.map(|x| x[1]), 2),
                num(e.mae_pp_p95, 2),
                num(e.rmse_pp.mean, 2),
                num(e.tau_b.mean, 3),
                num(e.inversion_rate.mean.map(|x| 100.0 * x), 2),
            );
            if let Some(p) = &e.pair {
                s += &format!(" {} |", num(p.probability.map(|x| 100.0 * x), 1));
            }
            s += "\n";
        }
        for k in &d.skipped {
            s += &format!("  budget {} skipped: {}\n", k.budget, k.reason);
        }
    }
    if !r.answers.is_empty() {
        s += "\nsmallest budget per design (searched on the budgets above: the smallest at which the target holds there and at every larger budget)\n";
        for a in &r.answers {
            s += &format!("{}:\n", a.description);
            for d in &a.per_design {
                s += &format!("  {}: {}\n", d.design, d.answer);
            }
        }
    }
    s
}
