//! Spanish: claims and grounding (number words, relative days, either decimal mark).

use super::Language;
use super::numbers::{any_day, either_digits, letter_words, word_numbers};
use crate::claims::{PerfectRules, perfect_claims};

/// Spanish: claims of work done, numbers and days for grounding; no rules for needs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spanish;

/// Words of Spanish that English, German and French do not use, for [`super::detect`].
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "al", "ayer", "ayuda", "ayúdame", "busca", "con", "cuál", "cuáles", "cuándo", "cuánto",
    "cuántos", "cómo", "dame", "del", "desde", "dónde", "el", "esa", "ese", "eso", "esta", "este",
    "estos", "está", "están", "favor", "gracias", "hasta", "hay", "hola", "hoy", "las", "los",
    "mañana", "mis", "muy", "más", "necesito", "para", "pero", "podrías", "por", "puede", "puedes",
    "qué", "quiero", "sobre", "sus", "también", "una", "unas", "unos", "y",
];

/// Words that name a day without its date, sorted.
const RELATIVE_DAYS: [&str; 16] = [
    "ayer",
    "domingo",
    "finde",
    "hoy",
    "jueves",
    "lunes",
    "martes",
    "mañana",
    "mes",
    "miércoles",
    "noche",
    "pasado",
    "semana",
    "sábado",
    "tarde",
    "viernes",
];

/// Claims of work done: "he reservado", "ha sido enviado", "reservé".
const CLAIMS: PerfectRules = PerfectRules {
    auxiliaries: &["fue", "fueron", "ha", "hemos", "han", "he"],
    participles: &[
        "actualizado",
        "añadido",
        "buscado",
        "calculado",
        "cancelado",
        "comprado",
        "convertido",
        "creado",
        "descargado",
        "eliminado",
        "encontrado",
        "enviado",
        "guardado",
        "hecho",
        "obtenido",
        "pagado",
        "pedido",
        "procesado",
        "programado",
        "realizado",
        "registrado",
        "reservado",
        "traducido",
        "transferido",
        "verificado",
    ],
    pasts: &[
        "actualicé",
        "añadí",
        "busqué",
        "calculé",
        "cancelé",
        "compré",
        "convertí",
        "creé",
        "descargué",
        "eliminé",
        "encontré",
        "envié",
        "guardé",
        "hice",
        "obtuve",
        "pagué",
        "pedí",
        "programé",
        "realicé",
        "registré",
        "reservé",
        "traduje",
        "transferí",
        "verifiqué",
    ],
    negations: &[
        "nada", "nadie", "ningún", "ninguna", "ninguno", "no", "nunca", "tampoco",
    ],
};

impl Language for Spanish {
    fn code(&self) -> &'static str {
        "es"
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
            &["y"],
            &mut out,
        );
        either_digits(text, false, &mut out);
        Some(out)
    }

    fn names_day(&self, text: &str) -> bool {
        any_day(text, &RELATIVE_DAYS)
    }
}

/// "cero" to "veintinueve", the tens, hundreds and "mil", "docena", "medio".
fn number_word(word: &str) -> Option<f64> {
    const SMALL: [&str; 30] = [
        "cero",
        "uno",
        "dos",
        "tres",
        "cuatro",
        "cinco",
        "seis",
        "siete",
        "ocho",
        "nueve",
        "diez",
        "once",
        "doce",
        "trece",
        "catorce",
        "quince",
        "dieciséis",
        "diecisiete",
        "dieciocho",
        "diecinueve",
        "veinte",
        "veintiuno",
        "veintidós",
        "veintitrés",
        "veinticuatro",
        "veinticinco",
        "veintiséis",
        "veintisiete",
        "veintiocho",
        "veintinueve",
    ];
    if let Some(n) = SMALL.iter().position(|w| *w == word) {
        return Some(n as f64);
    }
    Some(match word {
        "un" | "una" => 1.0,
        "treinta" => 30.0,
        "cuarenta" => 40.0,
        "cincuenta" => 50.0,
        "sesenta" => 60.0,
        "setenta" => 70.0,
        "ochenta" => 80.0,
        "noventa" => 90.0,
        "cien" | "ciento" => 100.0,
        "doscientos" | "doscientas" => 200.0,
        "trescientos" | "trescientas" => 300.0,
        "cuatrocientos" | "cuatrocientas" => 400.0,
        "quinientos" | "quinientas" => 500.0,
        "seiscientos" | "seiscientas" => 600.0,
        "setecientos" | "setecientas" => 700.0,
        "ochocientos" | "ochocientas" => 800.0,
        "novecientos" | "novecientas" => 900.0,
        "mil" => 1000.0,
        "millón" | "millones" => 1e6,
        "docena" => 12.0,
        "medio" | "media" => 0.5,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_words_and_digits() {
        let numbers = Spanish
            .numbers("Reserva una mesa para dos personas, treinta y cinco euros, 0,5 kg, 1.500 m, doscientos cincuenta")
            .unwrap_or_default();
        for n in [2.0, 35.0, 0.5, 1500.0, 250.0] {
            assert!(numbers.contains(&n), "{n} in {numbers:?}");
        }
    }

    #[test]
    fn days_without_their_date() {
        assert!(Spanish.names_day("Reserva una mesa para dos personas mañana"));
        assert!(Spanish.names_day("el próximo viernes"));
        assert!(!Spanish.names_day("Reserva una mesa en Madrid"));
    }

    #[test]
    fn days_are_sorted() {
        let mut sorted = RELATIVE_DAYS;
        sorted.sort_unstable();
        assert_eq!(sorted, RELATIVE_DAYS);
    }
}
