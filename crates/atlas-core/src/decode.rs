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
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BundleError> {
        Audit::from_json(utf8_text(bytes)?)
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
