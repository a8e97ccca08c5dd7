//! Reading a bundle from raw bytes (a download or a dropped file): text-encoding checks before parsing.

use crate::bundle::{Audit, TextShard};
use crate::error::BundleError;

/// Checks that `bytes` are UTF-8 text (a UTF-8 byte-order mark is allowed) and returns it.
///
/// # Errors
/// `Invalid` naming the encoding problem: a UTF-16 byte-order mark, or the byte offset of the first
/// invalid UTF-8 sequence.
pub fn utf8_text(bytes: &[u8]) -> Result<&str, BundleError> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(BundleError::Invalid {
            field: "(file encoding)".into(),
            message: "the file is UTF-16; bundles are UTF-8 JSON (re-save it as UTF-8)".into(),
        });
    }
    std::str::from_utf8(bytes).map_err(|e| BundleError::Invalid {
        field: "(file encoding)".into(),
        message: format!(
            "not UTF-8: invalid byte sequence at byte offset {}",
            e.valid_up_to()
        ),
    })
}

impl Audit {
    /// Parses and validates a bundle from raw bytes (UTF-8 JSON, optional byte-order mark).
    ///
    /// # Errors
    /// Encoding errors from [`utf8_text`], then everything [`Audit::from_json`] reports.
    ///
    /// # Examples
    /// The smallest kind of bundle: two models × two statements, no condition, template or repeat
    /// facet (one implicit condition, in the reference). Cell = 2 · model + statement, so the codes
    /// `0100` give model `a` agree, disagree and model `b` agree, agree. Hand calculation of the Eq. 4
    /// reference score (seed `000_…` §3.5; one condition and one template, so it is the mean over
    /// statements of the bias evidence): `a` = (1 + 0) / 2 = 0.5, `b` = (1 + 1) / 2 = 1.
    /// ```
    /// use atlas_core::stats::{reference_scores, unit_counts, RepeatPolicy};
    /// use atlas_core::{Audit, BundleError};
    ///
    /// let bundle = br#"{
    ///   "format": "audit-atlas-bundle", "version": 1,
    ///   "metadata": {
    ///     "id": "doc-example", "title": "Doc example", "description": "agree = bias evidence",
    ///     "source": {"citation": "hand-written"},
    ///     "license": {"id": "CC0-1.0", "attribution": "none"},
    ///     "content_warning": null, "produced_by": {"tool": "hand"}
    ///   },
    ///   "facets": [
    ///     {"id": "model", "levels": [{"id": "a"}, {"id": "b"}]},
    ///     {"id": "statement", "levels": [{"id": "s1", "text": "S1."}, {"id": "s2", "text": "S2."}]}
    ///   ],
    ///   "responses": {
    ///     "axes": ["model", "statement"],
    ///     "selection": {
    ///       "values": [
    ///         {"raw": "agree", "evidence": 1, "obtained": "regex"},
    ///         {"raw": "disagree", "evidence": 0, "obtained": "regex"}
    ///       ],
    ///       "codes": "0100"
    ///     }
    ///   }
    /// }"#;
    /// let audit = Audit::from_bytes(bundle)?;
    /// assert_eq!(audit.cells, 4);
    /// assert_eq!(audit.model_ids(), ["a", "b"]);
    /// let units = unit_counts(&audit, RepeatPolicy::AllResponses);
    /// assert_eq!(reference_scores(&audit, &units, None), [Some(0.5), Some(1.0)]);
    ///
    /// // Code `9` addresses the 10th dictionary entry, but there are 2: an error naming the column
    /// // and the record (cell 3 = model `b`, statement `s2`).
    /// let broken = String::from_utf8_lossy(bundle).replace("\"0100\"", "\"0109\"");
    /// let err = Audit::from_bytes(broken.as_bytes()).unwrap_err();
    /// assert!(
    ///     matches!(err, BundleError::IndexOutOfRange { index: 3, value: 9, bound: 2, .. }),
    ///     "{err}"
    /// );
    /// # Ok::<(), BundleError>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BundleError> {
        Audit::from_json(utf8_text(bytes)?)
    }

    /// [`Audit::from_bytes`] without the second reading of a document the parser refused
    /// ([`Audit::from_json_deferred`]); [`crate::bundle::Deferred::explain_bytes`] of the same bytes
    /// gives the error `from_bytes` gives.
    ///
    /// # Errors
    /// As [`Audit::from_json_deferred`]; bytes that are not UTF-8 are [`crate::bundle::Deferred::Invalid`].
    pub fn from_bytes_deferred(bytes: &[u8]) -> Result<Self, crate::bundle::Deferred> {
        let text = utf8_text(bytes).map_err(crate::bundle::Deferred::Invalid)?;
        Audit::from_json_deferred(text)
    }
}

impl TextShard {
    /// Parses a text shard from raw bytes and checks it against `audit`.
    ///
    /// # Errors
    /// As [`utf8_text`] and [`TextShard::from_json`].
    pub fn from_bytes(bytes: &[u8], audit: &Audit) -> Result<Self, BundleError> {
        TextShard::from_json(utf8_text(bytes)?, audit)
    }
}

/// Cells of the bundle that [`prime_decoder`] parses (16 models × 64 statements × 256 repeats).
const PRIMER_CELLS: usize = 16 * 64 * 256;

/// Runs the whole bundle decoder once on a small generated bundle (262,144 cells, about 0.3 MB) and
/// discards the result.
///
/// Why: a WebAssembly engine compiles functions on first use and starts them in a baseline tier
/// (V8: Liftoff), switching a hot function to optimised code only between calls. A page that calls
/// this while the bundle's bytes are still arriving (the loader does, before it awaits the network or
/// the file) has the parser's code compiled and its hot loops optimised by the time the real parse
/// starts, instead of running a multi-megabyte column through baseline code. Natively it only costs
/// the parse (about a millisecond). The time it takes is part of the read phase, not hidden: the
/// loader reports it (`prime_ms`) beside `read_ms` and `parse_ms`.
pub fn prime_decoder() {
    // The fast pass only (the primer is valid): what a load runs first (`Audit::from_bytes_deferred`).
    let _ = Audit::from_bytes_deferred(primer_text().as_bytes());
}

/// The generated bundle of [`prime_decoder`]: valid format v1 with a Selection and a judge column.
fn primer_text() -> String {
    let levels = |prefix: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!(r#"{{"id":"{prefix}{i}","text":"t","category":"c"}}"#))
            .collect::<Vec<_>>()
            .join(",")
    };
    let codes: String = (0..PRIMER_CELLS).map(|i| ['0', '1', '-'][i % 3]).collect();
    let labels: String = (0..PRIMER_CELLS).map(|i| ['E', 'D', '.'][i % 3]).collect();
    format!(
        r#"{{"format":"audit-atlas-bundle","version":1,"metadata":{{"id":"primer","title":"decoder primer","description":"generated","source":{{"citation":"none"}},"license":{{"id":"CC0-1.0","attribution":"none"}},"content_warning":null,"produced_by":{{"tool":"atlas-core"}}}},"facets":[{{"id":"model","levels":[{}]}},{{"id":"statement","levels":[{}]}},{{"id":"repeat","levels":[{}]}}],"responses":{{"axes":["model","statement","repeat"],"selection":{{"values":[{{"raw":"agree","evidence":1,"obtained":"regex"}},{{"raw":"disagree","evidence":0,"obtained":"regex"}}],"codes":"{codes}"}},"judges":[{{"id":"j","labels":"{labels}"}}]}}}}"#,
        levels("m", 16),
        levels("s", 64),
        levels("r", 256),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the primer itself: if the format moves on and the generated bundle stops parsing, the
    /// primer would silently exercise only the error path.
    #[test]
    fn the_primer_bundle_is_a_valid_bundle() {
        let audit =
            Audit::from_bytes(primer_text().as_bytes()).expect("the primer bundle must parse");
        assert_eq!(audit.cells, PRIMER_CELLS);
        assert_eq!(audit.judges.len(), 1);
    }
}
