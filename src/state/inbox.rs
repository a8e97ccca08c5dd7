//! What a file dropped anywhere on the page is ([`classify_drop`]), and the inbox that hands a dropped
//! results file to the Import view ([`ImportInbox`], context).
//!
//! The app shell ([`crate::views::shell`]) catches every drop on the window: a bundle is opened
//! ([`crate::state::AtlasState::load_file`]), a results file is put into the inbox and the Import view
//! is shown, which takes it as if it had been picked in its own file input; anything else gets a
//! message naming the file and what is accepted.

use leptos::prelude::*;

/// What a dropped file is taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropKind {
    /// An Audit Atlas bundle (JSON whose start declares `"format": "audit-atlas-bundle"`): opened.
    Bundle,
    /// A results file for Import (CSV, TSV, JSONL / NDJSON, JSON that is not a bundle, or a tool log:
    /// Inspect AI `.eval`, Parquet).
    Results,
    /// Neither: the shell says so ([`unsupported_message`]).
    Unsupported,
}

/// How many bytes of a dropped `.json` file [`classify_drop`] looks at for the bundle marker.
pub const SNIFF_BYTES: f64 = 65_536.0;

/// Classifies a dropped file by its `name` (extension, case-insensitive) and, for `.json`, the first
/// [`SNIFF_BYTES`] of its text (`head`): `"format"` followed by `:` and `"audit-atlas-bundle"`
/// (whitespace allowed between) makes it a bundle, any other JSON is results for Import.
/// `.csv`, `.tsv`, `.tab`, `.jsonl`, `.ndjson` and the tool logs `.eval` (Inspect AI) and `.parquet`
/// / `.pq` are results (the Import view detects the log format from the bytes); every other name is
/// unsupported.
pub fn classify_drop(name: &str, head: &str) -> DropKind {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "json" if declares_bundle(head) => DropKind::Bundle,
        "json" | "csv" | "tsv" | "tab" | "jsonl" | "ndjson" | "eval" | "parquet" | "pq" => {
            DropKind::Results
        }
        _ => DropKind::Unsupported,
    }
}

/// Whether `head` (the start of a JSON text) holds `"format"`, `:`, `"audit-atlas-bundle"` in a row,
/// with only whitespace between.
pub fn declares_bundle(head: &str) -> bool {
    let mut rest = head;
    while let Some(at) = rest.find("\"format\"") {
        rest = &rest[at + "\"format\"".len()..];
        let after = rest.trim_start();
        if let Some(value) = after.strip_prefix(':') {
            if value.trim_start().starts_with("\"audit-atlas-bundle\"") {
                return true;
            }
        }
    }
    false
}

/// The message for a dropped file that is neither a bundle nor a results file.
pub fn unsupported_message(name: &str) -> String {
    format!(
        "{name} was not opened: drop a bundle (a .json file with \"format\": \"audit-atlas-bundle\") to open it, \
         or a results file (.csv, .tsv, .jsonl or .json) or a tool log (Inspect AI .eval, lm-evaluation-harness, promptfoo) to import it."
    )
}

/// A results file waiting for the Import view (context): the shell puts a dropped file here, the
/// Import view takes it (and shows it as its selected file).
#[derive(Clone, Copy)]
pub struct ImportInbox(pub RwSignal<Option<web_sys::File>, LocalStorage>);

impl ImportInbox {
    /// An empty inbox.
    pub fn new() -> Self {
        ImportInbox(RwSignal::new_local(None))
    }

    /// Puts `file` in (replacing one not yet taken).
    pub fn put(self, file: web_sys::File) {
        self.0.set(Some(file));
    }

    /// Takes the waiting file, if any (tracked: an effect calling this reruns on the next put).
    pub fn take(self) -> Option<web_sys::File> {
        let file = self.0.get()?;
        self.0.set(None);
        Some(file)
    }
}

impl Default for ImportInbox {
    fn default() -> Self {
        Self::new()
    }
}
