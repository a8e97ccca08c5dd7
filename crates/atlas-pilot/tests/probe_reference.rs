//! The clarification probe's Table 24 on the committed real-model demo
//! (`tests/fixtures/paradigm-probe-demo/`, SmolLM2-135M-Instruct) against the independent Python
//! reference (`tests/reference/probe_reference.py`, which writes `tests/reference/expected_probe.json`
//! from the same plan and run-state files without the Rust code): eligibility and its exclusions, the
//! chosen cells, every follow-up's reading and the rows per procedure × arm.

use atlas_pilot::paradigm::probe::{
    choose, eligibility, originals, summarize, ProbePlan, ProbeRow, Read,
};
use atlas_pilot::{Plan, RunState};
use serde_json::{json, Value};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const DEMO: &str = "tests/fixtures/paradigm-probe-demo";

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

fn expected() -> Value {
    serde_json::from_str(&read("tests/reference/expected_probe.json")).unwrap()
}

fn probe() -> (ProbePlan, RunState) {
    let plan: ProbePlan = serde_json::from_str(&read(&format!("{DEMO}/probe-plan.json"))).unwrap();
    let state = RunState::from_json(&read(&format!("{DEMO}/probe-run.json"))).unwrap();
    (plan, state)
}

fn row_json(r: &ProbeRow) -> Value {
    json!({
        "procedure": r.procedure.id(), "arm": r.arm.key(), "eligible": r.eligible,
        "answered": r.answered, "failed": r.failed, "skipped": r.skipped, "not_run": r.not_run,
        "valid": r.valid, "abstain": r.abstain, "unparsed": r.unparsed, "changed": r.changed,
        "contradiction": r.contradiction, "decidable": r.decidable,
    })
}

fn read_json(call: &str, status: &str, read: &Read) -> Value {
    match read {
        Read::Selected { raw, evidence } => {
            json!({"call": call, "status": status, "read": "selected", "raw": raw, "evidence": evidence})
        }
        Read::Abstain { raw } => {
            json!({"call": call, "status": status, "read": "abstain", "raw": raw})
        }
        Read::Unparsed => json!({"call": call, "status": status, "read": "unparsed"}),
        Read::NotAnswered => json!({"call": call, "status": status, "read": "not_answered"}),
    }
}

#[test]
fn table_24_of_the_local_model_demo_equals_the_python_reference() {
    let (plan, state) = probe();
    let s = summarize(&plan, &state);
    let e = expected();
    let rows: Vec<Value> = s.rows.iter().map(row_json).collect();
    assert_eq!(Value::Array(rows), e["rows"]);
    let readings: Vec<Value> = s
        .readings
        .iter()
        .map(|r| read_json(&r.call, &r.status, &r.read))
        .collect();
    assert_eq!(Value::Array(readings), e["readings"]);
    assert_eq!(
        serde_json::to_value(s.eligibility).unwrap(),
        e["eligibility"]
    );
    assert!(
        s.rows.iter().all(|r| r.not_run == 0),
        "the committed demo run is complete"
    );
}

#[test]
fn eligibility_and_choice_from_the_paradigm_run_equal_the_python_reference() {
    // The paradigm plan file carries its paradigm design beside the plan (`atlas paradigms plan`);
    // the pilot plan is the rest, as `atlas pilot run` reads it.
    let mut value: Value = serde_json::from_str(&read(&format!("{DEMO}/plan.json"))).unwrap();
    value.as_object_mut().unwrap().remove("paradigm");
    let paradigm: Plan = serde_json::from_value(value).unwrap();
    let run = RunState::from_json(&read(&format!("{DEMO}/run.json"))).unwrap();
    let (plan, _) = probe();
    let all = originals(&paradigm, &run).unwrap();
    let (cells, mut counts) = eligibility(&all);
    let cells = choose(cells, plan.design.seed, plan.design.max_cells, &mut counts);
    let e = expected();
    assert_eq!(serde_json::to_value(counts).unwrap(), e["eligibility"]);
    let ours: Vec<Value> = cells
        .iter()
        .map(|c| {
            json!({
                "model": c.model, "proposition": c.proposition,
                "branches": c.branches.iter().map(|b| json!({
                    "procedure": b.original.procedure.id(), "raw": b.raw, "evidence": b.evidence,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    assert_eq!(Value::Array(ours), e["cells"]);
    assert_eq!(cells, plan.cells, "the committed probe plan's cells");
}
