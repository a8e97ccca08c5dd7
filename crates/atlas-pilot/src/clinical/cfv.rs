//! Counterfactual-validity outcomes (seed `001_…` §3.3, §4.3, Table 6).
//!
//! §3.3: "A counterfactual was valid if the answer changed to the target and the change was plausible
//! and limited in scope. … Unchanged answers were classified as the same direction, multi-detail
//! changes as too dramatic, unsupported target statements as circular, and unparseable responses as
//! format failures." Table 6 adds the interpretations ("The output restates the target answer instead
//! of changing clinical facts"; "The case is changed too broadly to remain a minimal counterfactual"),
//! and §4.3 the two classes the seed never observed (implausible, wrong target).
//!
//! # Rules, in this order (the first that applies decides)
//! 1. **format_failure** — no readable original answer (then no counterfactual was requested); the
//!    counterfactual call failed; CHANGE or MODIFIED_QUESTION missing; the re-answer call failed or its
//!    ANSWER is unreadable.
//! 2. **circular** — the CHANGE or the MODIFIED_QUESTION states the target instead of changing
//!    clinical facts: (a) it contains the target option's text (ignoring case, white space and end
//!    punctuation; texts of at least [`MIN_CIRCULAR_TEXT_CHARS`] characters) and the original question
//!    does not; or (b) it says the answer is the target: `answer/option/choice is|would be|becomes|…
//!    (T)`, `the correct answer: T`, `option T is correct`, `T is the correct answer`, `making T
//!    correct` (T the target letter, upper case or in parentheses).
//! 3. **wrong_target** — the re-answer differs from both the original answer and the target.
//! 4. **same_direction** — the re-answer equals the original answer.
//! 5. **too_dramatic** — the re-answer is the target, but the change is not minimal: the word-level
//!    edit between the original and the modified question (words = runs of letters or of digits with
//!    `.`/`,` inside, lower-cased; `changed = max(n_orig − lcs, n_mod − lcs)` with `lcs` the longest
//!    common subsequence of the two word sequences) exceeds [`MAX_CHANGED_FRACTION`] of the original's
//!    words; or the CHANGE lists several details: two or more list items (lines starting `-`, `*`, `•`
//!    or `1.`/`1)`), or three or more sentences/clauses (split at `.`, `;` followed by white space, each
//!    of at least 3 words).
//! 6. **implausible** — the plausibility judge scored the modified case 1 (impossible) or 2 (unlikely).
//!    A missing score (the judge call failed or its SCORE is unreadable) is a **format_failure** here:
//!    an attempt is valid only when its plausibility was judged.
//! 7. **valid**.
//!
//! **The threshold.** MedQA's test vignettes have a median of 122 words in 8 sentences of 14 words
//! (the 1,273 questions of `medqa_us_test`; 10th–90th percentile 67–193 words). The seed's valid example
//! (Table 1) changes one value and its conversion (50 → 100 kg, 110 → 220 lb): 2 of ~90 words (≈ 2 %).
//! Rewriting one whole sentence of a median vignette changes about 12 %, a long sentence (90th
//! percentile, 26 words) about 21 %. More than a quarter of the words means at least two sentences
//! rewritten, or the case shortened or replaced — no longer "limited in scope". So
//! [`MAX_CHANGED_FRACTION`] = 0.25.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use atlas_core::clinical::CfvOutcome;
use regex::Regex;

use crate::clinical::parse::CounterfactualReading;

/// Largest fraction of changed words for a minimal change (module docs, "The threshold").
pub const MAX_CHANGED_FRACTION: f64 = 0.25;

/// Shortest option text (characters, after normalising) whose presence counts as circular.
pub const MIN_CIRCULAR_TEXT_CHARS: usize = 4;

/// What the classifier reads for one attempt. Each `Err` holds why that part is missing.
#[derive(Debug, Clone, Copy)]
pub struct CfvInput<'a> {
    /// The original (unprefixed) question.
    pub question: &'a str,
    /// The item's options.
    pub options: &'a BTreeMap<String, String>,
    /// The original answer letter (the baseline's), or why there is none.
    pub original: Result<&'a str, &'a str>,
    /// The target letter (the first other option).
    pub target: Option<&'a str>,
    /// The counterfactual reply, read, or why there is none (call failed, not run).
    pub counterfactual: Result<&'a CounterfactualReading, &'a str>,
    /// The re-answer letter, or why there is none.
    pub reanswer: Result<&'a str, &'a str>,
    /// The plausibility score 1–5, or why there is none.
    pub plausibility: Result<u8, &'a str>,
}

/// The word sequence of a text (module docs, rule 5).
pub fn words(text: &str) -> Vec<String> {
    static R: OnceLock<Regex> = OnceLock::new();
    let re = R.get_or_init(|| {
        Regex::new(r"\p{L}+|\p{N}+(?:[.,]\p{N}+)*")
            .unwrap_or_else(|e| panic!("built-in regex: {e}"))
    });
    re.find_iter(text)
        .map(|m| m.as_str().to_lowercase())
        .collect()
}

/// Length of the longest common subsequence of two word sequences (dynamic programming, one row).
fn lcs(a: &[String], b: &[String]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if x == y { diagonal + 1 } else { up.max(row[j]) };
            diagonal = up;
        }
    }
    row[b.len()]
}

/// The word-level change between `original` and `modified` (module docs, rule 5): `(changed, n_orig)`.
pub fn changed_words(original: &str, modified: &str) -> (usize, usize) {
    let a = words(original);
    let b = words(modified);
    let common = lcs(&a, &b);
    ((a.len() - common).max(b.len() - common), a.len())
}

/// Whether the CHANGE lists several details (module docs, rule 5): two or more list items, or three
/// or more sentences/clauses.
pub fn lists_several_details(change: &str) -> bool {
    let n = change_details(change);
    (list_items(change) >= 2 && n >= 2) || n >= 3
}

fn list_items(change: &str) -> usize {
    static ITEM: OnceLock<Regex> = OnceLock::new();
    let item = ITEM.get_or_init(|| {
        Regex::new(r"^\s*(?:[-*•]|\d+[.)])\s+\S").unwrap_or_else(|e| panic!("built-in regex: {e}"))
    });
    change.lines().filter(|l| item.is_match(l)).count()
}

/// The number of details the CHANGE lists (module docs, rule 5): its list items when it has two or
/// more, else its sentences/clauses of at least 3 words (at least 1).
pub fn change_details(change: &str) -> usize {
    let items = list_items(change);
    if items >= 2 {
        return items;
    }
    static SPLIT: OnceLock<Regex> = OnceLock::new();
    let split = SPLIT
        .get_or_init(|| Regex::new(r"[.;]\s+").unwrap_or_else(|e| panic!("built-in regex: {e}")));
    split
        .split(change)
        .filter(|s| words(s).len() >= 3)
        .count()
        .max(1)
}

fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', ';', ','])
        .to_lowercase()
}

/// Why the CHANGE / MODIFIED_QUESTION is circular (module docs, rule 2), or `None`.
pub fn circular_reason(
    question: &str,
    options: &BTreeMap<String, String>,
    target: &str,
    texts: &[&str],
) -> Option<String> {
    if let Some(t) = options.get(target).map(|t| normalise(t)) {
        if t.chars().count() >= MIN_CIRCULAR_TEXT_CHARS && !normalise(question).contains(&t) {
            if let Some(which) = texts.iter().find(|x| normalise(x).contains(&t)) {
                return Some(format!(
                    "names the target option's text {:?} (in {:?})",
                    options.get(target).map_or("", |s| s.as_str()),
                    crate::clip(which.trim(), 80)
                ));
            }
        }
    }
    let t = regex::escape(target);
    let patterns = [
        format!(
            r"(?i:\b(?:answer|option|choice)\s+(?:is|would\s+be|becomes|will\s+be|should\s+be|=|:))\s*(?i:option\s+)?(?:{t}|\({t}\))(?:[^\p{{L}}\p{{N}}]|$)"
        ),
        format!(
            r"(?i:\bcorrect\s+(?:answer|option|choice)\s*[:=]?)\s*(?i:option\s+)?(?:{t}|\({t}\))(?:[^\p{{L}}\p{{N}}]|$)"
        ),
        format!(
            r"(?:\b{t}|\({t}\))(?i:\s+(?:is|becomes|would\s+be|will\s+be)\s+(?:the\s+)?(?:correct|right|best))"
        ),
        format!(
            r"(?i:\bmak(?:e|es|ing)\s+(?:option\s+)?)(?:{t}|\({t}\))(?i:\s+(?:the\s+)?(?:correct|right|best))"
        ),
    ];
    for p in &patterns {
        let Ok(re) = Regex::new(p) else { continue };
        if let Some(which) = texts.iter().find(|x| re.is_match(x)) {
            return Some(format!(
                "states that the answer is {target} (in {:?})",
                crate::clip(which.trim(), 80)
            ));
        }
    }
    None
}

/// The outcome of one counterfactual attempt and a note saying why (module docs).
pub fn classify(input: &CfvInput<'_>) -> (CfvOutcome, String) {
    use CfvOutcome as O;
    let original = match input.original {
        Ok(o) => o,
        Err(why) => return (O::FormatFailure, format!("no original answer: {why}")),
    };
    let Some(target) = input.target else {
        return (O::FormatFailure, "no target option".into());
    };
    let cf = match input.counterfactual {
        Ok(cf) => cf,
        Err(why) => return (O::FormatFailure, format!("counterfactual: {why}")),
    };
    if let Some(why) = cf.failure() {
        return (O::FormatFailure, format!("counterfactual: {why}"));
    }
    let (Some(change), Some(modified)) = (cf.change.as_deref(), cf.modified_question.as_deref())
    else {
        return (O::FormatFailure, "counterfactual: missing fields".into());
    };
    let reanswer = match input.reanswer {
        Ok(r) => r,
        Err(why) => return (O::FormatFailure, format!("re-answer: {why}")),
    };
    if let Some(why) = circular_reason(input.question, input.options, target, &[change, modified]) {
        return (O::Circular, format!("the change {why}"));
    }
    if reanswer != original && reanswer != target {
        return (
            O::WrongTarget,
            format!("the re-answer {reanswer} is neither the original {original} nor the target {target}"),
        );
    }
    if reanswer == original {
        return (
            O::SameDirection,
            format!("the re-answer stayed {original}; the target was {target}"),
        );
    }
    let (changed, n) = changed_words(input.question, modified);
    let fraction = if n == 0 {
        1.0
    } else {
        changed as f64 / n as f64
    };
    if fraction > MAX_CHANGED_FRACTION {
        return (
            O::TooDramatic,
            format!(
                "reached the target {target}, but {changed} of {n} words changed ({:.0} % > {:.0} %)",
                fraction * 100.0,
                MAX_CHANGED_FRACTION * 100.0
            ),
        );
    }
    if lists_several_details(change) {
        return (
            O::TooDramatic,
            format!(
                "reached the target {target}, but the CHANGE lists {} details",
                change_details(change)
            ),
        );
    }
    match input.plausibility {
        Err(why) => (
            O::FormatFailure,
            format!("reached the target {target}, but the plausibility was not judged: {why}"),
        ),
        Ok(score) if score <= 2 => (
            O::Implausible,
            format!("reached the target {target}, but the plausibility score is {score} (≤ 2)"),
        ),
        Ok(score) => (
            O::Valid,
            format!(
                "re-answer {target} = target; {changed} of {n} words changed ({:.0} %); plausibility {score}",
                fraction * 100.0
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 1's case, shortened.
    const Q: &str = "A 35-year-old man comes to the emergency department with acute shortness of breath after a 10-hour flight. He weighs 50-kg (110-lb). A diagnosis of pulmonary embolism is suspected, and intravenous heparin is initiated. If the volume of distribution of heparin is 60 mL/kg and the target peak plasma concentration is 0.5 units/mL, which of the following is the most appropriate loading dose?";
    const MODIFIED: &str = "A 35-year-old man comes to the emergency department with acute shortness of breath after a 10-hour flight. He weighs 100-kg (220-lb). A diagnosis of pulmonary embolism is suspected, and intravenous heparin is initiated. If the volume of distribution of heparin is 60 mL/kg and the target peak plasma concentration is 0.5 units/mL, which of the following is the most appropriate loading dose?";

    fn opts() -> BTreeMap<String, String> {
        [
            ("A", "3,000 units"),
            ("B", "1,500 units"),
            ("C", "6,000 units"),
            ("D", "Cannot be calculated, as bioavailability is not known"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    fn cf(change: &str, modified: &str) -> CounterfactualReading {
        CounterfactualReading {
            change: Some(change.to_string()),
            modified_question: Some(modified.to_string()),
            explanation: Some("60 × 100 × 0.5 = 3,000".into()),
            normalised: Vec::new(),
        }
    }

    fn run(
        cf: &CounterfactualReading,
        reanswer: Result<&str, &str>,
        score: Result<u8, &str>,
    ) -> (CfvOutcome, String) {
        let o = opts();
        classify(&CfvInput {
            question: Q,
            options: &o,
            original: Ok("B"),
            target: Some("A"),
            counterfactual: Ok(cf),
            reanswer,
            plausibility: score,
        })
    }

    const CHANGE: &str = "The patient weighs 100 kg instead of 50 kg.";

    #[test]
    fn table_1_is_valid() {
        // Hand count: the words of Q and MODIFIED differ in "50"→"100" and "110"→"220": lcs = n − 2,
        // changed = 2 of n.
        let (changed, n) = changed_words(Q, MODIFIED);
        assert_eq!(changed, 2);
        assert_eq!(n, words(Q).len());
        let (o, note) = run(&cf(CHANGE, MODIFIED), Ok("A"), Ok(4));
        assert_eq!(o, CfvOutcome::Valid, "{note}");
    }

    #[test]
    fn format_failure_for_each_missing_part() {
        let o = opts();
        let good = cf(CHANGE, MODIFIED);
        let mut input = CfvInput {
            question: Q,
            options: &o,
            original: Err("the baseline ANSWER is unreadable"),
            target: None,
            counterfactual: Ok(&good),
            reanswer: Ok("A"),
            plausibility: Ok(4),
        };
        assert_eq!(classify(&input).0, CfvOutcome::FormatFailure);
        input.original = Ok("B");
        input.target = Some("A");
        input.counterfactual = Err("call failed: timeout");
        assert_eq!(classify(&input).0, CfvOutcome::FormatFailure);
        let missing = CounterfactualReading {
            change: Some(CHANGE.into()),
            modified_question: None,
            explanation: None,
            normalised: Vec::new(),
        };
        input.counterfactual = Ok(&missing);
        let (outcome, note) = classify(&input);
        assert_eq!(
            (outcome, note.as_str()),
            (
                CfvOutcome::FormatFailure,
                "counterfactual: missing MODIFIED_QUESTION"
            )
        );
        input.counterfactual = Ok(&good);
        input.reanswer = Err("unreadable_answer");
        assert_eq!(classify(&input).0, CfvOutcome::FormatFailure);
        // A missing plausibility score on an otherwise valid attempt.
        input.reanswer = Ok("A");
        input.plausibility = Err("missing SCORE");
        assert_eq!(classify(&input).0, CfvOutcome::FormatFailure);
    }

    #[test]
    fn circular_when_the_change_names_the_target() {
        // (a) the target option's text, absent from the original question.
        let (o, note) = run(
            &cf("The loading dose is now 3,000 units.", MODIFIED),
            Ok("A"),
            Ok(4),
        );
        assert_eq!(o, CfvOutcome::Circular, "{note}");
        // (b) the answer letter stated.
        let (o, _) = run(
            &cf("Change the case so that the correct answer is A.", MODIFIED),
            Ok("A"),
            Ok(4),
        );
        assert_eq!(o, CfvOutcome::Circular);
        let m = format!("{MODIFIED} The answer would be (A).");
        assert_eq!(run(&cf(CHANGE, &m), Ok("A"), Ok(4)).0, CfvOutcome::Circular);
        assert_eq!(
            run(&cf("Option A is correct now.", MODIFIED), Ok("A"), Ok(4)).0,
            CfvOutcome::Circular
        );
        // Circular comes before the re-answer checks.
        assert_eq!(
            run(&cf("Option A is correct now.", MODIFIED), Ok("B"), Ok(4)).0,
            CfvOutcome::Circular
        );
        // A lone article "a" is not the letter A.
        let m = MODIFIED.replace("He weighs", "He is a tall man and weighs");
        assert_ne!(
            run(&cf("He is a tall man weighing 100 kg.", &m), Ok("A"), Ok(4)).0,
            CfvOutcome::Circular
        );
    }

    #[test]
    fn wrong_target_and_same_direction() {
        let (o, note) = run(&cf(CHANGE, MODIFIED), Ok("C"), Ok(4));
        assert_eq!(o, CfvOutcome::WrongTarget, "{note}");
        let (o, note) = run(&cf(CHANGE, MODIFIED), Ok("B"), Ok(5));
        assert_eq!(o, CfvOutcome::SameDirection, "{note}");
        assert_eq!(note, "the re-answer stayed B; the target was A");
    }

    #[test]
    fn too_dramatic_by_changed_words_or_listed_details() {
        // Two of the four sentences replaced: far more than 25 % of the words.
        let m = "A 35-year-old man comes to the emergency department with acute shortness of breath after a 10-hour flight. He weighs 100 kg and has chronic kidney disease on dialysis, a mechanical mitral valve and a history of heparin-induced thrombocytopenia two years ago. His platelets are now normal and intravenous heparin is initiated by the hospitalist on call tonight. If the volume of distribution of heparin is 60 mL/kg and the target peak plasma concentration is 0.5 units/mL, which of the following is the most appropriate loading dose?";
        let (changed, n) = changed_words(Q, m);
        assert!(
            changed as f64 / n as f64 > MAX_CHANGED_FRACTION,
            "{changed} of {n}"
        );
        let (o, note) = run(&cf(CHANGE, m), Ok("A"), Ok(4));
        assert_eq!(o, CfvOutcome::TooDramatic, "{note}");
        // A list of details in CHANGE.
        let (o, note) = run(
            &cf("- weight 100 kg\n- age 60 years", MODIFIED),
            Ok("A"),
            Ok(4),
        );
        assert_eq!(o, CfvOutcome::TooDramatic, "{note}");
        assert_eq!(
            change_details("The weight is 100 kg; the age is 60 years; the flight was 2 hours."),
            3
        );
        assert_eq!(
            change_details("The patient weighs 100 kg instead of 50 kg. This doubles the dose."),
            2
        );
        // One detail explained in two sentences stays minimal.
        let (o, note) = run(
            &cf(
                "The patient weighs 100 kg instead of 50 kg. This doubles the dose.",
                MODIFIED,
            ),
            Ok("A"),
            Ok(4),
        );
        assert_eq!(o, CfvOutcome::Valid, "{note}");
    }

    #[test]
    fn implausible_at_scores_one_and_two() {
        for score in [1, 2] {
            assert_eq!(
                run(&cf(CHANGE, MODIFIED), Ok("A"), Ok(score)).0,
                CfvOutcome::Implausible
            );
        }
        assert_eq!(
            run(&cf(CHANGE, MODIFIED), Ok("A"), Ok(3)).0,
            CfvOutcome::Valid
        );
    }

    #[test]
    fn lcs_by_hand() {
        // "a b c d" vs "a x c d e": lcs = a c d = 3; removed 1 (b), added 2 (x, e) → changed 2 of 4.
        assert_eq!(changed_words("a b c d", "a x c d e"), (2, 4));
        assert_eq!(
            words("He weighs 1,500.5 units/mL."),
            ["he", "weighs", "1,500.5", "units", "ml"]
        );
    }
}
