//! The analysis job of the app's Web Worker, and the messages the page and the worker exchange.
//!
//! The page posts one [`Request`] (as JSON) with the bundle's bytes; the worker parses the bundle with
//! [`atlas_core::Audit::from_bytes`], runs [`atlas_core::rq1::analyze_rq1_with_progress`] or
//! [`atlas_core::rq2::analyze_rq2_with_progress`] — the same code as `atlas analyze-rq1` /
//! `analyze-rq2` — and answers with [`Reply`] messages (JSON): `ready` once it listens, `progress`
//! while it computes, then `done` with an [`Outcome`] (the report as the CLI's JSON, and its tables laid
//! out like the CLI's text, see [`tables`]) or `failed` with a message.
//!
//! Everything here is plain Rust: [`run`] is tested natively; only `src/main.rs` (the worker binary)
//! touches the browser.

use atlas_core::rq1::{analyze_rq1_with_progress, Rq1Options};
use atlas_core::rq2::{analyze_rq2_with_progress, Rq2Options};
use atlas_core::{Audit, RepeatPolicy};
use serde::{Deserialize, Serialize};

pub use atlas_core::tables::{self, Cell, Table};

/// File the page starts the worker from: Trunk's loader shim for the `atlas-worker` binary
/// (`data-loader-shim` in `index.html`; worker files are not content-hashed).
pub const WORKER_SCRIPT: &str = "atlas-worker_loader.js";

/// Settings of an RQ1 run (`atlas analyze-rq1 --seed --policy --unit-reps --cluster-reps`; the subset
/// size k = 3 and the control wording 1 are the CLI's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rq1Settings {
    pub seed: u64,
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
    pub seed: u64,
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

/// What the page asks the worker to compute (posted as JSON next to the bundle bytes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "analysis", rename_all = "snake_case")]
pub enum Request {
    Rq1(Rq1Settings),
    Rq2(Rq2Settings),
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
    /// same document as the CLI's `--json` / `--format json`.
    pub report: String,
}

/// A message from the worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The worker listens; messages posted before this one are lost.
    Ready,
    /// `done` of `total` steps (RQ2: draws over all designs; RQ1: analyses).
    Progress {
        done: usize,
        total: usize,
        stage: String,
    },
    Done(Outcome),
    Failed {
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
