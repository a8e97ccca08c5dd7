//! Small components and helpers every view uses: the number field ([`number_field`]), the table
//! ([`table`]), the chart panel ([`chart`]) and how numbers read ([`format`]).

pub mod chart;
pub mod format;
pub mod number_field;
pub mod table;
