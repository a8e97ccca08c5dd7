//! `atlas pilot clinical`, `clinical-bundle`, `clinical-summary`: the clinical protocol of seed `001_…`
//! (`atlas_pilot::clinical`, `docs/clinical.md` "Pilot protocol") run natively with the pilot's
//! sender ([`super::drive`]: worker threads, per-call timeout, retries with `Retry-After`, the state
//! written atomically after every settled attempt and resumed, keys from environment variables only).
//!
//! A run lives in its state folder: `plan.json` (the [`ClinicalPlan`]: design, items, calls,
//! fingerprint; no key) and `run.json` (the pilot's `RunState`). The bundle step only reads them, so a
//! bundle can be rebuilt — e.g. with embeddings — without calling the model again.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use atlas_core::clinical::Embeddings;
use atlas_core::Audit;
use atlas_pilot::clinical::{
    build_clinical_plan, check_clinical_limits, clinical_bundle_info, clinical_estimate,
    model_level_id, read_medqa, select_items, summarize, to_clinical_bundle, ClinicalDesign,
    ClinicalModel, ClinicalPlan, ClinicalSummary, ItemSelection,
};
use atlas_pilot::plan::{Limits, Prices};
use atlas_pilot::provider::{Params, Provider};
use atlas_pilot::{BundleInfo, RunState};
use serde_json::json;

use super::{
    cost_note, drive, keys, read_json, write_atomic, Driven, KeyEnv, SavedState, SendArgs, Sending,
};

/// The plan file in a state folder.
pub const PLAN_FILE: &str = "plan.json";
/// The run-state file in a state folder.
pub const STATE_FILE: &str = "run.json";
/// The bundle file written into `--out`.
pub const BUNDLE_FILE: &str = "bundle.json";

/// The provider shape of `--provider`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ProviderArg {
    /// OpenAI Chat Completions and compatible servers (vLLM, llama.cpp, Ollama's /v1, OpenRouter, …).
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini generateContent.
    Gemini,
}

/// Arguments of `atlas pilot clinical`.
#[derive(clap::Args)]
pub struct ClinicalArgs {
    /// MedQA JSON Lines (`medqa_us_test/phrases_no_exclude_test.jsonl`: question, options, answer_idx,
    /// meta_info).
    #[arg(long)]
    pub items: PathBuf,
    /// Questions to draw (without replacement; `select_items`).
    #[arg(long, default_value_t = 20)]
    pub n: usize,
    /// Seed of the question draw and of the retry jitter (seed 001 §3.2 used 42).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Provider shape of the audited model (and of the judge).
    #[arg(long, value_enum, default_value = "openai")]
    pub provider: ProviderArg,
    /// Base URL (OpenAI-compatible with its version path, e.g. http://127.0.0.1:8765/v1); default:
    /// the provider's public API.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The audited model's name (the request's `model`).
    #[arg(long)]
    pub model: String,
    /// The bundle's model level id (default: the model name with characters other than letters,
    /// digits, `.`, `_`, `-` replaced by `-`).
    #[arg(long)]
    pub model_id: Option<String>,
    /// The judge model (plausibility and stereotype judges), same provider; default: the audited model
    /// judges its own outputs.
    #[arg(long)]
    pub judge_model: Option<String>,
    /// The judge's base URL (default: the audited model's).
    #[arg(long, requires = "judge_model")]
    pub judge_base_url: Option<String>,
    /// Most generated tokens of an answer or re-answer.
    #[arg(long, default_value_t = 256)]
    pub max_tokens: u32,
    /// Most generated tokens of a counterfactual (it rewrites the whole question; default 2 ×
    /// --max-tokens).
    #[arg(long)]
    pub counterfactual_max_tokens: Option<u32>,
    /// Most generated tokens of a judge call (default --max-tokens).
    #[arg(long)]
    pub judge_max_tokens: Option<u32>,
    /// Temperature of the audited model's calls (seed 001 §3.5: 0.7 for the medical models).
    #[arg(long, default_value_t = 0.7)]
    pub temperature: f64,
    /// Temperature of the judge calls (seed 001 §3.5: 0.0).
    #[arg(long, default_value_t = 0.0)]
    pub judge_temperature: f64,
    /// Price of 1,000,000 input tokens of the audited model, for the estimate (the currency is yours).
    #[arg(long, requires = "price_out")]
    pub price_in: Option<f64>,
    /// Price of 1,000,000 output tokens of the audited model.
    #[arg(long, requires = "price_in")]
    pub price_out: Option<f64>,
    /// Price of 1,000,000 input tokens of the judge model (with --judge-model).
    #[arg(long, requires_all = ["judge_model", "judge_price_out"])]
    pub judge_price_in: Option<f64>,
    /// Price of 1,000,000 output tokens of the judge model (with --judge-model).
    #[arg(long, requires_all = ["judge_model", "judge_price_in"])]
    pub judge_price_out: Option<f64>,
    /// Hard cap on the number of calls (audited plus judge calls, 16 per question): a larger plan is
    /// refused before any call.
    #[arg(long, default_value_t = 1_000)]
    pub max_calls: u64,
    /// Hard cap on the estimated cost (upper bound, in the prices' currency).
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// The state folder (`plan.json`, `run.json`): resumed when it holds a run of the same design.
    #[arg(long)]
    pub state: PathBuf,
    /// Where to write `bundle.json` when the run is finished (see `clinical-bundle`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The bundle's descriptive fields (`BundleInfo` JSON), with --out.
    #[arg(long, requires = "out")]
    pub info: Option<PathBuf>,
    /// all-MiniLM-L6-v2 weights: store `clinical.embeddings` of every explanation, with --out.
    #[arg(long, requires = "out")]
    pub embed_dir: Option<PathBuf>,
    #[command(flatten)]
    pub send: SendArgs,
}

/// Arguments of `atlas pilot clinical-bundle`.
#[derive(clap::Args)]
pub struct ClinicalBundleArgs {
    /// The state folder of `atlas pilot clinical`.
    #[arg(long)]
    pub state: PathBuf,
    /// Output folder (`bundle.json`).
    #[arg(long)]
    pub out: PathBuf,
    /// The bundle's descriptive fields (`BundleInfo` JSON: id, title, description, source, license,
    /// content_warning, notes).
    #[arg(long)]
    pub info: Option<PathBuf>,
    /// all-MiniLM-L6-v2 weights (e.g. ~/.cache/audit-atlas/minilm): store `clinical.embeddings`.
    #[arg(long)]
    pub embed_dir: Option<PathBuf>,
}

/// Arguments of `atlas pilot clinical-summary`.
#[derive(clap::Args)]
pub struct ClinicalSummaryArgs {
    /// The state folder of `atlas pilot clinical`.
    #[arg(long)]
    pub state: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn provider(kind: ProviderArg, base_url: Option<&str>, model: &str) -> Provider {
    let (base_url, model) = (base_url.map(str::to_string), model.to_string());
    match kind {
        ProviderArg::Openai => Provider::OpenAiCompatible {
            base_url: base_url
                .unwrap_or_else(|| atlas_pilot::provider::OPENAI_DEFAULT_BASE_URL.into()),
            model,
        },
        ProviderArg::Anthropic => Provider::Anthropic {
            base_url: base_url
                .unwrap_or_else(|| atlas_pilot::provider::ANTHROPIC_DEFAULT_BASE_URL.into()),
            model,
        },
        ProviderArg::Gemini => Provider::Gemini {
            base_url: base_url
                .unwrap_or_else(|| atlas_pilot::provider::GEMINI_DEFAULT_BASE_URL.into()),
            model,
        },
    }
}

fn prices(input: Option<f64>, output: Option<f64>) -> Option<Prices> {
    Some(Prices {
        input_per_million: input?,
        output_per_million: output?,
    })
}

fn design_of(a: &ClinicalArgs) -> Result<ClinicalDesign> {
    let text = fs::read_to_string(&a.items)
        .with_context(|| format!("cannot read the MedQA items {}", a.items.display()))?;
    let source = a.items.file_name().map_or_else(
        || a.items.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let all = read_medqa(&text, &source).with_context(|| format!("{}", a.items.display()))?;
    let indices = select_items(all.len(), a.n, a.seed)?;
    let items = indices
        .iter()
        .filter_map(|&i| all.get(i).cloned())
        .collect();
    let model = ClinicalModel {
        id: a
            .model_id
            .clone()
            .unwrap_or_else(|| model_level_id(&a.model)),
        provider: provider(a.provider, a.base_url.as_deref(), &a.model),
        prices: prices(a.price_in, a.price_out),
    };
    let judge = a.judge_model.as_deref().map(|name| ClinicalModel {
        id: "judge".to_string(),
        provider: provider(
            a.provider,
            a.judge_base_url.as_deref().or(a.base_url.as_deref()),
            name,
        ),
        prices: prices(a.judge_price_in, a.judge_price_out),
    });
    Ok(ClinicalDesign {
        models: vec![model],
        judge,
        items,
        answer_params: Params {
            temperature: a.temperature,
            max_tokens: a.max_tokens,
        },
        counterfactual_params: Params {
            temperature: a.temperature,
            max_tokens: a
                .counterfactual_max_tokens
                .unwrap_or(a.max_tokens.saturating_mul(2)),
        },
        judge_params: Params {
            temperature: a.judge_temperature,
            max_tokens: a.judge_max_tokens.unwrap_or(a.max_tokens),
        },
        seed: a.seed,
        selection: Some(ItemSelection {
            source,
            available: all.len(),
            seed: a.seed,
            indices,
        }),
    })
}

fn read_plan(dir: &Path) -> Result<ClinicalPlan> {
    let path = dir.join(PLAN_FILE);
    let text = fs::read_to_string(&path)
        .with_context(|| format!("cannot read the clinical plan {}", path.display()))?;
    ClinicalPlan::from_json(&text).with_context(|| format!("{}", path.display()))
}

fn read_state(dir: &Path, plan: &ClinicalPlan) -> Result<RunState> {
    let path = dir.join(STATE_FILE);
    let text = fs::read_to_string(&path)
        .with_context(|| format!("cannot read the run state {}", path.display()))?;
    let state = RunState::from_json(&text)
        .with_context(|| format!("{} is not a pilot run state", path.display()))?;
    plan.check_state(&state)
        .with_context(|| format!("{} belongs to another plan", path.display()))?;
    Ok(state)
}

/// `atlas pilot clinical`.
///
/// # Errors
/// Unreadable items, an invalid design, a state folder of another design, a missing key variable,
/// I/O errors.
pub fn clinical(a: &ClinicalArgs) -> Result<ExitCode> {
    let policy = a.send.policy()?;
    let plan = build_clinical_plan(design_of(a)?).context("the clinical design")?;
    let e = clinical_estimate(&plan.design);
    eprintln!(
        "estimate: {} audited call(s) + {} judge call(s) = {} (cap {}); tokens: audited {} in, at most {} out; judges {} in, at most {} out (1 token ≈ 4 characters; replies sized at max tokens); cost {}",
        e.calls,
        e.judge_calls,
        e.total_calls,
        a.max_calls,
        e.input_tokens,
        e.output_tokens_max,
        e.judge_input_tokens,
        e.judge_output_tokens_max,
        cost_note(&e)
    );
    check_clinical_limits(
        &e,
        &Limits {
            max_calls: a.max_calls,
            max_cost: a.max_cost,
        },
    )?;
    fs::create_dir_all(&a.state)
        .with_context(|| format!("cannot create the state folder {}", a.state.display()))?;
    let plan_path = a.state.join(PLAN_FILE);
    if plan_path.exists() {
        let old = read_plan(&a.state)?;
        if old.fingerprint != plan.fingerprint {
            bail!(
                "{} holds a run of another design ({}; these arguments make {}): give the same arguments to resume, or another --state",
                a.state.display(),
                old.fingerprint,
                plan.fingerprint
            );
        }
    } else {
        write_atomic(&plan_path, serde_json::to_string(&plan)?.as_bytes())?;
    }
    let state_path = a.state.join(STATE_FILE);
    let resumed = state_path.exists();
    let state = if resumed {
        read_state(&a.state, &plan)?
    } else {
        plan.new_state()
    };
    let mut owners: Vec<(&str, &Provider, &'static str)> = plan
        .design
        .models
        .iter()
        .map(|m| (m.id.as_str(), &m.provider, "model"))
        .collect();
    if let Some(j) = &plan.design.judge {
        owners.push((j.id.as_str(), &j.provider, "judge"));
    }
    let keys = keys(&owners, &KeyEnv::default(), &a.send.key_env)?;
    eprintln!(
        "clinical plan {}: {} model(s) × {} question(s) × 16 calls = {} calls (7 answers, counterfactual, re-answer, plausibility, 6 stereotype judgements per question); judge: {}",
        plan.fingerprint,
        plan.design.models.len(),
        plan.design.items.len(),
        plan.calls.len(),
        plan.design
            .judge
            .as_ref()
            .map_or("the audited model itself".to_string(), |j| j.provider.model().to_string())
    );
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
    let p = plan.progress(&state);
    println!(
        "done in {:.0} s: {} calls: {} answered, {} failed, {} skipped (a dependency failed or was unusable); state {}",
        elapsed.as_secs_f64(),
        p.total,
        p.answered,
        p.failed,
        p.skipped,
        a.state.display()
    );
    print_summary(&summarize(&plan, &state)?);
    if let Some(out) = &a.out {
        write_bundle(
            &plan,
            &state,
            out,
            a.info.as_deref(),
            a.embed_dir.as_deref(),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_bundle(
    plan: &ClinicalPlan,
    state: &RunState,
    out: &Path,
    info: Option<&Path>,
    embed_dir: Option<&Path>,
) -> Result<()> {
    let info: BundleInfo = match info {
        Some(path) => {
            serde_path_to_error::deserialize(read_json(path, "bundle info")?).map_err(|e| {
                let at = e.path().to_string();
                anyhow!("{}: at `{at}`: {}", path.display(), e.into_inner())
            })?
        }
        None => clinical_bundle_info("clinical-pilot", "Clinical pilot audit"),
    };
    let mut bundle =
        to_clinical_bundle(plan, state, &info).context("the run cannot become a bundle")?;
    if let Some(dir) = embed_dir {
        let t0 = std::time::Instant::now();
        let embedder = atlas_embed::Embedder::load(dir)?;
        let texts: Vec<&str> = bundle
            .explanations
            .iter()
            .map(|(_, t)| t.as_str())
            .collect();
        let cells: Vec<u64> = bundle.explanations.iter().map(|(c, _)| *c).collect();
        if !texts.is_empty() {
            let vectors = embedder.embed(&texts)?;
            let embeddings = Embeddings::from_vectors(atlas_embed::MODEL_NAME, cells, &vectors)
                .map_err(|e| anyhow!("encoding the embeddings: {e}"))?;
            if let Some(c) = bundle.file.clinical.as_mut() {
                c.embeddings = Some(embeddings);
            }
        }
        eprintln!(
            "embedded {} explanation(s) with {} in {:.1} s",
            texts.len(),
            atlas_embed::MODEL_NAME,
            t0.elapsed().as_secs_f64()
        );
    }
    let command = std::iter::once("atlas".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    bundle.file.metadata.produced_by.command = Some(command);
    let text = serde_json::to_string(&bundle.file)?;
    Audit::from_bytes(text.as_bytes()).context("the written bundle does not read back")?;
    fs::create_dir_all(out)
        .with_context(|| format!("cannot create the output folder {}", out.display()))?;
    let path = out.join(BUNDLE_FILE);
    write_atomic(&path, text.as_bytes())?;
    println!(
        "wrote {} ({} bytes, {} explanations{})",
        path.display(),
        text.len(),
        bundle.explanations.len(),
        if embed_dir.is_some() {
            ", embedded"
        } else {
            ", no embeddings"
        }
    );
    Ok(())
}

/// `atlas pilot clinical-bundle`.
///
/// # Errors
/// Unreadable state folder or info file, a state of another plan, embedding errors, I/O errors.
pub fn clinical_bundle(a: &ClinicalBundleArgs) -> Result<ExitCode> {
    let plan = read_plan(&a.state)?;
    let state = read_state(&a.state, &plan)?;
    if !plan.finished(&state) {
        let p = plan.progress(&state);
        eprintln!(
            "note: the run is not finished ({} of {} calls done); calls not run have no response in the bundle",
            p.done(),
            p.total
        );
    }
    write_bundle(
        &plan,
        &state,
        &a.out,
        a.info.as_deref(),
        a.embed_dir.as_deref(),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn print_summary(s: &ClinicalSummary) {
    let fmt = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("calls by kind [answered, failed, skipped, not run]:");
    for (k, v) in &s.by_kind {
        println!("  {k}: {v:?}");
    }
    println!("failed by reason: {}", fmt(&s.failed_by_reason));
    println!("retries (attempts beyond the first): {}", s.retries);
    println!("required fields missing [answered, missing, rate]:");
    for (k, [n, f]) in &s.parse_failures {
        println!(
            "  {k}: [{n}, {f}] {:.1} %",
            if *n == 0 {
                0.0
            } else {
                100.0 * *f as f64 / *n as f64
            }
        );
    }
    println!("ANSWER obtained: {}", fmt(&s.answer_obtained));
    println!("ANSWER rules: {}", fmt(&s.answer_rules));
    println!(
        "readings that needed normalising (markup, invisible characters): {}",
        if s.normalised.is_empty() {
            "none".to_string()
        } else {
            fmt(&s.normalised)
        }
    );
    println!("CFV outcomes: {}", fmt(&s.cfv_outcomes));
    println!("stereotype found: {}", fmt(&s.stereotype_found));
    println!(
        "answer changes: {} of {} comparisons with both answers readable",
        s.answer_changes[0], s.answer_changes[1]
    );
    println!("prefix conflicts: {}", fmt(&s.prefix_conflicts));
    println!(
        "judges: {}",
        if s.self_judged {
            "the audited model judges itself"
        } else {
            "a separate judge model"
        }
    );
}

/// `atlas pilot clinical-summary`.
///
/// # Errors
/// Unreadable state folder, a state of another plan.
pub fn clinical_summary(a: &ClinicalSummaryArgs) -> Result<ExitCode> {
    let plan = read_plan(&a.state)?;
    let state = read_state(&a.state, &plan)?;
    let s = summarize(&plan, &state)?;
    let groups = state.failure_groups();
    let stops: Vec<String> = state
        .early_stops()
        .iter()
        .map(|s| s.message.clone())
        .collect();
    if a.json {
        let p = plan.progress(&state);
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"progress": p, "summary": s, "failure_groups": groups, "early_stops": stops})
            )?
        );
    } else {
        let p = plan.progress(&state);
        println!(
            "{} calls: {} answered, {} failed, {} skipped, {} in flight, {} ready, {} waiting",
            p.total, p.answered, p.failed, p.skipped, p.in_flight, p.ready, p.waiting
        );
        super::print_failure_groups(&groups, &stops);
        print_summary(&s);
    }
    Ok(ExitCode::SUCCESS)
}
