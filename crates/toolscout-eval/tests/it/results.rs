//! `eval agent --results`: outcomes kept on disk, read back by a run of the same settings,
//! a line cut short by a stopped process dropped, another run's settings refused.

use std::io::Write as _;

use serde_json::json;
use toolscout_agent::{StopReason, TokenUsage};
use toolscout_eval::agent::{Outcome, Totals};
use toolscout_eval::read::Task;
use toolscout_eval::results::Results;

fn outcome(called: &[&str]) -> Outcome {
    let mut o = Outcome::default();
    o.called_ok = called.iter().map(|t| (*t).to_owned()).collect();
    o.expected_called = !called.is_empty();
    o.calls = called.iter().map(|t| (*t).to_owned()).collect();
    o.refused = vec![("email".to_owned(), json!({"to": "bob"}))];
    o.steps = 3;
    o.usage = TokenUsage {
        prompt_tokens: 1200,
        completion_tokens: 40,
        estimated: false,
    };
    o.stop = Some(StopReason::EndpointError {
        status: Some(400),
        message: "grammar".to_owned(),
    });
    o.seconds = 12.5;
    o
}

#[test]
fn a_second_run_takes_the_outcomes_the_first_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.jsonl");
    let settings = json!({"policy": "retrieve", "max_steps": 6});
    let weather = Task::new("Weather in Paris", &["weather"]);
    let mail = Task::new("Mail bob", &["email"]);
    let kept = outcome(&["weather"]);
    {
        let mut results = Results::open(&path, &settings).unwrap();
        assert!(results.is_empty());
        results.keep(&weather, &kept).unwrap();
    }
    let results = Results::open(&path, &settings).unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results.kept(&weather), Some(&kept), "read back whole");
    assert_eq!(results.kept(&mail), None);
    // The same task with other expected tools is another task.
    assert_eq!(
        results.kept(&Task::new("Weather in Paris", &["forecast"])),
        None
    );
    // Figures from a kept outcome are those of the run that made it.
    let (mut a, mut b) = (Totals::default(), Totals::default());
    a.add(&weather, &kept);
    b.add(&weather, results.kept(&weather).unwrap());
    assert_eq!(a, b);
}

#[test]
fn a_line_cut_short_is_dropped_and_written_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.jsonl");
    let settings = json!({"policy": "offered"});
    let weather = Task::new("Weather in Paris", &["weather"]);
    let mail = Task::new("Mail bob", &["email"]);
    Results::open(&path, &settings)
        .unwrap()
        .keep(&weather, &outcome(&["weather"]))
        .unwrap();
    // The process stopped in the middle of the next line.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"query":"Mail bob","expected":["em"#)
        .unwrap();
    let mut results = Results::open(&path, &settings).unwrap();
    assert_eq!(results.len(), 1);
    results.keep(&mail, &outcome(&["email"])).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    let results = Results::open(&path, &settings).unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.kept(&mail).unwrap().expected_called);
}

#[test]
fn a_file_of_other_settings_or_not_of_results_is_refused_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.jsonl");
    let weather = Task::new("Weather in Paris", &["weather"]);
    Results::open(&path, &json!({"policy": "retrieve", "top_k": 3}))
        .unwrap()
        .keep(&weather, &outcome(&["weather"]))
        .unwrap();
    let err = Results::open(&path, &json!({"policy": "offered", "top_k": 3})).unwrap_err();
    insta::assert_snapshot!(
        err.to_string()
            .replace(&dir.path().display().to_string(), "DIR")
    );

    std::fs::write(&path, "{\"query\": 1}\n").unwrap();
    let err = Results::open(&path, &json!({})).unwrap_err();
    insta::assert_snapshot!(
        err.to_string()
            .replace(&dir.path().display().to_string(), "DIR")
    );
}

/// A run the endpoint cut short for a reason of its own (no answer, a server error, a
/// timeout, a rate limit) is no outcome of the agent's: `eval agent --results` does not
/// keep it, so a resumed run runs the task again. A refusal of the request is kept.
#[test]
fn only_the_endpoints_own_failures_are_runs_to_make_again() {
    let stopped = |status: Option<u16>| {
        let mut o = outcome(&[]);
        o.stop = Some(StopReason::EndpointError {
            status,
            message: "Context size has been exceeded.".to_owned(),
        });
        o
    };
    for status in [None, Some(500), Some(503), Some(408), Some(429)] {
        assert!(stopped(status).endpoint_failed(), "{status:?}");
    }
    for status in [Some(400), Some(401), Some(404)] {
        assert!(!stopped(status).endpoint_failed(), "{status:?}");
    }
    let mut answered = outcome(&["get_weather"]);
    answered.stop = Some(StopReason::Answer);
    assert!(!answered.endpoint_failed());
    assert!(!Outcome::default().endpoint_failed());
}
