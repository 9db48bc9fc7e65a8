//! Tests of the facade library, without the command line: the examples' code paths
//! against a scripted OpenAI-compatible endpoint on loopback.

#![allow(clippy::unwrap_used, missing_docs)]

#[allow(dead_code)]
#[path = "../../examples/own_loop.rs"]
mod own_loop;
#[path = "../scripted/mod.rs"]
mod scripted;
#[allow(dead_code)]
#[path = "../../examples/ten_line_agent.rs"]
mod ten_line_agent;

use serde_json::{Value, json};
use toolscout::discover::Toolbox;
use toolscout::search::SearchQuery;

use scripted::{chunk, scripted, streamed_call};
use ten_line_agent::{BookAppointment, GetWeather, SendEmail};

/// The ten-line agent asked `question` against a scripted endpoint that calls `tool` with
/// `arguments`, then answers `answer`: the agent's reply, the tools offered in the first
/// request, and the tool result the second request carries.
async fn ask(
    question: &str,
    tool: &str,
    arguments: &str,
    answer: &str,
) -> (String, Vec<String>, Value) {
    let call = streamed_call(tool, arguments);
    let answer = format!(
        "{}data: [DONE]\n\n",
        chunk(
            json!({"role": "assistant", "content": answer}),
            Some("stop")
        )
    );
    let (url, server) = scripted(vec![call, answer]);
    let reply = ten_line_agent::ask(&url, "none", "m", question)
        .await
        .unwrap();
    let requests = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
    let offered = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    // The tool ran: its result is the last tool message of the second request, which
    // closes the run by asking for the answer in plain text, with no tools.
    let messages = requests[1]["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "system", "{last}");
    assert_eq!(
        last["content"],
        toolscout::agent::prompts::CLOSING.trim_end(),
        "{last}"
    );
    (reply, offered, result)
}

/// The ten-line agent retrieves `get_weather` for the question, calls it for real, and
/// answers from its result.
#[tokio::test(flavor = "multi_thread")]
async fn the_ten_line_agent_calls_its_own_tool_and_answers() {
    let (reply, offered, result) = ask(
        "What's the weather in Paris?",
        "get_weather",
        r#"{"city": "Paris"}"#,
        "It is sunny in Paris.",
    )
    .await;
    assert_eq!(reply, "It is sunny in Paris.");
    assert!(offered.iter().any(|t| t == "get_weather"), "{offered:?}");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("Sunny, 21 °C in Paris"),
        "{result}"
    );
}

/// A request that shares no word with its tool.
const PARAPHRASE: &str = "I feel sick, find me a doctor";

/// With the default features the toolbox ranks by meaning, so the agent is offered
/// `book_appointment` for a request in other words, and calls it; the same toolbox by
/// words alone does not find it.
#[tokio::test(flavor = "multi_thread")]
async fn the_ten_line_agent_finds_a_tool_described_in_other_words() {
    let (reply, offered, result) = ask(
        PARAPHRASE,
        "book_appointment",
        r#"{"symptoms": "I feel sick"}"#,
        "A general practitioner will see you today at 16:00.",
    )
    .await;
    assert_eq!(reply, "A general practitioner will see you today at 16:00.");
    assert!(
        offered.iter().any(|t| t == "book_appointment"),
        "{offered:?}"
    );
    assert!(
        result["content"].as_str().unwrap().contains("booked"),
        "{result}"
    );

    let words_only = Toolbox::builder()
        .native(GetWeather)
        .native(SendEmail)
        .native(BookAppointment)
        .words_only()
        .build()
        .unwrap();
    let found: Vec<String> = words_only
        .search(&SearchQuery::new(PARAPHRASE))
        .unwrap()
        .hits
        .iter()
        .map(|(tool, _)| tool.spec.name.to_string())
        .collect();
    assert!(!found.iter().any(|n| n == "book_appointment"), "{found:?}");
}

/// Discovery in a loop of the program's own (`examples/own_loop.rs`): the model searches,
/// describes `get_weather`, which joins the next request's tools, and calls it.
#[tokio::test(flavor = "multi_thread")]
async fn discovery_in_your_own_loop_finds_describes_and_calls_a_tool() {
    let steps = own_loop::run_loop().await.unwrap();
    let tools: Vec<&Vec<String>> = steps.iter().map(|(tools, _)| tools).collect();
    assert_eq!(
        tools,
        [
            &vec!["discover_tools".to_owned()],
            &vec!["discover_tools".to_owned()],
            &vec!["discover_tools".to_owned(), "get_weather".to_owned()],
        ]
    );
    let result = |step: usize| -> Value { serde_json::from_str(&steps[step].1[0]).unwrap() };
    assert_eq!(result(0)["kind"], "search", "{}", result(0));
    assert_eq!(result(0)["tools"][0]["name"], "get_weather");
    assert_eq!(result(1)["level"], 2, "{}", result(1));
    assert_eq!(
        result(2),
        json!({"ok": true, "value": "Sunny, 21 °C in Paris"})
    );
}
