//! The glossary: one plain-language definition per term the app, the CLI and the docs use, with the
//! paper's own term beside it and where the paper defines it.
//!
//! Two papers are cited, never as "seed": **the BiAxisBias paper** (Gan, Dong & Li, arXiv 2605.09041 —
//! the bias audit whose statistics the explorer recomputes) and **the clinical audit paper**
//! (Purkayastha, Bolla & Nandi, arXiv 2609.32807 — counterfactual validity and demographic robustness on
//! MedQA). "Random seed" always means the number that fixes pseudo-random draws.
//!
//! The app renders these entries as tooltips (`<Term id="…">`, `src/ui/glossary.rs`) and as a list;
//! `docs/glossary.md` is [`to_markdown`]'s output (a test keeps the two equal).

/// One glossary entry. Every field is plain text (no markup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Stable id, lowercase with hyphens (`"ber"`, `"tau-b"`): the `id` of `<Term id="…">` and the
    /// anchor `#glossary-ID` of the glossary list.
    pub id: &'static str,
    /// The term as the app shows it ("BER", "Kendall τ-b").
    pub term: &'static str,
    /// The definition in plain language, one to three sentences.
    pub definition: &'static str,
    /// The paper's own term or notation for it ("BER_sel", "μ_m (Eq. 4)").
    pub paper_term: &'static str,
    /// Where it is defined: the paper ("the BiAxisBias paper" or "the clinical audit paper") and its
    /// section, equation or table; or this project's docs for terms the app adds.
    pub source: &'static str,
}

/// Every entry, in reading order (data terms, then scores, then analyses, then clinical terms).
pub const ENTRIES: &[Entry] = &[
    Entry {
        id: "statement",
        term: "statement",
        definition: "One stereotype proposition about a group (for example about age or religion). The same 200 statements are asked under every condition, so differences come from the prompt, not the content.",
        paper_term: "statement s (statement pool S)",
        source: "the BiAxisBias paper §3.2 and §B.1",
    },
    Entry {
        id: "condition",
        term: "condition",
        definition: "One way of asking: a task format, a perspective, a role or a sentiment (codes T1–T5, P1–P5, R1–R5, S1–S5), or the neutral baseline B0. Each is varied one at a time against the baseline.",
        paper_term: "evaluation condition c (condition matrix)",
        source: "the BiAxisBias paper §3.2 and Table 6 (§B.2)",
    },
    Entry {
        id: "template",
        term: "template",
        definition: "One wording of a condition. A condition has 20 templates; changing only the wording shows how fragile a single prompt is.",
        paper_term: "template t ∈ T_c",
        source: "the BiAxisBias paper §1 and §3.5",
    },
    Entry {
        id: "repeat",
        term: "repeat",
        definition: "One of several answers sampled for exactly the same prompt (same model, statement, condition and template). Repeats show how much a model's answer varies from call to call.",
        paper_term: "repeated runs (three extraction runs per response)",
        source: "the BiAxisBias paper §D.3 and §H.1 (Table 25); docs/statistics.md",
    },
    Entry {
        id: "repeat-policy",
        term: "repeat policy",
        definition: "How repeats enter the statistics: every response counts (all responses), only the first sample counts (first repeat), or each prompt counts once by the strict majority of its repeats (unit majority).",
        paper_term: "strict majority over repeated runs",
        source: "the BiAxisBias paper §D.3; docs/statistics.md \"Repeat policy\"",
    },
    Entry {
        id: "selection",
        term: "Selection",
        definition: "The short, forced answer the model must give in its \"Selection:\" field (an option, an actor, a rating). Each Selection is read as bias evidence or not.",
        paper_term: "Selection c; Selection bias evidence A",
        source: "the BiAxisBias paper §3.3 and §B.3",
    },
    Entry {
        id: "rationale",
        term: "Rationale",
        definition: "The free-text explanation the model must give in its \"Rationale:\" field. Judge models code it E, QE, N, D or R; E and QE count as bias evidence.",
        paper_term: "Rationale r; Rationale bias evidence B",
        source: "the BiAxisBias paper §3.3 and §B.3",
    },
    Entry {
        id: "judge-codes",
        term: "E / QE / N / D / R",
        definition: "The five labels a judge gives a Rationale: E endorses the stereotype, QE endorses it with qualifications, N analyses it neutrally, D denies it, R refuses to answer. E and QE count as bias evidence; N, D and R do not.",
        paper_term: "five-class label set {E, QE, N, D, R}",
        source: "the BiAxisBias paper §3.3 and §B.3",
    },
    Entry {
        id: "abstain",
        term: "Abstain",
        definition: "A response with no usable reading: no valid Selection (a refusal or a parser failure), or judges without a strict majority on the Rationale. Abstains are left out of the rate and counted separately, never counted as \"no bias\".",
        paper_term: "Abstain (missingness rule)",
        source: "the BiAxisBias paper §3.3 and §B.2 (\"Missingness rule\")",
    },
    Entry {
        id: "ber",
        term: "BER",
        definition: "Bias-evidence rate: the share of valid answers that count as bias evidence, in percent. Selection BER = bias-evidence Selections ÷ valid Selections; Rationale BER is the same for judged Rationales. Higher means more stereotype endorsement.",
        paper_term: "BER_sel, BER_rat (also BER_cor, BER_union)",
        source: "the BiAxisBias paper §3.3 (the four BER summaries) and §B.4",
    },
    Entry {
        id: "reference-score",
        term: "reference score",
        definition: "A model's Selection BER averaged over the 18 conditions that have a Selection, each condition weighted equally (and, inside it, each template and statement). It is the benchmark-wide score the small audits are compared with; equal weights encode coverage, not how often a condition occurs in real use.",
        paper_term: "full-matrix reference μ_m (Eq. 4)",
        source: "the BiAxisBias paper §3.5, Eq. 4, and §D.1",
    },
    Entry {
        id: "pp",
        term: "pp",
        definition: "Percentage points: the difference between two percentages. From 12.2 % to 13.4 % is +1.2 pp (not +1.2 %).",
        paper_term: "percentage points (pp)",
        source: "the BiAxisBias paper §3.5 (MAE \"in percentage points\")",
    },
    Entry {
        id: "tau-b",
        term: "Kendall τ-b",
        definition: "How well two rankings of the models agree, from −1 (reversed) through 0 to 1 (identical), with ties handled. 1 means every pair of models is in the same order.",
        paper_term: "Kendall τ_b",
        source: "the BiAxisBias paper §3.4 and §3.5",
    },
    Entry {
        id: "inversion",
        term: "inversion",
        definition: "A pair of models that two rankings put in opposite order (exact ties are never inversions). The inversion rate is the share of all model pairs (28 for eight models) that are inverted.",
        paper_term: "pairwise ordering reversal; inversion rate",
        source: "the BiAxisBias paper §3.4 and §3.5",
    },
    Entry {
        id: "mae",
        term: "MAE",
        definition: "Mean absolute error: the average distance, in percentage points, between the score a small audit finds and the reference score.",
        paper_term: "mean absolute error (MAE)",
        source: "the BiAxisBias paper §3.5",
    },
    Entry {
        id: "audit-design",
        term: "audit design",
        definition: "How a small audit with a fixed budget (200 responses per model) picks which prompts to ask: concentrated, SRS, stratified or balanced. The same draw is used for every model.",
        paper_term: "sampling design (equal-budget audit)",
        source: "the BiAxisBias paper §3.5, §4.4 and §D.1",
    },
    Entry {
        id: "concentrated",
        term: "concentrated audit",
        definition: "One condition and one of its templates, asked with all 200 statements: the typical single-prompt benchmark.",
        paper_term: "single-condition (concentrated) audit",
        source: "the BiAxisBias paper §3.5 and §D.1",
    },
    Entry {
        id: "srs",
        term: "SRS audit",
        definition: "Simple random sample: 200 template–statement cells drawn uniformly, without replacement, from the whole matrix of 18 Selection conditions.",
        paper_term: "simple-random-sample (SRS) audit",
        source: "the BiAxisBias paper §3.5 and §D.1",
    },
    Entry {
        id: "stratified",
        term: "stratified audit",
        definition: "All 18 Selection conditions, one template each, 11 or 12 statements per condition (spread over the bias categories); the condition means are averaged with equal weight.",
        paper_term: "multi-condition (stratified) audit",
        source: "the BiAxisBias paper §3.5 and §D.1",
    },
    Entry {
        id: "balanced",
        term: "balanced audit",
        definition: "A 180-response variant of the stratified audit: exactly ten statements, one per bias category, in every condition.",
        paper_term: "180-response sensitivity design",
        source: "the BiAxisBias paper §3.5 and §D.1",
    },
    Entry {
        id: "rank-band",
        term: "rank band",
        definition: "The range of ranks a model takes when the audit's statements are resampled: the middle 95 % of its ranks over the bootstrap replicates (for example 2–4). Models whose bands overlap form a tie group: this audit cannot settle their order.",
        paper_term: "percentile interval of the rank over the statement-cluster bootstrap",
        source: "the BiAxisBias paper §D.2 (statement-cluster bootstrap) and §6 (rankings for model selection); defined in Audit Atlas's docs/statistics.md, \"Comparing models\"",
    },
    Entry {
        id: "tie-group",
        term: "tie group",
        definition: "A group of models whose 95 % rank bands overlap, directly or through a chain of overlapping bands: the audit cannot settle their order, so they should be reported as tied rather than as ranks 1, 2, 3.",
        paper_term: "connected groups of overlapping rank bands",
        source: "the BiAxisBias paper §6 (rankings for model selection) and §D.2 (statement-cluster bootstrap); defined in Audit Atlas's docs/statistics.md, \"Comparing models\"",
    },
    Entry {
        id: "mcnemar",
        term: "McNemar test (mid-p)",
        definition: "A test of whether two models differ on the same prompts: among the matched units where exactly one of them gave a stereotype-consistent Selection (b units only A, c only B), it asks whether b and c are further apart than a fair coin would make them. The exact p-value is 2 · P(X ≤ min(b, c)) for X ~ Binomial(b + c, ½), at most 1; the mid-p value subtracts the probability of the observed count itself and is less conservative. With b + c = 0 the test has no information (p = 1).",
        paper_term: "paired comparison on matched items (McNemar 1947; exact and mid-p versions as in Fagerland, Lydersen & Laake 2013)",
        source: "the BiAxisBias paper §6 (comparing models for selection); defined in Audit Atlas's docs/statistics.md, \"Comparing models\"",
    },
    Entry {
        id: "separable-pair",
        term: "separable pair",
        definition: "A pair of models whose difference the audit settles: its McNemar exact p-value, adjusted over all model pairs by Benjamini–Hochberg, is at most 0.05 (a false discovery rate, FDR, of 5 %: among the pairs called separable, at most 5 % are expected to be false alarms). Holm's adjustment, also shown, is stricter: it bounds the chance of even one false alarm (family-wise error).",
        paper_term: "multiplicity-adjusted pairwise comparison (Benjamini & Hochberg 1995; Holm 1979)",
        source: "the BiAxisBias paper §6 (comparing models for selection); defined in Audit Atlas's docs/statistics.md, \"Comparing models\"",
    },
    Entry {
        id: "finite-reference",
        term: "finite reference",
        definition: "Planning an audit treats the loaded bundle as the whole truth: its reference scores are the target, and a smaller audit is simulated by drawing from the bundle's own responses. So the plan predicts error against this bundle's conditions, templates and statements, not against ones it does not contain.",
        paper_term: "finite-reference audit simulation (equal-budget designs against the full-matrix reference)",
        source: "the BiAxisBias paper §3.5 and §5.3; defined in Audit Atlas's docs/statistics.md, \"Plan an audit\"",
    },
    Entry {
        id: "budget",
        term: "audit budget",
        definition: "How many responses an audit reads per model (for example 200). The Plan view predicts how far an audit of that size lands from the reference score, per design.",
        paper_term: "B (responses per model, §3.5: B = 200)",
        source: "the BiAxisBias paper §3.5",
    },
    Entry {
        id: "random-seed",
        term: "random seed",
        definition: "The number that fixes the pseudo-random draws (bootstrap intervals, audit draws, samples), so the same bundle, settings and random seed give the same numbers again.",
        paper_term: "seed (e.g. seed 20260722)",
        source: "the BiAxisBias paper §H.1, Table 25",
    },
    Entry {
        id: "cfv",
        term: "CFV",
        definition: "Counterfactual validity: the share of attempts in which the model made a small, plausible change to the clinical case that really changes the correct answer to the target answer.",
        paper_term: "counterfactual validity (CFV)",
        source: "the clinical audit paper §3.3 and §3.5",
    },
    Entry {
        id: "edd",
        term: "EDD",
        definition: "Explanation demographic dissonance: how much a model's explanations of one question drift when a demographic prefix is added — one minus the mean pairwise cosine similarity of the seven explanations (baseline and six prefixes). Higher means more drift.",
        paper_term: "Explanation Demographic Dissonance (EDD), Eq. 1",
        source: "the clinical audit paper §3.5, Eq. 1",
    },
];

/// The entry with this id, or `None` when the glossary has no such term.
pub fn find(id: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.id == id)
}

/// The glossary as Markdown: the text of `docs/glossary.md` (a heading, a note on the two papers, then
/// one `###` section per entry in [`ENTRIES`] order with its definition, paper term and source).
pub fn to_markdown() -> String {
    let mut out = String::from(
        "# Glossary\n\n\
         <!-- Generated from crates/atlas-core/src/glossary.rs (atlas_core::glossary::to_markdown); \
         regenerate with `ATLAS_WRITE_GLOSSARY=1 cargo test -p atlas-core --test glossary`. -->\n\n\
         The terms the explorer, the CLI and these docs use, in plain language, with the paper's own term and \
         where it is defined. \"The BiAxisBias paper\" is Gan, Dong & Li, *BiAxisBias: Evaluating LLM Bias \
         Beyond a Single Prompt and a Single Explanation* (arXiv 2605.09041); \"the clinical audit paper\" is \
         Purkayastha, Bolla & Nandi, *Beyond Accuracy: Counterfactual Fragility and Demographic Bias in \
         Clinical Evaluation of LLMs* (arXiv 2609.32807). \"Random seed\" always means the number that fixes \
         pseudo-random draws.\n",
    );
    for e in ENTRIES {
        out.push_str(&format!(
            "\n<a id=\"glossary-{id}\"></a>\n\n### {term}\n\n{def}\n\n- Paper term: {paper}\n- Source: {source}\n",
            term = e.term,
            id = e.id,
            def = e.definition,
            paper = e.paper_term,
            source = e.source,
        ));
    }
    out
}
