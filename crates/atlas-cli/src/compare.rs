//! `atlas compare`: is model A really less biased than model B on this audit? The paired 2×2 of
//! Selection evidence on matched units with McNemar's exact and mid-p tests, the paired differences of
//! BER and of the Eq. 4 reference score with statement-cluster bootstrap intervals, the conditions
//! where the difference changes sign, Benjamini–Hochberg and Holm adjustments over all pairs, the
//! separable matrix, and rank bands with tie groups (`atlas_core::compare`; definitions in
//! `docs/statistics.md`, "Comparing models").

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use atlas_core::compare::{
    pairs_csv, rank_bands_csv, CompareError, CompareOptions, CompareReport, Comparison,
    PairComparison, DEFAULT_ALPHA,
};
use atlas_core::reweight::{DEFAULT_BOOTSTRAP_REPS, DEFAULT_SEED};
use atlas_core::Audit;
use clap::{Args, ValueEnum};

use crate::Policy;

/// Which table `--csv` writes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CsvTable {
    /// One row per model pair (the 2×2, tests, adjusted p-values, differences and intervals).
    Pairs,
    /// One row per model (rank and rank band, tie group).
    Bands,
}

/// `atlas compare BUNDLE [--a MODEL --b MODEL] [--policy P] [--weights … | --preset …] [--reps N]
/// [--seed S] [--alpha A] [--json | --csv [pairs|bands]]`.
#[derive(Args)]
pub struct CompareArgs {
    /// The bundle file.
    pub bundle: PathBuf,
    /// Model A (its id); with --b, only this pair is printed (its adjusted p-values still count every
    /// pair of the bundle).
    #[arg(long, requires = "b")]
    pub a: Option<String>,
    /// Model B (its id).
    #[arg(long, requires = "a")]
    pub b: Option<String>,
    /// How repeats enter the matched units and the scores (all responses, the first repeat, or the
    /// unit majority).
    #[arg(long, value_enum, default_value_t = Policy::AllResponses)]
    pub policy: Policy,
    /// Custom condition weights of the score, e.g. `benign=1,targeted=0.5` (as `atlas reweight`).
    #[arg(long, conflicts_with = "preset")]
    pub weights: Option<String>,
    /// A weight preset: `equal` (Eq. 4), `baseline`, `sweep:NAME` or `per-sweep:NAME=W,…` (as
    /// `atlas reweight`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Statement-cluster bootstrap replicates (at least 1).
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_REPS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub reps: u64,
    /// Seed of the bootstrap (stream 5 of it, the re-weighting view's stream).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Level of the separable matrix: a pair is separable when its Benjamini–Hochberg adjusted exact
    /// McNemar p is at most this (FDR).
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Print JSON (`atlas_core::compare::CompareReport`) instead of text.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: `pairs` (default) or `bands`.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "pairs")]
    pub csv: Option<CsvTable>,
    /// Print the computing time on standard error.
    #[arg(long)]
    pub timing: bool,
}

/// Runs `atlas compare`.
///
/// # Errors
/// An unreadable file, an invalid bundle, unknown models, bad weights or alpha (naming what).
pub fn run(args: CompareArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.bundle)
        .with_context(|| format!("reading {}", args.bundle.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", args.bundle.display()))?;
    let started = std::time::Instant::now();
    let options = CompareOptions {
        policy: args.policy.into(),
        reps: usize::try_from(args.reps).context("--reps is too large")?,
        seed: args.seed,
        alpha: args.alpha,
    };
    let comparison = Comparison::new(&audit, options)?;
    let weights = crate::reweight::weights_from_args(
        comparison.basis(),
        args.weights.as_deref(),
        args.preset.as_deref(),
    )?;
    let report = comparison.report(&weights)?;
    if args.timing {
        eprintln!(
            "compare: {} pairs, {} replicates in {:.1} ms (after reading the bundle)",
            report.pairs.len(),
            report.reps,
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    let selected: Vec<usize> = match (&args.a, &args.b) {
        (Some(a), Some(b)) => {
            let (ia, ib) = (comparison.model_index(a)?, comparison.model_index(b)?);
            if ia == ib {
                return Err(CompareError::SameModel(a.clone()).into());
            }
            report
                .pairs
                .iter()
                .position(|p| {
                    (p.model_a == *a && p.model_b == *b) || (p.model_a == *b && p.model_b == *a)
                })
                .into_iter()
                .collect()
        }
        _ => (0..report.pairs.len()).collect(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        if let [only] = selected[..] {
            if args.a.is_some() {
                let value = serde_json::json!({
                    "bundle": report.bundle,
                    "policy": report.policy,
                    "count_unit": report.count_unit,
                    "weights": report.weights,
                    "weights_description": report.weights_description,
                    "seed": report.seed,
                    "stream": report.stream,
                    "reps": report.reps,
                    "alpha": report.alpha,
                    "adjusted_over_pairs": report.pairs.len(),
                    "pair": report.pairs[only],
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
                return Ok(ExitCode::SUCCESS);
            }
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else if let Some(table) = args.csv {
        match table {
            CsvTable::Pairs => write!(out, "{}", pairs_csv(&report, &selected))?,
            CsvTable::Bands => write!(out, "{}", rank_bands_csv(&report))?,
        }
    } else {
        print_text(&mut out, &report, &selected, args.a.is_some())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn pp(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |x| format!("{x:+.2} pp"))
}

fn ci(v: Option<(f64, f64)>) -> String {
    v.map_or("—".to_string(), |(lo, hi)| {
        format!("[{lo:+.2}, {hi:+.2}]")
    })
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |x| format!("{:.2}%", 100.0 * x))
}

fn p_text(p: f64) -> String {
    if p == 0.0 {
        // Below the smallest positive double (~1e-308): the binomial tail underflows.
        "< 1e-300".to_string()
    } else if p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}

fn print_pair(out: &mut impl Write, r: &CompareReport, p: &PairComparison) -> Result<()> {
    let t = &p.table;
    writeln!(out, "{} (A) vs {} (B)", p.model_a, p.model_b)?;
    writeln!(
        out,
        "  matched units: {} {} valid for both; left out: {} invalid for A only, {} for B only, {} for both",
        t.matched(),
        r.count_unit,
        t.excluded.invalid_a_only,
        t.excluded.invalid_b_only,
        t.excluded.invalid_both
    )?;
    writeln!(
        out,
        "  Selection evidence (stereotype-consistent) 2×2: both {} · A only (b) {} · B only (c) {} · neither {}",
        t.both, t.a_only, t.b_only, t.neither
    )?;
    writeln!(
        out,
        "  McNemar exact p {} · mid-p {} · Benjamini–Hochberg (FDR) p {} · Holm p {} · separable at {}: {}",
        p_text(p.mcnemar.p_exact),
        p_text(p.mcnemar.p_mid),
        p_text(p.p_bh),
        p_text(p.p_holm),
        r.alpha,
        if p.separable { "yes" } else { "no" }
    )?;
    if let Some(note) = &p.mcnemar.note {
        writeln!(out, "  note: {note}")?;
    }
    writeln!(
        out,
        "  Selection BER on matched units: A {} · B {} · A − B {} 95% {}",
        pct(p.ber_a),
        pct(p.ber_b),
        pp(p.ber_diff_pp),
        ci(p.ber_diff_ci_pp)
    )?;
    writeln!(
        out,
        "  reference score (Eq. 4, weights {}): A {} · B {} · A − B {} 95% {}",
        r.weights_description,
        pct(p.score_a),
        pct(p.score_b),
        pp(p.score_diff_pp),
        ci(p.score_diff_ci_pp)
    )?;
    for c in &p.conditions {
        writeln!(
            out,
            "    condition {:<14} weight {:<6} BER A − B {:>10} · score A − B {:>10} 95% {}{}",
            c.condition,
            c.weight,
            pp(c.ber_diff_pp),
            pp(c.score_diff_pp),
            ci(c.score_diff_ci_pp),
            if c.sign_change {
                "  ← sign differs from the overall difference"
            } else {
                ""
            }
        )?;
    }
    if p.sign_changes.is_empty() {
        writeln!(
            out,
            "  no condition changes the sign of the score difference"
        )?;
    } else {
        writeln!(
            out,
            "  the score difference changes sign under: {}",
            p.sign_changes.join(", ")
        )?;
    }
    Ok(())
}

fn print_text(
    out: &mut impl Write,
    r: &CompareReport,
    selected: &[usize],
    one_pair: bool,
) -> Result<()> {
    writeln!(out, "{}", r.provenance())?;
    writeln!(
        out,
        "p-values adjusted over all {} pairs: {}",
        r.pairs.len(),
        r.adjustments.join(" and ")
    )?;
    for &i in selected {
        print_pair(out, r, &r.pairs[i])?;
    }
    if one_pair {
        return Ok(());
    }
    writeln!(
        out,
        "separable pairs (Benjamini–Hochberg adjusted exact McNemar p ≤ {}): {} of {}",
        r.alpha,
        r.pairs.iter().filter(|p| p.separable).count(),
        r.pairs.len()
    )?;
    for (i, row) in r.separable.iter().enumerate() {
        let cells: String = row
            .iter()
            .enumerate()
            .map(|(j, &s)| {
                if i == j {
                    '·'
                } else if s {
                    '■'
                } else {
                    '□'
                }
            })
            .collect();
        writeln!(out, "  {cells}  {} {}", i + 1, r.models[i])?;
    }
    writeln!(
        out,
        "  ■ separable · □ not separable (columns in the same model order)"
    )?;
    writeln!(
        out,
        "rank bands (95% of replicate ranks; {}; {}):",
        r.direction.describe(),
        r.direction.direction.rank_one()
    )?;
    for b in &r.rank_bands.bands {
        let band = match (b.lo, b.hi) {
            (Some(lo), Some(hi)) => format!("[{lo}, {hi}]"),
            _ => "—".to_string(),
        };
        writeln!(
            out,
            "  {:<36} rank {:>4}  band {:>12}  group {}",
            b.model,
            b.rank.map_or("—".to_string(), |x| x.to_string()),
            band,
            b.group.map_or("—".to_string(), |g| (g + 1).to_string())
        )?;
    }
    writeln!(
        out,
        "tie groups (models whose rank bands overlap, chained): {}",
        r.rank_bands
            .tie_groups
            .iter()
            .map(|g| format!("{{{}}}", g.join(", ")))
            .collect::<Vec<_>>()
            .join(" < ")
    )?;
    Ok(())
}
