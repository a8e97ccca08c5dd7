//! The calls of a clinical run as a results table shows them: one [`ClinicalCallRow`] per planned
//! call, with its status (including calls waiting for a dependency and calls that will never run),
//! what the lenient parsers read from its reply, and why it failed or was skipped. Used by the
//! browser's clinical pilot section; the texts are the model's, to be shown as text, never as HTML.
//!
//! [`ClinicalRows`] keeps the table current call by call, as [`crate::rows`] does for a pilot: a
//! call's dependencies and dependents all lie in its model × question block
//! ([`crate::clinical::protocol`], "Calls"), so a settled call rebuilds the 16 rows of its block,
//! not every row.

use crate::clinical::parse::{
    parse_answer, parse_counterfactual, parse_plausibility, parse_stereotype,
};
use crate::clinical::protocol::{
    CallKind, ClinicalPlan, ClinicalProgress, Readiness, CALLS_PER_ITEM,
};
use crate::run::{CallStatus, RunState};

/// Where a clinical call stands in the results table: a pending call is `waiting`, `ready` or
/// `skipped` by its dependencies ([`ClinicalPlan::readiness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClinicalRowStatus {
    /// Pending behind a dependency that is not answered yet.
    Waiting,
    /// Pending, startable now or after a retry wait.
    Ready,
    /// Pending, and it will never run (a dependency failed or is unusable).
    Skipped,
    /// Sent, no answer yet.
    InFlight,
    /// Answered.
    Answered,
    /// Finally failed.
    Failed,
}

impl ClinicalRowStatus {
    /// `waiting`, `ready`, `skipped`, `in_flight`, `answered`, `failed`: the `data-status` of the
    /// app's rows.
    pub fn as_str(self) -> &'static str {
        match self {
            ClinicalRowStatus::Waiting => "waiting",
            ClinicalRowStatus::Ready => "ready",
            ClinicalRowStatus::Skipped => "skipped",
            ClinicalRowStatus::InFlight => "in_flight",
            ClinicalRowStatus::Answered => "answered",
            ClinicalRowStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for ClinicalRowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// Where it stands.
    pub status: ClinicalRowStatus,
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
    (0..plan.calls.len().min(state.calls.len()))
        .filter_map(|index| call_row(plan, state, index))
        .collect()
}

/// A clinical run's rows, kept current call by call (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClinicalRows {
    rows: Vec<ClinicalCallRow>,
}

impl ClinicalRows {
    /// Every row from scratch ([`call_rows`]).
    pub fn new(plan: &ClinicalPlan, state: &RunState) -> Self {
        ClinicalRows {
            rows: call_rows(plan, state),
        }
    }

    /// Brings the table up to date after call `id` changed in `state`. A call now answered or
    /// failed rebuilds the rows of its model × question block (what waits for it may now be ready
    /// or skipped); a call begun or back to pending rebuilds its own row only (what waits for it
    /// waits either way). Unknown ids change nothing.
    pub fn update(&mut self, plan: &ClinicalPlan, state: &RunState, id: &str) {
        let Some(index) = plan.index_of(id) else {
            return;
        };
        let settled = matches!(
            state.calls.get(index).map(|c| &c.status),
            Some(CallStatus::Answered { .. } | CallStatus::Failed { .. })
        );
        let (start, end) = if settled {
            let start = index - index % CALLS_PER_ITEM;
            (start, (start + CALLS_PER_ITEM).min(self.rows.len()))
        } else {
            (index, index + 1)
        };
        for i in start..end {
            if let (Some(row), Some(new)) = (self.rows.get_mut(i), call_row(plan, state, i)) {
                *row = new;
            }
        }
    }

    /// The rows, in plan order.
    pub fn rows(&self) -> &[ClinicalCallRow] {
        &self.rows
    }

    /// The counts of the rows ([`ClinicalProgress::from_rows`]).
    pub fn progress(&self) -> ClinicalProgress {
        ClinicalProgress::from_rows(&self.rows)
    }
}

/// The row of call `index`; `None` past the end of the plan or the state.
pub(crate) fn call_row(
    plan: &ClinicalPlan,
    state: &RunState,
    index: usize,
) -> Option<ClinicalCallRow> {
    let (call, record) = (plan.calls.get(index)?, state.calls.get(index)?);
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
        status: ClinicalRowStatus::Ready,
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
                    row.status = ClinicalRowStatus::Waiting;
                    row.reason = format!("waits for {on}");
                }
                Readiness::Skipped(why) => {
                    row.status = ClinicalRowStatus::Skipped;
                    row.reason = why;
                }
            }
        }
        CallStatus::InFlight { attempt, .. } => {
            row.status = ClinicalRowStatus::InFlight;
            row.attempts = *attempt;
        }
        CallStatus::Answered {
            completion,
            attempts,
            ..
        } => {
            row.status = ClinicalRowStatus::Answered;
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
            row.status = ClinicalRowStatus::Failed;
            row.attempts = *attempts;
            row.reason = reason.message.clone();
        }
    }
    Some(row)
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
                ClinicalRowStatus::Answered => p.answered += 1,
                ClinicalRowStatus::Failed => p.failed += 1,
                ClinicalRowStatus::Skipped => p.skipped += 1,
                ClinicalRowStatus::InFlight => p.in_flight += 1,
                ClinicalRowStatus::Waiting => p.waiting += 1,
                ClinicalRowStatus::Ready => p.ready += 1,
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
