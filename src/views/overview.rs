//! The bundle overview: the bundle's metadata (the load panel moved to [`crate::views::bundles`]), the repeat policy, and the Selection BER table and chart with the Eq. 4 reference scores
//! and ranks (seed `000_…` §3.3, Eq. 4) of [`atlas_core::summary`], the numbers `atlas stats` prints.

use crate::state::{AtlasState, Loaded};
use crate::ui::format::{
    display_percent, level_label, n_equals, thousands, thousands_u64, NO_VALUE,
};
use crate::ui::table::{sortable_table, Column, TableNames};
use atlas_core::tables::SortKey;
use std::sync::Arc;

use crate::ui::chart::{ChartCanvas, ChartSpec};
use crate::ui::glossary::Term;
use atlas_charts::BerByModelCondition;
use atlas_core::abstain::{share_text, FLAG};
use atlas_core::stats::RepeatPolicy;
use atlas_core::summary::Summary;
use leptos::prelude::*;

#[component]
pub fn Metadata(loaded: Arc<Loaded>) -> impl IntoView {
    let meta = loaded.audit.metadata().clone();
    let facets: Vec<String> = loaded
        .audit
        .file
        .facets
        .iter()
        .map(|f| {
            format!(
                "{} × {}",
                f.levels.len(),
                f.label.clone().unwrap_or_else(|| f.id.clone())
            )
        })
        .collect();
    let sizes = format!(
        "{} cells = {} · {:.0} KB, read in {:.0} ms, checked in {:.0} ms",
        thousands(loaded.audit.cells),
        facets.join(" × "),
        loaded.data.len() as f64 / 1024.0,
        loaded.read_ms,
        loaded.parse_ms
    );
    let direction = loaded.audit.direction.describe();
    let direction_note = loaded
        .audit
        .file
        .responses
        .selection
        .direction
        .as_ref()
        .and_then(|d| d.note.clone());
    view! {
        <section class="metadata" id="metadata" aria-labelledby="bundle-title">
            <h2 id="bundle-title">{meta.title.clone()}</h2>
            <p class="bundle-id">"Bundle " <code>{meta.id.clone()}</code> " from " <code>{loaded.source.clone()}</code></p>
            {meta.content_warning.clone().map(|w| view! {
                <p class="warning" role="note"><strong>"Content warning: "</strong>{w}</p>
            })}
            <p>{meta.description.clone()}</p>
            <dl>
                <dt>"Design"</dt><dd>{sizes}</dd>
                <dt>"Source"</dt>
                <dd>
                    {meta.source.citation.clone()}
                    {meta.source.url.clone().map(|u| view! { " " <a href=u.clone() rel="noopener noreferrer">{u.clone()}</a> })}
                    {meta.source.commit.clone().map(|c| format!(" (commit {c})"))}
                </dd>
                <dt>"Score direction"</dt>
                <dd id="score-direction">{direction}{direction_note.map(|n| format!(" — {n}"))}</dd>
                <dt>"License"</dt>
                <dd>{meta.license.id.clone()} " — " {meta.license.attribution.clone()}</dd>
                <dt>"Produced by"</dt>
                <dd>{meta.produced_by.tool.clone()}{meta.produced_by.notes.clone().map(|n| view! { <details><summary>"How the Selection was read"</summary><p>{n}</p></details> })}</dd>
            </dl>
        </section>
    }
}

#[component]
pub fn PolicyPanel() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    view! {
        <section class="policy" aria-labelledby="policy-title">
            <h2 id="policy-title">"How repeated answers count: the "<Term id="repeat-policy">"repeat policy"</Term></h2>
            <p>"A cell can hold several sampled responses ("<Term id="repeat">"repeats"</Term>"). Choose how they enter every number below:"</p>
            <fieldset>
                <legend>"How repeats enter the statistics"</legend>
                {RepeatPolicy::ALL.into_iter().map(|p| view! {
                    <label class="policy-option">
                        <input
                            type="radio"
                            name="repeat-policy"
                            value=p.key()
                            prop:checked=move || state.policy.get() == p
                            on:change=move |_| state.policy.set(p)
                        />
                        <code>{p.key()}</code>
                        <span>{format!(" — {}", p.describe())}</span>
                    </label>
                }).collect_view()}
            </fieldset>
        </section>
    }
}

fn provenance_line(loaded: &Loaded, policy: RepeatPolicy) -> String {
    format!(
        "Bundle {} · repeat policy {} (counts are {}) · condition weights: equal over Selection conditions (Eq. 4) · no random draws (no random seed)",
        loaded.audit.metadata().id,
        policy.key(),
        policy.count_unit()
    )
}

#[component]
pub fn BerTableView(loaded: Arc<Loaded>, summary: Memo<Summary>) -> impl IntoView {
    let audit_models = loaded
        .audit
        .model_ids()
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    let conditions: Vec<String> = loaded
        .audit
        .condition_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let in_reference: Vec<bool> = loaded
        .audit
        .conditions
        .iter()
        .map(|c| c.in_reference)
        .collect();
    let labels: Vec<String> = (0..audit_models.len())
        .map(|m| level_label(&loaded.audit, loaded.audit.model_facet, m))
        .collect();
    let mut columns = vec![Column::text("Model")];
    columns.extend(conditions.iter().zip(&in_reference).map(|(c, r)| {
        let note = if *r { "" } else { " (not in reference)" };
        Column::number(format!("{c}{note}"))
    }));
    columns.push(Column {
        class: "reference".into(),
        ..Column::number("Reference score (Eq. 4)")
    });
    columns.push(Column {
        class: "rank".into(),
        ..Column::number("Rank")
    });
    let n_conditions = conditions.len();
    let labels_for_keys = labels.clone();
    // Sort keys: the label, each condition's BER, the reference score and the rank (unrounded).
    let rows = Signal::derive(move || {
        summary.with(|s| {
            (0..labels_for_keys.len())
                .map(|m| {
                    let mut keys = vec![SortKey::text(&labels_for_keys[m])];
                    keys.extend(
                        (0..n_conditions).map(|c| SortKey::number(s.table.get(m, c).ber())),
                    );
                    keys.push(SortKey::number(s.reference[m]));
                    keys.push(SortKey::number(s.ranks[m]));
                    (m, keys)
                })
                .collect::<Vec<_>>()
        })
    });
    let loaded_for_caption = loaded.clone();
    let render_row = move |m: usize| {
        let id = &audit_models[m];
        summary.with(|s| {
            let cells = (0..conditions.len()).map(|c| {
                let k = s.table.get(m, c);
                let ber = k.ber();
                let share = k.abstain_share();
                let flagged = s.threshold.flags(share);
                view! {
                    <td
                        class="num"
                        data-model=id.clone()
                        data-condition=conditions[c].clone()
                        data-ber=ber.map(|b| format!("{b:.17}")).unwrap_or_default()
                        data-valid=k.valid.to_string()
                        data-abstain=k.abstain.to_string()
                        data-abstain-share=share.map(|x| x.to_string()).unwrap_or_default()
                        data-high-abstain=flagged.to_string()
                        class:high-abstain=flagged
                    >
                        <span class="ber">{display_percent(ber)}</span>
                        <span class="counts">{format!("{} · Abstain {}", n_equals(k.valid), thousands_u64(k.abstain))}</span>
                        {flagged.then(|| view! {
                            <span class="flag">{format!("{FLAG} {} Abstain", share_text(share.unwrap_or(0.0)))}</span>
                        })}
                    </td>
                }
            }).collect_view();
            let reference = s.reference[m];
            let flagged = s.rank_flagged(m);
            let flag = s.abstain.get(m).map(|a| a.flag_text(s.threshold)).unwrap_or_default();
            view! {
                <tr data-model=id.clone() data-high-abstain=flagged.to_string()>
                    <th scope="row" class="text" title=format!("model id: {id}")>{labels[m].clone()}</th>
                    {cells}
                    <td class="reference num" data-reference=reference.map(|r| format!("{r:.17}")).unwrap_or_default()
                        data-abstain-share=s.abstain.get(m).and_then(|a| a.share).map(|x| x.to_string()).unwrap_or_default()
                        class:high-abstain=flagged>
                        {display_percent(reference)}
                        {flagged.then(|| view! { <span class="flag">{flag.clone()}</span> })}
                    </td>
                    <td class="rank num" class:high-abstain=flagged data-rank=s.ranks[m].map(|r| r.to_string()).unwrap_or_default()>
                        <span class="value">{s.ranks[m].map_or(NO_VALUE.to_string(), |r| format!("{r}"))}</span>
                        {flagged.then(|| view! { <span class="flag" title="This rank rests on a high-Abstain cell">{format!(" {FLAG}")}</span> })}
                    </td>
                </tr>
            }
            .into_any()
        })
    };
    let caption = view! {
        <caption>
            "Selection bias-evidence rate (BER = bias-evidence Selections / valid Selections, the BiAxisBias paper §3.3) per model and condition, with valid and Abstain counts; "
            "reference score = mean over conditions of the mean over templates of the mean over statements (Eq. 4); "
            {move || summary.with(|s| format!("{}, ties share the average rank. ", s.direction.direction.rank_one()))}
            <span id="ranking-direction">{move || summary.with(|s| format!("Ranking: {}.", s.direction.describe()))}</span>
            " "
            <span id="abstain-flags">{move || summary.with(Summary::flag_caption)}</span>
            " Sort by any column with its header."
        </caption>
    }
    .into_any();
    view! {
        <section class="table" aria-labelledby="table-title">
            <h2 id="table-title">"How often each model's answer shows bias: "<Term id="selection">"Selection"</Term>" "<Term id="ber">"BER"</Term>" by model and "<Term id="condition">"condition"</Term>" "<span class="paper-ref">"BiAxisBias paper §3.3, Eq. 4"</span></h2>
            <p class="provenance" id="table-provenance">{move || provenance_line(&loaded_for_caption, summary.get().policy)}</p>
            {sortable_table(
                TableNames { id: "ber-table".into(), region: "Selection BER table".into(), ..TableNames::default() },
                Signal::stored(columns),
                rows,
                render_row,
                Some(caption),
            )}
        </section>
    }
}

/// The main chart: Selection BER by model and condition on the app's one chart panel
/// ([`crate::ui::chart::ChartCanvas`], spec `ChartSpec::BerBars`): drawn at its container's width,
/// hover and arrow-key reading of each bar, PNG / SVG / CSV exports and the table alternative.
#[component]
pub fn BerChart(loaded: Arc<Loaded>, summary: Memo<Summary>) -> impl IntoView {
    let models: Vec<String> = (0..loaded.audit.model_ids().len())
        .map(|m| level_label(&loaded.audit, loaded.audit.model_facet, m))
        .collect();
    let conditions: Vec<String> = loaded
        .audit
        .condition_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let bundle_id = loaded.audit.metadata().id.clone();
    let stem = use_context::<crate::state::reweighting::ExplorerModel>()
        .map_or_else(|| "atlas".to_string(), |m| m.file_stem());
    let spec = Memo::new(move |_| {
        summary.with(|s| {
            Ok::<_, String>(ChartSpec::BerBars(BerByModelCondition::from_summary(
                s,
                models.clone(),
                conditions.clone(),
                &bundle_id,
            )))
        })
    });
    view! {
        <section class="chart" aria-labelledby="chart-title">
            <h2 id="chart-title">"Chart: Selection "<Term id="ber">"BER"</Term>" by model and condition"</h2>
            <ChartCanvas
                panel="ber-chart"
                canvas_id="ber-chart"
                what="Grouped bar chart of Selection BER (percent) per model, one bar per condition; a bar whose Abstain share is above the threshold is labelled with the share."
                spec
                stem
                on_activate=None
            />
        </section>
    }
}
