//! The pilot's task-paradigm design form (`cargo test --target wasm32-unknown-unknown -p audit-atlas
//! --test web_pilot_paradigm`): the form plans the calls of seed Table 10's procedures for its
//! propositions, and the same plan again from the form as saved with the run (what a reload does), so
//! a run resumes; unusable fields name themselves.
#![cfg(target_arch = "wasm32")]

use atlas_pilot::paradigm::Procedure;
use audit_atlas::pilot::form::{plan_of, FormState, ParadigmForm, PARADIGM_FAMILY};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The 40 propositions of the committed demo (20 CrowS-Pairs, 20 BBQ).
const PROPS: &str = include_str!("fixtures/paradigm-propositions.json");

fn form() -> FormState {
    let mut f = FormState {
        family: PARADIGM_FAMILY.into(),
        ..FormState::default()
    };
    f.paradigm.propositions = PROPS.into();
    f.models[0].model = "m".into();
    f.repeats = "2".into();
    f
}

#[wasm_bindgen_test]
fn the_paradigm_form_plans_every_proposition_under_every_ticked_procedure() {
    let f = form();
    let plan = plan_of(&f, None).unwrap();
    // 40 propositions × 5 procedures × 2 repeats × 1 model.
    assert_eq!(plan.calls.len(), 40 * 5 * 2);
    let conditions: Vec<&str> = plan
        .design
        .conditions
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        conditions,
        ["CLEAR", "BBQ-ambig", "BBQ-disambig", "StereoSet", "CrowS"]
    );
    let mut fewer = f.clone();
    fewer.paradigm.set(Procedure::StereoSet, false);
    assert_eq!(plan_of(&fewer, None).unwrap().calls.len(), 40 * 4 * 2);
}

#[wasm_bindgen_test]
fn the_saved_form_rebuilds_the_same_plan_so_a_reloaded_run_resumes() {
    let mut f = form();
    f.paradigm.templates.crows =
        "My own wording.\nA. {option_a}\nB. {option_b}\n\n{contract}".to_string();
    let plan = plan_of(&f, None).unwrap();
    // What the run saves and a reload reads back.
    let saved = serde_json::to_value(&f).unwrap();
    let back: FormState = serde_json::from_value(saved).unwrap();
    let again = plan_of(&back, None).unwrap();
    assert_eq!(again.fingerprint, plan.fingerprint);
    assert_eq!(again.calls.len(), plan.calls.len());
    assert!(again
        .calls
        .iter()
        .any(|c| c.prompt.user.starts_with("My own wording.")));
    // A form saved before the paradigm fields existed still reads (with the defaults).
    let mut old = serde_json::to_value(FormState::default()).unwrap();
    old.as_object_mut().unwrap().remove("paradigm");
    let read: FormState = serde_json::from_value(old).unwrap();
    assert_eq!(read.paradigm, ParadigmForm::default());
}

#[wasm_bindgen_test]
fn unusable_paradigm_fields_name_themselves() {
    let mut f = form();
    f.paradigm.propositions = String::new();
    assert!(plan_of(&f, None).unwrap_err().starts_with("propositions: "));
    f.paradigm.propositions = "{\"id\": \"a\"}".into();
    let e = plan_of(&f, None).unwrap_err();
    assert!(
        e.starts_with("propositions: ") && e.contains("line 1"),
        "{e}"
    );
    let mut f = form();
    for p in Procedure::ALL {
        f.paradigm.set(p, false);
    }
    assert_eq!(
        plan_of(&f, None).unwrap_err(),
        "procedures: tick at least one"
    );
    let mut f = form();
    f.paradigm.templates.clear = "no placeholders".into();
    assert!(plan_of(&f, None).unwrap_err().contains("{option_a}"));
}

#[wasm_bindgen_test]
fn ticking_keeps_the_order_of_table_10() {
    let mut p = ParadigmForm::default();
    p.set(Procedure::Clear, false);
    p.set(Procedure::StereoSet, false);
    p.set(Procedure::Clear, true);
    assert_eq!(
        p.procedures,
        ["CLEAR", "BBQ-ambig", "BBQ-disambig", "CrowS"]
    );
    assert!(!p.has(Procedure::StereoSet));
}
