//! `atlas reweight`: the condition re-weighting of the reference score (seed `000_…` Eq. 4) —
//! the numbers of the app's re-weighting panel, natively: per model the weighted score, Δ against equal
//! weights, rank and equal-weight rank, Kendall τ-b and the inverted pairs against the equal-weight
//! ranking, and statement-cluster bootstrap 95% intervals (`atlas_core::reweight`).
//!
//! `--format csv` writes [`atlas_core::tables::reweight_csv`], byte for byte what the app's "CSV" export
//! of the re-weighting table writes for the same bundle, policy, weights and bootstrap (all models
//! shown); `--format json` writes [`atlas_core::tables::reweight_json`], the `reweighting` part of the
//! app's JSON export.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use atlas_core::reweight::{
    ConditionWeights, ReweightBasis, ReweightBootstrap, WeightsRequest, DEFAULT_BOOTSTRAP_REPS,
    DEFAULT_SEED,
};
use atlas_core::tables::{reweight_csv, reweight_json, ReweightIntervals};
use atlas_core::{Audit, RepeatPolicy};
use clap::ValueEnum;

/// Output format of `atlas reweight`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Csv,
}

/// Arguments of `atlas reweight`.
#[derive(clap::Args)]
pub struct ReweightArgs {
    /// The bundle file.
    pub bundle: PathBuf,
    /// Repeat policy: all_responses, first_repeat or unit_majority (dashes accepted).
    #[arg(long, default_value = "all_responses", value_parser = parse_policy)]
    pub policy: RepeatPolicy,
    /// Custom condition weights, e.g. `benign=1,targeted=0.5`; unlisted conditions keep their
    /// equal (Eq. 4) weight: 1 in the reference, 0 outside it.
    #[arg(long, conflicts_with = "preset")]
    pub weights: Option<String>,
    /// A preset: `equal` (Eq. 4), `baseline` (baseline sweep only), `sweep:NAME` (one sweep only) or
    /// `per-sweep:NAME=W,…` (one weight per sweep, spread equally over its conditions; unlisted
    /// sweeps weigh 1).
    #[arg(long)]
    pub preset: Option<String>,
    /// Statement-cluster bootstrap replicates of the 95% intervals (0 = no intervals).
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_REPS)]
    pub bootstrap: usize,
    /// Seed of the bootstrap (stream 5 of it).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Flag scores that average a cell (model × weighted condition) whose Abstain share is above this
    /// fraction (seed 000 §B.2: an Abstain is missing; docs/statistics.md). The app's export uses the
    /// default.
    #[arg(long, default_value_t = atlas_core::abstain::DEFAULT_ABSTAIN_THRESHOLD, value_parser = crate::stats::parse_threshold)]
    pub abstain_threshold: f64,
}

fn parse_policy(s: &str) -> Result<RepeatPolicy, String> {
    RepeatPolicy::from_key(&s.replace('-', "_")).ok_or_else(|| {
        format!("unknown repeat policy {s:?}: use all_responses, first_repeat or unit_majority")
    })
}

/// The weights that `--weights` or `--preset` ask for (equal weights without either), read and matched
/// by [`WeightsRequest`] — the rule of the app's re-weighting panel too.
///
/// # Errors
/// An unknown preset, condition or sweep, a malformed number, and every validation error of
/// [`ConditionWeights`] (naming the condition): [`atlas_core::reweight::WeightSpecError`].
pub fn weights_from_args(
    basis: &ReweightBasis,
    weights: Option<&str>,
    preset: Option<&str>,
) -> Result<ConditionWeights> {
    let request = match (weights, preset) {
        (Some(spec), _) => WeightsRequest::parse_conditions(spec)?,
        (None, Some(preset)) => WeightsRequest::parse_preset(preset)?,
        (None, None) => WeightsRequest::Equal,
    };
    Ok(request.weights(basis)?)
}

/// Runs the subcommand.
pub fn run(args: ReweightArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.bundle)
        .with_context(|| format!("reading {}", args.bundle.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", args.bundle.display()))?;
    let units = atlas_core::stats::unit_counts(&audit, args.policy);
    let mut basis = ReweightBasis::new(&audit, &units);
    basis.set_abstain_threshold(atlas_core::AbstainThreshold::new(args.abstain_threshold)?);
    let threshold = basis.abstain_threshold();
    let weights = weights_from_args(&basis, args.weights.as_deref(), args.preset.as_deref())?;
    let r = basis.reweight(&weights)?;
    let boot = if args.bootstrap > 0 {
        Some(ReweightBootstrap::run(
            &audit,
            &units,
            args.bootstrap,
            args.seed,
        )?)
    } else {
        None
    };
    let intervals = boot
        .as_ref()
        .map(|b| b.intervals(&weights, 0.95))
        .transpose()?;
    let intervals = intervals.as_deref().map(|i| ReweightIntervals {
        seed: args.seed,
        reps: args.bootstrap,
        intervals: i,
    });
    let bundle = &audit.metadata().id;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Csv => {
            let all: Vec<usize> = (0..basis.models().len()).collect();
            write!(
                out,
                "{}",
                reweight_csv(bundle, &basis, &weights, &r, intervals, &all)
            )?;
        }
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&reweight_json(bundle, &basis, &weights, &r, intervals))?
        )?,
        Format::Text => {
            let pct =
                |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{:.2}%", 100.0 * x));
            let rank = |v: Option<f64>| v.map_or("—".to_string(), |x| x.to_string());
            writeln!(
                out,
                "bundle {bundle}  repeat policy {}  weights: {}",
                basis.policy().key(),
                weights.describe(&basis)
            )?;
            writeln!(
                out,
                "ranking of the weighted score: {}; {}",
                basis.direction().describe(),
                basis.direction().direction.rank_one()
            )?;
            writeln!(
                out,
                "{:<36} {:>9} {:>19} {:>10} {:>6} {:>10}  Abstain",
                "model", "score", "95% interval", "Δ vs eq.", "rank", "eq. rank"
            )?;
            let equal_ranks = basis.equal_ranks();
            for (m, id) in basis.models().iter().enumerate() {
                let ci = intervals
                    .and_then(|i| i.intervals.get(m).copied().flatten())
                    .map_or("—".to_string(), |i| {
                        format!("[{:.2}, {:.2}]", 100.0 * i.lo, 100.0 * i.hi)
                    });
                let abstain = r.abstain.get(m).map_or_else(String::new, |a| {
                    let pooled = a
                        .share
                        .map_or("—".to_string(), atlas_core::abstain::share_text);
                    let flag = a.flag_text(threshold);
                    if flag.is_empty() {
                        pooled
                    } else {
                        format!("{pooled} · {flag}")
                    }
                });
                writeln!(
                    out,
                    "{id:<36} {:>9} {ci:>19} {:>10} {:>6} {:>10}  {abstain}",
                    pct(r.scores[m]),
                    r.delta_pp[m].map_or("—".to_string(), |d| format!("{d:+.2} pp")),
                    rank(r.ranks[m]),
                    rank(equal_ranks[m])
                )?;
            }
            let ids = basis.models();
            let inverted: Vec<String> = r
                .inverted_pairs
                .iter()
                .map(|&(a, b)| format!("{} – {}", ids[a], ids[b]))
                .collect();
            writeln!(
                out,
                "Kendall τ-b vs equal weights: {} · inverted pairs: {} of {} · max rank displacement: {}",
                r.tau_b.map_or("—".to_string(), |t| format!("{t:.3}")),
                r.inversions.inverted,
                r.inversions.pairs,
                rank(r.max_displacement)
            )?;
            if !inverted.is_empty() {
                writeln!(out, "inverted: {}", inverted.join(", "))?;
            }
            let flagged = r
                .abstain
                .iter()
                .zip(&r.ranks)
                .filter(|(a, rank)| rank.is_some() && a.is_flagged(threshold))
                .count();
            writeln!(
                out,
                "{} in a weighted cell (the BiAxisBias paper §B.2: an Abstain is missing): {flagged} of {} ranks rest on a flagged cell; Abstain column = pooled share over the weighted cells",
                atlas_core::abstain::FLAG.to_string() + " = " + &threshold.describe(),
                r.ranks.iter().filter(|x| x.is_some()).count()
            )?;
            match &boot {
                Some(b) => writeln!(
                    out,
                    "intervals: 95% statement-cluster bootstrap, seed {}, {} replicates (stream {})",
                    b.seed(),
                    b.reps(),
                    atlas_core::reweight::BOOTSTRAP_STREAM
                )?,
                None => writeln!(out, "intervals: none (--bootstrap 0)")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
