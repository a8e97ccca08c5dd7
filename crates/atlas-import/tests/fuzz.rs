//! No panic on any input: a seeded generator (ChaCha8) mutates valid CSV, TSV, JSONL, JSON-array,
//! bundle and mapping inputs (bit flips, structural bytes such as quotes, delimiters, line breaks,
//! brackets, byte-order marks and invalid UTF-8, deletions, duplications, truncations, splices, long
//! runs past the record limit, and some fully random inputs) and feeds each to its parser:
//!
//! - CSV / TSV / JSONL / JSON: [`atlas_import::import`] with a mapping (unpivot, array repeats, judges,
//!   texts), once in one chunk and once in random small chunks — the two outcomes must be identical —
//!   plus a [`atlas_import::preview`]; a successful import must give a bundle that
//!   `atlas_core::Audit::from_bytes` accepts;
//! - bundles: `atlas_core::Audit::from_bytes` (mutations of `tests/fixtures/tiny-bundle.json` and of
//!   an imported bundle);
//! - mappings: `atlas_import::Mapping::from_json`;
//! - Inspect AI `.eval` logs: `atlas_import::logs::inspect::read` with its preset (mutations of small
//!   zips rebuilt from the committed fixture's members, stored and DEFLATE, and of the fixture itself,
//!   zstd), a successful import checked by `Audit::from_bytes`;
//! - promptfoo results: `atlas_import::logs::promptfoo::read` (mutations of the committed fixture cut
//!   to three results).
//! - lm-evaluation-harness logs: `atlas_import::logs::read` on mutated samples lines (CrowS-Pairs and
//!   BBQ seeds, and the first lines of the committed fixture) with the fixture's results file, and
//!   `LogFormat::detect` on the same bytes; a successful read must give a valid bundle;
//! - bundles with likelihood readouts (`responses.likelihood`): `atlas_core::Audit::from_bytes`;
//! - Parquet long tables: `atlas_import::logs::read` with the fixture mapping, `logs::parquet::summary`
//!   and `LogFormat::detect` on mutations of the committed 24-row pandas (snappy) and polars (zstd)
//!   files, 3 row groups each (`tests/fixtures/parquet/fuzz/`), and the BROTLI file; a successful
//!   read must give a valid bundle.
//!
//! Every input runs under `catch_unwind`; the test fails if any panicked, printing its index and bytes
//! so that it can be replayed (the stream is deterministic for a seed).
//!
//! The normal test run checks 20,000 inputs. The 10^6 run is ignored by default:
//!
//! ```text
//! cargo test --release -p atlas-import --test fuzz -- --ignored --nocapture
//! ```
//!
//! (`scripts/fuzz-import.sh` runs it; `ATLAS_FUZZ_DUMP=DIR` writes every failing input to DIR for replay;
//! `ATLAS_FUZZ_INPUTS` and `ATLAS_FUZZ_SEED` override the count and
//! the seed.)

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use atlas_core::Audit;
use atlas_import::logs::{self, LogFormat, LogInput, LogOptions};
use atlas_import::{preview, Format, Limits, Mapping};
use common::{import_chunked, mapping};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CSV_SEEDS: &[&str] = &[
    "model,statement,cond,ans_a,ans_b,text,judge\nm1,s1,c1,agree,disagree,\"a, b\",E\nm1,s2,c1,disagree,0,\"x\"\"y\",D\nm2,s1,c2,maybe,no,\"multi\nline\",Q\n",
    "\u{feff}model,statement,cond,ans_a,ans_b,text,judge\r\nm1,s1,c1,agree,agree,,\r\n\r\nm1,s1,c1,disagree,agree,t,N\r\nm3,\"s,3\",c1,agree\r\n",
    "model,model,statement,cond,ans_a,ans_b,text,judge\nm,m,s,c,agree,disagree,t,R\n",
    "model,statement,cond,ans_a,ans_b,text,judge\n\"m1\"x,s1,c1,agree,disagree,\"\",E\nm1,s1\n",
];

const JSON_RECORDS: &[&str] = &[
    r#"{"m":"m1","s":{"id":"s1","text":"Statement one."},"sel":[1,-1,0],"txt":["a","b"],"j":["E","D"],"g":"1"}"#,
    r#"{"m":"m2","s":{"id":"s1"},"sel":1,"txt":"only","j":"N","g":1}"#,
    r#"{"m":"m1","s":{"id":2},"sel":[],"txt":[],"j":null}"#,
    r#"{"m":["x"],"s":{"id":"s3"},"sel":[{"a":1}],"txt":[1,2],"j":[true]}"#,
    r#"{"m":"m\u00e9","s":{"id":"s\ud83d\ude00"},"sel":["-1","1"],"txt":["\n"],"j":"QE"}"#,
];

const LMEVAL_LINES: &[&str] = &[
    r#"{"doc_id": 0, "doc": {"sent_more": "A b", "sent_less": "C b", "bias_type": "age"}, "target": "0", "arguments": {"gen_args_0": {"arg_0": "S:", "arg_1": " A b"}, "gen_args_1": {"arg_0": "S:", "arg_1": " C b"}}, "resps": [[["-10.5", "False"]], [["-12.0", "False"]]], "filtered_resps": [["-10.5", "False"], ["-12.0", "False"]], "pct_stereotype": 1.0}"#,
    r#"{"doc_id": 1, "doc": {"context_condition": "ambig", "category": "Age", "context": "c", "question": "q", "ans0": "X", "ans1": "Y", "ans2": "Unknown", "answer_info": {"ans0": ["x", "old"], "ans1": ["y", "nonOld"], "ans2": ["u", "unknown"]}, "biased_answers": ["X"]}, "arguments": {"gen_args_0": {"arg_0": "c", "arg_1": " X"}, "gen_args_1": {"arg_0": "c", "arg_1": " Y"}, "gen_args_2": {"arg_0": "c", "arg_1": " Unknown"}}, "resps": [[[-1.0, false]], [[-2.0, false]], [[-0.5, true]]]}"#,
];

const LIKELIHOOD_BUNDLE: &str = r#"{"format":"audit-atlas-bundle","version":1,"metadata":{"id":"lk","title":"t","description":"d","source":{"citation":"c"},"license":{"id":"CC0-1.0","attribution":"none"},"content_warning":null,"produced_by":{"tool":"hand"}},"facets":[{"id":"model","levels":[{"id":"m"}]},{"id":"statement","levels":[{"id":"s1","text":"a"},{"id":"s2","text":"b"}]}],"responses":{"axes":["model","statement"],"selection":{"values":[],"codes":"--"},"likelihood":{"candidates":2,"stereotyped":"0-","logprob_sum":[-6.0,-5.0,null,null],"token_count":[3,2,null,null]}}}"#;

const TOKENS: &[&[u8]] = &[
    b"\"",
    b",",
    b"\t",
    b"\n",
    b"\r\n",
    b"\r",
    b"\"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"null",
    b"true",
    b"-1",
    b"1e999",
    b"\xff",
    b"\xfe\xff",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xc3",
    b"\xf0\x9f\x98",
    b"\",\"",
    b"[[[[[[[[",
    b"{\"a\":",
];

fn csv_mapping(variant: u64) -> Mapping {
    let selection = if variant.is_multiple_of(2) {
        r#"{"field": "ans_{unpivot}", "map": {"agree": 1, "disagree": 0,
            "0": {"evidence": null, "obtained": "parser_failure", "raw": "none"}}, "refusals": ["no"]}"#
    } else {
        r#"{"field": "ans_{unpivot}", "compare_to": "ans_a", "equal": 0, "different": 1,
            "only": ["agree", "disagree"]}"#
    };
    mapping(
        r#"{"model": {"field": "model"},
            "condition": {"unpivot": [{"id": "a"}, {"id": "b"}]},
            "statement": {"field": "statement", "text": "text"},
            "template": {"field": "cond", "levels": ["c1", "c2"]}}"#,
        selection,
        r#""rationale": {"field": "text"},
           "judges": [{"id": "j", "field": "judge", "map": {"E": "E", "Q": "QE", "N": "N", "D": "D", "R": "R"}}]"#,
    )
}

fn json_mapping(variant: u64) -> Mapping {
    let selection = if variant.is_multiple_of(2) {
        r#"{"field": "sel", "map": {"1": 1, "-1": 0}}"#
    } else {
        r#"{"field": "sel", "evidence_field": "g", "map": {"1": 1}, "collapse_unmapped": true}"#
    };
    mapping(
        r#"{"model": {"field": "m"},
            "statement": {"field": "s.id", "text": "s.text"},
            "repeat": {"array_index": true}}"#,
        selection,
        r#""rationale": {"field": "txt"},
           "judges": [{"id": "j", "field": "j", "map": {"E": "E", "QE": "QE", "N": "N", "D": "D"}}]"#,
    )
}

struct Gen {
    rng: ChaCha8Rng,
}

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.rng.next_u64() % n as u64) as usize
        }
    }

    fn mutate(&mut self, seeds: &[Vec<u8>]) -> Vec<u8> {
        if self.below(20) == 0 {
            // Fully random bytes, biased towards the structural tokens.
            let len = self.below(200);
            let mut out = Vec::with_capacity(len);
            while out.len() < len {
                if self.below(2) == 0 {
                    out.extend_from_slice(TOKENS[self.below(TOKENS.len())]);
                } else {
                    out.push(self.rng.next_u32() as u8);
                }
            }
            return out;
        }
        let mut data = seeds[self.below(seeds.len())].clone();
        let rounds = 1 + self.below(6);
        for _ in 0..rounds {
            let len = data.len();
            let at = self.below(len + 1);
            match self.below(9) {
                0 if len > 0 => {
                    let i = self.below(len);
                    data[i] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let i = self.below(len);
                    data[i] = TOKENS[self.below(TOKENS.len())][0];
                }
                2 | 3 => {
                    let token = TOKENS[self.below(TOKENS.len())];
                    data.splice(at..at, token.iter().copied());
                }
                4 if len > 0 => {
                    let end = (at + 1 + self.below(16)).min(len);
                    if at < end {
                        data.drain(at..end);
                    }
                }
                5 if len > 0 => {
                    let start = self.below(len);
                    let end = (start + 1 + self.below(64)).min(len);
                    let piece = data[start..end].to_vec();
                    data.splice(at..at, piece);
                }
                6 => data.truncate(at),
                7 => {
                    let run = vec![b'x'; 50 + self.below(300)];
                    data.splice(at..at, run);
                }
                _ => {
                    let other = &seeds[self.below(seeds.len())];
                    let from = self.below(other.len() + 1);
                    data.truncate(at);
                    data.extend_from_slice(&other[from..]);
                }
            }
        }
        data
    }
}

fn utf16le(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    out
}

/// Runs one reader input; returns whether the import succeeded, or a message if a property fails.
fn check_reader(g: &mut Gen, format: Format, bytes: &[u8]) -> Result<bool, String> {
    let variant = g.rng.next_u64();
    let limits = Limits {
        max_record_bytes: [24, 200, 1 << 16][g.below(3)],
        max_cells: [6, 1000, 50_000_000][g.below(3)],
        chunk_bytes: 1 + g.below(64),
    };
    let make = || match format {
        Format::Csv | Format::Tsv => csv_mapping(variant),
        Format::Jsonl | Format::Json => json_mapping(variant),
    };
    let whole = import_chunked(make(), limits.clone(), "in", format, bytes, usize::MAX);
    let chunk = 1 + g.below(17);
    let parts = import_chunked(make(), limits.clone(), "in", format, bytes, chunk);
    let a = format!("{whole:?}");
    let b = format!("{parts:?}");
    if a != b {
        return Err(format!(
            "chunk size {chunk} changed the outcome:\n whole: {a:.400}\n parts: {b:.400}"
        ));
    }
    if let Ok(imported) = &whole {
        if let Err(e) = imported.validate() {
            return Err(format!(
                "an import succeeded but its bundle is refused: {e}"
            ));
        }
    }
    // The preview, and the starter guess and the form's tables from it, never panic either.
    if let Ok(p) = preview(bytes, "in", format, None, &limits, 1 + g.below(4)) {
        let guessed = atlas_import::guess("in", &p);
        let _ = atlas_import::form::value_rows(&guessed.document, &p);
        for role in atlas_import::Role::ALL {
            let current = atlas_import::form::role_source(&guessed.document, role);
            let _ = atlas_import::form::role_choices(&p, role, &current);
        }
    }
    Ok(whole.is_ok())
}

/// Input kinds: CSV, TSV, JSONL, JSON, bundle, mapping, Inspect `.eval`, promptfoo results.
const TARGETS: usize = 11;

/// Seeds of the Inspect reader: zips of the fixture's header, summaries (cut to two samples) and
/// those two samples (their `events`, `messages` and `attachments` dropped), written stored and
/// DEFLATE; plus the fixture as inspect_ai wrote it (zstd).
fn inspect_seeds(repo: &std::path::Path) -> Vec<Vec<u8>> {
    use std::io::Write;
    let original =
        std::fs::read(repo.join("tests/fixtures/logs/inspect/crows_pairs_stereotype_first.eval"))
            .expect("Inspect fixture");
    let mut archive =
        atlas_import::logs::inspect::EvalArchive::open("seed.eval", &original).expect("opens");
    let summaries = archive.summaries().expect("summaries");
    let keep: Vec<String> = summaries
        .iter()
        .take(2)
        .map(|s| {
            format!(
                "samples/{}_epoch_{}.json",
                s["id"].as_str().unwrap_or(""),
                s["epoch"]
            )
        })
        .collect();
    let mut members = vec![
        (
            "header.json".to_string(),
            archive.read_member("header.json").expect("header"),
        ),
        (
            "summaries.json".to_string(),
            serde_json::to_vec(&summaries[..2]).expect("JSON"),
        ),
    ];
    for name in &keep {
        let mut sample: serde_json::Value = archive.read_json(name).expect("sample");
        for k in ["events", "messages", "attachments", "model_usage"] {
            if let Some(o) = sample.as_object_mut() {
                o.remove(k);
            }
        }
        members.push((name.clone(), serde_json::to_vec(&sample).expect("JSON")));
    }
    let mut seeds = Vec::new();
    for method in [
        zip::CompressionMethod::Stored,
        zip::CompressionMethod::Deflated,
    ] {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, content) in &members {
            let options = zip::write::SimpleFileOptions::default().compression_method(method);
            w.start_file(name.as_str(), options).expect("start");
            w.write_all(content).expect("write");
        }
        seeds.push(w.finish().expect("finish").into_inner());
    }
    seeds.push(original);
    seeds
}

/// Seeds of the promptfoo reader: the fixture with its first three results.
fn promptfoo_seeds(repo: &std::path::Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(repo.join("tests/fixtures/logs/promptfoo/results.json"))
        .expect("promptfoo fixture");
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    if let Some(results) = doc["results"]["results"].as_array_mut() {
        results.truncate(3);
    }
    if let Some(o) = doc.as_object_mut() {
        o.remove("config");
    }
    vec![serde_json::to_vec(&doc).expect("JSON")]
}

/// Reads one log input with its reader's preset; a successful import must give a valid bundle.
fn check_log(target: usize, bytes: &[u8]) -> Result<bool, String> {
    let limits = Limits::default();
    let result = if target == 6 {
        atlas_import::logs::inspect::read("in.eval", bytes, None, &Default::default(), limits)
    } else {
        atlas_import::logs::promptfoo::read("in.json", bytes, None, limits)
    };
    match result {
        Ok(imported) => match imported.validate() {
            Ok(_) => Ok(true),
            Err(e) => Err(format!(
                "a log import succeeded but its bundle is refused: {e}"
            )),
        },
        Err(_) => Ok(false),
    }
}

/// One Parquet input with the fixture mapping: detection, the footer summary and the reader must not
/// panic, and a successful read must be a bundle the core accepts.
fn check_parquet(bytes: &[u8], mapping: &Mapping) -> Result<bool, String> {
    let name = "fuzz.parquet";
    let _ = LogFormat::detect(name, bytes);
    let _ = logs::parquet::summary(name, bytes);
    let options = LogOptions {
        mapping: Some(mapping.clone()),
        ..LogOptions::default()
    };
    match logs::read(LogFormat::Parquet, &[LogInput { name, bytes }], &options) {
        Ok(imported) => imported
            .validate()
            .map(|_| true)
            .map_err(|e| format!("the Parquet import is not a valid bundle: {e}")),
        Err(_) => Ok(false),
    }
}

#[derive(Debug, Default)]
struct Tally {
    inputs: u64,
    by_target: [u64; TARGETS],
    imports_ok: u64,
    bundles_ok: u64,
    logs_ok: u64,
    failures: Vec<String>,
}

/// One lm-eval samples input with the results file: detection and the reader must not panic, and a
/// successful read must be a bundle the core accepts.
fn check_lmeval(bytes: &[u8], results: &[u8]) -> Result<bool, String> {
    let name = "samples_fuzz_2026-01-01T00-00-00.jsonl";
    let _ = LogFormat::detect(name, bytes);
    let inputs = [
        LogInput { name, bytes },
        LogInput {
            name: "results_2026-01-01T00-00-00.json",
            bytes: results,
        },
    ];
    match logs::read(LogFormat::LmEval, &inputs, &LogOptions::default()) {
        Ok(imported) => {
            let json = imported.to_json().map_err(|e| e.to_string())?;
            Audit::from_bytes(&json)
                .map(|_| true)
                .map_err(|e| format!("the lm-eval import is not a valid bundle: {e}"))
        }
        Err(_) => Ok(false),
    }
}

fn run(count: u64, seed: u64) -> Tally {
    let repo = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let csv: Vec<Vec<u8>> = CSV_SEEDS
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .chain(std::iter::once(utf16le(CSV_SEEDS[0])))
        .collect();
    let tsv: Vec<Vec<u8>> = CSV_SEEDS
        .iter()
        .map(|s| s.replace(',', "\t").into_bytes())
        .collect();
    let jsonl: Vec<Vec<u8>> = vec![
        (JSON_RECORDS.join("\n") + "\n").into_bytes(),
        JSON_RECORDS.join("\r\n\r\n").into_bytes(),
        utf16le(&JSON_RECORDS.join("\n")),
    ];
    let json: Vec<Vec<u8>> = vec![
        format!("[{}]", JSON_RECORDS.join(",\n")).into_bytes(),
        format!("\u{feff} [ {} ] ", JSON_RECORDS[0]).into_bytes(),
    ];
    let tiny = std::fs::read(repo.join("tests/fixtures/tiny-bundle.json")).expect("tiny bundle");
    let imported = import_chunked(
        csv_mapping(0),
        Limits::default(),
        "seed.csv",
        Format::Csv,
        CSV_SEEDS[0].as_bytes(),
        usize::MAX,
    )
    .expect("the CSV seed imports")
    .to_json()
    .expect("serialises");
    let bundles = vec![tiny, imported];
    let lk_bundles = vec![LIKELIHOOD_BUNDLE.as_bytes().to_vec()];
    let lm_dir = repo.join("tests/fixtures/logs/lm-eval");
    let mut lm_seeds: Vec<Vec<u8>> = LMEVAL_LINES
        .iter()
        .map(|l| format!("{l}\n").into_bytes())
        .collect();
    lm_seeds.push(
        format!(
            "{}\n{}\n",
            LMEVAL_LINES[0],
            LMEVAL_LINES[0].replace("\"doc_id\": 0", "\"doc_id\": 7")
        )
        .into_bytes(),
    );
    let mut lm_results: Vec<u8> =
        br#"{"results": {}, "model_name": "m", "config": {"model": "x"}}"#.to_vec();
    let mut fixture_files: Vec<_> = std::fs::read_dir(&lm_dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    fixture_files.sort();
    for path in fixture_files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if name.starts_with("samples_") {
            let head: Vec<&str> = text.lines().take(2).collect();
            lm_seeds.push((head.join("\n") + "\n").into_bytes());
        } else if name.starts_with("results_") {
            lm_results = text.into_bytes();
        }
    }
    let mut mappings: Vec<Vec<u8>> = ["decodingtrust", "trustware-bbq", "amqa", "crows-pairs"]
        .iter()
        .map(|m| {
            std::fs::read(repo.join(format!("tests/import/{m}.mapping.json")))
                .expect("mapping file")
        })
        .collect();
    mappings.push(serde_json::to_vec(&csv_mapping(1)).expect("serialises"));
    let inspect = inspect_seeds(&repo);
    let promptfoo = promptfoo_seeds(&repo);
    let pq_dir = repo.join("tests/fixtures/parquet");
    let parquet: Vec<Vec<u8>> = [
        "fuzz/pandas_snappy_24_rows.parquet",
        "fuzz/polars_zstd_24_rows.parquet",
        "brotli_unsupported.parquet",
    ]
    .iter()
    .map(|f| std::fs::read(pq_dir.join(f)).expect("Parquet fixture"))
    .collect();
    let pq_mapping = Mapping::from_json(
        &std::fs::read_to_string(pq_dir.join("long.mapping.json")).expect("Parquet mapping"),
    )
    .expect("the Parquet mapping is valid");

    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
    };
    let mut tally = Tally::default();
    for i in 0..count {
        let target = (i % TARGETS as u64) as usize;
        let bytes = match target {
            0 => g.mutate(&csv),
            1 => g.mutate(&tsv),
            2 => g.mutate(&jsonl),
            3 => g.mutate(&json),
            4 => g.mutate(&bundles),
            5 => g.mutate(&mappings),
            6 => g.mutate(&inspect),
            7 => g.mutate(&promptfoo),
            8 => g.mutate(&lm_seeds),
            10 => g.mutate(&parquet),
            _ => g.mutate(&lk_bundles),
        };
        tally.inputs += 1;
        tally.by_target[target] += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| match target {
            0 => check_reader(&mut g, Format::Csv, &bytes),
            1 => check_reader(&mut g, Format::Tsv, &bytes),
            2 => check_reader(&mut g, Format::Jsonl, &bytes),
            3 => check_reader(&mut g, Format::Json, &bytes),
            4 | 9 => Ok(Audit::from_bytes(&bytes).is_ok()),
            6 | 7 => check_log(target, &bytes),
            8 => check_lmeval(&bytes, &lm_results),
            10 => check_parquet(&bytes, &pq_mapping),
            _ => {
                let text = String::from_utf8_lossy(&bytes);
                if let Ok(m) = Mapping::from_json(&text) {
                    // A mapping that parses must also build an importer or fail cleanly.
                    let _ = atlas_import::Importer::new(m, Limits::default());
                }
                Ok(false)
            }
        }));
        if !matches!(outcome, Ok(Ok(_))) {
            dump_failing_input(i, target, &bytes);
        }
        match outcome {
            Ok(Ok(ok)) if target < 4 => tally.imports_ok += u64::from(ok),
            Ok(Ok(ok)) if (6..=8).contains(&target) || target == 10 => {
                tally.logs_ok += u64::from(ok)
            }
            Ok(Ok(ok)) => tally.bundles_ok += u64::from(ok && (target == 4 || target == 9)),
            Ok(Err(property)) => tally.failures.push(format!(
                "input {i} (target {target}): {property}\n bytes: {:?}",
                String::from_utf8_lossy(&bytes)
            )),
            Err(_) => tally.failures.push(format!(
                "input {i} (target {target}) PANICKED\n bytes: {:?}",
                String::from_utf8_lossy(&bytes)
            )),
        }
    }
    tally
}

/// Writes a failing input to `$ATLAS_FUZZ_DUMP/input-<i>-target-<t>.bin` when that variable names a
/// folder, so a panic found by the 10^6 run can be replayed and turned into a regression test (the
/// failure report prints the bytes only as lossy text).
fn dump_failing_input(i: u64, target: usize, bytes: &[u8]) {
    let Some(dir) = std::env::var_os("ATLAS_FUZZ_DUMP") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let path = dir.join(format!("input-{i}-target-{target}.bin"));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, bytes)) {
        eprintln!("fuzz: could not write {}: {e}", path.display());
    }
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
    let start = Instant::now();
    let tally = run(count, seed);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "fuzz: {} generated inputs (seed {seed}) in {secs:.1} s: csv {}, tsv {}, jsonl {}, json {} ({} imported to a valid bundle), bundle {} + with likelihood readouts {} ({} valid), mapping {}, inspect {}, promptfoo {}, lm-eval {}, parquet {} ({} logs imported); {} failures (panics or broken properties), 0 allowed",
        tally.inputs,
        tally.by_target[0],
        tally.by_target[1],
        tally.by_target[2],
        tally.by_target[3],
        tally.imports_ok,
        tally.by_target[4],
        tally.by_target[9],
        tally.bundles_ok,
        tally.by_target[5],
        tally.by_target[6],
        tally.by_target[7],
        tally.by_target[8],
        tally.by_target[10],
        tally.logs_ok,
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
fn twenty_thousand_mutated_inputs_never_panic_and_chunking_never_changes_an_import() {
    fuzz(20_000);
}

#[test]
#[ignore = "the 10^6 run: cargo test --release -p atlas-import --test fuzz -- --ignored --nocapture"]
fn a_million_mutated_inputs_never_panic_and_chunking_never_changes_an_import() {
    fuzz(1_000_000);
}
