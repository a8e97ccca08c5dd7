//! `atlas pilot`: the native runner of pilot audits around the pure crate `atlas-pilot`
//! (`docs/pilot.md`). The crate builds every request as data, reads every response, schedules retries
//! and keeps the run state; this module adds what a browser would do — files instead of IndexedDB, a
//! blocking HTTP client ([`ureq`]) on std threads instead of `fetch`:
//!
//! - `atlas pilot design --base BASE.json [--statements-from BUNDLE --per-category N] -o design.json`
//!   fills a partial design: statements from a bundle (stratified sample by category), the five
//!   Table 7 wordings and the baseline condition where the base has none;
//! - `atlas pilot plan --design design.json -o plan.json` prints the sampling design (`coverage:K`
//!   for the coverage design), the calls, estimated tokens and cost, and refuses a plan over the
//!   design's hard cap;
//! - `atlas pilot run --plan plan.json --state run.json [--concurrency N] [--timeout-s T]` runs (or
//!   resumes) the calls, then the judge calls; the state file is rewritten atomically (temp file +
//!   rename) after every settled call;
//! - `atlas pilot bundle --plan plan.json --state run.json [--info info.json] -o bundle.json` turns
//!   the run into a format-v1 bundle;
//! - `atlas pilot summary --plan plan.json --state run.json` prints the counts (status, failure
//!   reasons, how each Selection was obtained, judge labels);
//! - `atlas pilot clinical / clinical-bundle / clinical-summary` run the clinical protocol of seed
//!   `001_…` on MedQA questions through the same runner ([`clinical_run`], `docs/clinical.md`).
//!
//! **Keys** come from environment variables only: `--key-env VAR` (every model and judge) or
//! `--key-env ID=VAR` (one model or judge id), or the plan's `key_env` (copied from the design file:
//! `"key_env": "VAR"` or `{"ID": "VAR", "*": "VAR"}`). Only the variable's *name* is ever stored;
//! the key lives in an [`atlas_pilot::SecretKey`] and in the request headers in memory, and every
//! stored or printed failure message is scrubbed of it.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use atlas_core::Audit;
use atlas_pilot::bundle_judge::{judge_counts, judge_majority, lookup_text, Planned};
use atlas_pilot::judge::{label_code, read_judge_label};
use atlas_pilot::judge::{JudgeConfig, Rubric, DEFAULT_RUBRIC_SYSTEM};
use atlas_pilot::plan::{
    baseline_condition, sample_statements, statements_from_audit, table7_templates,
};
use atlas_pilot::plan::{Limits, Prices};
use atlas_pilot::provider::ProviderKind;
use atlas_pilot::provider::{ProviderError, RetryAfter};
use atlas_pilot::retry::{describe_wait, server_wait_message};
use atlas_pilot::run::{pilot_judge_majority, CallStatus, FailureGroup};
use atlas_pilot::{
    build_plan, extract_completion, to_bundle, AttemptOutcome, BackoffPolicy, BundleInfo,
    FailureKind, HttpRequest, Next, PilotDesign, Plan, RunState, SecretKey, Settled, Settling,
};
use atlas_pilot::{
    merge_judge_columns, plan_bundle_judging, BundleJudgeDesign, BundleJudgePlan, Job as PilotJob,
    JudgeScope, KeyOwner, Provider,
};
use serde::Serialize;
use serde_json::{json, Value};

mod clinical_run;

/// The member of a design or plan file that names the key variables (not part of `PilotDesign`).
pub const KEY_ENV_MEMBER: &str = "key_env";

/// `atlas pilot` and its subcommands.
#[derive(clap::Args)]
pub struct PilotArgs {
    #[command(subcommand)]
    pub command: PilotCommand,
}

/// The steps of a pilot audit.
#[derive(clap::Subcommand)]
pub enum PilotCommand {
    /// Fill a partial design: statements sampled from a bundle, the Table 7 wordings and the baseline
    /// condition where the base file has none.
    Design(DesignArgs),
    /// Check a design, print calls, estimated tokens and cost, and write the plan (refused over the
    /// design's hard cap).
    Plan(PlanArgs),
    /// Run or resume a plan's calls and judge calls, persisting the state after every settled call.
    Run(RunArgs),
    /// Judge coding of an existing bundle's stored Rationales by 1 to 3 judges: new judge columns.
    Judge(Box<JudgeArgs>),
    /// Turn a run into a format-v1 bundle.
    Bundle(BundleArgs),
    /// Print a run's counts: status, failure reasons, how each Selection was obtained, judge labels.
    Summary(SummaryArgs),
    /// Run (or resume) the clinical protocol of seed 001 on MedQA questions: baseline and six
    /// demographic prefixes, counterfactual, re-answer, plausibility and stereotype judges.
    Clinical(Box<clinical_run::ClinicalArgs>),
    /// Turn a clinical run's state folder into a clinical bundle (optionally with embeddings).
    ClinicalBundle(clinical_run::ClinicalBundleArgs),
    /// Print a clinical run's counts: calls, failures, parse failures per prompt, CFV outcomes.
    ClinicalSummary(clinical_run::ClinicalSummaryArgs),
}

/// Arguments of `atlas pilot design`.
#[derive(clap::Args)]
pub struct DesignArgs {
    /// A partial design (JSON): any `PilotDesign` members (docs/pilot.md), plus an optional `key_env`.
    /// Missing `templates` = the five Table 7 wordings; missing `conditions` = the baseline B0.
    #[arg(long)]
    pub base: PathBuf,
    /// Take the statements from this bundle's statement facet (replacing the base's).
    #[arg(long)]
    pub statements_from: Option<PathBuf>,
    /// With --statements-from: at most this many statements per category, drawn uniformly without
    /// replacement (`sample_statements`; all statements when absent).
    #[arg(long, requires = "statements_from")]
    pub per_category: Option<usize>,
    /// Seed of the statement sample (default: the design's `seed`).
    #[arg(long, requires = "per_category")]
    pub sample_seed: Option<u64>,
    /// Output file.
    #[arg(short, long)]
    pub out: PathBuf,
}

/// Arguments of `atlas pilot plan`.
#[derive(clap::Args)]
pub struct PlanArgs {
    /// The design file (a `PilotDesign` as JSON, plus an optional `key_env`).
    #[arg(long)]
    pub design: PathBuf,
    /// Where to write the plan (JSON); without it only the estimate is printed.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `atlas pilot run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The plan file written by `atlas pilot plan`.
    #[arg(long)]
    pub plan: PathBuf,
    /// The run state file: resumed when it exists (in-flight calls are sent again), created otherwise.
    #[arg(long)]
    pub state: PathBuf,
    /// Skip the judge calls (run the audited calls only).
    #[arg(long)]
    pub no_judges: bool,
    #[command(flatten)]
    pub send: SendArgs,
}

/// How calls are sent: shared by `atlas pilot run` and `atlas pilot judge`.
#[derive(clap::Args)]
pub struct SendArgs {
    /// Calls at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Per-call timeout in seconds (connect, send and the whole response).
    #[arg(long, default_value_t = 60.0)]
    pub timeout_s: f64,
    /// Environment variable holding the key: `VAR` for every model and judge, or `ID=VAR` for one
    /// model or judge id (repeatable; overrides the plan's `key_env`). The key is never printed or stored.
    #[arg(long)]
    pub key_env: Vec<String>,
    /// Attempts per call, retries included (BackoffPolicy::max_attempts).
    #[arg(long, default_value_t = BackoffPolicy::default().max_attempts)]
    pub max_attempts: u32,
    /// First backoff ceiling, ms (BackoffPolicy::base_ms).
    #[arg(long, default_value_t = BackoffPolicy::default().base_ms)]
    pub backoff_base_ms: u64,
    /// Largest backoff ceiling, ms (BackoffPolicy::cap_ms).
    #[arg(long, default_value_t = BackoffPolicy::default().cap_ms)]
    pub backoff_cap_ms: u64,
    /// The longest wait a server may ask for (Retry-After) that is honoured unattended, seconds
    /// (BackoffPolicy::max_wait_ms; at most 86400). A longer one pauses the run: the state is saved,
    /// the command exits with code 4, and running it again resumes (that call then waits until the
    /// server's time).
    #[arg(long, default_value_t = BackoffPolicy::default().max_wait_ms / 1000)]
    pub max_retry_after_s: u64,
    /// On resume, put the finally failed calls back to pending first (fresh attempts), e.g. after
    /// fixing what made a provider stop early.
    #[arg(long)]
    pub retry_failed: bool,
    /// Append one JSON line per attempt outcome to this file (call id, attempt, outcome, status,
    /// Retry-After, backoff delay, times; no key, no request).
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Stop abruptly after this many settled attempts, leaving in-flight calls in the state file as a
    /// crash would (for resume tests).
    #[arg(long)]
    pub stop_after: Option<usize>,
    /// Seconds between progress lines on stderr.
    #[arg(long, default_value_t = 15.0)]
    pub progress_every_s: f64,
}

impl SendArgs {
    /// The retry policy, after checking the concurrency and timeout.
    pub(crate) fn policy(&self) -> Result<BackoffPolicy> {
        if self.concurrency == 0 || self.concurrency > 64 {
            bail!("--concurrency must be 1 to 64 (got {})", self.concurrency);
        }
        if !(self.timeout_s > 0.0 && self.timeout_s <= 3600.0) {
            bail!(
                "--timeout-s must be above 0 and at most 3600 (got {})",
                self.timeout_s
            );
        }
        let policy = BackoffPolicy {
            base_ms: self.backoff_base_ms,
            cap_ms: self.backoff_cap_ms,
            max_attempts: self.max_attempts,
            max_wait_ms: self.max_retry_after_s.saturating_mul(1000),
        };
        policy.validate().context("the retry settings")?;
        Ok(policy)
    }
}

/// Arguments of `atlas pilot judge`.
#[derive(clap::Args)]
pub struct JudgeArgs {
    /// The bundle whose stored Rationale texts are judged (text shards are read next to it).
    #[arg(long)]
    pub bundle: PathBuf,
    /// A judge, 1 to 3 times: `id=ID,provider=openai_compatible|anthropic|gemini,model=NAME` plus
    /// optional `base_url=URL` (default: the provider's), `rubric=FILE` (JSON `{"system",
    /// "user_template"}`, or a text file used as the user template with the default system prompt),
    /// `max_tokens=N` (default 64), `temperature=T` (default 0), `price_in=P,price_out=P` (per 1M
    /// tokens). `ID` becomes the new judge column id.
    #[arg(long = "judge", required = true)]
    pub judges: Vec<String>,
    /// Judge only the responses of these model level ids (comma-separated; default every model).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// A seeded sample of this many cells (uniform, without replacement) instead of every cell.
    #[arg(long, requires = "seed", conflicts_with = "limit")]
    pub sample: Option<u32>,
    /// Seed of --sample.
    #[arg(long, requires = "sample")]
    pub seed: Option<u64>,
    /// Only the first N cells (in cell order) with a response and a text.
    #[arg(long)]
    pub limit: Option<u32>,
    /// Hard cap on the number of judge calls.
    #[arg(long, default_value_t = 1_000)]
    pub max_calls: u64,
    /// Hard cap on the estimated cost (the prices' currency).
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// Seed of the retry jitter.
    #[arg(long, default_value_t = 1)]
    pub jitter_seed: u64,
    /// Folder of the run: `plan.json` and `state.json`, resumed when they exist (the same arguments
    /// plan the same calls; other arguments are refused).
    #[arg(long)]
    pub state: PathBuf,
    /// Where to write the bundle with the new judge columns.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Print the calls, estimated tokens and cost, write the plan, and send nothing.
    #[arg(long)]
    pub plan_only: bool,
    #[command(flatten)]
    pub send: SendArgs,
}

/// Arguments of `atlas pilot bundle`.
#[derive(clap::Args)]
pub struct BundleArgs {
    /// The plan file.
    #[arg(long)]
    pub plan: PathBuf,
    /// The run state file.
    #[arg(long)]
    pub state: PathBuf,
    /// The bundle's descriptive fields as JSON (`BundleInfo`: id, title, description, source,
    /// license, content_warning, notes); default: a generic pilot bundle (CC0-1.0).
    #[arg(long)]
    pub info: Option<PathBuf>,
    /// Output bundle file.
    #[arg(short, long)]
    pub out: PathBuf,
}

/// Arguments of `atlas pilot summary`.
#[derive(clap::Args)]
pub struct SummaryArgs {
    /// The plan file.
    #[arg(long)]
    pub plan: PathBuf,
    /// The run state file.
    #[arg(long)]
    pub state: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `atlas pilot …`.
///
/// # Errors
/// Unreadable or invalid files, a plan over its cap, a missing key variable, I/O errors.
pub fn run(args: PilotArgs) -> Result<ExitCode> {
    match args.command {
        PilotCommand::Design(a) => design(&a),
        PilotCommand::Plan(a) => plan(&a),
        PilotCommand::Run(a) => run_plan(&a),
        PilotCommand::Judge(a) => judge(&a),
        PilotCommand::Bundle(a) => bundle(&a),
        PilotCommand::Summary(a) => summary(&a),
        PilotCommand::Clinical(a) => clinical_run::clinical(&a),
        PilotCommand::ClinicalBundle(a) => clinical_run::clinical_bundle(&a),
        PilotCommand::ClinicalSummary(a) => clinical_run::clinical_summary(&a),
    }
}

// ---------------------------------------------------------------------------------------------
// Files

pub(crate) fn read_json(path: &Path, what: &str) -> Result<Value> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read the {what} {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("the {what} {} is not valid JSON", path.display()))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed and synced,
/// then renamed over `path` (a crash leaves the old or the new file, never half of one).
///
/// # Errors
/// I/O errors, naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{} is not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().with_context(|| {
        format!(
            "cannot write {} (through {})",
            path.display(),
            tmp.display()
        )
    })
}

/// The `key_env` member taken out of a design or plan object, and the rest.
pub(crate) fn split_key_env(mut value: Value, path: &Path) -> Result<(Value, KeyEnv)> {
    let key_env = match value.as_object_mut().and_then(|o| o.remove(KEY_ENV_MEMBER)) {
        None | Some(Value::Null) => KeyEnv::default(),
        Some(Value::String(var)) => KeyEnv {
            default: Some(var),
            by_id: BTreeMap::new(),
        },
        Some(Value::Object(map)) => {
            let mut k = KeyEnv::default();
            for (id, var) in map {
                let Value::String(var) = var else {
                    bail!(
                        "{}: `key_env.{id}` must be the name of an environment variable (a string)",
                        path.display()
                    );
                };
                if id == "*" {
                    k.default = Some(var);
                } else {
                    k.by_id.insert(id, var);
                }
            }
            k
        }
        Some(_) => bail!(
            "{}: `key_env` must be a variable name or an object {{\"ID\": \"VAR\", \"*\": \"VAR\"}}",
            path.display()
        ),
    };
    for var in key_env.default.iter().chain(key_env.by_id.values()) {
        check_var_name(var).with_context(|| format!("{}: `key_env`", path.display()))?;
    }
    Ok((value, key_env))
}

fn check_var_name(var: &str) -> Result<()> {
    let ok = !var.is_empty()
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !var.starts_with(|c: char| c.is_ascii_digit());
    if !ok {
        bail!("{var:?} is not an environment variable name (letters, digits, `_`); put the key in a variable and name the variable");
    }
    Ok(())
}

/// Which environment variable holds the key of each model and judge (names only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KeyEnv {
    /// For every id without its own entry.
    #[serde(rename = "*", skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// By model or judge id.
    #[serde(flatten)]
    pub by_id: BTreeMap<String, String>,
}

impl KeyEnv {
    pub(crate) fn is_empty(&self) -> bool {
        self.default.is_none() && self.by_id.is_empty()
    }

    fn var_for(&self, id: &str) -> Option<&str> {
        self.by_id
            .get(id)
            .or(self.default.as_ref())
            .map(String::as_str)
    }
}

fn parse_design(value: Value, path: &Path) -> Result<PilotDesign> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        anyhow!("{}: at `{at}`: {}", path.display(), e.into_inner())
    })
}

fn read_design(path: &Path) -> Result<(PilotDesign, KeyEnv)> {
    let (value, key_env) = split_key_env(read_json(path, "design")?, path)?;
    Ok((parse_design(value, path)?, key_env))
}

/// Reads a plan written by `atlas pilot plan` and checks that it is still what its design plans
/// (same fingerprint), so a hand-edited plan is refused.
fn read_plan(path: &Path) -> Result<(Plan, KeyEnv)> {
    let (mut value, key_env) = split_key_env(read_json(path, "plan")?, path)?;
    // A paradigm plan (`atlas paradigms plan`) carries its paradigm design; it is rebuilt from that.
    let paradigm = value
        .as_object_mut()
        .and_then(|o| o.remove(crate::paradigms::PARADIGM_MEMBER));
    let plan: Plan = serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        anyhow!("{}: at `{at}`: {}", path.display(), e.into_inner())
    })?;
    let again = match paradigm {
        Some(p) => crate::paradigms::rebuild(p, path)?,
        None => build_plan(plan.design.clone())
            .with_context(|| format!("{}: its design no longer plans", path.display()))?,
    };
    if again.fingerprint != plan.fingerprint || again.calls != plan.calls {
        bail!(
            "{}: the calls do not match the plan's design (fingerprint {} vs {}); re-run `atlas pilot plan` instead of editing a plan",
            path.display(),
            plan.fingerprint,
            again.fingerprint
        );
    }
    Ok((plan, key_env))
}

fn read_state(path: &Path, plan: &Plan) -> Result<RunState> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("cannot read the run state {}", path.display()))?;
    let state = RunState::from_json(&text)
        .with_context(|| format!("{} is not a pilot run state", path.display()))?;
    state
        .check_plan(plan)
        .with_context(|| format!("{} belongs to another plan", path.display()))?;
    Ok(state)
}

// ---------------------------------------------------------------------------------------------
// design, plan

fn design(a: &DesignArgs) -> Result<ExitCode> {
    let (mut value, key_env) = split_key_env(read_json(&a.base, "base design")?, &a.base)?;
    let obj = value
        .as_object_mut()
        .ok_or_else(|| anyhow!("{}: a design is a JSON object", a.base.display()))?;
    let mut sampled = None;
    if let Some(bundle) = &a.statements_from {
        let bytes = fs::read(bundle)
            .with_context(|| format!("cannot read the bundle {}", bundle.display()))?;
        let audit = Audit::from_bytes(&bytes)
            .with_context(|| format!("{} is not a valid bundle", bundle.display()))?;
        let all = statements_from_audit(&audit);
        let chosen = match a.per_category {
            Some(n) => {
                let seed = match a.sample_seed {
                    Some(s) => s,
                    None => obj.get("seed").and_then(Value::as_u64).ok_or_else(|| {
                        anyhow!(
                            "{}: give `seed` in the base design or --sample-seed",
                            a.base.display()
                        )
                    })?,
                };
                sample_statements(&all, n, seed)
            }
            None => all.clone(),
        };
        sampled = Some((chosen.len(), all.len()));
        obj.insert("statements".into(), serde_json::to_value(&chosen)?);
    }
    if !obj.contains_key("templates") {
        obj.insert(
            "templates".into(),
            serde_json::to_value(table7_templates())?,
        );
    }
    if !obj.contains_key("conditions") {
        obj.insert(
            "conditions".into(),
            serde_json::to_value(vec![baseline_condition()])?,
        );
    }
    let d = parse_design(value.clone(), &a.base)?;
    d.validate()
        .with_context(|| format!("{}: the filled design is invalid", a.base.display()))?;
    let mut out = serde_json::to_value(&d)?;
    if !key_env.is_empty() {
        if let Some(o) = out.as_object_mut() {
            o.insert(KEY_ENV_MEMBER.into(), serde_json::to_value(&key_env)?);
        }
    }
    write_atomic(
        &a.out,
        format!("{}\n", serde_json::to_string_pretty(&out)?).as_bytes(),
    )?;
    if let Some((n, of)) = sampled {
        println!("statements: {n} of {of}");
    }
    println!(
        "wrote {}: {} model(s), {} statement(s), {} template(s), {} condition(s), {} repeat(s), {} judge(s)",
        a.out.display(),
        d.models.len(),
        d.statements.len(),
        d.templates.len(),
        d.conditions.len(),
        d.repeats,
        d.judges.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn plan(a: &PlanArgs) -> Result<ExitCode> {
    let (d, key_env) = read_design(&a.design)?;
    let plan = match build_plan(d) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: the plan is refused: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let e = &plan.estimate;
    let s = plan.design.sampling;
    println!(
        "sampling {}{}, seed {}",
        s.name(),
        s.budget()
            .map(|b| format!(", budget {b} cells per model"))
            .unwrap_or_default(),
        plan.design.seed
    );
    println!(
        "plan {}: {} audited call(s) + {} judge call(s) (if every answer is judged) = {} call(s); cap {} call(s){}",
        plan.fingerprint,
        e.calls,
        e.judge_calls,
        e.total_calls,
        plan.design.limits.max_calls,
        plan.design
            .limits
            .max_cost
            .map(|c| format!(", cost cap {c}"))
            .unwrap_or_default()
    );
    println!(
        "estimated tokens: audited {} in, at most {} out; judges {} in, at most {} out (1 token ≈ 4 characters)",
        e.input_tokens, e.output_tokens_max, e.judge_input_tokens, e.judge_output_tokens_max
    );
    println!("estimated cost: {}", cost_note(e));
    if let Some(out) = &a.out {
        let mut v = serde_json::to_value(&plan)?;
        if !key_env.is_empty() {
            if let Some(o) = v.as_object_mut() {
                o.insert(KEY_ENV_MEMBER.into(), serde_json::to_value(&key_env)?);
            }
        }
        write_atomic(out, serde_json::to_string(&v)?.as_bytes())?;
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------------------
// run

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `(id, provider, "model" | "judge")` of every model and judge of a pilot plan.
fn plan_owners(plan: &Plan) -> Vec<(&str, &atlas_pilot::Provider, &'static str)> {
    plan.design
        .models
        .iter()
        .map(|m| (m.id.as_str(), &m.provider, "model"))
        .chain(
            plan.design
                .judges
                .iter()
                .map(|j| (j.id.as_str(), &j.provider, "judge")),
        )
        .collect()
}

/// The keys of every model (`model:ID`) and judge (`judge:ID`) of `ids`, read from the environment
/// variables named by `--key-env` or the plan. A provider that requires a key without one is refused
/// before any call.
pub(crate) fn keys(
    ids: &[(&str, &atlas_pilot::Provider, &'static str)],
    from_plan: &KeyEnv,
    flags: &[String],
) -> Result<HashMap<String, SecretKey>> {
    let mut env = from_plan.clone();
    for flag in flags {
        match flag.split_once('=') {
            Some((id, var)) => {
                check_var_name(var).context("--key-env ID=VAR")?;
                env.by_id.insert(id.to_string(), var.to_string());
            }
            None => {
                check_var_name(flag).context("--key-env VAR")?;
                env.default = Some(flag.clone());
                env.by_id.retain(|_, _| false);
            }
        }
    }
    for id in env.by_id.keys() {
        if !ids.iter().any(|(i, _, _)| i == id) {
            bail!("--key-env / key_env names {id:?}, which is no model or judge id of the plan");
        }
    }
    let mut out = HashMap::new();
    for &(id, provider, what) in ids {
        let key = match env.var_for(id) {
            Some(var) => match std::env::var(var) {
                Ok(v) => SecretKey::new(v),
                Err(std::env::VarError::NotPresent) => {
                    bail!("the environment variable {var} (the key of {what} {id:?}) is not set")
                }
                Err(std::env::VarError::NotUnicode(_)) => {
                    bail!("the environment variable {var} (the key of {what} {id:?}) is not valid UTF-8")
                }
            },
            None => SecretKey::default(),
        };
        if key.is_empty() && provider.requires_key() {
            bail!(
                "{what} {id:?} ({}) needs an API key: name its environment variable with --key-env {id}=VAR or --key-env VAR",
                provider.label()
            );
        }
        out.insert(format!("{what}:{id}"), key);
    }
    Ok(out)
}

/// One request for a worker thread.
struct Work {
    id: String,
    request: HttpRequest,
}

struct Done {
    id: String,
    outcome: AttemptOutcome,
}

pub(crate) fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        // A redirect would carry a POST (and custom key headers) elsewhere: read it as a response.
        .max_redirects(0)
        .user_agent(concat!("atlas-pilot/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

/// One attempt: a response (any status), the per-call timeout, or no response (connection refused,
/// dropped, reset, TLS, DNS…).
pub(crate) fn send(agent: &ureq::Agent, req: &HttpRequest) -> AttemptOutcome {
    let mut r = agent.post(&req.url);
    for (name, value) in &req.headers {
        r = r.header(name.as_str(), value.as_str());
    }
    let map_err = |e: ureq::Error| match e {
        ureq::Error::Timeout(_) => AttemptOutcome::TimedOut,
        other => AttemptOutcome::Network {
            message: other.to_string(),
        },
    };
    let mut resp = match r.send(req.body.as_bytes()) {
        Ok(resp) => resp,
        Err(e) => return map_err(e),
    };
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    match resp
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_vec()
    {
        Ok(bytes) => AttemptOutcome::Response {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        },
        Err(e) => map_err(e),
    }
}

fn worker(agent: ureq::Agent, jobs: Arc<Mutex<Receiver<Work>>>, done: Sender<Done>) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let outcome = send(&agent, &job.request);
        if done
            .send(Done {
                id: job.id,
                outcome,
            })
            .is_err()
        {
            return;
        }
    }
}

/// One line of the `--events` log.
#[derive(Serialize)]
struct Event<'a> {
    t_ms: u64,
    call: &'a str,
    judge: bool,
    attempt: u32,
    sent_ms: u64,
    outcome: &'a str,
    status: Option<u16>,
    retry_after_ms: Option<u64>,
    next: &'a str,
    delay_ms: Option<u64>,
    not_before_ms: Option<u64>,
    message: Option<String>,
}

struct Runner<'a> {
    job: &'a dyn PilotJob,
    state: RunState,
    state_path: &'a Path,
    keys: HashMap<String, SecretKey>,
    policy: BackoffPolicy,
    events: Option<fs::File>,
    in_flight: HashMap<String, (u32, u64)>,
    settled_attempts: usize,
    /// The message of a pause asked for by a server's long `Retry-After`.
    paused: Option<String>,
    /// Early stops already printed.
    stops_shown: usize,
}

/// How [`drive`] ended.
pub(crate) enum Driven {
    /// Every call answered, failed or skipped: the final state and the time taken.
    Done(RunState, Duration),
    /// `--stop-after` stopped it abruptly (exit code 3).
    Stopped,
    /// A server asked for a longer wait than `--max-retry-after-s`: the state is saved, the run
    /// resumes when the command is run again (exit code 4).
    Paused,
}

impl Driven {
    /// The exit code of a run that did not finish (3 stopped, 4 paused).
    pub(crate) fn exit_code(&self) -> ExitCode {
        match self {
            Driven::Done(..) => ExitCode::SUCCESS,
            Driven::Stopped => ExitCode::from(3),
            Driven::Paused => ExitCode::from(4),
        }
    }
}

impl Runner<'_> {
    fn key_of(&self, id: &str) -> &SecretKey {
        static NONE: std::sync::OnceLock<SecretKey> = std::sync::OnceLock::new();
        let owner = match self.job.key_owner(&self.state, id) {
            Some(KeyOwner::Judge { id, .. }) => format!("judge:{id}"),
            Some(KeyOwner::Model(id)) => format!("model:{id}"),
            None => String::new(),
        };
        self.keys
            .get(&owner)
            .unwrap_or_else(|| NONE.get_or_init(SecretKey::default))
    }

    fn persist(&self) -> Result<()> {
        let text = self
            .state
            .to_json()
            .context("cannot serialise the run state")?;
        write_atomic(self.state_path, text.as_bytes())
    }

    fn log(&mut self, event: &Event<'_>) -> Result<()> {
        if let Some(f) = self.events.as_mut() {
            let line = serde_json::to_string(event)?;
            writeln!(f, "{line}").context("cannot append to the events file")?;
        }
        Ok(())
    }

    /// Records one attempt's outcome in the state ([`PilotJob::settle_attempt`]: retries, the early
    /// stop of a provider, the pause on a long `Retry-After`); returns a line for stderr when it was
    /// an error, and notes a pause in `self.paused` and a new early stop in `self.stops_shown`.
    fn settle(&mut self, done: Done) -> Result<Option<String>> {
        let now = now_ms();
        let (attempt, sent_ms) = self.in_flight.remove(&done.id).unwrap_or((0, now));
        let key = self.key_of(&done.id).clone();
        let is_judge = done.id.contains(':');
        let status = match &done.outcome {
            AttemptOutcome::Response { status, .. } => Some(*status),
            _ => None,
        };
        let settled = self
            .job
            .settle_attempt(
                &mut self.state,
                &done.id,
                done.outcome,
                &Settling {
                    key: &key,
                    policy: &self.policy,
                    now_ms: now,
                },
            )
            .with_context(|| format!("recording the outcome of call {}", done.id))?;
        let (outcome, retry_after_ms, next, message) = match settled {
            Settled::Answered => ("answered", None, None, None),
            Settled::Error { error, next } => (
                error.kind_key(),
                retry_after_ms(&error, now),
                Some(next),
                Some(error.to_string()),
            ),
        };
        let (next_name, delay_ms, not_before_ms) = match next {
            None => ("done", None, None),
            Some(Next::Failed) => ("failed", None, None),
            Some(Next::Retry {
                not_before_ms,
                delay_ms,
            }) => ("retry", Some(delay_ms), Some(not_before_ms)),
            Some(Next::Pause {
                not_before_ms,
                wait_ms,
                ..
            }) => ("paused", Some(wait_ms), Some(not_before_ms)),
        };
        if let Some(Next::Pause {
            wait_ms, limit_ms, ..
        }) = next
        {
            if self.paused.is_none() {
                self.paused = Some(server_wait_message(&done.id, wait_ms, limit_ms));
            }
        }
        let message = message.map(|m| key.scrub(&m));
        let line = message.as_ref().map(|m| {
            format!(
                "call {} attempt {attempt}: {m} → {}",
                done.id,
                match next {
                    Some(Next::Retry { delay_ms, .. }) => format!("retry in {} ms", delay_ms),
                    Some(Next::Pause { wait_ms, .. }) => {
                        format!(
                            "the server asks {}: pausing the run",
                            describe_wait(wait_ms)
                        )
                    }
                    _ => "failed for good (kept with its reason)".to_string(),
                }
            )
        });
        let event = Event {
            t_ms: now,
            call: &done.id,
            judge: is_judge,
            attempt,
            sent_ms,
            outcome,
            status,
            retry_after_ms,
            next: next_name,
            delay_ms,
            not_before_ms,
            message,
        };
        self.log(&event)?;
        self.settled_attempts += 1;
        self.persist()?;
        let stops: Vec<String> = self
            .state
            .early_stops()
            .iter()
            .skip(self.stops_shown)
            .map(|s| s.message.clone())
            .collect();
        self.stops_shown += stops.len();
        let line = match (line, stops.is_empty()) {
            (line, true) => line,
            (line, false) => Some(line.into_iter().chain(stops).collect::<Vec<_>>().join("\n")),
        };
        Ok(line)
    }
}

fn retry_after_ms(e: &ProviderError, now: u64) -> Option<u64> {
    e.retry_after().map(|r: RetryAfter| r.delay_ms(now))
}

fn run_plan(a: &RunArgs) -> Result<ExitCode> {
    let policy = a.send.policy()?;
    let (plan, key_env) = read_plan(&a.plan)?;
    let keys = keys(&plan_owners(&plan), &key_env, &a.send.key_env)?;
    let resumed = a.state.exists();
    let state = if resumed {
        read_state(&a.state, &plan)?
    } else {
        RunState::new(&plan)
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
    let (state, elapsed) = match drive(&plan, saved, sending, !a.no_judges)? {
        Driven::Done(state, elapsed) => (state, elapsed),
        other => return Ok(other.exit_code()),
    };
    let p = state.progress();
    println!(
        "done in {:.0} s: calls {} answered, {} failed; judge calls {} answered, {} failed; state {}",
        elapsed.as_secs_f64(),
        p.calls.answered,
        p.calls.failed,
        p.judge_calls.answered,
        p.judge_calls.failed,
        a.state.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// A run state and the file it is kept in.
pub(crate) struct SavedState<'a> {
    /// The state: read back from `path` (`resumed`), or fresh.
    pub(crate) state: RunState,
    /// Where it is written, atomically, at the start and after every settled attempt.
    pub(crate) path: &'a Path,
    /// Whether `state` was read from `path` (with `--retry-failed` its failed calls are put back to
    /// pending first).
    pub(crate) resumed: bool,
}

/// How the calls are sent: the keys by owner (`model:{id}` / `judge:{id}`), the retry policy and
/// the command's send options (concurrency, timeout, events file, …).
pub(crate) struct Sending<'a> {
    /// The keys.
    pub(crate) keys: HashMap<String, SecretKey>,
    /// Retries, backoff and the longest `Retry-After` honoured.
    pub(crate) policy: BackoffPolicy,
    /// The send options.
    pub(crate) args: &'a SendArgs,
}

/// Sends the calls of `job` until every call is answered or failed: `concurrency` worker threads, the
/// per-call timeout, retries by the policy honouring `Retry-After`, the state written atomically to
/// its file at the start and after every settled attempt (in-flight calls of a resumed state are
/// sent again), due calls added as others are answered when `follow_up` (a pilot's judge calls).
/// A provider whose first calls all fail the same way is stopped early (its message printed once); a
/// server's `Retry-After` longer than `--max-retry-after-s` pauses: no new call starts, those in
/// flight are settled, the state is saved ([`Driven::Paused`]). Returns the final state and the
/// time taken, or how the run ended early.
pub(crate) fn drive(
    job: &dyn PilotJob,
    saved: SavedState<'_>,
    sending: Sending<'_>,
    follow_up: bool,
) -> Result<Driven> {
    let SavedState {
        mut state,
        path: state_path,
        resumed,
    } = saved;
    let Sending {
        keys,
        policy,
        args: a,
    } = sending;
    job.check_state(&state)
        .with_context(|| format!("{} belongs to another plan", state_path.display()))?;
    let interrupted = state.interrupt();
    if a.retry_failed {
        let n = state.retry_failed();
        eprintln!("--retry-failed: {n} failed call(s) back to pending, tried afresh");
    }
    if follow_up {
        job.add_due_calls(&mut state);
    }
    let events = match &a.events {
        Some(p) => Some(
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open the events file {}", p.display()))?,
        ),
        None => None,
    };
    let mut r = Runner {
        job,
        state,
        state_path,
        keys,
        policy,
        events,
        in_flight: HashMap::new(),
        settled_attempts: 0,
        paused: None,
        stops_shown: 0,
    };
    r.stops_shown = r.state.early_stops().len();
    r.persist()?;
    let p = r.state.progress();
    if resumed {
        eprintln!(
            "resuming {}: {} answered, {} failed, {} to do ({interrupted} interrupted in flight, sent again)",
            state_path.display(),
            p.calls.answered + p.judge_calls.answered,
            p.calls.failed + p.judge_calls.failed,
            p.calls.remaining() + p.judge_calls.remaining()
        );
    } else {
        eprintln!(
            "starting {}: {} call(s), concurrency {}, timeout {} s",
            state_path.display(),
            p.calls.total,
            a.concurrency,
            a.timeout_s
        );
    }

    let (work_tx, work_rx) = mpsc::channel::<Work>();
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let work_rx = Arc::new(Mutex::new(work_rx));
    let agent = agent(Duration::from_secs_f64(a.timeout_s));
    let mut handles = Vec::new();
    for _ in 0..a.concurrency {
        let (agent, jobs, done) = (agent.clone(), Arc::clone(&work_rx), done_tx.clone());
        handles.push(thread::spawn(move || worker(agent, jobs, done)));
    }
    drop(done_tx);

    let started = Instant::now();
    let mut last_progress = Instant::now();
    loop {
        if follow_up {
            job.add_due_calls(&mut r.state);
        }
        let now = now_ms();
        if let Some(message) = &r.paused {
            if r.in_flight.is_empty() {
                r.persist()?;
                eprintln!("{message}");
                eprintln!(
                    "the run is paused; its state is saved in {}: run the same command again to resume",
                    state_path.display()
                );
                drop(work_tx);
                for h in handles {
                    let _ = h.join();
                }
                return Ok(Driven::Paused);
            }
        }
        let free = if r.paused.is_some() {
            0
        } else {
            a.concurrency.saturating_sub(r.in_flight.len())
        };
        let ready = job.ready(&r.state, now, free);
        for id in ready {
            let key = r.key_of(&id).clone();
            let request = job.request(&r.state, &id, &key);
            let attempt = r
                .state
                .begin(&id, now)
                .with_context(|| format!("starting call {id}"))?;
            match request {
                Ok(request) => {
                    r.in_flight.insert(id.clone(), (attempt, now));
                    work_tx
                        .send(Work { id, request })
                        .map_err(|_| anyhow!("the HTTP worker threads stopped"))?;
                }
                Err(e) => {
                    let message = key.scrub(&e.to_string());
                    eprintln!("call {id}: the request cannot be built: {message} (failed, kept with its reason)");
                    r.state
                        .fail_now(&id, FailureKind::Request, &message, &key)
                        .with_context(|| format!("recording call {id}"))?;
                    r.persist()?;
                }
            }
        }
        if r.in_flight.is_empty() {
            // The job's `ready`, not `RunState::ready`: a job may hold pending calls it will never
            // start (the clinical protocol's calls whose dependency failed).
            if job.ready(&r.state, now_ms(), 1).is_empty() {
                match r.state.next_wake_ms() {
                    Some(wake) => {
                        thread::sleep(Duration::from_millis(
                            wake.saturating_sub(now_ms()).clamp(1, 1_000),
                        ));
                        continue;
                    }
                    None => break,
                }
            }
            continue;
        }
        // With every slot busy only a completion can start something; else wake for the next retry.
        let wait = if r.in_flight.len() >= a.concurrency {
            1_000
        } else {
            r.state
                .next_wake_ms()
                .map_or(1_000, |w| w.saturating_sub(now_ms()).clamp(1, 1_000))
        };
        match done_rx.recv_timeout(Duration::from_millis(wait)) {
            Ok(done) => {
                if let Some(line) = r.settle(done)? {
                    eprintln!("{line}");
                }
                if a.stop_after.is_some_and(|n| r.settled_attempts >= n) {
                    eprintln!(
                        "stopping abruptly after {} settled attempt(s) (--stop-after); {} call(s) left in flight in {}",
                        r.settled_attempts,
                        r.in_flight.len(),
                        state_path.display()
                    );
                    return Ok(Driven::Stopped);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the HTTP worker threads stopped"),
        }
        if last_progress.elapsed().as_secs_f64() >= a.progress_every_s {
            last_progress = Instant::now();
            print_progress(&r.state, a.concurrency, started.elapsed());
        }
    }
    drop(work_tx);
    for h in handles {
        let _ = h.join();
    }
    r.persist()?;
    Ok(Driven::Done(r.state, started.elapsed()))
}

fn print_progress(state: &RunState, concurrency: usize, elapsed: Duration) {
    let p = state.progress();
    eprintln!(
        "[{:>5.0} s] calls {}/{} done ({} failed), judge calls {}/{} done ({} failed), {} in flight, mean {:.0} ms/call, about {} left",
        elapsed.as_secs_f64(),
        p.calls.done(),
        p.calls.total,
        p.calls.failed,
        p.judge_calls.done(),
        p.judge_calls.total,
        p.judge_calls.failed,
        p.calls.in_flight + p.judge_calls.in_flight,
        p.mean_duration_ms.unwrap_or(0.0),
        p.eta_ms(concurrency)
            .map_or("?".to_string(), |ms| format!("{:.0} min", ms as f64 / 60_000.0))
    );
}

// ---------------------------------------------------------------------------------------------
// judge: judge coding of an existing bundle's Rationales

/// Reads one `--judge` specification (`key=value` pairs separated by commas; `JudgeArgs::judges`).
fn parse_judge_spec(spec: &str, n: usize) -> Result<JudgeConfig> {
    let what = format!("--judge number {} ({spec:?})", n + 1);
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| anyhow!("{what}: {part:?} is not key=value"))?;
        if fields.insert(k.trim(), v.trim()).is_some() {
            bail!("{what}: {k:?} is given twice");
        }
    }
    let take = |fields: &mut BTreeMap<&str, &str>, k: &str| fields.remove(k).map(str::to_string);
    let id = take(&mut fields, "id")
        .ok_or_else(|| anyhow!("{what}: give id=ID (the new judge column id)"))?;
    let kind = take(&mut fields, "provider").unwrap_or_else(|| "openai_compatible".into());
    let kind = match kind.as_str() {
        "openai_compatible" | "openai" => ProviderKind::OpenAiCompatible,
        "anthropic" => ProviderKind::Anthropic,
        "gemini" => ProviderKind::Gemini,
        other => bail!("{what}: provider {other:?} is not openai_compatible, anthropic or gemini"),
    };
    let model = take(&mut fields, "model").ok_or_else(|| anyhow!("{what}: give model=NAME"))?;
    let base_url =
        take(&mut fields, "base_url").unwrap_or_else(|| kind.default_base_url().to_string());
    let provider = match kind {
        ProviderKind::OpenAiCompatible => Provider::OpenAiCompatible { base_url, model },
        ProviderKind::Anthropic => Provider::Anthropic { base_url, model },
        ProviderKind::Gemini => Provider::Gemini { base_url, model },
    };
    let mut judge = JudgeConfig::new(id, provider);
    if let Some(path) = take(&mut fields, "rubric") {
        let text = fs::read_to_string(&path)
            .with_context(|| format!("{what}: cannot read the rubric file {path}"))?;
        judge.rubric = match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => {
                serde_path_to_error::deserialize::<_, Rubric>(v).map_err(|e| {
                    let at = e.path().to_string();
                    anyhow!(
                        "{what}: the rubric file {path}: at `{at}`: {}",
                        e.into_inner()
                    )
                })?
            }
            _ => Rubric {
                system: DEFAULT_RUBRIC_SYSTEM.to_string(),
                user_template: text,
            },
        };
    }
    if let Some(v) = take(&mut fields, "max_tokens") {
        judge.params.max_tokens = v
            .parse()
            .map_err(|_| anyhow!("{what}: max_tokens={v:?} is not a whole number"))?;
    }
    if let Some(v) = take(&mut fields, "temperature") {
        judge.params.temperature = v
            .parse()
            .map_err(|_| anyhow!("{what}: temperature={v:?} is not a number"))?;
    }
    let price = |fields: &mut BTreeMap<&str, &str>, k: &str| -> Result<Option<f64>> {
        take(fields, k)
            .map(|v| {
                v.parse::<f64>()
                    .map_err(|_| anyhow!("{what}: {k}={v:?} is not a number"))
            })
            .transpose()
    };
    let (pi, po) = (
        price(&mut fields, "price_in")?,
        price(&mut fields, "price_out")?,
    );
    if pi.is_some() || po.is_some() {
        judge.prices = Some(Prices {
            input_per_million: pi.unwrap_or(0.0),
            output_per_million: po.unwrap_or(0.0),
        });
    }
    if let Some(k) = fields.keys().next() {
        bail!("{what}: unknown key {k:?} (id, provider, base_url, model, rubric, max_tokens, temperature, price_in, price_out)");
    }
    Ok(judge)
}

/// Plans the judge coding of `audit`, reading text shards next to `bundle_path` as they are needed.
fn plan_with_shards(
    audit: &Audit,
    design: &BundleJudgeDesign,
    bundle_path: &Path,
) -> Result<BundleJudgePlan> {
    let dir = bundle_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let mut shards = BTreeMap::new();
    loop {
        let planned =
            plan_bundle_judging(audit, design.clone(), |c| lookup_text(audit, &shards, c))
                .context("the judge coding is refused")?;
        match planned {
            Planned::Ready(plan) => return Ok(*plan),
            Planned::NeedShards(ks) => {
                for k in ks {
                    let path = audit
                        .file
                        .texts
                        .as_ref()
                        .and_then(|t| t.rationale.as_ref())
                        .and_then(|r| r.shards.get(k))
                        .map(|s| dir.join(&s.path))
                        .ok_or_else(|| anyhow!("the bundle names no text shard number {k}"))?;
                    let bytes = fs::read(&path).with_context(|| {
                        format!(
                            "cannot read the text shard {} (it sits next to the bundle)",
                            path.display()
                        )
                    })?;
                    let shard =
                        atlas_core::TextShard::from_bytes(&bytes, audit).with_context(|| {
                            format!("{} is not a text shard of this bundle", path.display())
                        })?;
                    shards.insert(k, shard);
                }
            }
        }
    }
}

fn judge(a: &JudgeArgs) -> Result<ExitCode> {
    let policy = a.send.policy()?;
    let bytes = fs::read(&a.bundle)
        .with_context(|| format!("cannot read the bundle {}", a.bundle.display()))?;
    let audit = Audit::from_bytes(&bytes)
        .with_context(|| format!("{} is not a valid bundle", a.bundle.display()))?;
    let judges = a
        .judges
        .iter()
        .enumerate()
        .map(|(n, spec)| parse_judge_spec(spec, n))
        .collect::<Result<Vec<_>>>()?;
    let scope = match (a.sample, a.seed, a.limit) {
        (Some(n), Some(seed), _) => JudgeScope::Sample { n, seed },
        (_, _, Some(n)) => JudgeScope::First { n },
        _ => JudgeScope::All,
    };
    let design = BundleJudgeDesign {
        judges,
        scope,
        models: a.models.clone(),
        seed: a.jitter_seed,
        limits: Limits {
            max_calls: a.max_calls,
            max_cost: a.max_cost,
        },
    };
    let plan = match plan_with_shards(&audit, &design, &a.bundle) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(1));
        }
    };
    let e = &plan.estimate;
    println!(
        "judge coding {} of bundle {}: {} × {} judge(s) = {} call(s); cap {} call(s){}",
        plan.fingerprint,
        plan.bundle.id,
        plan.describe_cells(),
        plan.design.judges.len(),
        e.total_calls,
        plan.design.limits.max_calls,
        plan.design
            .limits
            .max_cost
            .map(|c| format!(", cost cap {c}"))
            .unwrap_or_default()
    );
    println!(
        "estimated tokens: {} in, at most {} out (1 token ≈ 4 characters); cost {}",
        e.judge_input_tokens,
        e.judge_output_tokens_max,
        cost_note(e)
    );
    for (j, judge) in plan.design.judges.iter().enumerate() {
        let n = plan.self_judge_calls(j);
        if n > 0 {
            println!(
                "judge {} ({}) is the model that produced {n} of the responses it judges (self-judge; marked for RQ3's no-self-judge rule)",
                judge.id,
                judge.provider.model()
            );
        }
    }
    fs::create_dir_all(&a.state)
        .with_context(|| format!("cannot create the state folder {}", a.state.display()))?;
    let plan_path = a.state.join("plan.json");
    let state_path = a.state.join("state.json");
    if plan_path.exists() {
        let text = fs::read_to_string(&plan_path)
            .with_context(|| format!("cannot read {}", plan_path.display()))?;
        let saved: BundleJudgePlan = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a judge-coding plan", plan_path.display()))?;
        if saved.fingerprint != plan.fingerprint {
            bail!(
                "{} holds the judge coding of another plan (fingerprint {} vs {} for these arguments): give the same --bundle, --judge and scope to resume it, or another --state folder",
                a.state.display(),
                saved.fingerprint,
                plan.fingerprint
            );
        }
    } else {
        write_atomic(&plan_path, serde_json::to_string(&plan)?.as_bytes())?;
    }
    if a.plan_only {
        println!("wrote {} (--plan-only: nothing sent)", plan_path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let owners: Vec<(&str, &Provider, &'static str)> = plan
        .design
        .judges
        .iter()
        .map(|j| (j.id.as_str(), &j.provider, "judge"))
        .collect();
    let keys = keys(&owners, &KeyEnv::default(), &a.send.key_env)?;
    let resumed = state_path.exists();
    let state = if resumed {
        let text = fs::read_to_string(&state_path)
            .with_context(|| format!("cannot read the run state {}", state_path.display()))?;
        RunState::from_json(&text)
            .with_context(|| format!("{} is not a run state", state_path.display()))?
    } else {
        plan.new_state()
    };
    let saved = SavedState {
        state,
        path: &state_path,
        resumed,
    };
    let sending = Sending {
        keys,
        policy,
        args: &a.send,
    };
    let (state, elapsed) = match drive(&plan, saved, sending, false)? {
        Driven::Done(state, elapsed) => (state, elapsed),
        other => return Ok(other.exit_code()),
    };
    let command = std::iter::once("atlas".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let text = std::str::from_utf8(&bytes)
        .context("the bundle is not UTF-8")?
        .trim_start_matches('\u{feff}');
    let file: atlas_core::BundleFile =
        serde_json::from_str(text).context("the bundle could not be read again")?;
    let merged = merge_judge_columns(
        file,
        &plan,
        &state,
        Some(&format!("Judge columns added by `{command}`.")),
    )
    .context("the labels cannot be merged into the bundle")?;
    let out = serde_json::to_string(&merged)?;
    Audit::from_bytes(out.as_bytes()).context("the written bundle does not read back")?;
    write_atomic(&a.out, out.as_bytes())?;
    let p = state.progress();
    println!(
        "done in {:.0} s: {} judge call(s), {} answered, {} failed; state {}",
        elapsed.as_secs_f64(),
        p.calls.total,
        p.calls.answered,
        p.calls.failed,
        state_path.display()
    );
    for c in judge_counts(&plan, &state) {
        let labels: Vec<String> = c.labels.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "judge {}: {} call(s); labels {}; no readable label {}; labels read after normalising {}; failed {}; not run {}; self-judge calls {}",
            c.judge,
            c.calls,
            if labels.is_empty() { "none".to_string() } else { labels.join(", ") },
            c.unreadable,
            c.normalised,
            c.failed,
            c.not_run,
            c.self_judge
        );
    }
    println!("panel: {}", judge_majority(&plan, &state).describe());
    println!(
        "wrote {} ({} bytes): bundle {} with {} judge column(s), {} new",
        a.out.display(),
        out.len(),
        merged.metadata.id,
        merged.responses.judges.len(),
        plan.design.judges.len()
    );
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------------------
// bundle, summary

fn bundle(a: &BundleArgs) -> Result<ExitCode> {
    let (plan, _) = read_plan(&a.plan)?;
    let state = read_state(&a.state, &plan)?;
    let info: BundleInfo = match &a.info {
        Some(path) => {
            serde_path_to_error::deserialize(read_json(path, "bundle info")?).map_err(|e| {
                let at = e.path().to_string();
                anyhow!("{}: at `{at}`: {}", path.display(), e.into_inner())
            })?
        }
        None => BundleInfo::new("pilot", "Pilot audit"),
    };
    let mut file = to_bundle(&state, &plan, &info).context("the run cannot become a bundle")?;
    // A task-paradigm run: its propositions go whole into the statement levels, so that
    // `atlas propositions --from bundle` (and the app) can read them back.
    if let Some(props) = crate::paradigms::plan_propositions(&a.plan)? {
        atlas_pilot::proposition::annotate_statements(&mut file, &props);
    }
    let command = std::iter::once("atlas".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    file.metadata.produced_by.command = Some(command);
    let text = serde_json::to_string(&file)?;
    Audit::from_bytes(text.as_bytes()).context("the written bundle does not read back")?;
    write_atomic(&a.out, text.as_bytes())?;
    let s = counts(&plan, &state);
    println!(
        "wrote {} ({} bytes): {} planned call(s), {} answered, {} failed, {} not run",
        a.out.display(),
        text.len(),
        s.planned,
        s.answered,
        s.failed,
        s.not_run
    );
    Ok(ExitCode::SUCCESS)
}

/// A run's counts (`atlas pilot summary`).
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    /// Planned audited calls.
    pub planned: usize,
    /// Audited calls answered.
    pub answered: usize,
    /// Audited calls finally failed.
    pub failed: usize,
    /// Audited calls pending or in flight.
    pub not_run: usize,
    /// Finally failed calls (audited and judge) by failure kind.
    pub failed_by_reason: BTreeMap<String, usize>,
    /// Finally failed calls (audited and judge) grouped by reason (`RunState::failure_groups`:
    /// kind, status and network cause), with the count and the first example; largest first.
    pub failure_groups: Vec<FailureGroup>,
    /// The message of each provider stopped early.
    pub early_stops: Vec<String>,
    /// Attempts beyond the first, summed over the settled calls.
    pub retries: u64,
    /// Answered audited calls by how the Selection was obtained.
    pub obtained: BTreeMap<String, usize>,
    /// Answered audited calls by extraction rule.
    pub rules: BTreeMap<String, usize>,
    /// Answered audited calls by Selection (raw).
    pub selections: BTreeMap<String, usize>,
    /// Judge calls: planned, answered, failed.
    pub judge_calls: [usize; 3],
    /// Per judge: label code (`E`, `QE` as `Q`, `N`, `D`, `R`, `.` = no label) → count, over the
    /// judge calls made.
    pub judge_labels: BTreeMap<String, BTreeMap<String, usize>>,
    /// Answered audited calls whose Selection needed normalising, by normalisation (`markup`,
    /// `invisible_characters`).
    pub normalised: BTreeMap<String, usize>,
    /// Per judge: labels read only after normalising (markup, invisible characters).
    pub judge_normalised: BTreeMap<String, usize>,
    /// The judge panel's binary majority (seed B.3) with its ties and too few readable votes;
    /// `None` without judges.
    pub judge_majority: Option<atlas_core::rq3::MajorityCounts>,
}

fn counts(plan: &Plan, state: &RunState) -> Counts {
    let mut c = Counts {
        planned: plan.calls.len(),
        failure_groups: state.failure_groups(),
        early_stops: state
            .early_stops()
            .iter()
            .map(|s| s.message.clone())
            .collect(),
        ..Counts::default()
    };
    let fail = |status: &CallStatus, c: &mut Counts| match status {
        CallStatus::Failed { reason, attempts } => {
            *c.failed_by_reason
                .entry(reason.kind.as_str().to_string())
                .or_default() += 1;
            c.retries += u64::from(attempts.saturating_sub(1));
        }
        CallStatus::Answered { attempts, .. } => c.retries += u64::from(attempts.saturating_sub(1)),
        _ => {}
    };
    for (record, call) in state.calls.iter().zip(&plan.calls) {
        fail(&record.status, &mut c);
        match &record.status {
            CallStatus::Answered { completion, .. } => {
                c.answered += 1;
                if let Some(t) = plan.template_of(call) {
                    let ex = extract_completion(completion, &t.answer_space);
                    let v = serde_json::to_value(ex.obtained).unwrap_or_default();
                    *c.obtained
                        .entry(v.as_str().unwrap_or("?").to_string())
                        .or_default() += 1;
                    let r = serde_json::to_value(ex.rule).unwrap_or_default();
                    *c.rules
                        .entry(r.as_str().unwrap_or("?").to_string())
                        .or_default() += 1;
                    for n in &ex.normalised {
                        *c.normalised.entry(n.as_str().to_string()).or_default() += 1;
                    }
                    *c.selections
                        .entry(if ex.raw.is_empty() {
                            "(none)".to_string()
                        } else {
                            ex.raw.clone()
                        })
                        .or_default() += 1;
                }
            }
            CallStatus::Failed { .. } => c.failed += 1,
            _ => c.not_run += 1,
        }
    }
    if !plan.design.judges.is_empty() {
        c.judge_majority = Some(pilot_judge_majority(state, plan));
    }
    for j in &state.judge_calls {
        fail(&j.status, &mut c);
        c.judge_calls[0] += 1;
        let labels = c.judge_labels.entry(j.judge.clone()).or_default();
        match &j.status {
            CallStatus::Answered { completion, .. } => {
                c.judge_calls[1] += 1;
                let reading = read_judge_label(&completion.text);
                let code = label_code(reading.label);
                *labels.entry(code.to_string()).or_default() += 1;
                let normalised = c.judge_normalised.entry(j.judge.clone()).or_default();
                if reading.label.is_some() && !reading.normalised.is_empty() {
                    *normalised += 1;
                }
            }
            CallStatus::Failed { .. } => {
                c.judge_calls[2] += 1;
                *labels.entry(".".to_string()).or_default() += 1;
            }
            _ => {}
        }
    }
    c
}

fn summary(a: &SummaryArgs) -> Result<ExitCode> {
    let (plan, _) = read_plan(&a.plan)?;
    let state = read_state(&a.state, &plan)?;
    let c = counts(&plan, &state);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json!(c))?);
        return Ok(ExitCode::SUCCESS);
    }
    let fmt = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "audited calls: {} planned, {} answered, {} failed, {} not run; retries (attempts beyond the first) {}",
        c.planned, c.answered, c.failed, c.not_run, c.retries
    );
    println!("failed by reason: {}", fmt(&c.failed_by_reason));
    print_failure_groups(&c.failure_groups, &c.early_stops);
    println!("Selection obtained: {}", fmt(&c.obtained));
    println!("Selection rules: {}", fmt(&c.rules));
    println!(
        "Selections read after normalising (markup, invisible characters): {}",
        if c.normalised.is_empty() {
            "none".to_string()
        } else {
            fmt(&c.normalised)
        }
    );
    println!("Selections: {}", fmt(&c.selections));
    println!(
        "judge calls: {} made, {} answered, {} failed",
        c.judge_calls[0], c.judge_calls[1], c.judge_calls[2]
    );
    for (judge, labels) in &c.judge_labels {
        println!(
            "judge {judge} labels: {}; read after normalising {}",
            fmt(labels),
            c.judge_normalised.get(judge).copied().unwrap_or(0)
        );
    }
    if let Some(m) = &c.judge_majority {
        println!("judge panel: {}", m.describe());
    }
    Ok(ExitCode::SUCCESS)
}

/// The failure groups (one line each: count, reason, first example) and the early stops, for the
/// summaries' text output.
pub(crate) fn print_failure_groups(groups: &[FailureGroup], stops: &[String]) {
    for g in groups {
        println!(
            "  {} × {} — first: {}: {}",
            g.count, g.label, g.first_call, g.first_message
        );
    }
    for m in stops {
        println!("early stop: {m}");
    }
}

/// `at most C (the prices' currency)`, plus how many calls have no price and are not counted.
pub(crate) fn cost_note(e: &atlas_pilot::plan::Estimate) -> String {
    let unpriced = if e.unpriced_calls > 0 {
        format!("; {} call(s) without a price not counted", e.unpriced_calls)
    } else {
        String::new()
    };
    format!("at most {:.4} (the prices' currency){unpriced}", e.cost_max)
}
