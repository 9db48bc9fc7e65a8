//! Property tests of redaction (issue 61): whatever an HTTP tool's `extractExpr` selects
//! from a response that echoes a secret — a JSONPath, a regular expression's group at
//! any place, a piece of the secret named literally — and whatever the error quotes of
//! it, no run of 4 characters or more of the secret leaves the call, raw,
//! percent-encoded or inside base64.
//! `cargo test -p toolscout-invoke --test it -- --ignored redaction` runs 10⁵ cases.

use std::sync::LazyLock;

use base64::Engine as _;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use toolscout_invoke::{AllowedHosts, HttpConfig, InvokableTool, Invoker, REDACTED, SecretStore};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::ToolType;

struct Setup {
    runtime: tokio::runtime::Runtime,
    base: String,
    port: u16,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(crate::server::start());
    Setup {
        runtime,
        base: server.base,
        port: server.port,
    }
});

/// Where the secret goes in the request, which the test server echoes back.
#[derive(Debug, Clone, Copy)]
enum Carrier {
    Bearer,
    Header,
    Query,
    Basic,
    Body,
    /// In a body the server answers with a 500: the error quotes 500 characters of it.
    ErrorBody,
}

fn block(carrier: Carrier, pad: usize, extract: Option<&str>, text: bool) -> Value {
    let s = &*SETUP;
    let mut block = match carrier {
        Carrier::Bearer => json!({
            "urlTemplate": format!("{}/echo", s.base),
            "headers": {"Authorization": "Bearer ${K}"},
        }),
        Carrier::Header => json!({
            "urlTemplate": format!("{}/echo", s.base),
            "headers": {"X-Api-Key": "${K}"},
        }),
        Carrier::Query => json!({"urlTemplate": format!("{}/echo?key=${{K}}&x=1", s.base)}),
        Carrier::Basic => {
            json!({"urlTemplate": format!("http://user:${{K}}@127.0.0.1:{}/echo", s.port)})
        }
        Carrier::Body => json!({
            "method": "POST",
            "urlTemplate": format!("{}/echo", s.base),
            "bodyTemplate": format!("{{\"pad\": \"{}\", \"k\": \"${{K}}\"}}", "x".repeat(pad)),
        }),
        Carrier::ErrorBody => json!({
            "method": "POST",
            "urlTemplate": format!("{}/mirror/500", s.base),
            "bodyTemplate": format!("{{\"pad\": \"{}\", \"k\": \"${{K}}\"}}", "x".repeat(pad)),
        }),
    };
    if let Some(e) = extract {
        block["extractExpr"] = json!(e);
    }
    if text {
        block["responseEncoding"] = json!("text");
    }
    block
}

/// The runs of 4 characters of `secret`.
fn pieces(secret: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    chars.windows(4).map(|w| w.iter().collect()).collect()
}

/// Every text the outcome shows: strings, keys and numbers, each cut at the
/// `[REDACTED]` marks (what stands between two marks is what was shown of the text).
fn shown(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.extend(s.split(REDACTED).map(str::to_owned)),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| shown(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.extend(k.split(REDACTED).map(str::to_owned));
                shown(v, out);
            }
        }
        _ => {}
    }
}

/// `text` read as base64 from each of its first four characters, in both alphabets.
fn base64_readings(text: &str) -> Vec<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut out = Vec::new();
    for run in text.split(|c: char| !(c.is_ascii_alphanumeric() || "+/-_".contains(c))) {
        for start in 0..4.min(run.len()) {
            let mut piece = &run[start..];
            piece = &piece[..piece.len() - piece.len() % 4];
            for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                if let Ok(bytes) = engine.decode(piece) {
                    out.push(bytes);
                }
            }
        }
    }
    out
}

/// No run of 4 characters of `secret` in what the outcome shows: as it is written, once
/// percent-decoded, or inside base64.
fn check_no_piece(secret: &str, outcome: &Value) -> Result<(), TestCaseError> {
    let mut texts = Vec::new();
    shown(outcome, &mut texts);
    let pieces = pieces(secret);
    for text in &texts {
        let decoded = percent_encoding::percent_decode_str(text)
            .decode_utf8_lossy()
            .into_owned();
        for p in &pieces {
            prop_assert!(!text.contains(p.as_str()), "{p:?} in {text:?}: {outcome}");
            prop_assert!(
                !decoded.contains(p.as_str()),
                "{p:?} in {decoded:?}: {outcome}"
            );
            for bytes in base64_readings(text) {
                let found = bytes.windows(p.len()).any(|w| w == p.as_bytes());
                prop_assert!(!found, "{p:?} inside base64 in {text:?}: {outcome}");
            }
        }
    }
    Ok(())
}

/// Secrets as keys are written: letters, digits and what base64 and tokens use, and now
/// and then letters of other scripts.
fn secret() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z0-9+/=_.:~-]{6,32}",
        1 => "[a-zA-Zéß€0-9]{6,16}",
    ]
}

/// An `extractExpr` over the echoed request: a JSONPath, a regular expression's group
/// at any place of the text, or one that names a piece of the secret itself.
fn extraction(secret: String) -> impl Strategy<Value = (Option<String>, bool)> {
    let n = secret.chars().count();
    let literal = (0..n.saturating_sub(3), 4usize..9).prop_map(move |(at, len)| {
        let piece: String = secret.chars().skip(at).take(len).collect();
        Some(format!("regex:({})", regex::escape(&piece)))
    });
    let expr = prop_oneof![
        Just(None),
        prop_oneof![
            Just("$"),
            Just("$.headers.authorization"),
            Just("$.headers.x-api-key"),
            Just("$.query"),
            Just("$.body"),
            Just("$..*"),
        ]
        .prop_map(|p| Some(p.to_owned())),
        (0usize..600, 1usize..12)
            .prop_map(|(at, len)| Some(format!("regex:(?s)^.{{{at}}}(.{{1,{len}}})"))),
        prop_oneof![
            Just("regex:Bearer (.{1,8})"),
            Just("regex:Basic ([A-Za-z0-9+/]{1,8})"),
            Just("regex:Basic .{4}([A-Za-z0-9+/]{1,8})"),
            Just("regex:key=([^&\"]{1,8})"),
            Just("regex:\"k\\\\?\": ?\\\\?\"(.{1,8})"),
        ]
        .prop_map(|p| Some(p.to_owned())),
        literal,
    ];
    (expr, any::<bool>())
}

fn carrier() -> impl Strategy<Value = Carrier> {
    prop_oneof![
        Just(Carrier::Bearer),
        Just(Carrier::Header),
        Just(Carrier::Query),
        Just(Carrier::Basic),
        Just(Carrier::Body),
        Just(Carrier::ErrorBody),
    ]
}

fn case() -> impl Strategy<Value = (String, Carrier, usize, Option<String>, bool)> {
    secret().prop_flat_map(|secret| {
        (
            Just(secret.clone()),
            carrier(),
            440usize..500,
            extraction(secret),
        )
            .prop_map(|(s, c, pad, (e, text))| (s, c, pad, e, text))
    })
}

fn run(
    secret: &str,
    carrier: Carrier,
    pad: usize,
    extract: Option<&str>,
    text: bool,
) -> Result<(), TestCaseError> {
    let s = &*SETUP;
    let spec = ToolSpec::builder("echo_key", "Echoes its request")
        .parameters(json!({"type": "object"}))
        .build()
        .unwrap();
    let Ok(tool) =
        InvokableTool::from_parts(spec, ToolType::Http, &block(carrier, pad, extract, text))
    else {
        // An expression the tool's check refuses never runs.
        return Ok(());
    };
    let mut secrets = SecretStore::default();
    secrets.insert("K", secret);
    let invoker = Invoker::default()
        .with_http_config(HttpConfig::with_allowed_hosts(
            AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
        ))
        .with_secrets(secrets);
    let outcome = s.runtime.block_on(invoker.invoke(&tool, json!({})));
    // The value, or the error's message and details: the outcome's own keys and the
    // error's kind are the protocol's words, not the response's.
    let shown = match outcome.into_result() {
        Ok(value) => value,
        Err(e) => json!([e.message, e.details]),
    };
    check_no_piece(secret, &shown)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn redaction_no_piece_of_a_secret_leaves_through_extraction(
        (secret, carrier, pad, extract, text) in case()
    ) {
        run(&secret, carrier, pad, extract.as_deref(), text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100_000))]
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn redaction_long_no_piece_of_a_secret_leaves_through_extraction(
        (secret, carrier, pad, extract, text) in case()
    ) {
        run(&secret, carrier, pad, extract.as_deref(), text)?;
    }
}

/// The attack of the issue, step by step: a regular expression's group of at most 8
/// characters returned the key a piece at a time from an echoed `Authorization` header.
#[test]
fn redaction_a_key_is_not_returned_eight_characters_at_a_time() {
    let key = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e";
    for at in (0..key.len()).step_by(8) {
        let expr = format!("regex:Bearer .{{{at}}}(.{{1,8}})");
        run(key, Carrier::Bearer, 0, Some(&expr), false).unwrap();
    }
}
