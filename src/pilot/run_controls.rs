//! What the three run sections of the pilot panel share — a pilot ([`Kind::Pilot`]), judge coding of a
//! loaded bundle ([`Kind::Judging`]) and a clinical pilot ([`Kind::Clinical`]): starting a run,
//! restoring a saved run after a reload and the notice that offers to resume it, discarding a run,
//! the persistence error, and under the section's buttons ([`RunSection`]) the checked plan, what
//! went wrong in a run (a server's long wait, providers stopped early, failures grouped by reason)
//! and the buttons under a run, each enabled only when it applies. Element ids are `{prefix}-…`
//! with the section's prefix (`pilot`, `bundle-judge`, `clinical-pilot`); the end-to-end tests use
//! them.

use std::future::Future;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::pilot::runner::{self as runner, Kind, Phase, RunSetup, Snapshot};
use crate::pilot::store::StoreError;
use crate::ui::table::SortState;

/// Installs a run read back from IndexedDB: paused (resumable), or cancelled when the user had
/// cancelled it; its in-flight calls become pending again ([`runner::install`]).
pub fn install_restored(setup: RunSetup, cancelled: bool) {
    let phase = if cancelled {
        Phase::Cancelled
    } else {
        Phase::Paused
    };
    runner::install(setup, phase);
}

/// Installs a new run and starts it; a refusal (a key not typed yet) goes to `error`.
pub fn start(setup: RunSetup, error: RwSignal<Option<String>>) {
    let kind = setup.work.kind();
    runner::install(setup, Phase::Paused);
    if let Err(e) = runner::resume(kind) {
        error.set(Some(e.to_string()));
    }
}

/// A saved run read back, for [`restore`].
pub struct Restored {
    /// The run.
    pub setup: RunSetup,
    /// Whether the user had cancelled it (then it is not offered for resuming).
    pub cancelled: bool,
    /// The notice that offers to resume it; `None` when there is nothing to resume.
    pub notice: Option<String>,
}

/// Installs a run read back from IndexedDB ([`install_restored`]) and shows its notice in
/// `restored`. `read` is what the store gave: nothing saved, a record made into a run (or the
/// reason it cannot be: it is left in IndexedDB and reported in `store_error` as "The saved `what`
/// could not be restored"), or a store failure (reported as it is).
pub fn restore(
    read: Result<Option<Result<Restored, String>>, StoreError>,
    what: &str,
    restored: RwSignal<Option<String>>,
    store_error: RwSignal<Option<String>>,
) {
    match read {
        Ok(Some(Ok(run))) => {
            install_restored(run.setup, run.cancelled);
            if let Some(notice) = run.notice {
                restored.set(Some(notice));
            }
        }
        Ok(Some(Err(e))) => store_error.set(Some(format!(
            "The saved {what} could not be restored ({e}); it was left in IndexedDB."
        ))),
        Ok(None) => {}
        Err(e) => store_error.set(Some(e.to_string())),
    }
}

/// Forgets the run of `kind` in this tab, hides its "unfinished run" notice and deletes its saved
/// record with `clear`; a failure goes to `store_error`.
pub fn discard<F>(
    kind: Kind,
    restored: RwSignal<Option<String>>,
    store_error: RwSignal<Option<String>>,
    clear: impl FnOnce() -> F,
) where
    F: Future<Output = Result<(), StoreError>> + 'static,
{
    runner::discard(kind);
    restored.set(None);
    let cleared = clear();
    spawn_local(async move {
        if let Err(e) = cleared.await {
            store_error.set(Some(e.to_string()));
        }
    });
}

/// Resumes the run of `kind` and hides the "unfinished run" notice; a refusal (a key not typed yet)
/// goes to `error`.
pub fn resume_or_report(
    kind: Kind,
    error: RwSignal<Option<String>>,
    restored: RwSignal<Option<String>>,
) {
    error.set(None);
    restored.set(None);
    if let Err(e) = runner::resume(kind) {
        error.set(Some(e.to_string()));
    }
}

/// The notice of an unfinished saved run (`{prefix}-restored`, with `{prefix}-resume-saved`) and the
/// persistence error (`{prefix}-store-error`).
#[component]
pub fn SavedRunNotices(
    kind: Kind,
    prefix: &'static str,
    /// The resume button's label.
    resume_label: &'static str,
    /// The notice's text, `None` when there is nothing to resume.
    restored: RwSignal<Option<String>>,
    /// Where a refused resume is reported.
    error: RwSignal<Option<String>>,
    /// IndexedDB problems.
    store_error: RwSignal<Option<String>>,
    on_discard: Callback<()>,
) -> impl IntoView {
    view! {
        {move || restored.get().map(|m| view! {
            <div class="notice" id=format!("{prefix}-restored") role="status">
                <span>{m}</span>" "
                <button id=format!("{prefix}-resume-saved") on:click=move |_| resume_or_report(kind, error, restored)>{resume_label}</button>
                " "<button on:click=move |_| on_discard.run(())>"Discard it"</button>
            </div>
        })}
        {move || store_error.get().map(|m| view! {
            <div class="error" role="alert" id=format!("{prefix}-store-error")>{m}</div>
        })}
    }
}

/// Which of the buttons under a run apply now: Pause while running, Resume while paused, Cancel
/// while running or paused, Retry failed calls when there are failed calls, Open and Download when
/// something was answered; Discard always.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applies {
    /// Pause.
    pub pause: bool,
    /// Resume.
    pub resume: bool,
    /// Cancel.
    pub cancel: bool,
    /// Retry failed calls.
    pub retry: bool,
    /// Open as bundle / Download bundle.
    pub bundle: bool,
}

impl Applies {
    /// The buttons that apply to the run in `snapshot`.
    pub fn of(snapshot: &Snapshot) -> Self {
        let failed = snapshot.calls.failed + snapshot.judge_calls.failed;
        let answered = snapshot.calls.answered + snapshot.judge_calls.answered;
        Applies {
            pause: snapshot.phase == Phase::Running,
            resume: snapshot.phase == Phase::Paused,
            cancel: matches!(snapshot.phase, Phase::Running | Phase::Paused),
            retry: failed > 0,
            bundle: answered > 0,
        }
    }
}

/// What went wrong in a run, above its table: the pause a server asked for
/// (`{prefix}-server-wait`), the providers stopped early with one message each and, for network
/// failures, the browser's diagnosis (`{prefix}-stopped`), and the failed calls grouped by reason —
/// count and first example (`{prefix}-failures`).
#[component]
pub fn RunNotices(prefix: &'static str, snapshot: Snapshot) -> impl IntoView {
    let groups = snapshot.failure_groups;
    let stops = snapshot.stops;
    let n_stops = stops.len();
    view! {
        {snapshot.server_wait.map(|m| view! {
            <div class="warning server-wait" role="alert" id=format!("{prefix}-server-wait")>{m}</div>
        })}
        {(!stops.is_empty()).then(|| view! {
            <div class="error stopped" role="alert" id=format!("{prefix}-stopped") data-count=n_stops>
                {stops.into_iter().map(|s| view! {
                    <p class="stop" data-provider=s.provider.clone()>{s.message}</p>
                    {s.diagnosis.map(|d| view! {
                        <p class="diagnosis" data-reason=d.reason.key()>
                            {format!("What the browser could find out: {}", d.text())}
                        </p>
                    })}
                }).collect_view()}
            </div>
        })}
        {(!groups.is_empty()).then(|| view! {
            <table class="failure-groups" id=format!("{prefix}-failures")>
                <caption>"Failed calls by reason (count and the first example)"</caption>
                <thead><tr><th>"reason"</th><th>"calls"</th><th>"first example"</th></tr></thead>
                <tbody>
                    {groups.into_iter().map(|g| view! {
                        <tr data-key=g.key.clone() data-count=g.count>
                            <td class="label">{g.label}</td><td>{g.count}</td>
                            <td class="reason"><code>{g.first_call}</code>": "{g.first_message}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        })}
    }
}

/// The buttons under a run: pause, resume, cancel, retry failed calls, open, download, discard
/// (`{prefix}-pause` … `{prefix}-discard`), each enabled only when it applies ([`Applies`]).
#[component]
pub fn RunControls(
    kind: Kind,
    prefix: &'static str,
    /// The run the buttons act on.
    snapshot: Snapshot,
    /// The open button's label.
    open_label: &'static str,
    /// The discard button's label.
    discard_label: &'static str,
    /// Where refusals are reported.
    error: RwSignal<Option<String>>,
    /// The "unfinished run" notice, hidden on resume.
    restored: RwSignal<Option<String>>,
    on_open: Callback<()>,
    on_download: Callback<()>,
    on_discard: Callback<()>,
) -> impl IntoView {
    let a = Applies::of(&snapshot);
    view! {
        <div class="pilot-actions">
            <button id=format!("{prefix}-pause") disabled=!a.pause title="only while the run is sending calls"
                on:click=move |_| runner::pause(kind)>"Pause"</button>
            " "<button id=format!("{prefix}-resume") disabled=!a.resume title="only while the run is paused"
                on:click=move |_| resume_or_report(kind, error, restored)>"Resume"</button>
            " "<button id=format!("{prefix}-cancel") disabled=!a.cancel title="only while the run is sending or paused"
                on:click=move |_| runner::cancel(kind)>"Cancel"</button>
            " "<button id=format!("{prefix}-retry") disabled=!a.retry title="only when calls have failed"
                on:click=move |_| {
                    error.set(None);
                    if let Err(e) = runner::retry_failed(kind) {
                        error.set(Some(e.to_string()));
                    }
                }>"Retry failed calls"</button>
            " "<button id=format!("{prefix}-open") disabled=!a.bundle title="once a call has answered"
                on:click=move |_| on_open.run(())>{open_label}</button>
            " "<button id=format!("{prefix}-download") disabled=!a.bundle title="once a call has answered"
                on:click=move |_| on_download.run(())>"Download bundle"</button>
            " "<button id=format!("{prefix}-discard") on:click=move |_| on_discard.run(())>{discard_label}</button>
        </div>
    }
}

/// What "Check the plan" shows of a section's plan: the estimate, and the notes about it.
pub trait CheckedPlan: Clone + Send + Sync + 'static {
    /// The estimate's element (`{prefix}-estimate`).
    fn render(self) -> AnyView;
}

/// What a section shows under its "Check the plan" and "Run" buttons: the checked plan or why it
/// is refused (`{prefix}-plan-error`), why an action failed (`{prefix}-error`), and the run — what
/// went wrong in it ([`RunNotices`]), its progress and table (`table`), and its buttons
/// ([`RunControls`]).
#[component]
pub fn RunSection<P: CheckedPlan>(
    kind: Kind,
    prefix: &'static str,
    /// The checked plan, or why it is refused.
    plan_view: RwSignal<Option<Result<P, String>>>,
    /// Why an action failed (a refused resume included).
    error: RwSignal<Option<String>>,
    /// The "unfinished run" notice, hidden on resume.
    restored: RwSignal<Option<String>>,
    /// The run, as the runner reports it.
    snapshot: RwSignal<Option<Snapshot>>,
    /// The run's progress bar and results table, given the table's sort state (kept across the
    /// redraws of every progress update).
    table: fn(Snapshot, RwSignal<SortState>) -> AnyView,
    /// The open button's label.
    open_label: &'static str,
    /// The discard button's label.
    discard_label: &'static str,
    on_open: Callback<()>,
    on_download: Callback<()>,
    on_discard: Callback<()>,
) -> impl IntoView {
    let sort = RwSignal::new(None);
    view! {
        {move || plan_view.get().map(|p| match p {
            Ok(s) => s.render(),
            Err(e) => view! { <div class="error" role="alert" id=format!("{prefix}-plan-error")>{e}</div> }.into_any(),
        })}
        {move || error.get().map(|m| view! {
            <div class="error" role="alert" id=format!("{prefix}-error")>{m}</div>
        })}
        {move || snapshot.get().map(|s| view! {
            <RunNotices prefix snapshot=s.clone()/>
            {table(s.clone(), sort)}
            <RunControls kind prefix snapshot=s open_label discard_label error restored
                on_open on_download on_discard/>
        })}
    }
}

/// One column of a run's results table ([`results_table`]): its header, whether it holds numbers
/// (right-aligned under a right-aligned header, sorted by value) and the class of its cells — the
/// end-to-end tests read the model text as `td.text`, the judge's answer as `td.answer` and the
/// failure reason as `td.reason`; `""` for none.
#[derive(Debug, Clone, Copy)]
pub struct ResultColumn {
    /// The header text.
    pub label: &'static str,
    /// Whether the column holds numbers.
    pub numeric: bool,
    /// The cells' class (`text`, `answer`, `reason`) or `""`.
    pub class: &'static str,
}

impl ResultColumn {
    /// A text column headed `label` whose cells carry `class`.
    pub const fn text(label: &'static str, class: &'static str) -> Self {
        ResultColumn {
            label,
            numeric: false,
            class,
        }
    }

    /// A numeric column headed `label`.
    pub const fn number(label: &'static str) -> Self {
        ResultColumn {
            label,
            numeric: true,
            class: "",
        }
    }
}

/// One row of a run's results table: one call, its cells as shown (the first, the call id, is shown
/// as code) and the row's data attributes (`data-id`, `data-status`, and `data-label` / `data-kind`
/// where the section has them).
#[derive(Debug, Clone, Default)]
pub struct ResultRow {
    /// `data-id`: the call id.
    pub id: String,
    /// `data-status`: the call's state.
    pub status: &'static str,
    /// `data-label` (judge coding: the label the judge gave).
    pub label: Option<String>,
    /// `data-kind` (clinical pilot: the call's kind).
    pub kind: Option<String>,
    /// The cells, one per column.
    pub cells: Vec<String>,
}

/// A run's results table (`id`: `pilot-results`, `bundle-judge-results`, `clinical-pilot-results`)
/// on the one table component: sortable by any column (click or keyboard; numeric columns by value),
/// the model text shown as text, under `caption`. Sorting moves rows only. `sort` is the run
/// section's: the table is drawn again on every progress update and keeps the reader's sort.
pub fn results_table(
    id: &'static str,
    region: &'static str,
    caption: &'static str,
    columns: &[ResultColumn],
    rows: Vec<ResultRow>,
    sort: RwSignal<SortState>,
) -> impl IntoView {
    use atlas_core::tables::SortKey;

    use crate::ui::table::{sortable_table_keeping, Column, TableNames};

    let classes: Vec<(bool, &'static str)> = columns.iter().map(|c| (c.numeric, c.class)).collect();
    let header: Vec<Column> = columns
        .iter()
        .map(|c| {
            if c.numeric {
                Column::number(c.label)
            } else {
                Column::text(c.label)
            }
        })
        .collect();
    let keys: Vec<(usize, Vec<SortKey>)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let keys = r
                .cells
                .iter()
                .zip(&classes)
                .map(|(v, (numeric, _))| {
                    if *numeric {
                        SortKey::number(v.parse::<f64>().ok())
                    } else {
                        SortKey::new(v, None)
                    }
                })
                .collect();
            (i, keys)
        })
        .collect();
    let rows = std::sync::Arc::new(rows);
    let render_row = move |i: usize| {
        let Some(r) = rows.get(i).cloned() else {
            return ().into_any();
        };
        let cells = r
            .cells
            .into_iter()
            .enumerate()
            .map(|(k, v)| {
                let (numeric, class) = classes.get(k).copied().unwrap_or((false, ""));
                let class = if numeric { "num" } else { class };
                let class = (!class.is_empty()).then_some(class);
                if k == 0 {
                    view! { <td class=class><code>{v}</code></td> }.into_any()
                } else {
                    view! { <td class=class>{v}</td> }.into_any()
                }
            })
            .collect_view();
        view! {
            <tr data-id=r.id data-status=r.status data-label=r.label data-kind=r.kind>{cells}</tr>
        }
        .into_any()
    };
    sortable_table_keeping(
        TableNames {
            id: id.into(),
            class: "pilot-results".into(),
            region: region.into(),
            ..TableNames::default()
        },
        Signal::stored(header),
        Signal::stored(keys),
        render_row,
        Some(view! { <caption>{caption}</caption> }.into_any()),
        sort,
    )
}
