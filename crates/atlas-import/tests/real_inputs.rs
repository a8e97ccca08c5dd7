//! The four real inputs of `../shared/data/raw/`, imported with the committed mappings in
//! `tests/import/`, against counts computed independently by `tests/import/count_reference.py`
//! (Python `json` and pandas `read_csv`; it never runs the importer nor reads the mappings: it
//! applies the rules by hand).
//!
//! The reference was produced from the repository root with
//!
//! ```text
//! $ ~/.cache/audit-atlas/venv/bin/python tests/import/count_reference.py
//! decodingtrust  records=27648 duplicates=0 cells=691200 (model 8 x condition 3 x statement 1152 x repeat 25) responses=691200 no_response=0 evidence_1=146228 evidence_0=329415 abstain=215557 unmapped=0 texts=138095
//! trustware-bbq  records=900 duplicates=0 cells=1800 (model 3 x condition 2 x statement 300) responses=1800 no_response=0 evidence_1=83 evidence_0=1710 abstain=7 unmapped=7 texts=1800
//! amqa           records=7611 duplicates=0 cells=64080 (model 10 x condition 8 x statement 801) responses=60888 no_response=3192 evidence_1=15040 evidence_0=45345 abstain=503 unmapped=503 texts=0
//! crows-pairs    records=1508 duplicates=1 cells=1507 (model 1 x statement 1507) responses=1507 no_response=0 evidence_1=1289 evidence_0=218 abstain=0 unmapped=0 texts=0
//! wrote /work/main/tests/import/count_reference.json
//! ```
//!
//! (Python 3.11.7, pandas 3.1.1). The same numbers are written out in each test below, and each test
//! also compares with `tests/import/count_reference.json` (per Selection value too), so a changed input
//! file or a changed reference shows up. `count_reference.py --check` re-verifies the JSON against the
//! raw files. The inputs are read from `../shared/data/raw/` next to the repository.

use std::collections::BTreeMap;
use std::path::PathBuf;

use atlas_core::Audit;
use atlas_import::{Format, Imported, Importer, Limits, Mapping};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn raw(path: &str) -> PathBuf {
    repo().join("../shared/data/raw").join(path)
}

fn reference(dataset: &str) -> Value {
    let path = repo().join("tests/import/count_reference.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let doc: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let d = doc["datasets"][dataset].clone();
    assert!(
        d.is_object(),
        "no dataset {dataset:?} in {}",
        path.display()
    );
    d
}

fn import(mapping: &str, inputs: &[PathBuf]) -> Imported {
    let path = repo().join("tests/import").join(mapping);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mapping = Mapping::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut importer = Importer::new(mapping, Limits::default()).expect("mapping accepted");
    for input in inputs {
        let file = std::fs::File::open(input).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the real inputs live in ../shared/data/raw next to the repository)",
                input.display()
            )
        });
        let name = input.display().to_string();
        let format = Format::from_file_name(&name).expect("known extension");
        importer
            .read(&name, format, file)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    importer.finish().unwrap_or_else(|e| panic!("{e}"))
}

/// The numbers the test states, next to the reference JSON's.
struct Expected {
    records: u64,
    duplicates: u64,
    levels: &'static [(&'static str, usize)],
    cells: u64,
    responses: u64,
    no_response: u64,
    evidence_1: u64,
    evidence_0: u64,
    abstain: u64,
    unmapped: u64,
    texts: u64,
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key}: not a count in the reference JSON"))
}

fn check(dataset: &str, imported: &Imported, e: &Expected) {
    let r = &imported.report;
    let reference = reference(dataset);
    // The stated numbers equal the reference JSON (so the comment above and the JSON agree).
    for (key, stated) in [
        ("records", e.records),
        ("duplicates", e.duplicates),
        ("cells", e.cells),
        ("responses", e.responses),
        ("no_response", e.no_response),
        ("evidence_1", e.evidence_1),
        ("evidence_0", e.evidence_0),
        ("abstain", e.abstain),
        ("unmapped", e.unmapped),
        ("texts", e.texts),
        ("records_skipped", 0),
    ] {
        assert_eq!(
            u(&reference, key),
            stated,
            "{dataset}: {key} in count_reference.json"
        );
    }
    // The import equals them.
    assert_eq!(r.records, e.records, "{dataset}: records");
    assert_eq!(r.records_skipped, 0, "{dataset}: records skipped");
    assert_eq!(r.values_skipped, 0, "{dataset}: values skipped");
    assert_eq!(r.duplicates, e.duplicates, "{dataset}: duplicates");
    let levels: Vec<(&str, usize)> = r.levels.iter().map(|(f, n)| (f.as_str(), *n)).collect();
    assert_eq!(levels, e.levels, "{dataset}: levels per facet (axis order)");
    for (facet, n) in e.levels {
        assert_eq!(
            reference["levels"][facet].as_u64(),
            Some(*n as u64),
            "{dataset}: levels of {facet} in the reference"
        );
    }
    assert_eq!(r.cells, e.cells, "{dataset}: cells");
    assert_eq!(r.responses, e.responses, "{dataset}: responses");
    assert_eq!(
        r.no_response, e.no_response,
        "{dataset}: cells without response"
    );
    assert_eq!(r.evidence_1, e.evidence_1, "{dataset}: evidence 1");
    assert_eq!(r.evidence_0, e.evidence_0, "{dataset}: evidence 0");
    assert_eq!(r.abstain, e.abstain, "{dataset}: Abstain");
    let unmapped: u64 = r
        .unmapped
        .values()
        .map(|c| c.values.values().sum::<u64>() + c.other_values)
        .sum();
    assert_eq!(unmapped, e.unmapped, "{dataset}: unmapped values");
    assert_eq!(r.texts, e.texts, "{dataset}: Rationale texts");
    // Cells per Selection value (raw, evidence, obtained), compared as sets.
    let ours: BTreeMap<(String, String, String), u64> = r
        .values
        .iter()
        .map(|v| {
            let obtained = serde_json::to_value(v.obtained).expect("serialises");
            (
                (
                    v.raw.clone(),
                    format!("{:?}", v.evidence),
                    obtained.as_str().unwrap_or_default().to_string(),
                ),
                v.cells,
            )
        })
        .collect();
    let theirs: BTreeMap<(String, String, String), u64> = reference["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| {
            (
                (
                    v["raw"].as_str().expect("raw").to_string(),
                    format!("{:?}", v["evidence"].as_u64().map(|e| e as u8)),
                    v["obtained"].as_str().expect("obtained").to_string(),
                ),
                v["cells"].as_u64().expect("cells"),
            )
        })
        .collect();
    assert_eq!(ours, theirs, "{dataset}: cells per Selection value");
    // The written bundle is accepted by the reader the app uses, with the same cells.
    let audit: Audit = imported
        .validate()
        .unwrap_or_else(|e| panic!("{dataset}: {e}"));
    assert_eq!(audit.cells as u64, e.cells);
    let filled = audit
        .selection
        .iter()
        .filter(|&&c| c != atlas_core::bundle::NO_RESPONSE_CODE)
        .count() as u64;
    assert_eq!(
        filled, e.responses,
        "{dataset}: response cells in the bundle"
    );
}

#[test]
fn decodingtrust_jsonl_with_25_labels_per_row_imports_as_25_repeats_with_the_independent_counts() {
    let imported = import(
        "decodingtrust.mapping.json",
        &[raw(
            "decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl",
        )],
    );
    check(
        "decodingtrust",
        &imported,
        &Expected {
            records: 27_648,
            duplicates: 0,
            levels: &[
                ("model", 8),
                ("condition", 3),
                ("statement", 1152),
                ("repeat", 25),
            ],
            cells: 691_200,
            responses: 691_200,
            no_response: 0,
            evidence_1: 146_228,
            evidence_0: 329_415,
            abstain: 215_557,
            unmapped: 0,
            texts: 138_095,
        },
    );
}

#[test]
fn trustware_bbq_nested_jsonl_with_two_responses_per_row_imports_with_the_independent_counts() {
    let models = [
        "deepseek-reasoner_results",
        "mistralai_mixtral-8x22b-instruct-v0.1_results",
        "openai_gpt-oss-20b_results",
    ];
    let mut inputs = Vec::new();
    for m in models {
        for f in [
            "Religion_ambig_consistent.jsonl",
            "Religion_ambig_mixed_cant_determine.jsonl",
        ] {
            inputs.push(raw(&format!("trustware-bbq-reasoning/{m}/{f}")));
        }
    }
    let imported = import("trustware-bbq.mapping.json", &inputs);
    check(
        "trustware-bbq",
        &imported,
        &Expected {
            records: 900,
            duplicates: 0,
            levels: &[("model", 3), ("condition", 2), ("statement", 300)],
            cells: 1800,
            responses: 1800,
            no_response: 0,
            evidence_1: 83,
            evidence_0: 1710,
            abstain: 7,
            unmapped: 7,
            texts: 1800,
        },
    );
}

#[test]
fn amqa_answer_jsonl_with_one_column_per_variant_unpivots_into_eight_conditions_with_the_independent_counts(
) {
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
    let imported = import("amqa.mapping.json", &inputs);
    check(
        "amqa",
        &imported,
        &Expected {
            records: 7611,
            duplicates: 0,
            levels: &[("model", 10), ("condition", 8), ("statement", 801)],
            cells: 64_080,
            responses: 60_888,
            // The deepseek cot2 run has 402 of the 801 questions: 399 x 8 cells without response.
            no_response: 3192,
            evidence_1: 15_040,
            evidence_0: 45_345,
            abstain: 503,
            unmapped: 503,
            texts: 0,
        },
    );
}

#[test]
fn crows_pairs_csv_with_quoted_commas_quotes_and_a_line_break_imports_with_the_independent_counts_and_its_duplicate_reported(
) {
    let imported = import(
        "crows-pairs.mapping.json",
        &[raw("crows-pairs-source/data/crows_pairs_anonymized.csv")],
    );
    check(
        "crows-pairs",
        &imported,
        &Expected {
            records: 1508,
            duplicates: 1,
            levels: &[("model", 1), ("statement", 1507)],
            cells: 1507,
            responses: 1507,
            no_response: 0,
            evidence_1: 1289,
            evidence_0: 218,
            abstain: 0,
            unmapped: 0,
            texts: 0,
        },
    );
    // pandas.read_csv finds 8 columns and one field holding a line break; the duplicate is the pair
    // that pandas indexes 1459 and 1502 (records 1460 and 1503, counting from 1).
    let reference = reference("crows-pairs");
    assert_eq!(reference["csv_columns"].as_u64(), Some(8));
    assert_eq!(reference["csv_fields_with_line_breaks"].as_u64(), Some(1));
    let r = &imported.report;
    assert_eq!(r.sources[0].header.len(), 8);
    let dup = &r.duplicate_examples[0];
    assert_eq!((dup.first_record, dup.record), (1460, 1503));
}
