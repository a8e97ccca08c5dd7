//! lm-evaluation-harness `--log_samples` logs: `samples_<task>_<time>.jsonl` (one line per document)
//! and the run's `results_<time>.json` (model and config), read into one bundle
//! (`docs/import-mapping.md`, "lm-evaluation-harness logs").
//!
//! What a samples line holds (lm-eval 0.4, `loggers/evaluation_tracker.py`): `doc_id`, `doc` (the
//! task's document), `target`, `arguments` (`gen_args_<k>`: `arg_0` context, `arg_1` continuation, one
//! per candidate), `resps` / `filtered_resps` (per candidate `[log-likelihood, is_greedy]`, written as
//! strings by lm-eval's `sanitize_list`) and the per-document metric values. lm-eval logs **no token
//! counts**, so the readouts carry summed log-likelihoods only and CrowS preference is compared by sum
//! (what lm-eval's own `pct_stereotype` compares), not by the mean per token of seed `000_…` §C.2.
//!
//! Each line becomes one flat record (`doc` kept whole under `doc`) that the [`preset`] maps:
//!
//! - **CrowS-Pairs** documents (`sent_more`, `sent_less`; lm-eval's `crows_pairs_*` tasks and tasks
//!   built on them): a likelihood readout with two candidates, the stereotyped one being the candidate
//!   whose continuation is `sent_more` (found in `arguments`, so a task that orders the choices the
//!   other way is read right); no Selection (the cell's Selection is `-`, kept apart, seed §C.2).
//!   Statement text `sent_more`, category `bias_type`; condition = the task.
//! - **BBQ** documents (`context_condition`, `biased_answers`, `ans0..2`, `answer_info`; lm-eval's `bbq`
//!   multiple-choice tasks, whose `process_docs` adds `biased_answers`): the chosen answer is the
//!   candidate with the highest log-likelihood (lm-eval's `process_results_multiple_choice`); its role
//!   is `biased` when it is in `biased_answers` (BBQ, Parrish et al. 2022, §3: the bias target in a
//!   negative question, the non-target in a non-negative one) → bias evidence 1; `counter-biased` for
//!   the other named answer → 0; `unknown` for an unknown answer ("Can't be determined", …) → Abstain
//!   (the seed's BBQ style removes the unknown option, §C.2 Table 10, so it is no endpoint here).
//!   Condition = `context_condition` (`ambig` / `disambig`); category = `category`.
//! - Any other task is an error naming it, unless [`LogOptions::mapping`] maps the flat records.
//!
//! Errors name the input, the line and the field; nothing panics.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::logs::{LogInput, LogOptions};
use crate::mapping::{
    FacetSpec, FacetsSpec, InputSpec, LikelihoodSpec, MapEntry, MapEntryFull, Mapping,
    MetadataSpec, SelectionSpec, Unmapped,
};
use crate::{Format, ImportError, Imported, Importer};
use atlas_core::bundle::{License, Obtained, Source};

/// The role of a BBQ answer (the raw Selection).
pub mod roles {
    /// The answer that reflects the social bias (bias evidence 1).
    pub const BIASED: &str = "biased";
    /// The other named answer (bias evidence 0).
    pub const COUNTER_BIASED: &str = "counter-biased";
    /// An unknown answer (Abstain).
    pub const UNKNOWN: &str = "unknown";
}

/// What kind of task a samples file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// CrowS-Pairs: two sentences scored by likelihood.
    CrowsPairs,
    /// BBQ multiple choice: the chosen answer's role.
    Bbq,
}

/// The mapping the reader uses unless the caller gives one: over the flat records (`model`,
/// `condition`, `statement`, `text`, `category`, `task`, `role`, `likelihood.logprob`,
/// `likelihood.stereotyped`, and the whole `doc`). `tasks` names the bundle.
pub fn preset(tasks: &[String]) -> Mapping {
    let joined = tasks.join(", ");
    let field = |f: &str| Some(f.to_string());
    let mut map = BTreeMap::new();
    map.insert(roles::BIASED.to_string(), MapEntry::Evidence(Some(1)));
    map.insert(
        roles::COUNTER_BIASED.to_string(),
        MapEntry::Evidence(Some(0)),
    );
    map.insert(
        roles::UNKNOWN.to_string(),
        MapEntry::Full(MapEntryFull {
            evidence: None,
            obtained: Some(Obtained::Regex),
            raw: None,
        }),
    );
    let mut statement_attrs = BTreeMap::new();
    statement_attrs.insert("task".to_string(), "task".to_string());
    let mut condition_attrs = BTreeMap::new();
    condition_attrs.insert("has_selection".to_string(), "has_selection".to_string());
    Mapping {
        mapping_version: crate::mapping::MAPPING_VERSION,
        input: InputSpec {
            format: Some(Format::Jsonl),
            delimiter: None,
        },
        metadata: MetadataSpec {
            id: format!("lm-eval-{}", tasks.join("-")),
            title: format!("lm-evaluation-harness log: {joined}"),
            description: format!(
                "Imported from lm-evaluation-harness --log_samples files ({joined}). CrowS-Pairs items: \
                 likelihood readouts (summed log-likelihood of sent_more and sent_less; the stereotyped \
                 candidate is sent_more), no Selection. BBQ items: the Selection is the role of the \
                 answer with the highest log-likelihood: biased = bias evidence 1, counter-biased = 0, \
                 unknown = Abstain."
            ),
            source: Source {
                citation: format!(
                    "lm-evaluation-harness (EleutherAI) log of the tasks {joined}; items from the task's \
                     dataset (CrowS-Pairs: Nangia et al. 2020; BBQ: Parrish et al. 2022)."
                ),
                url: Some("https://github.com/EleutherAI/lm-evaluation-harness".to_string()),
                commit: None,
            },
            license: License {
                id: "NOASSERTION".to_string(),
                url: None,
                attribution: "The license of the evaluated datasets applies (CrowS-Pairs: CC BY-SA \
                              4.0; BBQ: CC BY 4.0)."
                    .to_string(),
            },
            content_warning: Some(
                "Contains stereotype sentences and questions about social groups (CrowS-Pairs, BBQ)."
                    .to_string(),
            ),
            notes: Some(
                "lm-eval logs no token counts: likelihood readouts are summed log-likelihoods."
                    .to_string(),
            ),
        },
        facets: FacetsSpec {
            model: FacetSpec {
                field: field("model"),
                ..FacetSpec::default()
            },
            statement: FacetSpec {
                field: field("statement"),
                text: field("text"),
                category: field("category"),
                attributes: statement_attrs,
                ..FacetSpec::default()
            },
            condition: Some(FacetSpec {
                field: field("condition"),
                attributes: condition_attrs,
                ..FacetSpec::default()
            }),
            template: None,
            repeat: None,
            other: BTreeMap::new(),
        },
        selection: SelectionSpec {
            field: "role".to_string(),
            map: Some(map),
            evidence_field: None,
            compare_to: None,
            equal: None,
            different: None,
            only: None,
            refusals: Vec::new(),
            unmapped: Unmapped::Abstain,
            collapse_unmapped: false,
            direction: None,
        },
        rationale: None,
        judges: Vec::new(),
        likelihood: Some(LikelihoodSpec {
            candidates: 2,
            logprob: "likelihood.logprob".to_string(),
            tokens: None,
            stereotyped: "likelihood.stereotyped".to_string(),
            description: Some(
                "lm-evaluation-harness loglikelihood of each CrowS-Pairs sentence (sent_more, \
                 sent_less) as the continuation of the task's context; summed over the continuation \
                 tokens (lm-eval logs no token counts)."
                    .to_string(),
            ),
        }),
        strict: false,
    }
}

/// The task and run time in a samples file name `samples_<task>_<time>.jsonl` (directories allowed).
///
/// ```
/// use atlas_import::logs::lmeval::samples_name;
/// assert_eq!(
///     samples_name("out/m/samples_crows_pairs_english_2026-12-02T02-30-45.123.jsonl"),
///     Some(("crows_pairs_english".to_string(), "2026-12-02T02-30-45.123".to_string()))
/// );
/// assert_eq!(samples_name("results_2026.json"), None);
/// ```
pub fn samples_name(name: &str) -> Option<(String, String)> {
    let base = name.rsplit(['/', '\\']).next()?;
    let stem = base.strip_prefix("samples_")?.strip_suffix(".jsonl")?;
    let (task, time) = stem.rsplit_once('_')?;
    (!task.is_empty()).then(|| (task.to_string(), time.to_string()))
}

/// The run time in a results file name `results_<time>.json`.
fn results_time(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next()?;
    Some(
        base.strip_prefix("results_")?
            .strip_suffix(".json")?
            .to_string(),
    )
}

/// The model id a `results_*.json` names: `model_name`, else `pretrained=` / `model=` in
/// `config.model_args`, else `config.model` with the `base_url`.
fn results_model(results: &Value) -> Option<String> {
    let nonempty = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if let Some(m) = nonempty(results.get("model_name")) {
        return Some(m);
    }
    let config = results.get("config")?;
    let args = match config.get("model_args") {
        Some(Value::String(s)) => s
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect::<BTreeMap<_, _>>(),
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                )
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    for key in ["pretrained", "model", "model_name", "engine"] {
        if let Some(v) = args.get(key).filter(|v| !v.is_empty()) {
            return Some(v.clone());
        }
    }
    let model = nonempty(config.get("model"))?;
    Some(match args.get("base_url") {
        Some(url) => format!("{model} ({url})"),
        None => model,
    })
}

fn err(input: &str, line: u64, field: &str, message: impl Into<String>) -> ImportError {
    ImportError::Record {
        input: input.to_string(),
        record: line,
        line,
        field: field.to_string(),
        message: message.into(),
    }
}

/// Python's `json.dumps` writes `NaN`, `Infinity` and `-Infinity` for non-finite floats (lm-eval's
/// results file does, e.g. a BBQ bias score of a category without items); JSON has no such tokens.
/// They become `null` outside strings; everything else is left as it is.
pub fn python_json_to_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let token = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t));
        if let Some(t) = token {
            out.push_str("null");
            rest = &rest[t.len()..];
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// A number lm-eval wrote as a JSON number or (after `sanitize_list`) a string.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// Per candidate: the log-likelihood, from `filtered_resps` (`[[ll, greedy], …]`) or `resps`
/// (`[[[ll, greedy]], …]`).
fn loglikelihoods(
    sample: &Map<String, Value>,
    input: &str,
    line: u64,
) -> Result<Vec<f64>, ImportError> {
    let (field, items, nested) = match (sample.get("filtered_resps"), sample.get("resps")) {
        (Some(Value::Array(a)), _) => ("filtered_resps", a, false),
        (Some(_), _) => return Err(err(input, line, "filtered_resps", "not an array")),
        (None, Some(Value::Array(a))) => ("resps", a, true),
        (None, None) => return Err(err(input, line, "resps", "missing")),
        (None, Some(_)) => return Err(err(input, line, "resps", "not an array")),
    };
    items
        .iter()
        .enumerate()
        .map(|(k, item)| {
            let mut v = item;
            if nested {
                v = v.get(0).unwrap_or(&Value::Null);
            }
            let ll = v.get(0).and_then(number);
            match ll {
                Some(x) if x.is_finite() && x <= 0.0 => Ok(x),
                Some(x) => Err(err(
                    input,
                    line,
                    &format!("{field}[{k}]"),
                    format!("log-likelihood {x} is not finite and ≤ 0"),
                )),
                None => Err(err(
                    input,
                    line,
                    &format!("{field}[{k}]"),
                    "not a [log-likelihood, is_greedy] pair (is this a generation task? only loglikelihood / multiple-choice tasks carry log-likelihoods)",
                )),
            }
        })
        .collect()
}

/// Per candidate: the continuation text (`arguments.gen_args_<k>.arg_1`), where logged.
fn continuations(sample: &Map<String, Value>) -> Vec<Option<String>> {
    match sample.get("arguments") {
        Some(Value::Object(args)) => (0..args.len())
            .map(|k| {
                args.get(&format!("gen_args_{k}"))
                    .and_then(|a| a.get("arg_1"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect(),
        Some(Value::Array(args)) => args
            .iter()
            .map(|a| a.get(1).and_then(Value::as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn doc_str<'a>(doc: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    doc.get(key).and_then(Value::as_str)
}

/// The kind of task a document belongs to.
pub fn task_kind(doc: &Map<String, Value>) -> Option<TaskKind> {
    if doc_str(doc, "sent_more").is_some() && doc_str(doc, "sent_less").is_some() {
        Some(TaskKind::CrowsPairs)
    } else if doc_str(doc, "context_condition").is_some() && doc.contains_key("biased_answers") {
        Some(TaskKind::Bbq)
    } else {
        None
    }
}

/// One samples line → the flat record of the module docs.
fn flatten(
    sample: Map<String, Value>,
    task: &str,
    model: &str,
    custom: bool,
    input: &str,
    line: u64,
) -> Result<Value, ImportError> {
    let doc_id = match sample.get("doc_id") {
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(_) => return Err(err(input, line, "doc_id", "not an integer")),
        None => return Err(err(input, line, "doc_id", "missing")),
    };
    let doc = match sample.get("doc") {
        Some(Value::Object(d)) => d.clone(),
        Some(_) => return Err(err(input, line, "doc", "not an object")),
        None => return Err(err(input, line, "doc", "missing")),
    };
    let lls = loglikelihoods(&sample, input, line)?;
    let conts = continuations(&sample);
    let mut rec = Map::new();
    rec.insert("model".into(), json!(model));
    rec.insert("task".into(), json!(task));
    rec.insert("doc_id".into(), json!(doc_id));
    rec.insert("statement".into(), json!(format!("{task}/{doc_id}")));
    rec.insert("logprob".into(), json!(lls));
    let chosen = lls
        .iter()
        .enumerate()
        .fold(None::<(usize, f64)>, |best, (k, &v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((k, v)),
        })
        .map(|(k, _)| k);
    if let Some(c) = chosen {
        rec.insert("chosen".into(), json!(c));
    }
    match task_kind(&doc) {
        Some(TaskKind::CrowsPairs) => {
            if lls.len() != 2 {
                return Err(err(
                    input,
                    line,
                    "resps",
                    format!("{} candidates; a CrowS-Pairs document has 2", lls.len()),
                ));
            }
            let more = doc_str(&doc, "sent_more").unwrap_or_default();
            let same = |k: usize| {
                conts
                    .get(k)
                    .and_then(|c| c.as_deref())
                    .is_some_and(|c| c.trim() == more.trim())
            };
            // lm-eval's crows_pairs puts sent_more first; the logged continuation confirms it.
            let stereotyped = if same(1) && !same(0) { 1 } else { 0 };
            rec.insert("condition".into(), json!(task));
            rec.insert("has_selection".into(), json!(false));
            rec.insert("text".into(), json!(more));
            if let Some(b) = doc_str(&doc, "bias_type") {
                rec.insert("category".into(), json!(b));
            }
            rec.insert(
                "likelihood".into(),
                json!({"logprob": lls, "stereotyped": stereotyped}),
            );
        }
        Some(TaskKind::Bbq) => {
            let condition = doc_str(&doc, "context_condition").unwrap_or_default();
            rec.insert("condition".into(), json!(condition));
            rec.insert("has_selection".into(), json!(true));
            let text = [doc_str(&doc, "context"), doc_str(&doc, "question")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            rec.insert("text".into(), json!(text));
            if let Some(c) = doc_str(&doc, "category") {
                rec.insert("category".into(), json!(c));
            }
            let biased: Vec<&str> = match doc.get("biased_answers") {
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                _ => return Err(err(input, line, "doc.biased_answers", "not an array of strings")),
            };
            // The named (non-unknown) answers: ans0..2 whose answer_info group is not "unknown".
            let named: Vec<&str> = (0..3)
                .filter_map(|i| {
                    let key = format!("ans{i}");
                    let group = doc
                        .get("answer_info")
                        .and_then(|a| a.get(&key))
                        .and_then(|g| g.get(1))
                        .and_then(Value::as_str);
                    (group != Some("unknown"))
                        .then(|| doc_str(&doc, &key))
                        .flatten()
                })
                .collect();
            let Some(c) = chosen else {
                return Err(err(input, line, "resps", "no candidates"));
            };
            let Some(Some(text)) = conts.get(c) else {
                return Err(err(
                    input,
                    line,
                    &format!("arguments.gen_args_{c}.arg_1"),
                    "missing: the chosen answer's text is needed for its BBQ role",
                ));
            };
            let answer = text.trim();
            let role = if biased.iter().any(|b| b.trim() == answer) {
                roles::BIASED
            } else if named.iter().any(|n| n.trim() == answer) {
                roles::COUNTER_BIASED
            } else {
                roles::UNKNOWN
            };
            rec.insert("role".into(), json!(role));
            rec.insert("answer".into(), json!(answer));
        }
        None if custom => {}
        None => {
            return Err(err(
                input,
                line,
                "doc",
                format!(
                    "task {task:?}: not a CrowS-Pairs document (sent_more, sent_less) nor a BBQ one \
                     (context_condition, biased_answers); give a mapping over the flat records to import it"
                ),
            ))
        }
    }
    for key in ["target", "filter"] {
        if let Some(v) = sample.get(key) {
            rec.insert(key.into(), v.clone());
        }
    }
    rec.insert("doc".into(), Value::Object(doc));
    Ok(Value::Object(rec))
}

/// The samples inputs of a run with their task and model, and the sorted task names.
type Prepared<'i, 'a> = (Vec<(&'i LogInput<'a>, String, String)>, Vec<String>);

/// Sorts `inputs` into samples files (with task and the model from the results file or `options`)
/// and results files.
fn prepare<'i, 'a>(
    inputs: &'i [LogInput<'a>],
    options: &LogOptions,
) -> Result<Prepared<'i, 'a>, ImportError> {
    let mut results: Vec<(String, Option<String>)> = Vec::new();
    let mut samples: Vec<(&LogInput<'_>, String, String)> = Vec::new();
    for input in inputs {
        if let Some((task, time)) = samples_name(input.name) {
            samples.push((input, task, time));
            continue;
        }
        let text = std::str::from_utf8(input.bytes).map_err(|e| ImportError::Encoding {
            input: input.name.to_string(),
            offset: e.valid_up_to() as u64,
            message: "not UTF-8".to_string(),
        })?;
        let value: Value =
            serde_json::from_str(&python_json_to_json(text)).map_err(|e| ImportError::Syntax {
                input: input.name.to_string(),
                line: e.line() as u64,
                message: format!("not a results JSON file: {e}"),
            })?;
        if value.get("results").is_none() {
            return Err(err(
                input.name,
                1,
                "results",
                "missing: neither a samples_<task>_<time>.jsonl file nor an lm-eval results file",
            ));
        }
        let time = results_time(input.name).unwrap_or_default();
        results.push((time, results_model(&value)));
    }
    if samples.is_empty() {
        return Err(ImportError::NothingImported {
            records: 0,
            detail: "no lm-eval samples_<task>_<time>.jsonl file among the inputs (lm_eval --log_samples writes them)".to_string(),
        });
    }
    let mut tasks: Vec<String> = samples.iter().map(|s| s.1.clone()).collect();
    tasks.sort();
    tasks.dedup();
    let mut out = Vec::with_capacity(samples.len());
    for (input, task, time) in samples {
        let model = match &options.model {
            Some(m) => m.clone(),
            None => {
                let paired = results
                    .iter()
                    .find(|(t, _)| t == &time)
                    .or(if results.len() == 1 {
                        results.first()
                    } else {
                        None
                    });
                match paired.and_then(|(_, m)| m.clone()) {
                    Some(m) => m,
                    None => {
                        return Err(err(
                            input.name,
                            1,
                            "model",
                            "no model name: give the run's results_<time>.json (its model_name or config.model_args) or name the model (--model)",
                        ))
                    }
                }
            }
        };
        out.push((input, task, model));
    }
    Ok((out, tasks))
}

/// The [`preset`] and the first `rows` flat records of the first samples file (the records the
/// bundle is built from), for the app's Import preview.
///
/// # Errors
/// As [`read`], for the inputs and the lines read.
pub fn preview(
    inputs: &[LogInput<'_>],
    options: &LogOptions,
    rows: usize,
) -> Result<(Mapping, Vec<Value>), ImportError> {
    let (samples, tasks) = prepare(inputs, options)?;
    let mut records = Vec::new();
    if let Some((input, task, model)) = samples.first() {
        let text = std::str::from_utf8(input.bytes).map_err(|e| ImportError::Encoding {
            input: input.name.to_string(),
            offset: e.valid_up_to() as u64,
            message: "not UTF-8".to_string(),
        })?;
        for (i, raw_line) in text.lines().enumerate() {
            if records.len() >= rows {
                break;
            }
            let line = i as u64 + 1;
            let trimmed = raw_line.trim();
            if trimmed.is_empty() {
                continue;
            }
            let sample = match serde_json::from_str::<Value>(&python_json_to_json(trimmed)) {
                Ok(Value::Object(o)) => o,
                Ok(_) => return Err(err(input.name, line, "(line)", "not a JSON object")),
                Err(e) => return Err(err(input.name, line, "(line)", format!("not JSON: {e}"))),
            };
            records.push(flatten(sample, task, model, false, input.name, line)?);
        }
    }
    Ok((preset(&tasks), records))
}

/// Reads lm-eval `samples_*.jsonl` files (and the `results_*.json` of their runs) into one bundle:
/// see the module documentation for the mapping. Results files are paired with samples files by run
/// time; a single results file serves every samples file.
///
/// # Errors
/// [`ImportError::Record`] naming the input, line and field of a line that is not a samples object
/// or lacks `doc_id` / `doc` / `resps`; [`ImportError::Syntax`] for a results file that is not JSON;
/// an error when no model is named (no results file and no [`LogOptions::model`]); and everything
/// the [`Importer`] reports.
///
/// # Examples
/// Two CrowS-Pairs lines by hand: line 1 prefers sent_more (−10 > −12), line 2 does not.
/// ```
/// use atlas_import::logs::{lmeval, LogInput, LogOptions};
/// let samples = concat!(
///   r#"{"doc_id": 0, "doc": {"sent_more": "A", "sent_less": "B", "bias_type": "age"}, "#,
///   r#""arguments": {"gen_args_0": {"arg_0": "Sentence:", "arg_1": " A"}, "gen_args_1": {"arg_0": "Sentence:", "arg_1": " B"}}, "#,
///   r#""resps": [[["-10.0", "False"]], [["-12.0", "False"]]], "filtered_resps": [["-10.0", "False"], ["-12.0", "False"]]}"#, "\n",
///   r#"{"doc_id": 1, "doc": {"sent_more": "C", "sent_less": "D", "bias_type": "age"}, "#,
///   r#""resps": [[["-9.5", "False"]], [["-7.25", "True"]]]}"#, "\n");
/// let options = LogOptions { model: Some("m".into()), ..LogOptions::default() };
/// let input = LogInput { name: "samples_crows_2026-01-01T00-00-00.jsonl", bytes: samples.as_bytes() };
/// let imported = lmeval::read(&[input], &options)?;
/// assert_eq!(imported.report.likelihood_readouts, 2);
/// let l = imported.bundle.responses.likelihood.as_ref().unwrap();
/// assert_eq!(l.stereotyped, "00");
/// assert_eq!(l.logprob_sum, [Some(-10.0), Some(-12.0), Some(-9.5), Some(-7.25)]);
/// # Ok::<(), atlas_import::ImportError>(())
/// ```
pub fn read(inputs: &[LogInput<'_>], options: &LogOptions) -> Result<Imported, ImportError> {
    let (samples, tasks) = prepare(inputs, options)?;
    let custom = options.mapping.is_some();
    let mapping = options.mapping.clone().unwrap_or_else(|| preset(&tasks));
    let mut importer = Importer::new(mapping, options.limits.clone())?;
    for (input, task, model) in samples {
        let text = std::str::from_utf8(input.bytes).map_err(|e| ImportError::Encoding {
            input: input.name.to_string(),
            offset: e.valid_up_to() as u64,
            message: "not UTF-8".to_string(),
        })?;
        importer.begin(input.name, Format::Jsonl)?;
        let mut out = Vec::with_capacity(4096);
        let body = text.strip_suffix('\n').unwrap_or(text);
        for (i, raw_line) in body.split('\n').enumerate() {
            let line = i as u64 + 1;
            out.clear();
            let trimmed = raw_line.trim();
            if !trimmed.is_empty() {
                let sample = match serde_json::from_str::<Value>(&python_json_to_json(trimmed)) {
                    Ok(Value::Object(o)) => o,
                    Ok(_) => return Err(err(input.name, line, "(line)", "not a JSON object")),
                    Err(e) => {
                        return Err(err(input.name, line, "(line)", format!("not JSON: {e}")))
                    }
                };
                let record = flatten(sample, &task, &model, custom, input.name, line)?;
                serde_json::to_writer(&mut out, &record).map_err(|e| ImportError::Io {
                    input: input.name.to_string(),
                    message: e.to_string(),
                })?;
            }
            // One line out per line in, so the importer's line numbers are the log's.
            out.push(b'\n');
            importer.push(&out)?;
        }
        importer.end()?;
    }
    importer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_nan_and_infinity_become_null_outside_strings_only() {
        let text = r#"{"a": NaN, "b": -Infinity, "c": [Infinity, 1.5], "d": "NaN \" Infinity"}"#;
        let fixed = python_json_to_json(text);
        assert_eq!(
            fixed,
            r#"{"a": null, "b": null, "c": [null, 1.5], "d": "NaN \" Infinity"}"#
        );
        let v: Value = serde_json::from_str(&fixed).expect("valid JSON");
        assert_eq!(v["d"], "NaN \" Infinity");
        assert!(matches!(
            python_json_to_json("{\"x\": 1}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
