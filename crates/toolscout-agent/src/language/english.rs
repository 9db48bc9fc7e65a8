//! English: every rule set.

use super::Language;
use super::numbers::{letter_words, point_digits, word_numbers};

/// English; its rules are the ones the agent's defaults were written with.
#[derive(Debug, Default, Clone, Copy)]
pub struct English;

/// Words of English that Spanish, German and French do not use, for [`super::detect`].
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "about", "after", "and", "any", "are", "at", "be", "been", "before", "by", "can", "could",
    "do", "does", "for", "from", "give", "has", "have", "her", "his", "how", "i", "if", "into",
    "is", "it", "its", "just", "like", "many", "much", "my", "need", "of", "on", "or", "our",
    "please", "she", "should", "show", "some", "tell", "than", "that", "the", "their", "then",
    "there", "they", "this", "to", "want", "we", "what", "when", "where", "which", "who", "why",
    "with", "would", "you", "your",
];

/// Words that name a day without its date (a final plural "s" dropped first).
const RELATIVE_DAYS: [&str; 14] = [
    "friday",
    "monday",
    "month",
    "saturday",
    "sunday",
    "thursday",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "wednesday",
    "week",
    "weekend",
    "yesterday",
];

impl Language for English {
    fn code(&self) -> &'static str {
        "en"
    }

    fn split_needs(&self, message: &str) -> Option<Vec<String>> {
        Some(crate::needs::english_needs(message))
    }

    fn claims_work(&self, answer: &str) -> Option<bool> {
        Some(crate::claims::english_claims(answer))
    }

    fn numbers(&self, text: &str) -> Option<Vec<f64>> {
        let mut out = Vec::new();
        let words: Vec<String> = letter_words(text).collect();
        word_numbers(
            words.iter().map(String::as_str),
            number_word,
            &["and"],
            &mut out,
        );
        point_digits(text, &mut out);
        Some(out)
    }

    fn names_day(&self, text: &str) -> bool {
        letter_words(text).any(|w| {
            let stem = match w.strip_suffix('s') {
                Some(rest) if rest.chars().count() >= 3 => rest,
                _ => &w,
            };
            RELATIVE_DAYS.binary_search(&stem).is_ok()
        })
    }
}

/// "one" to "twenty", the round tens, hundred and thousand, a dozen and a half.
fn number_word(word: &str) -> Option<f64> {
    const SMALL: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    if let Some(n) = SMALL.iter().position(|w| *w == word) {
        return Some(n as f64);
    }
    Some(match word {
        "thirty" => 30.0,
        "forty" => 40.0,
        "fifty" => 50.0,
        "sixty" => 60.0,
        "seventy" => 70.0,
        "eighty" => 80.0,
        "ninety" => 90.0,
        "hundred" => 100.0,
        "thousand" => 1000.0,
        "million" => 1e6,
        "dozen" => 12.0,
        "half" => 0.5,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_words_and_digits() {
        let numbers = English
            .numbers("twenty five people, two hundred and five rows, 12,000 miles at 0.5")
            .unwrap_or_default();
        for n in [25.0, 205.0, 2.0, 12000.0, 0.5] {
            assert!(numbers.contains(&n), "{n} in {numbers:?}");
        }
    }

    #[test]
    fn days_without_their_date() {
        assert!(English.names_day("Book a table for tomorrow evening"));
        assert!(English.names_day("every Mondays"));
        assert!(!English.names_day("Book a table somewhere nice"));
    }

    #[test]
    fn days_are_sorted() {
        assert!(RELATIVE_DAYS.is_sorted());
    }
}
