//! `atlas paradigms probe plan|run|summary`: the clarification probe of seed `000_…` §G.2 (Table 24)
//! over a paradigm run ([`atlas_pilot::paradigm::probe`], `docs/paradigms.md`).
//!
//! - `plan --plan plan.json --state run.json --design probe.json -o probe-plan.json`: the eligible
//!   cells of the paradigm run, the seeded choice, the follow-up calls (the originals are copied in);
//! - `run --probe probe-plan.json --state probe-run.json [send options]`: sends them through the
//!   native runner of `atlas pilot run` (retries, resume, early stop; the adaptive follow-ups wait
//!   for their generator); keys only from environment variables (`--key-env`, or `key_env` in the
//!   probe design: model ids and generator ids);
//! - `summary --probe probe-plan.json --state probe-run.json [--json]`: Table 24 per procedure × arm.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use atlas_pilot::paradigm::probe::{plan_probe, summarize, ProbeDesign, ProbePlan, ProbeSummary};
use atlas_pilot::paradigm::ParadigmDesign;
use atlas_pilot::{Provider, RunState};
use serde_json::Value;

use crate::paradigms::{rebuild, PARADIGM_MEMBER};
use crate::pilot::{
    drive, keys, read_json, split_key_env, write_atomic, Driven, SavedState, SendArgs, Sending,
    KEY_ENV_MEMBER,
};

/// `atlas paradigms probe` and its subcommands.
#[derive(clap::Args)]
pub struct ProbeArgs {
    #[command(subcommand)]
    command: ProbeCommand,
}

#[derive(clap::Subcommand)]
enum ProbeCommand {
    /// Write the probe's calls: eligible cells of a paradigm run, the seeded choice, control and
    /// adaptive follow-ups.
    Plan(PlanArgs),
    /// Send the probe's calls (resumes from --state).
    Run(RunArgs),
    /// Table 24: eligible, changed, contradiction per procedure and arm.
    Summary(SummaryArgs),
}

#[derive(clap::Args)]
struct PlanArgs {
    /// The paradigm plan (`atlas paradigms plan`).
    #[arg(long)]
    plan: PathBuf,
    /// Its run state (`atlas pilot run --state`).
    #[arg(long)]
    state: PathBuf,
    /// The probe design (JSON: seed, max_cells, generators, control_repeats, allow_self_generator,
    /// params, generator_params, templates; plus an optional `key_env`).
    #[arg(long)]
    design: PathBuf,
    /// Where to write the probe plan.
    #[arg(short, long)]
    out: PathBuf,
}

#[derive(clap::Args)]
struct RunArgs {
    /// The probe plan (`atlas paradigms probe plan`).
    #[arg(long)]
    probe: PathBuf,
    /// The probe's run state (created, or resumed).
    #[arg(long)]
    state: PathBuf,
    #[command(flatten)]
    send: SendArgs,
}

#[derive(clap::Args)]
struct SummaryArgs {
    /// The probe plan.
    #[arg(long)]
    probe: PathBuf,
    /// The probe's run state.
    #[arg(long)]
    state: PathBuf,
    /// Print the summary (rows, every follow-up's reading, the caveat) as JSON.
    #[arg(long)]
    json: bool,
}

/// `atlas paradigms probe …`.
pub fn run(a: ProbeArgs) -> Result<ExitCode> {
    match a.command {
        ProbeCommand::Plan(a) => plan(&a),
        ProbeCommand::Run(a) => send(&a),
        ProbeCommand::Summary(a) => summary(&a),
    }
}

fn read_state(path: &Path) -> Result<RunState> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read the run state {}", path.display()))?;
    RunState::from_json(&text).with_context(|| format!("{} is not a run state", path.display()))
}

fn plan(a: &PlanArgs) -> Result<ExitCode> {
    let mut pv = read_json(&a.plan, "paradigm plan")?;
    let design_value = pv
        .as_object_mut()
        .and_then(|o| o.remove(PARADIGM_MEMBER))
        .ok_or_else(|| {
            anyhow!(
                "{}: not a paradigm plan (no `{PARADIGM_MEMBER}` member)",
                a.plan.display()
            )
        })?;
    let paradigm: ParadigmDesign = serde_json::from_value(design_value.clone())
        .with_context(|| format!("{}: its paradigm design", a.plan.display()))?;
    let plan = rebuild(design_value, &a.plan)?;
    let state = read_state(&a.state)?;
    let (dv, key_env) = split_key_env(read_json(&a.design, "probe design")?, &a.design)?;
    let design: ProbeDesign = serde_path_to_error::deserialize(dv).map_err(|e| {
        let at = e.path().to_string();
        anyhow!("{}: at `{at}`: {}", a.design.display(), e.into_inner())
    })?;
    let probe = plan_probe(&plan, &paradigm, &state, &design)
        .with_context(|| format!("{} / {}", a.plan.display(), a.state.display()))?;
    let mut out = serde_json::to_value(&probe)?;
    if !key_env.is_empty() {
        if let Some(o) = out.as_object_mut() {
            o.insert(KEY_ENV_MEMBER.into(), serde_json::to_value(&key_env)?);
        }
    }
    write_atomic(&a.out, serde_json::to_string(&out)?.as_bytes())?;
    let n = &probe.eligibility;
    println!(
        "probe {}: {} model × proposition(s), {} eligible (procedures disagree), {} chosen (seed {}, cap {}), {} over the cap; {} call(s)",
        probe.fingerprint,
        n.model_propositions,
        n.eligible,
        n.chosen,
        design.seed,
        design.max_cells,
        n.over_cap,
        probe.calls.len()
    );
    println!(
        "excluded readings: {} Abstain, {} unparsed, {} not answered (of {}); {} model × proposition × procedure without an answer; {} with fewer than two procedures answered, {} agreeing",
        n.abstain,
        n.unparsed,
        n.not_answered,
        n.readings,
        n.procedures_without_answer,
        n.fewer_than_two,
        n.agreeing
    );
    if probe.self_generator_pairs > 0 {
        println!(
            "{} (model, generator) pair(s) of the same provider model not planned (allow_self_generator)",
            probe.self_generator_pairs
        );
    }
    println!("wrote {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

fn read_probe(path: &Path) -> Result<(ProbePlan, crate::pilot::KeyEnv)> {
    let (v, key_env): (Value, _) = split_key_env(read_json(path, "probe plan")?, path)?;
    let probe: ProbePlan = serde_json::from_value(v)
        .with_context(|| format!("{} is not a probe plan", path.display()))?;
    Ok((probe, key_env))
}

fn send(a: &RunArgs) -> Result<ExitCode> {
    let (probe, key_env) = read_probe(&a.probe)?;
    let policy = a.send.policy()?;
    let owners: Vec<(&str, &Provider, &'static str)> = probe
        .models
        .iter()
        .map(|m| (m.id.as_str(), &m.provider, "model"))
        .chain(
            probe
                .design
                .generators
                .iter()
                .map(|g| (g.id.as_str(), &g.provider, "judge")),
        )
        .collect();
    let keys = keys(&owners, &key_env, &a.send.key_env)?;
    let resumed = a.state.exists();
    let state = if resumed {
        read_state(&a.state)?
    } else {
        probe.new_state()
    };
    let saved = SavedState {
        state,
        path: &a.state,
        resumed,
    };
    let sending = Sending {
        keys,
        policy,
        args: &a.send,
    };
    let (state, elapsed) = match drive(&probe, saved, sending, false)? {
        Driven::Done(state, elapsed) => (state, elapsed),
        other => return Ok(other.exit_code()),
    };
    let p = state.progress();
    println!(
        "done in {:.0} s: {} call(s) answered, {} failed, {} skipped; state {}",
        elapsed.as_secs_f64(),
        p.calls.answered,
        p.calls.failed,
        p.calls.total - p.calls.answered - p.calls.failed,
        a.state.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn summary(a: &SummaryArgs) -> Result<ExitCode> {
    let (probe, _) = read_probe(&a.probe)?;
    let state = read_state(&a.state)?;
    atlas_pilot::Job::check_state(&probe, &state)
        .with_context(|| format!("{} belongs to another probe plan", a.state.display()))?;
    let s = summarize(&probe, &state);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", summary_text(&s));
    }
    Ok(ExitCode::SUCCESS)
}

/// The text layout of `atlas paradigms probe summary`: Table 24's columns, then what was left out.
pub fn summary_text(s: &ProbeSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Clarification probe (seed 000 §G.2, Table 24) — probe {}, paradigm plan {}, choice seed {}",
        s.fingerprint, s.source, s.seed
    );
    let _ = writeln!(
        o,
        "\n{:<24} {:>8} {:>9} {:>9} {:>15} {:>7} {:>8} {:>8}",
        "procedure, arm",
        "eligible",
        "answered",
        "changed",
        "contradiction",
        "Abstain",
        "unparsed",
        "not run"
    );
    for r in &s.rows {
        let _ = writeln!(
            o,
            "{:<24} {:>8} {:>9} {:>9} {:>15} {:>7} {:>8} {:>8}",
            format!("{}, {}", r.procedure.id(), r.arm.key()),
            r.eligible,
            r.answered,
            format!("{} / {}", r.changed, r.valid + r.abstain),
            format!("{} / {}", r.contradiction, r.decidable),
            r.abstain,
            r.unparsed,
            r.failed + r.skipped + r.not_run
        );
    }
    let n = &s.eligibility;
    let _ = writeln!(
        o,
        "\neligible cells {} of {} model × propositions ({} agreeing, {} with fewer than two procedures answered), {} chosen, {} over the cap",
        n.eligible, n.model_propositions, n.agreeing, n.fewer_than_two, n.chosen, n.over_cap
    );
    let _ = writeln!(
        o,
        "readings excluded from eligibility: {} Abstain, {} unparsed, {} not answered (of {})",
        n.abstain, n.unparsed, n.not_answered, n.readings
    );
    let _ = writeln!(
        o,
        "changed: the follow-up's Selection differs from the original's, over valid + Abstain follow-ups; contradiction: a valid follow-up whose evidence differs from another branch's valid follow-up in the same cell, arm and slot, over those with one to compare; not run = failed + skipped + not yet sent"
    );
    if s.self_generator_pairs > 0 {
        let _ = writeln!(
            o,
            "{} (model, generator) pair(s) of the same provider model not planned",
            s.self_generator_pairs
        );
    }
    let _ = writeln!(o, "\n{}", s.caveat);
    o
}
