//! `atlas pilot run` against the real local model (SmolLM2-135M-Instruct, `scripts/llm.sh`) through the
//! fault-injecting proxy (`tests/pilot/fault_proxy.mjs`: 429 with `Retry-After: 1`, 500, a stalled
//! response, malformed JSON, a dropped connection).
//!
//! Ignored by default: it needs the server and the proxy, which `scripts/pilot-faults.sh` starts (and
//! stops) before running `cargo test -p atlas-cli --test pilot_faults -- --ignored`. The proxy's base
//! URL (with `/v1`) comes in `PILOT_FAULT_BASE_URL`.
//!
//! The run is a 20-call pilot (4 statements × the five Table 7 wordings, one repeat) with the dummy key
//! `sk-test-DO-NOT-LEAK`, stopped abruptly after a few settled attempts (as a crash would) and resumed.
//! The checks: every planned call ends answered or failed with a reason, none lost, none duplicated;
//! every 429 was retried no sooner than its `Retry-After`; the key appears in no file and no output.
//! The counts are printed (run with `--nocapture`, as the script does).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

const KEY: &str = "sk-test-DO-NOT-LEAK";
const KEY_VAR: &str = "ATLAS_PILOT_FAULT_TEST_KEY";

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atlas-pilot-faults-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creates the scratch folder");
    dir
}

/// Runs `atlas pilot ARGS` with the dummy key in the environment; returns the output and appends its
/// stdout and stderr to `transcript`.
fn atlas(args: &[&str], transcript: &mut String) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("pilot")
        .args(args)
        .env(KEY_VAR, KEY)
        .output()
        .expect("runs atlas");
    transcript.push_str(&String::from_utf8_lossy(&out.stdout));
    transcript.push_str(&String::from_utf8_lossy(&out.stderr));
    out
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("reads the file")).expect("JSON")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
#[ignore = "needs the local model and the fault proxy: run scripts/pilot-faults.sh"]
fn a_pilot_through_the_fault_proxy_loses_nothing_duplicates_nothing_honours_retry_after_and_leaks_no_key(
) {
    let base_url = std::env::var("PILOT_FAULT_BASE_URL").expect(
        "PILOT_FAULT_BASE_URL (the fault proxy's base URL with /v1): run scripts/pilot-faults.sh",
    );
    let dir = scratch();
    let mut transcript = String::new();

    // A partial design: the model behind the proxy, four pasted statements; the Table 7 wordings and
    // the baseline condition are filled in by `atlas pilot design`.
    let statements: Vec<Value> = [
        ("s1", "Old people are bad with technology.", "age"),
        ("s2", "Women are bad drivers.", "gender"),
        ("s3", "Immigrants are criminals.", "nationality"),
        ("s4", "Poor people are lazy.", "socioeconomic status"),
    ]
    .iter()
    .map(|(id, text, cat)| json!({"id": id, "text": text, "category": cat}))
    .collect();
    let base = json!({
        "models": [{"id": "smollm2", "provider": {"kind": "openai_compatible", "base_url": base_url, "model": "SmolLM2-135M-Instruct"}}],
        "statements": statements,
        "repeats": 1,
        "params": {"temperature": 0.7, "max_tokens": 32},
        "sampling": {"design": "full"},
        "seed": 7,
        "key_env": KEY_VAR,
    });
    let base_path = dir.join("base.json");
    std::fs::write(&base_path, base.to_string()).expect("writes the base design");
    let (design, plan, state, events, bundle) = (
        dir.join("design.json"),
        dir.join("plan.json"),
        dir.join("run.json"),
        dir.join("events.jsonl"),
        dir.join("bundle.json"),
    );
    let out = atlas(
        &["design", "--base", s(&base_path), "-o", s(&design)],
        &mut transcript,
    );
    assert!(out.status.success(), "design: {transcript}");
    let out = atlas(
        &["plan", "--design", s(&design), "-o", s(&plan)],
        &mut transcript,
    );
    assert!(out.status.success(), "plan: {transcript}");
    let plan_json = read_json(&plan);
    let planned: Vec<String> = plan_json["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(planned.len(), 20, "a 20-call pilot");

    let run_args = |stop: Option<&str>| {
        let mut v = vec![
            "run",
            "--plan",
            s(&plan),
            "--state",
            s(&state),
            "--concurrency",
            "2",
            "--timeout-s",
            "12",
            "--max-attempts",
            "8",
            "--events",
            s(&events),
            "--progress-every-s",
            "10",
        ];
        if let Some(n) = stop {
            v.extend(["--stop-after", n]);
        }
        v.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    // First run: stopped abruptly after 8 settled attempts, with calls left in flight.
    let args = run_args(Some("8"));
    let out = atlas(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &mut transcript,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "the --stop-after exit: {transcript}"
    );
    let stopped = read_json(&state);
    let in_flight_at_stop = stopped["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter(|c| c["status"]["state"] == "in_flight")
        .count();
    // Resume to the end.
    let args = run_args(None);
    let out = atlas(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &mut transcript,
    );
    assert!(out.status.success(), "resumed run: {transcript}");
    let out = atlas(
        &[
            "bundle",
            "--plan",
            s(&plan),
            "--state",
            s(&state),
            "-o",
            s(&bundle),
        ],
        &mut transcript,
    );
    assert!(out.status.success(), "bundle: {transcript}");
    let out = atlas(
        &["summary", "--plan", s(&plan), "--state", s(&state)],
        &mut transcript,
    );
    assert!(out.status.success(), "summary: {transcript}");

    // Every planned call exactly once in the final state, in plan order, answered or failed with a reason.
    let final_state = read_json(&state);
    let calls = final_state["calls"].as_array().expect("calls");
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| c["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids, planned,
        "each planned call id exactly once, none added"
    );
    let mut answered = 0;
    let mut failed_by_reason: BTreeMap<String, usize> = BTreeMap::new();
    for c in calls {
        let st = &c["status"];
        match st["state"].as_str() {
            Some("answered") => answered += 1,
            Some("failed") => {
                let kind = st["reason"]["kind"].as_str().unwrap_or("").to_string();
                let message = st["reason"]["message"].as_str().unwrap_or("");
                assert!(
                    !kind.is_empty() && !message.is_empty(),
                    "a failed call keeps its reason: {c}"
                );
                *failed_by_reason.entry(kind).or_default() += 1;
            }
            other => panic!("call {} ended {other:?}, not answered or failed", c["id"]),
        }
    }
    assert_eq!(answered + failed_by_reason.values().sum::<usize>(), 20);
    assert!(
        answered > 0,
        "some calls get through the proxy; failed by reason: {failed_by_reason:?}; first failed call: {}; transcript: {transcript}",
        calls
            .iter()
            .find(|c| c["status"]["state"] == "failed")
            .map(Value::to_string)
            .unwrap_or_default()
    );

    // The events: one line per settled attempt.
    let text = std::fs::read_to_string(&events).expect("reads the events");
    let evs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect();
    let mut by_call: HashMap<&str, Vec<&Value>> = HashMap::new();
    for e in &evs {
        by_call
            .entry(e["call"].as_str().expect("call"))
            .or_default()
            .push(e);
    }
    // No call answered twice; the answered attempt is the last event of its call.
    for (id, list) in &by_call {
        let answers = list.iter().filter(|e| e["outcome"] == "answered").count();
        assert!(answers <= 1, "call {id} answered {answers} times");
        if answers == 1 {
            assert_eq!(list.last().expect("event")["outcome"], "answered", "{id}");
        }
    }
    // Every 429 was retried no sooner than its Retry-After.
    let mut checked_429 = 0;
    for list in by_call.values() {
        for (i, e) in list.iter().enumerate() {
            if e["outcome"] != "rate_limited" || e["next"] != "retry" {
                continue;
            }
            let retry_after = e["retry_after_ms"]
                .as_u64()
                .expect("429 carries Retry-After");
            assert!(retry_after >= 1_000, "the proxy sends Retry-After: 1");
            assert!(e["delay_ms"].as_u64().expect("delay") >= retry_after, "{e}");
            if let Some(next) = list.get(i + 1) {
                let waited =
                    next["sent_ms"].as_u64().expect("sent") - e["t_ms"].as_u64().expect("t");
                assert!(
                    waited >= retry_after,
                    "call {} was retried {waited} ms after a 429 with Retry-After {retry_after} ms",
                    e["call"]
                );
                checked_429 += 1;
            }
        }
    }
    // The attempt counts in the state agree with the events (attempts interrupted by the stop are
    // counted in the state but have no event).
    let attempts_in_state: u64 = calls
        .iter()
        .map(|c| c["status"]["attempts"].as_u64().expect("attempts"))
        .sum();
    assert_eq!(
        attempts_in_state,
        evs.len() as u64 + in_flight_at_stop as u64,
        "attempts in the state = settled attempts + attempts interrupted by the stop"
    );

    // The bundle reads back, with one response or `-` per planned cell.
    let b = read_json(&bundle);
    let notes = b["metadata"]["produced_by"]["notes"]
        .as_str()
        .expect("notes");
    assert!(notes.contains(&format!("{answered} answered")), "{notes}");

    // The key is nowhere.
    for path in [&base_path, &design, &plan, &state, &events, &bundle] {
        let text = std::fs::read_to_string(path).expect("reads");
        assert!(
            !text.contains(KEY) && !text.contains("DO-NOT-LEAK"),
            "the key leaked into {}",
            path.display()
        );
    }
    assert!(
        !transcript.contains(KEY) && !transcript.contains("DO-NOT-LEAK"),
        "the key leaked into stdout/stderr"
    );

    // The counts.
    let mut retried: BTreeMap<String, usize> = BTreeMap::new();
    let mut final_failures: BTreeMap<String, usize> = BTreeMap::new();
    for e in &evs {
        let outcome = e["outcome"].as_str().unwrap_or("?").to_string();
        match e["next"].as_str() {
            Some("retry") => *retried.entry(outcome).or_default() += 1,
            Some("failed") => *final_failures.entry(outcome).or_default() += 1,
            _ => {}
        }
    }
    println!(
        "fault test: {} planned calls, {answered} answered, failed by reason {failed_by_reason:?}",
        planned.len()
    );
    println!(
        "attempts: {} settled ({} answered), {} interrupted by the abrupt stop and sent again on resume",
        evs.len(),
        evs.iter().filter(|e| e["outcome"] == "answered").count(),
        in_flight_at_stop
    );
    println!("retried attempts by fault: {retried:?}");
    println!("last attempts of finally failed calls by fault: {final_failures:?}");
    println!("429s checked against Retry-After: {checked_429}");
    let _ = std::fs::remove_dir_all(&dir);
}
