//! The RQ3 panel: the task Selection against the judge-coded stance of its Rationale (seed `000_…` §3.3,
//! §3.6, §5.4, E.2, E.3). It shows the Table 3 layout (2×2 joint table and the four BER summaries) under
//! a chosen coding rule, Table 18 (all four coding rules), the per model × condition cells with whether the
//! dominant direction holds everywhere, Table 19 when the bundle has human labels, and the coverage and
//! Abstain counts, with a line naming the bundle, the rule and the repeat policy. The numbers come from
//! [`atlas_core::rq3::analyze_rq3`] and the tables from [`atlas_core::rq3::tables`], the same code and
//! layout as `atlas analyze-rq3`. RQ3 is cheap (one pass over the cells per rule), so it runs on the page.
//!
//! A bundle without judge columns (the default DecodingTrust bundle) has no Rationale readout; the panel
//! then says so instead of showing tables.

use std::sync::Arc;

use crate::ui::glossary::Term;
use atlas_core::rq3::{analyze_rq3, tables, CodingRule, Direction, Rq3Report, Rq3Settings};
use leptos::prelude::*;

use crate::state::Loaded;
use crate::ui::format::{percent, thousands};

/// The sentence shown when the bundle has no judge columns.
pub const UNAVAILABLE_NO_JUDGES: &str = "RQ3 is not available for this bundle: it has no judge labels of the Rationale (responses.judges). RQ3 compares each response's Selection with the judge-coded stance of its Rationale; without judge columns there is no Rationale readout to compare with. The case inspector below still lists every response with its Selection.";

/// The RQ3 section of one loaded bundle.
#[component]
pub fn Rq3Panel(loaded: Arc<Loaded>) -> impl IntoView {
    let audit_has_judges = !loaded.audit.file.responses.judges.is_empty();
    let intro = view! {
        <p>
            "RQ3 of the BiAxisBias paper: for every response valid in both fields, the Selection's bias evidence A (the mapped task answer) "
            "against the Rationale's bias evidence B (the judges' labels " <Term id="judge-codes">"E/QE = 1, N/D/R = 0"</Term> ", combined by a coding rule). "
            "Same code and tables as " <code>"atlas analyze-rq3"</code> "."
        </p>
    };
    if !audit_has_judges {
        return view! {
            <section class="rq3" id="rq3" aria-labelledby="rq3-title">
                <h2 id="rq3-title">"Does the answer match its explanation? "<Term id="selection">"Selection"</Term>" vs "<Term id="rationale">"Rationale"</Term>" "<span class="paper-ref">"RQ3 · BiAxisBias paper §3.6, Tables 3, 18, 19"</span></h2>
                {intro}
                <p class="unavailable" role="note" id="rq3-unavailable">{UNAVAILABLE_NO_JUDGES}</p>
            </section>
        }
        .into_any();
    }
    let rule = RwSignal::new(CodingRule::default());
    let for_report = loaded.clone();
    let report = Memo::new(move |_| {
        let settings = Rq3Settings {
            primary: rule.get(),
            ..Rq3Settings::default()
        };
        analyze_rq3(&for_report.audit, &settings)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    });
    let rules = CodingRule::ALL
        .into_iter()
        .map(|r| {
            view! {
                <label class="rule-option">
                    <input
                        type="radio"
                        name="rq3-rule"
                        value=r.key()
                        prop:checked=move || rule.get() == r
                        on:change=move |_| rule.set(r)
                    />
                    <strong>{r.label()}</strong>
                    <span class="hint">{format!(" — {}", r.describe())}</span>
                </label>
            }
        })
        .collect_view();
    view! {
        <section class="rq3" id="rq3" aria-labelledby="rq3-title">
            <h2 id="rq3-title">"Does the answer match its explanation? "<Term id="selection">"Selection"</Term>" vs "<Term id="rationale">"Rationale"</Term>" "<span class="paper-ref">"RQ3 · BiAxisBias paper §3.6, Tables 3, 18, 19"</span></h2>
            {intro}
            <fieldset class="rq3-rules">
                <legend>"How the judges' labels are combined (coding rule; Table 3 and the per-cell table use it, Table 18 shows all four)"</legend>
                {rules}
            </fieldset>
            {move || match report.get() {
                Ok(r) => view! { <Rq3Results report=r/> }.into_any(),
                Err(message) => view! {
                    <p class="error" role="alert" id="rq3-error">{format!("RQ3 could not be computed: {message}")}</p>
                }
                .into_any(),
            }}
        </section>
    }
    .into_any()
}

/// The line naming bundle, rule, judges and the repeat policy (RQ3 has none).
fn provenance(report: &Rq3Report) -> String {
    let rule = report.settings.primary;
    format!(
        "Bundle {} · coding rule: {} ({}) · judges: {} · repeat policy: none — every response counts once (the BiAxisBias paper's RQ3 unit is the response; the repeat policy above does not apply here) · no random draws",
        report.bundle,
        rule.label(),
        rule.key(),
        report.judge_names()
    )
}

#[component]
fn Rq3Results(report: Arc<Rq3Report>) -> impl IntoView {
    let (summary, tables) = tables(&report);
    let Some(primary) = report.primary().cloned() else {
        return view! { <p class="error" role="alert">"The report lacks its primary rule."</p> }
            .into_any();
    };
    let s = report.selection;
    let dominant = primary.disagreement.dominant.map(|d| match d {
        Direction::SelectionOnly => "A=1,B=0 (Selection bias evidence, Rationale non-bias)",
        Direction::RationaleOnly => "A=0,B=1 (Selection non-bias, Rationale bias evidence)",
    });
    let dominance = match (dominant, primary.dominant_holds_in_every_cell) {
        (Some(d), Some(all)) => format!(
            "Dominant direction: {d}. It is strictly larger in {} of {} model × condition cells with pairs — {}.",
            primary.cells_where_dominant_holds,
            primary.cells_with_pairs,
            if all { "it holds in every cell" } else { "it does not hold in every cell" }
        ),
        _ => "No direction dominates (the two off-diagonal counts are equal).".to_string(),
    };
    let holds = primary
        .dominant_holds_in_every_cell
        .map_or(String::new(), |b| b.to_string());
    let href = format!(
        "data:application/json;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(
            &serde_json::to_string_pretty(report.as_ref()).unwrap_or_default()
        ))
    );
    let file_name = format!("rq3-{}-{}.json", report.bundle, primary.rule.key());
    view! {
        <div class="results" id="rq3-result">
            <p class="provenance" id="rq3-provenance">{provenance(&report)}</p>
            <dl class="rq3-coverage" id="rq3-coverage"
                data-responses=s.responses.to_string()
                data-valid=s.valid.to_string()
                data-abstain=s.abstain.to_string()
                data-no-readout=s.no_readout.to_string()
                data-pairs=primary.pairs.to_string()
                data-rationale-abstain=primary.rationale_abstain.to_string()
                data-abstain-ties=primary.abstain_ties.to_string()
                data-abstain-too-few-votes=primary.abstain_too_few_votes.to_string()
            >
                <dt>"Responses"</dt>
                <dd>{format!(
                    "{} — {} valid Selections, {} Selection Abstain, {} without a Selection readout",
                    thousands(s.responses as usize), thousands(s.valid as usize), thousands(s.abstain as usize), thousands(s.no_readout as usize)
                )}</dd>
                <dt>"Valid in both fields"</dt>
                <dd>{format!(
                    "{} pairs ({} coverage) under {}; Rationale Abstain {} (ties {}, too few readable votes {}); Rationale labels without a valid Selection {}",
                    thousands(primary.pairs as usize), percent(primary.pair_coverage, 2), primary.rule.label(),
                    thousands(primary.rationale_abstain as usize), thousands(primary.abstain_ties as usize),
                    thousands(primary.abstain_too_few_votes as usize), thousands(primary.rationale_rows_without_selection as usize)
                )}</dd>
            </dl>
            <p class="dominance" id="rq3-dominance" data-holds-everywhere=holds>{dominance}</p>
            {summary
                .into_iter()
                .filter(|line| !line.starts_with("Responses:")) // shown in the list above
                .map(|line| view! { <p class="summary">{line}</p> })
                .collect_view()}
            {tables.iter().map(|t| crate::ui::table::table_view(t, "rq3", 3)).collect_view()}
            <p>
                <a id="rq3-json" href=href download=file_name>
                    "Download the report (JSON, as atlas analyze-rq3 --format json writes it)"
                </a>
            </p>
        </div>
    }
    .into_any()
}
