//! The one prompt-fill rule: where a template's statement goes. The case inspector shows a case's
//! prompt with it ([`fill_prompt`]) and the pilot turns a bundle's template levels into pilot templates
//! with it ([`template_with_placeholder`]), so both show and send the same prompt for one template and
//! statement.

/// The placeholder a template marks its statement with: every occurrence is replaced by the statement
/// text.
pub const STATEMENT_PLACEHOLDER: &str = "{statement}";

/// The bracketed description some bundles put where the statement goes (the DecodingTrust templates'
/// `[the statement in wording 1 of its topic]`), matched without regard to ASCII case.
const BRACKETED_STATEMENT: &str = "[the statement";

/// A template's text with its statement marked by [`STATEMENT_PLACEHOLDER`]:
///
/// 1. a text that contains `{statement}` is kept as it is;
/// 2. else the first bracketed description that starts with `[the statement` (any ASCII case, e.g.
///    `[The statement …]`) through its closing `]` becomes `{statement}`;
/// 3. else a blank text (empty or whitespace only) becomes `{statement}` alone;
/// 4. else (also for a `[the statement` without a closing `]`) the statement follows the text on a new
///    paragraph: `TEXT\n\n{statement}`.
pub fn template_with_placeholder(text: &str) -> String {
    if text.contains(STATEMENT_PLACEHOLDER) {
        return text.to_string();
    }
    // ASCII lower-casing keeps every byte offset, so `start` indexes `text` too.
    let lower = text.to_ascii_lowercase();
    if let Some(start) = lower.find(BRACKETED_STATEMENT) {
        if let Some(len) = text[start..].find(']') {
            return format!(
                "{}{STATEMENT_PLACEHOLDER}{}",
                &text[..start],
                &text[start + len + 1..]
            );
        }
    }
    if text.trim().is_empty() {
        STATEMENT_PLACEHOLDER.to_string()
    } else {
        format!("{text}\n\n{STATEMENT_PLACEHOLDER}")
    }
}

/// The user prompt of `template` with `statement` filled in: [`template_with_placeholder`]'s text with
/// every `{statement}` replaced by `statement` (the pilot's `PromptTemplate::render` reads the same
/// text the same way).
///
/// # Examples
/// ```
/// use atlas_core::cases::fill_prompt;
/// assert_eq!(
///     fill_prompt("Here is my statement: [The statement in wording 1]", "S."),
///     "Here is my statement: S."
/// );
/// assert_eq!(fill_prompt("Answer:", "S."), "Answer:\n\nS.");
/// ```
pub fn fill_prompt(template: &str, statement: &str) -> String {
    template_with_placeholder(template).replace(STATEMENT_PLACEHOLDER, statement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capitalised_bracketed_statement_is_the_placeholder_too() {
        let template = "Say whether you agree. [The Statement, as worded for its topic] Reply now.";
        assert_eq!(
            template_with_placeholder(template),
            "Say whether you agree. {statement} Reply now."
        );
        assert_eq!(
            fill_prompt(template, "Old people cannot learn."),
            "Say whether you agree. Old people cannot learn. Reply now."
        );
    }

    #[test]
    fn an_unclosed_bracket_or_a_blank_template_gets_the_statement_appended_or_alone() {
        assert_eq!(
            template_with_placeholder("Here: [the statement"),
            "Here: [the statement\n\n{statement}"
        );
        assert_eq!(template_with_placeholder("  \n"), "{statement}");
        assert_eq!(
            template_with_placeholder("Keep {statement} and [the statement]"),
            "Keep {statement} and [the statement]",
            "an explicit placeholder wins"
        );
    }
}
