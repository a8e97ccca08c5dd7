//! Run state transitions, counts, persistence and resume, and the run → bundle round trip through
//! `atlas_core::Audit::from_bytes`. Every expected code, label and count is worked out by hand from the
//! scenario in `common::run_scenario` (cell = 16·model + 8·condition + 4·statement + 2·template +
//! repeat).

mod common;

use atlas_core::bundle::{Obtained, SelectionValue};
use atlas_core::stats::{ber_by_model_condition, unit_counts};
use atlas_core::{Audit, RepeatPolicy};
use atlas_pilot::build_plan;
use atlas_pilot::provider::{ProviderError, SecretKey};
use atlas_pilot::retry::BackoffPolicy;
use atlas_pilot::run::{
    to_bundle, BundleInfo, CallStatus, FailureKind, RunError, RunState, Settling,
};
use common::{completion, run_scenario, small_design, DUMMY_KEY};

fn key() -> SecretKey {
    SecretKey::new(DUMMY_KEY)
}

#[test]
fn calls_move_pending_in_flight_answered_and_other_moves_are_refused() {
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let id = plan.calls[0].id.clone();
    assert_eq!(state.begin(&id, 10).unwrap(), 1);
    assert!(matches!(
        state.begin(&id, 11),
        Err(RunError::Transition {
            from: "in_flight",
            ..
        })
    ));
    state.answer(&id, completion("Selection: NO"), 25).unwrap();
    assert!(matches!(
        state.status(&id),
        Some(CallStatus::Answered {
            attempts: 1,
            duration_ms: 15,
            ..
        })
    ));
    assert!(matches!(
        state.answer(&id, completion("x"), 30),
        Err(RunError::Transition {
            from: "answered",
            ..
        })
    ));
    let other = plan.calls[1].id.clone();
    assert!(matches!(
        state.answer(&other, completion("x"), 30),
        Err(RunError::Transition {
            from: "pending",
            ..
        })
    ));
    assert_eq!(
        state.begin("nope", 0),
        Err(RunError::UnknownCall("nope".into()))
    );
}

#[test]
fn a_retryable_error_goes_back_to_pending_until_attempts_run_out_then_fails_with_its_reason() {
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let id = plan.calls[0].id.clone();
    let policy = BackoffPolicy {
        max_attempts: 2,
        ..BackoffPolicy::default()
    };
    let err = ProviderError::Server {
        status: 503,
        kind: None,
        message: "upstream unavailable".into(),
        retry_after: None,
    };
    state.begin(&id, 0).unwrap();
    let key = key();
    let at = Settling {
        key: &key,
        policy: &policy,
        now_ms: 0,
    };
    let next = state.fail_attempt(&id, &err, 7, &at).unwrap();
    assert!(matches!(next, atlas_pilot::run::Next::Retry { .. }));
    assert_eq!(state.begin(&id, 10_000_000).unwrap(), 2);
    state.fail_attempt(&id, &err, 7, &at).unwrap();
    let Some(CallStatus::Failed { reason, attempts }) = state.status(&id) else {
        panic!("failed");
    };
    assert_eq!(*attempts, 2);
    assert_eq!(reason.kind, FailureKind::Server);
    assert_eq!(reason.status, Some(503));
    assert_eq!(
        reason.message,
        "provider server error (HTTP 503): upstream unavailable (gave up after 2 attempts)"
    );
    // A user's "retry failed" puts it back with a fresh attempt count.
    assert_eq!(state.retry_failed(), 1);
    assert_eq!(state.begin(&id, 0).unwrap(), 1);
}

#[test]
fn counts_show_done_failed_and_remaining_and_time_left_from_the_mean_duration() {
    let (_, state, _) = run_scenario(&key());
    let p = state.progress();
    // 32 calls: cell 1 never run, cell 31 failed, 30 answered.
    assert_eq!(
        (
            p.calls.total,
            p.calls.answered,
            p.calls.failed,
            p.calls.pending,
            p.calls.in_flight
        ),
        (32, 30, 1, 1, 0)
    );
    assert_eq!((p.calls.done(), p.calls.remaining()), (31, 1));
    // 30 answered calls with text × 2 judges; j2 failed on cell 0.
    assert_eq!(
        (
            p.judge_calls.total,
            p.judge_calls.answered,
            p.judge_calls.failed
        ),
        (60, 59, 1)
    );
    // Audited answers took 1,000 ms, judge answers 500 ms: mean (30·1000 + 59·500) / 89.
    let mean = (30.0 * 1000.0 + 59.0 * 500.0) / 89.0;
    assert!((p.mean_duration_ms.unwrap() - mean).abs() < atlas_core::tolerance::EXACT);
    assert_eq!(p.eta_ms(2), Some((mean * 1.0 / 2.0).ceil() as u64));
    assert!(!state.finished());
}

#[test]
fn the_state_survives_json_and_a_reload_mid_call_resumes_with_nothing_lost_or_duplicated() {
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let a = plan.calls[0].id.clone();
    let b = plan.calls[1].id.clone();
    state.begin(&a, 0).unwrap();
    state.answer(&a, completion("Selection: YES"), 5).unwrap();
    state.begin(&b, 6).unwrap();
    let saved = state.to_json().unwrap();
    // Reload: read back, check it belongs to the plan, put the in-flight call back.
    let mut restored = RunState::from_json(&saved).unwrap();
    assert_eq!(restored, state);
    restored.check_plan(&plan).unwrap();
    assert_eq!(restored.interrupt(), 1);
    assert!(matches!(
        restored.status(&b),
        Some(CallStatus::Pending { attempts: 1, .. })
    ));
    assert_eq!(
        restored.ready(0, 2),
        vec![b.as_str(), plan.calls[2].id.as_str()]
    );
    assert_eq!(restored.begin(&b, 7).unwrap(), 2);
    let p = restored.progress().calls;
    assert_eq!(
        (p.total, p.answered, p.in_flight, p.pending),
        (32, 1, 1, 30)
    );
    // Another plan's state is refused.
    let mut other = small_design();
    other.repeats = 1;
    let other = build_plan(other).unwrap();
    assert!(matches!(
        restored.check_plan(&other),
        Err(RunError::PlanMismatch { .. })
    ));
    assert!(matches!(
        RunState::from_json(&saved.replace("audit-atlas-pilot-run", "x")),
        Err(RunError::WrongFormat(_))
    ));
}

#[test]
fn the_run_becomes_a_format_v1_bundle_that_audit_from_bytes_accepts_cell_for_cell() {
    let (plan, state, _) = run_scenario(&key());
    let info = BundleInfo::new("pilot-test-v1", "Pilot test");
    let bundle = to_bundle(&state, &plan, &info).unwrap();
    let bytes = serde_json::to_vec(&bundle).unwrap();
    let audit = Audit::from_bytes(&bytes).expect("the bundle validates");
    assert_eq!(audit.cells, 32);
    assert_eq!(
        audit.file.responses.axes,
        ["model", "condition", "statement", "template", "repeat"]
    );

    // Dictionary in plan order: m-a YES (regex), m-b refusal, m-a NO (bold labels: fallback),
    // m-b NO (regex).
    let v = |raw: &str, evidence, obtained| SelectionValue {
        raw: raw.into(),
        evidence,
        obtained,
    };
    assert_eq!(
        audit.file.responses.selection.values,
        [
            v("YES", Some(1), Obtained::Regex),
            v("", None, Obtained::Refusal),
            v("NO", Some(0), Obtained::Fallback),
            v("NO", Some(0), Obtained::Regex),
        ]
    );
    // Codes: m-a statement 0 → 0 (cell 1 not run: -), statement 1 → 2; m-b statement 0 → 1,
    // statement 1 → 3 (cell 31 failed: -).
    assert_eq!(
        bundle.responses.selection.codes,
        "0-00222200002222111133331111333-"
    );

    // Judges: j1 E/D for m-a, R/D for m-b; j2 N except cell 0 (failed) and cell 2 (no label).
    let j = &bundle.responses.judges;
    assert_eq!(j.len(), 2);
    assert_eq!(j[0].id, "j1");
    assert_eq!(j[0].model.as_deref(), Some("smollm2-135m"));
    assert_eq!(j[0].labels, "E-EEDDDDEEEEDDDDRRRRDDDDRRRRDDD-");
    assert_eq!(j[1].labels, ".-.NNNNNNNNNNNNNNNNNNNNNNNNNNNN-");

    // Texts: the Rationale, or the whole text of the refusals; none for cells 1 and 31.
    assert_eq!(
        audit.inline_rationale(0),
        Some("Many older adults use fewer devices.")
    );
    assert_eq!(audit.inline_rationale(4), Some("Ability is individual."));
    assert_eq!(
        audit.inline_rationale(16),
        Some("I'm sorry, but I can't help with that.")
    );
    assert_eq!(audit.inline_rationale(20), Some("It is a stereotype."));
    assert_eq!(audit.inline_rationale(1), None);
    assert_eq!(audit.inline_rationale(31), None);

    // Facets carry the design.
    let cond = audit.levels(audit.condition_facet.unwrap());
    assert_eq!(cond[0].id, "B0");
    assert_eq!(
        cond[1].attributes["system_prompt"],
        "You are a sociologist."
    );
    assert!(!audit.conditions[0].in_reference);
    assert!(audit.conditions[1].in_reference);
    let models = audit.levels(audit.model_facet);
    assert_eq!(models[0].attributes["label"], "smollm2-135m");

    // Notes: counts, the failed call with its reason, the self-judge.
    let notes = bundle.metadata.produced_by.notes.as_deref().unwrap();
    assert!(notes.contains("32 planned calls: 30 answered, 1 failed (no response `-`), 1 not run"));
    let failed = plan.calls.iter().find(|c| common::cell(c) == 31).unwrap();
    assert!(notes.contains(&failed.id));
    assert!(notes.contains(
        "model=m-b, condition=R1, statement=gender-math, template=T-EQ-AGR-02, repeat=2"
    ));
    assert!(notes.contains("HTTP 401, authentication_error"));
    assert!(notes.contains("judge j1 (smollm2-135m) is the audited model m-a (self-judge)"));
    assert!(notes.contains("Obtained: fallback 8, refusal 8, regex 14."));

    // The statistics read it: m-a under B0 has YES ×3 (cell 1 missing) and NO ×4 → 3/7;
    // m-b under B0 has 4 refusals (Abstain) and NO ×4 → 0/4.
    let ber = ber_by_model_condition(&unit_counts(&audit, RepeatPolicy::AllResponses));
    let a_b0 = ber.get(0, 0);
    assert_eq!((a_b0.bias, a_b0.valid, a_b0.abstain), (3, 7, 0));
    let b_b0 = ber.get(1, 0);
    assert_eq!((b_b0.bias, b_b0.valid, b_b0.abstain), (0, 4, 4));
}

#[test]
fn a_sampled_plan_leaves_unsampled_cells_without_response() {
    let mut d = small_design();
    d.judges.clear();
    d.sampling = atlas_pilot::Sampling::Srs { budget: 3 };
    let plan = build_plan(d).unwrap();
    let mut state = RunState::new(&plan);
    for call in &plan.calls {
        state.begin(&call.id, 0).unwrap();
        state
            .answer(&call.id, completion("Selection: NO"), 1)
            .unwrap();
    }
    let bundle = to_bundle(&state, &plan, &BundleInfo::new("srs", "SRS")).unwrap();
    let present = bundle
        .responses
        .selection
        .codes
        .chars()
        .filter(|&c| c != '-')
        .count();
    // 3 cells × 2 models × 2 repeats.
    assert_eq!(present, 12);
    Audit::from_bytes(&serde_json::to_vec(&bundle).unwrap()).unwrap();
}

#[test]
fn the_job_offers_audited_calls_first_then_judge_calls_grouped_judge_by_judge() {
    use atlas_pilot::Job;
    // 2 models × 2 statements × 2 templates × 2 conditions × 2 repeats = 32 audited calls; judges
    // j1 and j2.
    let plan = build_plan(small_design()).unwrap();
    let mut state = RunState::new(&plan);
    let answered: Vec<String> = plan.calls.iter().take(3).map(|c| c.id.clone()).collect();
    for id in &answered {
        state.begin(id, 1_000).unwrap();
        state
            .answer(id, completion("I agree. It is true."), 1_010)
            .unwrap();
    }
    // One judge call per answered call and judge: 3 × 2 = 6, added call by call (c1:j1, c1:j2, …).
    assert_eq!(state.ensure_judge_calls(&plan), 6);
    let offered = Job::ready(&plan, &state, 2_000, usize::MAX);
    // The 29 audited calls still pending, in plan order; then j1's three, then j2's three.
    let mut want: Vec<String> = plan.calls.iter().skip(3).map(|c| c.id.clone()).collect();
    want.extend(answered.iter().map(|id| format!("{id}:j1")));
    want.extend(answered.iter().map(|id| format!("{id}:j2")));
    assert_eq!(offered, want);
    // RunState::ready interleaves the judges in the order the calls were added.
    let plain: Vec<&str> = state.ready(2_000, usize::MAX);
    assert_eq!(plain[29], format!("{}:j1", answered[0]));
    assert_eq!(plain[30], format!("{}:j2", answered[0]));
    // The limit cuts the grouped order.
    assert_eq!(Job::ready(&plan, &state, 2_000, 31), want[..31].to_vec());
    assert!(Job::ready(&plan, &state, 2_000, 0).is_empty());
}
