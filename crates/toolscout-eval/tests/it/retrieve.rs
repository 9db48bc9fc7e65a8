//! The retrieval evaluation on a tiny catalog, without a sentence encoder.

use serde_json::json;
use toolscout_eval::Error;
use toolscout_eval::read::{Task, tool_lines_of};
use toolscout_eval::retrieve::RetrieveEval;

fn tools() -> toolscout_eval::read::ToolLines {
    let text: String = [
        json!({"name": "get_weather", "description": "Get the current weather in a city."}),
        json!({"name": "send_email", "description": "Send an email to a recipient."}),
        json!({"name": "convert_currency", "description": "Convert an amount of money from one currency to another."}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect();
    tool_lines_of(&text)
}

#[test]
fn retrieval_hits_per_setting_and_the_agent_s_first_turn() {
    let tasks = [
        Task::new("What is the weather in Paris?", &["get_weather"]),
        Task::new(
            "Convert 20 euros to dollars, a currency conversion",
            &["convert_currency"],
        ),
        // The wrong tool on purpose.
        Task::new("Email my boss", &["get_weather"]),
        Task::new("Tell me a joke about cats.", &[]),
    ];
    let report = RetrieveEval::default()
        .with_top_k(3)
        .with_twins(&[0.9])
        .with_margins(&[0.1, 1.0])
        .with_each(true)
        .run(&tools(), &tasks)
        .unwrap();
    assert_eq!(
        (report.tasks, report.no_tool_tasks, report.tools),
        (4, 1, 3)
    );
    // Kept, 0.9, the agent's 0.8, and its margin of 0.1 (a margin of 1 is none).
    let settings: Vec<(Option<f32>, Option<f32>)> = report
        .settings
        .iter()
        .map(|s| (s.twin_similarity, s.margin))
        .collect();
    assert_eq!(
        settings,
        [
            (None, None),
            (Some(0.9), None),
            (Some(0.8), None),
            (Some(0.8), Some(0.1))
        ]
    );
    for s in &report.settings {
        assert_eq!(s.tool_tasks, 3);
        assert!((s.hit_rate() - 2.0 / 3.0).abs() < 1e-12, "{s:?}");
    }
    // Without an encoder there is no confidence: every floor requires a call where
    // something was found, and the joke found nothing.
    assert_eq!(report.confidence.with_tool, [0.0; 5]);
    for floor in &report.floors {
        assert_eq!(floor.tool_tasks_required, 1.0);
        assert_eq!(floor.no_tool_tasks_free, 1.0);
    }
    assert_eq!(report.activation.needs_split.tasks, 3);
    assert!(report.activation.whole_message.mean_recall() >= 2.0 / 3.0 - 1e-12);
    assert_eq!(report.each.len(), 4);
    assert_eq!(report.each[0].tools[0], "get_weather");
}

#[test]
fn a_top_k_of_zero_is_refused() {
    let err = RetrieveEval::default()
        .with_top_k(0)
        .run(&tools(), &[])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Setting {
                setting: "top_k",
                ..
            }
        ),
        "{err:?}"
    );
}
