//! `atlas pilot judge` without a model: judge coding of an existing bundle's stored Rationales against a
//! small canned OpenAI-compatible server on 127.0.0.1 (a thread of this test; its first POST gets 429
//! with `Retry-After: 1`, every other POST `Label: D`), so plain `cargo test` covers the command's
//! estimate and cap, the id clash, an abrupt stop and resume, the merged judge columns, the self-judge
//! note and the key. The real local model runs it in `tests/e2e/judge.mjs`.
//!
//! The bundle is `tests/fixtures/rq3-cases-bundle.json` (SYNTHETIC, 24 cells = 2 models × 2 conditions ×
//! 3 statements × 2 templates; cell 17 has no response; inline texts for every other cell; judge
//! columns `j-gamma`, `j-delta`, `j-beta`; models `m-alpha` "Alpha 7B" and `m-beta` "Beta Chat").
//! With `--models m-beta --limit 3` the judged cells are m-beta's first three, 12, 13 and 14 (model is
//! the first axis: cells 12–23 are m-beta's, each with a text — checked by hand against the fixture's
//! `texts.rationale.inline.cells`, which lists 0–16 and 18–23).

mod common;

use common::canned_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::Ordering;

use serde_json::Value;

const KEY: &str = "sk-test-DO-NOT-LEAK";
const KEY_VAR: &str = "ATLAS_PILOT_JUDGE_TEST_KEY";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/rq3-cases-bundle.json")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atlas-pilot-judge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creates the scratch folder");
    dir
}

fn atlas(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["pilot", "judge"])
        .args(args)
        .env(KEY_VAR, KEY)
        .output()
        .expect("runs atlas")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The canned server's reply to every judge prompt.
fn reply(_body: &str) -> &'static str {
    "Label: D"
}

fn judges(url: &str) -> Vec<String> {
    vec![
        format!("id=cli-self,base_url={url},model=beta-chat"),
        format!("id=cli-other,base_url={url},model=other-judge"),
    ]
}

fn args<'a>(judges: &'a [String], dir: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--bundle", s_static(&fixture())];
    for j in judges {
        a.extend(["--judge", j.as_str()]);
    }
    a.extend([
        "--models",
        "m-beta",
        "--limit",
        "3",
        "--state",
        s(dir),
        "--out",
        s(out),
    ]);
    a.extend(extra);
    a
}

/// The fixture's path as a `&'static str` (leaked once per call; a test process is short-lived).
fn s_static(p: &Path) -> &'static str {
    Box::leak(p.to_str().expect("UTF-8 path").to_string().into_boxed_str())
}

#[test]
fn plan_only_prints_the_calls_and_estimate_and_the_cap_and_a_clash_are_refused() {
    let dir = scratch("plan");
    let out = dir.join("out.json");
    let js = judges("http://127.0.0.1:9/v1");
    let o = atlas(&args(&js, &dir.join("state"), &out, &["--plan-only"]));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("the first 3 cells with a response and a Rationale text of the models m-beta × 2 judge(s) = 6 call(s); cap 1000"),
        "{t}"
    );
    assert!(
        t.contains("estimated tokens:") && t.contains("cost at most"),
        "{t}"
    );
    assert!(
        t.contains(
            "judge cli-self (beta-chat) is the model that produced 3 of the responses it judges"
        ),
        "{t}"
    );
    assert!(dir.join("state/plan.json").exists() && !out.exists());

    let o = atlas(&args(
        &js,
        &dir.join("state2"),
        &out,
        &["--plan-only", "--max-calls", "5"],
    ));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("6 calls (0 audited + 6 judge calls), above the cap of 5"),
        "{}",
        text(&o)
    );

    let clash = vec!["id=j-beta,base_url=http://127.0.0.1:9/v1,model=x".to_string()];
    let o = atlas(&args(&clash, &dir.join("state3"), &out, &["--plan-only"]));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("\"j-beta\"")
            && t.contains("j-gamma, j-delta, j-beta")
            && t.contains("another id"),
        "{t}"
    );

    let bad = vec!["id=x,provider=bard,model=y".to_string()];
    let o = atlas(&args(&bad, &dir.join("state4"), &out, &["--plan-only"]));
    assert!(!o.status.success());
    assert!(
        text(&o).contains("provider \"bard\" is not openai_compatible, anthropic or gemini"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_judge_run_stops_resumes_and_writes_the_bundle_with_new_columns_and_no_key() {
    let (url, posts, auth) = canned_server(reply);
    let dir = scratch("run");
    let state = dir.join("state");
    let out = dir.join("judged.json");
    let js = judges(&url);
    let send = [
        "--key-env",
        KEY_VAR,
        "--concurrency",
        "1",
        "--timeout-s",
        "10",
    ];

    // First POST: 429 (Retry-After: 1); second: answered → stop after 2 settled attempts.
    let mut first_args = args(&js, &state, &out, &send);
    first_args.extend(["--stop-after", "2"]);
    let first = atlas(&first_args);
    assert_eq!(first.status.code(), Some(3), "{}", text(&first));
    assert!(!out.exists(), "no bundle after an abrupt stop");

    // Other arguments on the same state folder are refused.
    let mut other = args(&js, &state, &out, &send);
    if let Some(p) = other.iter().position(|a| *a == "3") {
        other[p] = "2";
    }
    let refused = atlas(&other);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("holds the judge coding of another plan"),
        "{}",
        text(&refused)
    );

    let second = atlas(&args(&js, &state, &out, &send));
    let t2 = text(&second);
    assert!(second.status.success(), "{t2}");
    assert!(t2.contains("resuming"), "{t2}");
    assert!(t2.contains("6 judge call(s), 6 answered, 0 failed"), "{t2}");

    // 6 calls answered once each + the 429 = 7 POSTs (concurrency 1: nothing was in flight at the stop).
    assert_eq!(posts.load(Ordering::SeqCst), 7);
    let headers = auth.lock().expect("lock").clone();
    assert_eq!(headers.len(), 7);
    assert!(
        headers
            .iter()
            .all(|h| h == &format!("authorization: Bearer {KEY}")),
        "{headers:?}"
    );

    let bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("bundle")).expect("JSON");
    let cols: Vec<(String, String, String)> = bundle["responses"]["judges"]
        .as_array()
        .expect("judges")
        .iter()
        .map(|j| {
            (
                j["id"].as_str().unwrap_or("").to_string(),
                j["model"].as_str().unwrap_or("").to_string(),
                j["labels"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // The fixture's columns stay as they were; the new ones hold D on cells 12–14, `-` on cell 17 (no
    // response) and `.` elsewhere.
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).expect("fixture")).expect("JSON");
    for (k, col) in original["responses"]["judges"]
        .as_array()
        .expect("judges")
        .iter()
        .enumerate()
    {
        assert_eq!(cols[k].2, col["labels"].as_str().unwrap_or(""));
    }
    let expected = "............DDD..-......";
    assert_eq!(cols.len(), 5);
    assert_eq!(
        cols[3],
        ("cli-self".into(), "beta-chat".into(), expected.into())
    );
    assert_eq!(
        cols[4],
        ("cli-other".into(), "other-judge".into(), expected.into())
    );
    let notes = bundle["metadata"]["produced_by"]["notes"]
        .as_str()
        .unwrap_or("");
    assert!(
        notes.contains("Judge columns added by `atlas pilot judge"),
        "{notes}"
    );
    assert!(notes.contains("coded the same cells: 12–14"), "{notes}");
    assert!(
        notes.contains(
            "judge cli-self (beta-chat) is the audited model m-beta on 3 cell(s) (self-judge)"
        ),
        "{notes}"
    );
    assert_eq!(bundle["metadata"]["id"], original["metadata"]["id"]);
    assert_eq!(bundle["texts"], original["texts"]);

    // The key: in the authorization header only.
    let mut everything = text(&first) + &text(&refused) + &t2;
    for entry in std::fs::read_dir(&state).expect("state folder") {
        everything += &std::fs::read_to_string(entry.expect("entry").path()).unwrap_or_default();
    }
    everything += &std::fs::read_to_string(&out).expect("bundle");
    assert!(!everything.contains(KEY) && !everything.contains("DO-NOT-LEAK"));
    let _ = std::fs::remove_dir_all(&dir);
}
