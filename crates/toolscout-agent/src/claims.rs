//! Whether an answer reports work done: "I found a house in Long Beach", "I have
//! booked the table", "Your payment has been sent". Given before any call ran, such an
//! answer is made up — nothing was found, booked or sent — and the loop asks for the
//! call instead (see `answered` in the loop).
//!
//! **Rationale:** a small model required to call a tool sometimes answers with the
//! answer tool, restating the request as done ("Can you find me a house…?" → "I found a
//! house…"). That is no decline: a decline says what cannot be done ("None of my tools
//! can book a table"), asks a question, or answers from what the model knows ("The 2020
//! World Series was won by the Dodgers"), and none of those says that the assistant did
//! something. The check is lexical and narrow on purpose: a sentence whose subject is
//! the assistant ("I", "I have", "I've just") followed by a verb of work done, or a
//! passive "has been" / "have been" with one; a clause with a negation ("I found
//! no…", "I have not booked") is not a claim, but a negation in another clause does not
//! undo one ("I've booked it, don't worry").
//!
//! The rules are the answer's language's (see [`crate::language`]): English's above;
//! Spanish, German and French say work done with an auxiliary and a past participle ("he
//! reservado", "ich habe … gebucht", "j'ai réservé", [`PerfectRules`]); in a language
//! without rules no answer is taken for a claim.

use crate::needs::lower_words;

/// Verbs of work a tool would have done, in the past participle or the simple past
/// (the same word for most), sorted.
const DONE: [&str; 48] = [
    "added",
    "analysed",
    "analyzed",
    "booked",
    "bought",
    "calculated",
    "canceled",
    "cancelled",
    "changed",
    "checked",
    "completed",
    "computed",
    "converted",
    "created",
    "deleted",
    "downloaded",
    "fetched",
    "found",
    "generated",
    "got",
    "identified",
    "located",
    "looked",
    "made",
    "obtained",
    "ordered",
    "paid",
    "placed",
    "played",
    "posted",
    "processed",
    "purchased",
    "registered",
    "removed",
    "reserved",
    "retrieved",
    "saved",
    "scheduled",
    "searched",
    "sent",
    "set",
    "started",
    "submitted",
    "transferred",
    "translated",
    "updated",
    "uploaded",
    "verified",
];

/// Words between the subject and the verb that keep the sentence a claim: "I have
/// found", "I've just booked", "I successfully sent".
const BETWEEN: [&str; 6] = ["already", "also", "have", "just", "successfully", "ve"];

/// Words that make a sentence no claim: "I found no flights", "I have not booked", "I
/// couldn't find" (split at the apostrophe, its `t`).
const NEGATIONS: [&str; 7] = ["cannot", "no", "none", "not", "nothing", "t", "unable"];

/// Whether one sentence of `answer` says the assistant did a piece of work (see the
/// [module docs](self)), by the rules of the answer's language
/// ([`Language::claims_work`](crate::language::Language::claims_work)).
pub(crate) fn claims_work(answer: &str) -> bool {
    crate::language::detect(answer)
        .claims_work(answer)
        .unwrap_or(false)
}

/// [`claims_work`] by the English rules.
pub(crate) fn english_claims(answer: &str) -> bool {
    answer
        .lines()
        .flat_map(crate::needs::sentences)
        .flat_map(clauses)
        .any(clause_claims_work)
}

/// The clauses of a sentence: cut at `,`, `;`, `:`, a dash between spaces and " but ".
fn clauses(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in sentence.split([',', ';', ':']) {
        for part in part.split(" - ") {
            out.extend(part.split(" but "));
        }
    }
    out
}

/// The words of a claim of work done in a language that says it with an auxiliary and a
/// past participle, anywhere after it in the clause ("he reservado", "ich habe den Tisch
/// gebucht", "j'ai réservé", "ha sido enviado"), or with a first-person past of its own
/// ("reservé"). All lower case.
#[derive(Debug)]
pub(crate) struct PerfectRules {
    /// The auxiliaries of the perfect and of the passive ("he", "habe", "ai", "wurde").
    pub(crate) auxiliaries: &'static [&'static str],
    /// Past participles of verbs of work a tool would have done, masculine singular.
    pub(crate) participles: &'static [&'static str],
    /// First-person pasts that claim work alone ("reservé", "encontré").
    pub(crate) pasts: &'static [&'static str],
    /// Words that make a clause no claim ("no", "nicht", "pas").
    pub(crate) negations: &'static [&'static str],
}

/// Whether one clause of `answer` claims work done by `rules` (a question never does).
pub(crate) fn perfect_claims(answer: &str, rules: &PerfectRules) -> bool {
    answer
        .lines()
        .flat_map(crate::needs::sentences)
        .flat_map(clauses)
        .any(|clause| {
            let clause = clause.trim();
            if clause.ends_with('?') || clause.starts_with('¿') {
                return false;
            }
            let words: Vec<String> = lower_words(clause).collect();
            if words.iter().any(|w| rules.negations.contains(&w.as_str())) {
                return false;
            }
            let participle = |w: &String| {
                let singular = w.strip_suffix('s').unwrap_or(w);
                // Feminine forms: Spanish "reservada", French "réservée".
                let masculine = singular
                    .strip_suffix('a')
                    .map(|stem| format!("{stem}o"))
                    .or_else(|| singular.strip_suffix('e').map(str::to_owned));
                [Some(w.as_str()), Some(singular), masculine.as_deref()]
                    .into_iter()
                    .flatten()
                    .any(|form| rules.participles.contains(&form))
            };
            words.iter().any(|w| rules.pasts.contains(&w.as_str()))
                || words.iter().enumerate().any(|(i, w)| {
                    rules.auxiliaries.contains(&w.as_str()) && words[i + 1..].iter().any(participle)
                })
        })
}

fn clause_claims_work(clause: &str) -> bool {
    let words: Vec<String> = lower_words(clause).collect();
    if words.iter().any(|w| NEGATIONS.contains(&w.as_str())) {
        return false;
    }
    let done = |w: &String| DONE.binary_search(&w.as_str()).is_ok();
    words.iter().enumerate().any(|(i, word)| {
        let rest = &words[i + 1..];
        match word.as_str() {
            "i" | "we" => rest
                .iter()
                .find(|w| !BETWEEN.contains(&w.as_str()))
                .is_some_and(done),
            "has" | "have" => {
                rest.first().is_some_and(|w| w == "been") && rest.get(1).is_some_and(done)
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verbs_are_sorted_for_the_binary_search() {
        assert!(DONE.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn an_account_of_work_done_is_a_claim() {
        for answer in [
            "I found a house accommodation in Long Beach with a review rating of at least 4.2.",
            "Sure! I've just booked a table for two at 7 pm.",
            "I have retrieved the data and calculated the mean.",
            "Your payment of $100 to Mary has been sent.",
            "Done. We successfully created the asset.",
            // A negation in another clause does not undo the claim.
            "I've booked it, don't worry",
            "I found a flight to Oslo, but none with a window seat.",
        ] {
            assert!(claims_work(answer), "{answer}");
        }
    }

    #[test]
    fn an_account_of_work_done_in_spanish_german_or_french_is_a_claim() {
        for answer in [
            "He reservado una mesa para dos personas mañana a las 7.",
            "¡Listo! Te he encontrado un vuelo a Oslo para el lunes.",
            "Ya reservé la mesa para las ocho, no te preocupes.",
            "El pago a María ha sido enviado con éxito.",
            "Ich habe den Tisch für morgen gebucht.",
            "Deine Zahlung wurde erfolgreich überwiesen.",
            "J'ai réservé une table pour deux personnes.",
            "Votre paiement a été envoyé.",
            "La table est réservée pour demain soir.",
        ] {
            assert!(claims_work(answer), "{answer}");
        }
        for answer in [
            "No he encontrado vuelos para ese día.",
            "¿Has reservado ya la mesa?",
            "Necesito la fecha para reservar la mesa.",
            "Ich habe keine Flüge für diesen Tag gefunden.",
            "Ich habe den Tisch nicht gebucht: für wann?",
            "Je n'ai trouvé aucun vol pour ce jour-là.",
            "Pour quelle date voulez-vous réserver ?",
        ] {
            assert!(!claims_work(answer), "{answer}");
        }
    }

    #[test]
    fn an_answer_in_a_language_without_rules_is_no_claim() {
        for answer in [
            "我已经为你预订了明天的餐桌。",
            "Reservei a mesa para amanhã, não se preocupe.",
        ] {
            assert!(!claims_work(answer), "{answer}");
        }
    }

    #[test]
    fn a_decline_a_question_or_knowledge_is_no_claim() {
        for answer in [
            "None of my tools can book a table; call the restaurant.",
            "I found no flights on that day.",
            "I have not booked anything yet: which date?",
            "I couldn't find a house in Long Beach.",
            "I'm sorry, but I cannot assist with that request.",
            "The 2020 World Series was won by the Los Angeles Dodgers.",
            "To rent a house, you can use the Hotels_2_SearchHouse function.",
            "I have a report on the soil.",
            "Don't worry, I have not booked anything yet.",
            "No, I found nothing for Oslo.",
            "Could you tell me the city?",
            "I need the amount and receiver of the payment.",
            "",
        ] {
            assert!(!claims_work(answer), "{answer}");
        }
    }
}
