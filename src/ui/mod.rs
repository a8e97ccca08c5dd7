//! Small components and helpers every view uses: the number field ([`number_field`]), the table
//! ([`table`]), the chart panel ([`chart`]), how numbers read ([`format`]), glossary terms and list
//! ([`glossary`]) and the color theme switch ([`theme`]).

pub mod chart;
pub mod format;
pub mod glossary;
pub mod number_field;
pub mod table;
pub mod theme;
