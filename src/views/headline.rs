//! The Overview's headline (issue 15, "Overview first"): what the loaded bundle is in one plain
//! sentence, its size and provenance, the ranking by the reference score (seed `000_…` Eq. 4) with
//! each model's score and 95 % statement-cluster bootstrap interval, the headline findings — each a
//! short sentence with its number and a link to the view that shows it — and "What you can do here".
//!
//! Every number comes from [`atlas_core::headline::headline`], the code behind `atlas overview`, under
//! the page's repeat policy, so the two show the same numbers (`tests/e2e/overview.mjs` compares them).
//! The bootstrap runs on the page (2,000 replicates: about 50 ms natively on the default bundle; the
//! section's `data-ms` attribute records what it took in the tab).

use std::sync::Arc;

use atlas_core::compare::{RankBand, RankBands};
use atlas_core::headline::{headline, Headline as HeadlineData, HeadlineOptions, Ranked};
use leptos::prelude::*;

use crate::browser::loader::now_ms;
use crate::state::reweighting::ExplorerModel;
use crate::state::url::{bundle_param, page_link, ViewState};
use crate::state::{AtlasState, Loaded};
use crate::ui::format::{percent, thousands, NO_VALUE};
use crate::ui::glossary::Term;

/// The headline of one loaded bundle, recomputed when the repeat policy changes.
#[component]
pub fn Headline(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let for_memo = loaded.clone();
    // (headline, milliseconds it took)
    // The page computes everything but the intervals (0 replicates): the 2,000-replicate bootstrap
    // would block the tab for about half a second. The intervals come from the re-weighting panel's
    // bootstrap, which the analysis worker runs anyway (same code, seed and replicates as
    // `atlas overview`), and fill in when it is ready.
    let data = Memo::new(move |_| {
        let t0 = now_ms();
        let h = headline(
            &for_memo.audit,
            HeadlineOptions {
                policy: state.policy.get(),
                reps: 0,
                ..HeadlineOptions::default()
            },
        );
        (Arc::new(h), now_ms() - t0)
    });
    let explorer = expect_context::<ExplorerModel>();
    let model_ids: Vec<String> = loaded
        .audit
        .model_ids()
        .iter()
        .map(|m| m.to_string())
        .collect();
    let bands_ids = model_ids.clone();
    let with_intervals = Memo::new(move |_| {
        let (h, _) = data.get();
        let Some(info) = explorer.equal_weight_intervals() else {
            return (h, false);
        };
        let mut h = (*h).clone();
        for r in h.ranking.iter_mut() {
            r.interval = model_ids
                .iter()
                .position(|id| *id == r.model)
                .and_then(|m| info.intervals.get(m).copied().flatten())
                .filter(|_| r.score.is_some())
                .map(|i| [i.lo, i.hi]);
        }
        h.intervals.reps = info.reps;
        h.intervals.seed = info.seed;
        (Arc::new(h), true)
    });
    let bundle = StoredValue::new(bundle_param(&loaded));
    // A link to a view of this bundle, keeping its `bundle=` key (and a non-default policy).
    let link = move |view: &str| {
        let policy = state.policy.get_untracked();
        page_link(&ViewState {
            bundle: bundle.get_value(),
            view: Some(view.to_string()),
            policy: (policy != atlas_core::RepeatPolicy::default()).then_some(policy),
            ..ViewState::default()
        })
    };
    let clinical = loaded.audit.file.clinical.is_some();
    view! {
        <section
            class="headline"
            id="headline"
            data-view="overview"
            aria-labelledby="headline-title"
            data-ms=move || format!("{:.1}", data.get().1)
        >
            <h2 id="headline-title">"Overview"</h2>
            {move || {
                let (h, ready) = with_intervals.get();
                let bands = explorer.equal_weight_rank_bands();
                body(&h, ready, bands.as_deref().map(|b| (b, bands_ids.as_slice())), &link)
            }}
            <h3 class="headline-do">"What you can do here"</h3>
            <ul class="headline-actions">
                <li>
                    <a href=link("scores")>"Re-weight the conditions"</a>
                    " and watch the ranking move (reference score, Eq. 4)."
                </li>
                <li>
                    <a href=link(if clinical { "clinical" } else { "cases" })>"Inspect the cases"</a>
                    " behind every number: each response with its answer ("
                    <Term id="selection">"Selection"</Term> ") and explanation (" <Term id="rationale">"Rationale"</Term> ")."
                </li>
                <li>
                    <a href=link("pilot")>"Run a pilot on your own models"</a>
                    " with your own API keys, or "
                    <a href=link("import")>"import your results"</a>
                    " (CSV, JSONL)."
                </li>
            </ul>
        </section>
    }
}

fn interval_text(r: &Ranked) -> String {
    r.interval.map_or_else(
        || NO_VALUE.to_string(),
        |[lo, hi]| format!("{} – {}", percent(Some(lo), 1), percent(Some(hi), 1)),
    )
}

/// A rank or a rank-band end: `2`, `2.5`.
fn rank_number(x: f64) -> String {
    let t = format!("{x:.1}");
    t.strip_suffix(".0").map_or(t.clone(), str::to_string)
}

/// A 95 % rank band as text: `3` when it is one rank, `2 – 4` otherwise.
pub(crate) fn band_text(band: Option<&RankBand>) -> String {
    match band.and_then(|b| Some((b.lo?, b.hi?))) {
        Some((lo, hi)) if (hi - lo).abs() < 1e-9 => rank_number(lo),
        Some((lo, hi)) => format!("{} – {}", rank_number(lo), rank_number(hi)),
        None => NO_VALUE.to_string(),
    }
}

/// The tie groups in words, with model labels: which models this audit cannot order.
pub(crate) fn tie_groups_text(bands: &RankBands, label: &dyn Fn(&str) -> String) -> String {
    let groups: Vec<String> = bands
        .tie_groups
        .iter()
        .filter(|g| g.len() > 1)
        .map(|g| g.iter().map(|m| label(m)).collect::<Vec<_>>().join(", "))
        .collect();
    if groups.is_empty() {
        "Every model's 95% rank band is a single rank: this audit settles the whole order."
            .to_string()
    } else {
        format!(
            "This audit cannot settle the order within {} (overlapping 95% rank bands: a tie group).",
            groups
                .iter()
                .map(|g| format!("{{{g}}}"))
                .collect::<Vec<_>>()
                .join(" · ")
        )
    }
}

fn body(
    h: &HeadlineData,
    intervals_ready: bool,
    bands: Option<(&RankBands, &[String])>,
    link: &dyn Fn(&str) -> String,
) -> impl IntoView {
    let s = &h.size;
    let p = &h.provenance;
    let mut size = format!(
        "{} models · {} statements · {} conditions · {} templates · {} repeats · {} responses",
        s.models,
        thousands(s.statements),
        s.conditions,
        s.templates,
        s.repeats,
        thousands(s.responses as usize),
    );
    if let Some(j) = s.judged_responses {
        size.push_str(&format!(" · {} judged", thousands(j as usize)));
    }
    if s.no_response > 0 || s.outside_design > 0 {
        size.push_str(&format!(
            " ({} cells without a response, {} outside the design)",
            thousands(s.no_response as usize),
            thousands(s.outside_design as usize)
        ));
    }
    let source = p.source_url.clone();
    let provenance = view! {
        "Source: "
        {match source {
            Some(u) => view! { <a href=u.clone() rel="noopener noreferrer" title=p.source.clone()>{short_host(&u)}</a> }.into_any(),
            None => view! { <span>{p.source.clone()}</span> }.into_any(),
        }}
        {p.commit.clone().map(|c| view! { " · commit " <code title=c.clone()>{c.chars().take(8).collect::<String>()}</code> })}
        " · license " {p.license.clone()}
        " · bundle " <code>{p.bundle_id.clone()}</code>
    };
    let rows = h
        .ranking
        .iter()
        .map(|r| {
            let interval = interval_text(r);
            let band = bands.and_then(|(b, ids)| {
                ids.iter()
                    .position(|id| *id == r.model)
                    .and_then(|m| b.bands.get(m))
            });
            let band_lo = band.and_then(|b| b.lo).map_or_else(String::new, |v| v.to_string());
            let band_hi = band.and_then(|b| b.hi).map_or_else(String::new, |v| v.to_string());
            let band_group = band.and_then(|b| b.group).map_or_else(String::new, |g| g.to_string());
            let band = band_text(band);
            let flag = r.high_abstain.then(|| {
                view! { <span class="flag" title="This score averages a cell where most answers are Abstain (missing, §B.2)">" ⚠"</span> }
            });
            view! {
                <tr
                    data-model=r.model.clone()
                    data-score=r.score.map_or_else(String::new, |v| v.to_string())
                    data-lo=r.interval.map_or_else(String::new, |[lo, _]| lo.to_string())
                    data-hi=r.interval.map_or_else(String::new, |[_, hi]| hi.to_string())
                >
                    <td class="num rank">{r.rank_text()}</td>
                    <th scope="row" class="model" title=r.model.clone()>{r.label.clone()}{flag}</th>
                    <td class="num score">{percent(r.score, 1)}</td>
                    <td class="num interval">{interval}</td>
                    <td class="num band" data-band-lo=band_lo data-band-hi=band_hi data-group=band_group>{band}</td>
                </tr>
            }
        })
        .collect_view();
    let findings = h
        .findings
        .iter()
        .map(|f| {
            view! {
                <li data-finding=f.key data-value=f.value.map_or_else(String::new, |v| v.to_string())>
                    {f.text.clone()} " "
                    <a href=link(f.view) class="finding-link">{view_name(f.view)} " →"</a>
                </li>
            }
        })
        .collect_view();
    let labels: Vec<(String, String)> = h
        .ranking
        .iter()
        .map(|r| (r.model.clone(), r.label.clone()))
        .collect();
    let tie_line = bands.map(|(b, _)| {
        let label = |id: &str| {
            labels
                .iter()
                .find(|(m, _)| m == id)
                .map_or_else(|| id.to_string(), |(_, l)| l.clone())
        };
        let groups = b.tie_groups.iter().filter(|g| g.len() > 1).count();
        view! { <p class="headline-ties" id="headline-ties" data-groups=groups>{tie_groups_text(b, &label)}</p> }
    });
    view! {
        <p class="headline-sentence">{h.sentence.clone()}</p>
        <p class="headline-size">{size}</p>
        <p class="headline-provenance">{provenance}</p>
        <div class="headline-grid">
            <div class="headline-ranking-box">
                <table class="headline-ranking" id="headline-ranking">
                    <caption>
                        "Ranking by the " <Term id="reference-score">"reference score"</Term> " (Eq. 4: equal weight on every "
                        <Term id="condition">"condition"</Term> "); "
                        {h.direction.direction.rank_one()} "; "
                        {if intervals_ready {
                            format!(
                                "95% interval and rank band (2.5–97.5% of the rank) from {} statement-cluster bootstrap replicates (random seed {})",
                                thousands(h.intervals.reps),
                                h.intervals.seed
                            )
                        } else {
                            "95% intervals: the statement-cluster bootstrap is running in the background".to_string()
                        }}
                        "; repeat policy " {h.policy.key()} "."
                    </caption>
                    <thead>
                        <tr>
                            <th scope="col" class="num">"Rank"</th>
                            <th scope="col">"Model"</th>
                            <th scope="col" class="num">"Score"</th>
                            <th scope="col" class="num">"95% interval"</th>
                            <th scope="col" class="num"><Term id="rank-band">"Rank band"</Term></th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
                {tie_line}
            </div>
            <div class="headline-findings-box">
                <h3>"What the bundle shows"</h3>
                <ul class="headline-findings" id="headline-findings">{findings}</ul>
            </div>
        </div>
    }
}

/// `https://github.com/AI-secure/DecodingTrust` → `github.com/AI-secure/DecodingTrust`.
fn short_host(url: &str) -> String {
    url.trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// The name of a view in a finding's link.
fn view_name(view: &str) -> &'static str {
    match view {
        "scores" => "Scores",
        "analyses" => "Analyses",
        "rationale" => "Selection vs Rationale",
        "cases" => "Cases",
        "clinical" => "Clinical",
        _ => "View",
    }
}
