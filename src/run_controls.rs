//! What the three run sections of the pilot panel share — a pilot ([`Kind::Pilot`]), judge coding of a
//! loaded bundle ([`Kind::Judging`]) and a clinical pilot ([`Kind::Clinical`]): restoring a saved run
//! after a reload, the notice that offers to resume it, the persistence error, and the buttons under a
//! run. Element ids are `{prefix}-…` with the section's prefix (`pilot`, `bundle-judge`,
//! `clinical-pilot`); the end-to-end tests use them.

use atlas_pilot::RunState;
use leptos::prelude::*;

use crate::pilot_runner::{self as runner, Kind, Outputs, Phase, Settings, Work};
use crate::pilot_store::Keys;

/// Installs a run read back from IndexedDB: paused (resumable), or cancelled when the user had
/// cancelled it; its in-flight calls become pending again ([`runner::install`]).
#[allow(clippy::too_many_arguments)]
pub fn install_restored(
    work: Work,
    state: RunState,
    form: serde_json::Value,
    source: String,
    settings: Settings,
    keys: Keys,
    out: Outputs,
    cancelled: bool,
) {
    let phase = if cancelled {
        Phase::Cancelled
    } else {
        Phase::Paused
    };
    runner::install(work, state, form, source, settings, keys, out, phase);
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
        error.set(Some(e));
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

/// The buttons under a run: pause, resume, cancel, retry failed calls, open, download, discard
/// (`{prefix}-pause` … `{prefix}-discard`).
#[component]
pub fn RunControls(
    kind: Kind,
    prefix: &'static str,
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
    view! {
        <div class="pilot-actions">
            <button id=format!("{prefix}-pause") on:click=move |_| runner::pause(kind)>"Pause"</button>
            " "<button id=format!("{prefix}-resume") on:click=move |_| resume_or_report(kind, error, restored)>"Resume"</button>
            " "<button id=format!("{prefix}-cancel") on:click=move |_| runner::cancel(kind)>"Cancel"</button>
            " "<button id=format!("{prefix}-retry") on:click=move |_| {
                error.set(None);
                if let Err(e) = runner::retry_failed(kind) {
                    error.set(Some(e));
                }
            }>"Retry failed calls"</button>
            " "<button id=format!("{prefix}-open") on:click=move |_| on_open.run(())>{open_label}</button>
            " "<button id=format!("{prefix}-download") on:click=move |_| on_download.run(())>"Download bundle"</button>
            " "<button id=format!("{prefix}-discard") on:click=move |_| on_discard.run(())>{discard_label}</button>
        </div>
    }
}
