//! HTTP tools against the local server: templating, secrets, allowed hosts, redirects,
//! retries, timeouts, extraction, size limits, auth.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use toolscout_invoke::{
    AllowedHosts, ErrorKind, HttpConfig, InvokableTool, Invoker, Outcome, REDACTED, RetryPolicy,
    SecretStore,
};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::ToolType;

use crate::server::{self, SIGNING_KEY};
use crate::show;

const API_KEY: &str = "sk-test-9f8e7d6c";

fn config() -> HttpConfig {
    HttpConfig {
        allowed_hosts: AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
        max_response_bytes: 4096,
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
        },
        default_timeout: Duration::from_secs(2),
        ..HttpConfig::default()
    }
}

fn invoker() -> Invoker {
    let mut secrets = SecretStore::default();
    secrets.insert("API_KEY", API_KEY);
    secrets.insert("SIGNING_KEY", SIGNING_KEY);
    secrets.insert("CLIENT_ID", "cid-Q7v3Xk2w");
    secrets.insert("CLIENT_SECRET", "cs-9Lp4Zt8Rb6");
    Invoker::default()
        .with_http_config(config())
        .with_secrets(secrets)
}

fn tool(params: Value, block: Value) -> InvokableTool {
    let spec = ToolSpec::builder("test_http", "An HTTP tool under test")
        .parameters(params)
        .build()
        .unwrap();
    InvokableTool::from_parts(spec, ToolType::Http, &block).unwrap()
}

fn city_params() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

fn value(outcome: &Outcome) -> &Value {
    outcome
        .value()
        .unwrap_or_else(|| panic!("expected ok, got {}", show(outcome)))
}

fn kind(outcome: &Outcome) -> ErrorKind {
    outcome
        .error()
        .unwrap_or_else(|| panic!("expected an error, got {}", show(outcome)))
        .kind
}

#[tokio::test]
async fn templates_encode_for_url_headers_and_json_bodies() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}),
        json!({
            "method": "POST",
            "urlTemplate": format!("{}/echo?q=${{q}}&key=${{API_KEY}}", s.base),
            "headers": {"User-Agent": "MyApp/${n}", "X-Key": "${API_KEY}"},
            "bodyTemplate": "{\"q\": \"${q}\", \"n\": ${n}}"
        }),
    );
    let out = invoker()
        .invoke(&t, json!({"q": "São Paulo & \"co\"/x", "n": 3}))
        .await;
    let v = value(&out);
    assert_eq!(v["method"], "POST");
    // The echo carries the key back; the result the model sees does not.
    assert_eq!(
        v["query"],
        format!("q=S%C3%A3o%20Paulo%20%26%20%22co%22%2Fx&key={REDACTED}")
    );
    assert_eq!(v["headers"]["user-agent"], "MyApp/3");
    assert_eq!(v["headers"]["x-key"], REDACTED, "{v}");
    assert_eq!(v["headers"]["content-type"], "application/json");
    let body: Value = serde_json::from_str(v["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"q": "São Paulo & \"co\"/x", "n": 3}));
}

#[tokio::test]
async fn jsonpath_extraction() {
    let s = server::start().await;
    let t = tool(
        city_params(),
        json!({
            "urlTemplate": format!("{}/weather?q=${{city}}", s.base),
            "extractExpr": "$.current.condition.text"
        }),
    );
    let out = invoker().invoke(&t, json!({"city": "Paris"})).await;
    assert_eq!(
        out.to_json(),
        json!({"ok": true, "value": "Sunny in Paris"})
    );
}

#[tokio::test]
async fn regex_extraction_over_text() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({
            "urlTemplate": format!("{}/text", s.base),
            "responseEncoding": "text",
            "extractExpr": r"temp=(\d+)C"
        }),
    );
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(value(&out), &json!("21"));
}

#[tokio::test]
async fn extraction_that_finds_nothing() {
    let s = server::start().await;
    let block = json!({
        "urlTemplate": format!("{}/weather?q=${{city}}", s.base),
        "extractExpr": "$.forecast[0].text"
    });
    let out = invoker()
        .invoke(&tool(city_params(), block.clone()), json!({"city": "Oslo"}))
        .await;
    insta::assert_snapshot!(show(&out));
    let mut empty = block;
    empty["errorMode"] = json!("empty");
    let out = invoker()
        .invoke(&tool(city_params(), empty), json!({"city": "Oslo"}))
        .await;
    assert_eq!(out.to_json(), json!({"ok": true, "value": null}));
}

#[tokio::test]
async fn secrets_never_appear_in_errors() {
    let s = server::start().await;
    // The server answers 500 and echoes the query, key included.
    let t = tool(
        city_params(),
        json!({"urlTemplate": format!("{}/status/500?city=${{city}}&key=${{API_KEY}}", s.base)}),
    );
    let out = invoker().invoke(&t, json!({"city": "Rome"})).await;
    let text = show(&out);
    assert!(!text.contains(API_KEY), "{text}");
    assert!(text.contains(REDACTED), "{text}");
    insta::assert_snapshot!(text);
    assert!(!format!("{:?}", invoker()).contains(API_KEY));
}

#[tokio::test]
async fn allowed_hosts_are_checked_after_expansion() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {"host": {"type": "string"}}}),
        json!({"urlTemplate": format!("http://${{host}}:{}/echo", s.port)}),
    );
    let out = invoker().invoke(&t, json!({"host": "localhost"})).await;
    assert_eq!(kind(&out), ErrorKind::HostNotAllowed);
    insta::assert_snapshot!(show(&out));
    let ok = invoker().invoke(&t, json!({"host": "127.0.0.1"})).await;
    assert!(ok.is_ok(), "{}", show(&ok));
}

#[tokio::test]
async fn loopback_is_refused_unless_explicitly_allowed() {
    let s = server::start().await;
    let strict = Invoker::default().with_http_config(HttpConfig {
        allowed_hosts: AllowedHosts::new(["localhost:*", "127.0.0.1:*"]),
        ..config()
    });
    for host in ["localhost", "127.0.0.1"] {
        let t = tool(
            json!({"type": "object"}),
            json!({"urlTemplate": format!("http://{host}:{}/echo", s.port)}),
        );
        let out = strict.invoke(&t, json!({})).await;
        assert_eq!(kind(&out), ErrorKind::HostNotAllowed, "{host}");
        assert!(
            out.error().unwrap().message.contains("non-public address"),
            "{}",
            show(&out)
        );
    }
}

#[tokio::test]
async fn redirect_to_a_disallowed_host_is_refused() {
    let s = server::start().await;
    let to = format!("http://localhost:{}/echo", s.port);
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/redirect?to={}", s.base, to)}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(kind(&out), ErrorKind::HostNotAllowed);
    insta::assert_snapshot!(show(&out));
}

#[tokio::test]
async fn redirect_to_an_allowed_host_is_followed() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/redirect?to=/echo", s.base)}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(value(&out)["path"], "/echo");
}

#[tokio::test]
async fn idempotent_tools_retry_transient_failures() {
    let s = server::start().await;
    let block = json!({"urlTemplate": format!("{}/flaky", s.base)});
    let mut t = tool(json!({"type": "object"}), block);
    t.spec.metadata.idempotent = true;
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(value(&out), &json!({"attempt": 3}));
    assert_eq!(s.counters.flaky.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn other_tools_do_not_retry() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({"method": "POST", "urlTemplate": format!("{}/flaky", s.base)}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(kind(&out), ErrorKind::HttpStatus);
    assert_eq!(s.counters.flaky.load(Ordering::SeqCst), 1);
    insta::assert_snapshot!(show(&out));
}

#[tokio::test]
async fn retries_are_limited() {
    let s = server::start().await;
    let mut t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/status/503", s.base)}),
    );
    t.spec.metadata.idempotent = true;
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(kind(&out), ErrorKind::HttpStatus);
    assert_eq!(out.error().unwrap().details["status"], 503);
}

#[tokio::test]
async fn timeouts() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/slow", s.base), "timeoutMs": 150}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    // The server answers `/slow` after 3 s, with a 200: only the 150 ms timeout can make
    // the call a `timeout` (no wall-clock bound, which a loaded machine could miss).
    assert_eq!(kind(&out), ErrorKind::Timeout);
    insta::assert_snapshot!(show(&out));
}

#[tokio::test]
async fn response_size_limit() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/big", s.base), "responseEncoding": "text"}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(kind(&out), ErrorKind::TooLarge);
    insta::assert_snapshot!(show(&out));
}

#[tokio::test]
async fn request_size_limit() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        json!({"method": "POST", "urlTemplate": format!("{}/echo", s.base), "bodyTemplate": "${text}"}),
    );
    let small = Invoker::default().with_http_config(HttpConfig {
        max_request_bytes: 1000,
        ..config()
    });
    let out = small.invoke(&t, json!({"text": "y".repeat(2000)})).await;
    assert_eq!(kind(&out), ErrorKind::TooLarge);
}

#[tokio::test]
async fn hmac_signed_requests_verify() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        json!({
            "method": "POST",
            "urlTemplate": format!("{}/signed?x=${{x}}", s.base),
            "bodyTemplate": "{\"x\": \"${x}\"}",
            "auth": {"type": "hmac", "secret": "SIGNING_KEY"}
        }),
    );
    let out = invoker().invoke(&t, json!({"x": "a b"})).await;
    assert_eq!(value(&out), &json!({"valid": true}));
}

#[tokio::test]
async fn oauth2_tokens_are_cached_and_refreshed() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({
            "urlTemplate": format!("{}/protected", s.base),
            "auth": {
                "type": "oauth2",
                "tokenUrl": format!("{}/token", s.base),
                "clientId": "${CLIENT_ID}",
                "clientSecret": "${CLIENT_SECRET}"
            }
        }),
    );
    let inv = invoker();
    // The service echoes the token: it is redacted like a secret.
    let bearer = format!("Bearer {REDACTED}");
    assert_eq!(value(&inv.invoke(&t, json!({})).await)["auth"], bearer);
    assert_eq!(value(&inv.invoke(&t, json!({})).await)["auth"], bearer);
    assert_eq!(s.counters.tokens.load(Ordering::SeqCst), 1);
    // The token lives 2 s and is refreshed halfway.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(value(&inv.invoke(&t, json!({})).await)["auth"], bearer);
    assert_eq!(s.counters.tokens.load(Ordering::SeqCst), 2);
}

/// Finding 3 of the second security pass: the client secret of an OAuth2 tool went to
/// its `tokenUrl`'s host although it was granted only to the host of the tool's request.
#[tokio::test]
async fn oauth2_credentials_go_only_where_they_are_granted() {
    let s = server::start().await;
    let allowed = HttpConfig {
        allowed_hosts: AllowedHosts::new(["127.0.0.1:*", "localhost:*"]).allow_private(true),
        ..config()
    };
    let granted_to = |grant: &dyn Fn(&mut SecretStore)| {
        let mut secrets = SecretStore::default();
        secrets.insert("CLIENT_ID", "cid-Q7v3Xk2w");
        secrets.insert("CLIENT_SECRET", "cs-9Lp4Zt8Rb6");
        grant(&mut secrets);
        Invoker::default()
            .with_http_config(allowed.clone())
            .with_secrets(secrets)
    };
    // The request goes to 127.0.0.1, the token endpoint is "localhost".
    let t = tool(
        json!({"type": "object"}),
        json!({
            "urlTemplate": format!("{}/protected", s.base),
            "auth": {
                "type": "oauth2",
                "tokenUrl": format!("http://localhost:{}/token", s.port),
                "clientId": "${CLIENT_ID}",
                "clientSecret": "${CLIENT_SECRET}"
            }
        }),
    );
    let host_only = granted_to(&|secrets| {
        secrets.grant_host("CLIENT_SECRET", &format!("127.0.0.1:{}", s.port));
    });
    let out = host_only.invoke(&t, json!({})).await;
    assert_eq!(kind(&out), ErrorKind::Misconfigured, "{}", show(&out));
    insta::assert_snapshot!(out.error().unwrap().message, @r#"the template auth.clientSecret needs the secret 'CLIENT_SECRET', which is not granted to this tool or to the host it calls; the operator grants secrets to tools and hosts"#);
    assert_eq!(
        s.counters.tokens.load(Ordering::SeqCst),
        0,
        "the token endpoint was asked"
    );
    // Granted to the token endpoint's host, or to the tool, it is sent there.
    let to_host = |secrets: &mut SecretStore| secrets.grant_host("CLIENT_SECRET", "localhost:*");
    let to_tool = |secrets: &mut SecretStore| secrets.grant_tool("CLIENT_SECRET", "test_http");
    for inv in [granted_to(&to_host), granted_to(&to_tool)] {
        let out = inv.invoke(&t, json!({})).await;
        assert_eq!(value(&out)["auth"], format!("Bearer {REDACTED}"));
    }
}

/// Finding 4: the token cache was keyed by (tokenUrl, clientId), so a second tool with
/// the same pair and any other secret got the first tool's token sent to its own host.
#[tokio::test]
async fn oauth2_tokens_are_never_shared_between_tools() {
    let s = server::start().await;
    let mut secrets = SecretStore::default();
    secrets.insert("CLIENT_ID", "cid-Q7v3Xk2w");
    secrets.insert("CLIENT_SECRET", "cs-9Lp4Zt8Rb6");
    secrets.insert("GUESS", "not-the-secret");
    let inv = Invoker::default()
        .with_http_config(config())
        .with_secrets(secrets);
    let oauth = |secret: &str| {
        json!({
            "type": "oauth2",
            "tokenUrl": format!("{}/token", s.base),
            "clientId": "${CLIENT_ID}",
            "clientSecret": secret
        })
    };
    let first = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/protected", s.base), "auth": oauth("${CLIENT_SECRET}")}),
    );
    assert_eq!(s.counters.tokens.load(Ordering::SeqCst), 0);
    value(&inv.invoke(&first, json!({})).await);
    // Same endpoint and client id, a wrong secret, and its own URL: it must get no token.
    let spec = ToolSpec::builder("other_tool", "Another tool of the same client id")
        .parameters(json!({"type": "object"}))
        .build()
        .unwrap();
    let other = InvokableTool::from_parts(
        spec,
        ToolType::Http,
        &json!({"urlTemplate": format!("{}/echo", s.base), "auth": oauth("${GUESS}")}),
    )
    .unwrap();
    let out = inv.invoke(&other, json!({})).await;
    assert_eq!(kind(&out), ErrorKind::Transport, "{}", show(&out));
    assert!(
        show(&out).contains("the token endpoint answered 401"),
        "{}",
        show(&out)
    );
    // Even with the right secret, another tool fetches its own token.
    let spec = ToolSpec::builder("third_tool", "A third tool with the right secret")
        .parameters(json!({"type": "object"}))
        .build()
        .unwrap();
    let third = InvokableTool::from_parts(
        spec,
        ToolType::Http,
        &json!({"urlTemplate": format!("{}/protected", s.base), "auth": oauth("${CLIENT_SECRET}")}),
    )
    .unwrap();
    let fetched = s.counters.tokens.load(Ordering::SeqCst);
    value(&inv.invoke(&third, json!({})).await);
    assert_eq!(s.counters.tokens.load(Ordering::SeqCst), fetched + 1);
}

/// Finding 5: secrets were redacted from strings only; a number that echoed one, or the
/// base64 of `user:secret` in an echoed Authorization header, reached the model.
#[tokio::test]
async fn secrets_are_redacted_from_numbers_and_base64() {
    let s = server::start().await;
    let mut secrets = SecretStore::default();
    secrets.insert("PIN", "73950154");
    secrets.insert("API_KEY", API_KEY);
    let inv = Invoker::default()
        .with_http_config(config())
        .with_secrets(secrets);
    // The service answers with the account number as a JSON number.
    let number = tool(
        json!({"type": "object"}),
        json!({
            "method": "POST",
            "urlTemplate": format!("{}/mirror/200", s.base),
            "headers": {"Content-Type": "text/plain"},
            "bodyTemplate": "{\"account\": ${PIN}, \"balance\": 12.5, \"ids\": [1, 739501549]}"
        }),
    );
    let out = inv.invoke(&number, json!({})).await;
    assert_eq!(
        value(&out),
        &json!({"account": REDACTED, "balance": 12.5, "ids": [1, REDACTED]})
    );
    // Credentials in the URL go as `Authorization: Basic base64(user:secret)`, which the
    // service echoes.
    let basic = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("http://user:${{API_KEY}}@127.0.0.1:{}/echo", s.port)}),
    );
    let out = inv.invoke(&basic, json!({})).await;
    let text = out.to_json().to_string();
    assert_eq!(
        value(&out)["headers"]["authorization"],
        format!("Basic {REDACTED}"),
        "{text}"
    );
    assert!(!text.contains(API_KEY), "{text}");
    let mut redactor = SecretStore::default();
    redactor.insert("K", "s3cr3t-value");
    insta::assert_snapshot!(
        redactor.redact("a=czNjcjN0LXZhbHVl&b=dXNlcjpzM2NyM3QtdmFsdWU= c=dXNlcjpzM2NyM3QtdmFsdWU d=aGVsbG8="),
        @r#"a=[REDACTED]&b=[REDACTED] c=[REDACTED] d=aGVsbG8="#
    );
}

#[tokio::test]
async fn missing_template_variable() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        json!({"urlTemplate": format!("{}/weather?q=${{city}}", s.base)}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    insta::assert_snapshot!(show(&out));
}

#[test]
fn impl_block_validation() {
    let spec = ToolSpec::builder("bad", "A bad tool").build().unwrap();
    let err = InvokableTool::from_parts(
        spec.clone(),
        ToolType::Http,
        &json!({"urlTemplate": "ftp://x/${a}"}),
    )
    .unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r#"tool 'bad': invalid impl block: urlTemplate must start with http:// or https://, found "ftp://x/${a}""#);
    let err = InvokableTool::from_parts(
        spec,
        ToolType::Http,
        &json!({"urlTemplate": "https://x", "extractExpr": "$["}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("extractExpr"), "{err}");
}

#[tokio::test]
async fn named_hosts_connect_to_the_checked_addresses() {
    let s = server::start().await;
    let inv = Invoker::default().with_http_config(HttpConfig {
        allowed_hosts: AllowedHosts::new(["localhost:*"]).allow_private(true),
        ..config()
    });
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("http://localhost:{}/echo", s.port)}),
    );
    let out = inv.invoke(&t, json!({})).await;
    assert_eq!(value(&out)["path"], "/echo");
}

#[tokio::test]
async fn arguments_cannot_inject_headers() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {"v": {"type": "string"}}}),
        json!({"urlTemplate": format!("{}/echo", s.base), "headers": {"X-V": "${v}"}}),
    );
    let out = invoker()
        .invoke(&t, json!({"v": "1\r\nX-Admin: yes"}))
        .await;
    assert_eq!(kind(&out), ErrorKind::InvalidArguments);
}

#[tokio::test]
async fn error_mode_empty_turns_a_bad_status_into_null() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/status/404", s.base), "errorMode": "empty", "successCodes": [200]}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    assert_eq!(out.to_json(), json!({"ok": true, "value": null}));
}

#[tokio::test]
async fn optional_query_parameters_are_sent_only_when_given() {
    let s = server::start().await;
    let t = tool(
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "verbose": {"type": "boolean"}
        }, "required": ["city"]}),
        json!({
            "urlTemplate": format!("{}/echo?city=${{city}}", s.base),
            "queryParams": ["days", "tags", "verbose"],
            "extractExpr": "$.query"
        }),
    );
    let query = |args: Value| {
        let t = t.clone();
        async move { invoker().invoke(&t, args).await }
    };
    assert_eq!(value(&query(json!({"city": "Oslo"})).await), "city=Oslo");
    assert_eq!(
        value(
            &query(
                json!({"city": "São Paulo", "days": 3, "tags": ["a b", "c&d"], "verbose": false})
            )
            .await
        ),
        "city=S%C3%A3o%20Paulo&days=3&tags=a+b&tags=c%26d&verbose=false"
    );
}

#[tokio::test]
async fn secrets_are_redacted_from_results() {
    // Regression: `?t=${SECRET}` echoed back put the secret in `value`.
    let s = server::start().await;
    let t = tool(
        json!({"type": "object"}),
        json!({"urlTemplate": format!("{}/echo?t=${{API_KEY}}", s.base)}),
    );
    let out = invoker().invoke(&t, json!({})).await;
    let text = out.to_json().to_string();
    assert!(!text.contains(API_KEY), "{text}");
    assert_eq!(value(&out)["query"], format!("t={REDACTED}"));
}

#[tokio::test]
async fn a_granted_secret_is_refused_to_other_tools_and_hosts() {
    let s = server::start().await;
    let mut secrets = SecretStore::default();
    secrets.insert("API_KEY", API_KEY);
    secrets.grant_tool("API_KEY", "weather_tool");
    secrets.grant_host("API_KEY", "api.weather.test");
    let inv = Invoker::default()
        .with_http_config(config())
        .with_secrets(secrets);
    let block = json!({
        "urlTemplate": format!("{}/echo", s.base),
        "headers": {"X-Api-Key": "${API_KEY}"}
    });
    // test_http is neither the granted tool nor calling the granted host.
    let out = inv
        .invoke(&tool(json!({"type": "object"}), block.clone()), json!({}))
        .await;
    assert_eq!(kind(&out), ErrorKind::Misconfigured, "{}", show(&out));
    insta::assert_snapshot!(out.error().unwrap().message, @"the template headers.X-Api-Key needs the secret 'API_KEY', which is not granted to this tool or to the host it calls; the operator grants secrets to tools and hosts");
    // In the URL too.
    let in_url = json!({"urlTemplate": format!("{}/echo?k=${{API_KEY}}", s.base)});
    let out = inv
        .invoke(&tool(json!({"type": "object"}), in_url), json!({}))
        .await;
    assert_eq!(kind(&out), ErrorKind::Misconfigured, "{}", show(&out));
    // The granted tool may.
    let spec = ToolSpec::builder("weather_tool", "The granted tool")
        .parameters(json!({"type": "object"}))
        .build()
        .unwrap();
    let granted = InvokableTool::from_parts(spec, ToolType::Http, &block).unwrap();
    let out = inv.invoke(&granted, json!({})).await;
    assert_eq!(
        value(&out)["headers"]["x-api-key"],
        REDACTED,
        "{}",
        show(&out)
    );
}

#[tokio::test]
async fn a_redirect_to_another_origin_drops_every_secret_header() {
    // Regression: only Authorization, Cookie and Proxy-Authorization were dropped;
    // X-Api-Key: ${SECRET} reached the other origin.
    let s = server::start().await;
    let inv = Invoker::default()
        .with_http_config(HttpConfig {
            allowed_hosts: AllowedHosts::new(["127.0.0.1:*", "localhost:*"]).allow_private(true),
            ..config()
        })
        .with_secrets({
            let mut secrets = SecretStore::default();
            secrets.insert("API_KEY", API_KEY);
            secrets
        });
    let other = format!("http://localhost:{}/echo", s.port);
    let t = tool(
        json!({"type": "object"}),
        json!({
            "urlTemplate": format!("{}/redirect?to={other}", s.base),
            "headers": {"X-Api-Key": "${API_KEY}", "X-Plain": "kept"}
        }),
    );
    let out = inv.invoke(&t, json!({})).await;
    let headers = &value(&out)["headers"];
    assert_eq!(headers["x-plain"], "kept", "{headers}");
    assert!(headers.get("x-api-key").is_none(), "{headers}");
    // The same origin keeps it.
    let same = tool(
        json!({"type": "object"}),
        json!({
            "urlTemplate": format!("{}/redirect?to=/echo", s.base),
            "headers": {"X-Api-Key": "${API_KEY}"}
        }),
    );
    let out = inv.invoke(&same, json!({})).await;
    assert_eq!(value(&out)["headers"]["x-api-key"], REDACTED);
}
