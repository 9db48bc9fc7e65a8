//! The ten-line agent: a model finds and calls the program's own tools. With the default
//! features the toolbox ranks by meaning too (the built-in potion-base-8M), so "I feel
//! sick, find me a doctor" reaches `book_appointment`, which shares no word with it.
//!
//! Any OpenAI-compatible endpoint works, e.g. llama.cpp's `llama-server` with a small
//! local model:
//!
//! ```sh
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=none TOOLSCOUT_MODEL=qwen2.5-coder-1.5b \
//!     cargo run --example ten_line_agent -- "What's the weather in Paris?"
//! ```
//!
//! The tests run [`ask`] against a scripted endpoint (`tests/facade/`).

use schemars::JsonSchema;
use serde::Deserialize;
use toolscout::agent::{Agent, AgentEvent};
use toolscout::discover::Toolbox;
use toolscout::invoke::{NativeTool, ToolError};

/// Where to look the weather up.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct City {
    /// The city's name, e.g. "Paris".
    city: String,
}

/// The current weather of a city (made up here; a real tool would ask a weather API).
pub(crate) struct GetWeather;

impl NativeTool for GetWeather {
    const NAME: &'static str = "get_weather";
    const SUMMARY: &'static str = "Current weather for a city";
    type Args = City;
    type Output = String;

    async fn call(&self, args: City) -> Result<String, ToolError> {
        Ok(format!("Sunny, 21 °C in {}", args.city))
    }
}

/// An email to send.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Email {
    /// The recipient's address.
    to: String,
    /// What to say.
    body: String,
}

/// Sends an email (pretends to, here).
pub(crate) struct SendEmail;

impl NativeTool for SendEmail {
    const NAME: &'static str = "send_email";
    const SUMMARY: &'static str = "Send an email to someone";
    type Args = Email;
    type Output = String;

    async fn call(&self, args: Email) -> Result<String, ToolError> {
        Ok(format!("sent {} bytes to {}", args.body.len(), args.to))
    }
}

/// A medical appointment with a physician.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Appointment {
    /// What is wrong, in the patient's own words.
    symptoms: String,
}

/// Books an appointment (pretends to, here).
pub(crate) struct BookAppointment;

impl NativeTool for BookAppointment {
    const NAME: &'static str = "book_appointment";
    const SUMMARY: &'static str = "Book a medical appointment with a physician";
    type Args = Appointment;
    type Output = String;

    async fn call(&self, args: Appointment) -> Result<String, ToolError> {
        Ok(format!("booked: today at 16:00 ({})", args.symptoms))
    }
}

/// The agent over the three tools, asked `question` at `base_url`: its answer.
pub(crate) async fn ask(
    base_url: &str,
    api_key: &str,
    model: &str,
    question: &str,
) -> anyhow::Result<String> {
    let toolbox = Toolbox::builder()
        .native(GetWeather)
        .native(SendEmail)
        .native(BookAppointment)
        .build()?;
    let agent = Agent::builder("assistant", model)
        .endpoint(base_url, api_key)
        .toolbox(toolbox)
        .on_event(|event| {
            if let AgentEvent::ToolCallStarted {
                tool, arguments, ..
            } = event
            {
                eprintln!("→ {tool}({arguments})");
            }
        })
        .build()?;
    Ok(agent.ask(question).await?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let Ok(base_url) = std::env::var("OPENAI_BASE_URL") else {
        eprintln!("Set OPENAI_BASE_URL (and OPENAI_API_KEY, TOOLSCOUT_MODEL) to run this example.");
        return Ok(());
    };
    let api_key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "none".to_owned());
    let model = std::env::var("TOOLSCOUT_MODEL").unwrap_or_else(|_| "qwen2.5".to_owned());
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What's the weather in Paris?".to_owned());
    println!("{}", ask(&base_url, &api_key, &model, &question).await?);
    Ok(())
}
