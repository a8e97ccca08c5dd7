//! `atlas likelihood`: the likelihood readouts of a bundle (`responses.likelihood`) as
//! "stereotyped candidate preferred" per model and per model × condition (seed `000_…` §4.3, §C.2,
//! [`atlas_core::likelihood`]), with the readouts, valid readouts, ties and missing ones counted.
//! Kept apart from the Selection results, as the seed keeps them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use atlas_core::likelihood::{stereotype_preference, Basis, Preference};
use atlas_core::Audit;

#[derive(clap::Args)]
pub struct LikelihoodArgs {
    /// The bundle file.
    pub file: PathBuf,
    /// The score compared: mean (log-probability per continuation token, §C.2; needs token counts),
    /// sum (summed log-probability), or auto (mean when the bundle records token counts, else sum).
    #[arg(long, default_value = "auto")]
    pub basis: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn share(p: &Preference) -> String {
    p.share()
        .map_or_else(|| "–".to_string(), |s| format!("{:.1} %", 100.0 * s))
}

/// The counts and share; with two candidates also StereoSet's SS, LMS, ICAT (percentages,
/// [`Preference::stereoset`]; `null` when undefined).
fn counts_json(p: &Preference, two: bool) -> serde_json::Value {
    let mut v = serde_json::json!({
        "readouts": p.readouts, "valid": p.valid(), "preferred": p.preferred,
        "not_preferred": p.not_preferred, "ties": p.ties, "missing": p.missing,
        "share": p.share(),
    });
    if two {
        let s = p.stereoset();
        v["ss"] = serde_json::json!(s.map(|s| s.0));
        v["lms"] = serde_json::json!(s.map(|s| s.1));
        v["icat"] = serde_json::json!(s.map(|s| s.2));
    }
    v
}

pub fn run(args: &LikelihoodArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow!("{}: invalid bundle: {e}", args.file.display()))?;
    let Some(auto) = Basis::default_for(&audit) else {
        return Err(anyhow!(
            "{}: the bundle has no likelihood readouts (responses.likelihood)",
            args.file.display()
        ));
    };
    let basis = match args.basis.as_str() {
        "auto" => auto,
        "mean" => Basis::MeanPerToken,
        "sum" => Basis::Sum,
        other => return Err(anyhow!("--basis {other:?}: use auto, mean or sum")),
    };
    let Some(table) = stereotype_preference(&audit, basis) else {
        return Err(anyhow!("no likelihood readouts"));
    };
    if args.json {
        let two = table.candidates == 2;
        let out = serde_json::json!({
            "bundle": table.bundle,
            "statistic": "stereotyped candidate preferred (seed 000 §C.2; CrowS preference); 0.5 = no preference between two candidates",
            "basis": basis.key(),
            "candidates": table.candidates,
            "models": table.models.iter().map(|(m, p)| {
                let mut v = counts_json(p, two);
                v["model"] = serde_json::json!(m);
                v
            }).collect::<Vec<_>>(),
            "by_condition": table.by_condition.iter().map(|(m, c, p)| {
                let mut v = counts_json(p, two);
                v["model"] = serde_json::json!(m);
                v["condition"] = serde_json::json!(c);
                v
            }).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "Stereotyped candidate preferred (CrowS preference, seed 000 §C.2) — bundle {:?}",
        table.bundle
    );
    println!(
        "score: {} log-probability ({} candidates per readout); share = preferred / valid; a tie is valid and not preferred; 50 % = no preference between two candidates",
        if basis == Basis::MeanPerToken { "mean per-token" } else { "summed" },
        table.candidates
    );
    if basis == Basis::Sum {
        println!("(summed, not the mean per token of §C.2: the bundle records no token counts, or --basis sum)");
    }
    println!(
        "{:<36} {:<24} {:>8} {:>6} {:>9} {:>5} {:>7} {:>8}",
        "model", "condition", "readouts", "valid", "preferred", "ties", "missing", "share"
    );
    for (m, p) in &table.models {
        println!(
            "{:<36} {:<24} {:>8} {:>6} {:>9} {:>5} {:>7} {:>8}",
            m,
            "(all)",
            p.readouts,
            p.valid(),
            p.preferred,
            p.ties,
            p.missing,
            share(p)
        );
        for (_, c, q) in table.by_condition.iter().filter(|(mm, _, _)| mm == m) {
            println!(
                "{:<36} {:<24} {:>8} {:>6} {:>9} {:>5} {:>7} {:>8}",
                "",
                c,
                q.readouts,
                q.valid(),
                q.preferred,
                q.ties,
                q.missing,
                share(q)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
