//! French: claims and grounding (number words, relative days, either decimal mark, spaces between
//! groups).

use super::Language;
use super::numbers::{any_day, either_digits, letter_words, word_numbers};
use crate::claims::{PerfectRules, perfect_claims};

/// French: claims of work done, numbers and days for grounding; no rules for needs.
#[derive(Debug, Default, Clone, Copy)]
pub struct French;

/// Words of French that English, Spanish and German do not use, for [`super::detect`]
/// ("j", "l" and "qu" are what an apostrophe leaves of "j'ai", "l'heure", "qu'il").
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "ai", "au", "aujourd", "aussi", "aux", "avec", "bonjour", "ce", "ces", "cette", "cherche",
    "combien", "dans", "demain", "elle", "est", "et", "il", "ils", "j", "je", "l", "le", "les",
    "ma", "mais", "merci", "mes", "moi", "ne", "nous", "où", "pas", "peux", "pour", "pourquoi",
    "pouvez", "plaît", "qu", "quand", "quel", "quelle", "quelles", "quels", "qui", "sur", "ta",
    "tes", "trouve", "très", "une", "veux", "votre", "voudrais", "vous",
];

/// Words that name a day without its date, sorted ("aujourd'hui" is "aujourd" and
/// "hui").
const RELATIVE_DAYS: [&str; 14] = [
    "aujourd", "demain", "dimanche", "hier", "jeudi", "lundi", "mardi", "mercredi", "mois",
    "samedi", "semaine", "soir", "vendredi", "week",
];

/// Claims of work done: "j'ai réservé", "a été envoyé", "est réservée".
const CLAIMS: PerfectRules = PerfectRules {
    auxiliaries: &["ai", "avons", "a", "ont", "est", "sont", "été"],
    participles: &[
        "acheté",
        "ajouté",
        "annulé",
        "calculé",
        "commandé",
        "converti",
        "créé",
        "effectué",
        "enregistré",
        "envoyé",
        "fait",
        "lancé",
        "obtenu",
        "payé",
        "planifié",
        "programmé",
        "recherché",
        "récupéré",
        "réservé",
        "supprimé",
        "traduit",
        "transféré",
        "trouvé",
        "téléchargé",
        "vérifié",
    ],
    pasts: &[],
    negations: &[
        "aucun", "aucune", "jamais", "n", "ne", "pas", "personne", "rien",
    ],
};

impl Language for French {
    fn code(&self) -> &'static str {
        "fr"
    }

    fn claims_work(&self, answer: &str) -> Option<bool> {
        Some(perfect_claims(answer, &CLAIMS))
    }

    fn numbers(&self, text: &str) -> Option<Vec<f64>> {
        let mut out = Vec::new();
        let words: Vec<String> = letter_words(text).collect();
        word_numbers(
            words.iter().map(String::as_str),
            number_word,
            &["et"],
            &mut out,
        );
        either_digits(text, true, &mut out);
        Some(out)
    }

    fn names_day(&self, text: &str) -> bool {
        any_day(text, &RELATIVE_DAYS)
    }
}

/// "zéro" to "seize", the tens, "cent", "mille", "douzaine", "demi".
fn number_word(word: &str) -> Option<f64> {
    const SMALL: [&str; 17] = [
        "zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix",
        "onze", "douze", "treize", "quatorze", "quinze", "seize",
    ];
    if let Some(n) = SMALL.iter().position(|w| *w == word) {
        return Some(n as f64);
    }
    Some(match word {
        "une" => 1.0,
        "vingt" | "vingts" => 20.0,
        "trente" => 30.0,
        "quarante" => 40.0,
        "cinquante" => 50.0,
        "soixante" => 60.0,
        "septante" => 70.0,
        "huitante" | "octante" => 80.0,
        "nonante" => 90.0,
        "cent" | "cents" => 100.0,
        "mille" => 1000.0,
        "million" | "millions" => 1e6,
        "douzaine" => 12.0,
        "demi" | "demie" | "moitié" => 0.5,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_words_and_digits() {
        let numbers = French
            .numbers("Une table pour deux personnes, quatre-vingt-dix euros, vingt et un ans, 0,5 l, 12 000 pas")
            .unwrap_or_default();
        for n in [2.0, 90.0, 21.0, 0.5, 12000.0] {
            assert!(numbers.contains(&n), "{n} in {numbers:?}");
        }
    }

    #[test]
    fn days_without_their_date() {
        assert!(French.names_day("Réserve une table pour demain soir"));
        assert!(French.names_day("aujourd'hui"));
        assert!(!French.names_day("Réserve une table à Lyon"));
    }

    #[test]
    fn days_are_sorted() {
        let mut sorted = RELATIVE_DAYS;
        sorted.sort_unstable();
        assert_eq!(sorted, RELATIVE_DAYS);
    }
}
