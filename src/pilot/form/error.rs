//! Why a pilot form cannot be used: [`FormError`], shared by the pilot panel's three sections and
//! the provider rows' "Test connection".

use atlas_core::number::NumberError;

/// A form field that cannot be used, named with its row where it has one (`m1: type the model
/// name`, `seed: “x” is not a number`, `statements: none selected`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FormError {
    /// A number field does not read under its rule ([`atlas_core::number`]).
    #[error("{field}: {error}")]
    Number {
        /// The field (with its row).
        field: String,
        /// Why the text is not a usable number.
        error: NumberError,
    },
    /// A whole number that reads but is too large for its setting.
    #[error("{field}: {value} is too large")]
    TooLarge {
        /// The field.
        field: String,
        /// The number read.
        value: u64,
    },
    /// A field, or a choice of the form, that gives nothing usable.
    #[error("{field}: {problem}")]
    Unusable {
        /// The field (with its row).
        field: String,
        /// What is missing or wrong.
        problem: String,
    },
    /// The design the form makes is refused: the planner's message.
    #[error("{0}")]
    Design(String),
    /// A provider row that was removed meanwhile.
    #[error("this row is gone")]
    RowGone,
}

impl FormError {
    /// [`FormError::Unusable`].
    pub(crate) fn unusable(field: impl Into<String>, problem: impl Into<String>) -> Self {
        FormError::Unusable {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// [`FormError::Number`].
    pub(crate) fn number(field: impl Into<String>, error: NumberError) -> Self {
        FormError::Number {
            field: field.into(),
            error,
        }
    }
}

impl From<FormError> for String {
    fn from(e: FormError) -> Self {
        e.to_string()
    }
}
