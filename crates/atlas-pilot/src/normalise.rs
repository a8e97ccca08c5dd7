//! The one normaliser of model text that every lenient reader of this crate goes through: the
//! Selection reader ([`mod@crate::extract`]), the judge-label reader ([`crate::judge::read_judge_label`])
//! and the clinical protocol's field readers ([`crate::clinical::parse`]). Seed `000_…` §3.3:
//! "fallbacks, parser failures, and refusals are recorded" — so a reading that needed this normaliser
//! says so ([`Normalisation`]) and is never a clean (`regex`) match.
//!
//! Two normalisations:
//!
//! * **Invisible format characters** ([`INVISIBLE_CHARACTERS`]): soft hyphen U+00AD, zero-width space,
//!   non-joiner and joiner U+200B–U+200D, the left-to-right and right-to-left marks U+200E–U+200F, word
//!   joiner U+2060, the invisible math operators U+2061–U+2064, and the byte-order mark / zero-width
//!   no-break space U+FEFF. They render as nothing, so a reader removes them from the whole response
//!   before looking for labels and values ([`Visible`]); `Sel\u{200B}ection: N\u{00AD}O` reads as
//!   `Selection: NO`. A reading records [`Normalisation::InvisibleCharacters`] when reading the text
//!   with them left in would have given another result (another answer, rule or failure) — characters
//!   that changed nothing are not reported.
//! * **Math and LaTeX markup** around a value ([`strip_leading_markup`], [`strip_trailing_markup`],
//!   [`unwrap_markup`]): the math delimiters `$…$`, `$$…$$`, `\(…\)`, `\[…\]` and the commands
//!   [`MARKUP_COMMANDS`] written `\name{…}` (`\boxed{B}`, `\text{YES}`, `\textbf{B}`, `\mathrm{B}`),
//!   nested in any order (`$\boxed{\text{YES}}$`). Each side is removed on its own, so an **unbalanced**
//!   wrapper (`$B`, `B$`, `\boxed{B`) is removed too — and recorded like a balanced one. A reading
//!   records [`Normalisation::Markup`] when such markup was removed from the value it read.
//!
//! Markdown emphasis, quotes and brackets are not markup in this sense: each reader documents which of
//! them it trims as part of its ordinary (clean) reading.

use std::borrow::Cow;
use std::ops::Range;

use serde::{Deserialize, Serialize};

/// Characters removed before reading (module docs): U+00AD, U+200B–U+200F, U+2060–U+2064, U+FEFF.
pub const INVISIBLE_CHARACTERS: &[char] = &[
    '\u{00AD}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{2060}', '\u{2061}',
    '\u{2062}', '\u{2063}', '\u{2064}', '\u{FEFF}',
];

/// LaTeX commands whose braces are removed around a value (`\boxed{B}` → `B`). Written without the
/// backslash.
pub const MARKUP_COMMANDS: &[&str] = &[
    "boxed",
    "fbox",
    "text",
    "textbf",
    "textit",
    "textrm",
    "textsf",
    "texttt",
    "textup",
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "mathbb",
    "operatorname",
    "emph",
    "underline",
];

/// Which normalisation a reading needed (module docs). Serialised in snake case (`markup`,
/// `invisible_characters`), the names the bundle notes and summaries count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalisation {
    /// Math or LaTeX markup (`$B$`, `\boxed{B}`, `\text{YES}`, or an unbalanced `$B`) was removed
    /// around the value.
    Markup,
    /// Invisible format characters were removed and the reading depends on it.
    InvisibleCharacters,
}

impl Normalisation {
    /// The serde name (`markup`, `invisible_characters`).
    pub fn as_str(self) -> &'static str {
        match self {
            Normalisation::Markup => "markup",
            Normalisation::InvisibleCharacters => "invisible_characters",
        }
    }
}

/// Whether `c` is one of [`INVISIBLE_CHARACTERS`].
pub fn is_invisible(c: char) -> bool {
    INVISIBLE_CHARACTERS.contains(&c)
}

/// `text` without [`INVISIBLE_CHARACTERS`] (borrowed when there is none).
pub fn strip_invisible(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_invisible) {
        Cow::Owned(text.chars().filter(|&c| !is_invisible(c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// A response with its invisible characters removed, and the way back: byte ranges of [`Self::text`]
/// map to byte ranges of the original (so a reader can return a field's text as the model wrote it).
#[derive(Debug, Clone)]
pub struct Visible<'a> {
    original: &'a str,
    text: Cow<'a, str>,
    /// `map[i]`: the original byte offset of byte `i` of `text`; `map[text.len()]` = original length.
    /// Empty when nothing was removed (the identity).
    map: Vec<usize>,
}

impl<'a> Visible<'a> {
    /// Removes the invisible characters of `original`.
    pub fn new(original: &'a str) -> Self {
        if !original.chars().any(is_invisible) {
            return Visible {
                original,
                text: Cow::Borrowed(original),
                map: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len());
        let mut map = Vec::with_capacity(original.len() + 1);
        for (at, c) in original.char_indices() {
            if is_invisible(c) {
                continue;
            }
            text.push(c);
            map.extend((0..c.len_utf8()).map(|k| at + k));
        }
        map.push(original.len());
        Visible {
            original,
            text: Cow::Owned(text),
            map,
        }
    }

    /// The text without invisible characters.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as given.
    pub fn original(&self) -> &'a str {
        self.original
    }

    /// Whether any character was removed.
    pub fn removed_any(&self) -> bool {
        !self.map.is_empty()
    }

    /// The original byte range of a byte range of [`Self::text`] (both ends on character
    /// boundaries). Invisible characters just before `range.end` are included, those before
    /// `range.start` are not.
    pub fn original_range(&self, range: Range<usize>) -> Range<usize> {
        if self.map.is_empty() {
            return range;
        }
        let at = |i: usize| self.map.get(i).copied().unwrap_or(self.original.len());
        let start = at(range.start);
        // The end: just after the last kept byte of the range, plus the invisible characters that
        // follow it up to the next kept one.
        let end = if range.end >= self.text.len() {
            self.original.len()
        } else {
            at(range.end)
        };
        start..end.max(start)
    }

    /// The original text of a byte range of [`Self::text`].
    pub fn original_slice(&self, range: Range<usize>) -> &'a str {
        let r = self.original_range(range);
        self.original.get(r).unwrap_or("")
    }
}

/// `s` without leading math / LaTeX markup (module docs) and white space; `true` when markup was
/// removed. `\boxed{\text{B}}, because` → `B}}, because`.
pub fn strip_leading_markup(s: &str) -> (&str, bool) {
    let mut v = s.trim_start();
    let mut removed = false;
    loop {
        let next = if let Some(rest) = v.strip_prefix("$$") {
            Some(rest)
        } else if let Some(rest) = v.strip_prefix('$') {
            Some(rest)
        } else if let Some(rest) = v.strip_prefix("\\(").or_else(|| v.strip_prefix("\\[")) {
            Some(rest)
        } else {
            command_prefix(v)
        };
        match next {
            Some(rest) => {
                v = rest.trim_start();
                removed = true;
            }
            None => return (v, removed),
        }
    }
}

/// `\name{` of a [`MARKUP_COMMANDS`] command (optional spaces before the brace) at the start of `v`:
/// the rest after the brace.
fn command_prefix(v: &str) -> Option<&str> {
    let after = v.strip_prefix('\\')?;
    let name_len = after
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(after.len());
    let name = &after[..name_len];
    if !MARKUP_COMMANDS.contains(&name) {
        return None;
    }
    after[name_len..].trim_start().strip_prefix('{')
}

/// `s` without trailing math markup and white space — `$$`, `$`, `\)`, `\]`, and `}` when
/// `braces` — ; `true` when any was removed. A bare `}` is markup only where the caller removed an
/// opening command (`braces`); otherwise it is left to the caller's own bracket trimming.
pub fn strip_trailing_markup(s: &str, braces: bool) -> (&str, bool) {
    let mut v = s.trim_end();
    let mut removed = false;
    loop {
        let next = v
            .strip_suffix("$$")
            .or_else(|| v.strip_suffix('$'))
            .or_else(|| v.strip_suffix("\\)"))
            .or_else(|| v.strip_suffix("\\]"))
            .or_else(|| if braces { v.strip_suffix('}') } else { None });
        match next {
            Some(rest) => {
                v = rest.trim_end();
                removed = true;
            }
            None => return (v, removed),
        }
    }
}

/// `s` without leading and trailing markup (each side on its own, so unbalanced wrappers go too);
/// `true` when any was removed. `$\boxed{YES}$` → `YES`, `\boxed{B` → `B`, `$$B$$` → `B`.
pub fn unwrap_markup(s: &str) -> (&str, bool) {
    let (v, lead) = strip_leading_markup(s);
    let (v, trail) = strip_trailing_markup(v, lead);
    (v, lead || trail)
}

/// The whole of `text` with every markup wrapper of the module docs removed wherever it occurs:
/// math delimiters `$$`, `$`, `\(`, `\)`, `\[`, `\]` are deleted, and `\name{` of a
/// [`MARKUP_COMMANDS`] command is deleted with its matching `}` (an unmatched one is deleted alone).
/// For short answers (a judge's label) and for searching a whole response for an answer phrase
/// (`the answer is $\boxed{B}$` → `the answer is B`). Borrowed when nothing was removed.
pub fn unwrap_markup_everywhere(text: &str) -> Cow<'_, str> {
    if !text.contains(['$', '\\']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // Open braces: `true` for a removed command's brace (its `}` is removed too).
    let mut braces: Vec<bool> = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix('$') {
            rest = r;
            continue;
        }
        if let Some(r) = ["\\(", "\\)", "\\[", "\\]"]
            .iter()
            .find_map(|d| rest.strip_prefix(d))
        {
            rest = r;
            continue;
        }
        if let Some(r) = command_prefix(rest) {
            braces.push(true);
            rest = r;
            continue;
        }
        match c {
            '{' => braces.push(false),
            // Every `}` closes the innermost brace; a removed command's brace goes with it.
            '}' if braces.pop() == Some(true) => {
                rest = &rest[1..];
                continue;
            }
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if out.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wrapper_of_the_docs_is_removed_and_reported() {
        for (input, want) in [
            ("$B$", "B"),
            ("$$B$$", "B"),
            ("\\(B\\)", "B"),
            ("\\[B\\]", "B"),
            ("\\boxed{B}", "B"),
            ("$\\boxed{YES}$", "YES"),
            ("\\text{YES}", "YES"),
            ("\\textbf{B}", "B"),
            ("\\mathrm{B}", "B"),
            ("$\\boxed{\\text{ NO }}$", "NO"),
            ("\\boxed {B}", "B"),
            // Unbalanced: each side goes on its own.
            ("$B", "B"),
            ("B$", "B"),
            ("\\boxed{B", "B"),
        ] {
            assert_eq!(unwrap_markup(input), (want, true), "{input:?}");
        }
        assert_eq!(unwrap_markup("B"), ("B", false));
        assert_eq!(
            unwrap_markup("{B}"),
            ("{B}", false),
            "plain braces are not markup"
        );
        assert_eq!(
            unwrap_markup("\\frac{1}{2}"),
            ("\\frac{1}{2}", false),
            "an unknown command is left alone"
        );
    }

    #[test]
    fn markup_is_removed_everywhere_with_matching_braces_only() {
        assert_eq!(
            unwrap_markup_everywhere("The answer is $\\boxed{B}$."),
            "The answer is B."
        );
        assert_eq!(
            unwrap_markup_everywhere("Label: \\text{QE} {x}"),
            "Label: QE {x}"
        );
        assert_eq!(unwrap_markup_everywhere("\\[\\boxed{D\\]"), "D");
        assert!(matches!(
            unwrap_markup_everywhere("no markup"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn invisible_characters_are_removed_and_ranges_map_back_to_the_original() {
        let original = "Sel\u{200B}ection: N\u{00AD}O\nRationale: x\u{200D}y";
        let v = Visible::new(original);
        assert!(v.removed_any());
        assert_eq!(v.text(), "Selection: NO\nRationale: xy");
        let at = v.text().find("xy").expect("found");
        assert_eq!(v.original_slice(at..v.text().len()), "x\u{200D}y");
        let sel = v.text().find("NO").expect("found");
        assert_eq!(v.original_slice(sel..sel + 2), "N\u{00AD}O");
        let plain = Visible::new("Selection: NO");
        assert!(!plain.removed_any());
        assert_eq!(plain.original_slice(11..13), "NO");
        assert_eq!(strip_invisible("\u{FEFF}E\u{2060}"), "E");
    }
}
