//! How numbers and labels read on the page: the numbers as `atlas_core::format` writes them (the same
//! text as the CLI), and a level's label (`label` attribute, else its id: [`level_label`]).

pub use atlas_core::cases::level_label;
pub use atlas_core::format::{
    display_percent, display_points, n_equals, number, percent, points, thousands, thousands_u64,
    NO_VALUE,
};
