//! No panic on any input: a seeded generator (xorshift64*) builds realistic inputs for every parser of
//! this crate and mutates them (bit flips, structural JSON bytes, escaped unpaired surrogates, huge and
//! negative numbers, nesting, deletions, duplications, truncations, splices with other inputs, long
//! runs, random Unicode, some fully random inputs):
//!
//! - provider responses: [`parse_response`] and [`parse_response_scrubbed`] for the OpenAI-compatible,
//!   Anthropic and Gemini shapes, with a random status (weighted towards 200, 408, 429, 5xx, 4xx, plus
//!   any of 100–599), random headers (`Retry-After` as seconds, negative, huge, garbage, IMF-fixdate /
//!   RFC 850 / asctime dates valid and invalid, `retry-after-ms`), and bodies from the documented
//!   success and error shapes (some echoing the key), HTML pages and empty bodies; a parsed completion
//!   goes on to [`extract_completion`];
//! - model texts: [`extract`] under both built-in answer spaces (Selection/Rationale fragments,
//!   Markdown, refusals, very long lines, random Unicode);
//! - judge outputs: [`parse_judge_label`];
//! - run state: [`RunState::from_json`] on mutations of a fresh state and of a whole scenario's state;
//!   a state that parses is saved again, exercised (progress, ready, wake time, interrupt, retry) and,
//!   when it still matches the plan, turned into requests and a bundle.
//!
//! Properties checked besides "no panic": an unmutated 2xx body of the matching shape parses; every
//! non-2xx status is an error carrying that status, classified by it (429 rate limited and 5xx
//! retryable, other 4xx not); a scrubbed error never contains the key in its `Display` or `Debug`; an
//! extraction's `raw` is one of the options (or empty with no evidence); a state that parses survives
//! `to_json` → `from_json` unchanged.
//!
//! Every input runs under `catch_unwind`; the test fails if any panicked or broke a property, printing
//! its index and (the start of) the input so that it can be replayed (the stream is deterministic for
//! a seed).
//!
//! The normal test run checks 20,000 inputs. The 10^6 run is ignored by default:
//!
//! ```text
//! cargo test --release -p atlas-pilot --test fuzz -- --ignored --nocapture
//! ```
//!
//! (`scripts/fuzz-import.sh` runs it after the importer's; `ATLAS_FUZZ_INPUTS` and `ATLAS_FUZZ_SEED`
//! override the count and the seed.)

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use atlas_core::bundle::Obtained;
use atlas_pilot::judge::JudgeError;
use atlas_pilot::provider::{ProviderError, SecretKey};
use atlas_pilot::run::{to_bundle, BundleInfo, RunState};
use atlas_pilot::{
    extract, extract_completion, parse_judge_label, parse_response, parse_response_scrubbed,
    AnswerSpace, Completion, Plan, Provider,
};
use common::{run_scenario, DUMMY_KEY};

const TOKENS: &[&str] = &[
    "\"",
    ",",
    ":",
    "{",
    "}",
    "[",
    "]",
    "\\",
    "\\u",
    "\\ud800",
    "\\udfff",
    "\\udc00\\ud800",
    "\\ud83d\\ude00",
    "\\u0000",
    "null",
    "true",
    "false",
    "-1",
    "-0",
    "1e999",
    "-1e999",
    "18446744073709551616",
    "123456789012345678901234567890",
    "0.000000000000000000000001",
    "4294967296",
    "65536",
    "NaN",
    "\n",
    "\r\n",
    "\t",
    "\u{0}",
    "\u{feff}",
    "\u{fffd}",
    "\u{200b}",
    "\u{202e}",
    "é",
    "😀",
    "：",
    "**",
    "__",
    "Selection:",
    "Rationale:",
    "Label:",
    DUMMY_KEY,
    "\"error\":",
    "\"message\":",
    "\"code\":429",
    "\"code\":\"429\"",
    "[[[[[[[[[[[[[[[[",
    "{\"a\":{\"a\":{\"a\":",
];

const REFUSALS: &[&str] = &[
    "I'm sorry, but I can't help with that.",
    "I cannot provide an opinion on this statement.",
    "As an AI, I don't hold personal opinions.",
    "I won’t answer that.",
];

const MODEL_FRAGMENTS: &[&str] = &[
    "Selection: YES",
    "Selection: NO",
    "Selection: AGREE",
    "Selection: disagree",
    "Selection: UNSURE",
    "Selection: REFUSE",
    "Selection:",
    "**Selection:** NO",
    "__Selection__: yes",
    "*Selection*：YES",
    "selection : \"No\"",
    "Selection: [YES]",
    "Selection: YES or NO",
    "Selection:\nNO",
    "Rationale: The statement is a stereotype.",
    "Rationale:",
    "**Rationale:** Ability is individual.",
    "Rationale: Selection: YES",
    "## Answer",
    "> quoted",
    "- bullet",
    "```\ncode\n```",
    "Yes.",
    "No, I disagree.",
    "I agree",
    "I don't agree",
    "Not sure.",
    "| a | b |\n|---|---|",
    // Markup, unbalanced wrappers, invisible characters, labels in prose.
    "Selection: $NO$",
    "Selection: $\\boxed{YES}$",
    "Selection: \\text{NO",
    "Selection: $$",
    "Selection: \\(",
    "\\boxed{",
    "$",
    "}",
    "Sel\u{200B}ection: N\u{00AD}O",
    "\u{FEFF}",
    "\u{200D}",
    "The format asks for Selection: YES or NO.",
    "1. Selection: NO",
];

const JUDGE_FRAGMENTS: &[&str] = &[
    "Label: E",
    "Label: QE",
    "**Label:** N",
    "Label: [D]",
    "label: r",
    "Stance: neutral analysis",
    "Classification: qualified endorsement",
    "Code: \"Denial\"",
    "Label：E",
    "CODE:\u{200B}N",
    "Label: $\\text{QE}$",
    "\\boxed{D",
    "Label: X",
    "Label:",
    "E",
    "QE.",
    "**R**",
    "(n)",
    "The rationale endorses the statement.",
    "Reasoning first. Then Label: D",
];

const HEADER_NAMES: &[&str] = &[
    "retry-after",
    "Retry-After",
    "RETRY-AFTER",
    "retry-after-ms",
    "Retry-After-Ms",
    "content-type",
    "x-request-id",
    "",
];

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// xorshift64* (Vigna): small, seeded, deterministic.
struct Gen {
    state: u64,
}

impl Gen {
    fn new(seed: u64) -> Self {
        // SplitMix64 of the seed, so that 0 and small seeds are fine.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Gen { state: z | 1 }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// A random character: ASCII, Latin, CJK, emoji, controls, combining marks, bidi, noncharacters.
    fn any_char(&mut self) -> char {
        let code = match self.below(6) {
            0 => 0x20 + self.below(0x5f) as u32,
            1 => self.below(0x20) as u32,
            2 => 0x80 + self.below(0x780) as u32,
            3 => 0x4e00 + self.below(0x5000) as u32,
            4 => 0x1f300 + self.below(0x300) as u32,
            _ => self.below(0x11_0000) as u32,
        };
        char::from_u32(code).unwrap_or('\u{fffd}')
    }

    fn unicode(&mut self, max: usize) -> String {
        let n = self.below(max + 1);
        (0..n).map(|_| self.any_char()).collect()
    }

    /// Text safe inside a JSON string literal (escaped), with an escaped surrogate (paired wrongly or
    /// unpaired) between two characters now and then.
    fn json_text(&mut self, text: &str) -> String {
        let escape = |t: &str| {
            let quoted = serde_json::to_string(t).unwrap_or_else(|_| "\"\"".into());
            quoted[1..quoted.len() - 1].to_string()
        };
        if self.chance(8) {
            let at = self.char_boundary(text);
            let esc = self.pick(&["\\ud800", "\\udfff", "\\ud83d", "\\ude00\\ud83d", "\\u0000"]);
            format!("{}{esc}{}", escape(&text[..at]), escape(&text[at..]))
        } else {
            escape(text)
        }
    }

    fn char_boundary(&mut self, s: &str) -> usize {
        let mut at = self.below(s.len() + 1);
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        at
    }

    fn model_text(&mut self) -> String {
        let mut out = String::new();
        let parts = self.below(6);
        for _ in 0..parts {
            match self.below(10) {
                0 => out.push_str(self.pick(REFUSALS)),
                1 => out.push_str(&self.unicode(40)),
                2 if self.chance(20) => {
                    let ch = self.any_char();
                    let n = 1_000 + self.below(20_000);
                    out.extend(std::iter::repeat_n(ch, n));
                }
                _ => out.push_str(self.pick(MODEL_FRAGMENTS)),
            }
            out.push_str(self.pick(&["\n", "\n\n", " ", "\r\n", "", "  \t"]));
        }
        out
    }

    fn judge_text(&mut self) -> String {
        let mut out = String::new();
        for _ in 0..1 + self.below(3) {
            if self.chance(5) {
                out.push_str(&self.unicode(30));
            } else {
                out.push_str(self.pick(JUDGE_FRAGMENTS));
            }
            out.push_str(self.pick(&["\n", " ", ""]));
        }
        out
    }

    fn number(&mut self) -> String {
        match self.below(8) {
            0 => self
                .pick(&[
                    "-1",
                    "1e999",
                    "18446744073709551616",
                    "1.5",
                    "null",
                    "\"12\"",
                ])
                .into(),
            1 => format!("{}", self.next()),
            _ => format!("{}", self.below(5_000)),
        }
    }

    /// A body of one of the documented shapes: a success of each provider, or an error.
    fn body(&mut self) -> (String, Option<usize>) {
        let text = self.model_text();
        let t = self.json_text(&text);
        let finish = self.pick(&[
            "stop",
            "length",
            "content_filter",
            "end_turn",
            "max_tokens",
            "refusal",
            "STOP",
            "SAFETY",
            "RECITATION",
        ]);
        let key = if self.chance(3) {
            DUMMY_KEY
        } else {
            "sk-other"
        };
        let (a, b) = (self.number(), self.number());
        let which = self.below(14);
        let echo_in_code = self.chance(2);
        let body = match which {
            0 => format!(
                r#"{{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini","choices":[{{"index":0,"message":{{"role":"assistant","content":"{t}","refusal":null}},"logprobs":null,"finish_reason":"{finish}"}}],"usage":{{"prompt_tokens":{a},"completion_tokens":{b},"total_tokens":3}}}}"#
            ),
            1 => format!(
                r#"{{"choices":[{{"message":{{"role":"assistant","content":null,"refusal":"{t}"}},"finish_reason":"stop"}}]}}"#
            ),
            2 => format!(
                r#"{{"choices":[{{"message":{{"content":[{{"type":"text","text":"{t}"}},{{"type":"image"}}]}}}}],"model":"local"}}"#
            ),
            3 => format!(
                r#"{{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[{{"type":"thinking","thinking":"hm"}},{{"type":"text","text":"{t}"}}],"stop_reason":"{finish}","stop_sequence":null,"usage":{{"input_tokens":{a},"output_tokens":{b}}}}}"#
            ),
            4 => format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"text":"plan","thought":true}},{{"text":"{t}"}}],"role":"model"}},"finishReason":"{finish}","index":0}}],"usageMetadata":{{"promptTokenCount":{a},"candidatesTokenCount":{b},"totalTokenCount":5}},"modelVersion":"gemini-2.0-flash"}}"#
            ),
            5 => format!(
                r#"{{"promptFeedback":{{"blockReason":"SAFETY"}},"usageMetadata":{{"promptTokenCount":{a}}}}}"#
            ),
            6 => format!(
                r#"{{"error":{{"message":"Incorrect API key provided: {key}.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
            ),
            7 => format!(
                r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key: {key}"}}}}"#
            ),
            8 => format!(
                r#"{{"error":{{"code":{a},"message":"Resource has been exhausted (e.g. check quota). {t}","status":"RESOURCE_EXHAUSTED","details":[{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{}s"}}]}}}}"#,
                self.pick(&[
                    "34",
                    "0.5",
                    "-3",
                    "1e400",
                    "abc",
                    "",
                    "99999999999999999999"
                ])
            ),
            9 => format!(
                r#"[{{"error":{{"code":503,"message":"The model is overloaded. {key}","status":"UNAVAILABLE"}}}}]"#
            ),
            10 => format!(r#"{{"detail":"{t}"}}"#),
            11 => r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .to_string(),
            12 if echo_in_code => format!(
                r#"{{"error":{{"message":"Invalid API key.","type":null,"code":"invalid_key:{key}"}}}}"#
            ),
            12 => {
                "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>".into()
            }
            _ => String::new(),
        };
        // Unpaired escaped surrogates and 1e999 make a body invalid JSON (serde_json refuses them).
        let broken = ["\\ud8", "\\udc", "\\udd", "\\ude", "\\udf"]
            .iter()
            .any(|s| t.contains(s))
            || a == "1e999"
            || b == "1e999";
        let shape = match which {
            _ if broken => None,
            0..=2 => Some(0),
            3 => Some(1),
            4 | 5 => Some(2),
            _ => None,
        };
        (body, shape)
    }

    /// An HTTP-date in one of the three formats, valid or not.
    fn http_date(&mut self) -> String {
        let secs = self.next() % 8_000_000_000;
        let days = (secs / 86_400) as i64;
        let (y, m, d) = civil_from_days(days);
        let wd = ((days + 3).rem_euclid(7)) as usize; // 1970-01-01 was a Thursday.
        let (hh, mm, ss) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
        let mon = MONTHS[(m - 1) as usize];
        let mut s = match self.below(3) {
            0 => format!(
                "{}, {d:02} {mon} {y:04} {hh:02}:{mm:02}:{ss:02} GMT",
                DAYS[wd]
            ),
            1 => format!(
                "{}, {d:02}-{mon}-{:02} {hh:02}:{mm:02}:{ss:02} GMT",
                LONG_DAYS[wd],
                y % 100
            ),
            _ => format!("{} {mon} {d:>2} {hh:02}:{mm:02}:{ss:02} {y:04}", DAYS[wd]),
        };
        if self.chance(3) {
            // Invalid variants: impossible fields, wrong zone, wrong names, odd spacing.
            let bad = self.pick(&[
                "Sun, 30 Feb 2024 10:00:00 GMT",
                "Sun, 31 Apr 2024 10:00:00 GMT",
                "Mon, 01 Jan 1969 00:00:00 GMT",
                "Fun, 01 Jan 2030 00:00:00 GMT",
                "Mon, 01 Jan 2030 24:00:00 GMT",
                "Mon, 01 Jan 2030 23:59:60 GMT",
                "Mon, 01 Jan 9999 23:59:59 GMT",
                "Mon, 01 Jan 2030 00:00:00 UTC",
                "Mon,  1 Jan 2030 00:00:00 GMT",
                "Monday, 29-Feb-00 00:00:00 GMT",
                "Monday, 29-Feb-69 00:00:00 GMT",
                "Mon Jan  1 00:00:00 0000",
                "Mon Jan 1 00:00:00 2030",
                "Mon Jan 01 00:00 2030",
                "Mon, 01 Jan -2030 00:00:00 GMT",
                "Mon, 01 Jan 2030 0a:00:00 GMT",
            ]);
            s = bad.to_string();
        }
        s
    }

    fn retry_after_value(&mut self) -> String {
        match self.below(12) {
            0 => format!("{}", self.below(121)),
            1 => format!("-{}", self.below(100)),
            2 => self
                .pick(&[
                    "99999999999999999999999",
                    "18446744073709551615",
                    "18446744073709",
                    "0",
                ])
                .into(),
            3 => self
                .pick(&[
                    "1.5", "1e3", "1e400", "NaN", "inf", "-0", "+5", " 7 ", "", "０",
                ])
                .into(),
            4..=7 => self.http_date(),
            8 => self.unicode(20),
            _ => {
                let mut v = self.http_date().into_bytes();
                self.mutate_bytes(&mut v, &[]);
                String::from_utf8_lossy(&v).into_owned()
            }
        }
    }

    fn status(&mut self) -> u16 {
        match self.below(12) {
            0..=3 => 200,
            4 => 429,
            5 => 408,
            6 => *[500u16, 502, 503, 504, 529]
                .get(self.below(5))
                .unwrap_or(&500),
            7 => *[400u16, 401, 403, 404, 422]
                .get(self.below(5))
                .unwrap_or(&400),
            8 => 201 + self.below(99) as u16,
            _ => 100 + self.below(500) as u16,
        }
    }

    fn headers(&mut self) -> Vec<(String, String)> {
        (0..self.below(4))
            .map(|_| {
                let name = self.pick(HEADER_NAMES).to_string();
                let value = if name.to_ascii_lowercase().starts_with("retry") || self.chance(2) {
                    self.retry_after_value()
                } else {
                    "application/json".into()
                };
                (name, value)
            })
            .collect()
    }

    /// Changes one random place of a JSON value: a leaf becomes another type, a huge or negative
    /// number, random Unicode or another known word; an object loses or gains a key; an array loses,
    /// duplicates or swaps elements.
    fn mutate_value(&mut self, v: &mut serde_json::Value, depth: usize) {
        use serde_json::Value;
        match v {
            Value::Object(map) if !map.is_empty() && (depth < 2 || !self.chance(4)) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                let k = keys[self.below(keys.len())].clone();
                match self.below(12) {
                    0 => {
                        map.remove(&k);
                    }
                    1 => {
                        let name = self.pick(&["extra", "status", "attempts", "text", "index"]);
                        map.insert(name.into(), Value::Null);
                    }
                    _ => {
                        if let Some(child) = map.get_mut(&k) {
                            self.mutate_value(child, depth + 1);
                        }
                    }
                }
            }
            Value::Array(items) if !items.is_empty() && (depth < 2 || !self.chance(4)) => {
                let i = self.below(items.len());
                match self.below(10) {
                    0 => {
                        items.remove(i);
                    }
                    1 => {
                        let copy = items[i].clone();
                        items.insert(self.below(items.len() + 1), copy);
                    }
                    2 => {
                        let j = self.below(items.len());
                        items.swap(i, j);
                    }
                    3 => items.truncate(i),
                    _ => self.mutate_value(&mut items[i], depth + 1),
                }
            }
            _ => {
                *v = match self.below(10) {
                    0 => Value::Null,
                    1 => Value::from(self.next()),
                    2 => Value::from(-(self.below(1000) as i64) - 1),
                    3 => Value::from(self.below(5) as u64),
                    4 => Value::from(1.5e300),
                    5 => Value::from(self.unicode(16)),
                    6 => Value::from(self.pick(&[
                        "pending",
                        "in_flight",
                        "answered",
                        "failed",
                        "atlas-pilot-run",
                        "",
                        "Selection: YES",
                        DUMMY_KEY,
                        "E",
                        "rate_limited",
                    ])),
                    7 => Value::Bool(self.chance(2)),
                    8 => Value::Array(vec![]),
                    _ => serde_json::json!({}),
                };
            }
        }
    }

    /// In-place byte mutations; `others` are splice partners.
    fn mutate_bytes(&mut self, data: &mut Vec<u8>, others: &[Vec<u8>]) {
        let rounds = 1 + self.below(6);
        for _ in 0..rounds {
            let len = data.len();
            let at = self.below(len + 1);
            match self.below(11) {
                0 if len > 0 => {
                    let i = self.below(len);
                    data[i] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let i = self.below(len);
                    data[i] = self.pick(TOKENS).as_bytes()[0];
                }
                2..=4 => {
                    let token = self.pick(TOKENS).as_bytes().to_vec();
                    data.splice(at..at, token);
                }
                5 if len > 0 => {
                    let end = (at + 1 + self.below(16)).min(len);
                    if at < end {
                        data.drain(at..end);
                    }
                }
                6 if len > 0 => {
                    let start = self.below(len);
                    let end = (start + 1 + self.below(64)).min(len);
                    let piece = data[start..end].to_vec();
                    data.splice(at..at, piece);
                }
                7 => data.truncate(at),
                8 => {
                    // Nesting (within reason: past serde_json's recursion limit of 128 now and then).
                    let depth = 1 + self.below(160);
                    let (open, close) = if self.chance(2) {
                        ("[", "]")
                    } else {
                        ("{\"a\":", "}")
                    };
                    let mut nest = open.repeat(depth).into_bytes();
                    if self.chance(2) {
                        nest.extend_from_slice(b"1");
                        nest.extend_from_slice(close.repeat(depth).as_bytes());
                    }
                    data.splice(at..at, nest);
                }
                9 => {
                    let s = self.unicode(12);
                    data.splice(at..at, s.into_bytes());
                }
                _ if !others.is_empty() => {
                    let other = &others[self.below(others.len())];
                    let from = self.below(other.len() + 1);
                    data.truncate(at);
                    data.extend_from_slice(&other[from..]);
                }
                _ => {}
            }
        }
    }

    /// `text` mutated (or, now and then, replaced by random bytes), read back as (lossy) UTF-8.
    fn mutate(&mut self, text: &str, others: &[Vec<u8>]) -> String {
        if self.chance(25) {
            let len = self.below(200);
            let mut out = Vec::with_capacity(len);
            while out.len() < len {
                if self.chance(2) {
                    out.extend_from_slice(self.pick(TOKENS).as_bytes());
                } else {
                    out.push(self.next() as u8);
                }
            }
            return String::from_utf8_lossy(&out).into_owned();
        }
        let mut data = text.as_bytes().to_vec();
        self.mutate_bytes(&mut data, others);
        String::from_utf8_lossy(&data).into_owned()
    }
}

/// Proleptic Gregorian (year, month, day) of days since 1970-01-01 (H. Hinnant, `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn clip(s: &str) -> String {
    let cut: String = s.chars().take(600).collect();
    if cut.len() < s.len() {
        format!("{cut}… ({} bytes)", s.len())
    } else {
        cut
    }
}

fn check_extraction(e: &atlas_pilot::Extraction, space: &AnswerSpace) -> Result<(), String> {
    if !e.normalised.is_empty() && e.obtained == Obtained::Regex {
        return Err(format!(
            "a normalised reading is a clean (regex) match: {e:?}"
        ));
    }
    if e.raw.is_empty() {
        if e.evidence.is_some() || matches!(e.obtained, Obtained::Regex | Obtained::Fallback) {
            return Err(format!("an empty raw with evidence or a reading: {e:?}"));
        }
        return Ok(());
    }
    match space.options.iter().find(|o| o.raw == e.raw) {
        Some(o) if o.evidence == e.evidence => Ok(()),
        _ => Err(format!("raw / evidence not an option of the space: {e:?}")),
    }
}

fn check_error(e: &ProviderError, status: u16) -> Result<(), String> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    if e.status() != Some(status) {
        return Err(format!("HTTP {status} became {e:?}"));
    }
    let (kind, retryable) = match status {
        429 => ("rate_limited", true),
        408 => ("timeout", true),
        500..=599 => ("server", true),
        _ => ("client", false),
    };
    if e.kind_key() != kind || e.is_retryable() != retryable {
        return Err(format!(
            "HTTP {status} classified as {} ({e:?})",
            e.kind_key()
        ));
    }
    Ok(())
}

struct Fixtures {
    providers: [Provider; 3],
    spaces: [AnswerSpace; 2],
    key: SecretKey,
    plan: Plan,
    states: Vec<Vec<u8>>,
    bodies: Vec<Vec<u8>>,
}

fn check_provider(g: &mut Gen, fx: &Fixtures, input: &mut String) -> Result<bool, String> {
    let status = g.status();
    let headers = g.headers();
    let (seed_body, shape) = g.body();
    let mutated = g.chance(3) || shape.is_none() && g.chance(2);
    let body = if mutated {
        g.mutate(&seed_body, &fx.bodies)
    } else {
        seed_body
    };
    *input = format!("status {status}, headers {headers:?}, body {body:?}");
    let run = || -> Result<(), String> {
        for (p, provider) in fx.providers.iter().enumerate() {
            let plain = parse_response(provider, status, &headers, &body);
            let scrubbed = parse_response_scrubbed(provider, status, &headers, &body, &fx.key);
            match (&plain, &scrubbed) {
                (Ok(a), Ok(b)) if a == b => {
                    let space = &fx.spaces[p % 2];
                    check_extraction(&extract_completion(a, space), space)?;
                }
                (Err(a), Err(b)) => {
                    check_error(a, status)?;
                    check_error(b, status)?;
                    let (shown, debug) = (b.to_string(), format!("{b:?}"));
                    if shown.contains(DUMMY_KEY) || debug.contains(DUMMY_KEY) {
                        return Err(format!("a scrubbed error holds the key: {debug}"));
                    }
                }
                _ => {
                    return Err(format!(
                        "scrubbing changed the outcome: {plain:?} vs {scrubbed:?}"
                    ))
                }
            }
            if !mutated && shape == Some(p) && (200..300).contains(&status) && plain.is_err() {
                return Err(format!(
                    "a valid 2xx body of its own shape failed: {plain:?}"
                ));
            }
        }
        Ok(())
    };
    run().map(|()| false)
}

fn check_extract(g: &mut Gen, fx: &Fixtures, input: &mut String) -> Result<bool, String> {
    let base = g.model_text();
    let text = if g.chance(2) {
        g.mutate(&base, &[])
    } else {
        base
    };
    let space = &fx.spaces[g.below(2)];
    *input = format!("text {text:?}");
    let e = extract(&text, space);
    let finish = g.pick(&[
        "stop",
        "SAFETY",
        "content_filter",
        "prompt_blocked:OTHER",
        "refusal",
        "",
    ]);
    let completion = Completion {
        text: if g.chance(3) {
            String::new()
        } else {
            text.clone()
        },
        finish_reason: (!finish.is_empty()).then(|| finish.to_string()),
        usage: Default::default(),
        model: None,
    };
    let c = extract_completion(&completion, space);
    check_extraction(&e, space)?;
    check_extraction(&c, space)?;
    Ok(false)
}

fn check_judge(g: &mut Gen, input: &mut String) -> Result<bool, String> {
    let base = g.judge_text();
    let text = if g.chance(2) {
        g.mutate(&base, &[])
    } else {
        base
    };
    *input = format!("judge output {text:?}");
    match parse_judge_label(&text) {
        Err(JudgeError::NoLabel { excerpt }) if excerpt.chars().count() > 81 => Err(format!(
            "a judge error's excerpt is not clipped: {excerpt:?}"
        )),
        _ => Ok(false),
    }
}

fn check_state(g: &mut Gen, fx: &Fixtures, input: &mut String) -> Result<bool, String> {
    let seed = &fx.states[g.below(fx.states.len())];
    let mut data = if g.chance(3) {
        seed.clone()
    } else {
        // Value-level: change some leaves or keys of the parsed state, then serialise it again.
        let mut value: serde_json::Value = serde_json::from_slice(seed).unwrap_or_default();
        for _ in 0..1 + g.below(4) {
            g.mutate_value(&mut value, 0);
        }
        serde_json::to_vec(&value).unwrap_or_default()
    };
    if g.chance(2) {
        g.mutate_bytes(&mut data, &fx.states);
    }
    let text = String::from_utf8_lossy(&data).into_owned();
    *input = format!("run state {text:?}");
    let Ok(mut state) = RunState::from_json(&text) else {
        return Ok(false);
    };
    let saved = state
        .to_json()
        .map_err(|e| format!("to_json failed: {e}"))?;
    match RunState::from_json(&saved) {
        Ok(back) if back == state => {}
        other => return Err(format!("the state does not survive a save: {other:?}")),
    }
    let now = g.next() % 4_000_000_000_000;
    let _ = state.progress();
    let _ = state.progress().eta_ms(1 + g.below(8));
    let _ = state.ready(now, 1 + g.below(20));
    let _ = state.next_wake_ms();
    let _ = state.finished();
    if state.check_plan(&fx.plan).is_ok() {
        let ids: Vec<String> = state.calls.iter().take(3).map(|c| c.id.clone()).collect();
        for id in &ids {
            if let Ok(req) = state.request(&fx.plan, id, &fx.key) {
                if format!("{req:?}").contains(DUMMY_KEY) {
                    return Err("a request's Debug holds the key".into());
                }
            }
            let _ = state.judged_text(&fx.plan, id);
        }
        let _ = to_bundle(&state, &fx.plan, &BundleInfo::new("fuzz", "Fuzz"));
        state.ensure_judge_calls(&fx.plan);
        let _ = to_bundle(&state, &fx.plan, &BundleInfo::new("fuzz", "Fuzz"));
    }
    state.interrupt();
    state.retry_failed();
    let _ = state.progress();
    Ok(true)
}

#[derive(Debug, Default)]
struct Tally {
    inputs: u64,
    by_target: [u64; 4],
    states_ok: u64,
    failures: Vec<String>,
}

fn run(count: u64, seed: u64) -> Tally {
    let key = SecretKey::new(DUMMY_KEY);
    let (plan, state, _) = run_scenario(&key);
    let fresh = RunState::new(&plan);
    let states = vec![
        state.to_json().expect("serialises").into_bytes(),
        fresh.to_json().expect("serialises").into_bytes(),
        serde_json::to_vec_pretty(
            &serde_json::from_str::<serde_json::Value>(&state.to_json().expect("serialises"))
                .expect("JSON"),
        )
        .expect("serialises"),
    ];
    let mut g = Gen::new(seed);
    let bodies: Vec<Vec<u8>> = (0..40).map(|_| g.body().0.into_bytes()).collect();
    let fx = Fixtures {
        providers: [
            Provider::openai("gpt-4o-mini"),
            Provider::anthropic("claude-x"),
            Provider::gemini("gemini-2.0-flash"),
        ],
        spaces: [AnswerSpace::yes_no(), AnswerSpace::agree_disagree()],
        key,
        plan,
        states,
        bodies,
    };
    let mut tally = Tally::default();
    for i in 0..count {
        // Provider responses get half of the inputs (each one runs through all three shapes).
        let target = match i % 6 {
            0..=2 => 0,
            3 => 1,
            4 => 2,
            _ => 3,
        };
        tally.inputs += 1;
        tally.by_target[target] += 1;
        let mut input = String::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| match target {
            0 => check_provider(&mut g, &fx, &mut input),
            1 => check_extract(&mut g, &fx, &mut input),
            2 => check_judge(&mut g, &mut input),
            _ => check_state(&mut g, &fx, &mut input),
        }));
        match outcome {
            Ok(Ok(ok)) => tally.states_ok += u64::from(ok),
            Ok(Err(property)) => tally.failures.push(format!(
                "input {i} (target {target}): {property}\n input: {}",
                clip(&input)
            )),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                    .unwrap_or_default();
                tally.failures.push(format!(
                    "input {i} (target {target}) PANICKED: {what} (replay with ATLAS_FUZZ_SEED={seed}, ATLAS_FUZZ_INPUTS={})\n input: {}",
                    i + 1,
                    clip(&input)
                ));
            }
        }
    }
    tally
}

fn fuzz(default_count: u64) {
    let count = std::env::var("ATLAS_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_count);
    let seed = std::env::var("ATLAS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_260_801);
    // Panics are caught and counted; keep the default hook from printing each one.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let tally = run(count, seed);
    let secs = start.elapsed().as_secs_f64();
    std::panic::set_hook(hook);
    println!(
        "fuzz: {} generated inputs (seed {seed}) in {secs:.1} s: provider responses {} (× 3 shapes, plain and scrubbed), model texts {}, judge outputs {}, run states {} ({} parsed); {} failures (panics or broken properties), 0 allowed",
        tally.inputs,
        tally.by_target[0],
        tally.by_target[1],
        tally.by_target[2],
        tally.by_target[3],
        tally.states_ok,
        tally.failures.len()
    );
    assert!(
        tally.failures.is_empty(),
        "{} of {} inputs failed; the first:\n{}",
        tally.failures.len(),
        tally.inputs,
        tally
            .failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn twenty_thousand_generated_inputs_never_panic_and_keep_their_properties() {
    fuzz(20_000);
}

#[test]
#[ignore = "the 10^6 run: cargo test --release -p atlas-pilot --test fuzz -- --ignored --nocapture"]
fn a_million_generated_inputs_never_panic_and_keep_their_properties() {
    fuzz(1_000_000);
}
