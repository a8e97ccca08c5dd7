//! Inspect AI logs: `.eval` (a zip of JSON members) and `.json` (one JSON document) → a bundle.
//!
//! **The `.eval` layout** (inspect_ai 0.3.x; checked on the committed fixtures written by inspect_ai
//! 0.3.285): `header.json` (`version`, `status`, `eval` — task, model, config —, `plan`, `results`,
//! `stats`), `summaries.json` (one summary per sample: `id`, `epoch`, `input`, `choices`, `target`,
//! `metadata`, `scores`; texts shortened to 1,024 characters), `samples/<id>_epoch_<n>.json` (the
//! full sample), `reductions.json`, and `_journal/start.json` + `_journal/summaries/<n>.json` (written
//! while the run goes; a log still running has no `header.json` / `summaries.json`). Members are
//! stored, DEFLATE or — inspect_ai's default since 2025 — zstd (method 93, possibly several frames),
//! decoded by `flate2` (pure-Rust miniz_oxide backend) and `ruzstd`.
//!
//! **Reading.** [`EvalArchive`] reads the zip's central directory and then one member at a time
//! ([`EvalArchive::read_member`]); [`EvalArchive::members`] gives each member's offset, sizes and
//! method, so a browser can read a member from `Blob.slice(data_start, data_start + compressed)` and
//! decode it with [`decode_member`] without holding the file as one string. [`EvalArchive::summaries`]
//! is read first (the preset mapping and the sample list come from it); the bundle's records come from
//! the `samples/` members (full texts), one member at a time, in the summaries' order.
//!
//! **Records.** Each sample becomes one flat record ([`sample_record`]; the field names are the
//! preset's): `log`, `task`, `run_id`, `model` (the header's `eval.model`), `sample_id`, `epoch`,
//! `input` (text; chat input → the user messages' text), `choices`, `target`, `metadata` (the
//! sample's metadata object), `scorer`, `value`, `answer`, `explanation`, `reason` (of that scorer's
//! score), `selection` (below), `scores` (all scorers), `completion` (the model's output text), `error`
//! and `member`.
//!
//! `selection` is the score's value as text (`C`, `I`, `1.0`), except when the scorer gave a
//! `reason` that no usable answer was read (`no_response`, `invalid_response_format`: inspect's
//! `choice()` scores those `I`/`N`): then it is `(no answer: <reason>)`, which the preset maps to
//! Abstain (parser failure) — a format failure is not "no bias evidence". A sample without a score for
//! the scorer has an empty `selection` (Abstain, parser failure).

use std::io::{Cursor, Read};

use serde_json::{json, Map, Value};
use zip::ZipArchive;

use super::{common_key, feed, log_error, parse_json, scalar_text, slug};
use crate::{ImportError, Imported, Importer, Limits, Mapping};

/// Zip compression method numbers this reader decodes.
const STORED: u16 = 0;
const DEFLATED: u16 = 8;
const ZSTD: u16 = 93;

/// Largest decoded member accepted (1 GiB): a guard against a corrupt size field or a zip bomb.
pub const MAX_MEMBER_BYTES: u64 = 1 << 30;

/// The reasons inspect_ai's scorers give when no usable answer was read.
const NO_ANSWER_REASONS: [&str; 2] = ["no_response", "invalid_response_format"];

/// One member of an `.eval` zip, from its central directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Position in the central directory (0-based).
    pub index: usize,
    /// The member's path, e.g. `samples/pair0_epoch_1.json`.
    pub name: String,
    /// Zip compression method: 0 stored, 8 DEFLATE, 93 zstd (others are refused when read).
    pub method: u16,
    /// Byte offset of the member's data (after its local header) in the file, when the local header
    /// could be read.
    pub data_start: Option<u64>,
    /// Bytes of the compressed data.
    pub compressed_size: u64,
    /// Bytes once decoded.
    pub size: u64,
}

/// An Inspect AI `.eval` log opened from its bytes: the central directory is read, members are decoded
/// one at a time on request.
#[derive(Debug)]
pub struct EvalArchive<'a> {
    input: String,
    zip: ZipArchive<Cursor<&'a [u8]>>,
}

impl<'a> EvalArchive<'a> {
    /// Opens the zip `bytes` of the input called `input`.
    ///
    /// # Errors
    /// [`ImportError::Log`] (location `(file)`) when the bytes are not a readable zip (e.g. truncated:
    /// the central directory at the end is missing).
    pub fn open(input: &str, bytes: &'a [u8]) -> Result<Self, ImportError> {
        let zip = ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            log_error(
                input,
                "(file)",
                "(zip)",
                format!("not a readable .eval zip (truncated or not a zip): {e}"),
            )
        })?;
        Ok(EvalArchive {
            input: input.to_string(),
            zip,
        })
    }

    /// The members, in central-directory order.
    pub fn members(&mut self) -> Vec<Member> {
        let mut out = Vec::with_capacity(self.zip.len());
        for index in 0..self.zip.len() {
            if let Ok(file) = self.zip.by_index_raw(index) {
                out.push(Member {
                    index,
                    name: file.name().map(|n| n.to_string()).unwrap_or_default(),
                    method: compression_number(file.compression()),
                    data_start: file.data_start(),
                    compressed_size: file.compressed_size(),
                    size: file.size(),
                });
            }
        }
        out
    }

    /// Whether a member called `name` exists.
    pub fn has_member(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// The decoded bytes of the member `name`.
    ///
    /// # Errors
    /// [`ImportError::Log`] naming the member: missing, an unsupported compression method, corrupt or
    /// truncated data, larger than [`MAX_MEMBER_BYTES`].
    pub fn read_member(&mut self, name: &str) -> Result<Vec<u8>, ImportError> {
        let location = format!("member {name}");
        let index = self
            .zip
            .index_for_name(name)
            .ok_or_else(|| log_error(&self.input, &location, "(zip)", "the member is missing"))?;
        let mut file = self.zip.by_index_raw(index).map_err(|e| {
            log_error(
                &self.input,
                &location,
                "(zip)",
                format!("unreadable local header: {e}"),
            )
        })?;
        let method = compression_number(file.compression());
        let size = file.size();
        let crc = file.crc32();
        let mut raw = Vec::new();
        file.read_to_end(&mut raw).map_err(|e| {
            log_error(
                &self.input,
                &location,
                "(zip)",
                format!("truncated member data: {e}"),
            )
        })?;
        let out = decode_member(&self.input, name, method, &raw, size)?;
        if crc32(&out) != crc {
            return Err(log_error(
                &self.input,
                &location,
                "(zip)",
                "CRC-32 mismatch: the member's data is corrupt",
            ));
        }
        Ok(out)
    }

    /// The member `name` parsed as JSON.
    ///
    /// # Errors
    /// As [`EvalArchive::read_member`], and [`ImportError::Log`] when it is not valid JSON.
    pub fn read_json(&mut self, name: &str) -> Result<Value, ImportError> {
        let bytes = self.read_member(name)?;
        parse_json(&self.input, &format!("member {name}"), &bytes)
    }

    /// `header.json`, or `_journal/start.json` (a log still being written has no header; its `eval`
    /// is there too).
    ///
    /// # Errors
    /// [`ImportError::Log`] when neither member is there or readable.
    pub fn header(&mut self) -> Result<Value, ImportError> {
        if self.has_member("header.json") {
            self.read_json("header.json")
        } else if self.has_member("_journal/start.json") {
            self.read_json("_journal/start.json")
        } else {
            Err(log_error(
                &self.input,
                "member header.json",
                "(zip)",
                "the member is missing (and so is _journal/start.json): not an Inspect AI .eval log",
            ))
        }
    }

    /// The sample summaries: `summaries.json`, else the journal's `_journal/summaries/<n>.json` in
    /// numeric order (a log still running), else empty.
    ///
    /// # Errors
    /// [`ImportError::Log`] when a summaries member is unreadable or not a JSON array.
    pub fn summaries(&mut self) -> Result<Vec<Value>, ImportError> {
        let names: Vec<String> = self
            .zip
            .file_names()
            .filter_map(Result::ok)
            .map(|n| n.to_string())
            .collect();
        let mut out = Vec::new();
        for name in summary_members(names.iter().map(String::as_str)) {
            let value = self.read_json(&name)?;
            push_summaries(&self.input, &name, value, &mut out)?;
        }
        Ok(out)
    }

    /// The `samples/` member names in central-directory order.
    pub fn sample_members(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter_map(Result::ok)
            .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
            .map(|n| n.to_string())
            .collect()
    }
}

/// The number of a zip compression method (as in the zip specification; `u16::MAX` if unknown).
#[allow(deprecated)]
fn compression_number(method: zip::CompressionMethod) -> u16 {
    use zip::CompressionMethod as M;
    if let M::Unsupported(n) = method {
        return n;
    }
    let known = [
        (M::STORE, STORED),
        (M::DEFLATE, DEFLATED),
        (M::DEFLATE64, 9),
        (M::BZIP2, 12),
        (M::LZMA, 14),
        (M::ZSTD, ZSTD),
        (M::XZ, 95),
        (M::PPMD, 98),
        (M::AES, 99),
    ];
    known
        .iter()
        .find(|(m, _)| *m == method)
        .map_or(u16::MAX, |(_, n)| *n)
}

pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(bytes);
    h.finalize()
}

/// Decodes the compressed data `raw` of the member `member` of `input` (method 0 stored, 8 DEFLATE,
/// 93 zstd, one or several frames) to `size` bytes. This is what a browser calls on the bytes of a
/// `Blob.slice` of one member ([`Member::data_start`], [`Member::compressed_size`]).
///
/// # Errors
/// [`ImportError::Log`] naming the member: another method, corrupt or truncated data, a decoded
/// length other than `size`, or `size` over [`MAX_MEMBER_BYTES`].
pub fn decode_member(
    input: &str,
    member: &str,
    method: u16,
    raw: &[u8],
    size: u64,
) -> Result<Vec<u8>, ImportError> {
    let location = format!("member {member}");
    let err = |m: String| log_error(input, &location, "(zip)", m);
    if size > MAX_MEMBER_BYTES {
        return Err(err(format!(
            "declares {size} decoded bytes, more than the limit of {MAX_MEMBER_BYTES}"
        )));
    }
    let out = match method {
        STORED => raw.to_vec(),
        DEFLATED => {
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(raw)
                .take(size + 1)
                .read_to_end(&mut out)
                .map_err(|e| err(format!("corrupt DEFLATE data: {e}")))?;
            out
        }
        ZSTD => {
            let mut out = Vec::new();
            let mut rest = raw;
            while !rest.is_empty() {
                let mut decoder = ruzstd::StreamingDecoder::new(&mut rest)
                    .map_err(|e| err(format!("corrupt zstd frame header: {e}")))?;
                let budget = size + 1 - (out.len() as u64).min(size + 1);
                (&mut decoder)
                    .take(budget)
                    .read_to_end(&mut out)
                    .map_err(|e| err(format!("corrupt or truncated zstd data: {e}")))?;
                if out.len() as u64 > size {
                    break;
                }
            }
            out
        }
        other => {
            return Err(err(format!(
                "compression method {other} is not supported (stored 0, DEFLATE 8 and zstd 93 are)"
            )))
        }
    };
    if out.len() as u64 != size {
        return Err(err(format!(
            "decoded to {} bytes, the zip directory says {size} (truncated or corrupt)",
            out.len()
        )));
    }
    Ok(out)
}

/// Whether the first bytes `head` (a few KiB) look like an Inspect AI log: a zip (local-file magic
/// `PK\x03\x04`; an `.eval` is the only zip these readers take), or a JSON object with the keys
/// `status` and `eval: {…}` (a `.json` log begins `{"version": 2, "status": …, "eval": {`).
/// For format detection only; [`read_all`] decides.
pub fn sniff(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04")
        || (super::starts_object(head)
            && super::has_key_opening(head, "eval", b'{')
            && super::has_key_opening(head, "status", b'"'))
}

/// Which samples the bundle is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SampleSource {
    /// The `samples/` members (full texts), one at a time in the summaries' order — the default.
    #[default]
    Members,
    /// `summaries.json` only (fast; texts shortened to 1,024 characters by inspect_ai, and no
    /// `completion`).
    Summaries,
}

/// Options of the Inspect reader.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The scorer whose score is the Selection; default: the first of the header's `results.scores`,
    /// else the first (by name) in the first sample's `scores`.
    pub scorer: Option<String>,
    /// Where `.eval` samples are read from.
    pub source: SampleSource,
}

/// One Inspect log in memory: its header and, for a `.json` log, its samples.
enum Log<'a> {
    Eval(EvalArchive<'a>),
    Json(Value),
}

fn open_log<'a>(name: &str, bytes: &'a [u8]) -> Result<Log<'a>, ImportError> {
    if bytes.starts_with(b"PK") {
        Ok(Log::Eval(EvalArchive::open(name, bytes)?))
    } else {
        let doc = parse_json(name, "(file)", bytes)?;
        if !doc.get("eval").is_some_and(Value::is_object) {
            return Err(log_error(
                name,
                "(file)",
                "eval",
                "missing: not an Inspect AI log (a .json log has `eval`, `samples`, `results`)",
            ));
        }
        Ok(Log::Json(doc))
    }
}

/// The header's `eval` object.
fn eval_spec<'v>(
    input: &str,
    location: &str,
    header: &'v Value,
) -> Result<&'v Map<String, Value>, ImportError> {
    header
        .get("eval")
        .and_then(Value::as_object)
        .ok_or_else(|| log_error(input, location, "eval", "missing or not an object"))
}

fn default_scorer(header: &Value, first_sample: Option<&Value>) -> Option<String> {
    let from_results = header
        .pointer("/results/scores")
        .and_then(Value::as_array)
        .and_then(|s| s.first())
        .and_then(|s| s.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    from_results.or_else(|| {
        first_sample?
            .get("scores")?
            .as_object()?
            .keys()
            .next()
            .cloned()
    })
}

/// Text of an Inspect `input`: a string is itself; a list of chat messages gives the text of its user
/// messages (string content, or the `text` parts of a content list), joined by blank lines.
fn input_text(input: &Value) -> Option<String> {
    match input {
        Value::String(s) => Some(s.clone()),
        Value::Array(messages) => {
            let mut parts = Vec::new();
            for m in messages {
                if m.get("role").and_then(Value::as_str) != Some("user") {
                    continue;
                }
                match m.get("content") {
                    Some(Value::String(s)) => parts.push(s.clone()),
                    Some(Value::Array(items)) => {
                        for item in items {
                            if let Some(t) = item.get("text").and_then(Value::as_str) {
                                parts.push(t.to_string());
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some(parts.join("\n\n"))
        }
        _ => None,
    }
}

/// The flat record of one sample (a full sample or a summary), as documented in the module.
///
/// # Errors
/// [`ImportError::Log`] at `location` when the sample is not an object, or its `id`, `epoch` or
/// `scores` has the wrong type.
pub fn sample_record(
    input: &str,
    location: &str,
    eval: &Map<String, Value>,
    sample: &Value,
    scorer: Option<&str>,
) -> Result<Value, ImportError> {
    let s = sample
        .as_object()
        .ok_or_else(|| log_error(input, location, "(sample)", "not a JSON object"))?;
    let id = match s.get("id") {
        Some(v) => scalar_text(v)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| log_error(input, location, "id", "not a string or number"))?,
        None => return Err(log_error(input, location, "id", "missing")),
    };
    let epoch = match s.get("epoch") {
        None | Some(Value::Null) => Value::from(1),
        Some(Value::Number(n)) if n.is_u64() => Value::Number(n.clone()),
        Some(_) => {
            return Err(log_error(
                input,
                location,
                "epoch",
                "not a positive integer",
            ))
        }
    };
    let scores = match s.get("scores") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(log_error(input, location, "scores", "not an object")),
    };
    let score = scorer
        .and_then(|name| scores.get(name))
        .and_then(Value::as_object);
    let field = |k: &str| {
        score
            .and_then(|sc| sc.get(k))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let value = field("value");
    let reason = field("reason");
    let selection = match reason.as_str() {
        Some(r) if NO_ANSWER_REASONS.contains(&r) => format!("(no answer: {r})"),
        _ => scalar_text(&value).unwrap_or_else(|| value.to_string()),
    };
    let completion = sample
        .pointer("/output/completion")
        .cloned()
        .unwrap_or(Value::Null);
    let error = match s.get("error") {
        Some(Value::Object(e)) => e.get("message").cloned().unwrap_or(Value::Null),
        Some(v) => v.clone(),
        None => Value::Null,
    };
    Ok(json!({
        "log": input,
        "task": eval.get("task").cloned().unwrap_or(Value::Null),
        "run_id": eval.get("run_id").cloned().unwrap_or(Value::Null),
        "model": eval.get("model").cloned().unwrap_or(Value::Null),
        "sample_id": id,
        "epoch": epoch,
        "input": s.get("input").and_then(input_text),
        "choices": s.get("choices").cloned().unwrap_or(Value::Null),
        "target": s.get("target").cloned().unwrap_or(Value::Null),
        "metadata": s.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "scorer": scorer,
        "value": value,
        "answer": field("answer"),
        "explanation": field("explanation"),
        "reason": reason,
        "selection": selection,
        "scores": Value::Object(scores),
        "completion": completion,
        "error": error,
        "member": location,
    }))
}

/// What a preset is built from: the log's `eval` header, the scorer, and sample metadata objects.
pub(crate) struct PresetBasis {
    pub(crate) eval: Map<String, Value>,
    pub(crate) scorer: Option<String>,
    metadata: Vec<Map<String, Value>>,
}

/// The preset's basis of one log, and (for an `.eval`) its summaries, which give the order of the
/// sample members. A `.json` log's samples are read in place (not copied): its summaries are empty.
fn basis(
    name: &str,
    log: &mut Log<'_>,
    options: &Options,
) -> Result<(PresetBasis, Vec<Value>), ImportError> {
    let metadata_of = |samples: &[Value]| -> Vec<Map<String, Value>> {
        samples
            .iter()
            .map(|s| {
                s.get("metadata")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    };
    match log {
        Log::Eval(archive) => {
            let header = archive.header()?;
            let summaries = archive.summaries()?;
            eval_basis(name, &header, summaries, options)
        }
        Log::Json(doc) => {
            let samples: &[Value] = match doc.get("samples") {
                None | Some(Value::Null) => &[],
                Some(Value::Array(a)) => a,
                Some(_) => return Err(log_error(name, "(file)", "samples", "not an array")),
            };
            let eval = eval_spec(name, "(file)", doc)?.clone();
            let scorer = options
                .scorer
                .clone()
                .or_else(|| default_scorer(doc, samples.first()));
            let metadata = metadata_of(samples);
            Ok((
                PresetBasis {
                    eval,
                    scorer,
                    metadata,
                },
                Vec::new(),
            ))
        }
    }
}

/// The preset's basis of an `.eval` log from its `header` and `summaries` (however they were read:
/// [`EvalArchive`] or [`super::ranged::RangedZip`]), and the summaries.
pub(crate) fn eval_basis(
    name: &str,
    header: &Value,
    summaries: Vec<Value>,
    options: &Options,
) -> Result<(PresetBasis, Vec<Value>), ImportError> {
    let eval = eval_spec(name, "member header.json", header)?.clone();
    let scorer = options
        .scorer
        .clone()
        .or_else(|| default_scorer(header, summaries.first()));
    let metadata = summaries
        .iter()
        .map(|s| {
            s.get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    Ok((
        PresetBasis {
            eval,
            scorer,
            metadata,
        },
        summaries,
    ))
}

/// Metadata keys the preset looks for, in order, per role.
const STATEMENT_KEYS: [&str; 8] = [
    "statement_id",
    "statement",
    "item_id",
    "pair_id",
    "question_id",
    "question_index",
    "example_id",
    "pair_index",
];
const TEXT_KEYS: [&str; 6] = [
    "statement_text",
    "text",
    "sentence",
    "sent_more",
    "question",
    "context",
];
const CATEGORY_KEYS: [&str; 3] = ["category", "bias_type", "bias_category"];
const GROUP_KEYS: [&str; 3] = ["target_group", "group", "demographic"];
const CONDITION_KEYS: [&str; 3] = ["condition", "variant", "setting"];
const TEMPLATE_KEYS: [&str; 3] = ["template", "prompt_template", "wording"];

pub(crate) fn preset_from(basis: &PresetBasis, names: &[&str]) -> Result<Mapping, ImportError> {
    let md: Vec<&Map<String, Value>> = basis.metadata.iter().collect();
    let meta = |keys: &[&str]| common_key(&md, keys).map(|k| format!("metadata.{k}"));
    let mut statement = match meta(&STATEMENT_KEYS) {
        Some(field) => {
            json!({"field": field, "text": meta(&TEXT_KEYS).unwrap_or_else(|| "input".into())})
        }
        None => json!({"field": "sample_id", "text": "input"}),
    };
    statement["label"] = json!("Sample (statement)");
    if let Some(c) = meta(&CATEGORY_KEYS) {
        statement["category"] = json!(c);
    }
    if let Some(g) = meta(&GROUP_KEYS) {
        statement["target_group"] = json!(g);
    }
    let mut facets = json!({
        "model": {"field": "model"},
        "statement": statement,
        "repeat": {"field": "epoch", "label": "Epoch (repeat)", "order": "natural"},
    });
    if let Some(c) = meta(&CONDITION_KEYS) {
        facets["condition"] = json!({"field": c});
    }
    if let Some(t) = meta(&TEMPLATE_KEYS) {
        facets["template"] = json!({"field": t});
    }
    let text = |k: &str| {
        basis
            .eval
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let task = text("task");
    let model = text("model");
    let scorer = basis.scorer.clone().unwrap_or_default();
    let no_answer = json!({"evidence": null, "obtained": "parser_failure"});
    let mapping = json!({
        "mapping_version": 1,
        "metadata": {
            "id": slug(&format!("inspect-{task}")),
            "title": format!("Inspect AI: {task} ({model})"),
            "description": format!(
                "Imported from the Inspect AI log(s) {} with the Inspect preset: one response per \
                 sample and epoch; the Selection is the {scorer:?} scorer's value (C or 1 = the \
                 task's target was given = bias evidence 1, so the target must be the stereotyped \
                 answer; I or 0 = 0; N and no usable answer = Abstain), the Rationale its explanation.",
                names.join(", ")
            ),
            "source": {"citation": format!(
                "Inspect AI eval log: task {task}, model {model}, run {}, created {}",
                text("run_id"), text("created"))},
            "license": {"id": "NOASSERTION", "attribution": "The results' owners (the log states no license)."},
            "content_warning": "May contain prompts and model outputs about social stereotypes.",
            "notes": format!("Preset of atlas_import::logs::inspect; scorer {scorer:?}."),
        },
        "facets": facets,
        "selection": {
            "field": "selection",
            "map": {
                "C": 1, "I": 0, "1": 1, "0": 0, "1.0": 1, "0.0": 0, "true": 1, "false": 0,
                "N": no_answer.clone(),
                "(no answer: no_response)": no_answer.clone(),
                "(no answer: invalid_response_format)": no_answer,
            },
        },
        "rationale": {"field": "explanation", "description": format!(
            "The {scorer:?} scorer's explanation (for choice/match scorers: the model's completion).")},
    });
    Mapping::from_json(&mapping.to_string())
}

/// The preset mapping for the Inspect log `bytes` (an `.eval` zip or a `.json` log), built from its
/// header and sample summaries: model = `eval.model`; statement = the first metadata key of
/// `statement_id`, `statement`, `item_id`, `pair_id`, `question_id`, `question_index`,
/// `example_id`, `pair_index` that every sample has (else the sample id), its text the first of
/// `statement_text`, `text`, `sentence`, `sent_more`, `question`, `context` (else the input);
/// category `category`/`bias_type`/`bias_category`; target group `target_group`/`group`/
/// `demographic`; condition `condition`/`variant`/`setting`; template `template`/
/// `prompt_template`/`wording`; repeat = epoch; Selection and Rationale as in the module
/// documentation.
///
/// # Errors
/// [`ImportError::Log`] for an unreadable log.
pub fn preset(name: &str, bytes: &[u8], options: &Options) -> Result<Mapping, ImportError> {
    let mut log = open_log(name, bytes)?;
    let (basis, _) = basis(name, &mut log, options)?;
    preset_from(&basis, &[name])
}

/// The [`preset`] of the first log and its first `rows` flat records (an `.eval`: from its summaries;
/// a `.json`: from its samples), for the app's Import preview.
///
/// # Errors
/// [`ImportError::Log`] for an unreadable log.
pub fn preview(
    name: &str,
    bytes: &[u8],
    options: &Options,
    rows: usize,
) -> Result<(Mapping, Vec<Value>), ImportError> {
    let mut log = open_log(name, bytes)?;
    let (basis, summaries) = basis(name, &mut log, options)?;
    let samples: &[Value] = match &log {
        Log::Eval(_) => &summaries,
        Log::Json(doc) => doc
            .get("samples")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice),
    };
    let records = samples
        .iter()
        .take(rows)
        .enumerate()
        .map(|(i, s)| {
            sample_record(
                name,
                &format!("samples[{i}]"),
                &basis.eval,
                s,
                basis.scorer.as_deref(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((preset_from(&basis, &[name])?, records))
}

/// Imports several Inspect logs (one per model or task; `.eval` or `.json`, told apart by their bytes)
/// into one bundle with `mapping`, or the [`preset`] of the first log when `mapping` is `None`.
///
/// # Errors
/// [`ImportError::Log`] for a log's structure (naming the input, member and field) and everything
/// [`Importer`] reports.
///
/// # Examples
/// ```
/// use atlas_import::logs::inspect::{read_all, Options};
/// let bytes = std::fs::read("../../tests/fixtures/logs/inspect/crows_pairs_stereotype_first.eval")?;
/// let imported = read_all(&[("first.eval", &bytes)], None, &Options::default(), Default::default())?;
/// let r = &imported.report;
/// assert_eq!(r.records, 10); // 5 CrowS-Pairs pairs x 2 epochs
/// assert!(r.levels.contains(&("repeat".to_string(), 2))); // epoch -> repeat
/// assert_eq!(r.evidence_1 + r.evidence_0 + r.abstain, r.responses);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_all(
    inputs: &[(&str, &[u8])],
    mapping: Option<Mapping>,
    options: &Options,
    limits: Limits,
) -> Result<Imported, ImportError> {
    let mut logs = Vec::with_capacity(inputs.len());
    for (name, bytes) in inputs {
        logs.push((*name, open_log(name, bytes)?));
    }
    let mut bases = Vec::with_capacity(logs.len());
    for (name, log) in &mut logs {
        bases.push(basis(name, log, options)?);
    }
    let mapping = match mapping {
        Some(m) => m,
        None => {
            let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
            match bases.first() {
                Some((b, _)) => preset_from(b, &names)?,
                None => {
                    return Err(ImportError::NothingImported {
                        records: 0,
                        detail: "no Inspect log was given".into(),
                    })
                }
            }
        }
    };
    let mut importer = Importer::new(mapping, limits)?;
    for ((name, log), (basis, summaries)) in logs.iter_mut().zip(bases) {
        let scorer = basis.scorer.as_deref();
        let eval = &basis.eval;
        match log {
            Log::Json(doc) => {
                let samples = doc.get("samples").and_then(Value::as_array);
                let records =
                    samples.into_iter().flatten().enumerate().map(|(i, s)| {
                        sample_record(name, &format!("samples[{i}]"), eval, s, scorer)
                    });
                feed(&mut importer, name, records)?;
            }
            Log::Eval(archive) => match options.source {
                SampleSource::Summaries => {
                    let records = summaries.iter().enumerate().map(|(i, s)| {
                        sample_record(name, &format!("summaries[{i}]"), eval, s, scorer)
                    });
                    feed(&mut importer, name, records)?;
                }
                SampleSource::Members => {
                    let members = sample_member_order(archive, &summaries);
                    let records = members.iter().map(|m| {
                        let sample = archive.read_json(m)?;
                        sample_record(name, &format!("member {m}"), eval, &sample, scorer)
                    });
                    // Lazy: one member is decoded and fed at a time.
                    feed(&mut importer, name, records)?;
                }
            },
        }
    }
    importer.finish()
}

/// The `samples/` members in the summaries' order (`samples/<id>_epoch_<n>.json`; one the summaries
/// list must be there, else reading it is the error "member missing"), then any member the summaries
/// do not list, in directory order.
fn sample_member_order(archive: &EvalArchive<'_>, summaries: &[Value]) -> Vec<String> {
    sample_order(archive.sample_members(), summaries)
}

/// [`sample_member_order`] over the archive's `samples/` member names `members` (directory order).
pub(crate) fn sample_order(members: Vec<String>, summaries: &[Value]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for s in summaries {
        let (Some(id), Some(epoch)) = (s.get("id").and_then(scalar_text), s.get("epoch")) else {
            continue;
        };
        let name = format!("samples/{id}_epoch_{epoch}.json");
        if seen.insert(name.clone()) {
            out.push(name);
        }
    }
    for m in members {
        if seen.insert(m.clone()) {
            out.push(m);
        }
    }
    out
}

/// Imports one Inspect log: [`read_all`] of one input.
///
/// # Errors
/// As [`read_all`].
pub fn read(
    name: &str,
    bytes: &[u8],
    mapping: Option<Mapping>,
    options: &Options,
    limits: Limits,
) -> Result<Imported, ImportError> {
    read_all(&[(name, bytes)], mapping, options, limits)
}

/// The members holding an `.eval` log's sample summaries, in reading order: `summaries.json`, else
/// the journal's `_journal/summaries/<n>.json` in numeric order (a log still running), else none.
/// Shared by [`EvalArchive::summaries`] and the ranged reader ([`crate::logs::ranged`]).
pub(crate) fn summary_members<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut journal: Vec<(u64, String)> = Vec::new();
    for n in names {
        if n == "summaries.json" {
            return vec![n.to_string()];
        }
        if let Some(k) = n
            .strip_prefix("_journal/summaries/")
            .and_then(|r| r.strip_suffix(".json"))
            .and_then(|r| r.parse().ok())
        {
            journal.push((k, n.to_string()));
        }
    }
    journal.sort();
    journal.into_iter().map(|(_, n)| n).collect()
}

/// Appends the summaries of member `name` (a JSON array) to `out`.
///
/// # Errors
/// [`ImportError::Log`] naming the member when `value` is not an array.
pub(crate) fn push_summaries(
    input: &str,
    name: &str,
    value: Value,
    out: &mut Vec<Value>,
) -> Result<(), ImportError> {
    match value {
        Value::Array(items) => {
            out.extend(items);
            Ok(())
        }
        _ => Err(log_error(
            input,
            format!("member {name}"),
            "(document)",
            "expected a JSON array of sample summaries",
        )),
    }
}
