//! The re-weighting panel (seed `000_…` Eq. 4): presets, one weight per condition, sweeps, the
//! re-weighted reference scores and ranks with their bootstrap intervals, and the exports. Its state is
//! [`crate::state::reweighting::ExplorerModel`].

use crate::state::reweighting::{BootState, ExplorerModel, BOOT_REPS, BOOT_SEED};
use crate::views::headline::{band_text, tie_groups_text};

use crate::ui::glossary::Term;
use atlas_core::reweight::{
    ConditionWeights, PresetKind, WeightEntry, WeightPreset, BOOTSTRAP_STREAM, WEIGHT,
};
use leptos::prelude::*;

use crate::browser::clipboard::copy_then;
use crate::browser::export::download_text;
use crate::state::AtlasState;
use crate::ui::format::{display_percent, display_points, thousands, NO_VALUE};
use crate::ui::number_field::{message, NumberInput};
use crate::ui::table::{sortable_table, Column, TableNames};
use atlas_core::tables::SortKey;

/// The number a range input's event carries (`valueAsNumber`); `None` when it is not a number.
fn slider_number(ev: &leptos::ev::Event) -> Option<f64> {
    let input: web_sys::HtmlInputElement = event_target(ev);
    Some(input.value_as_number()).filter(|v| v.is_finite())
}

/// Downloads `text` and reports a failure in `error`.
fn offer(error: RwSignal<Option<String>>, text: Option<String>, mime: &str, name: String) {
    match text {
        Some(text) => match download_text(&text, mime, &name) {
            Ok(()) => error.set(None),
            Err(e) => error.set(Some(format!("The download failed: {e}"))),
        },
        None => error.set(Some("Nothing to export yet.".into())),
    }
}

/// The re-weighting panel.
#[component]
pub fn Reweighting() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let model = expect_context::<ExplorerModel>();
    let basis0 = model.basis.get_untracked().0;
    let conditions = basis0.conditions().to_vec();
    let sweeps = basis0.sweeps().to_vec();
    let models = basis0.models().to_vec();
    let labels = model.labels.get_value();
    let baseline_reason = ConditionWeights::baseline_only(&basis0)
        .err()
        .map(|e| e.to_string());
    let selectable_sweeps: Vec<String> = sweeps
        .iter()
        .filter(|s| !s.selection_conditions.is_empty())
        .map(|s| s.display_name().to_string())
        .collect();
    let export_error = RwSignal::new(None::<String>);
    let copied = RwSignal::new(None::<String>);

    // Presets.
    let preset_options = PresetKind::ALL
        .into_iter()
        .map(|p| {
            let disabled = match p {
                PresetKind::Baseline => baseline_reason.clone(),
                PresetKind::Sweep if selectable_sweeps.is_empty() => {
                    Some("the bundle has no sweep with a Selection condition".to_string())
                }
                _ => None,
            };
            let reason_id = format!("preset-{}-reason", p.key());
            let has_reason = disabled.is_some();
            view! {
                <label class="preset-option">
                    <input
                        type="radio"
                        name="reweight-preset"
                        id=format!("preset-{}", p.key())
                        value=p.key()
                        prop:checked=move || model.preset.get() == p
                        prop:disabled=has_reason
                        aria-describedby=has_reason.then(|| reason_id.clone())
                        on:change=move |_| {
                            if p == PresetKind::Custom {
                                model.start_custom();
                            }
                            model.preset.set(p)
                        }
                    />
                    {p.label()}
                    {disabled.map(|r| view! { <span class="hint" id=reason_id>{format!(" — not available: {r}")}</span> })}
                </label>
            }
        })
        .collect_view();
    let sweep_select = (!selectable_sweeps.is_empty()).then(|| {
        let options = selectable_sweeps
            .iter()
            .map(|s| {
                let s2 = s.clone();
                view! { <option value=s.clone() selected=move || model.sweep.get() == s2>{s.clone()}</option> }
            })
            .collect_view();
        view! {
            <label class="sweep-pick">
                "Sweep: "
                <select id="preset-sweep-name" on:change=move |ev| {
                    model.sweep.set(event_target_value(&ev));
                    model.preset.set(PresetKind::Sweep);
                }>
                    {options}
                </select>
            </label>
        }
    });

    // One row per condition: number input + slider.
    let weight_rows = conditions
        .iter()
        .enumerate()
        .map(|(c, cond)| {
            let number_id = format!("w-{c}");
            let range_id = format!("w-{c}-range");
            let hint_id = format!("w-{c}-hint");
            let sweep = cond.sweep.clone().unwrap_or_else(|| "no sweep".into());
            let hint = if cond.has_selection {
                format!(
                    "{} · sweep {sweep}{}",
                    cond.id,
                    if cond.in_reference {
                        ""
                    } else {
                        " · not in Eq. 4"
                    }
                )
            } else {
                format!(
                    "{} · sweep {sweep} · no Selection readout: weight 0",
                    cond.id
                )
            };
            let enabled = cond.has_selection;
            let on_text = Callback::new(move |text: String| {
                model.set_condition_entry(c, WeightEntry::Text(text))
            });
            // The slider's number goes in as a number, never through its text.
            let on_slider = move |ev: leptos::ev::Event| {
                if let Some(w) = slider_number(&ev) {
                    model.set_condition_entry(c, WeightEntry::Value(w));
                }
            };
            // The slider shows the weight in use: the typed one once it is valid, else the last valid.
            let slider_value = move || {
                model
                    .valid
                    .with(|w| w.as_slice().get(c).copied().unwrap_or(0.0))
            };
            let label = cond.label.clone();
            let problem = Signal::derive(move || {
                if model.preset.get() != PresetKind::Custom {
                    return None;
                }
                model.entries.with(|t| match t.get(c) {
                    Some(WeightEntry::Text(text)) => {
                        WEIGHT.read(text).err().map(|e| message(&label, &e))
                    }
                    _ => None,
                })
            });
            view! {
                <div class="weight-row" data-condition=cond.id.clone()>
                    <label for=number_id.clone()>
                        <span class="name">{cond.label.clone()}</span>
                        <span class="hint" id=hint_id.clone()>{hint}</span>
                    </label>
                    <NumberInput
                        id=number_id.clone()
                        decimal=true
                        describedby=hint_id.clone()
                        shown=Signal::derive(move || model.condition_text(c))
                        on_text=on_text
                        problem=problem
                        disabled=!enabled
                    />
                    <input
                        type="range"
                        id=range_id
                        min="0"
                        max=move || format!("{}", slider_value().max(5.0).ceil())
                        step="0.1"
                        aria-label=format!("Weight of {} (slider)", cond.label)
                        aria-describedby=hint_id
                        prop:value=move || slider_value().to_string()
                        prop:disabled=!enabled
                        on:input=on_slider
                    />
                </div>
            }
        })
        .collect_view();
    let sweep_rows = sweeps
        .iter()
        .enumerate()
        .map(|(g, s)| {
            let number_id = format!("sw-{g}");
            let name = s.display_name().to_string();
            let enabled = !s.selection_conditions.is_empty();
            let entry = move || model.sweep_entries.with(|t| t.get(g).cloned());
            let text = move || entry().map(|e| e.text()).unwrap_or_default();
            let set_text = move |v: String| model.set_sweep_entry(g, WeightEntry::Text(v));
            let on_slider = move |ev: leptos::ev::Event| {
                if let Some(w) = slider_number(&ev) {
                    model.set_sweep_entry(g, WeightEntry::Value(w));
                }
            };
            // The slider shows the sweep weight in use: the entered one once valid, else the last valid.
            let slider = move || match model.valid.with(|w| w.preset().clone()) {
                WeightPreset::PerSweep { weights } => weights.get(g).copied().unwrap_or(1.0),
                _ => entry()
                    .and_then(|e| e.weight())
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .unwrap_or(1.0),
            };
            let sweep_label = format!("Sweep {name}");
            let problem = Signal::derive(move || {
                if model.preset.get() != PresetKind::PerSweep {
                    return None;
                }
                WEIGHT.read(&text()).err().map(|e| message(&sweep_label, &e))
            });
            view! {
                <div class="weight-row" data-sweep=name.clone()>
                    <label for=number_id.clone()>
                        <span class="name">{format!("Sweep {name}")}</span>
                        <span class="hint">{format!("{} Selection condition(s), weight spread equally", s.selection_conditions.len())}</span>
                    </label>
                    <NumberInput id=number_id decimal=true shown=Signal::derive(text)
                        on_text=Callback::new(set_text) problem=problem disabled=!enabled />
                    <input type="range" id=format!("sw-{g}-range") min="0"
                        max=move || format!("{}", slider().max(5.0).ceil()) step="0.1"
                        aria-label=format!("Weight of sweep {name} (slider)")
                        prop:value=move || slider().to_string() prop:disabled=!enabled on:input=on_slider />
                </div>
            }
        })
        .collect_view();

    // Show / hide models and conditions.
    let model_toggles = models
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let label = labels.get(m).cloned().unwrap_or_else(|| id.clone());
            view! {
                <label class="toggle">
                    <input type="checkbox" id=format!("show-model-{m}") data-model=id.clone()
                        prop:checked=move || model.shown_models.with(|s| s.get(m).copied().unwrap_or(true))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.shown_models.update(|s| if let Some(x) = s.get_mut(m) { *x = on });
                        }/>
                    {label}
                </label>
            }
        })
        .collect_view();
    let condition_toggles = conditions
        .iter()
        .enumerate()
        .map(|(c, cond)| {
            view! {
                <label class="toggle">
                    <input type="checkbox" id=format!("show-condition-{c}") data-condition=cond.id.clone()
                        prop:checked=move || model.shown_conditions.with(|s| s.get(c).copied().unwrap_or(true))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.shown_conditions.update(|s| if let Some(x) = s.get_mut(c) { *x = on });
                        }/>
                    {cond.id.clone()}
                </label>
            }
        })
        .collect_view();

    // The table (the app's sortable table, `crate::ui::table`).
    let conditions_for_header = conditions.clone();
    let table_columns = Signal::derive(move || {
        let shown = model.shown_conditions.get();
        let mut columns = vec![
            Column::text("Model"),
            Column {
                class: "score".into(),
                ..Column::number("Score")
            },
            Column {
                class: "ci".into(),
                ..Column::number("95% interval (%)")
            },
            Column {
                class: "delta".into(),
                ..Column::number("Δ vs equal (pp)")
            },
            Column {
                class: "rank".into(),
                ..Column::number("Rank")
            },
            Column {
                class: "band".into(),
                ..Column::number("Rank band (95%)")
            },
            Column {
                class: "equal-rank".into(),
                ..Column::number("Equal-weight rank")
            },
            Column {
                class: "abstain".into(),
                ..Column::number("Abstain share")
            },
        ];
        columns.extend(
            conditions_for_header
                .iter()
                .zip(shown)
                .filter(|(c, s)| *s && c.has_selection)
                .map(|(c, _)| Column {
                    class: "cond".into(),
                    ..Column::number(format!("{} mean", c.id))
                }),
        );
        columns
    });
    let conditions_for_keys = conditions.clone();
    let table_rows = Signal::derive(move || {
        let Some(view) = model.view.get() else {
            return Vec::new();
        };
        let basis = model.basis.get().0;
        let intervals = model.intervals.get();
        let bands = model.rank_bands.get();
        let shown_m = model.shown_models.get();
        let shown_c = model.shown_conditions.get();
        view.rows
            .iter()
            .filter(|r| shown_m.get(r.m).copied().unwrap_or(true))
            .map(|r| {
                let ci = intervals
                    .as_ref()
                    .and_then(|i| i.get(r.m).copied().flatten());
                let mut keys = vec![
                    SortKey::text(&r.label),
                    SortKey::number(r.score),
                    SortKey::number(ci.map(|i| i.lo)),
                    SortKey::number(r.delta_pp),
                    SortKey::number(r.rank),
                    SortKey::number(
                        bands
                            .as_ref()
                            .and_then(|b| b.bands.get(r.m))
                            .and_then(|b| b.lo),
                    ),
                    SortKey::number(r.equal_rank),
                    SortKey::number(r.abstain_share),
                ];
                keys.extend(
                    conditions_for_keys
                        .iter()
                        .enumerate()
                        .filter(|(c, cond)| {
                            shown_c.get(*c).copied().unwrap_or(true) && cond.has_selection
                        })
                        .map(|(c, _)| SortKey::number(basis.condition_mean(r.m, c))),
                );
                (r.m, keys)
            })
            .collect::<Vec<_>>()
    });
    let conditions_for_rows = conditions.clone();
    let render_row = move |m: usize| {
        let Some(view) = model.view.get() else {
            return ().into_any();
        };
        let Some(r) = view.rows.iter().find(|r| r.m == m) else {
            return ().into_any();
        };
        let basis = model.basis.get().0;
        let intervals = model.intervals.get();
        let bands = model.rank_bands.get();
        let shown_c = model.shown_conditions.get();
        {
            {
                let ci = intervals
                    .as_ref()
                    .and_then(|i| i.get(r.m).copied().flatten());
                let ci_text = ci.map_or_else(
                    || "…".to_string(),
                    |i| format!("{:.1} – {:.1} %", 100.0 * i.lo, 100.0 * i.hi),
                );
                let means = conditions_for_rows
                    .iter()
                    .enumerate()
                    .filter(|(c, cond)| shown_c.get(*c).copied().unwrap_or(true) && cond.has_selection)
                    .map(|(c, cond)| {
                        let v = basis.condition_mean(r.m, c);
                        let share = basis.counts(r.m, c).abstain_share();
                        let high = basis.abstain_threshold().flags(share);
                        view! {
                            <td class="cond num" data-condition=cond.id.clone() data-value=v.map(|x| x.to_string()).unwrap_or_default()
                                data-high-abstain=high.to_string() class:high-abstain=high>
                                {display_percent(v)}
                                {high.then(|| view! { <span class="flag">{format!("⚠ {} Abstain", atlas_core::abstain::share_text(share.unwrap_or(0.0)))}</span> })}
                            </td>
                        }
                    })
                    .collect_view();
                let moved = match (r.rank, r.equal_rank) {
                    (Some(a), Some(b)) if a < b => "up",
                    (Some(a), Some(b)) if a > b => "down",
                    _ => "",
                };
                let flagged = !r.abstain_flag.is_empty();
                let band = bands.as_ref().and_then(|b| b.bands.get(r.m));
                let band_lo = band
                    .and_then(|b| b.lo)
                    .map(|x| x.to_string())
                    .unwrap_or_default();
                let band_hi = band
                    .and_then(|b| b.hi)
                    .map(|x| x.to_string())
                    .unwrap_or_default();
                let band_text = if band.is_some() {
                    band_text(band)
                } else {
                    "…".to_string()
                };
                view! {
                    <tr data-model=r.id.clone() class=moved data-high-abstain=flagged.to_string()>
                        <th scope="row" class="text" title=format!("model id: {}", r.id)>{r.label.clone()}</th>
                        <td class="score num" data-value=r.score.map(|x| x.to_string()).unwrap_or_default()>{display_percent(r.score)}</td>
                        <td class="ci num"
                            data-lo=ci.map(|i| i.lo.to_string()).unwrap_or_default()
                            data-hi=ci.map(|i| i.hi.to_string()).unwrap_or_default()>{ci_text}</td>
                        <td class="delta num" data-value=r.delta_pp.map(|x| x.to_string()).unwrap_or_default()>{display_points(r.delta_pp)}</td>
                        <td class="rank num" data-value=r.rank.map(|x| x.to_string()).unwrap_or_default()>{r.rank_text.clone()}</td>
                        <td class="band num" data-lo=band_lo data-hi=band_hi>{band_text}</td>
                        <td class="equal-rank num" data-value=r.equal_rank.map(|x| x.to_string()).unwrap_or_default()>{r.equal_rank_text.clone()}</td>
                        <td class="abstain num" class:high-abstain=flagged data-value=r.abstain_share.map(|x| x.to_string()).unwrap_or_default()>
                            {r.abstain_share.map_or(NO_VALUE.to_string(), atlas_core::abstain::share_text)}
                            {flagged.then(|| view! { <span class="flag">{r.abstain_flag.clone()}</span> })}
                        </td>
                        {means}
                    </tr>
                }
                .into_any()
            }
        }
    };
    let models_for_summary = models.clone();
    let summary = move || {
        let view = model.view.get()?;
        let r = &view.result;
        let shown = model.shown_models.get();
        let ids = &models_for_summary;
        let (visible, hidden): (Vec<_>, Vec<_>) = r.inverted_pairs.iter().partition(|(a, b)| {
            shown.get(*a).copied().unwrap_or(true) && shown.get(*b).copied().unwrap_or(true)
        });
        let ties = model.rank_bands.get().map(|b| {
            let labels = model.labels.get_value();
            let label = |id: &str| {
                ids.iter()
                    .position(|m| m == id)
                    .and_then(|m| labels.get(m).cloned())
                    .unwrap_or_else(|| id.to_string())
            };
            let groups = b.tie_groups.iter().filter(|g| g.len() > 1).count();
            view! { <p class="reweight-ties" id="reweight-ties" data-groups=groups>{tie_groups_text(&b, &label)}</p> }
        });
        let items = visible
            .iter()
            .map(|&&(a, b)| {
                view! { <li data-a=ids[a].clone() data-b=ids[b].clone()>{format!("{} ↔ {}", ids[a], ids[b])}</li> }
            })
            .collect_view();
        Some(view! {
            <div class="reweight-summary" id="reweight-summary" role="status" aria-live="polite"
                data-tau-b=r.tau_b.map(|t| t.to_string()).unwrap_or_default()
                data-inverted=r.inversions.inverted.to_string()
                data-pairs=r.inversions.pairs.to_string()>
                <p>
                    "Against the equal-weight ranking: Kendall τ-b = "
                    <strong>{r.tau_b.map_or("undefined".to_string(), |t| format!("{t:.3}"))}</strong>
                    " · " <strong>{format!("{} of {}", r.inversions.inverted, r.inversions.pairs)}</strong>
                    " model pairs inverted · largest rank change "
                    {r.max_displacement.map_or("—".to_string(), |d| d.to_string())}
                    "."
                </p>
                {(!r.inverted_pairs.is_empty()).then(|| view! {
                    <ul class="pairs" id="reweight-pairs" aria-label="Model pairs whose order is inverted against equal weights">{items}</ul>
                })}
                {(!hidden.is_empty()).then(|| view! {
                    <p class="hint">{format!("{} further inverted pair(s) involve hidden models.", hidden.len())}</p>
                })}
                {ties}
            </div>
        })
    };
    let provenance = move || {
        let description = model
            .view
            .get()
            .map_or_else(String::new, |v| v.description.clone());
        let bundle = model.loaded.with_value(|l| l.audit.metadata().id.clone());
        let boot = match model.boot.get() {
            BootState::Ready { boot, .. } => format!(
                "95% bootstrap intervals over statements: random seed {}, {} replicates (random-number stream {BOOTSTRAP_STREAM} of that seed)",
                boot.seed(),
                thousands(boot.reps())
            ),
            BootState::Running { .. } => format!(
                "intervals being computed (random seed {})",
                model.boot_settings.get().0
            ),
            BootState::Failed(_) => "no intervals (the bootstrap failed)".to_string(),
            BootState::Idle => "no intervals yet".to_string(),
        };
        format!(
            "Bundle {bundle} · repeat policy {} · weights: {description} · {boot}",
            state.policy.get().key()
        )
    };
    let boot_status = move || {
        match model.boot.get() {
        BootState::Idle => view! { <span id="reweight-boot-status" data-state="idle">"Intervals: not started."</span> }.into_any(),
        BootState::Running { done, total } => view! {
            <span id="reweight-boot-status" data-state="running" class="progress">
                <progress value=done as f64 max=total.max(1) as f64></progress>
                {format!("Bootstrap in a Web Worker: {} of {} replicates…", thousands(done), thousands(total))}
            </span>
        }.into_any(),
        BootState::Ready { boot, .. } => view! {
            <span id="reweight-boot-status" data-state="ready" data-seed=boot.seed().to_string() data-reps=boot.reps().to_string()>
                {format!("Intervals ready: random seed {}, {} replicates.", boot.seed(), thousands(boot.reps()))}
            </span>
        }.into_any(),
        BootState::Failed(message) => view! {
            <span id="reweight-boot-status" data-state="failed" class="error" role="alert">{format!("The bootstrap failed: {message}")}</span>
        }.into_any(),
    }
    };
    let apply_boot = move |_| {
        let seed = BOOT_SEED.value(&model.seed_text.get_untracked());
        let reps = BOOT_REPS.value(&model.reps_text.get_untracked());
        match (seed, reps) {
            (Ok(seed), Ok(reps)) => {
                model.boot_error.set(None);
                model.boot_settings.set((seed, reps as usize));
            }
            (Err(e), _) => model.boot_error.set(Some(format!(
                "{}; the intervals shown keep their random seed.",
                message("Random seed", &e)
            ))),
            (_, Err(e)) => model.boot_error.set(Some(format!(
                "{}; the intervals shown keep theirs.",
                message("Replicates", &e)
            ))),
        }
    };
    let stem = model.file_stem();
    let stem2 = stem.clone();
    let download_csv = move |_| {
        offer(
            export_error,
            model.csv(),
            "text/csv;charset=utf-8",
            format!("{stem}-reweighting.csv"),
        )
    };
    let download_json = move |_| {
        let text = model.state_json(state);
        match text {
            Ok(t) => offer(
                export_error,
                Some(t),
                "application/json",
                format!("{stem2}-analysis-state.json"),
            ),
            Err(e) => export_error.set(Some(format!("The export failed: {e}"))),
        }
    };
    let copy_link = move |_| {
        let url = model.url.get_untracked();
        copy_then(url, move |done| {
            copied.try_set(Some(match done {
                Ok(()) => "Link copied; it is also in the box.".into(),
                Err(e) => format!("Could not copy ({e}): copy the link from the box."),
            }));
        });
    };

    view! {
        <section class="reweight" id="reweight" data-view="reweight" aria-labelledby="reweight-title">
            <h2 id="reweight-title">"What if conditions counted differently? Re-weighting the "<Term id="reference-score">"reference score"</Term>" "<span class="paper-ref">"BiAxisBias paper Eq. 4, §3.2"</span></h2>
            <p>
                "The reference score (Eq. 4) averages the Selection conditions with equal weights: it encodes coverage, not deployment frequency (the BiAxisBias paper §3.2, §3.5). "
                "Give each condition its own weight and see which scores and ranks move. Only the ratios of the weights matter; 0 leaves a condition out. "
                "Numbers update as you type or drag; the interval of each score is a 95% statement-cluster bootstrap interval, computed once in a background worker."
            </p>
            {move || model.link_notice.get().map(|n| view! { <p class="warning" role="note" id="reweight-link-notice">{n}</p> })}
            <div class="reweight-controls">
                <fieldset class="presets">
                    <legend>"Weights"</legend>
                    {preset_options}
                    {sweep_select}
                </fieldset>
                <fieldset class="weights" id="reweight-weights">
                    <legend>"Weight per condition"</legend>
                    {weight_rows}
                </fieldset>
                <fieldset class="weights sweep-weights" id="reweight-sweeps"
                    prop:hidden=move || model.preset.get() != PresetKind::PerSweep>
                    <legend>"Weight per sweep"</legend>
                    {sweep_rows}
                </fieldset>
            </div>
            {move || model.attempt.get().err().map(|message| {
                let last = model.view.get().map(|v| v.description.clone()).unwrap_or_default();
                view! {
                    <p class="error" role="alert" id="reweight-error">
                        <strong>"Not applied: "</strong>{message.to_string()}
                        {format!(". The numbers below are still those of the last valid weights ({last}).")}
                    </p>
                }
            })}
            {summary}
            <p class="provenance" id="reweight-provenance">{provenance}</p>
            <p class="table-note" id="reweight-table-note">
                "Per model: the score under the chosen weights (mean over the weighted conditions of each condition's mean over templates and statements; %), its 95% interval, the change against equal weights (pp), its rank (ties share the average rank) and its equal-weight rank, the Abstain share of the weighted cells, then each shown condition's mean. "
                <span id="reweight-direction">{move || model.basis.with(|b| format!("Ranking: {}; {}. ", b.0.direction().describe(), b.0.direction().direction.rank_one()))}</span>
                <span id="reweight-abstain">{move || model.view.get().map(|v| {
                    let basis = model.basis.get().0;
                    let t = basis.abstain_threshold();
                    let ranked = v.result.ranks.iter().filter(|r| r.is_some()).count();
                    let flagged = v.result.abstain.iter().zip(&v.result.ranks).filter(|(a, r)| r.is_some() && a.is_flagged(t)).count();
                    let cells: usize = v.result.abstain.iter().map(|a| a.cells.len()).sum();
                    let flagged_cells: usize = v.result.abstain.iter().map(|a| a.flagged(t).len()).sum();
                    format!("{} {flagged_cells} of {cells} weighted cells flagged; {flagged} of {ranked} ranks rest on such a cell. ", atlas_core::abstain::caption_short(t))
                })}</span>
                "Ranks are among all models of the bundle, including hidden ones; ▲ marks a model that moved towards rank 1 under these weights, ▼ one that moved away from it."
            </p>
            {sortable_table(
                TableNames {
                    id: "reweight-table".into(),
                    region: "Re-weighting table".into(),
                    described_by: Some("reweight-table-note reweight-provenance".into()),
                    ..TableNames::default()
                },
                table_columns,
                table_rows,
                render_row,
                Some(view! { <caption class="visually-hidden">"Scores and ranks under the chosen condition weights"</caption> }.into_any()),
            )}
            <div class="boot-controls">
                <label class="setting">
                    <span class="name">"Bootstrap random seed"</span>
                    <NumberInput id="reweight-seed" shown=model.seed_text
                        on_text=Callback::new(move |v| model.seed_text.set(v))
                        problem=Signal::derive(move || model.seed_text.with(|t| BOOT_SEED.read(t).err().map(|e| message("Random seed", &e))))/>
                </label>
                <label class="setting">
                    <span class="name">"Replicates"</span>
                    <NumberInput id="reweight-reps" shown=model.reps_text
                        on_text=Callback::new(move |v| model.reps_text.set(v))
                        problem=Signal::derive(move || model.reps_text.with(|t| BOOT_REPS.read(t).err().map(|e| message("Replicates", &e))))/>
                </label>
                <button id="reweight-boot-run" on:click=apply_boot>"Recompute intervals"</button>
                <span role="status">{boot_status}</span>
            </div>
            {move || model.boot_error.get().map(|e| view! { <p class="error" role="alert" id="reweight-boot-error">{e}</p> })}
            <details class="shown" id="reweight-shown">
                <summary>"Models and conditions shown"</summary>
                <p class="hint">"Hidden models and conditions leave the table, the charts and the exports; the numbers of the others do not change."</p>
                <fieldset><legend>"Models"</legend>{model_toggles}</fieldset>
                <fieldset><legend>"Conditions"</legend>{condition_toggles}</fieldset>
            </details>
            <div class="exports" role="group" aria-label="Export and share the re-weighting">
                <button id="reweight-csv" on:click=download_csv>"Table as CSV"</button>
                <button id="reweight-json" on:click=download_json>"State and results as JSON"</button>
                <button id="reweight-copy-link" on:click=copy_link>"Copy link to this view"</button>
                <label class="link">
                    <span class="visually-hidden">"Link to this view"</span>
                    <input type="text" readonly id="reweight-link" prop:value=move || model.url.get()
                        on:focus=move |ev| { let i: web_sys::HtmlInputElement = event_target(&ev); i.select(); }/>
                </label>
            </div>
            {move || copied.get().map(|c| view! { <p class="hint" role="status">{c}</p> })}
            {move || model.loaded.with_value(|l| l.base_url.is_none()).then(|| view! {
                <p class="hint" id="reweight-file-note">"This bundle was opened from a local file: the link carries its id and the view but not the file; whoever opens the link must open the same file."</p>
            })}
            {move || export_error.get().map(|e| view! { <p class="error" role="alert" id="reweight-export-error">{e}</p> })}
        </section>
    }
}
