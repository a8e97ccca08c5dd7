//! Size and cost of a clinical plan before it runs, and its hard cap: the pilot's [`Estimate`] and
//! [`Limits`] (`docs/pilot.md`, "Estimates and the hard cap") for seed 001's protocol.
//!
//! Per model × question there are [`super::protocol::CALLS_PER_ITEM`] = 16 calls: 9 **audited** calls
//! (7 answers, the counterfactual, the re-answer) and 7 **judge** calls (plausibility and the six
//! stereotype judgements), each counted whether or not it will run (a skipped call costs nothing, so the
//! estimate is an upper bound).
//!
//! **Tokens.** Input tokens are `⌈characters / 4⌉` of the prompt ([`estimate_tokens`]), output tokens
//! the call's `max_tokens`. A prompt that quotes an earlier reply is sized with that reply at its most,
//! `4 × max_tokens` characters:
//!
//! | call | prompt sized as |
//! |---|---|
//! | answer (7 variants) | exact: the (prefixed) question and options |
//! | counterfactual | the longest over the possible original letters (the target follows from it) |
//! | re-answer | the answer prompt with a modified question of `4 × counterfactual max_tokens` characters |
//! | plausibility | the judge prompt with CHANGE + MODIFIED_QUESTION of `4 × counterfactual max_tokens` characters |
//! | stereotype (6) | the judge prompt with the longest answer option (or "no readable answer") on both sides and both explanations at `min(4 × answer max_tokens, MAX_EXPLANATION_CHARS)` characters |
//!
//! **Prices.** Audited calls at their model's [`ClinicalModel::prices`]; judge calls at the judge's, or
//! the audited model's when it judges itself. A call whose model has no price is counted in
//! [`Estimate::unpriced_calls`] and not in [`Estimate::cost_max`].

use std::collections::BTreeMap;

use super::prefix::{apply_prefix, VARIANTS};
use super::prompts::{
    answer_prompt, counterfactual_prompt, plausibility_prompt, stereotype_prompt, target_letter,
    Side, MAX_EXPLANATION_CHARS, UNREADABLE_ANSWER,
};
use super::protocol::{ClinicalDesign, ClinicalModel};
use super::ClinicalError;
use crate::plan::{cost, estimate_tokens, Estimate, Limits, Prices};
use crate::provider::Prompt;

fn chars(p: &Prompt) -> usize {
    p.system.chars().count() + p.user.chars().count()
}

/// The longest text `describe_answer` can give for `options`: `L. text` or "no readable answer".
fn longest_answer(options: &BTreeMap<String, String>) -> Option<&str> {
    let longest = options
        .iter()
        .max_by_key(|(k, t)| k.chars().count() + 2 + t.trim().chars().count())?;
    let chars = longest.0.chars().count() + 2 + longest.1.trim().chars().count();
    (chars >= UNREADABLE_ANSWER.chars().count()).then_some(longest.0.as_str())
}

/// Adds one call of `input` tokens, at most `output` tokens out, priced at `prices`.
fn add(e: &mut Estimate, judge: bool, input: u64, output: u64, prices: Option<&Prices>) {
    if judge {
        e.judge_calls += 1;
        e.judge_input_tokens += input;
        e.judge_output_tokens_max += output;
    } else {
        e.calls += 1;
        e.input_tokens += input;
        e.output_tokens_max += output;
    }
    match cost(prices, input, output) {
        Some(c) => e.cost_max += c,
        None => e.unpriced_calls += 1,
    }
}

/// The estimate of every call `design` plans (module docs): 9 audited and 7 judge calls per model ×
/// question, input tokens by `⌈chars / 4⌉` of the prompts sized as the table says, output tokens at
/// `max_tokens`, cost in the prices' currency per 1,000,000 tokens.
pub fn clinical_estimate(design: &ClinicalDesign) -> Estimate {
    let mut e = Estimate::default();
    let answer_out = u64::from(design.answer_params.max_tokens);
    let cf_out = u64::from(design.counterfactual_params.max_tokens);
    let judge_out = u64::from(design.judge_params.max_tokens);
    let cf_reply = "x".repeat(4 * design.counterfactual_params.max_tokens as usize);
    let explanation =
        "x".repeat((4 * design.answer_params.max_tokens as usize).min(MAX_EXPLANATION_CHARS));
    for model in &design.models {
        let judge: &ClinicalModel = design.judge.as_ref().unwrap_or(model);
        let (mp, jp) = (model.prices.as_ref(), judge.prices.as_ref());
        for item in &design.items {
            for v in &VARIANTS {
                let prompt = answer_prompt(&apply_prefix(&item.question, v).text, &item.options);
                add(
                    &mut e,
                    false,
                    estimate_tokens(chars(&prompt)),
                    answer_out,
                    mp,
                );
            }
            let counterfactual = item
                .options
                .keys()
                .filter_map(|original| {
                    let target = target_letter(&item.options, original)?;
                    counterfactual_prompt(&item.question, &item.options, original, target)
                })
                .map(|p| chars(&p))
                .max()
                .unwrap_or(0);
            add(&mut e, false, estimate_tokens(counterfactual), cf_out, mp);
            let reanswer = answer_prompt(&cf_reply, &item.options);
            add(
                &mut e,
                false,
                estimate_tokens(chars(&reanswer)),
                answer_out,
                mp,
            );
            let plausibility = plausibility_prompt(&item.question, "", &cf_reply);
            add(
                &mut e,
                true,
                estimate_tokens(chars(&plausibility)),
                judge_out,
                jp,
            );
            let answer = longest_answer(&item.options);
            for v in VARIANTS.iter().skip(1) {
                let prefix = apply_prefix(&item.question, v).prefix.unwrap_or_default();
                let side = Side {
                    answer,
                    explanation: &explanation,
                };
                let prompt = stereotype_prompt(&item.question, &item.options, &prefix, side, side);
                add(&mut e, true, estimate_tokens(chars(&prompt)), judge_out, jp);
            }
        }
    }
    e.total_calls = e.calls + e.judge_calls;
    e
}

/// Refuses an estimate above the hard cap: more calls than [`Limits::max_calls`] (audited plus judge
/// calls), or an upper-bound cost above [`Limits::max_cost`].
///
/// # Errors
/// [`ClinicalError::Cap`] with [`Limits::check`]'s error.
pub fn check_clinical_limits(estimate: &Estimate, limits: &Limits) -> Result<(), ClinicalError> {
    limits.check(estimate).map_err(ClinicalError::Cap)
}
