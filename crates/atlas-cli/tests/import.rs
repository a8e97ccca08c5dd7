//! `atlas import` end to end: runs the built binary on a small CSV with a mapping file, reads the
//! written bundle back with the analysis core, and checks `--preview` and the error path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use atlas_core::Audit;

fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("import-{name}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn atlas(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("import")
        .args(args)
        .output()
        .expect("runs atlas")
}

const MAPPING: &str = r#"{
  "mapping_version": 1,
  "metadata": {
    "id": "cli-import-test",
    "title": "CLI import test",
    "description": "two models, two statements, one answer column per variant",
    "source": {"citation": "hand-made"},
    "license": {"id": "CC0-1.0", "attribution": "none"},
    "content_warning": null
  },
  "facets": {
    "model": {"field": "model"},
    "condition": {"unpivot": [{"id": "plain"}, {"id": "framed"}]},
    "statement": {"field": "statement", "text": "text"}
  },
  "selection": {"field": "answer_{unpivot}", "map": {"agree": 1, "disagree": 0}}
}"#;

// Cells (model × condition × statement): m1 plain: agree, disagree; m1 framed: agree, "unsure";
// m2 plain: disagree, disagree; m2 framed: agree, agree → evidence 1: 4, 0: 3, Abstain: 1.
const CSV: &str = "model,statement,text,answer_plain,answer_framed\n\
m1,s1,\"Statement one, with a comma.\",agree,agree\n\
m1,s2,\"Statement \"\"two\"\".\",disagree,unsure\n\
m2,s1,\"Statement one, with a comma.\",disagree,agree\n\
m2,s2,\"Statement \"\"two\"\".\",disagree,agree\n";

#[test]
fn atlas_import_writes_a_bundle_that_the_core_reads_and_prints_the_value_counts() {
    let d = dir("ok");
    let (mapping, input, out) = (d.join("m.json"), d.join("in.csv"), d.join("bundle.json"));
    std::fs::write(&mapping, MAPPING).unwrap();
    std::fs::write(&input, CSV).unwrap();
    let output = atlas(&[
        "--mapping",
        mapping.to_str().unwrap(),
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("evidence: 1 = 4, 0 = 3, Abstain = 1"),
        "{stdout}"
    );
    assert!(stdout.contains("\"unsure\""), "{stdout}");
    let audit = Audit::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(audit.cells, 8);
    assert_eq!(audit.statements[1].text, "Statement \"two\".");
    let command = audit.metadata().produced_by.command.clone().unwrap();
    assert!(command.starts_with("atlas import --mapping"), "{command}");
}

#[test]
fn atlas_import_preview_prints_columns_and_types_and_writes_nothing() {
    let d = dir("preview");
    let (mapping, input) = (d.join("m.json"), d.join("in.csv"));
    std::fs::write(&mapping, MAPPING).unwrap();
    std::fs::write(&input, CSV).unwrap();
    let output = atlas(&[
        "--preview",
        "--mapping",
        mapping.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("\"answer_framed\""), "{stdout}");
    assert!(stdout.contains("text"), "{stdout}");
    assert!(stdout.contains("Selection values (cells):"), "{stdout}");
    assert!(stdout.contains("preview: nothing written"), "{stdout}");
}

#[test]
fn atlas_import_exits_with_status_2_and_names_the_missing_column() {
    let d = dir("missing");
    let (mapping, input, out) = (d.join("m.json"), d.join("in.csv"), d.join("bundle.json"));
    std::fs::write(&mapping, MAPPING).unwrap();
    std::fs::write(&input, CSV.replace("answer_framed", "answer_other")).unwrap();
    let output = atlas(&[
        "--mapping",
        mapping.to_str().unwrap(),
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("column \"answer_framed\""), "{stderr}");
    assert!(!out.exists());
}

fn lmeval_fixture() -> Vec<String> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/logs/lm-eval");
    let mut files: Vec<String> = std::fs::read_dir(&d)
        .expect("fixture dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl" || x == "json"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

#[test]
fn atlas_import_detects_lm_eval_logs_and_atlas_likelihood_prints_crows_preference() {
    // Expected numbers: tests/import/expected_logs.json (the pandas reading of the same files).
    let d = dir("lmeval");
    let out = d.join("bundle.json");
    let mut args: Vec<String> = lmeval_fixture();
    args.extend(["-o".to_string(), out.display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = atlas(&refs);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("format: lm-eval"), "{stdout}");
    assert!(
        stdout.contains("likelihood readouts: 10 cells (10 of them without a Selection)"),
        "{stdout}"
    );
    let audit = Audit::from_json(&std::fs::read_to_string(&out).unwrap()).expect("valid bundle");
    assert_eq!(audit.cells, 48);
    let lk = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["likelihood", out.to_str().unwrap(), "--json"])
        .output()
        .expect("runs atlas likelihood");
    assert!(
        lk.status.success(),
        "{}",
        String::from_utf8_lossy(&lk.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&lk.stdout).expect("json");
    assert_eq!(v["basis"], "sum");
    assert_eq!(v["models"][0]["preferred"], 8);
    assert_eq!(v["models"][0]["valid"], 10);
    assert_eq!(v["models"][0]["share"], 0.8);
}

#[test]
fn atlas_import_refuses_a_mix_of_log_and_table_inputs_and_a_file_that_is_not_the_forced_format() {
    let d = dir("mix");
    let csv = d.join("in.csv");
    std::fs::write(&csv, CSV).unwrap();
    let mut args = lmeval_fixture();
    args.push(csv.display().to_string());
    args.extend(["-o".to_string(), d.join("b.json").display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = atlas(&refs);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("different formats") && stderr.contains("in.csv"),
        "{stderr}"
    );
    let output = atlas(&["--format", "parquet", csv.to_str().unwrap(), "-o", "x.json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("in.csv, (footer)") && stderr.contains("PAR1"),
        "{stderr}"
    );
    // A forced log format names what is wrong with a file that is not that log.
    let output = atlas(&["--format", "inspect", csv.to_str().unwrap(), "-o", "x.json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("in.csv") && stderr.contains("not valid JSON"),
        "{stderr}"
    );
}

#[test]
fn atlas_import_reads_a_polars_zstd_parquet_with_the_csv_mapping_and_previews_its_schema() {
    let d = dir("parquet");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/parquet");
    let input = fixtures.join("polars_zstd.parquet");
    let mapping = fixtures.join("long.mapping.json");
    let out = d.join("bundle.json");
    let output = atlas(&[
        "--mapping",
        mapping.to_str().unwrap(),
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("format: parquet"), "{stdout}");
    // 2 models x 3 system prompts x 12 statements x 5 samples = 360 cells, 12 statements:
    // tests/fixtures/parquet/expected.json (pyarrow).
    let audit = Audit::from_bytes(&std::fs::read(&out).unwrap()).expect("bundle");
    assert_eq!(audit.cells, 360);
    assert_eq!(audit.statements.len(), 12);
    let output = atlas(&["--preview", "--rows", "2", input.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("309 row(s) in 3 row group(s), written by Polars")
            && stdout.contains("agreeability_num")
            && stdout.contains("ZSTD"),
        "{stdout}"
    );
}
