//! `atlas overview`: the headline of a bundle — what it is, its size and provenance, the ranking by
//! the reference score (seed `000_…` Eq. 4) with 95 % statement-cluster bootstrap intervals, and the
//! headline findings with the view of the app that shows each — from the same
//! [`atlas_core::headline::headline`] the app's Overview reads, so both show the same numbers.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use atlas_core::format::{percent, thousands};
use atlas_core::headline::{headline, Headline, HeadlineOptions, Unit};
use atlas_core::{AbstainThreshold, Audit};
use clap::Args;

use crate::Policy;

/// `atlas overview BUNDLE [--policy P] [--reps N] [--seed S] [--json]`.
#[derive(Args)]
pub struct OverviewArgs {
    /// The bundle file.
    pub file: PathBuf,
    /// How repeats enter the numbers (all responses, the first repeat, or the unit majority).
    #[arg(long, value_enum, default_value_t = Policy::AllResponses)]
    pub policy: Policy,
    /// Statement-cluster bootstrap replicates of the ranking's 95 % intervals (0 = no intervals).
    #[arg(long, default_value_t = atlas_core::reweight::DEFAULT_BOOTSTRAP_REPS)]
    pub reps: usize,
    /// Seed of the bootstrap draws.
    #[arg(long, default_value_t = atlas_core::reweight::DEFAULT_SEED)]
    pub seed: u64,
    /// Print JSON (the `Headline` of atlas_core::headline) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `atlas overview`.
///
/// # Errors
/// An unreadable file or an invalid bundle (naming the file and the problem).
pub fn run(args: OverviewArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", args.file.display()))?;
    let h = headline(
        &audit,
        HeadlineOptions {
            policy: args.policy.into(),
            reps: args.reps,
            seed: args.seed,
            threshold: AbstainThreshold::default(),
        },
    );
    if args.json {
        println!("{}", serde_json::to_string_pretty(&h)?);
    } else {
        print_text(&h);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_text(h: &Headline) {
    let s = &h.size;
    let p = &h.provenance;
    println!("{}", h.sentence);
    println!();
    let mut size = format!(
        "Size: {} models, {} statements, {} conditions ({} with a Selection readout), {} templates, {} repeats; {} cells, {} responses ({} cells without a response, {} outside the design)",
        s.models,
        thousands(s.statements),
        s.conditions,
        s.selection_conditions,
        s.templates,
        s.repeats,
        thousands(s.cells),
        thousands(s.responses as usize),
        thousands(s.no_response as usize),
        thousands(s.outside_design as usize),
    );
    if let Some(j) = s.judged_responses {
        size.push_str(&format!(
            "; {} judged by {} judges",
            thousands(j as usize),
            s.judges
        ));
    }
    println!("{size}.");
    println!(
        "Provenance: bundle {}; source {}{}{}; license {}; produced by {}.",
        p.bundle_id,
        p.source,
        p.source_url
            .as_deref()
            .map_or(String::new(), |u| format!(" <{u}>")),
        p.commit
            .as_deref()
            .map_or(String::new(), |c| format!(", commit {c}")),
        p.license,
        p.produced_by
    );
    println!();
    println!(
        "Ranking by the reference score (Eq. 4, equal condition weights, repeat policy {}); {}; 95% intervals from {} statement-cluster bootstrap replicates, seed {}:",
        h.policy.key(),
        h.direction.describe(),
        thousands(h.intervals.reps),
        h.intervals.seed
    );
    println!(
        "{:>5}  {:<36} {:>8}  {:<18}",
        "rank", "model", "score", "95% interval"
    );
    for r in &h.ranking {
        println!(
            "{:>5}  {:<36} {:>8}  {:<18}{}",
            r.rank.map_or("—".to_string(), |k| format!("{k}")),
            format!("{} ({})", r.label, r.model),
            percent(r.score, 1),
            r.interval.map_or("—".to_string(), |[lo, hi]| format!(
                "{} – {}",
                percent(Some(lo), 1),
                percent(Some(hi), 1)
            )),
            if r.high_abstain {
                "  ⚠ high Abstain"
            } else {
                ""
            }
        );
    }
    println!();
    println!("Findings:");
    for f in &h.findings {
        let unit = match f.unit {
            Unit::Pp => "pp",
            Unit::Fraction => "fraction",
            Unit::Count => "count",
        };
        println!(
            "- {} [{} {}; ?view={}]",
            f.text,
            f.value.map_or("—".to_string(), |v| format!("{v:.6}")),
            unit,
            f.view
        );
    }
}
