//! The pilot's task-paradigm design (issue 18; seed `000_…` §4.3, Table 10; `docs/paradigms.md`): the
//! form's prompt family `paradigm` asks each proposition as the procedures the user ticks (CLEAR-, BBQ-
//! ambiguous and disambiguated, StereoSet- and CrowS-style), with the wordings editable, instead of the
//! agreement templates. What is read here is plain data: [`ParadigmForm`] (saved with the run, like the
//! rest of [`FormState`]) becomes an [`atlas_pilot::paradigm::ParadigmDesign`] with the form's models,
//! parameters, repeats, seed and caps ([`paradigm_design`]); [`plan_of`] plans either family, so a run
//! and its reload rebuild the same plan from the saved form.

use atlas_core::Audit;
use atlas_pilot::paradigm::{build_paradigm_plan, ParadigmDesign, ParadigmTemplates, Procedure};
use atlas_pilot::proposition::parse_propositions;
use atlas_pilot::{build_plan, Params, Plan};
use serde::{Deserialize, Serialize};

use super::{decimal, design, limits_of, models_of, rules, whole, FormError, FormState};

/// The prompt family value that selects the task-paradigm design.
pub const PARADIGM_FAMILY: &str = "paradigm";

/// What the task-paradigm part of the form holds (no key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ParadigmForm {
    /// The propositions as pasted or read from a file: a JSON array or JSON Lines of
    /// `atlas_pilot::proposition::Proposition` objects (`atlas propositions` writes them).
    pub propositions: String,
    /// Ids of the ticked procedures ([`Procedure::id`]), in Table 10's order.
    pub procedures: Vec<String>,
    /// The wordings, one per procedure, and the forced output contract.
    pub templates: ParadigmTemplates,
    /// The likelihood step's scoring server (an OpenAI-compatible base URL with a correct `echo`);
    /// empty: each model's own base URL.
    pub likelihood_base: String,
}

impl Default for ParadigmForm {
    fn default() -> Self {
        ParadigmForm {
            propositions: String::new(),
            procedures: Procedure::ALL.iter().map(|p| p.id().to_string()).collect(),
            templates: ParadigmTemplates::default(),
            likelihood_base: String::new(),
        }
    }
}

impl ParadigmForm {
    /// The wording of `procedure` as typed (before `{contract}` is filled).
    pub fn wording(&self, procedure: Procedure) -> &str {
        self.templates.of(procedure)
    }

    /// Sets the wording of `procedure`.
    pub fn set_wording(&mut self, procedure: Procedure, text: String) {
        let t = &mut self.templates;
        match procedure {
            Procedure::Clear => t.clear = text,
            Procedure::BbqAmbiguous => t.bbq_ambiguous = text,
            Procedure::BbqDisambiguated => t.bbq_disambiguated = text,
            Procedure::StereoSet => t.stereoset = text,
            Procedure::Crows => t.crows = text,
        }
    }

    /// Whether `procedure` is ticked.
    pub fn has(&self, procedure: Procedure) -> bool {
        self.procedures.iter().any(|p| p == procedure.id())
    }

    /// Ticks or unticks `procedure`, keeping Table 10's order.
    pub fn set(&mut self, procedure: Procedure, on: bool) {
        let mut ticked: Vec<Procedure> = Procedure::ALL
            .iter()
            .copied()
            .filter(|&p| if p == procedure { on } else { self.has(p) })
            .collect();
        ticked.dedup();
        self.procedures = ticked.iter().map(|p| p.id().to_string()).collect();
    }
}

/// The task-paradigm design of a form: its propositions (parsed and checked,
/// `atlas_pilot::proposition::parse_propositions`), ticked procedures and wordings, and the form's
/// models, temperature, max tokens, repeats, seed and caps. Every cell is asked (no sampling design:
/// the comparison needs each proposition under each procedure); judges are not part of it.
///
/// # Errors
/// A [`FormError`] naming the field: no propositions, a proposition record that does not read (its
/// record or line and member), no procedure ticked, a number field, a provider row.
pub fn paradigm_design(form: &FormState) -> Result<ParadigmDesign, FormError> {
    let p = &form.paradigm;
    if p.propositions.trim().is_empty() {
        return Err(FormError::unusable(
            "propositions",
            "paste or load a JSON array or JSON Lines of propositions (docs/paradigms.md)",
        ));
    }
    let propositions = parse_propositions(&p.propositions)
        .map_err(|e| FormError::unusable("propositions", e.to_string()))?;
    let procedures: Vec<Procedure> = p
        .procedures
        .iter()
        .filter_map(|id| Procedure::from_id(id))
        .collect();
    if procedures.is_empty() {
        return Err(FormError::unusable("procedures", "tick at least one"));
    }
    Ok(ParadigmDesign {
        models: models_of(form)?,
        propositions,
        procedures,
        templates: p.templates.clone(),
        repeats: whole(&form.repeats, rules::REPEATS, "repeats")?,
        params: Params {
            temperature: decimal(&form.temperature, rules::TEMPERATURE, "temperature")?,
            max_tokens: whole(&form.max_tokens, rules::MAX_TOKENS, "max tokens")?,
        },
        seed: whole(&form.seed, rules::SEED, "seed")?,
        limits: limits_of(&form.max_calls, &form.max_cost)?,
    })
}

/// The plan of a form: the task-paradigm plan (`atlas_pilot::paradigm::build_paradigm_plan`) when its
/// prompt family is [`PARADIGM_FAMILY`], else the pilot's plan of [`design`] (statements and templates
/// from `audit` where the form says so).
///
/// # Errors
/// The form's or the planner's message.
pub fn plan_of(form: &FormState, audit: Option<&Audit>) -> Result<Plan, String> {
    if form.family == PARADIGM_FAMILY {
        let d = paradigm_design(form)?;
        build_paradigm_plan(&d).map_err(|e| e.to_string())
    } else {
        let d = design(form, audit)?;
        build_plan(d).map_err(|e| e.to_string())
    }
}
