//! The Compare view (issue 17 item 1): is model A really less biased than model B on this audit, or
//! is the difference within the audit's noise? For the chosen pair: the matched units with the
//! exclusions counted, the 2×2 of Selection evidence with the discordant counts b and c, McNemar's
//! exact and mid-p tests, the paired differences of BER and of the Eq. 4 reference score with their
//! 95 % statement-cluster bootstrap intervals under the page's weights and repeat policy, the
//! conditions where the difference changes sign, and one plain sentence on top. For all pairs: the
//! pair table with Benjamini–Hochberg and Holm adjusted p-values and the separable matrix. Then the
//! rank bands and tie groups, and the exports (the report as `atlas compare --json` writes it, the
//! pairs and bands as `--csv`). State: [`crate::state::compare::CompareModel`].

use std::sync::Arc;

use atlas_core::compare::{pairs_csv, rank_bands_csv, CompareReport, RankBand};
use atlas_core::format::{percent, thousands, thousands_u64, NO_VALUE};
use atlas_core::tables::SortKey;
use leptos::prelude::*;

use crate::browser::export::download_text;
use crate::state::compare::{
    ci_text, default_pair, p_text, pp_text, sentence, unit_word, CompareModel, OrientedPair,
    PairedState,
};
use crate::state::reweighting::{BootState, ExplorerModel};
use crate::ui::glossary::Term;
use crate::ui::table::{sortable_table, Column, TableNames};

/// A rank or a rank-band end: `2`, `2.5`.
fn rank_number(x: f64) -> String {
    let t = format!("{x:.1}");
    t.strip_suffix(".0").map_or(t.clone(), str::to_string)
}

/// A 95 % rank band: `3` when it is one rank, `2 – 4` otherwise.
fn band_text(b: &RankBand) -> String {
    match (b.lo, b.hi) {
        (Some(lo), Some(hi)) if (hi - lo).abs() < 1e-9 => rank_number(lo),
        (Some(lo), Some(hi)) => format!("{} – {}", rank_number(lo), rank_number(hi)),
        _ => NO_VALUE.to_string(),
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

/// The Compare view of the loaded bundle.
#[component]
pub fn CompareView() -> impl IntoView {
    let explorer = expect_context::<ExplorerModel>();
    let model = CompareModel::new();
    let ids: Vec<String> = explorer.basis.get_untracked().0.models().to_vec();
    let labels = explorer.labels.get_value();
    let ids = StoredValue::new(ids);
    let labels = StoredValue::new(labels);
    let label = move |id: &str| {
        ids.with_value(|ids| {
            ids.iter()
                .position(|m| m == id)
                .and_then(|m| labels.with_value(|l| l.get(m).cloned()))
                .unwrap_or_else(|| id.to_string())
        })
    };
    // The pair shown: the one asked for when both ids are models of this bundle and differ, else the
    // default (the top two of the equal-weight ranking).
    let chosen = Memo::new(move |_| {
        let asked = model.pair.get();
        let valid = |id: &str| ids.with_value(|ids| ids.iter().any(|m| m == id));
        if let Some((a, b)) = &asked {
            if a != b && valid(a) && valid(b) {
                return (a.clone(), b.clone(), None);
            }
        }
        let ranks = explorer.basis.with(|b| b.0.equal_ranks());
        let (a, b) = default_pair(&ranks)
            .map(|(a, b)| ids.with_value(|ids| (ids[a].clone(), ids[b].clone())))
            .unwrap_or_default();
        let notice = asked.map(|(x, y)| {
            format!(
                "The link asks for the pair {x:?} and {y:?}, which is not two different models of this bundle; the default pair is shown."
            )
        });
        (a, b, notice)
    });
    let pick = move |which: usize, id: String| {
        let (a, b, _) = chosen.get_untracked();
        let next = match which {
            0 if id == b => (id, a),
            0 => (id, b),
            _ if id == a => (b, id),
            _ => (a, id),
        };
        model.pair.set(Some(next));
    };
    let options = move |selected: Signal<String>| {
        ids.with_value(|ids| {
            ids.iter()
                .enumerate()
                .map(|(m, id)| {
                    let id = id.clone();
                    let text = labels.with_value(|l| l.get(m).cloned().unwrap_or_else(|| id.clone()));
                    let is = id.clone();
                    view! { <option value=id.clone() prop:selected=move || selected.get() == is>{text}</option> }
                })
                .collect_view()
        })
    };
    let a_sel = Signal::derive(move || chosen.get().0);
    let b_sel = Signal::derive(move || chosen.get().1);
    let swap = move |_| {
        let (a, b, _) = chosen.get_untracked();
        model.pair.set(Some((b, a)));
    };

    let status = move || {
        match model.paired.get() {
        PairedState::Idle => "The comparison is computed when this view is first shown.".to_string(),
        PairedState::Running { done, total } => format!(
            "Computing… matched units and paired bootstrap replicates in the background worker: {} of {}.",
            thousands(done),
            thousands(total)
        ),
        PairedState::Failed(e) => format!("The comparison failed: {e}"),
        PairedState::Ready(..) => match explorer.boot.get() {
            BootState::Running { done, total } => format!(
                "Computing… the statement-cluster bootstrap (shared with the re-weighting view): {} of {}.",
                thousands(done),
                thousands(total)
            ),
            BootState::Failed(e) => format!("The bootstrap failed: {e}"),
            _ => match model.report.get() {
                Some(Ok(_)) => String::new(),
                Some(Err(e)) => format!("The comparison could not be made: {e}"),
                None => "Computing…".to_string(),
            },
        },
    }
    };
    let busy = move || {
        !matches!(model.report.get(), Some(Ok(_)))
            && !matches!(model.paired.get(), PairedState::Failed(_))
    };

    let body = move || {
        let Some(Ok(handle)) = model.report.get() else {
            return None;
        };
        let report = handle.report.clone();
        let (a, b, _) = chosen.get();
        let pair = OrientedPair::of(&report, &a, &b)?;
        let timing = {
            let worker = match model.paired.get_untracked() {
                PairedState::Ready(_, ms) => ms,
                _ => f64::NAN,
            };
            let join = model
                .comparison
                .get_untracked()
                .and_then(|c| c.ok())
                .map_or(f64::NAN, |c| c.1);
            (worker, join, handle.ms)
        };
        Some(view! {
            <PairSection report=report.clone() pair label=Arc::new(label) timing/>
            <AllPairs report=report.clone() label=Arc::new(label) model/>
            <Bands report label=Arc::new(label)/>
        })
    };

    view! {
        <section class="compare" id="compare" data-view="compare" aria-labelledby="compare-title">
            <h2 id="compare-title">
                "Is model A really less biased than model B? "
                <span class="paper-ref">"paired McNemar test and statement-cluster bootstrap; BiAxisBias paper §6, §D.2"</span>
            </h2>
            <p>
                "Two models are compared on the same prompts: every "<Term id="statement">"statement"</Term>" × "
                <Term id="condition">"condition"</Term>" × "<Term id="template">"template"</Term>
                " (and repeat) that both answered with a valid "<Term id="selection">"Selection"</Term>
                ". Where one of them gave a stereotype-consistent Selection and the other did not, the pair is discordant; "
                <Term id="mcnemar">"McNemar's test"</Term>" asks whether those discordant units lean one way more than chance allows. "
                "The differences of "<Term id="ber">"BER"</Term>" and of the "<Term id="reference-score">"reference score"</Term>
                " get 95 % intervals from resampling the statements, under the weights and repeat policy of the Scores view."
            </p>
            <div class="compare-pickers" role="group" aria-label="The two models compared">
                <label class="setting">
                    <span class="name">"Model A"</span>
                    <select id="compare-a" on:change=move |ev| pick(0, event_target_value(&ev))>
                        {options(a_sel)}
                    </select>
                </label>
                <button type="button" id="compare-swap" on:click=swap title="Swap models A and B">"⇄ Swap"</button>
                <label class="setting">
                    <span class="name">"Model B"</span>
                    <select id="compare-b" on:change=move |ev| pick(1, event_target_value(&ev))>
                        {options(b_sel)}
                    </select>
                </label>
            </div>
            {move || chosen.get().2.map(|n| view! { <p class="warning" role="note" id="compare-link-notice">{n}</p> })}
            <p class="compare-status" id="compare-status" role="status" aria-busy=move || busy().to_string()>
                {move || busy().then(|| view! { <span class="spinner" aria-hidden="true"></span> })}
                {status}
            </p>
            {body}
        </section>
    }
}

/// The chosen pair: sentence, provenance, matched units, 2×2, tests, differences, conditions.
#[component]
fn PairSection(
    report: Arc<CompareReport>,
    pair: OrientedPair,
    label: Arc<dyn Fn(&str) -> String + Send + Sync>,
    timing: (f64, f64, f64),
) -> impl IntoView {
    let (la, lb) = (label(pair.a()), label(pair.b()));
    let text = sentence(&report, &pair, &*label);
    let (n11, nb, nc, n00) = pair.cells();
    let matched = n11 + nb + nc + n00;
    let (xa, xb, xboth) = pair.exclusions();
    let p = &pair.pair;
    let (ber_a, ber_b) = pair.bers();
    let (score_a, score_b) = pair.scores();
    let ber_diff = pair.diff(p.ber_diff_pp);
    let ber_ci = pair.interval(p.ber_diff_ci_pp);
    let score_diff = pair.diff(p.score_diff_pp);
    let score_ci = pair.interval(p.score_diff_ci_pp);
    let unit = unit_word(&report, matched);
    let provenance = format!(
        "{}. Computed in {:.0} ms in the background worker (matched units and paired BER replicates), joined with the page's bootstrap in {:.0} ms, re-weighted in {:.1} ms.",
        report.provenance(),
        timing.0,
        timing.1,
        timing.2
    );
    let note = p.mcnemar.note.clone().map(|n| {
        view! { <p class="note" id="compare-no-discordant">"No discordant unit: "{n}"."</p> }
    });
    // Per condition (sign changes marked).
    let conditions: Vec<_> = p
        .conditions
        .iter()
        .map(|c| {
            (
                c.condition.clone(),
                c.weight,
                pair.diff(c.ber_diff_pp),
                pair.diff(c.score_diff_pp),
                pair.interval(c.score_diff_ci_pp),
                c.sign_change,
            )
        })
        .collect();
    let cond_rows: Vec<(usize, Vec<SortKey>)> = conditions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                i,
                vec![
                    SortKey::new(&c.0, None),
                    SortKey::number(Some(c.1)),
                    SortKey::number(c.2),
                    SortKey::number(c.3),
                    SortKey::number(c.4.map(|x| x.0)),
                    SortKey::new(if c.5 { "yes" } else { "no" }, None),
                ],
            )
        })
        .collect();
    let cond_columns = vec![
        Column::text("Condition"),
        Column::number("Weight"),
        Column::number("BER A − B (pp)"),
        Column::number("Score A − B (pp)"),
        Column::number("95 % interval (pp)"),
        Column::text("Sign differs from overall"),
    ];
    let cond_data = Arc::new(conditions.clone());
    let render_condition = move |i: usize| {
        let Some(c) = cond_data.get(i).cloned() else {
            return ().into_any();
        };
        view! {
            <tr data-condition=c.0.clone() data-sign-change=c.5.to_string() class:sign-change=c.5
                data-ber-diff=opt(c.2) data-score-diff=opt(c.3)>
                <th scope="row" class="text">{c.0.clone()}</th>
                <td class="num">{atlas_core::reweight::format_weight(c.1)}</td>
                <td class="num">{pp_text(c.2)}</td>
                <td class="num">{pp_text(c.3)}</td>
                <td class="num">{ci_text(c.4)}</td>
                <td class="text">{if c.5 { "yes ⚑" } else { "no" }}</td>
            </tr>
        }
        .into_any()
    };
    let sign_line = if p.sign_changes.is_empty() {
        "No condition changes the sign of the score difference: A − B points the same way under every condition.".to_string()
    } else {
        format!(
            "The score difference changes sign under {}: there, the order of A and B is the other way round.",
            p.sign_changes.join(", ")
        )
    };
    let separable = p.separable;
    // Every number at full precision for readers' tools and the tests (JSON numbers round-trip).
    let values = serde_json::json!({
        "matched": matched, "n11": n11, "b_count": nb, "c_count": nc, "n00": n00,
        "invalid_a": xa, "invalid_b": xb, "invalid_both": xboth,
        "p_exact": p.mcnemar.p_exact, "p_mid": p.mcnemar.p_mid, "p_bh": p.p_bh, "p_holm": p.p_holm,
        "ber_a": ber_a, "ber_b": ber_b, "ber_diff": ber_diff,
        "ber_lo": ber_ci.map(|x| x.0), "ber_hi": ber_ci.map(|x| x.1),
        "score_a": score_a, "score_b": score_b, "score_diff": score_diff,
        "score_lo": score_ci.map(|x| x.0), "score_hi": score_ci.map(|x| x.1),
    })
    .to_string();
    view! {
        <div class="compare-pair" id="compare-pair"
            data-a=pair.a().to_string() data-b=pair.b().to_string() data-flipped=pair.flipped.to_string()
            data-separable=separable.to_string() data-sign-changes=p.sign_changes.join(";")
            data-values=values
            data-report-ms=format!("{:.2}", timing.2) data-worker-ms=format!("{:.0}", timing.0)>
            <p class="compare-sentence" id="compare-sentence" class:separable=separable>{text}</p>
            <p class="provenance" id="compare-provenance">{provenance}</p>
            <p id="compare-matched">
                <strong>{format!("{} matched {unit}", thousands_u64(matched))}</strong>
                {format!(
                    " valid for both models (same statement, condition, template{}). Left out: {} invalid for A only, {} invalid for B only, {} invalid for both (an ",
                    if report.count_unit == "responses" { " and repeat" } else { "" },
                    thousands_u64(xa), thousands_u64(xb), thousands_u64(xboth)
                )}
                <Term id="abstain">"Abstain"</Term>" or no response counts as missing)."
            </p>
            <div class="compare-grid">
                <div class="table-scroll">
                    <div class="scroll" tabindex="0" role="region" aria-label="The 2×2 of Selection evidence (scrolls sideways when wider than the page)">
                        <table class="compare-2x2" id="compare-2x2">
                            <caption>
                                "Stereotype-consistent "<Term id="selection">"Selection"</Term>" on the matched "{unit.clone()}" (the paired 2×2)"
                            </caption>
                            <thead>
                                <tr>
                                    <td></td>
                                    <th scope="col" class="num">{format!("{lb} (B): yes")}</th>
                                    <th scope="col" class="num">{format!("{lb} (B): no")}</th>
                                </tr>
                            </thead>
                            <tbody>
                                <tr>
                                    <th scope="row" class="text">{format!("{la} (A): yes")}</th>
                                    <td class="num" id="compare-n11">{thousands_u64(n11)}<span class="cell-name">" both"</span></td>
                                    <td class="num discordant" id="compare-b-count">{thousands_u64(nb)}<span class="cell-name">" b: only A"</span></td>
                                </tr>
                                <tr>
                                    <th scope="row" class="text">{format!("{la} (A): no")}</th>
                                    <td class="num discordant" id="compare-c-count">{thousands_u64(nc)}<span class="cell-name">" c: only B"</span></td>
                                    <td class="num" id="compare-n00">{thousands_u64(n00)}<span class="cell-name">" neither"</span></td>
                                </tr>
                            </tbody>
                        </table>
                    </div>
                </div>
                <dl class="compare-tests" id="compare-tests">
                    <dt><Term id="mcnemar">"McNemar exact p"</Term></dt>
                    <dd id="compare-p-exact">{p_text(p.mcnemar.p_exact)}</dd>
                    <dt>"McNemar mid-p"</dt>
                    <dd id="compare-p-mid">{p_text(p.mcnemar.p_mid)}</dd>
                    <dt>"Adjusted over all "{report.pairs.len()}" pairs: Benjamini–Hochberg (FDR)"</dt>
                    <dd id="compare-p-bh">{p_text(p.p_bh)}</dd>
                    <dt>"Holm (family-wise)"</dt>
                    <dd id="compare-p-holm">{p_text(p.p_holm)}</dd>
                    <dt><Term id="separable-pair">"Separable"</Term>{format!(" at FDR {} %", 100.0 * report.alpha)}</dt>
                    <dd id="compare-separable">{if separable { "yes" } else { "no" }}</dd>
                </dl>
            </div>
            {note}
            <div class="table-scroll">
                <div class="scroll" tabindex="0" role="region" aria-label="Paired differences (scrolls sideways when wider than the page)">
                    <table class="compare-diffs" id="compare-diffs">
                        <caption>"Paired differences A − B with 95 % statement-cluster bootstrap intervals ("{thousands(report.reps)}" replicates)"</caption>
                        <thead>
                            <tr>
                                <td></td>
                                <th scope="col" class="num">{format!("{la} (A)")}</th>
                                <th scope="col" class="num">{format!("{lb} (B)")}</th>
                                <th scope="col" class="num">"A − B"</th>
                                <th scope="col" class="num">"95 % interval"</th>
                            </tr>
                        </thead>
                        <tbody>
                            <tr id="compare-ber-row">
                                <th scope="row" class="text"><Term id="ber">"BER"</Term>" on the matched "{unit.clone()}</th>
                                <td class="num">{percent(ber_a, 2)}</td>
                                <td class="num">{percent(ber_b, 2)}</td>
                                <td class="num" id="compare-ber-diff">{pp_text(ber_diff)}</td>
                                <td class="num" id="compare-ber-ci">{ci_text(ber_ci)}</td>
                            </tr>
                            <tr id="compare-score-row">
                                <th scope="row" class="text"><Term id="reference-score">"Reference score"</Term>" (Eq. 4; weights: "{report.weights_description.clone()}")"</th>
                                <td class="num">{percent(score_a, 2)}</td>
                                <td class="num">{percent(score_b, 2)}</td>
                                <td class="num" id="compare-score-diff">{pp_text(score_diff)}</td>
                                <td class="num" id="compare-score-ci">{ci_text(score_ci)}</td>
                            </tr>
                        </tbody>
                    </table>
                </div>
            </div>
            <h3 id="compare-conditions-title">"Per condition: where does the difference change sign?"</h3>
            {sortable_table(
                TableNames {
                    id: "compare-conditions".into(),
                    region: "Per-condition differences".into(),
                    labelled_by: Some("compare-conditions-title".into()),
                    ..TableNames::default()
                },
                Signal::stored(cond_columns),
                Signal::stored(cond_rows),
                render_condition,
                None,
            )}
            <p id="compare-sign" data-count=p.sign_changes.len()>{sign_line}</p>
        </div>
    }
}

/// All pairs: the pair table (BH and Holm) and the separable matrix.
#[component]
fn AllPairs(
    report: Arc<CompareReport>,
    label: Arc<dyn Fn(&str) -> String + Send + Sync>,
    model: CompareModel,
) -> impl IntoView {
    let columns = vec![
        Column::text("Model A"),
        Column::text("Model B"),
        Column::number("Matched"),
        Column::number("b (only A)"),
        Column::number("c (only B)"),
        Column::number("BER A − B (pp)"),
        Column::number("95 % interval (pp)"),
        Column::number("McNemar exact p"),
        Column::number("mid-p"),
        Column::number("p, Benjamini–Hochberg (FDR)"),
        Column::number("p, Holm"),
        Column::text(format!("Separable (FDR {} %)", 100.0 * report.alpha)),
        Column::number("Score A − B (pp)"),
        Column::number("95 % interval (pp)"),
    ];
    let rows: Vec<(usize, Vec<SortKey>)> = report
        .pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                i,
                vec![
                    SortKey::new(&label(&p.model_a), None),
                    SortKey::new(&label(&p.model_b), None),
                    SortKey::number(Some(p.table.matched() as f64)),
                    SortKey::number(Some(p.table.a_only as f64)),
                    SortKey::number(Some(p.table.b_only as f64)),
                    SortKey::number(p.ber_diff_pp),
                    SortKey::number(p.ber_diff_ci_pp.map(|x| x.0)),
                    SortKey::number(Some(p.mcnemar.p_exact)),
                    SortKey::number(Some(p.mcnemar.p_mid)),
                    SortKey::number(Some(p.p_bh)),
                    SortKey::number(Some(p.p_holm)),
                    SortKey::new(if p.separable { "yes" } else { "no" }, None),
                    SortKey::number(p.score_diff_pp),
                    SortKey::number(p.score_diff_ci_pp.map(|x| x.0)),
                ],
            )
        })
        .collect();
    let for_rows = report.clone();
    let row_label = label.clone();
    let render = move |i: usize| {
        let Some(p) = for_rows.pairs.get(i) else {
            return ().into_any();
        };
        let (a, b) = (p.model_a.clone(), p.model_b.clone());
        let open = move |_| model.pair.set(Some((a.clone(), b.clone())));
        view! {
            <tr data-a=p.model_a.clone() data-b=p.model_b.clone() data-p-bh=p.p_bh.to_string() data-p-holm=p.p_holm.to_string() class:separable=p.separable>
                <th scope="row" class="text" title=p.model_a.clone()>{row_label(&p.model_a)}</th>
                <td class="text" title=p.model_b.clone()>{row_label(&p.model_b)}</td>
                <td class="num">{thousands_u64(p.table.matched())}</td>
                <td class="num">{thousands_u64(p.table.a_only)}</td>
                <td class="num">{thousands_u64(p.table.b_only)}</td>
                <td class="num">{pp_text(p.ber_diff_pp)}</td>
                <td class="num">{ci_text(p.ber_diff_ci_pp)}</td>
                <td class="num">{p_text(p.mcnemar.p_exact)}</td>
                <td class="num">{p_text(p.mcnemar.p_mid)}</td>
                <td class="num">{p_text(p.p_bh)}</td>
                <td class="num">{p_text(p.p_holm)}</td>
                <td class="text">
                    {if p.separable { "yes" } else { "no" }}" "
                    <button type="button" class="compare-open" on:click=open title="Show this pair above">"Show"</button>
                </td>
                <td class="num">{pp_text(p.score_diff_pp)}</td>
                <td class="num">{ci_text(p.score_diff_ci_pp)}</td>
            </tr>
        }
        .into_any()
    };
    let separable_count = report.pairs.iter().filter(|p| p.separable).count();
    // The matrix: numbered columns keep it narrow; row headers carry the labels.
    let m_len = report.models.len();
    let header = (0..m_len)
        .map(|j| {
            let id = report.models[j].clone();
            view! { <th scope="col" class="num" title=label(&id)>{j + 1}</th> }
        })
        .collect_view();
    let matrix_rows = (0..m_len)
        .map(|i| {
            let cells = (0..m_len)
                .map(|j| {
                    let (text, words, class) = if i == j {
                        ("", "same model".to_string(), "diag")
                    } else if report.separable[i][j] {
                        ("✓", format!("{} vs {}: separable", label(&report.models[i]), label(&report.models[j])), "yes")
                    } else {
                        ("·", format!("{} vs {}: not separable", label(&report.models[i]), label(&report.models[j])), "no")
                    };
                    let title = words.clone();
                    view! {
                        <td class=format!("num sep-{class}") data-i=i data-j=j title=title>
                            <span aria-hidden="true">{text}</span>
                            <span class="visually-hidden">{words}</span>
                        </td>
                    }
                })
                .collect_view();
            let id = report.models[i].clone();
            view! { <tr><th scope="row" class="text" title=id.clone()>{format!("{} ", i + 1)}<span class="m-label">{label(&id)}</span></th>{cells}</tr> }
        })
        .collect_view();
    let not_separable: Vec<String> = report
        .pairs
        .iter()
        .filter(|p| !p.separable)
        .map(|p| format!("{} – {}", label(&p.model_a), label(&p.model_b)))
        .collect();
    let matrix_text = if not_separable.is_empty() {
        format!(
            "All {} pairs are separable at FDR {} %.",
            report.pairs.len(),
            100.0 * report.alpha
        )
    } else {
        format!(
            "{separable_count} of {} pairs are separable at FDR {} %; not separable: {}.",
            report.pairs.len(),
            100.0 * report.alpha,
            not_separable.join("; ")
        )
    };
    let csv_error = RwSignal::new(None::<String>);
    let csv_report = report.clone();
    let stem = crate::browser::export::file_part(&report.bundle);
    let download = move |_| {
        let all: Vec<usize> = (0..csv_report.pairs.len()).collect();
        csv_error.set(
            download_text(
                &pairs_csv(&csv_report, &all),
                "text/csv;charset=utf-8",
                &format!("{stem}-compare-pairs.csv"),
            )
            .err()
            .map(|e| format!("The download failed: {e}")),
        );
    };
    view! {
        <h3 id="compare-all-title">"All pairs: which differences does the audit settle?"</h3>
        <p class="table-note" id="compare-all-note">
            "One row per model pair (A before B in the bundle's order). The exact McNemar p-values are adjusted over all "
            {report.pairs.len()}" pairs by "<Term id="separable-pair">"Benjamini–Hochberg (false discovery rate) and by Holm (family-wise error)"</Term>
            "; a pair is separable when its Benjamini–Hochberg adjusted p is at most "{report.alpha}". "
            {format!("{separable_count} of {} pairs are separable.", report.pairs.len())}
        </p>
        {sortable_table(
            TableNames {
                id: "compare-pairs".into(),
                region: "All model pairs".into(),
                labelled_by: Some("compare-all-title".into()),
                described_by: Some("compare-all-note".into()),
                ..TableNames::default()
            },
            Signal::stored(columns),
            Signal::stored(rows),
            render,
            None,
        )}
        <button id="compare-pairs-csv" class="table-csv" on:click=download>"Pairs as CSV"</button>
        {move || csv_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        <h4 id="compare-matrix-title">"Separable pairs at a glance"</h4>
        <div class="table-scroll">
            <div class="scroll" tabindex="0" role="region" aria-label="Separable matrix (scrolls sideways when wider than the page)">
                <table class="compare-matrix" id="compare-matrix" aria-labelledby="compare-matrix-title" aria-describedby="compare-matrix-text">
                    <thead><tr><td></td>{header}</tr></thead>
                    <tbody>{matrix_rows}</tbody>
                </table>
            </div>
        </div>
        <p id="compare-matrix-text" data-separable=separable_count>
            "✓ separable · · not separable (columns numbered as the rows). "{matrix_text}
        </p>
    }
}

/// The rank bands and tie groups with their definition, and the exports.
#[component]
fn Bands(
    report: Arc<CompareReport>,
    label: Arc<dyn Fn(&str) -> String + Send + Sync>,
) -> impl IntoView {
    let bands = report.rank_bands.bands.clone();
    let columns = vec![
        Column::text("Model"),
        Column::number("Rank"),
        Column::number("Rank band (95 %)"),
        Column::number("Tie group"),
    ];
    let rows: Vec<(usize, Vec<SortKey>)> = bands
        .iter()
        .enumerate()
        .map(|(i, b)| {
            (
                i,
                vec![
                    SortKey::new(&label(&b.model), None),
                    SortKey::number(b.rank),
                    SortKey::number(b.lo),
                    SortKey::number(b.group.map(|g| (g + 1) as f64)),
                ],
            )
        })
        .collect();
    let data = Arc::new(bands.clone());
    let row_label = label.clone();
    let render = move |i: usize| {
        let Some(b) = data.get(i).cloned() else {
            return ().into_any();
        };
        view! {
            <tr data-model=b.model.clone()>
                <th scope="row" class="text" title=b.model.clone()>{row_label(&b.model)}</th>
                <td class="num">{b.rank.map_or_else(|| NO_VALUE.to_string(), rank_number)}</td>
                <td class="num band" data-band-lo=opt(b.lo) data-band-hi=opt(b.hi) data-group=b.group.map_or_else(String::new, |g| g.to_string())>{band_text(&b)}</td>
                <td class="num">{b.group.map_or_else(|| NO_VALUE.to_string(), |g| (g + 1).to_string())}</td>
            </tr>
        }
        .into_any()
    };
    let groups: Vec<String> = report
        .rank_bands
        .tie_groups
        .iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            format!(
                "{{{}}}",
                g.iter().map(|m| label(m)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let ties = if groups.is_empty() {
        "Every model's 95 % rank band is apart from the others': this audit settles the whole order.".to_string()
    } else {
        format!(
            "This audit cannot settle the order within {} (overlapping 95 % rank bands: a tie group).",
            groups.join(" and ")
        )
    };
    let export_error = RwSignal::new(None::<String>);
    let stem = crate::browser::export::file_part(&report.bundle);
    let (r1, r2) = (report.clone(), report.clone());
    let (s1, s2) = (stem.clone(), stem);
    let json = move |_| {
        let text = serde_json::to_string_pretty(&*r1).map(|t| t + "\n");
        export_error.set(match text {
            Ok(t) => download_text(&t, "application/json", &format!("{s1}-compare.json"))
                .err()
                .map(|e| format!("The download failed: {e}")),
            Err(e) => Some(format!("The export failed: {e}")),
        });
    };
    let csv = move |_| {
        export_error.set(
            download_text(
                &rank_bands_csv(&r2),
                "text/csv;charset=utf-8",
                &format!("{s2}-compare-rank-bands.csv"),
            )
            .err()
            .map(|e| format!("The download failed: {e}")),
        );
    };
    view! {
        <h3 id="compare-bands-title">"Rank bands and tie groups"</h3>
        <p class="table-note" id="compare-bands-note">
            "A model's "<Term id="rank-band">"rank band"</Term>" is the middle 95 % (2.5–97.5 %) of the ranks it takes across the "
            {thousands(report.reps)}" statement-cluster bootstrap replicates ("{report.direction.direction.rank_one()}
            "; ties share the average rank). Models whose bands overlap, directly or through a chain, form a "
            <Term id="tie-group">"tie group"</Term>": the audit cannot settle their order. The same bands as in the Overview and the Scores view."
        </p>
        {sortable_table(
            TableNames {
                id: "compare-bands-table".into(),
                region: "Rank bands".into(),
                labelled_by: Some("compare-bands-title".into()),
                described_by: Some("compare-bands-note".into()),
                ..TableNames::default()
            },
            Signal::stored(columns),
            Signal::stored(rows),
            render,
            None,
        )}
        <p id="compare-ties" data-groups=groups.len()>{ties}</p>
        <div class="exports" role="group" aria-label="Export the comparison">
            <button id="compare-json" on:click=json>"Report as JSON"</button>
            <button id="compare-bands-csv" on:click=csv>"Rank bands as CSV"</button>
        </div>
        {move || export_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
    }
}
