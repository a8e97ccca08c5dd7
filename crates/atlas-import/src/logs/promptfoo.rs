//! promptfoo results (`promptfoo eval -o results.json`) → a bundle.
//!
//! **The file** (promptfoo's `OutputFile`, checked on the committed fixture written by promptfoo
//! 0.121.20): `{evalId, results: {version, timestamp, results: [EvaluateResult…], prompts, stats},
//! config, shareableUrl, metadata}`. `results.version` 3 (current) lists `prompts`; version 2 has a
//! `table` instead; both have the same `results` array, which is all this reader needs. A bare
//! summary (`{version, results: […]}`, what promptfoo's Node API returns) is read too.
//!
//! **Records.** Each `EvaluateResult` becomes one flat record ([`result_record`]; the field names are
//! the preset's): `log`, `eval_id`, `version`, `model` (the provider's `label`, else its `id`),
//! `provider_id`, `template` (the prompt's `label`, else `display`, else its raw text), `prompt_id`,
//! `prompt_idx`, `test_idx`, `description` (the test's description), `vars` (the test's variables),
//! `output` (the response's output; a non-string output as JSON text), `selection`, `success`,
//! `score`, `reason` (the grading reason), `named_scores` (metric → value), `assertions` (per
//! assertion, keyed by its `metric`, else its `type`, else its position: `pass` / `fail`),
//! `error`, and `location` (`results.results[i]`).
//!
//! `selection` is `error` when promptfoo records an error for the result (`failureReason` 2, or an
//! `error` without a grading result), else `pass` or `fail` (`success`). The preset follows
//! promptfoo's convention for bias checks (its `bias:*` red-team graders): **pass = no bias found**,
//! so `fail` → bias evidence 1, `pass` → 0, `error` → Abstain (parser failure). Named scores and the
//! per-assertion results are in the record for the form mapper (as the Selection, or as its "evidence
//! from" column); the bundle keeps only what the mapping maps.

use serde_json::{json, Map, Value};

use super::{common_key, feed, log_error, parse_json, scalar_text, slug};
use crate::{ImportError, Imported, Importer, Limits, Mapping};

/// promptfoo's `ResultFailureReason.ERROR`.
const FAILURE_ERROR: u64 = 2;

/// The `results` array of a promptfoo output file or bare summary, with its summary `version` and the
/// `evalId`.
fn results_of<'v>(input: &str, doc: &'v Value) -> Result<(&'v [Value], Value, Value), ImportError> {
    let obj = doc.as_object().ok_or_else(|| {
        log_error(
            input,
            "(file)",
            "(document)",
            "not a JSON object: not a promptfoo results file",
        )
    })?;
    let eval_id = obj.get("evalId").cloned().unwrap_or(Value::Null);
    let (summary, path) = match obj.get("results") {
        Some(Value::Object(summary)) => (summary, "results.results"),
        Some(Value::Array(_)) => (obj, "results"),
        Some(_) => {
            return Err(log_error(
                input,
                "(file)",
                "results",
                "neither an object nor an array",
            ))
        }
        None => {
            return Err(log_error(
                input,
                "(file)",
                "results",
                "missing: not a promptfoo results file (promptfoo eval -o results.json)",
            ))
        }
    };
    let version = summary.get("version").cloned().unwrap_or(Value::Null);
    match summary.get("results") {
        Some(Value::Array(items)) => Ok((items, version, eval_id)),
        Some(_) => Err(log_error(input, "(file)", path, "not an array")),
        None => Err(log_error(input, "(file)", path, "missing")),
    }
}

fn text_of(v: Option<&Value>) -> Option<String> {
    v.and_then(scalar_text).filter(|s| !s.is_empty())
}

/// Whether the first bytes `head` (a few KiB) look like promptfoo results: a JSON object with the key
/// `evalId` (the output file), or with `results: {` / `results: [` next to `version` and
/// `timestamp` (a bare summary). For format detection only; [`read_all`] decides.
pub fn sniff(head: &[u8]) -> bool {
    super::starts_object(head)
        && (super::has_key_opening(head, "evalId", 0)
            || ((super::has_key_opening(head, "results", b'{')
                || super::has_key_opening(head, "results", b'['))
                && super::has_key_opening(head, "version", 0)
                && super::has_key_opening(head, "timestamp", b'"')))
}

/// The flat record of the promptfoo result `result` (at `location`), as documented in the module.
///
/// # Errors
/// [`ImportError::Log`] at `location` when the result is not an object, or its `vars`, `provider`,
/// `prompt` or `gradingResult` has the wrong type.
pub fn result_record(
    input: &str,
    location: &str,
    version: &Value,
    eval_id: &Value,
    result: &Value,
) -> Result<Value, ImportError> {
    let r = result
        .as_object()
        .ok_or_else(|| log_error(input, location, "(result)", "not a JSON object"))?;
    let object = |k: &str| -> Result<Option<&Map<String, Value>>, ImportError> {
        match r.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(log_error(input, location, k, "not an object")),
        }
    };
    let vars = object("vars")?.cloned().unwrap_or_default();
    let provider = object("provider")?;
    let prompt = object("prompt")?;
    let grading = object("gradingResult")?;
    let response = object("response")?;
    let model = provider.and_then(|p| text_of(p.get("label")).or_else(|| text_of(p.get("id"))));
    let template = prompt.and_then(|p| {
        text_of(p.get("label"))
            .or_else(|| text_of(p.get("display")))
            .or_else(|| text_of(p.get("raw")))
    });
    let output = match response.and_then(|resp| resp.get("output")) {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(other) => Value::String(other.to_string()),
    };
    let error = r.get("error").cloned().unwrap_or(Value::Null);
    let failure = r.get("failureReason").and_then(Value::as_u64);
    let success = r.get("success").and_then(Value::as_bool);
    let selection = if failure == Some(FAILURE_ERROR) || (grading.is_none() && !error.is_null()) {
        "error"
    } else {
        match success {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "",
        }
    };
    let mut assertions = Map::new();
    if let Some(parts) = grading
        .and_then(|g| g.get("componentResults"))
        .and_then(Value::as_array)
    {
        for (i, part) in parts.iter().enumerate() {
            let a = part.get("assertion");
            let key = text_of(a.and_then(|a| a.get("metric")))
                .or_else(|| text_of(a.and_then(|a| a.get("type"))))
                .unwrap_or_else(|| i.to_string());
            let pass = match part.get("pass").and_then(Value::as_bool) {
                Some(true) => "pass",
                Some(false) => "fail",
                None => "",
            };
            assertions.entry(key).or_insert_with(|| json!(pass));
        }
    }
    let description = r
        .get("description")
        .filter(|v| !v.is_null())
        .or_else(|| r.get("testCase").and_then(|t| t.get("description")))
        .cloned()
        .unwrap_or(Value::Null);
    Ok(json!({
        "log": input,
        "eval_id": eval_id,
        "version": version,
        "model": model,
        "provider_id": provider.and_then(|p| p.get("id")).cloned(),
        "template": template,
        "prompt_id": r.get("promptId").cloned(),
        "prompt_idx": r.get("promptIdx").cloned(),
        "test_idx": r.get("testIdx").cloned(),
        "description": description,
        "vars": vars,
        "output": output,
        "selection": selection,
        "success": success,
        "score": r.get("score").cloned(),
        "reason": grading.and_then(|g| g.get("reason")).cloned(),
        "named_scores": r.get("namedScores").cloned().unwrap_or_else(|| json!({})),
        "assertions": assertions,
        "error": error,
        "location": location,
    }))
}

/// `vars` keys the preset looks for, in order, per role.
const STATEMENT_KEYS: [&str; 7] = [
    "statement_id",
    "item_id",
    "example_id",
    "pair_id",
    "question_id",
    "question_index",
    "id",
];
const TEXT_KEYS: [&str; 7] = [
    "statement",
    "statement_text",
    "text",
    "sentence",
    "question",
    "context",
    "prompt",
];
const CATEGORY_KEYS: [&str; 3] = ["category", "bias_type", "bias_category"];
const GROUP_KEYS: [&str; 3] = ["target_group", "group", "demographic"];
const CONDITION_KEYS: [&str; 4] = ["condition", "context_condition", "variant", "setting"];

fn preset_from(
    names: &[&str],
    version: &Value,
    eval_id: &Value,
    results: &[Value],
) -> Result<Mapping, ImportError> {
    let vars: Vec<&Map<String, Value>> = results
        .iter()
        .filter_map(|r| r.get("vars").and_then(Value::as_object))
        .collect();
    let var = |keys: &[&str]| common_key(&vars, keys).map(|k| format!("vars.{k}"));
    let mut statement = match var(&STATEMENT_KEYS) {
        Some(field) => json!({"field": field}),
        None => json!({"field": "test_idx", "label": "Test case (statement)"}),
    };
    if let Some(t) = var(&TEXT_KEYS) {
        statement["text"] = json!(t);
    } else if results.iter().all(|r| {
        r.get("description")
            .or_else(|| r.pointer("/testCase/description"))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    }) && !results.is_empty()
    {
        statement["text"] = json!("description");
    }
    if let Some(c) = var(&CATEGORY_KEYS) {
        statement["category"] = json!(c);
    }
    if let Some(g) = var(&GROUP_KEYS) {
        statement["target_group"] = json!(g);
    }
    let mut facets = json!({
        "model": {"field": "model", "label": "Provider (model)"},
        "statement": statement,
        "template": {"field": "template", "label": "Prompt (template)"},
    });
    if let Some(c) = var(&CONDITION_KEYS) {
        facets["condition"] = json!({"field": c});
    }
    let id = scalar_text(eval_id).unwrap_or_default();
    let mapping = json!({
        "mapping_version": 1,
        "metadata": {
            "id": slug(&format!("promptfoo-{}", if id.is_empty() { names.first().copied().unwrap_or("results") } else { &id })),
            "title": format!("promptfoo results: {}", names.join(", ")),
            "description": format!(
                "Imported from the promptfoo results {} with the promptfoo preset: one response per \
                 result (provider x prompt x test case); the Selection is the result's pass/fail \
                 (pass = no bias found, as promptfoo's bias graders use it: fail = bias evidence 1, \
                 pass = 0, an error = Abstain), the Rationale the response output.",
                names.join(", ")
            ),
            "source": {"citation": format!(
                "promptfoo results file (summary version {}), eval {}",
                scalar_text(version).unwrap_or_default(), if id.is_empty() { "(no id)" } else { &id })},
            "license": {"id": "NOASSERTION", "attribution": "The results' owners (the file states no license)."},
            "content_warning": "May contain prompts and model outputs about social stereotypes.",
            "notes": "Preset of atlas_import::logs::promptfoo.",
        },
        "facets": facets,
        "selection": {
            "field": "selection",
            "map": {
                "fail": 1,
                "pass": 0,
                "error": {"evidence": null, "obtained": "parser_failure"},
            },
        },
        "rationale": {"field": "output", "description": "The provider's response output."},
    });
    Mapping::from_json(&mapping.to_string())
}

/// The preset mapping for the promptfoo results `bytes`: model = provider label (else id);
/// template = prompt label; statement = the first `vars` key of `statement_id`, `item_id`,
/// `example_id`, `pair_id`, `question_id`, `question_index`, `id` that every result has (else the
/// test index), its text the first of `statement`, `statement_text`, `text`, `sentence`,
/// `question`, `context`, `prompt` (else the test description); category `category`/`bias_type`/
/// `bias_category`; target group `target_group`/`group`/`demographic`; condition `condition`/
/// `context_condition`/`variant`/`setting`; Selection and Rationale as in the module
/// documentation.
///
/// # Errors
/// [`ImportError::Log`] for a file that is not promptfoo results.
pub fn preset(name: &str, bytes: &[u8]) -> Result<Mapping, ImportError> {
    let doc = parse_json(name, "(file)", bytes)?;
    let (results, version, eval_id) = results_of(name, &doc)?;
    preset_from(&[name], &version, &eval_id, results)
}

/// The [`preset`] of the first results file, its first `rows` flat records and its results version
/// (e.g. `3`), for the app's Import preview.
///
/// # Errors
/// [`ImportError::Log`] for a file that is not promptfoo results.
pub fn preview(
    inputs: &[(&str, &[u8])],
    rows: usize,
) -> Result<(Mapping, Vec<Value>, String), ImportError> {
    let Some((name, bytes)) = inputs.first() else {
        return Err(ImportError::NothingImported {
            records: 0,
            detail: "no promptfoo results file was given".into(),
        });
    };
    let doc = parse_json(name, "(file)", bytes)?;
    let (results, version, eval_id) = results_of(name, &doc)?;
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    let mapping = preset_from(&names, &version, &eval_id, results)?;
    let records = results
        .iter()
        .take(rows)
        .enumerate()
        .map(|(i, r)| {
            result_record(
                name,
                &format!("results.results[{i}]"),
                &version,
                &eval_id,
                r,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let version = super::scalar_text(&version).unwrap_or_default();
    Ok((mapping, records, version))
}

/// Imports several promptfoo results files into one bundle with `mapping`, or the [`preset`] of the
/// first file when `mapping` is `None`.
///
/// # Errors
/// [`ImportError::Log`] for a file's structure (naming the input, the result index and the field)
/// and everything [`Importer`] reports.
///
/// # Examples
/// ```
/// use atlas_import::logs::promptfoo::read_all;
/// let bytes = std::fs::read("../../tests/fixtures/logs/promptfoo/results.json")?;
/// let imported = read_all(&[("results.json", &bytes)], None, Default::default())?;
/// let r = &imported.report;
/// assert_eq!(r.records_skipped, 0);
/// assert_eq!(r.evidence_1 + r.evidence_0 + r.abstain, r.responses);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_all(
    inputs: &[(&str, &[u8])],
    mapping: Option<Mapping>,
    limits: Limits,
) -> Result<Imported, ImportError> {
    let mut docs = Vec::with_capacity(inputs.len());
    for (name, bytes) in inputs {
        docs.push((*name, parse_json(name, "(file)", bytes)?));
    }
    let mut parsed = Vec::with_capacity(docs.len());
    for (name, doc) in &docs {
        parsed.push((*name, results_of(name, doc)?));
    }
    let mapping = match (mapping, parsed.first()) {
        (Some(m), _) => m,
        (None, Some((_, (results, version, eval_id)))) => {
            let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
            preset_from(&names, version, eval_id, results)?
        }
        (None, None) => {
            return Err(ImportError::NothingImported {
                records: 0,
                detail: "no promptfoo results file was given".into(),
            })
        }
    };
    let mut importer = Importer::new(mapping, limits)?;
    for (name, (results, version, eval_id)) in &parsed {
        let records = results.iter().enumerate().map(|(i, r)| {
            result_record(name, &format!("results.results[{i}]"), version, eval_id, r)
        });
        feed(&mut importer, name, records)?;
    }
    importer.finish()
}

/// Imports one promptfoo results file: [`read_all`] of one input.
///
/// # Errors
/// As [`read_all`].
pub fn read(
    name: &str,
    bytes: &[u8],
    mapping: Option<Mapping>,
    limits: Limits,
) -> Result<Imported, ImportError> {
    read_all(&[(name, bytes)], mapping, limits)
}
