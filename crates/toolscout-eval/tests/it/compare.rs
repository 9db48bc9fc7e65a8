//! `eval compare`: runs read back from their results files and judged on the tasks they
//! all finished; a file that mixes runs refused by line.

use std::io::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use toolscout_agent::{StopReason, TokenUsage};
use toolscout_eval::agent::Outcome;
use toolscout_eval::compare::compare;
use toolscout_eval::read::Task;
use toolscout_eval::results::{Results, read};

/// An outcome that called `called` (successfully), in `steps` requests of 1,000 prompt
/// tokens each, with `unasked` of them outside the task's expected tools.
fn outcome(called: &[&str], unasked: &[&str], steps: u32) -> Outcome {
    let mut o = Outcome::default();
    o.called_ok = called.iter().map(|t| (*t).to_owned()).collect();
    o.calls = called.iter().map(|t| (*t).to_owned()).collect();
    o.catalog_called = !called.is_empty();
    o.catalog_ran = !called.is_empty();
    o.unasked = unasked.iter().map(|t| (*t).to_owned()).collect();
    o.ever_offered = called.iter().map(|t| (*t).to_owned()).collect();
    o.steps = steps;
    o.usage = TokenUsage {
        prompt_tokens: 1_000 * u64::from(steps),
        completion_tokens: 10,
        estimated: false,
    };
    o.stop = Some(StopReason::Answer);
    o
}

fn with_hit(mut o: Outcome, task: &Task) -> Outcome {
    o.expected_called = task.expected.iter().any(|t| o.called_ok.contains(t));
    o
}

fn keep(path: &Path, settings: &Value, runs: &[(&Task, Outcome)]) {
    let mut results = Results::open(path, settings).unwrap();
    for (task, outcome) in runs {
        results
            .keep(task, &with_hit(outcome.clone(), task))
            .unwrap();
    }
}

#[test]
fn runs_are_judged_on_the_tasks_they_all_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (oracle, default) = (
        dir.path().join("oracle.jsonl"),
        dir.path().join("default.jsonl"),
    );
    let weather = Task::new("Weather in Paris", &["get_weather"]);
    let deck = Task::new("Put the summary in a deck", &["create_deck", "save_deck"]);
    let joke = Task::new("Tell me a joke", &[]);
    let only_oracle = Task::new("Convert 3 miles", &["convert_length"]);
    let only_default = Task::new("Mail bob", &["send_email"]);
    let cut = Task::new("Route between two parks", &["maps_directions"]);
    let mut cut_short = outcome(&[], &[], 1);
    cut_short.stop = Some(StopReason::EndpointError {
        status: Some(500),
        message: "Context size has been exceeded.".to_owned(),
    });
    keep(
        &oracle,
        &json!({"policy": "offered"}),
        &[
            (&weather, outcome(&["get_weather"], &[], 2)),
            (&deck, outcome(&["create_deck", "save_deck"], &[], 3)),
            (&joke, outcome(&[], &[], 1)),
            (&only_oracle, outcome(&["convert_length"], &[], 2)),
            (&cut, outcome(&["maps_directions"], &[], 2)),
        ],
    );
    keep(
        &default,
        &json!({"policy": "retrieve"}),
        &[
            (&only_default, outcome(&["send_email"], &[], 2)),
            (&deck, outcome(&["create_deck", "think"], &["think"], 5)),
            (&weather, outcome(&["get_weather"], &[], 4)),
            (&joke, outcome(&["get_weather"], &["get_weather"], 2)),
            (&cut, cut_short),
        ],
    );
    let runs = [
        ("oracle".to_owned(), read(&oracle).unwrap()),
        ("default".to_owned(), read(&default).unwrap()),
    ];
    let compared = compare(&runs);
    // Weather, deck and joke: the route was cut short by the endpoint in one run.
    assert_eq!(compared.paired, 3);
    let [o, d] = &compared.runs[..] else {
        panic!("two runs: {compared:?}")
    };
    assert_eq!((o.left_out, d.left_out), (2, 2));
    assert_eq!(o.settings["policy"], "offered");

    let (or, dr) = (o.relevant.as_ref().unwrap(), d.relevant.as_ref().unwrap());
    assert_eq!((or.tasks, dr.tasks), (2, 2));
    assert_eq!((or.success_rate, dr.success_rate), (1.0, 1.0));
    // The default called one of the deck's two tools, and `think` that nobody asked for.
    assert_eq!(
        (or.complete_success_rate, dr.complete_success_rate),
        (1.0, 0.5)
    );
    assert_eq!(
        (or.unasked_calls_per_task, dr.unasked_calls_per_task),
        (0.0, 0.5)
    );
    assert_eq!(
        (or.mean_prompt_tokens, dr.mean_prompt_tokens),
        (2_500.0, 4_500.0)
    );
    // Only a run that retrieved has the retrieval's figures.
    assert!(or.retrieval.is_none());
    let activated = dr.retrieval.as_ref().unwrap().end_activation_recall;
    assert!((activated - 0.75).abs() < 1e-9, "{activated}");

    let (oi, di) = (
        o.irrelevance.as_ref().unwrap(),
        d.irrelevance.as_ref().unwrap(),
    );
    assert_eq!((oi.tasks, di.tasks), (1, 1));
    let abstained =
        |f: &toolscout_eval::agent::Figures| f.abstention.as_ref().unwrap().abstention_rate;
    assert_eq!((abstained(oi), abstained(di)), (1.0, 0.0));

    // The first run's order; a run that finished nothing pairs nothing.
    let none = compare(&[runs[0].clone(), ("empty".to_owned(), Vec::new())]);
    assert_eq!(none.paired, 0);
    assert!(none.runs[0].relevant.is_none());
    assert_eq!(none.runs[1].settings, Value::Null);
}

#[test]
fn a_results_file_is_read_as_one_run_in_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.jsonl");
    let settings = json!({"policy": "retrieve", "top_k": 3});
    let weather = Task::new("Weather in Paris", &["get_weather"]);
    let mail = Task::new("Mail bob", &["send_email"]);
    keep(
        &path,
        &settings,
        &[
            (&weather, outcome(&[], &[], 1)),
            (&mail, outcome(&["send_email"], &[], 2)),
            // Kept again (an older run kept a task twice): the last line counts.
            (&weather, outcome(&["get_weather"], &[], 3)),
        ],
    );
    // The process stopped in the middle of a line.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"query":"Book a table","expected":["bo"#)
        .unwrap();
    let records = read(&path).unwrap();
    let queries: Vec<&str> = records.iter().map(|r| r.query.as_str()).collect();
    assert_eq!(queries, ["Weather in Paris", "Mail bob"]);
    assert_eq!(records[0].outcome.steps, 3);
    // Reading changes nothing on disk.
    assert!(std::fs::read_to_string(&path).unwrap().ends_with(r#"["bo"#));

    // Two runs' outcomes in one file are never figures of one run.
    let mixed = dir.path().join("mixed.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.truncate(text.rfind('\n').unwrap() + 1);
    let other = text
        .lines()
        .next()
        .unwrap()
        .replace(r#""top_k":3"#, r#""top_k":5"#);
    std::fs::write(&mixed, format!("{text}{other}\n")).unwrap();
    let err = read(&mixed).unwrap_err();
    insta::assert_snapshot!(
        err.to_string()
            .replace(&dir.path().display().to_string(), "DIR")
    );
    let err = read(&dir.path().join("missing.jsonl")).unwrap_err();
    assert!(err.to_string().contains("missing.jsonl"), "{err}");
}
