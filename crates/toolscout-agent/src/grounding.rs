//! [`AgentOptions::ground_arguments`](crate::AgentOptions::ground_arguments): is each
//! required argument of a call something the conversation gave?
//!
//! A small model offered a tool that is only on the subject of a request calls it
//! anyway, and fills what the request does not say with values of its own ("find me a
//! train" becomes a train from New York to Boston on some date). What it invents is
//! rarely anywhere in the conversation; what the user gave almost always is, in some
//! form. The check is deliberately lenient, so that a value the model reworded still
//! passes: a text passes when one of its words (or numbers) was said, a number when it
//! was said (as digits, as a word up to twenty, or as a percentage) or is 0 or 1 (which
//! "a month" or "the next week" say without a digit), a list or object when one of its
//! parts passes. What the user implied passes too: a code for a named thing ("en" for
//! English, "JP" for Japan, "USD" for US dollars, "MSFT" for Microsoft: a short run of
//! letters each in one said word that starts with the same letter, or the initials of
//! words said together), a number in another unit (2 hours as 120 minutes, 10 miles as
//! 16.09 km, 20 °C as 68 °F) and a date when the user named a day without one
//! ("tomorrow", "next Friday"). Values the schema itself offers (an `enum` member, the
//! `const`, the `default`), booleans and null always pass, and only required parameters
//! are checked: an optional one the model fills is its own choice.
//!
//! Number words, relative days and decimal marks are the language's of each user
//! message ([`crate::language`]): "dos personas mañana" grounds 2 and a date, "0,5" is
//! 0.5 in Spanish, German and French. A conversation with a user message in a language
//! without those rules is not checked at all (a refusal of words the rules cannot read
//! would be a refusal of what the user gave). Words match without their accents
//! ("Bogotá" and "Bogota"), Chinese text by its pairs of characters, and a value written
//! in another script than the user's ("Beijing" for "北京", "上海" for "Shanghai") is a
//! translation the model made: it passes.

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;

use serde_json::Value;
use toolscout_search::analyzer::is_cjk;
use toolscout_spec::ToolSpec;
use unicode_normalization::UnicodeNormalization;

use crate::ErrorKind;
use crate::language::{English, Language};
use crate::{CallOutcome, Message};

/// The most text the grounds are built from, in bytes: the newest messages count first.
const MAX_GROUND_BYTES: usize = 1 << 20;
/// How many of the numbers said are combined in pairs for derived values.
const MAX_DERIVED: usize = 64;
/// The deepest a value is looked into.
const MAX_DEPTH: usize = 16;

/// What a step's calls are checked against.
pub(crate) struct Grounding<'a> {
    /// The conversation so far.
    pub(crate) grounds: Grounds,
    /// Tools never checked: the run's meta tools (discover, `call_tool`, `answer`) and
    /// sub-agents, whose arguments the model composes by design.
    pub(crate) exempt: &'a [String],
    /// The calls refused so far in the run (tool and arguments): made again unchanged,
    /// one runs, as the model has confirmed values the user gave in other words.
    pub(crate) refused: &'a Mutex<HashSet<String>>,
}

impl Grounding<'_> {
    /// The `ungrounded_arguments` error for a call of `spec`, if it has one.
    pub(crate) fn refuse(&self, spec: &ToolSpec, args: &Value) -> Option<CallOutcome> {
        if self.exempt.iter().any(|name| name == spec.name.as_str()) {
            return None;
        }
        let missing = self.grounds.ungrounded(spec, args);
        if missing.is_empty() {
            return None;
        }
        let call = format!("{}\u{0}{args}", spec.name);
        // A poisoned lock only means another call panicked; the set is still usable.
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        if refused.contains(&call) {
            return None;
        }
        if refused.len() < MAX_REFUSED {
            refused.insert(call);
        }
        drop(refused);
        let sent: Vec<String> = missing
            .iter()
            .map(|name| {
                let value = args.get(name).map(Value::to_string).unwrap_or_default();
                let short: String = value.chars().take(MAX_QUOTED_CHARS).collect();
                let cut = if short.len() < value.len() { "…" } else { "" };
                format!("{name}={short}{cut}")
            })
            .collect();
        Some(CallOutcome::error(
            ErrorKind::UngroundedArguments,
            format!(
                "not run: the user has not given {} ({} is in neither the request nor a tool result). If the user did give it in other words (a name for what they described, a converted unit, a total), call again with the same arguments and the call will run; if not, do not guess: answer the user and ask for it",
                missing.join(", "),
                sent.join(", ")
            ),
        ))
    }
}

/// The most refused calls a run remembers (each is confirmed by being made again).
const MAX_REFUSED: usize = 1_000;

/// The longest argument value an `ungrounded_arguments` error quotes, in characters.
const MAX_QUOTED_CHARS: usize = 60;

/// The words and numbers of what the user said and the tools returned.
#[derive(Debug, Default)]
pub(crate) struct Grounds {
    words: BTreeSet<String>,
    numbers: Vec<f64>,
    /// The first letters of consecutive words, per run of up to [`MAX_CODE_LETTERS`]
    /// ("us dollars" is "ud"): codes made of initials.
    initials: HashSet<String>,
    /// A day was named without its date ("tomorrow", "next Friday").
    relative_day: bool,
    /// A user message is in a language without grounding rules: nothing is refused.
    open: bool,
    /// The user wrote Chinese characters.
    user_cjk: bool,
    /// A user message is in a language not written in Latin letters.
    user_not_latin: bool,
}

/// The fewest letters two forms of a word share ([`Grounds::has_word_form`]).
const MIN_FORM_STEM: usize = 4;
/// The most letters an ending may differ by ("-ing", "-ed", "-ies").
const MAX_FORM_ENDING: usize = 3;

/// The longest code for a named thing, in letters ("AAPL", "GOOGL").
const MAX_CODE_LETTERS: usize = 5;

/// What one unit is in another, for the conversions a user leaves to the model: time,
/// length, mass, volume, data, and percentages.
const UNIT_FACTORS: [f64; 20] = [
    60.0, 3600.0, 24.0, 7.0, 12.0, 30.0, 365.0, 52.0, 100.0, 1000.0, 1024.0, 1.609344, 2.54,
    0.3048, 0.9144, 0.453592, 28.3495, 3.78541, 0.0283495, 1e6,
];

impl Grounds {
    /// The grounds of a conversation: its user messages and tool results, newest first,
    /// up to [`MAX_GROUND_BYTES`]. The model's own turns and the system prompt are not
    /// grounds: a value the model wrote down is not one the user gave.
    pub(crate) fn of(messages: &[Message]) -> Self {
        let mut grounds = Grounds::default();
        let mut budget = MAX_GROUND_BYTES;
        for message in messages.iter().rev() {
            let (text, user) = match message {
                Message::User { content } => (content, true),
                // A failed call's result is the model's own arguments coming back (a
                // refusal quotes the made-up value), not something the world returned.
                Message::Tool { content, .. } if !failed(content) => (content, false),
                _ => continue,
            };
            let end = floor_char_boundary(text, budget.min(text.len()));
            let text = &text[..end];
            // Tool results are data, written with the decimal point (JSON's).
            let language: &dyn Language = if user {
                crate::language::detect(text)
            } else {
                &English
            };
            if user {
                grounds.user_cjk |= text.chars().any(is_cjk);
                grounds.user_not_latin |= !language.writes_latin();
            }
            grounds.add(text, language);
            budget -= end;
            if budget == 0 {
                break;
            }
        }
        grounds.numbers.sort_by(f64::total_cmp);
        grounds.numbers.dedup();
        grounds
    }

    /// These grounds and the user's last request as the model wrote it in English (see
    /// [`AgentOptions::translate_requests`](crate::AgentOptions::translate_requests)):
    /// what the user said, in the words the model will call with ("London" for
    /// "Londres", 2 for "dos personas").
    pub(crate) fn with_english(mut self, english: &str) -> Self {
        self.add(english, &English);
        self.numbers.sort_by(f64::total_cmp);
        self.numbers.dedup();
        self
    }

    fn add(&mut self, text: &str, language: &dyn Language) {
        match language.numbers(text) {
            Some(numbers) => self.numbers.extend(numbers),
            None => self.open = true,
        }
        self.relative_day |= language.names_day(text);
        let mut run: Vec<char> = Vec::new();
        for token in tokens(text) {
            // Initials of up to five consecutive words of letters.
            match token.chars().next() {
                Some(first) if first.is_alphabetic() => {
                    if run.len() == MAX_CODE_LETTERS {
                        run.remove(0);
                    }
                    run.push(first);
                    for start in 0..run.len().saturating_sub(1) {
                        self.initials.insert(run[start..].iter().collect());
                    }
                }
                _ => run.clear(),
            }
            self.words.insert(stem(&token).to_owned());
        }
    }

    fn has_number(&self, n: f64) -> bool {
        // "-5" was said as "5" (or "minus 5", "5 below zero").
        let n = n.abs();
        if n == 0.0 || n == 1.0 {
            return true;
        }
        let near = |m: &f64| (m - n).abs() <= 1e-9 * n.max(1.0);
        // A percentage may be passed as a fraction or the other way round.
        if self
            .numbers
            .iter()
            .any(|m| near(m) || near(&(m / 100.0)) || near(&(m * 100.0)))
        {
            return true;
        }
        // A number said in another unit: the model rounds what it converts.
        let rounded = |m: f64| (m - n).abs() <= 0.01 * n;
        if self.numbers.iter().any(|m| {
            UNIT_FACTORS
                .iter()
                .any(|f| rounded(m * f) || rounded(m / f))
                || rounded(m * 9.0 / 5.0 + 32.0)
                || rounded((m - 32.0) * 5.0 / 9.0)
        }) {
            return true;
        }
        // A total, a difference, a product or a ratio of two numbers that were said
        // ("20 minutes and 15 minutes" is 35).
        let said = &self.numbers[..self.numbers.len().min(MAX_DERIVED)];
        said.iter().enumerate().any(|(i, a)| {
            said[i + 1..].iter().any(|b| {
                near(&(a + b))
                    || near(&(a - b).abs())
                    || near(&(a * b))
                    || (*b != 0.0 && near(&(a / b)))
                    || (*a != 0.0 && near(&(b / a)))
            })
        })
    }

    fn has_word(&self, token: &str) -> bool {
        self.words.contains(stem(token))
            || self.has_word_form(token)
            || number(token).is_some_and(|n| self.has_number(n))
            || self.has_code(token)
    }

    /// Whether another form of `token` was said: a word that shares its start, all but
    /// at most three letters of the shorter one, and at least four ("grilling" for
    /// "grilled", "cooking" for "cook"; "gripping" is not "grilled").
    fn has_word_form(&self, token: &str) -> bool {
        let letters: Vec<char> = token.chars().collect();
        if letters.len() < MIN_FORM_STEM || !letters.iter().all(|c| c.is_alphabetic()) {
            return false;
        }
        let start: String = letters[..MIN_FORM_STEM].iter().collect();
        self.words
            .range(start.clone()..)
            .take_while(|w| w.starts_with(&start))
            .any(|word| {
                let shared = word
                    .chars()
                    .zip(&letters)
                    .take_while(|(a, b)| a == *b)
                    .count();
                let shorter = word.chars().count().min(letters.len());
                shared >= MIN_FORM_STEM && shared + MAX_FORM_ENDING >= shorter
            })
    }

    /// Whether `token` is a code for something said: two to five letters, each in one
    /// said word that starts with the same letter ("jp" in "japan", "aapl" in "apple"),
    /// the initials of words said together ("usd" for "United States dollars"), or a
    /// said word followed by the start of another ("usd" for "US dollars").
    fn has_code(&self, token: &str) -> bool {
        let letters = token.chars().count();
        if !(2..=MAX_CODE_LETTERS).contains(&letters) || !token.chars().all(char::is_alphabetic) {
            return false;
        }
        if self.initials.contains(token) {
            return true;
        }
        let Some(first) = token.chars().next() else {
            return false;
        };
        self.words.iter().any(|word| {
            word.chars().count() > letters
                && word.starts_with(first)
                && token.chars().all(|c| word.contains(c))
        }) || self.has_code_across(token)
    }

    /// "usd" as "us" and "dollars": a said word that the code starts with, then a said
    /// word that starts with the rest.
    fn has_code_across(&self, token: &str) -> bool {
        (1..token.len()).any(|cut| {
            token.is_char_boundary(cut)
                && self.words.contains(&token[..cut])
                && self
                    .words
                    .iter()
                    .any(|w| w.len() > 1 && w.starts_with(&token[cut..]))
        })
    }

    /// Whether `text` is written in another script than the user's, so the model
    /// translated it: Chinese characters the user never wrote, or only Latin letters
    /// where the user wrote a language that is not written in them.
    fn is_translation(&self, text: &str) -> bool {
        if text.chars().any(is_cjk) {
            return !self.user_cjk;
        }
        self.user_not_latin && text.chars().any(char::is_alphabetic)
    }

    /// A date ("2026-11-28", "11/28") when a day was named without one.
    fn is_relative_date(&self, text: &str) -> bool {
        let digits: Vec<String> = tokens(text).filter(|t| number(t).is_some()).collect();
        self.relative_day && digits.len() >= 2 && tokens(text).count() <= 7
    }

    fn grounds(&self, value: &Value, schema: Option<&Value>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return true;
        }
        if let Some(schema) = schema {
            let offered = |key: &str| schema.get(key);
            let in_enum = offered("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.contains(value));
            if in_enum || offered("const") == Some(value) || offered("default") == Some(value) {
                return true;
            }
        }
        match value {
            Value::Null | Value::Bool(_) => true,
            Value::Number(n) => n.as_f64().is_none_or(|n| self.has_number(n)),
            Value::String(text) => {
                let mut words = tokens(text).peekable();
                // Nothing but punctuation invents nothing.
                words.peek().is_none()
                    || words.any(|w| self.has_word(&w))
                    || self.is_relative_date(text)
                    || self.is_translation(text)
            }
            Value::Array(items) => {
                let item_schema = schema.and_then(|s| s.get("items"));
                items.is_empty()
                    || items
                        .iter()
                        .any(|item| self.grounds(item, item_schema, depth + 1))
            }
            Value::Object(fields) => {
                let properties = schema.and_then(|s| s.get("properties"));
                fields.is_empty()
                    || fields.iter().any(|(key, v)| {
                        self.grounds(v, properties.and_then(|p| p.get(key)), depth + 1)
                    })
            }
        }
    }

    /// The required parameters of `spec` whose values in `args` the conversation did not
    /// give, in the schema's order.
    pub(crate) fn ungrounded(&self, spec: &ToolSpec, args: &Value) -> Vec<String> {
        if self.open {
            return Vec::new();
        }
        let schema = &spec.parameters;
        let Some(required) = schema.get("required").and_then(Value::as_array) else {
            return Vec::new();
        };
        let properties = schema.get("properties");
        required
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| {
                args.get(*name).is_some_and(|value| {
                    !self.grounds(value, properties.and_then(|p| p.get(*name)), 0)
                })
            })
            .map(str::to_owned)
            .collect()
    }
}

/// The lower-case runs of letters without their accents, and the runs of digits, in
/// `text`: "1kg" is "1" and "kg", "XK-881" is "xk" and "881", "Bogotá" is "bogota".
/// Chinese characters are written without spaces: a run of them is its pairs of
/// characters ("上海天气" is "上海", "海天", "天气"), or the one character alone.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut rest = text;
    let mut pairs: Vec<String> = Vec::new();
    std::iter::from_fn(move || {
        if let Some(pair) = pairs.pop() {
            return Some(pair);
        }
        let start = rest.find(char::is_alphanumeric)?;
        rest = &rest[start..];
        let first = rest.chars().next()?;
        if is_cjk(first) {
            let end = rest.find(|c: char| !is_cjk(c)).unwrap_or(rest.len());
            let run: Vec<char> = rest[..end].chars().collect();
            rest = &rest[end..];
            if run.len() == 1 {
                return Some(run.iter().collect());
            }
            pairs = run.windows(2).rev().map(|w| w.iter().collect()).collect();
            return pairs.pop();
        }
        let digits = first.is_ascii_digit();
        let end = rest
            .find(|c: char| !c.is_alphanumeric() || c.is_ascii_digit() != digits || is_cjk(c))
            .unwrap_or(rest.len());
        let token = fold(&rest[..end]);
        rest = &rest[end..];
        Some(token)
    })
}

/// `word` in lower case, without its accents ("Bogotá" is "bogota", "Ñandú" "nandu").
fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A word without a plural's final "s" ("whales" and "whale" are one word).
fn stem(word: &str) -> &str {
    match word.strip_suffix('s') {
        Some(rest) if rest.chars().count() >= 3 => rest,
        _ => word,
    }
}

/// A token that is all digits, as a number ("07" is 7).
fn number(token: &str) -> Option<f64> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Whether a tool message is a failed call's result (`{"ok": false, …}`).
fn failed(content: &str) -> bool {
    content.contains("\"ok\":false")
        && serde_json::from_str::<serde_json::Value>(content)
            .ok()
            .and_then(|v| v.get("ok").and_then(serde_json::Value::as_bool))
            == Some(false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(parameters: Value) -> ToolSpec {
        ToolSpec::builder("find_trains", "Find trains between two cities")
            .parameters(parameters)
            .build()
            .unwrap()
    }

    fn trains() -> ToolSpec {
        spec(json!({
            "type": "object",
            "properties": {
                "from": {"type": "string"},
                "to": {"type": "string"},
                "date": {"type": "string"},
                "class": {"type": "string", "enum": ["Value", "Business"]},
                "adults": {"type": "integer", "default": 1},
                "seats": {"type": "integer"}
            },
            "required": ["from", "to", "date", "class", "adults"]
        }))
    }

    fn user(text: &str) -> Vec<Message> {
        vec![Message::system("Use the tools."), Message::user(text)]
    }

    #[test]
    fn the_model_s_english_for_the_request_grounds_what_it_translated() {
        let asked = user(
            "Busca un tren de Ginebra a Aquisgrán para el 3 de marzo de 2025, clase Value, dos adultos",
        );
        let args = json!({"from": "Geneva", "to": "Aachen", "date": "2025-03-03",
            "class": "Value", "adults": 2});
        // The city names changed in translation.
        assert_eq!(
            Grounds::of(&asked).ungrounded(&trains(), &args),
            ["from", "to"]
        );
        let english =
            "Find a train from Geneva to Aachen for March 3, 2025, Value class, two adults";
        let grounds = Grounds::of(&asked).with_english(english);
        assert!(grounds.ungrounded(&trains(), &args).is_empty());
        // What neither says is still made up.
        let args = json!({"from": "Paris", "to": "Aachen", "date": "2025-03-03",
            "class": "Value", "adults": 2});
        assert_eq!(grounds.ungrounded(&trains(), &args), ["from"]);
    }

    #[test]
    fn invented_values_are_ungrounded_and_given_ones_are_not() {
        let grounds = Grounds::of(&user("Is it possible for you to find me a train?"));
        let args = json!({"from": "New York", "to": "Boston", "date": "2023-04-15",
            "class": "Value", "adults": 1});
        assert_eq!(grounds.ungrounded(&trains(), &args), ["from", "to", "date"]);

        let grounds = Grounds::of(&user(
            "A train from Sacramento to Fresno on March 3rd 2023, please",
        ));
        // Reworded, reformatted and schema-offered values all pass.
        let args = json!({"from": "Sacramento, CA", "to": "fresno", "date": "2023-03-03",
            "class": "Business", "adults": 1});
        assert!(grounds.ungrounded(&trains(), &args).is_empty());
    }

    #[test]
    fn numbers_pass_as_digits_words_separators_and_percentages() {
        let grounds = Grounds::of(&user(
            "12,000 miles at 0.5 per mile, two people, 93.5% done, 07 May",
        ));
        for n in [12000.0, 0.5, 2.0, 93.5, 0.935, 7.0, -7.0, 1.0, 0.0] {
            assert!(grounds.has_number(n), "{n}");
        }
        // 12,000 × 0.5, 7 × 2, 12,000 + 2 and 93.5 − 7 are derived from what was said.
        for n in [6000.0, 14.0, 12002.0, 86.5] {
            assert!(grounds.has_number(n), "{n}");
        }
        // Not said, not a pair's total, difference, product or ratio, and not in another
        // unit (12 is: 12,000 g in kg, or half a day in hours).
        for n in [3.0, 2e-7, 4.25, 13.0, 11.0] {
            assert!(!grounds.has_number(n), "{n}");
        }
        let measure = spec(json!({
            "type": "object",
            "properties": {"distance": {"type": "number"}, "current": {"type": "number"}},
            "required": ["distance", "current"]
        }));
        let args = json!({"distance": 12000, "current": 4.25});
        assert_eq!(grounds.ungrounded(&measure, &args), ["current"]);
    }

    #[test]
    fn only_required_parameters_that_were_sent_are_checked() {
        let grounds = Grounds::of(&user("A train from Sacramento to Fresno"));
        // `seats` is optional; `date`, required, was left out (validation's business).
        let args = json!({"from": "Sacramento", "to": "Fresno", "seats": 40,
            "class": "Value", "adults": 1});
        assert!(grounds.ungrounded(&trains(), &args).is_empty());
        // A tool without a schema's `required` has nothing to check.
        let open = spec(json!({"type": "object", "properties": {"q": {"type": "string"}}}));
        assert!(
            grounds
                .ungrounded(&open, &json!({"q": "anything"}))
                .is_empty()
        );
    }

    #[test]
    fn lists_and_objects_pass_when_a_part_was_said() {
        let grounds = Grounds::of(&user("Play songs by Tyler Shaw"));
        let tool = spec(json!({
            "type": "object",
            "properties": {"artists": {"type": "array", "items": {"type": "string"}},
                "filter": {"type": "object"}},
            "required": ["artists", "filter"]
        }));
        let args = json!({"artists": ["Adele", "Tyler Shaw"], "filter": {"by": "tyler"}});
        assert!(grounds.ungrounded(&tool, &args).is_empty());
        let args = json!({"artists": ["Adele"], "filter": {"by": "Adele"}});
        assert_eq!(grounds.ungrounded(&tool, &args), ["artists", "filter"]);
    }

    #[test]
    fn tool_results_are_grounds_and_the_models_own_words_are_not() {
        let mut messages = user("Book the cheapest flight");
        messages.push(Message::Assistant {
            content: Some("I will book flight XK-881.".to_owned()),
            tool_calls: Vec::new(),
        });
        let tool = spec(json!({
            "type": "object",
            "properties": {"flight": {"type": "string"}},
            "required": ["flight"]
        }));
        let args = json!({"flight": "XK-881"});
        assert_eq!(Grounds::of(&messages).ungrounded(&tool, &args), ["flight"]);
        messages.push(Message::Tool {
            tool_call_id: "c1".to_owned(),
            content: r#"{"ok":true,"value":{"cheapest":"XK-881"}}"#.to_owned(),
        });
        assert!(Grounds::of(&messages).ungrounded(&tool, &args).is_empty());
    }

    #[test]
    fn the_grounds_are_bounded_and_keep_the_newest_text() {
        // An old message longer than the budget: its start is read, its end is not.
        let old = format!("early {} late", "é".repeat(MAX_GROUND_BYTES / 2));
        let messages = vec![Message::user(old), Message::user("newest")];
        let grounds = Grounds::of(&messages);
        assert!(grounds.has_word("newest"));
        assert!(grounds.has_word("early"));
        assert!(!grounds.has_word("late"));
    }

    #[test]
    fn other_forms_of_a_said_word_pass() {
        let grounds = Grounds::of(&user("Prepare a grilled chicken dish, cooked daily"));
        for word in ["grilling", "grill", "cooking", "cook", "dishes", "chickens"] {
            assert!(grounds.has_word(word), "{word}");
        }
        // Sharing three letters is not enough: "preview" is not "prepare", "gripping"
        // not "grilled".
        for word in ["preview", "gripping", "grave"] {
            assert!(!grounds.has_word(word), "{word}");
        }
    }

    #[test]
    fn codes_for_named_things_pass_and_unrelated_codes_do_not() {
        let grounds = Grounds::of(&user(
            "Translate it to English, price it in US dollars and euros, quote Microsoft and Apple in Japan",
        ));
        for code in [
            "en", "EN", "USD", "EUR", "MSFT", "AAPL", "JP", "jpn", "en-US",
        ] {
            let tool = spec(json!({"type": "object",
                "properties": {"code": {"type": "string"}}, "required": ["code"]}));
            assert!(
                grounds.ungrounded(&tool, &json!({"code": code})).is_empty(),
                "{code}"
            );
        }
        // Letters of no said word that starts with the same letter.
        for code in ["GBP", "fr", "NFLX", "kr"] {
            assert!(!grounds.has_word(&code.to_lowercase()), "{code}");
        }
        // Initials of words said together.
        let grounds = Grounds::of(&user("the price in United Kingdom pounds"));
        assert!(grounds.has_word("ukp"));
        assert!(!grounds.has_word("xyz"));
    }

    #[test]
    fn numbers_in_another_unit_pass() {
        let grounds = Grounds::of(&user("a 2 hour drive of 10 miles at 20 degrees Celsius"));
        // 120 minutes, 7,200 seconds, 16.09 km (rounded), 68 °F.
        for n in [120.0, 7200.0, 16.09, 16.1, 68.0] {
            assert!(grounds.has_number(n), "{n}");
        }
        for n in [17.5, 99.0, 45.0] {
            assert!(!grounds.has_number(n), "{n}");
        }
    }

    #[test]
    fn a_date_passes_when_the_user_named_the_day_without_it() {
        let tool = spec(json!({"type": "object",
            "properties": {"date": {"type": "string"}}, "required": ["date"]}));
        let args = json!({"date": "2026-11-28"});
        let said = Grounds::of(&user("Book a table for tomorrow evening"));
        assert!(said.ungrounded(&tool, &args).is_empty());
        let unsaid = Grounds::of(&user("Book a table somewhere nice"));
        assert_eq!(unsaid.ungrounded(&tool, &args), ["date"]);
    }

    #[test]
    fn tokens_split_letters_from_digits() {
        let all: Vec<String> = tokens("1kg of XK-881, Straße 7b, Bogotá").collect();
        assert_eq!(
            all,
            ["1", "kg", "of", "xk", "881", "straße", "7", "b", "bogota"]
        );
        let all: Vec<String> = tokens("查询上海天气 in 3天").collect();
        assert_eq!(
            all,
            ["查询", "询上", "上海", "海天", "天气", "in", "3", "天"]
        );
    }

    fn table() -> ToolSpec {
        spec(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "party_size": {"type": "integer"},
                "date": {"type": "string"},
                "kilos": {"type": "number"}
            },
            "required": ["city", "party_size", "date", "kilos"]
        }))
    }

    #[test]
    fn number_words_and_days_of_the_users_language_ground_values() {
        let args = json!({"city": "Madrid", "party_size": 2, "date": "2026-12-07", "kilos": 0.5});
        for request in [
            "Reserva una mesa en Madrid para dos personas mañana, y medio kilo de pan",
            "Reserva una mesa en Madrid para dos personas mañana, y 0,5 kg de pan",
            "Reserviere einen Tisch in Madrid für zwei Personen morgen, und 0,5 kg Brot",
            "Réserve une table à Madrid pour deux personnes demain, et 0,5 kg de pain",
            "帮我预订明天在Madrid两个人的餐桌，再买0.5公斤面包",
            "帮我预订明天在Madrid两个人的餐桌，再买零点五公斤面包",
            "Book a table in Madrid for two people tomorrow, and half a kilo of bread",
        ] {
            let grounds = Grounds::of(&user(request));
            assert!(
                grounds.ungrounded(&table(), &args).is_empty(),
                "{request}: {:?}",
                grounds.ungrounded(&table(), &args)
            );
        }
        // What the request did not give is still refused in the user's language.
        let grounds = Grounds::of(&user("Reserva una mesa en Madrid para dos personas"));
        let invented =
            json!({"city": "Madrid", "party_size": 9, "date": "2026-11-28", "kilos": 4.25});
        assert_eq!(
            grounds.ungrounded(&table(), &invented),
            ["party_size", "date", "kilos"]
        );
        // "0,5" is not 5 where the comma is the decimal mark.
        let grounds = Grounds::of(&user("Compra 0,5 kg de pan para la mesa de Madrid"));
        assert!(grounds.has_number(0.5));
        assert!(!grounds.has_number(5.0));
    }

    #[test]
    fn a_conversation_in_a_language_without_rules_is_not_checked() {
        let args = json!({"city": "Lisboa", "party_size": 7, "date": "2026-12-07", "kilos": 3});
        let grounds = Grounds::of(&user("Olá. Reserve uma mesa para duas pessoas amanhã."));
        assert!(grounds.ungrounded(&table(), &args).is_empty());
    }

    #[test]
    fn a_value_in_another_script_than_the_users_is_a_translation() {
        let tool = spec(json!({"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}));
        let chinese = Grounds::of(&user("北京明天的天气怎么样？"));
        assert!(
            chinese
                .ungrounded(&tool, &json!({"city": "Beijing"}))
                .is_empty()
        );
        assert!(
            chinese
                .ungrounded(&tool, &json!({"city": "北京"}))
                .is_empty()
        );
        assert_eq!(
            chinese.ungrounded(&tool, &json!({"city": "上海"})),
            ["city"]
        );
        let english = Grounds::of(&user("What's the weather in Shanghai tomorrow?"));
        assert!(
            english
                .ungrounded(&tool, &json!({"city": "上海"}))
                .is_empty()
        );
        assert_eq!(
            english.ungrounded(&tool, &json!({"city": "Beijing"})),
            ["city"]
        );
        // Accents aside, a word is the word said.
        let spanish = Grounds::of(&user("¿Qué tiempo hará mañana en Bogotá?"));
        assert!(
            spanish
                .ungrounded(&tool, &json!({"city": "Bogota"}))
                .is_empty()
        );
    }
}
