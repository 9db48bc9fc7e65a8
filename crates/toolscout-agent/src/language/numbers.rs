//! Numbers in digits and in words, as the languages with rules write them.

/// The numbers written in digits in `text`, each once, with `.` as the decimal mark and
/// `,` between groups: "12,000" is 12000 and "0.5" is 0.5 (not 12 and 0, or 0 and 5),
/// "2023-03-01" is 2023, 3 and 1.
pub(super) fn point_digits(text: &str, out: &mut Vec<f64>) {
    out.extend(
        text.split(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
            .map(|t| t.trim_matches(|c| c == ',' || c == '.'))
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
            .filter_map(|t| t.replace(',', "").parse::<f64>().ok()),
    );
}

/// The numbers written in digits in `text` where either mark may be the decimal one, as
/// in Spanish, German and French text (which write "0,5" and "12.000", but whose users
/// type "0.5" too): every reading that is well formed is kept — "0,5" is 0.5, "1.234,5"
/// 1234.5, "12.000" both 12000 and 12, "1,000,000" 1000000. With `space_groups`, a space
/// (or a no-break space) before exactly three digits separates groups ("12 000", French).
/// A run no reading fits ("1,2,3", "2023.03.01") is read as its runs of digits.
pub(super) fn either_digits(text: &str, space_groups: bool, out: &mut Vec<f64>) {
    let is_group_space = |c: char| space_groups && matches!(c, ' ' | '\u{a0}' | '\u{202f}');
    let chars: Vec<char> = text.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        if !chars[k].is_ascii_digit() {
            k += 1;
            continue;
        }
        // One run: digits, and `.`, `,` or a group space each followed by a digit.
        let mut run = String::new();
        while k < chars.len() {
            let c = chars[k];
            let next_digit = chars.get(k + 1).is_some_and(char::is_ascii_digit);
            if c.is_ascii_digit() || ((c == '.' || c == ',') && next_digit) {
                run.push(c);
            } else if is_group_space(c) && next_digit && three_digits_at(&chars, k + 1) {
                run.push(' ');
            } else {
                break;
            }
            k += 1;
        }
        let before = out.len();
        for (decimal, groups) in [('.', [',', ' ']), (',', ['.', ' '])] {
            if let Some(n) = reading(&run, decimal, groups)
                && !out[before..].contains(&n)
            {
                out.push(n);
            }
        }
        if out.len() == before {
            out.extend(
                run.split(|c: char| !c.is_ascii_digit())
                    .filter_map(|t| t.parse::<f64>().ok()),
            );
        }
    }
}

/// Whether exactly three digits start at `at` (and no fourth follows).
fn three_digits_at(chars: &[char], at: usize) -> bool {
    chars.len() >= at + 3
        && chars[at..at + 3].iter().all(char::is_ascii_digit)
        && !chars.get(at + 3).is_some_and(char::is_ascii_digit)
}

/// `run` read with `decimal` as the decimal mark and `groups` between groups of three:
/// `None` when it is not well formed so (two decimal marks, a group after the decimal
/// mark, a group not of three digits).
fn reading(run: &str, decimal: char, groups: [char; 2]) -> Option<f64> {
    let (whole, fraction) = match run.split_once(decimal) {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (run, None),
    };
    if fraction.is_some_and(|f| !f.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let mut parts = whole.split(groups);
    let first = parts.next()?;
    let mut digits = first.to_owned();
    for part in parts {
        if part.len() != 3 {
            return None;
        }
        digits.push_str(part);
    }
    if first.is_empty() || (first.len() > 3 && digits.len() != first.len()) {
        return None;
    }
    let text = match fraction {
        Some(fraction) => format!("{digits}.{fraction}"),
        None => digits,
    };
    text.parse().ok()
}

/// The numbers said in words in a text's `words` (lower case, in order): each word's own
/// value ([`word_value`] of the language) and, for a run of two or more number words
/// (`joins` may stand between them: "and", "y", "et"), the run's value ("twenty five",
/// "doscientos cincuenta", "quatre vingt dix").
pub(super) fn word_numbers<'w>(
    words: impl Iterator<Item = &'w str>,
    word_value: impl Fn(&str) -> Option<f64>,
    joins: &[&str],
    out: &mut Vec<f64>,
) {
    let mut run: Vec<f64> = Vec::new();
    let flush = |run: &mut Vec<f64>, out: &mut Vec<f64>| {
        if run.len() > 1 {
            out.push(combine(run));
        }
        run.clear();
    };
    let mut pending_join = false;
    for word in words {
        if let Some(n) = word_value(word) {
            out.push(n);
            run.push(n);
            pending_join = false;
        } else if !run.is_empty() && !pending_join && joins.contains(&word) {
            pending_join = true;
        } else {
            flush(&mut run, out);
            pending_join = false;
        }
    }
    flush(&mut run, out);
}

/// The value of a run of number words: units and tens add up, a hundred multiplies
/// what is before it, a thousand or more closes a group ("two thousand three hundred
/// five" is 2305), twenty after a unit multiplies it (French "quatre-vingts" is 80).
pub(super) fn combine(run: &[f64]) -> f64 {
    let (mut total, mut current) = (0.0, 0.0);
    for &n in run {
        if n == 100.0 {
            current = if current == 0.0 {
                100.0
            } else {
                current * 100.0
            };
        } else if n >= 1000.0 {
            total += if current == 0.0 { n } else { current * n };
            current = 0.0;
        } else if n == 20.0 && current > 1.0 && current < 10.0 {
            current *= 20.0;
        } else {
            current += n;
        }
    }
    total + current
}

/// The lower-case words of `text`: runs of letters (digits and punctuation cut them).
pub(super) fn letter_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Whether one of the words of `text` is one of `days` (sorted).
pub(super) fn any_day(text: &str, days: &[&str]) -> bool {
    letter_words(text).any(|w| days.binary_search(&w.as_str()).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn either(text: &str, space_groups: bool) -> Vec<f64> {
        let mut out = Vec::new();
        either_digits(text, space_groups, &mut out);
        out
    }

    #[test]
    fn either_mark_reads_every_well_formed_reading() {
        assert_eq!(either("0,5 kg", false), [0.5]);
        assert_eq!(either("0.5 kg", false), [0.5]);
        assert_eq!(either("1.234,5 €", false), [1234.5]);
        assert_eq!(either("12.000 pasos", false), [12.0, 12000.0]);
        assert_eq!(either("1,000,000 de pesos", false), [1000000.0]);
        assert_eq!(
            either("1,2,3 y 2023.03.01", false),
            [1.0, 2.0, 3.0, 2023.0, 3.0, 1.0]
        );
        assert_eq!(either("12 000 € le 3 mai", true), [12000.0, 3.0]);
        assert_eq!(either("12 000 €", false), [12.0, 0.0]);
        assert_eq!(either("a las 7. Luego", false), [7.0]);
    }

    #[test]
    fn runs_of_number_words_combine() {
        assert_eq!(combine(&[20.0, 5.0]), 25.0);
        assert_eq!(combine(&[2.0, 1000.0, 3.0, 100.0, 5.0]), 2305.0);
        assert_eq!(combine(&[4.0, 20.0, 10.0]), 90.0);
        assert_eq!(combine(&[200.0, 50.0]), 250.0);
        let mut out = Vec::new();
        let value = |w: &str| match w {
            "treinta" => Some(30.0),
            "cinco" => Some(5.0),
            _ => None,
        };
        word_numbers(
            ["treinta", "y", "cinco", "y", "más"].into_iter(),
            value,
            &["y"],
            &mut out,
        );
        assert_eq!(out, [30.0, 5.0, 35.0]);
    }
}
