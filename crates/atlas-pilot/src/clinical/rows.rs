//! The calls of a clinical run as a results table shows them: one [`ClinicalCallRow`] per planned
//! call, with its status (including calls waiting for a dependency and calls that will never run),
//! what the lenient parsers read from its reply, and why it failed or was skipped. Used by the
//! browser's clinical pilot section; the texts are the model's, to be shown as text, never as HTML.

use crate::clinical::parse::{
    parse_answer, parse_counterfactual, parse_plausibility, parse_stereotype,
};
use crate::clinical::protocol::{CallKind, ClinicalPlan, ClinicalProgress, Readiness};
use crate::run::{CallStatus, RunState};

/// One planned call of a clinical run, for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClinicalCallRow {
    /// The call id (`{model}/{item}/{kind}[/{variant}]`).
    pub id: String,
    /// The audited model's level id.
    pub model: String,
    /// The item's id (`medqa_{i}`).
    pub item: String,
    /// [`CallKind::name`].
    pub kind: &'static str,
    /// The variant's `condition` level id of an answer or stereotype call, else empty.
    pub variant: String,
    /// `waiting` (a dependency is not answered yet), `ready`, `skipped` (it will never run),
    /// `in_flight`, `answered`, `failed`.
    pub status: &'static str,
    /// Attempts made.
    pub attempts: u32,
    /// What the parser read from an answered call: `ANSWER B`, `CHANGE and MODIFIED_QUESTION read`,
    /// `SCORE 4`, `STEREOTYPE_FOUND Yes (clinically_misleading, pain)`, or what is missing.
    pub reading: String,
    /// The reply's text, trimmed (empty until answered).
    pub text: String,
    /// Why the call failed, why its last attempt failed, what it waits for, or why it is skipped.
    pub reason: String,
}

/// The rows of `plan`'s calls in plan order. A state of another plan gives rows for the calls both
/// have in common (callers check the plan first).
pub fn call_rows(plan: &ClinicalPlan, state: &RunState) -> Vec<ClinicalCallRow> {
    plan.calls
        .iter()
        .zip(&state.calls)
        .enumerate()
        .map(|(index, (call, record))| {
            let item = plan.design.items.get(call.item as usize);
            let variant = match &call.kind {
                CallKind::Answer { variant } | CallKind::Stereotype { variant } => variant.clone(),
                _ => String::new(),
            };
            let mut row = ClinicalCallRow {
                id: call.id.clone(),
                model: plan
                    .model_of(call)
                    .map(|m| m.id.clone())
                    .unwrap_or_default(),
                item: item.map(|i| i.id.clone()).unwrap_or_default(),
                kind: call.kind.name(),
                variant,
                status: "ready",
                attempts: 0,
                reading: String::new(),
                text: String::new(),
                reason: String::new(),
            };
            match &record.status {
                CallStatus::Pending {
                    attempts,
                    last_error,
                    ..
                } => {
                    row.attempts = *attempts;
                    match plan.readiness(state, index) {
                        Readiness::Ready(_) => {
                            row.reason = last_error
                                .as_ref()
                                .map(|e| e.message.clone())
                                .unwrap_or_default();
                        }
                        Readiness::Waiting(on) => {
                            row.status = "waiting";
                            row.reason = format!("waits for {on}");
                        }
                        Readiness::Skipped(why) => {
                            row.status = "skipped";
                            row.reason = why;
                        }
                    }
                }
                CallStatus::InFlight { attempt, .. } => {
                    row.status = "in_flight";
                    row.attempts = *attempt;
                }
                CallStatus::Answered {
                    completion,
                    attempts,
                    ..
                } => {
                    row.status = "answered";
                    row.attempts = *attempts;
                    row.text = completion.text.trim().to_string();
                    row.reading = match &call.kind {
                        CallKind::Answer { .. } | CallKind::Reanswer => {
                            let options = item.map(|i| i.options.clone()).unwrap_or_default();
                            let r = parse_answer(&completion.text, &options);
                            let read = match r.letter {
                                Some(l) => format!("ANSWER {l} ({})", r.rule.as_str()),
                                None => format!("no readable ANSWER ({})", r.rule.as_str()),
                            };
                            read + &normalised_note(&r.normalised)
                        }
                        CallKind::Counterfactual => {
                            let r = parse_counterfactual(&completion.text);
                            r.failure()
                                .unwrap_or_else(|| "CHANGE and MODIFIED_QUESTION read".into())
                                + &normalised_note(&r.normalised)
                        }
                        CallKind::Plausibility => {
                            let r = parse_plausibility(&completion.text);
                            let note = normalised_note(&r.normalised);
                            let read = match (r.score, r.failure) {
                                (Some(s), _) => format!("SCORE {s}"),
                                (None, Some(f)) => f,
                                (None, None) => "no SCORE".into(),
                            };
                            read + &note
                        }
                        CallKind::Stereotype { .. } => {
                            let r = parse_stereotype(&completion.text);
                            let note = normalised_note(&r.normalised);
                            let read: String = match r.found {
                                Some(true) => {
                                    let details: Vec<&str> =
                                        [r.severity.map(|s| s.as_str()), r.category.as_deref()]
                                            .into_iter()
                                            .flatten()
                                            .collect();
                                    if details.is_empty() {
                                        "STEREOTYPE_FOUND Yes".into()
                                    } else {
                                        format!("STEREOTYPE_FOUND Yes ({})", details.join(", "))
                                    }
                                }
                                Some(false) => "STEREOTYPE_FOUND No".into(),
                                None => r.failure.unwrap_or_else(|| "no STEREOTYPE_FOUND".into()),
                            };
                            read + &note
                        }
                    };
                }
                CallStatus::Failed { reason, attempts } => {
                    row.status = "failed";
                    row.attempts = *attempts;
                    row.reason = reason.message.clone();
                }
            }
            row
        })
        .collect()
}

impl ClinicalProgress {
    /// The counts of rows made by [`call_rows`]: the same as [`ClinicalPlan::progress`] on the same
    /// state, without judging every pending call's dependencies a second time.
    pub fn from_rows(rows: &[ClinicalCallRow]) -> Self {
        let mut p = ClinicalProgress {
            total: rows.len(),
            ..ClinicalProgress::default()
        };
        for r in rows {
            match r.status {
                "answered" => p.answered += 1,
                "failed" => p.failed += 1,
                "skipped" => p.skipped += 1,
                "in_flight" => p.in_flight += 1,
                "waiting" => p.waiting += 1,
                _ => p.ready += 1,
            }
        }
        p
    }
}

/// ` · normalised: markup, invisible_characters` for a reading that needed the normaliser, else
/// empty.
fn normalised_note(normalised: &[crate::normalise::Normalisation]) -> String {
    if normalised.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = normalised.iter().map(|n| n.as_str()).collect();
    format!(" · normalised: {}", names.join(", "))
}
