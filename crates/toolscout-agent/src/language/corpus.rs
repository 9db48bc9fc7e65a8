//! The corpus of what the language rules do to real requests and answers: each
//! request's language, needs and the numbers and days grounding reads from it, each
//! answer's claim, in snapshots (one per language), so that every rule change shows its
//! diff in review. The requests are in `tests/data/languages/requests.jsonl`: BFCL and
//! Seal-Tools requests, 25 of them translated by hand into Spanish, German, French and
//! Chinese, and a few written for one rule each.

use std::fmt::Write as _;

use serde::Deserialize;

use super::detect;
use crate::claims::claims_work;
use crate::needs::split_needs;

const REQUESTS: &str = include_str!("../../tests/data/languages/requests.jsonl");
const ANSWERS: &str = include_str!("../../tests/data/languages/answers.txt");

#[derive(Deserialize)]
struct Request {
    language: String,
    query: String,
}

/// What the rules make of one request.
fn check(request: &str, expected: &str) -> String {
    let language = detect(request);
    let mut out = format!("{request}\n  {}", language.code());
    if expected != "other" && language.code() != expected {
        write!(out, " (written in {expected})").ok();
    }
    let needs = split_needs(request);
    match needs.len() {
        1 => out.push_str(" · one need"),
        n => {
            write!(out, " · {n} needs").ok();
        }
    }
    if claims_work(request) {
        out.push_str(" · claims work");
    }
    match language.numbers(request) {
        Some(mut numbers) => {
            numbers.sort_by(f64::total_cmp);
            numbers.dedup();
            let numbers: Vec<String> = numbers.iter().map(f64::to_string).collect();
            if !numbers.is_empty() {
                write!(out, " · numbers {}", numbers.join(", ")).ok();
            }
            if language.names_day(request) {
                out.push_str(" · names a day");
            }
        }
        None => out.push_str(" · grounding open"),
    }
    out.push('\n');
    if needs.len() > 1 {
        for need in needs {
            writeln!(out, "  | {need}").ok();
        }
    }
    out
}

fn requests_in(language: &str) -> String {
    REQUESTS
        .lines()
        .filter_map(|line| serde_json::from_str::<Request>(line).ok())
        .filter(|r| r.language == language)
        .map(|r| check(&r.query, &r.language))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_corpus_has_over_a_hundred_requests() {
    let parsed = REQUESTS
        .lines()
        .filter_map(|line| serde_json::from_str::<Request>(line).ok())
        .count();
    assert_eq!(parsed, REQUESTS.lines().count());
    assert!(parsed > 100, "{parsed}");
}

#[test]
fn requests_in_english() {
    insta::assert_snapshot!(requests_in("en"));
}

#[test]
fn requests_in_spanish() {
    insta::assert_snapshot!(requests_in("es"));
}

#[test]
fn requests_in_german() {
    insta::assert_snapshot!(requests_in("de"));
}

#[test]
fn requests_in_french() {
    insta::assert_snapshot!(requests_in("fr"));
}

#[test]
fn requests_in_chinese() {
    insta::assert_snapshot!(requests_in("zh"));
}

#[test]
fn requests_in_languages_without_rules() {
    insta::assert_snapshot!(requests_in("other"));
}

#[test]
fn answers_that_claim_work() {
    let out: String = ANSWERS
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|answer| {
            let claim = if claims_work(answer) { "claim" } else { "-" };
            format!("{claim:5} [{}] {answer}\n", detect(answer).code())
        })
        .collect();
    insta::assert_snapshot!(out);
}
