//! Whether the model's text is the user's request in English ([`crate::run`]'s
//! `translate`): a small model asked to rewrite "Give me the bridge's schedule" in
//! English sometimes answers the request instead ("Sure, please provide the request."),
//! and that text is English, so a language check alone lets it through and the search
//! then looks for tools that ask for things. A translation keeps what a translation
//! cannot change — a code, an identifier, a number — so a text that keeps fewer than half
//! of the message's is not its translation (half, not all: the model may write a date or a number over).
//! A message with no code or number has nothing to lose, so a text that opens as an
//! answer does ("Sure, I can help you find a salon…") is not its translation either.
//!
//! **Rationale** for asking again in another framing rather than switching framings:
//! Qwen2.5-Coder-1.5B at temperature 0, on 48 Seal-Tools requests hand-translated into
//! Spanish, German, French and Chinese, asked with the message as the user's and
//! `prompts/agent_translate.md` after it, answered 2 ("Sure, please provide the
//! request."), both in French or Chinese and both with a code ("g6WwqPRy"); asked with
//! the message as a text to translate (`prompts/agent_translate_again.md`), it rewrote
//! those 2 but answered others instead ("The excavation volume … is 6,000 cubic
//! meters", 3 of 48), and put a lead-in before 5 ("Here is the English translation:").

use std::collections::HashSet;

use toolscout_search::analyzer::is_cjk;

/// Why the model's text is not taken for the request in English (for the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotTranslation {
    /// Nothing but a lead-in or quotes.
    Empty,
    /// The text is not in English.
    NotEnglish,
    /// It keeps fewer than half of the codes and numbers the message has.
    LosesMarks,
    /// It opens as an answer to the request does ("Sure, I can help you find…").
    Answers,
}

impl std::fmt::Display for NotTranslation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Empty => "it is empty",
            Self::NotEnglish => "it is not in English",
            Self::LosesMarks => "it keeps fewer than half of the message's codes and numbers",
            Self::Answers => "it answers the request",
        })
    }
}

/// `reply` as the request in English: without a lead-in line ("Here is the English
/// translation:") and the quotes around it, checked to be English, to keep at least
/// half of `message`'s marks (see [`marks`]) among its words when it has any, and not to
/// open as an answer does ([`answers`]).
pub(crate) fn english_of(message: &str, reply: &str) -> Result<String, NotTranslation> {
    let text = without_lead_in(reply.trim());
    let text = text
        .trim()
        .trim_matches(['"', '“', '”', '`', '«', '»'])
        .trim();
    if text.is_empty() {
        return Err(NotTranslation::Empty);
    }
    if crate::language::detect(text).code() != "en" {
        return Err(NotTranslation::NotEnglish);
    }
    let wanted = marks(message);
    if !wanted.is_empty() {
        let have = words(text);
        let kept = wanted.iter().filter(|m| have.contains(*m)).count();
        if kept * 2 < wanted.len() {
            return Err(NotTranslation::LosesMarks);
        }
    }
    if answers(text) {
        return Err(NotTranslation::Answers);
    }
    Ok(text.to_owned())
}

/// Openings of an answer to a request, lower-cased, sorted: an assent ("Sure, …") or an
/// offer of help ("I can help you find…").
const ANSWER_OPENINGS: [&str; 12] = [
    "absolutely",
    "certainly",
    "gladly",
    "i can help",
    "i would be glad",
    "i would be happy",
    "i'd be glad",
    "i'd be happy",
    "i'll help",
    "no problem",
    "of course",
    "sure",
];

/// How many characters of a text [`answers`] reads: the longest of
/// [`ANSWER_OPENINGS`] and the character after it, with room to spare.
const OPENING_CHARS: usize = 24;

/// Whether `text` opens as an answer to a request does: with an assent or an offer of
/// help ([`ANSWER_OPENINGS`]) followed by a comma, a stop, an exclamation or a space.
/// This catches the answers to a request that has no codes or numbers for [`marks`]
/// ("Mon frère et moi avons besoin d'une coupe de cheveux à New York. Peux-tu m'aider ?"
/// → "Sure, I can help you find a hair salon in New York"). A user's own "Sure, book
/// it" is caught too; the model is then asked once more (see the module's rationale),
/// and the message is searched as written if that text opens so as well.
fn answers(text: &str) -> bool {
    // Only the opening is read: a few characters past the longest one.
    let head: String = text.trim_start().chars().take(OPENING_CHARS).collect();
    let head = head.to_lowercase().replace('’', "'");
    ANSWER_OPENINGS.iter().any(|opening| {
        head.strip_prefix(opening)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([',', '.', '!', ' ']))
    })
}

/// The text after a first line that only introduces it (a line ending in a colon, with
/// more text below), or the whole text.
fn without_lead_in(text: &str) -> &str {
    match text.split_once('\n') {
        Some((first, rest)) if first.trim_end().ends_with(':') && !rest.trim().is_empty() => rest,
        _ => text,
    }
}

/// What a translation keeps as the message wrote it: each number's digits (the
/// separators inside it and the zeros at its end dropped, so "48,7" and "$48.70" are one
/// mark), each word with a
/// digit or a capital after its first letter (a code: "g6WwqPRy", "XK-881"'s "XK"), and,
/// in a message with Chinese or Japanese characters, each word in Latin letters (a
/// name kept in its own script: "Zoloft"). A plain word is no mark: "Ginebra" may
/// rightly become "Geneva". Lower-cased, each once.
pub(crate) fn marks(text: &str) -> Vec<String> {
    let cjk = text.chars().any(is_cjk);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    scan(text, |token, number| {
        let code = number
            || token.chars().any(|c| c.is_ascii_digit())
            || token.chars().skip(1).any(char::is_uppercase);
        let latin_name = cjk && token.len() > 1 && token.chars().all(|c| c.is_ascii_alphabetic());
        if code || latin_name {
            let mark = token.to_lowercase();
            if seen.insert(mark.clone()) {
                out.push(mark);
            }
        }
    });
    out
}

/// Every word (lower-cased) and number (its digits) of `text`, as [`marks`] reads them.
fn words(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    scan(text, |token, _| {
        out.insert(token.to_lowercase());
    });
    out
}

/// Calls `f` with each number of `text` (its digits, the separators between them and
/// the zeros at its end dropped; `true`) and each word in letters other than Chinese or Japanese characters
/// (`false`). A word that starts with a letter and has digits ("g6WwqPRy") is one word;
/// one that starts with digits is its number and the rest ("6ysSDTNviL" is "6" and
/// "ysSDTNviL").
fn scan(text: &str, mut f: impl FnMut(&str, bool)) {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            let mut digits = String::new();
            while i < chars.len() {
                if chars[i].is_ascii_digit() {
                    digits.push(chars[i]);
                } else if !(matches!(chars[i], '.' | ',' | '\'')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit))
                {
                    break;
                }
                i += 1;
            }
            // "48,7" and "$48.70" are one number; "1,000" and "1000" too.
            let kept = digits.trim_end_matches('0');
            f(if kept.is_empty() { "0" } else { kept }, true);
        } else if c.is_alphabetic() && !is_cjk(c) {
            let start = i;
            while i < chars.len() && chars[i].is_alphanumeric() && !is_cjk(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            f(&word, false);
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_codes_numbers_and_latin_words_in_chinese() {
        assert_eq!(
            marks("Dame el calendario del puente g6WwqPRy y 48,7 $ para Ginebra"),
            ["g6wwqpry", "487"]
        );
        assert_eq!(
            marks("检索药品Zoloft的价格信息，桥梁g6WwqPRy"),
            ["zoloft", "g6wwqpry"]
        );
        assert_eq!(
            marks("Nenne mir die Kriminalitätsrate von Chicago."),
            Vec::<String>::new()
        );
        assert_eq!(marks("paciente ID 6ysSDTNviL"), ["id", "6", "yssdtnvil"]);
        assert_eq!(
            marks("vom 25. November 2013, Flug XK-881"),
            ["25", "2013", "xk", "881"]
        );
    }

    #[test]
    fn a_faithful_translation_passes() {
        let message = "Dame el calendario de mantenimiento del puente g6WwqPRy. Luego, calcula el consumo para treinta y tres unidades. Por último, busca el precio del medicamento Zoloft.";
        let reply = "Give me the maintenance schedule for bridge g6WwqPRy. Then calculate the usage for thirty-three units. Finally, find the price of the drug Zoloft.";
        assert_eq!(english_of(message, reply).as_deref(), Ok(reply));
        // Numbers rewritten with the other separator, or a zero more, are the same marks.
        assert!(
            english_of(
                "Calcula el ROI con una inversión de 48,7 $ y unos ingresos de 0,83 $.",
                "Calculate the ROI with an investment of $48.70 and revenue of $0.83."
            )
            .is_ok()
        );
    }

    #[test]
    fn an_answer_instead_of_a_translation_is_refused() {
        let message = "Donne-moi le calendrier d'entretien du pont g6WwqPRy. Ensuite, trouve le prix du médicament Zoloft.";
        assert_eq!(
            english_of(
                message,
                "Sure, please provide the user's request in English."
            ),
            Err(NotTranslation::LosesMarks)
        );
        assert_eq!(
            english_of(
                "请提供桥梁g6WwqPRy的维护计划。",
                "Sure, please provide the request."
            ),
            Err(NotTranslation::LosesMarks)
        );
        assert_eq!(
            english_of(
                message,
                "Donne-moi le calendrier du pont g6WwqPRy, s'il te plaît."
            ),
            Err(NotTranslation::NotEnglish)
        );
        assert_eq!(english_of(message, " \"\" "), Err(NotTranslation::Empty));
    }

    #[test]
    fn an_answer_without_marks_to_lose_is_refused_by_its_opening() {
        let message = "Mon frère et moi avons vraiment besoin d'une coupe de cheveux à New York. Peux-tu m'aider à trouver un salon mixte ?";
        for reply in [
            "Sure, I can help you find a hair salon in New York that offers mixed services.",
            "Of course! Here are some unisex salons in New York.",
            "I’d be happy to help you find a salon.",
        ] {
            assert_eq!(
                english_of(message, reply),
                Err(NotTranslation::Answers),
                "{reply}"
            );
        }
        // A request that merely starts with those letters is a request.
        let request = "Surely someone cuts hair for two in New York: can you find a unisex salon?";
        assert_eq!(english_of(message, request).as_deref(), Ok(request));
        assert!(ANSWER_OPENINGS.is_sorted());
        assert!(
            ANSWER_OPENINGS
                .iter()
                .all(|o| o.chars().count() < OPENING_CHARS)
        );
    }

    #[test]
    fn latin_words_of_a_chinese_message_are_kept_as_words() {
        let message = "计算\"Easter Extravaganza Offers\"活动的投资回报率（ROI），投资为48.7美元。";
        let reply = "Calculate the return on investment (ROI) for the \"Easter Extravaganza Offers\" activity. Investment: $48.7.";
        assert_eq!(english_of(message, reply).as_deref(), Ok(reply));
    }

    #[test]
    fn a_message_without_marks_checks_only_the_language() {
        assert_eq!(
            english_of(
                "Nenne mir die Kriminalitätsrate von Chicago.",
                "What is the crime rate in Chicago?"
            )
            .as_deref(),
            Ok("What is the crime rate in Chicago?")
        );
    }

    #[test]
    fn a_lead_in_line_and_quotes_are_dropped() {
        assert_eq!(
            english_of(
                "Ayúdame a obtener la posición del robot BQow7DRK.",
                "Sure, here is the translation into English:\n\n\"Help me get the position of robot BQow7DRK.\""
            )
            .as_deref(),
            Ok("Help me get the position of robot BQow7DRK.")
        );
        // A colon ending the only line is the text, not a lead-in.
        assert_eq!(
            english_of("Haz esto:", "Do this:").as_deref(),
            Ok("Do this:")
        );
    }
}
