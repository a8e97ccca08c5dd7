//! The glossary (`atlas_core::glossary`): every entry is complete and cites a section that exists in
//! its paper, every `<Term id="…">` the app uses names an entry, and `docs/glossary.md` is the
//! entries' Markdown.
//!
//! Regenerate the doc after editing the entries:
//! `ATLAS_WRITE_GLOSSARY=1 cargo test -p atlas-core --test glossary`.

use atlas_core::glossary::{find, to_markdown, ENTRIES};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The section numbers of the BiAxisBias paper (arXiv 2605.09041), copied by hand from its headings
/// (`## 3 BiAxisBias Design`, `### 3.1 Measurement Target`, …, `## 6 Governance Implications and
/// Limitations` (no subsections), …, `### H.3 Responsible Use`).
const BIAXIS_SECTIONS: &[&str] = &[
    "1", "2.1", "2.2", "2.3", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "4.1", "4.2", "4.3", "4.4",
    "4.5", "4.6", "5.1", "5.2", "5.3", "5.4", "6", "B.1", "B.2", "B.3", "B.4", "C.1", "C.2", "C.3",
    "D.1", "D.2", "D.3", "E.1", "E.2", "E.3", "E.4", "F.1", "F.2", "G.1", "G.2", "H.1", "H.2",
    "H.3",
];

/// The section numbers of the clinical audit paper (arXiv 2609.32807), from its headings
/// ("3.1 Evaluation Design" … "3.5 Metrics and Statistical Analysis", "4.2" … "4.6", "5.1" … "5.5").
const CLINICAL_SECTIONS: &[&str] = &[
    "2.1", "2.2", "2.3", "2.4", "3.1", "3.2", "3.3", "3.4", "3.5", "4.2", "4.3", "4.4", "4.5",
    "4.6", "5.1", "5.2", "5.3", "5.4", "5.5",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `§X.Y` section numbers cited in a source line.
fn cited_sections(source: &str) -> Vec<String> {
    source
        .split('§')
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect::<String>()
                .trim_end_matches('.')
                .to_string()
        })
        .collect()
}

#[test]
fn every_entry_has_an_id_a_term_a_definition_a_paper_term_and_a_source() {
    for e in ENTRIES {
        assert!(
            !e.id.is_empty()
                && e.id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "glossary id {:?} must be lowercase letters, digits and hyphens",
            e.id
        );
        assert!(!e.term.trim().is_empty(), "{}: empty term", e.id);
        assert!(
            e.definition.split_whitespace().count() >= 8,
            "{}: the definition is missing or too short to explain anything: {:?}",
            e.id,
            e.definition
        );
        assert!(!e.paper_term.trim().is_empty(), "{}: no paper term", e.id);
        assert!(!e.source.trim().is_empty(), "{}: no source", e.id);
    }
}

#[test]
fn glossary_ids_are_unique_and_find_returns_each_entry() {
    let mut seen = BTreeSet::new();
    for e in ENTRIES {
        assert!(seen.insert(e.id), "glossary id {} appears twice", e.id);
        assert_eq!(find(e.id), Some(e));
    }
    assert_eq!(find("no-such-term"), None);
}

#[test]
fn the_terms_the_issue_asks_for_are_all_defined() {
    // Issue 15 item 4 and its brief: the glossary covers these.
    for id in [
        "selection",
        "rationale",
        "ber",
        "abstain",
        "condition",
        "template",
        "repeat",
        "reference-score",
        "audit-design",
        "concentrated",
        "srs",
        "stratified",
        "balanced",
        "tau-b",
        "inversion",
        "cfv",
        "edd",
        "judge-codes",
        "statement",
        "random-seed",
        "repeat-policy",
        "pp",
    ] {
        assert!(find(id).is_some(), "the glossary has no entry {id}");
    }
}

#[test]
fn every_source_names_its_paper_never_seed_and_cites_a_section_that_exists() {
    for e in ENTRIES {
        let src = e.source;
        assert!(
            !src.to_lowercase().contains("seed"),
            "{}: the source says \"seed\" (ambiguous); name the paper: {src}",
            e.id
        );
        let sections = if src.starts_with("the BiAxisBias paper") {
            BIAXIS_SECTIONS
        } else if src.starts_with("the clinical audit paper") {
            CLINICAL_SECTIONS
        } else {
            panic!(
                "{}: a source starts with the paper it cites (\"the BiAxisBias paper\" or \"the clinical audit paper\"): {src}",
                e.id
            );
        };
        let cited = cited_sections(src);
        assert!(
            !cited.is_empty(),
            "{}: the source cites no section (§): {src}",
            e.id
        );
        for s in cited {
            assert!(
                sections.contains(&s.as_str()),
                "{}: §{s} is not a section of the paper it names ({src})",
                e.id
            );
        }
    }
}

#[test]
fn cited_sections_reads_section_numbers_after_the_section_sign() {
    // Hand-read: "§3.5, Eq. 4, and §D.1" cites 3.5 and D.1.
    assert_eq!(
        cited_sections("the BiAxisBias paper §3.5, Eq. 4, and §D.1"),
        ["3.5", "D.1"]
    );
    assert_eq!(cited_sections("§1 and §3.5."), ["1", "3.5"]);
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_term_id_used_in_the_app_is_a_glossary_entry() {
    let mut files = Vec::new();
    rust_files(&repo_root().join("src"), &mut files);
    assert!(!files.is_empty(), "no app sources found under src/");
    let mut used = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read an app source file");
        for (i, _) in text.match_indices("<Term id=\"") {
            let rest = &text[i + "<Term id=\"".len()..];
            let id = rest.split('"').next().unwrap_or_default();
            used += 1;
            assert!(
                find(id).is_some(),
                "{}: <Term id=\"{id}\"> names no glossary entry",
                file.display()
            );
        }
    }
    assert!(
        used >= 10,
        "the app uses <Term> only {used} times; titles and labels should link their terms"
    );
}

#[test]
fn docs_glossary_md_is_the_entries_markdown() {
    let path = repo_root().join("docs/glossary.md");
    let expected = to_markdown();
    if std::env::var_os("ATLAS_WRITE_GLOSSARY").is_some() {
        std::fs::write(&path, &expected).expect("write docs/glossary.md");
    }
    let doc = std::fs::read_to_string(&path).expect("docs/glossary.md exists");
    assert!(
        doc == expected,
        "docs/glossary.md differs from atlas_core::glossary::to_markdown(); regenerate with \
         ATLAS_WRITE_GLOSSARY=1 cargo test -p atlas-core --test glossary"
    );
    for e in ENTRIES {
        assert!(
            doc.contains(&format!("id=\"glossary-{}\"", e.id)),
            "{} has no anchor",
            e.id
        );
    }
}
