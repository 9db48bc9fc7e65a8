//! Invoke a typed native tool and an HTTP tool against a local server.
//!
//! Run with `cargo run --example native_and_http_tools`.

use std::net::SocketAddr;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolscout::invoke::{
    AllowedHosts, HttpConfig, InvokableTool, Invoker, NativeTool, SecretStore, ToolError,
};
use toolscout::spec::ToolSpec;
use toolscout::spec::adapters::tool_file::ToolType;

/// Counts the words of a text.
#[derive(Deserialize, JsonSchema)]
struct WordCountArgs {
    /// The text.
    text: String,
}

struct WordCount;

impl NativeTool for WordCount {
    const NAME: &'static str = "word_count";
    const SUMMARY: &'static str = "Count the words of a text";
    type Args = WordCountArgs;
    type Output = usize;

    async fn call(&self, args: WordCountArgs) -> Result<usize, ToolError> {
        Ok(args.text.split_whitespace().count())
    }
}

/// A tiny HTTP server on 127.0.0.1 that answers every request with weather JSON.
async fn weather_server() -> anyhow::Result<SocketAddr> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let body = r#"{"current":{"temp_c":21.5,"condition":{"text":"Sunny"}}}"#;
            let resp = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(resp.as_bytes()).await;
        }
    });
    Ok(addr)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = weather_server().await?;

    let mut secrets = SecretStore::default();
    secrets.insert("WEATHER_API_KEY", "demo-key");
    let mut invoker = Invoker::default()
        .with_secrets(secrets)
        // Loopback needs an explicit allow: real deployments list public API hosts only.
        .with_http_config(HttpConfig::with_allowed_hosts(
            AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
        ));
    invoker.register(WordCount)?;

    let counted = invoker
        .invoke_native("word_count", json!({"text": "the quick brown fox"}))
        .await;
    println!("word_count → {}", counted.to_json());

    let invalid = invoker.invoke_native("word_count", json!({"txt": 1})).await;
    println!(
        "word_count (bad args) → {}",
        serde_json::to_string_pretty(&invalid)?
    );

    let spec = ToolSpec::builder("weather", "Current weather for a city")
        .parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"]
        }))
        .build()?;
    let weather = InvokableTool::from_parts(
        spec,
        ToolType::Http,
        &json!({
            "method": "GET",
            "urlTemplate": format!("http://{addr}/v1/current.json?q=${{city}}&key=${{WEATHER_API_KEY}}"),
            "timeoutMs": 2000,
            "extractExpr": "$.current.condition.text"
        }),
    )?;
    let sunny = invoker.invoke(&weather, json!({"city": "São Paulo"})).await;
    println!("weather → {}", sunny.to_json());
    Ok(())
}
