//! MedQA items (seed `001_…` §3.2) and their seeded selection.
//!
//! The reader takes the JSON Lines of MedQA's USMLE test split as distributed in
//! `medqa_us_test/phrases_no_exclude_test.jsonl` (Jin et al. 2021; MIT): one object per line with
//! `question` (the vignette and its question), `options` (`{"A": …, "B": …, …}`), `answer_idx` (the gold
//! letter) and `meta_info` (the exam step, `"step1"` or `"step2&3"`); other members (`answer`,
//! `metamap_phrases`) are ignored. Blank lines are skipped.
//!
//! Item ids are `medqa_{i}` with `i` the 0-based line index in the file, the naming of the seed's
//! records (Table 1: "medqa_1027").
//!
//! **Selection** ([`select_items`]): seed §3.2 "The question indices were shuffled using a fixed seed
//! of 42, and the first 150 questions were selected". Here: the first `n` positions of a Fisher–Yates
//! shuffle of `0..count` run front to back, drawn from the project's portable ChaCha8 stream
//! ([`atlas_core::DrawStream::new`]`(seed)`, stream 0, through
//! [`atlas_core::DrawStream::sample_without_replacement`]): for `i` in `0..n`, `j = i +
//! index(count − i)` (Lemire's unbiased multiply-and-reject on `u32` words), swap `i` and `j`, take
//! position `i`. The result is in draw order (the run order). The same seed gives the same items on
//! every target (x86_64, wasm32) and can be recomputed independently (`tests/reference/rank_reference.py`,
//! `Stream(seed).sample_without_replacement(count, n)`). The seed's own shuffle (Python's
//! `random.shuffle`) cannot be reproduced from the paper, so the indices differ from the seed's.

use std::collections::BTreeMap;

use atlas_core::DrawStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One MedQA question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MedQaItem {
    /// `medqa_{i}`, `i` = 0-based line index in the source file (module docs).
    pub id: String,
    /// Where the item came from, e.g. `phrases_no_exclude_test.jsonl:1028` (file name and 1-based
    /// line); the bundle's `source_id`.
    pub source_id: String,
    /// The vignette and its question (`question`), unchanged.
    pub question: String,
    /// Option letter (`A`, `B`, …: single upper-case letters, consecutive from `A`) → option text, in
    /// letter order.
    pub options: BTreeMap<String, String>,
    /// The gold letter (`answer_idx`), `None` when the line has none.
    pub answer: Option<String>,
    /// The exam step (`meta_info`, e.g. `"step1"`, `"step2&3"`), `None` when absent.
    pub step: Option<String>,
}

/// Why MedQA lines cannot be read, or items not selected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MedQaError {
    /// A line is not a JSON object.
    #[error("line {line}: not a JSON object: {message}")]
    Json {
        /// 1-based line number.
        line: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// A field is missing or wrong.
    #[error("line {line}: field `{field}`: {message}")]
    Field {
        /// 1-based line number.
        line: usize,
        /// The field path, e.g. `options.C`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The text holds no item.
    #[error("no MedQA item in the input (every line is blank)")]
    Empty,
    /// More items asked than there are.
    #[error("cannot select {n} items: the input has {available}")]
    TooMany {
        /// Asked.
        n: usize,
        /// Available.
        available: usize,
    },
    /// `n` is zero.
    #[error("the number of items to select must be at least 1")]
    ZeroItems,
}

fn field(line: usize, field: &str, message: impl Into<String>) -> MedQaError {
    MedQaError::Field {
        line,
        field: field.to_string(),
        message: message.into(),
    }
}

/// Reads one JSON line (1-based `line`, 0-based item index `line − 1`) of `source` (the file name, for
/// [`MedQaItem::source_id`]).
///
/// # Errors
/// [`MedQaError::Json`] when the line is not a JSON object; [`MedQaError::Field`] naming the line and
/// the field when `question` is missing, not a string or blank; `options` is missing, not an object,
/// has fewer than 2 entries, a key that is not a single upper-case letter, letters not consecutive from
/// `A`, or a value that is not a non-blank string; `answer_idx` is present but not a string naming one
/// of the options; `meta_info` is present but not a string.
pub fn parse_medqa_line(line: usize, text: &str, source: &str) -> Result<MedQaItem, MedQaError> {
    let value: Value = serde_json::from_str(text).map_err(|e| MedQaError::Json {
        line,
        message: e.to_string(),
    })?;
    let Value::Object(obj) = value else {
        return Err(MedQaError::Json {
            line,
            message: "the line is JSON but not an object".into(),
        });
    };
    let question = match obj.get("question") {
        Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
        Some(Value::String(_)) => return Err(field(line, "question", "is blank")),
        Some(_) => return Err(field(line, "question", "must be a string")),
        None => return Err(field(line, "question", "is missing")),
    };
    let Some(options_value) = obj.get("options") else {
        return Err(field(line, "options", "is missing"));
    };
    let Value::Object(raw_options) = options_value else {
        return Err(field(
            line,
            "options",
            "must be an object of option letter → text",
        ));
    };
    let mut options = BTreeMap::new();
    for (letter, text) in raw_options {
        let at = format!("options.{letter}");
        let mut chars = letter.chars();
        let single_upper =
            matches!((chars.next(), chars.next()), (Some(c), None) if c.is_ascii_uppercase());
        if !single_upper {
            return Err(field(
                line,
                &at,
                "option keys must be single upper-case letters (A, B, …)",
            ));
        }
        match text {
            Value::String(t) if !t.trim().is_empty() => {
                options.insert(letter.clone(), t.clone());
            }
            Value::String(_) => return Err(field(line, &at, "is blank")),
            _ => return Err(field(line, &at, "must be a string")),
        }
    }
    if options.len() < 2 {
        return Err(field(line, "options", "needs at least 2 options"));
    }
    for (k, letter) in options.keys().enumerate() {
        let expected = char::from(b'A' + k as u8);
        if !letter.starts_with(expected) {
            return Err(field(
                line,
                "options",
                format!(
                    "letters must be consecutive from A; {expected} is missing (found {})",
                    options.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    let answer = match obj.get("answer_idx") {
        None | Some(Value::Null) => None,
        Some(Value::String(a)) if options.contains_key(a) => Some(a.clone()),
        Some(Value::String(a)) => {
            return Err(field(
                line,
                "answer_idx",
                format!("{a:?} is not one of the option letters"),
            ))
        }
        Some(_) => return Err(field(line, "answer_idx", "must be a string (a letter)")),
    };
    let step = match obj.get("meta_info") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(field(line, "meta_info", "must be a string")),
    };
    Ok(MedQaItem {
        id: format!("medqa_{}", line.saturating_sub(1)),
        source_id: format!("{source}:{line}"),
        question,
        options,
        answer,
        step,
    })
}

/// Reads every non-blank line of a MedQA JSON Lines text (module docs). `source` names the file in
/// each item's [`MedQaItem::source_id`].
///
/// # Errors
/// The first line's [`MedQaError`] (with its line number); [`MedQaError::Empty`] when no line holds an
/// item.
pub fn read_medqa(text: &str, source: &str) -> Result<Vec<MedQaItem>, MedQaError> {
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        items.push(parse_medqa_line(i + 1, line, source)?);
    }
    if items.is_empty() {
        return Err(MedQaError::Empty);
    }
    Ok(items)
}

/// `n` distinct indices into `0..count`, in draw order, from `seed` (module docs, "Selection").
///
/// # Errors
/// [`MedQaError::ZeroItems`] for `n = 0`; [`MedQaError::TooMany`] when `n > count` or `count`
/// exceeds `u32::MAX`.
pub fn select_items(count: usize, n: usize, seed: u64) -> Result<Vec<usize>, MedQaError> {
    if n == 0 {
        return Err(MedQaError::ZeroItems);
    }
    let too_many = || MedQaError::TooMany {
        n,
        available: count,
    };
    let count32 = u32::try_from(count).map_err(|_| too_many())?;
    let n32 = u32::try_from(n).map_err(|_| too_many())?;
    let draws = DrawStream::new(seed)
        .sample_without_replacement(count32, n32)
        .map_err(|_| too_many())?;
    Ok(draws.into_iter().map(|i| i as usize).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"question": "A 25-year-old woman comes to the physician because of double vision. Which is the cause?", "answer": "MLF", "options": {"A": "MLF lesion", "B": "Pontine tumor", "C": "Orbital fracture", "D": "Myasthenia"}, "meta_info": "step1", "answer_idx": "A", "metamap_phrases": ["x"]}"#;

    #[test]
    fn reads_a_medqa_line_with_id_options_gold_and_step() {
        let item = parse_medqa_line(1028, LINE, "phrases_no_exclude_test.jsonl").unwrap();
        assert_eq!(item.id, "medqa_1027");
        assert_eq!(item.source_id, "phrases_no_exclude_test.jsonl:1028");
        assert_eq!(item.options.len(), 4);
        assert_eq!(item.options["B"], "Pontine tumor");
        assert_eq!(item.answer.as_deref(), Some("A"));
        assert_eq!(item.step.as_deref(), Some("step1"));
    }

    #[test]
    fn medqa_errors_name_the_line_and_the_field() {
        let cases: [(&str, &str); 8] = [
            (r#"{"options": {"A": "x", "B": "y"}}"#, "line 7: field `question`: is missing"),
            (r#"{"question": 3, "options": {"A": "x", "B": "y"}}"#, "line 7: field `question`: must be a string"),
            (r#"{"question": "q"}"#, "line 7: field `options`: is missing"),
            (r#"{"question": "q", "options": {"A": "x", "b": "y"}}"#, "line 7: field `options.b`: option keys must be single upper-case letters (A, B, …)"),
            (r#"{"question": "q", "options": {"A": "x", "C": "y"}}"#, "line 7: field `options`: letters must be consecutive from A; B is missing (found A, C)"),
            (r#"{"question": "q", "options": {"A": "x", "B": 2}}"#, "line 7: field `options.B`: must be a string"),
            (r#"{"question": "q", "options": {"A": "x", "B": "y"}, "answer_idx": "E"}"#, "line 7: field `answer_idx`: \"E\" is not one of the option letters"),
            (r#"{"question": "q", "options": {"A": "x", "B": "y"}, "meta_info": 1}"#, "line 7: field `meta_info`: must be a string"),
        ];
        for (text, message) in cases {
            let e = parse_medqa_line(7, text, "f.jsonl").unwrap_err();
            assert_eq!(e.to_string(), message, "{text}");
        }
        let e = parse_medqa_line(3, "{not json", "f.jsonl").unwrap_err();
        assert!(
            e.to_string().starts_with("line 3: not a JSON object"),
            "{e}"
        );
    }

    #[test]
    fn read_medqa_skips_blank_lines_and_counts_lines_from_one() {
        let text = format!("{LINE}\n\n{LINE}\n");
        let items = read_medqa(&text, "f.jsonl").unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].id, "medqa_2");
        assert_eq!(read_medqa("\n \n", "f.jsonl"), Err(MedQaError::Empty));
        let bad = format!("{LINE}\n{{\"question\": \"q\"}}\n");
        assert!(read_medqa(&bad, "f.jsonl")
            .unwrap_err()
            .to_string()
            .starts_with("line 2:"));
    }

    /// Reference indices from an independent implementation of the stream (ChaCha8 keyed by rand_core's
    /// PCG32 expansion of the seed, Lemire index, front-to-back Fisher–Yates), checked against
    /// RFC 8439's ChaCha test vector:
    /// `cd tests/reference && python3 -c "from rank_reference import Stream; print(Stream(42).sample_without_replacement(1273, 20))"`
    #[test]
    fn selection_matches_the_independent_chacha8_reference() {
        let got = select_items(1273, 20, 42).unwrap();
        assert_eq!(got, REFERENCE_1273_20_SEED42.to_vec());
        // Distinct and in range.
        let mut sorted = got.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 20);
        assert!(got.iter().all(|&i| i < 1273));
    }

    const REFERENCE_1273_20_SEED42: [usize; 20] = [
        285, 868, 188, 1209, 984, 547, 441, 801, 940, 373, 820, 200, 408, 401, 220, 1026, 805, 985,
        1053, 318,
    ];

    #[test]
    fn selection_refuses_zero_and_too_many() {
        assert_eq!(select_items(5, 0, 1), Err(MedQaError::ZeroItems));
        assert_eq!(
            select_items(5, 6, 1),
            Err(MedQaError::TooMany { n: 6, available: 5 })
        );
        assert_eq!(select_items(5, 5, 1).unwrap().len(), 5);
    }
}
