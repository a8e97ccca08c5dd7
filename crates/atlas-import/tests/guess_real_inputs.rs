//! Starter guesses on the real inputs of `../shared/data/raw/`: the mapping guessed from the first
//! [`GUESS_ROWS`] records of the CrowS-Pairs CSV, the TrustWare BBQ JSONL, the DecodingTrust JSONL
//! and the AMQA JSONL (one file per model: the one correction is model ← `$file`)
//! differs from the hand-written mapping of `tests/import/` in at most one role, and the import with the
//! guess plus that one correction (copied from the hand-written mapping) gives the counts that
//! `tests/import/count_reference.py` computed independently with pandas / Python `json`
//! (`tests/import/count_reference.json`; see `real_inputs.rs` for the command and its output).
//!
//! Roles compared (one "correction" = one role whose choice differs): model, statement, statement
//! text, category, target group, condition, template, repeat, Selection, evidence field, gold column
//! (compare_to), Rationale, and the Selection's value mapping (the `map` entries with their evidence,
//! stored raw text and `obtained`, `only`, `refusals`, `equal` / `different`). Not compared: the name
//! of a constant level and the ids of unpivot levels (display names, like labels and metadata; the
//! unpivot *keys*, which pick the columns, are compared as a set), `levels` / `order` and the order of
//! unpivot levels (level order: JSON leaf paths come in key order), `unmapped`
//! (error vs Abstain: the counts show it), extra `attributes`.
//!
//! When `../shared/data/raw/` is absent the tests print why and pass without checking (as the e2e
//! tests skip absent inputs).

use std::collections::BTreeMap;
use std::path::PathBuf;

use atlas_import::form::{role_source, set_role_source};
use atlas_import::guess::GUESS_ROWS;
use atlas_import::{guess, preview, Format, Importer, Limits, Mapping, Role, Source};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn raw(path: &str) -> PathBuf {
    repo().join("../shared/data/raw").join(path)
}

fn hand_written(name: &str) -> Value {
    let path = repo().join("tests/import").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = Mapping::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::to_value(m).expect("a mapping serialises")
}

/// The Selection's value mapping, normalised for comparison.
fn value_rule(doc: &Value) -> Value {
    let sel = &doc["selection"];
    let mut out = serde_json::Map::new();
    for key in ["map", "only", "refusals", "equal", "different"] {
        let v = &sel[key];
        if v.is_null() || v.as_array().is_some_and(Vec::is_empty) {
            continue;
        }
        // `1` and `{"evidence": 1}` are the same entry.
        let v = match (key, v) {
            ("map", Value::Object(m)) => Value::Object(
                m.iter()
                    .map(|(k, e)| {
                        let e = match e {
                            Value::Object(o) if o.len() == 1 && o.contains_key("evidence") => {
                                o["evidence"].clone()
                            }
                            other => other.clone(),
                        };
                        (k.clone(), e)
                    })
                    .collect(),
            ),
            _ => v.clone(),
        };
        out.insert(key.into(), v);
    }
    Value::Object(out)
}

fn comparable(s: Source) -> Source {
    match s {
        Source::Constant(_) => Source::Constant(String::new()),
        // The keys pick the columns; their order is the level order, not compared.
        Source::Unpivot(mut keys) => {
            keys.sort();
            Source::Unpivot(keys)
        }
        other => other,
    }
}

/// The roles whose choice differs: (role name, guessed, hand-written).
fn differences(guessed: &Value, hand: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for role in Role::ALL {
        let g = comparable(role_source(guessed, role));
        let h = comparable(role_source(hand, role));
        if g != h {
            out.push((role.key().to_string(), format!("{g:?}"), format!("{h:?}")));
        }
    }
    let (g, h) = (value_rule(guessed), value_rule(hand));
    if g != h {
        out.push(("value mapping".into(), g.to_string(), h.to_string()));
    }
    out
}

/// Applies the hand-written choice of each differing role to the guess.
fn correct(guessed: &mut Value, hand: &Value, diffs: &[(String, String, String)]) {
    for (role, _, _) in diffs {
        if role == "value mapping" {
            for key in ["map", "only", "refusals", "equal", "different"] {
                match hand["selection"].get(key) {
                    Some(v) => guessed["selection"][key] = v.clone(),
                    None => {
                        if let Some(s) = guessed["selection"].as_object_mut() {
                            s.remove(key);
                        }
                    }
                }
            }
            continue;
        }
        let role = Role::ALL
            .into_iter()
            .find(|r| r.key() == role)
            .expect("a role key");
        set_role_source(guessed, role, &role_source(hand, role));
    }
}

fn reference(dataset: &str) -> Value {
    let path = repo().join("tests/import/count_reference.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("reference"))
        .expect("reference JSON");
    doc["datasets"][dataset].clone()
}

/// Guesses from the first input, checks ≤ 1 difference, corrects it, imports every input and compares
/// the report with the pandas counts.
fn run(dataset: &str, mapping_file: &str, inputs: &[PathBuf]) {
    if let Some(absent) = inputs.iter().find(|p| !p.exists()) {
        eprintln!(
            "SKIPPED {dataset}: {} is absent (the real inputs live in ../shared/data/raw next to the repository)",
            absent.display()
        );
        return;
    }
    let first = &inputs[0];
    let name = first.file_name().unwrap().to_string_lossy().to_string();
    let format = Format::from_file_name(&name).expect("known extension");
    let file = std::fs::File::open(first).expect("open");
    let p = preview(file, &name, format, None, &Limits::default(), GUESS_ROWS).expect("preview");
    let g = guess(&name, &p);

    // Every guessed column exists in the preview (or is a pattern of existing columns, or $file).
    let columns: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
    for r in &g.roles {
        if let Source::Column(c) = &r.source {
            let exists = if c.contains("{unpivot}") {
                match role_source(&g.document, Role::Condition) {
                    Source::Unpivot(keys) => keys
                        .iter()
                        .all(|k| columns.contains(&c.replace("{unpivot}", k).as_str())),
                    _ => false,
                }
            } else {
                columns.contains(&c.as_str()) || c == "$file"
            };
            assert!(
                exists,
                "{dataset}: the guess for {:?} names {c:?}, which the file does not have",
                r.role
            );
        }
    }
    assert!(
        g.missing.is_empty(),
        "{dataset}: required roles left unmapped: {:?}",
        g.missing
    );

    let hand = hand_written(mapping_file);
    let mut doc = g.document.clone();
    let diffs = differences(&doc, &hand);
    eprintln!(
        "{dataset}: {} role(s) differ from {mapping_file}: {diffs:?}",
        diffs.len()
    );
    assert!(
        diffs.len() <= 1,
        "{dataset}: the guess needs {} corrections (at most 1 allowed): {diffs:#?}\nguess: {}",
        diffs.len(),
        serde_json::to_string_pretty(&doc).unwrap()
    );
    correct(&mut doc, &hand, &diffs);
    assert!(
        differences(&doc, &hand).is_empty(),
        "{dataset}: the correction applies"
    );

    let mapping = Mapping::from_json(&doc.to_string())
        .unwrap_or_else(|e| panic!("{dataset}: the corrected guess is a valid mapping: {e}"));
    let mut importer = Importer::new(mapping, Limits::default()).expect("mapping accepted");
    for input in inputs {
        let name = input.display().to_string();
        let format = Format::from_file_name(&name).expect("known extension");
        importer
            .read(&name, format, std::fs::File::open(input).expect("open"))
            .unwrap_or_else(|e| panic!("{dataset}: {e}"));
    }
    let imported = importer
        .finish()
        .unwrap_or_else(|e| panic!("{dataset}: {e}"));
    let r = &imported.report;
    let want = reference(dataset);
    let unmapped: u64 = r
        .unmapped
        .values()
        .map(|c| c.values.values().sum::<u64>() + c.other_values)
        .sum();
    for (key, got) in [
        ("records", r.records),
        ("records_skipped", r.records_skipped),
        ("duplicates", r.duplicates),
        ("cells", r.cells),
        ("responses", r.responses),
        ("no_response", r.no_response),
        ("evidence_1", r.evidence_1),
        ("evidence_0", r.evidence_0),
        ("abstain", r.abstain),
        ("unmapped", unmapped),
        ("texts", r.texts),
    ] {
        assert_eq!(
            Some(got),
            want[key].as_u64(),
            "{dataset}: {key} vs count_reference.json"
        );
    }
    let levels: BTreeMap<String, u64> = r
        .levels
        .iter()
        .map(|(f, n)| (f.clone(), *n as u64))
        .collect();
    let want_levels: BTreeMap<String, u64> = want["levels"]
        .as_object()
        .expect("levels")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("count")))
        .collect();
    assert_eq!(levels, want_levels, "{dataset}: levels per facet");
    let ours: BTreeMap<(String, Option<u64>, String), u64> = r
        .values
        .iter()
        .map(|v| {
            let obtained = serde_json::to_value(v.obtained).unwrap();
            (
                (
                    v.raw.clone(),
                    v.evidence.map(u64::from),
                    obtained.as_str().unwrap().to_string(),
                ),
                v.cells,
            )
        })
        .collect();
    let theirs: BTreeMap<(String, Option<u64>, String), u64> = want["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| {
            (
                (
                    v["raw"].as_str().unwrap().to_string(),
                    v["evidence"].as_u64(),
                    v["obtained"].as_str().unwrap().to_string(),
                ),
                v["cells"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ours, theirs, "{dataset}: cells per Selection value");
}

#[test]
fn crows_pairs_csv_guess_needs_at_most_one_correction_and_imports_with_the_pandas_counts() {
    run(
        "crows-pairs",
        "crows-pairs.mapping.json",
        &[raw("crows-pairs-source/data/crows_pairs_anonymized.csv")],
    );
}

#[test]
fn trustware_bbq_jsonl_guess_needs_at_most_one_correction_and_imports_with_the_independent_counts()
{
    let mut inputs = Vec::new();
    for m in [
        "deepseek-reasoner_results",
        "mistralai_mixtral-8x22b-instruct-v0.1_results",
        "openai_gpt-oss-20b_results",
    ] {
        for f in [
            "Religion_ambig_consistent.jsonl",
            "Religion_ambig_mixed_cant_determine.jsonl",
        ] {
            inputs.push(raw(&format!("trustware-bbq-reasoning/{m}/{f}")));
        }
    }
    run("trustware-bbq", "trustware-bbq.mapping.json", &inputs);
}

#[test]
fn decodingtrust_jsonl_guess_needs_at_most_one_correction_and_imports_with_the_independent_counts()
{
    run(
        "decodingtrust",
        "decodingtrust.mapping.json",
        &[raw(
            "decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl",
        )],
    );
}

#[test]
fn amqa_jsonl_guess_needs_at_most_one_correction_and_imports_with_the_independent_counts() {
    let runs = [
        "claude_cot2",
        "claude_no_cot",
        "deepseek_cot2",
        "deepseek_no_cot",
        "gemini_no_cot",
        "openai_cot2",
        "openai_mini_no_cot",
        "openai_no_cot",
        "qwen_cot2",
        "qwen_no_cot",
    ];
    let inputs: Vec<PathBuf> = runs
        .iter()
        .map(|r| {
            raw(&format!(
                "amqa-medqa-demographic/Results/AMQA_Benchmark_Answer_{r}.jsonl"
            ))
        })
        .collect();
    run("amqa", "amqa.mapping.json", &inputs);
}
