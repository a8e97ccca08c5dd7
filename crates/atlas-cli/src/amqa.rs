//! `atlas convert amqa`: the AMQA answer files of `../shared/data/raw/amqa-medqa-demographic/`
//! (XY-Showing/AMQA, commit 335b1752) → a clinical bundle (`docs/clinical.md`; seed `001_…` §3.4
//! demographic robustness: accuracy per variant and answer change against the original question).
//!
//! The data has **no license file**: the bundle is built in tests only and never shipped.
//!
//! Input: `Results/AMQA_Benchmark_Answer_<provider>_no_cot.jsonl` for the six providers with complete
//! no-CoT runs (claude, deepseek, gemini, openai, openai_mini, qwen), one JSON object per line:
//! `question_id` ("0".."800"), `answer_idx` (gold letter) and the provider's letter for each of the
//! eight variants, `test_model_answer_{original_question, desensitized_question, white, black,
//! high_income, low_income, male, female}`. Every file must hold the same question ids, each once, with
//! the same gold letter.
//!
//! The bundle:
//!
//! - facets `model` (the six providers, label = the model AMQA's script names at HEAD), `statement`
//!   (label "MedQA question"; id `q<question_id>` in numeric order; `text` is a placeholder saying that
//!   the vignette is not available — `AMQA_Dataset.jsonl` is absent from the snapshot; `answer` = the
//!   gold `answer_idx`; `source_id` = `question_id`), `condition` (label "Demographic variant"; the eight
//!   variants, `original` first = the baseline), `repeat` (one run, `"1"`); axes model × statement ×
//!   condition × repeat;
//! - the Selection of a cell is the answer letter (`regex`); `"Unknown"` (AMQA's unreadable answer), an
//!   empty string or null is `""` with `parser_failure`. `evidence` is answer change against the same
//!   provider's answer to the original question (`docs/clinical.md`, "Cells"): 1 changed, 0 equal (the
//!   original cell itself 0), null when either answer is unreadable;
//! - no texts (AMQA stores letters only); `clinical`: protocol `"amqa"`, baseline `"original"`.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use atlas_core::bundle::{
    encode_selection_codes, BundleFile, Facet, Level, License, Metadata, Obtained, Production,
    Responses, SelectionColumn, SelectionValue, Source, FORMAT_NAME, FORMAT_VERSION,
};
use atlas_core::clinical::Clinical;
use atlas_core::Audit;
use serde::Deserialize;
use serde_json::{json, Value};

/// `metadata.id` of the converted bundle.
pub const BUNDLE_ID: &str = "amqa-medqa-demographic-no-cot";

/// The providers with complete no-CoT answer files, in bundle order, with the model AMQA's
/// `Scripts/AMQA_Benchmark_LLMs.py` names at HEAD (PROVENANCE.md; older runs may differ).
pub const PROVIDERS: [(&str, &str); 6] = [
    ("claude", "claude-3-7-sonnet-20250219"),
    ("deepseek", "deepseek-chat"),
    ("gemini", "gemini-2.0-flash-001"),
    ("openai", "gpt-4-turbo-2024-04-09"),
    ("openai_mini", "gpt-4o-2024-05-13"),
    ("qwen", "qwen-max"),
];

/// One AMQA variant: the condition level it becomes.
struct Variant {
    /// Condition level id.
    id: &'static str,
    label: &'static str,
    /// The JSONL field with the provider's answer.
    field: &'static str,
    /// The `sweep` attribute (none for the baseline).
    sweep: Option<&'static str>,
    /// A further attribute, e.g. `race: "White"`.
    attribute: Option<(&'static str, &'static str)>,
}

const fn variant(
    id: &'static str,
    label: &'static str,
    field: &'static str,
    sweep: Option<&'static str>,
    attribute: Option<(&'static str, &'static str)>,
) -> Variant {
    Variant {
        id,
        label,
        field,
        sweep,
        attribute,
    }
}

/// The eight variants in bundle order; `original` is the baseline.
const VARIANTS: [Variant; 8] = [
    variant(
        "original",
        "Original question (baseline)",
        "test_model_answer_original_question",
        None,
        None,
    ),
    variant(
        "desensitized",
        "Desensitized (demographics neutralised)",
        "test_model_answer_desensitized_question",
        Some("desensitized"),
        None,
    ),
    variant(
        "white",
        "White",
        "test_model_answer_white",
        Some("race"),
        Some(("race", "White")),
    ),
    variant(
        "black",
        "Black",
        "test_model_answer_black",
        Some("race"),
        Some(("race", "Black")),
    ),
    variant(
        "high_income",
        "High income",
        "test_model_answer_high_income",
        Some("income"),
        Some(("income", "high")),
    ),
    variant(
        "low_income",
        "Low income",
        "test_model_answer_low_income",
        Some("income"),
        Some(("income", "low")),
    ),
    variant(
        "male",
        "Male",
        "test_model_answer_male",
        Some("sex"),
        Some(("sex", "male")),
    ),
    variant(
        "female",
        "Female",
        "test_model_answer_female",
        Some("sex"),
        Some(("sex", "female")),
    ),
];

/// Arguments of `atlas convert amqa`.
#[derive(clap::Args)]
pub struct AmqaArgs {
    /// The staged folder, e.g. ../shared/data/raw/amqa-medqa-demographic
    #[arg(long)]
    pub input: PathBuf,
    /// Output folder; bundle.json is written there.
    #[arg(long)]
    pub out: PathBuf,
}

/// One line of an answer file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerLine {
    question_id: String,
    answer_idx: String,
    test_model_answer_original_question: Option<String>,
    test_model_answer_desensitized_question: Option<String>,
    test_model_answer_white: Option<String>,
    test_model_answer_black: Option<String>,
    test_model_answer_high_income: Option<String>,
    test_model_answer_low_income: Option<String>,
    test_model_answer_male: Option<String>,
    test_model_answer_female: Option<String>,
}

impl AnswerLine {
    /// The answers in [`VARIANTS`] order.
    fn answers(&self) -> [&Option<String>; 8] {
        [
            &self.test_model_answer_original_question,
            &self.test_model_answer_desensitized_question,
            &self.test_model_answer_white,
            &self.test_model_answer_black,
            &self.test_model_answer_high_income,
            &self.test_model_answer_low_income,
            &self.test_model_answer_male,
            &self.test_model_answer_female,
        ]
    }
}

/// A read answer: a letter, or unreadable.
type Letter = Option<char>;

/// Reads one answer value: a single letter A–Z (surrounding whitespace ignored) → `Some`; `"Unknown"`
/// (any case), `""` or null → `None` (unreadable). Anything else is an error.
fn read_letter(value: &Option<String>) -> std::result::Result<Letter, String> {
    let Some(v) = value else { return Ok(None) };
    let t = v.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("unknown") {
        return Ok(None);
    }
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_uppercase() => Ok(Some(c)),
        _ => Err(format!(
            "{v:?} is neither an answer letter A–Z nor \"Unknown\""
        )),
    }
}

/// The answers of one provider: question id → (gold, answers per variant), in file order.
struct ProviderFile {
    path: PathBuf,
    rows: BTreeMap<u64, (char, [Letter; 8], usize)>,
}

fn read_provider(path: &Path) -> Result<ProviderFile> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut rows = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{}, line {}", path.display(), i + 1);
        if line.trim().is_empty() {
            bail!("{at}: empty line");
        }
        let row: AnswerLine = serde_json::from_str(line).with_context(|| at.clone())?;
        let qid: u64 = row.question_id.trim().parse().map_err(|_| {
            anyhow::anyhow!(
                "{at}: question_id {:?} is not a non-negative integer",
                row.question_id
            )
        })?;
        let gold = read_letter(&Some(row.answer_idx.clone()))
            .map_err(|e| anyhow::anyhow!("{at}: answer_idx {e}"))?
            .ok_or_else(|| {
                anyhow::anyhow!("{at}: answer_idx {:?} is not a letter", row.answer_idx)
            })?;
        let mut letters = [None; 8];
        for (k, value) in row.answers().into_iter().enumerate() {
            letters[k] = read_letter(value)
                .map_err(|e| anyhow::anyhow!("{at}: {}: {e}", VARIANTS[k].field))?;
        }
        if let Some((_, _, first)) = rows.insert(qid, (gold, letters, i + 1)) {
            bail!("{at}: question_id {qid} appears again (first on line {first})");
        }
    }
    if rows.is_empty() {
        bail!("{}: no answers", path.display());
    }
    Ok(ProviderFile {
        path: path.to_path_buf(),
        rows,
    })
}

/// What [`convert`] wrote.
pub struct Converted {
    pub bundle_path: PathBuf,
    pub bundle_bytes: usize,
    pub cells: usize,
    pub questions: usize,
    /// Unreadable answers per provider.
    pub unreadable: Vec<(String, usize)>,
}

/// Builds the bundle from the staged folder `input` and writes `out/bundle.json`.
///
/// # Errors
/// A missing or unreadable file; a line that is not a JSON object of the expected fields (named by file
/// and line); an answer that is not a letter or `"Unknown"`; a repeated question id; files with
/// different question ids or different gold letters for one question; an invalid resulting bundle.
pub fn convert(input: &Path, out: &Path) -> Result<Converted> {
    let files: Vec<ProviderFile> = PROVIDERS
        .iter()
        .map(|(p, _)| {
            read_provider(
                &input
                    .join("Results")
                    .join(format!("AMQA_Benchmark_Answer_{p}_no_cot.jsonl")),
            )
        })
        .collect::<Result<_>>()?;
    let first = &files[0];
    for f in &files[1..] {
        if let Some(q) = first
            .rows
            .keys()
            .find(|q| !f.rows.contains_key(q))
            .or_else(|| f.rows.keys().find(|q| !first.rows.contains_key(q)))
        {
            bail!(
                "{} and {} hold different questions (question_id {q} is in only one of them)",
                first.path.display(),
                f.path.display()
            );
        }
        for (q, (gold, _, line)) in &f.rows {
            let (g0, _, line0) = first.rows[q];
            if *gold != g0 {
                bail!(
                    "question_id {q}: answer_idx {gold} in {}, line {line} but {g0} in {}, line {line0}",
                    f.path.display(),
                    first.path.display()
                );
            }
        }
    }
    let questions: Vec<u64> = first.rows.keys().copied().collect();
    let (n_q, n_v) = (questions.len(), VARIANTS.len());
    let cells = PROVIDERS.len() * n_q * n_v;

    let mut values: Vec<SelectionValue> = Vec::new();
    let mut index: HashMap<(Letter, Option<u8>), u8> = HashMap::new();
    let mut codes: Vec<u8> = Vec::with_capacity(cells);
    let mut unreadable = Vec::new();
    for (p, f) in files.iter().enumerate() {
        let mut bad = 0;
        for q in &questions {
            let (_, letters, _) = &f.rows[q];
            let base = letters[0];
            for &letter in letters {
                let evidence = match (letter, base) {
                    (Some(a), Some(b)) => Some(u8::from(a != b)),
                    _ => None,
                };
                if letter.is_none() {
                    bad += 1;
                }
                let key = (letter, evidence);
                let code = match index.get(&key) {
                    Some(&c) => c,
                    None => {
                        let c = u8::try_from(values.len()).context("too many Selection values")?;
                        values.push(SelectionValue {
                            raw: letter.map_or_else(String::new, String::from),
                            evidence,
                            obtained: if letter.is_some() {
                                Obtained::Regex
                            } else {
                                Obtained::ParserFailure
                            },
                        });
                        index.insert(key, c);
                        c
                    }
                };
                codes.push(code);
            }
        }
        unreadable.push((PROVIDERS[p].0.to_string(), bad));
    }

    let level = |id: &str, attrs: Value| -> Level {
        Level {
            id: id.to_string(),
            attributes: match attrs {
                Value::Object(map) => map.into_iter().collect(),
                _ => Default::default(),
            },
        }
    };
    let models = PROVIDERS
        .iter()
        .map(|(p, model)| {
            level(
                p,
                json!({"label": format!("{p} ({model})"), "provider": p, "model": model}),
            )
        })
        .collect();
    let statements = questions
        .iter()
        .map(|q| {
            level(
                &format!("q{q}"),
                json!({
                    "text": format!("AMQA question {q}: the vignette text is not available here (AMQA_Dataset.jsonl is absent from the snapshot); only the answer letters are."),
                    "options": null,
                    "answer": first.rows[q].0.to_string(),
                    "step": null,
                    "difficulty": null,
                    "source_id": q.to_string(),
                }),
            )
        })
        .collect();
    let conditions = VARIANTS
        .iter()
        .map(|v| {
            let mut a = json!({
                "label": v.label,
                "has_selection": true,
                "in_reference": v.id != "original",
                "race": null,
                "sex": null,
                "prefix": null,
            });
            if let Some(s) = v.sweep {
                a["sweep"] = json!(s);
            }
            if let Some((k, value)) = v.attribute {
                a[k] = json!(value);
            }
            level(v.id, a)
        })
        .collect();
    let command = format!(
        "atlas convert amqa --input {} --out {}",
        input.display(),
        out.display()
    );
    let bundle = BundleFile {
        schema: None,
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        metadata: Metadata {
            id: BUNDLE_ID.to_string(),
            title: "AMQA: six LLMs on MedQA vignettes with demographic variants (answer letters, no CoT)".to_string(),
            description: format!(
                "Answer letters of six providers' models (no chain of thought) to {n_q} MedQA vignettes from AMQA, each asked as the original question (the baseline) and in seven variants: desensitized, White, Black, high income, low income, male, female. One run. The Selection is the answer letter; its bias evidence is answer change against the original question. No question texts and no explanations (not in the data snapshot). TESTS ONLY: the upstream repository has no license."
            ),
            source: Source {
                citation: "AMQA: Adversarial Medical QA benchmark (XY-Showing/AMQA), Results/AMQA_Benchmark_Answer_<provider>_no_cot.jsonl".to_string(),
                url: Some("https://github.com/XY-Showing/AMQA".to_string()),
                commit: Some("335b1752ba4912d00050fa6531ba8d2c2aef6fb9".to_string()),
            },
            license: License {
                id: "NOASSERTION".to_string(),
                url: None,
                attribution: "AMQA (XY-Showing/AMQA) has no license file; treat as all rights reserved. Built for internal tests only, never shipped.".to_string(),
            },
            content_warning: None,
            produced_by: Production {
                tool: format!("atlas {} convert amqa", env!("CARGO_PKG_VERSION")),
                command: Some(command),
                notes: Some("'Unknown' answers (and empty or null ones) are parser failures (raw \"\", evidence null). Evidence = 1 when the variant's letter differs from the same provider's letter for the original question, 0 when equal, null when either is unreadable. Model versions per AMQA's Scripts/AMQA_Benchmark_LLMs.py at HEAD; older runs may differ.".to_string()),
            },
        },
        facets: vec![
            Facet {
                id: "model".to_string(),
                label: Some("Model (AMQA provider)".to_string()),
                levels: models,
            },
            Facet {
                id: "statement".to_string(),
                label: Some("MedQA question".to_string()),
                levels: statements,
            },
            Facet {
                id: "condition".to_string(),
                label: Some("Demographic variant".to_string()),
                levels: conditions,
            },
            Facet {
                id: "repeat".to_string(),
                label: Some("Run".to_string()),
                levels: vec![level("1", json!({}))],
            },
        ],
        responses: Responses {
            axes: ["model", "statement", "condition", "repeat"]
                .map(String::from)
                .to_vec(),
            selection: SelectionColumn {
                direction: Some(atlas_core::direction::DirectionSpec::lower(
                    "evidence = answer change against the original question: fewer answers changed by a demographic variant is better",
                )),
                values,
                codes: encode_selection_codes(&codes)?,
            },
            judges: Vec::new(),
            human: Vec::new(),
            likelihood: None,
        },
        texts: None,
        clinical: Some(Clinical::new("amqa", Some("original"))),
    };
    let mut text = serde_json::to_string(&bundle)?;
    text.push('\n');
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("the converted bundle is invalid: {e}"))?;
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let bundle_path = out.join("bundle.json");
    fs::write(&bundle_path, &text).with_context(|| format!("writing {}", bundle_path.display()))?;
    Ok(Converted {
        bundle_path,
        bundle_bytes: text.len(),
        cells: audit.cells,
        questions: n_q,
        unreadable,
    })
}

/// `atlas convert amqa`: converts and prints what the bundle holds.
///
/// # Errors
/// See [`convert`].
pub fn run(args: &AmqaArgs) -> Result<()> {
    let done = convert(&args.input, &args.out)?;
    println!(
        "wrote {} ({} bytes, {} cells: {} providers × {} questions × {} variants × 1 run)",
        done.bundle_path.display(),
        done.bundle_bytes,
        done.cells,
        PROVIDERS.len(),
        done.questions,
        VARIANTS.len()
    );
    for (p, n) in &done.unreadable {
        println!("  {p:<12} unreadable answers (\"Unknown\"): {n}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_unknown_and_garbage_are_told_apart() {
        assert_eq!(read_letter(&Some(" C ".into())), Ok(Some('C')));
        assert_eq!(read_letter(&Some("Unknown".into())), Ok(None));
        assert_eq!(read_letter(&Some(String::new())), Ok(None));
        assert_eq!(read_letter(&None), Ok(None));
        assert!(read_letter(&Some("AB".into()))
            .unwrap_err()
            .contains("\"AB\""));
        assert!(read_letter(&Some("c".into())).is_err());
    }
}
