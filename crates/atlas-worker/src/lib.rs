//! The analysis job of the app's Web Worker, and the messages the page and the worker exchange.
//!
//! The page posts one [`Request`] (as JSON) with the bundle's bytes; the worker parses the bundle with
//! [`atlas_core::Audit::from_bytes`], runs [`atlas_core::rq1::analyze_rq1_with_progress`] or
//! [`atlas_core::rq2::analyze_rq2_with_progress`] — the same code as `atlas analyze-rq1` /
//! `analyze-rq2` — and answers with [`Reply`] messages (JSON): `ready` once it listens, `progress`
//! while it computes, then `done` with an [`Outcome`] (the report as the CLI's JSON, and its tables laid
//! out like the CLI's text, see [`tables`]) or `failed` with a message.
//!
//! The Compare view's paired part is a fourth job ([`Request::Compare`]): the matched units' 2×2 per
//! model pair and condition and the paired bootstrap replicates of each pair's BER difference
//! ([`atlas_core::compare::PairedReplicates`]), the BER replicates transferred as a `Float64Array`
//! like the bootstrap's means; the page joins them with the re-weighting bootstrap it already holds.
//!
//! The re-weighting panel's statement-cluster bootstrap is a third job ([`Request::Reweight`]): its
//! [`Outcome`] carries the replicate condition means ([`Replicates`]) — not as JSON (they would lose
//! bits) but as a transferred `Float64Array` next to the JSON reply. RQ1 and RQ2 outcomes also carry the
//! data of the evidence-atlas panels ([`Charts`]), including RQ2's per-draw values, which the report's
//! JSON leaves out.
//!
//! A fifth job, [`Request::Across`], compares models across the task-paradigm procedures of a
//! paradigm bundle ([`atlas_core::across::across_procedures`], seed Table 11), as `atlas paradigms
//! across` does.
//!
//! The loading shell's early Overview is a separate message ([`early`]): the ranking computed
//! here while the app's wasm is still downloading.
//!
//! Everything here is plain Rust: [`run`] is tested natively; only `src/main.rs` (the worker binary)
//! touches the browser.

#![warn(missing_docs)]

use atlas_core::across::{across_procedures, AcrossOptions, AcrossReport};
use atlas_core::reweight::{ReweightBootstrap, DEFAULT_BOOTSTRAP_REPS};
use atlas_core::rq1::{analyze_rq1_with_progress, Rq1Options, Rq1Report, WordingRankStability};
use atlas_core::rq2::{analyze_rq2_with_progress, Metric, Rq2Options, Rq2Report};
use atlas_core::{Audit, RepeatPolicy};
use serde::{Deserialize, Serialize};

pub use atlas_core::tables::{self, Cell, Table};

pub mod early;
pub mod planner;

/// File the page starts the worker from: Trunk's loader shim for the `atlas-worker` binary
/// (`data-loader-shim` in `index.html`; worker files are not content-hashed).
pub const WORKER_SCRIPT: &str = "atlas-worker_loader.js";

/// Settings of an RQ1 run (`atlas analyze-rq1 --seed --policy --unit-reps --cluster-reps`; the subset
/// size k = 3 and the control wording 1 are the CLI's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rq1Settings {
    /// Seed of the bootstrap streams ([`Rq1Options::seed`]).
    pub seed: u64,
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// Unit-bootstrap resamples of the paired wording difference (C.1: 20,000).
    pub unit_bootstrap_reps: usize,
    /// Statement-cluster bootstrap draws (Table 11: 10,000).
    pub cluster_bootstrap_reps: usize,
}

impl Default for Rq1Settings {
    fn default() -> Self {
        let o = Rq1Options::default();
        Rq1Settings {
            seed: o.seed,
            policy: o.policy,
            unit_bootstrap_reps: o.unit_bootstrap_reps,
            cluster_bootstrap_reps: o.cluster_bootstrap_reps,
        }
    }
}

impl Rq1Settings {
    /// The core options these settings stand for.
    pub fn options(&self) -> Rq1Options {
        Rq1Options {
            seed: self.seed,
            policy: self.policy,
            unit_bootstrap_reps: self.unit_bootstrap_reps,
            cluster_bootstrap_reps: self.cluster_bootstrap_reps,
            ..Rq1Options::default()
        }
    }
}

/// Settings of an RQ2 run (`atlas analyze-rq2 --draws --budget --seed --policy --bootstrap`; equal
/// reference weights, Eq. 4, and 95% ranges as the CLI's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rq2Settings {
    /// Seed of every stream ([`Rq2Options::seed`]).
    pub seed: u64,
    /// How repeats enter the unit values.
    pub policy: RepeatPolicy,
    /// Draws per design (D.2: 10,000).
    pub draws: usize,
    /// Responses per model per audit `B` (§3.5: 200).
    pub budget: usize,
    /// Bootstrap replicates of the contrast intervals (D.2: 2,000).
    pub bootstrap_reps: usize,
}

impl Default for Rq2Settings {
    fn default() -> Self {
        let o = Rq2Options::default();
        Rq2Settings {
            seed: o.seed,
            policy: o.policy,
            draws: o.draws,
            budget: o.budget,
            bootstrap_reps: o.bootstrap_reps,
        }
    }
}

impl Rq2Settings {
    /// The core options these settings stand for.
    pub fn options(&self) -> Rq2Options {
        Rq2Options {
            seed: self.seed,
            policy: self.policy,
            draws: self.draws,
            budget: self.budget,
            bootstrap_reps: self.bootstrap_reps,
            ..Rq2Options::default()
        }
    }
}

/// Settings of the re-weighting panel's statement-cluster bootstrap
/// ([`atlas_core::reweight::ReweightBootstrap`]; `atlas reweight --bootstrap --seed --policy`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReweightSettings {
    /// Seed of the draws (stream [`atlas_core::reweight::BOOTSTRAP_STREAM`] of it).
    pub seed: u64,
    /// Repeat policy of the unit values.
    pub policy: RepeatPolicy,
    /// Replicates (D.2: 2,000).
    pub reps: usize,
}

impl Default for ReweightSettings {
    fn default() -> Self {
        ReweightSettings {
            seed: atlas_core::reweight::DEFAULT_SEED,
            policy: RepeatPolicy::default(),
            reps: DEFAULT_BOOTSTRAP_REPS,
        }
    }
}

/// Settings of the Compare view's paired replicates ([`atlas_core::compare::PairedReplicates`];
/// `atlas compare --policy --reps --seed`): the same seed and replicates as the page's re-weighting
/// bootstrap ([`ReweightSettings`]), whose replicates the page reuses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompareSettings {
    /// Seed of the draws (stream [`atlas_core::reweight::BOOTSTRAP_STREAM`] of it).
    pub seed: u64,
    /// Repeat policy of the matched units.
    pub policy: RepeatPolicy,
    /// Replicates (D.2: 2,000).
    pub reps: usize,
}

/// What the page asks the worker to compute (posted as JSON next to the bundle bytes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "analysis", rename_all = "snake_case")]
pub enum Request {
    /// RQ1 (seed `000_…` §5.1–5.2): answered with an RQ1 [`Outcome`].
    Rq1(Rq1Settings),
    /// RQ2 (seed `000_…` §5.3): answered with an RQ2 [`Outcome`].
    Rq2(Rq2Settings),
    /// The statement-cluster bootstrap of the re-weighting panel: answered with [`Replicates`].
    Reweight(ReweightSettings),
    /// The Compare view's matched units and paired BER replicates (issue 17): answered with
    /// [`Outcome::paired`].
    Compare(CompareSettings),
    /// Across task paradigms (seed `000_…` §5.2, C.2, Table 11, [`atlas_core::across`]): per-model
    /// scores and ranks per procedure and the model pairs whose order reverses, answered with the
    /// tables of [`atlas_core::tables::paradigms`] and [`Charts::Across`] (panels (c) and (d) across
    /// procedures). The same code as `atlas paradigms across`.
    Across(AcrossOptions),
}

impl Request {
    /// The request as JSON (what the page posts).
    pub fn to_json(&self) -> String {
        // Plain numbers and a unit enum: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A finished analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// `rq1` or `rq2`.
    pub analysis: String,
    /// Lines above the tables: what was read and how (observable matrix, ranges, headline counts).
    pub summary: Vec<String>,
    /// The tables, laid out like the CLI's text output; each caption names bundle, seed, draws,
    /// budget, repeat policy and weights.
    pub tables: Vec<Table>,
    /// The report as JSON: [`atlas_core::rq1::Rq1Report`] or [`atlas_core::rq2::Rq2Report`], the
    /// same document as the CLI's `--json` / `--format json`; for a re-weighting bootstrap, its
    /// settings and shape.
    pub report: String,
    /// The bootstrap replicates of a [`Request::Reweight`] job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicates: Option<Replicates>,
    /// The data of the evidence-atlas panels that this analysis feeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charts: Option<Charts>,
    /// The paired replicates of a [`Request::Compare`] job; their `ber_diffs` travel beside the JSON
    /// as a transferred `Float64Array`, as [`Replicates::means`] do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<atlas_core::compare::PairedReplicates>,
}

/// The replicate condition means of a statement-cluster bootstrap
/// ([`ReweightBootstrap::replicate_means`]) and their shape. `means` is not part of the JSON: the worker
/// transfers it as a `Float64Array` beside the reply (exact bits, no copy), and the page puts it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replicates {
    /// Seed of the draws.
    pub seed: u64,
    /// Number of replicates.
    pub reps: usize,
    /// Models and conditions of the bundle (the shape of one replicate).
    pub models: usize,
    /// See `models`.
    pub conditions: usize,
    /// Repeat policy of the unit values.
    pub policy: RepeatPolicy,
    /// `[(r · models + m) · conditions + c]`, fractions, NaN = missing.
    #[serde(skip)]
    pub means: Vec<f64>,
}

impl Replicates {
    /// The bootstrap these replicates stand for ([`ReweightBootstrap::from_replicate_means`]).
    ///
    /// # Errors
    /// A message when `means` does not have the shape (e.g. the buffer did not arrive).
    pub fn into_bootstrap(self) -> Result<ReweightBootstrap, String> {
        let expected = self.reps * self.models * self.conditions;
        if self.means.len() != expected {
            return Err(format!(
                "the bootstrap replicates arrived with {} values, expected {expected}",
                self.means.len()
            ));
        }
        ReweightBootstrap::from_replicate_means(self.seed, self.models, self.conditions, self.means)
            .map_err(|e| e.to_string())
    }
}

/// Data of the evidence-atlas panels fed by an analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "analysis", rename_all = "snake_case")]
pub enum Charts {
    /// Panels (a) and (b).
    Rq1(Rq1Charts),
    /// Panels (e), (f) and the coverage curve.
    Rq2(Rq2Charts),
    /// Panels (c) and (d) across procedures: the whole report (it is small: models × procedures
    /// scores and ranks, pairs × procedures differences).
    Across(AcrossReport),
}

/// Panels (a) and (b): RQ1's per-wording scores and ranks ([`atlas_core::rq1::WordingRankStability`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rq1Charts {
    /// The bundle's score direction (the ranks below follow it).
    #[serde(default)]
    pub direction: atlas_core::ScoreDirection,
    /// Pooled (Eq. 4) score per model, fractions.
    pub pooled: Vec<Option<f64>>,
    /// Per model, the Abstain shares of the cells its pooled score averages (high-Abstain flags).
    #[serde(default)]
    pub pooled_abstain: Vec<atlas_core::ScoreAbstain>,
    /// `abstain[j][m]`: the same for model `m`'s score under wording `j`.
    #[serde(default)]
    pub abstain: Vec<Vec<atlas_core::ScoreAbstain>>,
    /// Pooled rank per model.
    pub pooled_ranks: Vec<Option<f64>>,
    /// `scores[j][m]`: model `m`'s score under wording `j`.
    pub scores: Vec<Vec<Option<f64>>>,
    /// `ranks[j][m]`: its rank under wording `j`.
    pub ranks: Vec<Vec<Option<f64>>>,
}

/// Panels (e), (f) and the coverage curve: RQ2's per-draw values and Table 14.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rq2Charts {
    /// Design labels (concentrated, SRS, stratified, balanced).
    pub designs: Vec<String>,
    /// Per design, per draw: the score error in pp (`DrawSummary::mae_contributions`, finite values).
    pub mae_pp: Vec<Vec<f64>>,
    /// Per design, per draw: the inversion rate in % of pairs (`inversion_contributions`).
    pub inversions_pct: Vec<Vec<f64>>,
    /// The coverage designs K′ = 1 … K.
    pub coverage: Vec<CoveragePoint>,
    /// The exclusions of the four designs for the captions of (e) and (f):
    /// [`atlas_core::tables::rq2_exclusions_phrase`] ("N unscored, P partial-drop model-draws").
    pub exclusions: String,
    /// The same over the coverage designs, for the coverage curve's caption.
    pub coverage_exclusions: String,
}

/// One K′ of the coverage curve (Table 14).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoveragePoint {
    /// Conditions covered K′.
    pub k: usize,
    /// Score MAE (pp), mean over draws.
    pub mae_pp: Option<f64>,
    /// Its 2.5–97.5 percentile range over draws.
    pub mae_range: Option<(f64, f64)>,
    /// Inversion rate vs the reference (% of pairs), mean over draws.
    pub inversions_pct: Option<f64>,
    /// Its range.
    pub inversions_range: Option<(f64, f64)>,
}

impl Rq1Charts {
    fn of(r: &Rq1Report) -> Self {
        let s = &r.rank_stability;
        Rq1Charts {
            direction: s.direction,
            pooled_abstain: s.pooled_abstain.clone(),
            abstain: s.abstain.clone(),
            pooled: s.pooled.clone(),
            pooled_ranks: s.pooled_ranks.clone(),
            scores: s.scores.clone(),
            ranks: s.ranks.clone(),
        }
    }

    /// The [`WordingRankStability`] these chart data come from, for the panel builders of
    /// `atlas_charts` (panels (a) and (b)): `policy` is the run's repeat policy; the per-model ranges
    /// and the per-wording τ-b, inversions and displacement, which the panels do not draw, are empty.
    pub fn stability(&self, policy: RepeatPolicy) -> WordingRankStability {
        WordingRankStability {
            policy,
            direction: self.direction,
            pooled: self.pooled.clone(),
            pooled_ranks: self.pooled_ranks.clone(),
            pooled_abstain: self.pooled_abstain.clone(),
            abstain: self.abstain.clone(),
            scores: self.scores.clone(),
            ranks: self.ranks.clone(),
            score_range_pp: Vec::new(),
            rank_range: Vec::new(),
            tau_b: Vec::new(),
            inversions: Vec::new(),
            max_displacement: Vec::new(),
        }
    }
}

impl Rq2Charts {
    fn of(r: &Rq2Report) -> Self {
        let finite = |v: &[f64]| v.iter().copied().filter(|x| x.is_finite()).collect();
        let scaled = |m: &Metric, k: f64| {
            (
                m.mean.map(|v| k * v),
                m.range.map(|[lo, hi]| (k * lo, k * hi)),
            )
        };
        Rq2Charts {
            designs: r.designs.iter().map(|d| d.label.clone()).collect(),
            mae_pp: r
                .designs
                .iter()
                .map(|d| finite(&d.summary.mae_contributions))
                .collect(),
            inversions_pct: r
                .designs
                .iter()
                .map(|d| finite(&d.summary.inversion_contributions))
                .collect(),
            coverage: r
                .coverage
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let (mae_pp, mae_range) = scaled(&d.summary.mae_pp, 1.0);
                    let (inversions_pct, inversions_range) =
                        scaled(&d.summary.inversion_rate, 100.0);
                    CoveragePoint {
                        k: d.conditions.unwrap_or(i + 1),
                        mae_pp,
                        mae_range,
                        inversions_pct,
                        inversions_range,
                    }
                })
                .collect(),
            exclusions: tables::rq2_exclusions_phrase(&r.designs),
            coverage_exclusions: tables::rq2_exclusions_phrase(&r.coverage),
        }
    }
}

/// A message from the worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The worker listens; messages posted before this one are lost.
    Ready,
    /// `done` of `total` steps (RQ2: draws over all designs; RQ1: analyses).
    Progress {
        /// Steps done.
        done: usize,
        /// Steps in all.
        total: usize,
        /// What is being computed, e.g. `draws over all designs`.
        stage: String,
    },
    /// The finished analysis (boxed: it is far larger than the other replies).
    Done(Box<Outcome>),
    /// The request could not be read or answered: a malformed message, a bundle that does not parse,
    /// an analysis error, or replicates that could not be sent.
    Failed {
        /// What went wrong, for the page to show.
        message: String,
    },
    /// A planner pool worker's part of one estimate ([`planner::PlanJob`]); its numbers travel
    /// beside the JSON as a transferred `Float64Array` ([`planner::pack_part`]).
    PlanPart(planner::PlanPartReply),
    /// A planner job that could not be computed.
    PlanFailed {
        /// The job's ticket.
        ticket: u64,
        /// Why, for the page to show.
        message: String,
    },
}

impl Reply {
    /// The message as JSON (what the worker posts).
    pub fn to_json(&self) -> String {
        // Serialising these plain types cannot fail (no maps with non-string keys).
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"type":"failed","message":"could not encode the reply: {e}"}}"#)
        })
    }

    /// Parses a message posted by the worker.
    ///
    /// # Errors
    /// The JSON error when `text` is not a [`Reply`].
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// Parses the bundle and runs `request`, calling `progress(done, total, stage)` as it goes.
///
/// # Errors
/// A message for readers: the bundle is invalid, the analysis cannot run on it (e.g. a budget above
/// the statements), or the report could not be encoded.
pub fn run(
    bundle: &[u8],
    request: &Request,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Outcome, String> {
    let audit = Audit::from_bytes(bundle).map_err(|e| format!("the bundle is invalid: {e}"))?;
    let encode = |e: serde_json::Error| format!("could not encode the report: {e}");
    match request {
        Request::Rq1(settings) => {
            const STAGES: [&str; 4] = [
                "wording sensitivity (Table 8)",
                "rank stability across wordings (Table 9)",
                "reversals across conditions (Table 11)",
                "done",
            ];
            let report =
                analyze_rq1_with_progress(&audit, settings.options(), &mut |done, total| {
                    progress(done, total, STAGES[done.min(3)])
                })
                .map_err(|e| format!("RQ1 cannot run on this bundle: {e}"))?;
            let (summary, tables) = tables::rq1(&audit, &report);
            Ok(Outcome {
                analysis: "rq1".into(),
                summary,
                tables,
                report: serde_json::to_string(&report).map_err(encode)?,
                replicates: None,
                charts: Some(Charts::Rq1(Rq1Charts::of(&report))),
                paired: None,
            })
        }
        Request::Rq2(settings) => {
            let report = analyze_rq2_with_progress(&audit, &settings.options(), &mut |d, t| {
                progress(d, t, "draws over all designs");
                true
            })
            .map_err(|e| format!("RQ2 cannot run on this bundle: {e}"))?;
            let (summary, tables) = tables::rq2(&report);
            Ok(Outcome {
                analysis: "rq2".into(),
                summary,
                tables,
                report: serde_json::to_string(&report).map_err(encode)?,
                replicates: None,
                charts: Some(Charts::Rq2(Rq2Charts::of(&report))),
                paired: None,
            })
        }
        Request::Reweight(settings) => {
            let units = atlas_core::stats::unit_counts(&audit, settings.policy);
            let boot = ReweightBootstrap::run_with_progress(
                &audit,
                &units,
                settings.reps,
                settings.seed,
                &mut |done, total| {
                    progress(done, total, "bootstrap replicates");
                    true
                },
            )
            .map_err(|e| format!("the bootstrap cannot run on this bundle: {e}"))?;
            let replicates = Replicates {
                seed: boot.seed(),
                reps: boot.reps(),
                models: units.models,
                conditions: units.conditions,
                policy: settings.policy,
                means: boot.replicate_means().to_vec(),
            };
            Ok(Outcome {
                analysis: "reweight".into(),
                summary: vec![format!(
                    "Statement-cluster bootstrap: seed {}, {} replicates (stream {}), repeat policy {}.",
                    replicates.seed,
                    replicates.reps,
                    atlas_core::reweight::BOOTSTRAP_STREAM,
                    settings.policy.key()
                )],
                tables: Vec::new(),
                report: serde_json::to_string(&replicates).map_err(encode)?,
                replicates: Some(replicates),
                charts: None,
                paired: None,
            })
        }
        Request::Compare(settings) => {
            let paired = atlas_core::compare::PairedReplicates::run_with_progress(
                &audit,
                settings.policy,
                settings.reps,
                settings.seed,
                &mut |done, total| {
                    progress(done, total, "paired bootstrap replicates");
                    true
                },
            )
            .map_err(|e| format!("the comparison cannot run on this bundle: {e}"))?;
            Ok(Outcome {
                analysis: "compare".into(),
                summary: vec![format!(
                    "Matched units and paired statement-cluster bootstrap: seed {}, {} replicates (stream {}), repeat policy {}, {} model pairs.",
                    paired.seed,
                    paired.reps,
                    atlas_core::reweight::BOOTSTRAP_STREAM,
                    settings.policy.key(),
                    paired.tables.len()
                )],
                tables: Vec::new(),
                report: serde_json::to_string(&paired).map_err(encode)?,
                replicates: None,
                charts: None,
                paired: Some(paired),
            })
        }
        Request::Across(options) => {
            progress(
                0,
                1,
                "paired statement-cluster bootstrap over the propositions",
            );
            let report = across_procedures(&audit, *options).map_err(|e| {
                format!("the comparison across procedures cannot run on this bundle: {e}")
            })?;
            progress(1, 1, "done");
            let (summary, tables) = tables::paradigms::across(&audit, &report);
            Ok(Outcome {
                analysis: "across".into(),
                summary,
                tables,
                report: serde_json::to_string(&report).map_err(encode)?,
                replicates: None,
                charts: Some(Charts::Across(report)),
                paired: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = include_str!("../../../tests/fixtures/tiny-bundle.json");

    #[test]
    fn requests_and_replies_round_trip_through_json() {
        let request = Request::Rq2(Rq2Settings {
            seed: u64::MAX,
            ..Rq2Settings::default()
        });
        let text = request.to_json();
        assert!(text.contains(r#""analysis":"rq2""#), "{text}");
        assert!(text.contains(r#""policy":"all_responses""#), "{text}");
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), request);
        let reply = Reply::Progress {
            done: 3,
            total: 7,
            stage: "draws".into(),
        };
        assert_eq!(Reply::from_json(&reply.to_json()).unwrap(), reply);
        assert_eq!(
            Reply::from_json(r#"{"type":"ready"}"#).unwrap(),
            Reply::Ready
        );
    }

    #[test]
    fn defaults_are_the_cli_defaults() {
        assert_eq!(Rq1Settings::default().seed, 20_260_716);
        assert_eq!(Rq1Settings::default().options(), Rq1Options::default());
        assert_eq!(Rq2Settings::default().seed, 20_260_722);
        assert_eq!(Rq2Settings::default().options(), Rq2Options::default());
    }

    #[test]
    fn rq2_job_reports_progress_and_the_cli_report() {
        let request = Request::Rq2(Rq2Settings {
            draws: 300,
            budget: 2,
            bootstrap_reps: 50,
            ..Rq2Settings::default()
        });
        let mut steps = Vec::new();
        let outcome = run(TINY.as_bytes(), &request, &mut |d, t, _| steps.push((d, t))).unwrap();
        assert!(steps.len() >= 2, "{steps:?}");
        let (done, total) = *steps.last().unwrap();
        assert_eq!(done, total);
        // The report is exactly what the CLI computes for the same settings.
        let audit = Audit::from_json(TINY).unwrap();
        let Request::Rq2(s) = request else {
            unreachable!()
        };
        let expected = atlas_core::rq2::analyze_rq2(&audit, &s.options()).unwrap();
        assert_eq!(outcome.report, serde_json::to_string(&expected).unwrap());
        assert_eq!(outcome.analysis, "rq2");
        let ids: Vec<&str> = outcome.tables.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["rq2-table13", "rq2-table14", "rq2-table15"]);
        for t in &outcome.tables {
            assert!(t.caption.contains(&audit.metadata().id), "{}", t.caption);
            assert!(t.caption.contains("seed 20260722"), "{}", t.caption);
            assert!(t.caption.contains("300 draws"), "{}", t.caption);
            assert!(t.caption.contains("budget 2"), "{}", t.caption);
            assert!(t.caption.contains("all_responses"), "{}", t.caption);
            assert!(t.caption.contains("equal (Eq. 4)"), "{}", t.caption);
        }
    }

    #[test]
    fn across_job_answers_the_cli_report_and_its_chart_data_survive_the_json_message() {
        let text = include_str!("../../../tests/fixtures/paradigm-across/bundle.json");
        let options = AcrossOptions {
            draws: 300,
            ..AcrossOptions::default()
        };
        let outcome = run(
            text.as_bytes(),
            &Request::Across(options),
            &mut |_, _, _| {},
        )
        .unwrap();
        let audit = Audit::from_json(text).unwrap();
        let expected = across_procedures(&audit, options).unwrap();
        assert_eq!(outcome.report, serde_json::to_string(&expected).unwrap());
        let ids: Vec<&str> = outcome.tables.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            ["across-scores", "across-propositions", "across-pairs"]
        );
        for t in &outcome.tables {
            assert!(
                t.caption.contains("paradigm-across-fixture"),
                "{}",
                t.caption
            );
            assert!(
                t.caption.contains("300 draws, random seed 20260716"),
                "{}",
                t.caption
            );
        }
        // What the page receives: the outcome as JSON, read back.
        // (serde_json's default float parser may be one ulp off: what the panels draw — ranks, the
        // reversal flags, δ to 1e-9 pp — must come through.)
        let back: Outcome =
            serde_json::from_str(&serde_json::to_string(&outcome).unwrap()).unwrap();
        let Some(Charts::Across(got)) = back.charts else {
            panic!("no chart data")
        };
        assert_eq!(got.models, expected.models);
        for (g, e) in got.procedures.iter().zip(&expected.procedures) {
            assert_eq!((&g.procedure, &g.ranks), (&e.procedure, &e.ranks));
        }
        assert_eq!(got.pairs.len(), expected.pairs.len());
        for (g, e) in got.pairs.iter().zip(&expected.pairs) {
            let flags = |p: &atlas_core::across::PairAcross| {
                (p.reverses, p.reverses_1pp, p.reverses_2pp, p.ci_supported)
            };
            assert_eq!(flags(g), flags(e));
            for (a, b) in g.deltas.iter().zip(&e.deltas) {
                assert!((a.delta_pp - b.delta_pp).abs() < 1e-9, "{a:?} {b:?}");
            }
        }
        assert_eq!(
            serde_json::from_str::<Request>(&Request::Across(options).to_json()).unwrap(),
            Request::Across(options)
        );
        // The tiny bundle has one condition: one procedure, no pair can reverse, and no panic.
        let one = run(
            TINY.as_bytes(),
            &Request::Across(options),
            &mut |_, _, _| {},
        )
        .unwrap();
        assert!(one.tables.iter().any(|t| t.id == "across-pairs"));
    }

    #[test]
    fn rq1_job_reports_three_steps_and_the_cli_report() {
        let settings = Rq1Settings {
            unit_bootstrap_reps: 100,
            cluster_bootstrap_reps: 100,
            ..Rq1Settings::default()
        };
        let mut steps = Vec::new();
        let outcome = run(TINY.as_bytes(), &Request::Rq1(settings), &mut |d, t, _| {
            steps.push((d, t))
        });
        let audit = Audit::from_json(TINY).unwrap();
        match atlas_core::rq1::analyze_rq1(&audit, settings.options()) {
            Ok(expected) => {
                let outcome = outcome.unwrap();
                assert_eq!(steps, [(0, 3), (1, 3), (2, 3), (3, 3)]);
                assert_eq!(outcome.report, serde_json::to_string(&expected).unwrap());
                let ids: Vec<&str> = outcome.tables.iter().map(|t| t.id.as_str()).collect();
                assert_eq!(
                    ids,
                    [
                        "rq1-table8",
                        "rq1-table9",
                        "rq1-table9-wordings",
                        "rq1-table11",
                        "rq1-table12"
                    ]
                );
            }
            Err(e) => assert_eq!(
                outcome.unwrap_err(),
                format!("RQ1 cannot run on this bundle: {e}")
            ),
        }
    }

    #[test]
    fn rq1_chart_data_give_back_the_stability_fields_the_panels_read() {
        let charts = Rq1Charts {
            direction: atlas_core::ScoreDirection::default(),
            pooled: vec![Some(0.25), None],
            pooled_abstain: Vec::new(),
            abstain: vec![Vec::new(), Vec::new()],
            pooled_ranks: vec![Some(1.0), None],
            scores: vec![vec![Some(0.5), None], vec![Some(0.0), Some(1.0)]],
            ranks: vec![vec![Some(1.0), None], vec![Some(1.0), Some(2.0)]],
        };
        let s = charts.stability(RepeatPolicy::FirstRepeat);
        assert_eq!(s.policy, RepeatPolicy::FirstRepeat);
        assert_eq!(
            (&s.pooled, &s.pooled_ranks, &s.scores, &s.ranks),
            (
                &charts.pooled,
                &charts.pooled_ranks,
                &charts.scores,
                &charts.ranks
            )
        );
        assert_eq!(s.abstain.len(), 2);
        assert!(s.tau_b.is_empty() && s.score_range_pp.is_empty());
    }

    #[test]
    fn reweight_job_returns_the_replicates_of_the_core_bootstrap() {
        let settings = ReweightSettings {
            reps: 130,
            ..ReweightSettings::default()
        };
        let mut steps = Vec::new();
        let outcome = run(
            TINY.as_bytes(),
            &Request::Reweight(settings),
            &mut |d, t, _| steps.push((d, t)),
        )
        .unwrap();
        assert_eq!(steps, [(64, 130), (128, 130), (130, 130)]);
        let audit = Audit::from_json(TINY).unwrap();
        let units = atlas_core::stats::unit_counts(&audit, settings.policy);
        let expected = ReweightBootstrap::run(&audit, &units, 130, settings.seed).unwrap();
        let replicates = outcome.replicates.clone().unwrap();
        assert_eq!(replicates.seed, 20_260_722);
        assert_eq!((replicates.models, replicates.conditions), (2, 2));
        // Bit for bit (NaN = missing compares by bits).
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&replicates.means), bits(expected.replicate_means()));
        // The JSON reply leaves the means out; the shape survives.
        let reply = Reply::from_json(&Reply::Done(Box::new(outcome)).to_json()).unwrap();
        let Reply::Done(back) = reply else {
            panic!("not done")
        };
        let shape = back.replicates.unwrap();
        assert!(shape.means.is_empty());
        assert_eq!(shape.reps, 130);
        let err = shape.clone().into_bootstrap().unwrap_err();
        assert!(err.contains("arrived with 0 values, expected 520"), "{err}");
        let boot = Replicates {
            means: expected.replicate_means().to_vec(),
            ..shape
        }
        .into_bootstrap()
        .unwrap();
        let weights = atlas_core::reweight::ConditionWeights::equal(
            &atlas_core::reweight::ReweightBasis::new(&audit, &units),
        );
        assert_eq!(
            boot.intervals(&weights, 0.95).unwrap(),
            expected.intervals(&weights, 0.95).unwrap()
        );
    }

    #[test]
    fn compare_job_gives_the_cli_comparison_when_joined_with_the_reweight_job() {
        // The page joins the two jobs' outcomes (Comparison::from_parts); the report must be the one
        // `atlas compare` computes (Comparison::new) for the same settings.
        let settings = CompareSettings {
            seed: 7,
            policy: RepeatPolicy::AllResponses,
            reps: 150,
        };
        let mut steps = Vec::new();
        let outcome = run(
            TINY.as_bytes(),
            &Request::Compare(settings),
            &mut |d, t, _| steps.push((d, t)),
        )
        .unwrap();
        assert_eq!(steps, [(64, 150), (128, 150), (150, 150)]);
        let paired = outcome.paired.clone().unwrap();
        let reweight = run(
            TINY.as_bytes(),
            &Request::Reweight(ReweightSettings {
                seed: 7,
                policy: settings.policy,
                reps: 150,
            }),
            &mut |_, _, _| {},
        )
        .unwrap();
        let boot = reweight.replicates.unwrap().into_bootstrap().unwrap();
        let audit = Audit::from_json(TINY).unwrap();
        let options = atlas_core::compare::CompareOptions {
            policy: settings.policy,
            reps: 150,
            seed: 7,
            ..Default::default()
        };
        let basis = atlas_core::reweight::ReweightBasis::from_audit(&audit, settings.policy);
        // The JSON leaves the BER replicates out (they travel as a Float64Array); the shape stays.
        let Reply::Done(back) =
            Reply::from_json(&Reply::Done(Box::new(outcome)).to_json()).unwrap()
        else {
            panic!("not done")
        };
        let shape = back.paired.unwrap();
        assert!(shape.ber_diffs.is_empty());
        assert_eq!(shape.tables, paired.tables);
        let err = atlas_core::compare::Comparison::from_parts(
            &audit,
            options,
            basis.clone(),
            boot.clone(),
            shape,
        )
        .unwrap_err();
        assert!(err.to_string().contains("BER differences"), "{err}");
        let joined =
            atlas_core::compare::Comparison::from_parts(&audit, options, basis, boot, paired)
                .unwrap();
        let whole = atlas_core::compare::Comparison::new(&audit, options).unwrap();
        let w = atlas_core::reweight::ConditionWeights::equal(whole.basis());
        assert_eq!(
            serde_json::to_string(&joined.report(&w).unwrap()).unwrap(),
            serde_json::to_string(&whole.report(&w).unwrap()).unwrap()
        );
    }

    #[test]
    fn rq2_outcome_carries_the_per_draw_values_of_the_atlas_panels() {
        let request = Request::Rq2(Rq2Settings {
            draws: 50,
            budget: 2,
            bootstrap_reps: 20,
            ..Rq2Settings::default()
        });
        let outcome = run(TINY.as_bytes(), &request, &mut |_, _, _| {}).unwrap();
        let Some(Charts::Rq2(charts)) = &outcome.charts else {
            panic!("no RQ2 chart data")
        };
        assert_eq!(charts.designs.len(), 4);
        assert!(charts.mae_pp.iter().all(|d| d.len() == 50));
        assert!(charts.inversions_pct.iter().all(|d| d.len() == 50));
        assert_eq!(
            charts.coverage.iter().map(|p| p.k).collect::<Vec<_>>(),
            [1, 2]
        );
        // The captions' exclusion counts are the report's, over the designs each chart shows.
        let report: Rq2Report = {
            let Request::Rq2(s) = &request else {
                unreachable!()
            };
            atlas_core::rq2::analyze_rq2(&Audit::from_json(TINY).unwrap(), &s.options()).unwrap()
        };
        assert_eq!(
            charts.exclusions,
            tables::rq2_exclusions_phrase(&report.designs)
        );
        assert_eq!(
            charts.coverage_exclusions,
            tables::rq2_exclusions_phrase(&report.coverage)
        );
        assert!(charts.exclusions.ends_with("partial-drop model-draws"));
        // It survives the JSON reply.
        let Reply::Done(back) =
            Reply::from_json(&Reply::Done(Box::new(outcome.clone())).to_json()).unwrap()
        else {
            panic!("not done")
        };
        assert_eq!(back.charts.as_ref().map(|_| ()), Some(()));
    }

    #[test]
    fn an_invalid_bundle_is_a_message_not_a_panic() {
        let err = run(
            b"{}",
            &Request::Rq2(Rq2Settings::default()),
            &mut |_, _, _| {},
        )
        .unwrap_err();
        assert!(err.starts_with("the bundle is invalid: "), "{err}");
    }

    #[test]
    fn an_impossible_budget_is_a_message() {
        let request = Request::Rq2(Rq2Settings {
            budget: 100_000,
            draws: 10,
            ..Rq2Settings::default()
        });
        let err = run(TINY.as_bytes(), &request, &mut |_, _, _| {}).unwrap_err();
        assert!(
            err.starts_with("RQ2 cannot run on this bundle: budget 100000"),
            "{err}"
        );
    }
}
