//! Tests of the facade library, without the command line: the examples' code paths
//! against a scripted OpenAI-compatible endpoint on loopback.

#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../scripted/mod.rs"]
mod scripted;
#[allow(dead_code)]
#[path = "../../examples/ten_line_agent.rs"]
mod ten_line_agent;

use serde_json::json;

use scripted::{chunk, scripted, streamed_call};

/// The ten-line agent retrieves `get_weather` for the question, calls it for real, and
/// answers from its result.
#[tokio::test(flavor = "multi_thread")]
async fn the_ten_line_agent_calls_its_own_tool_and_answers() {
    let call = streamed_call("get_weather", r#"{"city": "Paris"}"#);
    let answer = format!(
        "{}data: [DONE]\n\n",
        chunk(
            json!({"role": "assistant", "content": "It is sunny in Paris."}),
            Some("stop")
        )
    );
    let (url, server) = scripted(vec![call, answer]);

    let reply = ten_line_agent::ask(&url, "none", "m", "What's the weather in Paris?")
        .await
        .unwrap();
    assert_eq!(reply, "It is sunny in Paris.");

    let requests = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"get_weather"), "{offered:?}");
    // The tool ran: its result is the last message of the second request.
    let messages = requests[1]["messages"].as_array().unwrap();
    let result = messages.last().unwrap();
    assert_eq!(result["role"], "tool");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("Sunny, 21 °C in Paris"),
        "{result}"
    );
}
