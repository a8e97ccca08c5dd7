//! What a file dropped anywhere on the page is ([`classify_drop`]), and the inbox that hands a dropped
//! results file to the Import view ([`ImportInbox`], context).
//!
//! The app shell ([`crate::views::shell`]) catches every drop on the window: a bundle is opened
//! ([`crate::state::AtlasState::load_file`]), results files are put into the inbox and the Import view
//! is shown, which takes them as if they had been picked in its own file input; anything else gets a
//! message naming the file and what is accepted. Several files dropped at once follow [`plan_drop`].

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

/// What one drop of several files does ([`plan_drop`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropPlan {
    /// Open the bundle at this index (it was dropped alone, or only with unsupported files).
    OpenBundle(usize),
    /// Hand these results files / tool logs (indices, in drop order) to Import together — several
    /// logs of one tool go into one bundle there.
    Import(Vec<usize>),
    /// Nothing to open or import: the message says why.
    Refuse(String),
}

/// What to do with the files of one drop, classified by [`classify_drop`] (`(name, kind)` in drop
/// order), and the names left out (unsupported files dropped beside usable ones).
///
/// Results files and tool logs go to Import together; one bundle opens. Bundles mixed with results
/// files, or several bundles, open nothing (the app opens one bundle at a time, and guessing which
/// file was meant could replace the bundle loaded with the wrong one): the message says to drop them
/// separately. Nothing the user already has changes unless a bundle opens.
///
/// ```
/// use audit_atlas::state::inbox::{plan_drop, DropKind, DropPlan};
/// let files = [
///     ("a.eval".to_string(), DropKind::Results),
///     ("notes.txt".to_string(), DropKind::Unsupported),
///     ("b.eval".to_string(), DropKind::Results),
/// ];
/// assert_eq!(plan_drop(&files), (DropPlan::Import(vec![0, 2]), vec!["notes.txt".to_string()]));
/// ```
pub fn plan_drop(files: &[(String, DropKind)]) -> (DropPlan, Vec<String>) {
    let of = |kind: DropKind| -> Vec<usize> {
        files
            .iter()
            .enumerate()
            .filter(|(_, (_, k))| *k == kind)
            .map(|(i, _)| i)
            .collect()
    };
    let (bundles, results) = (of(DropKind::Bundle), of(DropKind::Results));
    let left_out: Vec<String> = of(DropKind::Unsupported)
        .into_iter()
        .map(|i| files[i].0.clone())
        .collect();
    let names = |ix: &[usize]| {
        ix.iter()
            .map(|&i| files[i].0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let plan = match (bundles.as_slice(), results.is_empty()) {
        ([], true) => {
            return match files {
                [] => (
                    DropPlan::Refuse(
                        "Nothing to open was dropped: drop a bundle (.json) or a results file (.csv, .tsv, .jsonl, .json)."
                            .into(),
                    ),
                    Vec::new(),
                ),
                [(name, _)] => (DropPlan::Refuse(unsupported_message(name)), Vec::new()),
                _ => (
                    DropPlan::Refuse(format!(
                        "None of the {} files dropped can be opened ({}): drop a bundle (.json) to open it, or results                          files / tool logs (.csv, .tsv, .jsonl, .json, .eval) to import them.",
                        files.len(),
                        left_out.join(", ")
                    )),
                    Vec::new(),
                ),
            };
        }
        ([one], true) => DropPlan::OpenBundle(*one),
        ([], false) => DropPlan::Import(results),
        (several, _) => DropPlan::Refuse(format!(
            "Nothing was opened: {} {} a bundle{} and {} {}. Drop one bundle alone to open it, or the results              files / tool logs together to import them; the bundle loaded now stays.",
            names(several),
            if several.len() == 1 { "is" } else { "are" },
            if several.len() == 1 { "" } else { "s" },
            names(&results),
            if results.is_empty() {
                "no results file".to_string()
            } else {
                format!("{} results file{}", results.len(), if results.len() == 1 { "" } else { "s" })
            },
        )),
    };
    (plan, left_out)
}

/// Results files waiting for the Import view (context): the shell puts the files of a drop here, the
/// Import view takes them (and shows them as its selected files).
#[derive(Clone, Copy)]
pub struct ImportInbox(pub RwSignal<Option<Vec<web_sys::File>>, LocalStorage>);

impl ImportInbox {
    /// An empty inbox.
    pub fn new() -> Self {
        ImportInbox(RwSignal::new_local(None))
    }

    /// Puts `files` in (replacing any not yet taken).
    pub fn put(self, files: Vec<web_sys::File>) {
        self.0.set(Some(files));
    }

    /// Takes the waiting files, if any (tracked: an effect calling this reruns on the next put).
    pub fn take(self) -> Option<Vec<web_sys::File>> {
        let files = self.0.get()?;
        self.0.set(None);
        Some(files)
    }
}

impl Default for ImportInbox {
    fn default() -> Self {
        Self::new()
    }
}
