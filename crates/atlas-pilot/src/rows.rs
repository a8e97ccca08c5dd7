//! The results tables of a pilot run and of judge coding of a loaded bundle, kept current call by
//! call: one [`PilotRow`] per audited call with what was read from its answer (Selection, how it was
//! obtained, the rule, the Rationale) and the label of each judge, and one [`JudgedRow`] per judge
//! call of a judge coding. The clinical pilot's rows are [`crate::clinical::rows`].
//!
//! A runner settles one call at a time. [`PilotRows::update`] and [`JudgedRows::update`] rebuild
//! only the row that call changes (an audited call's row; for a judge call, the judged call's
//! label), so a run of `n` calls reads each answer once when it comes in, not `n` times; the
//! `new` constructors build every row from scratch (a new, restored or interrupted run). The texts
//! are the model's: shown as text, never as HTML.
//!
//! Definitions follow seed `000_…` (BiAxisBias): the Selection and how it was obtained (§3.3, read
//! by [`mod@crate::extract`]), the judge labels E/QE/N/D/R (§3.3, B.3, read by
//! [`crate::judge::read_judge_label`]) and the panel's strict binary majority (B.3).

use atlas_core::bundle::RationaleLabel;
use atlas_core::rq3::MajorityCounts;

use crate::bundle_judge::BundleJudgePlan;
use crate::extract::{extract_completion, Extraction};
use crate::judge::{label_code, majority_counts, parse_judge_label};
use crate::plan::{Plan, PlannedCall};
use crate::run::{CallRecord, CallState, CallStatus, RunState};

/// One row of a pilot's results table: an audited call (model text as plain strings).
#[derive(Debug, Clone, PartialEq)]
pub struct PilotRow {
    /// Call id.
    pub id: String,
    /// Model id.
    pub model: String,
    /// Condition id.
    pub condition: String,
    /// Template id.
    pub template: String,
    /// Statement text.
    pub statement: String,
    /// Repeat, from 1.
    pub repeat: u32,
    /// Where the call stands.
    pub status: CallState,
    /// Attempts made.
    pub attempts: u32,
    /// Selection as read (`""` for none, and until answered).
    pub selection: String,
    /// How it was obtained (`regex`, `fallback`, `parser_failure`, `refusal`; seed §3.3).
    pub obtained: String,
    /// The extraction rule, with the normalisations it needed (`rule (normalised: markup)`).
    pub rule: String,
    /// The Rationale, else the whole response text, trimmed.
    pub text: String,
    /// Why the call failed, or why its last attempt failed.
    pub reason: String,
    /// One label code per judge of the design, in design order (`E`, `Q`, `N`, `D`, `R`; `.` for
    /// none yet, failed or unreadable), joined; empty without judges.
    pub judges: String,
}

/// A pilot's rows, kept current call by call (module docs), with the judge panel's labels.
#[derive(Debug, Clone, PartialEq)]
pub struct PilotRows {
    rows: Vec<PilotRow>,
    /// Per row, per judge of the design: the label read from the judge call (`None`: not answered,
    /// failed or unreadable).
    labels: Vec<Vec<Option<RationaleLabel>>>,
    /// Per row: whether a judge call of a design judge exists for it (it counts in the majority).
    judged: Vec<bool>,
    /// How many of the state's judge calls were taken in.
    judge_calls_seen: usize,
    /// The design's judges.
    judges: usize,
}

impl PilotRows {
    /// Every row of `plan`'s calls from `state`, in plan order (a state of another plan gives the
    /// rows of the calls both have in common: callers check the plan first).
    pub fn new(plan: &Plan, state: &RunState) -> Self {
        let judges = plan.design.judges.len();
        let n = plan.calls.len().min(state.calls.len());
        let mut rows = PilotRows {
            rows: Vec::with_capacity(n),
            labels: vec![vec![None; judges]; n],
            judged: vec![false; n],
            judge_calls_seen: 0,
            judges,
        };
        for (call, record) in plan.calls.iter().zip(&state.calls) {
            rows.rows.push(pilot_row(plan, call, record));
        }
        rows.add_judge_calls(plan, state);
        for i in 0..n {
            rows.write_judges(i);
        }
        rows
    }

    /// Brings the table up to date after call or judge call `id` changed in `state` (begun,
    /// answered, failed, retried): an audited call's row is rebuilt (its answer read once more), a
    /// judge call's label is read into the judged call's row; judge calls added to the state since
    /// the last update are taken in. Unknown ids change nothing.
    pub fn update(&mut self, plan: &Plan, state: &RunState, id: &str) {
        self.add_judge_calls(plan, state);
        if let Some(i) = state.call_index(id) {
            let (Some(call), Some(record)) = (plan.calls.get(i), state.calls.get(i)) else {
                return;
            };
            if let Some(row) = self.rows.get_mut(i) {
                *row = pilot_row(plan, call, record);
                self.write_judges(i);
            }
        } else if let Some(record) = state.judge_call(id) {
            let Some(i) = state.call_index(&record.call) else {
                return;
            };
            let Some(slot) = plan.design.judges.iter().position(|j| j.id == record.judge) else {
                return;
            };
            if let Some(label) = self.labels.get_mut(i).and_then(|l| l.get_mut(slot)) {
                *label = judge_label(&record.status);
            }
            self.write_judges(i);
        }
    }

    /// The rows, in plan order.
    pub fn rows(&self) -> &[PilotRow] {
        &self.rows
    }

    /// The judge panel's binary majority over the audited calls that have a judge call (seed B.3;
    /// the same counts as [`crate::run::pilot_judge_majority`] on the same state); `None` for a
    /// design without judges.
    pub fn majority(&self) -> Option<MajorityCounts> {
        (self.judges > 0).then(|| {
            majority_counts(
                self.labels
                    .iter()
                    .zip(&self.judged)
                    .filter(|(_, judged)| **judged)
                    .map(|(labels, _)| labels.iter().copied()),
            )
        })
    }

    /// Takes in the judge calls appended to `state.judge_calls` since the last look (after
    /// [`crate::run::Job::add_due_calls`]; [`PilotRows::update`] does it too).
    pub fn add_judge_calls(&mut self, plan: &Plan, state: &RunState) {
        let from = self.judge_calls_seen.min(state.judge_calls.len());
        for record in &state.judge_calls[from..] {
            let Some(i) = state.call_index(&record.call) else {
                continue;
            };
            let Some(slot) = plan.design.judges.iter().position(|j| j.id == record.judge) else {
                continue;
            };
            if let Some(judged) = self.judged.get_mut(i) {
                *judged = true;
            }
            if let Some(label) = self.labels.get_mut(i).and_then(|l| l.get_mut(slot)) {
                *label = judge_label(&record.status);
            }
            self.write_judges(i);
        }
        self.judge_calls_seen = state.judge_calls.len();
    }

    /// Row `i`'s judge codes from its labels.
    fn write_judges(&mut self, i: usize) {
        if let (Some(row), Some(labels)) = (self.rows.get_mut(i), self.labels.get(i)) {
            row.judges = labels.iter().map(|l| label_code(*l)).collect();
        }
    }
}

/// The row of one audited call, without its judge codes.
fn pilot_row(plan: &Plan, call: &PlannedCall, record: &CallRecord) -> PilotRow {
    let design = &plan.design;
    let c = call.cell;
    let get = |v: Option<&String>| v.cloned().unwrap_or_default();
    let status = &record.status;
    let mut row = PilotRow {
        id: call.id.clone(),
        model: get(design.models.get(c.model as usize).map(|m| &m.id)),
        condition: get(design.conditions.get(c.condition as usize).map(|m| &m.id)),
        template: get(design.templates.get(c.template as usize).map(|m| &m.id)),
        statement: get(design.statements.get(c.statement as usize).map(|m| &m.text)),
        repeat: c.repeat + 1,
        status: status.state(),
        attempts: status.attempts(),
        selection: String::new(),
        obtained: String::new(),
        rule: String::new(),
        text: String::new(),
        reason: reason_of(status),
        judges: String::new(),
    };
    if let (CallStatus::Answered { completion, .. }, Some(t)) = (status, plan.template_of(call)) {
        let x = read_answer(completion, &t.answer_space);
        row.selection = x.raw.clone();
        row.obtained = serde_key(&x.obtained);
        row.rule = serde_key(&x.rule);
        if !x.normalised.is_empty() {
            let names: Vec<&str> = x.normalised.iter().map(|n| n.as_str()).collect();
            row.rule = format!("{} (normalised: {})", row.rule, names.join(", "));
        }
        row.text = x
            .rationale
            .unwrap_or_else(|| completion.text.trim().to_string());
    }
    row
}

/// One row of a judge coding's results table: a judge call over a loaded bundle's Rationale (model
/// text as plain strings).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedRow {
    /// Call id (`cell{index}:{judge id}`).
    pub id: String,
    /// Cell index in the bundle.
    pub cell: u64,
    /// Model level id of the judged response.
    pub model: String,
    /// The judge's id (the new column id).
    pub judge: String,
    /// Whether the judge is the model that produced the response.
    pub self_judge: bool,
    /// Where the call stands.
    pub status: CallState,
    /// Attempts made.
    pub attempts: u32,
    /// The label code read from the answer (`E`, `Q`, `N`, `D`, `R`; `.` for an unreadable answer
    /// or a failed call; empty until then).
    pub label: String,
    /// The judged Rationale text.
    pub text: String,
    /// The judge's answer, trimmed.
    pub answer: String,
    /// Why the call failed, or why its last attempt failed.
    pub reason: String,
}

/// A judge coding's rows, kept current call by call (module docs), with the labels for the panel's
/// majority.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedRows {
    rows: Vec<JudgedRow>,
    /// Per row: the label read (`None`: not answered, failed or unreadable).
    labels: Vec<Option<RationaleLabel>>,
    /// Per row: the judged cell (index into the plan's items) and the judge (index into the
    /// design's judges).
    slots: Vec<(usize, usize)>,
    /// The plan's judged cells and judges.
    shape: (usize, usize),
}

impl JudgedRows {
    /// Every row of `plan`'s calls from `state`, in plan order (judge by judge, cells in cell
    /// order).
    pub fn new(plan: &BundleJudgePlan, state: &RunState) -> Self {
        let (rows, labels) = plan
            .calls
            .iter()
            .zip(&state.calls)
            .map(|(call, record)| judged_row(plan, call, record))
            .unzip();
        JudgedRows {
            rows,
            labels,
            slots: plan
                .calls
                .iter()
                .map(|c| (c.item as usize, c.judge as usize))
                .collect(),
            shape: (plan.items.len(), plan.design.judges.len()),
        }
    }

    /// Brings the table up to date after call `id` changed in `state`: its row is rebuilt (its
    /// answer read once more). Unknown ids change nothing.
    pub fn update(&mut self, plan: &BundleJudgePlan, state: &RunState, id: &str) {
        let Some(i) = state.call_index(id) else {
            return;
        };
        let (Some(call), Some(record)) = (plan.calls.get(i), state.calls.get(i)) else {
            return;
        };
        if let (Some(row), Some(label)) = (self.rows.get_mut(i), self.labels.get_mut(i)) {
            (*row, *label) = judged_row(plan, call, record);
        }
    }

    /// The rows, in plan order.
    pub fn rows(&self) -> &[JudgedRow] {
        &self.rows
    }

    /// The binary majority of the design's judges over the chosen cells (seed B.3; the same counts
    /// as [`crate::bundle_judge::judge_majority`] on the same state).
    pub fn majority(&self) -> MajorityCounts {
        let (items, judges) = self.shape;
        let mut by_item = vec![vec![None; judges]; items];
        for (&(item, judge), label) in self.slots.iter().zip(&self.labels) {
            if let Some(slot) = by_item.get_mut(item).and_then(|v| v.get_mut(judge)) {
                *slot = *label;
            }
        }
        majority_counts(by_item)
    }
}

/// The row of one judge call and the label it read.
fn judged_row(
    plan: &BundleJudgePlan,
    call: &crate::bundle_judge::BundleJudgeCall,
    record: &CallRecord,
) -> (JudgedRow, Option<RationaleLabel>) {
    let item = plan.item_of(call);
    let status = &record.status;
    let label = judge_label(status);
    let row = JudgedRow {
        id: call.id.clone(),
        cell: item.map_or(0, |i| i.cell),
        model: item.map(|i| i.model.clone()).unwrap_or_default(),
        judge: plan
            .judge_of(call)
            .map(|j| j.id.clone())
            .unwrap_or_default(),
        self_judge: call.self_judge,
        status: status.state(),
        attempts: status.attempts(),
        label: match status {
            CallStatus::Answered { .. } | CallStatus::Failed { .. } => label_code(label).into(),
            CallStatus::Pending { .. } | CallStatus::InFlight { .. } => String::new(),
        },
        text: item.map(|i| i.text.clone()).unwrap_or_default(),
        answer: match status {
            CallStatus::Answered { completion, .. } => completion.text.trim().to_string(),
            _ => String::new(),
        },
        reason: reason_of(status),
    };
    (row, label)
}

/// Why a call failed, or why its last attempt failed; empty otherwise.
fn reason_of(status: &CallStatus) -> String {
    match status {
        CallStatus::Pending {
            last_error: Some(e),
            ..
        } => e.message.clone(),
        CallStatus::Failed { reason, .. } => reason.message.clone(),
        _ => String::new(),
    }
}

/// The label a judge call read: an answered call's [`parse_judge_label`], else none.
fn judge_label(status: &CallStatus) -> Option<RationaleLabel> {
    match status {
        CallStatus::Answered { completion, .. } => {
            count_reading();
            parse_judge_label(&completion.text).ok()
        }
        _ => None,
    }
}

/// An audited answer read under its template's answer space ([`extract_completion`]).
fn read_answer(
    completion: &crate::provider::Completion,
    space: &crate::extract::AnswerSpace,
) -> Extraction {
    count_reading();
    extract_completion(completion, space)
}

/// A unit enum's serde name (`regex`, `conforming`, …).
fn serde_key<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
thread_local! {
    /// Answers read (extractions and judge labels) on this thread, for the tests that show the
    /// tables read each answer once.
    static READINGS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count_reading() {
    #[cfg(test)]
    READINGS.with(|n| n.set(n.get() + 1));
}

#[cfg(test)]
mod tests;
