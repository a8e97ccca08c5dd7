//! Pilot audits against provider APIs with the user's own keys (keys stay in memory unless the user
//! opts in): the design form and run ([`panel`]), judge coding of a loaded bundle ([`judge_panel`]), the
//! clinical pilot ([`clinical_panel`]), the calls with retries ([`runner`]), the IndexedDB run state
//! ([`store`]), pause / resume / cancel ([`run_controls`]), a provider's "Test connection"
//! ([`connection_test`]) and why a form cannot be used ([`form`]).

pub mod clinical_panel;
pub mod connection_test;
pub mod fields;
pub mod form;
pub mod judge_panel;
pub mod likelihood_step;
pub mod panel;
pub mod paradigm_form;
pub mod run_controls;
pub mod runner;
pub mod store;
