//! `atlas propositions` and `atlas paradigms`: propositions from CrowS-Pairs, BBQ or your own JSON,
//! rendered as the four task paradigms of seed `000_…` Table 10 (`docs/paradigms.md`).
//!
//! - `atlas propositions --from crows|bbq|json|bundle FILE… [--limit N] [--seed S] -o props.json` converts
//!   (and validates) a proposition set;
//! - `atlas paradigms plan --design D.json [--propositions props.json] -o plan.json` writes a pilot
//!   plan whose conditions are the procedures; `atlas pilot run --plan plan.json --state run.json` runs
//!   it and `atlas pilot bundle` makes the bundle (the plan carries its paradigm design in the member
//!   [`PARADIGM_MEMBER`], from which `atlas pilot` rebuilds and checks it);
//! - `atlas paradigms score --plan plan.json --log scores.jsonl [--bundle B.json -o OUT.json]
//!   [--json summary.json]` scores the StereoSet- and CrowS-style candidates by teacher-forced mean
//!   token log-probability (`/completions` with `echo`, §C.2), logs every provider response, prints
//!   SS / LMS / ICAT / CrowS preference per model, and writes them into the bundle's likelihood
//!   readouts; `--from-log` recomputes from an existing log without calling anything; it refuses a
//!   server whose echoed log-probabilities are shifted by one token
//!   ([`atlas_pilot::paradigm::likelihood::check_alignment`]);
//! - `atlas paradigms across BUNDLE [--json]` runs [`atlas_core::across`] (seed §5.2, Table 11);
//! - `atlas paradigms probe plan|run|summary` is the clarification probe (seed §G.2, Table 24;
//!   `crate::probe`).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use atlas_core::across::{across_procedures, AcrossOptions};
use atlas_core::Audit;
use atlas_pilot::paradigm::likelihood::{
    attach, check_alignment, echo_alignment, items, score_lines, scoring_request, EchoAlignment,
    ScoringLine, SCORED_DESCRIPTION,
};
use atlas_pilot::paradigm::{build_paradigm_plan, ParadigmDesign};
use atlas_pilot::proposition::{
    from_bbq_jsonl, from_bundle, from_crows_csv, parse_propositions, sample, validate_set,
    Converted,
};
use atlas_pilot::{AttemptOutcome, Plan, SecretKey};
use serde_json::{json, Value};

use crate::pilot::{agent, read_json, send, write_atomic};

/// Decidable scoring responses per model after which `score` checks the server's echo alignment
/// for the first time ([`check_alignment`]).
const ALIGNMENT_PROBE: usize = 4;

/// The member of a plan file that holds its paradigm design.
pub const PARADIGM_MEMBER: &str = "paradigm";

/// Where propositions come from.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum From {
    /// CrowS-Pairs `crows_pairs_anonymized.csv`.
    Crows,
    /// BBQ `data/*.jsonl` files.
    Bbq,
    /// A proposition set (JSON array or JSON Lines).
    Json,
    /// A bundle whose statement levels carry the proposition fields (a task-paradigm pilot's bundle,
    /// or flat `counter` / `counter_group` attributes).
    Bundle,
}

/// Arguments of `atlas propositions`.
#[derive(clap::Args)]
pub struct PropositionsArgs {
    /// The source format.
    #[arg(long, value_enum)]
    pub from: From,
    /// Input files (several BBQ category files are concatenated in the order given).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// At most this many propositions, drawn uniformly without replacement (kept in file order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Seed of --limit.
    #[arg(long, default_value_t = 20_260_716)]
    pub seed: u64,
    /// Output file (JSON array).
    #[arg(short, long)]
    pub out: PathBuf,
}

/// `atlas propositions`.
pub fn propositions(a: &PropositionsArgs) -> Result<ExitCode> {
    let mut all = Converted::default();
    for f in &a.files {
        let text = fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        let c = match a.from {
            From::Crows => from_crows_csv(&text),
            From::Bbq => from_bbq_jsonl(&text),
            From::Json => parse_propositions(&text).map(|propositions| Converted {
                propositions,
                ..Converted::default()
            }),
            From::Bundle => {
                let file: atlas_core::BundleFile = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not a bundle", f.display()))?;
                from_bundle(&file)
            }
        }
        .with_context(|| format!("{}", f.display()))?;
        all.propositions.extend(c.propositions);
        for (k, v) in c.skipped {
            *all.skipped.entry(k).or_default() += v;
        }
    }
    validate_set(&all.propositions).context("the converted set")?;
    let total = all.propositions.len();
    let chosen = match a.limit {
        Some(n) => sample(&all.propositions, n, a.seed),
        None => all.propositions,
    };
    write_atomic(
        &a.out,
        format!("{}\n", serde_json::to_string_pretty(&chosen)?).as_bytes(),
    )?;
    println!(
        "wrote {}: {} of {total} proposition(s)",
        a.out.display(),
        chosen.len()
    );
    for (why, n) in &all.skipped {
        println!("skipped {n}: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `atlas paradigms` and its subcommands.
#[derive(clap::Args)]
pub struct ParadigmsArgs {
    #[command(subcommand)]
    command: ParadigmsCommand,
}

#[derive(clap::Subcommand)]
enum ParadigmsCommand {
    /// Write the pilot plan of a paradigm design (procedures as conditions, counterbalanced order).
    Plan(PlanArgs),
    /// Likelihood scores of the StereoSet- and CrowS-style candidates (SS, LMS, ICAT, CrowS
    /// preference), logged, and written into a bundle's likelihood readouts.
    Score(ScoreArgs),
    /// Across paradigms (seed 000 §5.2, Table 11): per-model score and rank per procedure, the model
    /// pairs whose order reverses across procedures with 1- and 2-pp tie zones, paired
    /// statement-cluster bootstrap intervals.
    Across(AcrossArgs),
    /// The clarification probe (seed 000 §G.2, Table 24): where two procedures disagree for a
    /// model, a follow-up asks for its own position (adaptive: written by a generator model;
    /// control: a fixed wording); `plan`, `run`, `summary`.
    Probe(crate::probe::ProbeArgs),
}

#[derive(clap::Args)]
struct AcrossArgs {
    /// A bundle whose conditions are the procedures (from `atlas paradigms score` or `atlas pilot
    /// bundle` of a paradigm plan; any bundle's Selection conditions are read as procedures).
    bundle: PathBuf,
    /// How repeats enter the unit values.
    #[arg(long, value_enum, default_value_t = crate::Policy::AllResponses)]
    policy: crate::Policy,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 20_260_716)]
    seed: u64,
    /// Bootstrap replicates per interval.
    #[arg(long, default_value_t = 10_000)]
    draws: usize,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PlanArgs {
    /// The paradigm design (JSON: models, propositions, procedures, templates, repeats, params, seed,
    /// limits; plus an optional `key_env`).
    #[arg(long)]
    design: PathBuf,
    /// Take the propositions from this file (replacing the design's).
    #[arg(long)]
    propositions: Option<PathBuf>,
    /// Where to write the plan.
    #[arg(short, long)]
    out: PathBuf,
}

#[derive(clap::Args)]
struct ScoreArgs {
    /// A plan written by `atlas paradigms plan`.
    #[arg(long)]
    plan: PathBuf,
    /// JSON Lines log of every scoring call (item, candidate, scored text, the provider's body).
    #[arg(long)]
    log: PathBuf,
    /// Recompute from an existing --log; no call is made.
    #[arg(long)]
    from_log: bool,
    /// Add the readouts to this bundle (from `atlas pilot bundle` of the same plan) …
    #[arg(long, requires = "out")]
    bundle: Option<PathBuf>,
    /// … and write it here.
    #[arg(short, long, requires = "bundle")]
    out: Option<PathBuf>,
    /// Write the scores per model as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Environment variable holding the key (none for a local server).
    #[arg(long)]
    key_env: Option<String>,
    /// Per-call timeout, seconds.
    #[arg(long, default_value_t = 120.0)]
    timeout_s: f64,
}

/// `atlas paradigms …`.
pub fn run(a: ParadigmsArgs) -> Result<ExitCode> {
    match a.command {
        ParadigmsCommand::Plan(a) => plan(&a),
        ParadigmsCommand::Score(a) => score(&a),
        ParadigmsCommand::Across(a) => across(&a),
        ParadigmsCommand::Probe(a) => crate::probe::run(a),
    }
}

fn across(a: &AcrossArgs) -> Result<ExitCode> {
    let text =
        fs::read_to_string(&a.bundle).with_context(|| format!("reading {}", a.bundle.display()))?;
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow!("{}: invalid bundle: {e}", a.bundle.display()))?;
    let r = across_procedures(
        &audit,
        AcrossOptions {
            draws: a.draws,
            seed: a.seed,
            policy: a.policy.into(),
        },
    )
    .with_context(|| format!("{}", a.bundle.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let (summary, tables) = atlas_core::tables::paradigms::across(&audit, &r);
        print!("{}", atlas_core::tables::render_text(&summary, &tables));
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_design(v: Value, path: &Path) -> Result<ParadigmDesign> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let at = e.path().to_string();
        anyhow!("{}: at `{at}`: {}", path.display(), e.into_inner())
    })
}

/// The propositions of a paradigm plan file's [`PARADIGM_MEMBER`] (for `atlas pilot bundle`, which
/// writes them into the statement levels), or `None` for another plan.
///
/// # Errors
/// The file cannot be read, or its paradigm design does not read.
pub fn plan_propositions(
    path: &Path,
) -> Result<Option<Vec<atlas_pilot::proposition::Proposition>>> {
    let mut v = read_json(path, "plan")?;
    match v.as_object_mut().and_then(|o| o.remove(PARADIGM_MEMBER)) {
        Some(d) => Ok(Some(parse_design(d, path)?.propositions)),
        None => Ok(None),
    }
}

/// Rebuilds a paradigm plan from the design stored in its [`PARADIGM_MEMBER`] (for `atlas pilot`).
pub fn rebuild(design: Value, path: &Path) -> Result<Plan> {
    let d = parse_design(design, path)?;
    build_paradigm_plan(&d)
        .with_context(|| format!("{}: its paradigm design no longer plans", path.display()))
}

fn plan(a: &PlanArgs) -> Result<ExitCode> {
    let mut v = read_json(&a.design, "paradigm design")?;
    let obj = v
        .as_object_mut()
        .ok_or_else(|| anyhow!("{}: a design is a JSON object", a.design.display()))?;
    let key_env = obj.remove("key_env");
    if let Some(p) = &a.propositions {
        let text = fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        let props = parse_propositions(&text).with_context(|| format!("{}", p.display()))?;
        obj.insert("propositions".into(), serde_json::to_value(props)?);
    }
    let d = parse_design(v, &a.design)?;
    let plan = match build_paradigm_plan(&d) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: the plan is refused: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = serde_json::to_value(&plan)?;
    if let Some(o) = out.as_object_mut() {
        o.insert(PARADIGM_MEMBER.into(), serde_json::to_value(&d)?);
        if let Some(k) = key_env {
            o.insert("key_env".into(), k);
        }
    }
    write_atomic(&a.out, serde_json::to_string(&out)?.as_bytes())?;
    println!(
        "plan {}: {} proposition(s) × {} procedure(s) × {} repeat(s) × {} model(s) = {} call(s); ~{} input tokens",
        plan.fingerprint,
        d.propositions.len(),
        d.procedures.len(),
        d.repeats,
        d.models.len(),
        plan.calls.len(),
        plan.estimate.input_tokens
    );
    println!("wrote {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

fn score(a: &ScoreArgs) -> Result<ExitCode> {
    let mut v = read_json(&a.plan, "plan")?;
    let design = v
        .as_object_mut()
        .and_then(|o| o.remove(PARADIGM_MEMBER))
        .ok_or_else(|| {
            anyhow!(
                "{}: not a paradigm plan (no `{PARADIGM_MEMBER}`)",
                a.plan.display()
            )
        })?;
    let d = parse_design(design, &a.plan)?;
    let its = items(&d.propositions, &d.procedures, d.seed);
    if its.is_empty() {
        bail!("the design has no StereoSet- or CrowS-style procedure to score");
    }
    let lines: Vec<ScoringLine> = if a.from_log {
        fs::read_to_string(&a.log)
            .with_context(|| format!("cannot read {}", a.log.display()))?
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(n, l)| {
                serde_json::from_str(l)
                    .with_context(|| format!("{} line {}", a.log.display(), n + 1))
            })
            .collect::<Result<_>>()?
    } else {
        let key = match &a.key_env {
            Some(var) => SecretKey::new(std::env::var(var).with_context(|| {
                format!("the environment variable {var} (--key-env) is not set")
            })?),
            None => SecretKey::new(""),
        };
        let agent = agent(Duration::from_secs_f64(a.timeout_s.clamp(1.0, 3600.0)));
        let mut log = fs::File::create(&a.log)
            .with_context(|| format!("cannot write {}", a.log.display()))?;
        let mut out = Vec::new();
        let total = d.models.len() * its.len() * 2;
        for m in &d.models {
            let mut seen: Vec<EchoAlignment> = Vec::new();
            for item in &its {
                for k in 0..2 {
                    let (text, start) = item.scored_text(k);
                    let end = text.chars().count();
                    let req = scoring_request(&m.provider, &text, &key)
                        .with_context(|| format!("model {}", m.id))?;
                    let (status, body) = match send(&agent, &req) {
                        AttemptOutcome::Response { status, body, .. } => (Some(status), body),
                        AttemptOutcome::TimedOut => (None, "timed out".to_string()),
                        AttemptOutcome::Network { message } => (None, key.scrub(&message)),
                    };
                    let line = ScoringLine {
                        model: m.id.clone(),
                        item: item.clone(),
                        candidate: k,
                        text,
                        start,
                        end,
                        status,
                        body,
                    };
                    writeln!(log, "{}", serde_json::to_string(&line)?)?;
                    // Refuse a shifted server after its first few decidable answers, not after
                    // hundreds of calls (the whole log is checked again below).
                    let al = echo_alignment(&line.body, line.end);
                    if al != EchoAlignment::Undetermined {
                        seen.push(al);
                        if seen.len() == ALIGNMENT_PROBE {
                            log.flush()?;
                            check_alignment(&seen).with_context(|| {
                                format!(
                                    "model {}: refused after {ALIGNMENT_PROBE} scoring calls (logged in {})",
                                    m.id,
                                    a.log.display()
                                )
                            })?;
                        }
                    }
                    out.push(line);
                    if out.len() % 50 == 0 {
                        eprintln!("scored {} of {total} candidate texts", out.len());
                    }
                }
            }
        }
        out
    };

    let ids: Vec<String> = d.models.iter().map(|m| m.id.clone()).collect();
    let (readouts, summary) =
        score_lines(&ids, &lines).with_context(|| format!("{}", a.log.display()))?;
    let fmt = |x: Option<f64>| x.map_or_else(|| "—".to_string(), |v| format!("{v:.2}"));
    for m in &summary {
        let ss = m.stereoset;
        println!(
            "{}: StereoSet style SS {} LMS {} ICAT {} ({} items{}); CrowS style preference {} ({} items{})",
            m.model,
            fmt(ss.and_then(|s| s.ss)),
            fmt(ss.map(|s| s.lms)),
            fmt(ss.and_then(|s| s.icat)),
            ss.map_or(0, |s| s.items),
            if m.stereoset_missing > 0 { format!(", {} missing", m.stereoset_missing) } else { String::new() },
            fmt(m.crows_preference),
            m.crows_items,
            if m.crows_missing > 0 { format!(", {} missing", m.crows_missing) } else { String::new() },
        );
        for e in &m.errors {
            eprintln!("  {e}");
        }
    }
    if let Some(path) = &a.json {
        write_atomic(
            path,
            format!(
                "{}\n",
                serde_json::to_string_pretty(&json!({
                    "basis": "mean log-probability per continuation token (seed 000 §C.2)",
                    "units": "percent; SS and CrowS preference: 50 = no preference",
                    "models": summary,
                }))?
            )
            .as_bytes(),
        )?;
    }
    if let (Some(inp), Some(out)) = (&a.bundle, &a.out) {
        let mut file: atlas_core::BundleFile = serde_json::from_value(read_json(inp, "bundle")?)
            .with_context(|| format!("{} is not a bundle", inp.display()))?;
        let placed = attach(
            &mut file,
            &readouts,
            &format!("atlas paradigms score: {SCORED_DESCRIPTION}"),
        );
        let text = serde_json::to_string(&file)?;
        Audit::from_bytes(text.as_bytes())
            .context("the bundle with likelihood readouts does not read back")?;
        write_atomic(out, text.as_bytes())?;
        println!("wrote {} ({placed} likelihood readouts)", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
