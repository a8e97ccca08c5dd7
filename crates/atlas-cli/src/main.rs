//! `atlas`: the Audit Atlas command line.
//!
//! - `atlas convert decodingtrust --input DIR --out DIR` builds the default bundle;
//! - `atlas convert qpain --input DIR --out DIR [--embed-dir DIR]` builds the Q-Pain clinical test
//!   bundle with all-MiniLM-L6-v2 explanation embeddings (tests only; the data has no license);
//! - `atlas convert amqa --input DIR --out DIR` builds the AMQA clinical test bundle (answer letters
//!   of six providers × 8 variants; tests only, the data has no license);
//! - `atlas clinical stats FILE [--format text|json|csv]` prints the clinical metrics of seed `001_…`
//!   (accuracy, answer change, EDD, CFV, failure modes, stereotype flags, directions, Table 5 profile);
//! - `atlas synth --seed S --out FILE` writes a seeded SYNTHETIC full-scale bundle (no real outputs);
//! - `atlas analyze-rq2 FILE --draws N --budget B --seed S [--policy P] [--format text|json|csv]`
//!   runs the equal-budget audits of seed `000_…` §3.5 (Tables 13, 14, 15);
//! - `atlas plan-audit FILE [--design D …] [--budget N | --budgets a,b,c] [--models …] [--draws N]
//!   [--seed S] [--target-mae X] [--target-inversions Y] [--pair A,B --target-pair Z] [--json]`
//!   plans an audit with the bundle as the finite reference (issue 17: predicted error per design and
//!   budget, smallest budget meeting a target);
//! - `atlas import --mapping M.json IN... -o OUT` imports CSV / TSV / JSONL / JSON results into a
//!   bundle (`--preview` shows detected columns and value counts; see `docs/import-mapping.md`);
//!   `atlas import --format auto|lm-eval|… LOG... -o OUT` reads tool logs (lm-evaluation-harness
//!   `samples_*.jsonl` + `results_*.json`) with their reader's preset mapping;
//! - `atlas likelihood FILE [--basis auto|mean|sum] [--json]` prints the likelihood readouts'
//!   stereotyped-candidate preference (CrowS preference, seed `000_…` §C.2) per model and condition;
//! - `atlas reweight FILE [--policy P] [--weights c=w,… | --preset equal|baseline|sweep:NAME]
//!   [--format text|json|csv]` re-weights the reference score (the app's re-weighting panel);
//! - `atlas analyze-rq3 FILE [--rule R] [--format text|json|csv]` compares the Selection with the
//!   judge-coded Rationale (seed `000_…` §3.3, §5.4, E.2, E.3; Tables 3, 18, 19);
//! - `atlas propositions --from crows|bbq|json FILE… [--limit N] [--seed S] -o props.json` and
//!   `atlas paradigms plan|score …`: propositions rendered as the four task paradigms of seed `000_…`
//!   Table 10, run through `atlas pilot`, and likelihood scores (`docs/paradigms.md`);
//! - `atlas pilot design|plan|run|bundle|summary …` runs a pilot audit against real providers with
//!   keys from environment variables (`docs/pilot.md`, "Native runner");
//! - `atlas overview FILE [--policy P] [--reps N] [--seed S] [--json]` prints the headline of a bundle
//!   (what it is, size, provenance, ranking with 95% intervals, findings): the app's Overview;
//! - `atlas compare FILE [--a MODEL --b MODEL] [--policy P] [--weights … | --preset …] [--reps N]
//!   [--seed S] [--alpha A] [--json | --csv [pairs|bands]]` compares models: McNemar's exact and mid-p
//!   tests on matched units, paired BER and Eq. 4 score differences with statement-cluster bootstrap
//!   intervals, BH and Holm adjustments over all pairs, the separable matrix and rank bands;
//! - `atlas validate FILE` reads a bundle and reports the first problem, naming record and field;
//! - `atlas stats FILE [--policy P] [--json] [--abstain-threshold T]` prints Selection BER per model ×
//!   condition and the condition-balanced reference score (seed `000_…` Eq. 4) with ranks in the
//!   bundle's score direction, flagging high-Abstain cells and the ranks that rest on them.

mod amqa;
mod clinical;
mod compare;
mod decodingtrust;
mod import;
mod likelihood;
mod overview;
mod paradigms;
mod pilot;
mod plan;
mod probe;
mod qpain;
mod reweight;
mod rq1;
mod rq2;
mod rq3;
mod stats;
mod synth;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use atlas_core::stats::RepeatPolicy;
use atlas_core::Audit;
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "atlas",
    version,
    about = "Audit Atlas: build, check and summarise LLM bias-audit bundles"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Convert real audit data into a bundle.
    Convert {
        #[command(subcommand)]
        source: ConvertSource,
    },
    /// Clinical perturbation audits (seed 001; docs/clinical.md).
    Clinical {
        #[command(subcommand)]
        command: clinical::ClinicalCommand,
    },
    /// Generate a seeded SYNTHETIC full-scale bundle (seed 000 Table 6 design; no real model outputs).
    Synth(synth::SynthArgs),
    /// RQ2 (seed 000 §3.5, §5.3, D.1, D.2): equal-budget audits, printed like Tables 13, 14 and 15.
    AnalyzeRq2(rq2::AnalyzeRq2Args),
    /// Plan an audit with the bundle as the finite reference (seed 000 §3.5, §5.3): predicted score
    /// MAE, RMSE, τ-b, inversions and a pair's order per design and budget, and the smallest budget
    /// meeting a target. Predicts error against this bundle's conditions, not unseen ones.
    PlanAudit(plan::PlanAuditArgs),
    /// RQ3 (seed 000 §3.3, §5.4, E.2, E.3): Selection versus judge-coded Rationale, printed like
    /// Tables 3, 18 and 19 with the per model × condition cells.
    AnalyzeRq3(rq3::AnalyzeRq3Args),
    /// Import CSV, TSV, JSONL or JSON results into a bundle with a mapping file, or tool logs
    /// (lm-evaluation-harness samples/results) with their reader's preset (docs/import-mapping.md).
    Import(import::ImportArgs),
    /// Likelihood readouts (seed 000 §4.3, §C.2): the share of items whose stereotyped candidate
    /// scores higher (CrowS preference), per model and per model × condition, with ties and missing
    /// readouts counted. Kept apart from the Selection results.
    Likelihood(likelihood::LikelihoodArgs),
    /// Re-weight the reference score (Eq. 4) per condition: scores, ranks, τ-b and inverted pairs
    /// against equal weights, statement-cluster bootstrap intervals (the app's re-weighting panel).
    Reweight(reweight::ReweightArgs),
    /// The headline of a bundle: what it is, its size and provenance, the ranking by the reference
    /// score (Eq. 4) with 95% intervals, and the headline findings (the app's Overview).
    Overview(overview::OverviewArgs),
    /// Compare models: paired McNemar tests on matched units, BER and Eq. 4 score differences with
    /// statement-cluster bootstrap intervals, BH (FDR) and Holm adjustments, separable pairs, rank
    /// bands and tie groups (docs/statistics.md, "Comparing models").
    Compare(compare::CompareArgs),
    /// Pilot audits against real providers (docs/pilot.md): design, plan (estimate and hard cap),
    /// run or resume with retries and a persisted state, bundle, summary.
    Pilot(pilot::PilotArgs),
    /// Propositions from CrowS-Pairs, BBQ or your own JSON, for the task-paradigm adapters
    /// (seed 000 §4.3, Table 10; docs/paradigms.md).
    Propositions(paradigms::PropositionsArgs),
    /// The four task paradigms of seed 000 Table 10 (CLEAR, BBQ ambiguous / disambiguated, StereoSet,
    /// CrowS style): plan them as a pilot, and score StereoSet / CrowS candidates by likelihood
    /// (SS, LMS, ICAT, CrowS preference, §C.2).
    Paradigms(paradigms::ParadigmsArgs),
    /// Validate a bundle file; exits 1 with the problem (record, field) when it is invalid.
    Validate { file: PathBuf },
    /// RQ1 (seed 000 §5.1, §5.2): wording sensitivity, rank stability across wordings, reversals
    /// across conditions with tie zones and statement-cluster bootstrap intervals.
    AnalyzeRq1 {
        /// The bundle file.
        file: PathBuf,
        /// How repeats enter the numbers (all responses, the first repeat, or the unit majority).
        #[arg(long, value_enum, default_value_t = Policy::AllResponses)]
        policy: Policy,
        /// Seed of every bootstrap draw.
        #[arg(long, default_value_t = 20_260_716)]
        seed: u64,
        /// Wording-subset size k of the matched comparison.
        #[arg(long, default_value_t = 3)]
        k: usize,
        /// Unit-bootstrap resamples of the paired difference.
        #[arg(long, default_value_t = 20_000)]
        unit_reps: usize,
        /// Statement-cluster bootstrap draws.
        #[arg(long, default_value_t = 10_000)]
        cluster_reps: usize,
        /// Print JSON instead of text tables.
        #[arg(long)]
        json: bool,
    },
    /// Print Selection BER per model × condition and the condition-balanced reference score (seed 000
    /// Eq. 4) with ranks: the app's BER table.
    Stats {
        /// The bundle file.
        file: PathBuf,
        /// How repeats enter the numbers (all responses, the first repeat, or the unit majority).
        #[arg(long, value_enum, default_value_t = Policy::AllResponses)]
        policy: Policy,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Flag BER cells whose Abstain share is above this fraction, and the ranks resting on them
        /// (seed 000 §B.2: an Abstain is missing; docs/statistics.md).
        #[arg(long, default_value_t = atlas_core::abstain::DEFAULT_ABSTAIN_THRESHOLD, value_parser = stats::parse_threshold)]
        abstain_threshold: f64,
    },
}

#[derive(Subcommand)]
enum ConvertSource {
    /// DecodingTrust stereotype generations (the default bundle).
    Decodingtrust {
        /// The staged folder, e.g. ../shared/data/raw/decodingtrust-stereotype
        #[arg(long)]
        input: PathBuf,
        /// Output folder; bundle.json and rationale-*.json are written there.
        #[arg(long)]
        out: PathBuf,
    },
    /// Q-Pain-style demographic responses (clinical bundle with explanation embeddings; tests only:
    /// the data has no license).
    Qpain(qpain::QpainArgs),
    /// AMQA answer letters of six providers on MedQA vignettes × 8 demographic variants (clinical
    /// bundle; tests only: the data has no license).
    Amqa(amqa::AmqaArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Policy {
    AllResponses,
    FirstRepeat,
    UnitMajority,
}

impl From<Policy> for RepeatPolicy {
    fn from(p: Policy) -> Self {
        match p {
            Policy::AllResponses => RepeatPolicy::AllResponses,
            Policy::FirstRepeat => RepeatPolicy::FirstRepeat,
            Policy::UnitMajority => RepeatPolicy::UnitMajority,
        }
    }
}

fn main() -> ExitCode {
    restore_default_sigpipe();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Convert {
            source: ConvertSource::Decodingtrust { input, out },
        } => {
            let done = decodingtrust::convert(&input, &out)?;
            println!(
                "wrote {} ({} bytes, {} cells) and {} Rationale shards ({} bytes)",
                done.bundle_path.display(),
                done.bundle_bytes,
                done.cells,
                done.shard_files,
                done.shard_bytes
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Convert {
            source: ConvertSource::Qpain(args),
        } => {
            qpain::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Convert {
            source: ConvertSource::Amqa(args),
        } => {
            amqa::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Clinical { command } => clinical::run(command),
        Command::Synth(args) => {
            synth::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::AnalyzeRq2(args) => rq2::run(args),
        Command::PlanAudit(args) => plan::run(args),
        Command::AnalyzeRq3(args) => rq3::run(args),
        Command::Reweight(args) => reweight::run(args),
        Command::Overview(args) => overview::run(args),
        Command::Likelihood(args) => likelihood::run(&args),
        Command::Compare(args) => compare::run(args),
        Command::Pilot(args) => pilot::run(args),
        Command::Propositions(args) => paradigms::propositions(&args),
        Command::Paradigms(args) => paradigms::run(args),
        Command::Import(args) => {
            let command_line = std::iter::once("atlas".to_string())
                .chain(std::env::args().skip(1))
                .collect::<Vec<_>>()
                .join(" ");
            import::run(&args, command_line)
        }
        Command::Validate { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            match Audit::from_json(&text) {
                Ok(audit) => {
                    println!(
                        "{}: valid bundle {:?}, {} cells",
                        file.display(),
                        audit.metadata().id,
                        audit.cells
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("{}: invalid bundle: {e}", file.display());
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::AnalyzeRq1 {
            file,
            policy,
            seed,
            k,
            unit_reps,
            cluster_reps,
            json,
        } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let audit = Audit::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", file.display()))?;
            let options = atlas_core::rq1::Rq1Options {
                k,
                control_wording: 0,
                unit_bootstrap_reps: unit_reps,
                cluster_bootstrap_reps: cluster_reps,
                seed,
                policy: policy.into(),
            };
            let report = atlas_core::rq1::analyze_rq1(&audit, options)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                rq1::print_text(&audit, &report);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Stats {
            file,
            policy,
            json,
            abstain_threshold,
        } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let audit = Audit::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: invalid bundle: {e}", file.display()))?;
            let threshold = atlas_core::AbstainThreshold::new(abstain_threshold)?;
            stats::print(&audit, policy.into(), json, threshold)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Rust ignores SIGPIPE, so `atlas stats … | head` would make `println!` panic once `head` exits.
/// Restoring the default action ends the process quietly instead, as other command-line tools do.
#[cfg(unix)]
fn restore_default_sigpipe() {
    // SAFETY: called first thing in `main`, before any thread exists; `signal` with `SIG_DFL` only
    // resets the disposition of SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_default_sigpipe() {}
