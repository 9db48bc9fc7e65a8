//! German: claims and grounding (number words, compounds included, relative days, either decimal
//! mark).

use super::Language;
use super::numbers::{any_day, combine, either_digits, letter_words, word_numbers};
use crate::claims::{PerfectRules, perfect_claims};

/// German: claims of work done, numbers and days for grounding; no rules for needs.
#[derive(Debug, Default, Clone, Copy)]
pub struct German;

/// Words of German that English, Spanish and French do not use, for [`super::detect`].
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "auch", "auf", "aus", "bei", "beim", "bitte", "danke", "das", "dein", "deine", "dem", "den",
    "der", "dich", "die", "ein", "eine", "einem", "einen", "einer", "finde", "für", "gibt",
    "hallo", "heute", "ich", "ihr", "ihre", "im", "ins", "ist", "kann", "kannst", "können", "mein",
    "meine", "meinen", "mich", "mir", "mit", "morgen", "möchte", "nach", "nicht", "noch", "oder",
    "schon", "sie", "sind", "suche", "uns", "und", "vom", "von", "wann", "warum", "welche",
    "welcher", "wer", "wie", "wir", "wo", "zeig", "zeige", "zu", "zum", "zur", "über",
];

/// Words that name a day without its date, sorted.
const RELATIVE_DAYS: [&str; 16] = [
    "abend",
    "dienstag",
    "donnerstag",
    "freitag",
    "gestern",
    "heute",
    "mittwoch",
    "monat",
    "montag",
    "morgen",
    "samstag",
    "sonnabend",
    "sonntag",
    "woche",
    "wochenende",
    "übermorgen",
];

/// Claims of work done: "ich habe … gebucht", "wurde … überwiesen".
const CLAIMS: PerfectRules = PerfectRules {
    auxiliaries: &["habe", "haben", "hab", "ist", "sind", "wurde", "wurden"],
    participles: &[
        "abgerufen",
        "abgesagt",
        "aktualisiert",
        "berechnet",
        "bestellt",
        "bezahlt",
        "erledigt",
        "ermittelt",
        "erstellt",
        "gebucht",
        "gefunden",
        "gekauft",
        "gelöscht",
        "gemacht",
        "geplant",
        "geprüft",
        "gesendet",
        "geschickt",
        "gespeichert",
        "gestartet",
        "gesucht",
        "heruntergeladen",
        "hinzugefügt",
        "hochgeladen",
        "registriert",
        "reserviert",
        "storniert",
        "überprüft",
        "übersetzt",
        "überwiesen",
        "umgerechnet",
    ],
    pasts: &[],
    negations: &[
        "kein", "keine", "keinen", "keiner", "keines", "nicht", "nichts", "nie",
    ],
};

impl Language for German {
    fn code(&self) -> &'static str {
        "de"
    }

    fn claims_work(&self, answer: &str) -> Option<bool> {
        Some(perfect_claims(answer, &CLAIMS))
    }

    fn numbers(&self, text: &str) -> Option<Vec<f64>> {
        let mut out = Vec::new();
        let words: Vec<String> = letter_words(text).collect();
        word_numbers(words.iter().map(String::as_str), number_word, &[], &mut out);
        either_digits(text, false, &mut out);
        Some(out)
    }

    fn names_day(&self, text: &str) -> bool {
        any_day(text, &RELATIVE_DAYS)
    }
}

/// A German number word, compounds included ("fünfundzwanzig", "dreihundert",
/// "zweitausend").
fn number_word(word: &str) -> Option<f64> {
    if let Some(n) = simple(word) {
        return Some(n);
    }
    // "-und-": the unit before the tens ("fünfundzwanzig" is 5 + 20).
    if let Some((unit, tens)) = word.split_once("und")
        && let (Some(unit), Some(tens)) = (simple(unit), simple(tens))
    {
        return Some(unit + tens);
    }
    // A prefix of units before "hundert" or "tausend" ("dreihundert", "zweitausend").
    for (suffix, value) in [("hundert", 100.0), ("tausend", 1000.0)] {
        if let Some(prefix) = word.strip_suffix(suffix)
            && !prefix.is_empty()
            && let Some(n) = number_word(prefix)
        {
            return Some(combine(&[n, value]));
        }
    }
    None
}

/// "null" to "zwanzig", the tens, "hundert", "tausend", "dutzend", "halb".
fn simple(word: &str) -> Option<f64> {
    const SMALL: [&str; 21] = [
        "null",
        "eins",
        "zwei",
        "drei",
        "vier",
        "fünf",
        "sechs",
        "sieben",
        "acht",
        "neun",
        "zehn",
        "elf",
        "zwölf",
        "dreizehn",
        "vierzehn",
        "fünfzehn",
        "sechzehn",
        "siebzehn",
        "achtzehn",
        "neunzehn",
        "zwanzig",
    ];
    if let Some(n) = SMALL.iter().position(|w| *w == word) {
        return Some(n as f64);
    }
    Some(match word {
        "ein" | "eine" | "einen" | "einem" | "einer" => 1.0,
        "zwo" | "beide" | "beiden" => 2.0,
        "dreißig" => 30.0,
        "vierzig" => 40.0,
        "fünfzig" => 50.0,
        "sechzig" => 60.0,
        "siebzig" => 70.0,
        "achtzig" => 80.0,
        "neunzig" => 90.0,
        "hundert" => 100.0,
        "tausend" => 1000.0,
        "million" | "millionen" => 1e6,
        "dutzend" => 12.0,
        "halb" | "halbe" | "halben" | "hälfte" => 0.5,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_words_compounds_and_digits() {
        let numbers = German
            .numbers("Einen Tisch für zwei Personen, fünfundzwanzig Euro, dreihundert Meter, 0,5 l, 12.000 Schritte")
            .unwrap_or_default();
        for n in [2.0, 25.0, 300.0, 0.5, 12000.0] {
            assert!(numbers.contains(&n), "{n} in {numbers:?}");
        }
    }

    #[test]
    fn days_without_their_date() {
        assert!(German.names_day("Reserviere einen Tisch für morgen Abend"));
        assert!(German.names_day("am Freitag"));
        assert!(!German.names_day("Reserviere einen Tisch in Berlin"));
    }

    #[test]
    fn days_are_sorted() {
        let mut sorted = RELATIVE_DAYS;
        sorted.sort_unstable();
        assert_eq!(sorted, RELATIVE_DAYS);
    }
}
