//! `atlas convert qpain` on the real Q-Pain-style data (`../shared/data/raw/qpain-demographic-responses`)
//! against the independent Python reference `tests/reference/clinical/minilm_reference.json`, made once
//! by `tests/reference/minilm_reference.py` with sentence-transformers 6.2.0 / PyTorch 2.15.0 and
//! numpy (command and versions in the script's header): the EDD of every model × vignette record
//! (seed `001_…` Eq. 1: 1 − mean pairwise cosine over the variants present, 15, 21 or 28 pairs) as
//! computed by the app's metrics (`atlas_core::clinical::metrics::edd`) from the converted bundle's
//! stored embeddings must agree with numpy's from the sentence-transformers embeddings within 1e-5.
//!
//! The bundle is built in a temporary folder and never kept (the data has no license). Skipped, with
//! a notice, only when the all-MiniLM-L6-v2 weights are not installed (`scripts/setup.sh --test`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use atlas_core::clinical::metrics;
use atlas_core::Audit;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn weights_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("AUDIT_ATLAS_CACHE") {
        Some(c) => PathBuf::from(c).join("minilm"),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/audit-atlas/minilm"),
    };
    dir.join("model.safetensors").is_file().then_some(dir)
}

#[test]
fn qpain_bundle_edd_per_record_matches_the_numpy_sentence_transformers_reference() {
    let Some(weights) = weights_dir() else {
        eprintln!(
            "SKIPPED: the all-MiniLM-L6-v2 weights are not installed; run scripts/setup.sh --test"
        );
        return;
    };
    let out = std::env::temp_dir().join(format!("atlas-qpain-test-{}", std::process::id()));
    let input = repo().join("../shared/data/raw/qpain-demographic-responses");
    let status = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["convert", "qpain", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .arg("--embed-dir")
        .arg(&weights)
        .output()
        .expect("run atlas");
    assert!(
        status.status.success(),
        "atlas convert qpain failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    println!("{}", String::from_utf8_lossy(&status.stdout));
    let text = std::fs::read_to_string(out.join("bundle.json")).expect("bundle.json");
    std::fs::remove_dir_all(&out).ok();
    let audit = Audit::from_json(&text).expect("valid bundle");

    // The design (counted by hand from the CSV headers and row counts, PROVENANCE.md): 3 models,
    // 15 distinct vignettes (OpenBioLLM 10, bio_mistral 11, mistral 15 — the same first rows),
    // 9 variants in the union (6 + asian male/female + indigenous female), one run;
    // responses = 10·6 + 11·8 + 15·7 = 60 + 88 + 105 = 253 of 3·15·9 = 405 cells.
    assert_eq!(audit.model_ids(), ["OpenBioLLM", "bio_mistral", "mistral"]);
    assert_eq!(audit.cells, 405);
    let file: Value = serde_json::from_str(&text).expect("JSON");
    let codes = file["responses"]["selection"]["codes"]
        .as_str()
        .expect("codes");
    assert_eq!(codes.chars().filter(|&c| c != '-').count(), 253);
    assert_eq!(file["clinical"]["baseline"], Value::Null);
    assert_eq!(
        file["clinical"]["embeddings"]["cells"]
            .as_array()
            .map(Vec::len),
        Some(253)
    );
    // No baseline: every Selection is Abstain (evidence null).
    for v in file["responses"]["selection"]["values"]
        .as_array()
        .expect("values")
    {
        assert_eq!(v["evidence"], Value::Null, "{v}");
    }

    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/reference/clinical/minilm_reference.json"))
            .expect("reference JSON"),
    )
    .expect("reference JSON");
    let want: BTreeMap<(String, String), (f64, usize)> = reference["edd"]
        .as_array()
        .expect("edd")
        .iter()
        .map(|r| {
            let conditions = r["conditions"].as_array().map_or(0, Vec::len);
            (
                (
                    r["model"].as_str().expect("model").to_string(),
                    r["statement"].as_str().expect("statement").to_string(),
                ),
                (r["edd"].as_f64().expect("edd"), conditions),
            )
        })
        .collect();
    let got = metrics::edd(&audit);
    assert_eq!(got.len(), want.len(), "records");
    assert_eq!(want.len(), 36, "10 + 11 + 15 records");
    let mut max_delta = 0f64;
    for r in &got {
        let (edd, n) = want
            .get(&(r.model.clone(), r.statement.clone()))
            .unwrap_or_else(|| panic!("record {}/{} not in the reference", r.model, r.statement));
        assert_eq!(r.n_variants, *n, "{}/{}", r.model, r.statement);
        let d = (r.edd - edd).abs();
        max_delta = max_delta.max(d);
        assert!(
            d <= atlas_core::tolerance::FLOAT32_EMBEDDING,
            "{}/{}: EDD {} vs reference {edd} (|Δ| {d:e})",
            r.model,
            r.statement,
            r.edd
        );
    }
    println!(
        "EDD: {} records, max |Δ| vs the numpy/sentence-transformers reference = {max_delta:.3e}",
        got.len()
    );
}
