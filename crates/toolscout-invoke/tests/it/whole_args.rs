//! `${@args}`: an HTTP tool that forwards its whole arguments object, against the local
//! server.

use serde_json::{Value, json};
use toolscout_invoke::{AllowedHosts, HttpConfig, InvokableTool, Invoker};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::ToolType;

use crate::{server, show};

fn forwarding_tool(block: Value) -> InvokableTool {
    let spec = ToolSpec::builder("forward", "Forwards its arguments")
        .parameters(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "units": {"type": "object"}
            },
            "required": ["city"]
        }))
        .build()
        .unwrap();
    InvokableTool::from_parts(spec, ToolType::Http, &block).unwrap()
}

fn invoker() -> Invoker {
    Invoker::default().with_http_config(HttpConfig::with_allowed_hosts(
        AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
    ))
}

#[tokio::test]
async fn the_whole_arguments_object_is_posted_as_json() {
    let s = server::start().await;
    let t = forwarding_tool(json!({
        "method": "POST",
        "urlTemplate": format!("{}/echo?copy=${{@args}}", s.base),
        "bodyTemplate": "{\"args\":${@args}}",
        "extractExpr": "$.body"
    }));
    let args = json!({"city": "São \"Paulo\"\n", "units": {"temp": "C"}});
    let out = invoker().invoke(&t, args.clone()).await;
    let body = out
        .value()
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("expected the echoed body, got {}", show(&out)));
    let sent: Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        sent,
        json!({ "args": args }),
        "optional members are forwarded as given"
    );
}

#[tokio::test]
async fn the_whole_arguments_object_in_a_url_is_encoded() {
    let s = server::start().await;
    let t = forwarding_tool(json!({
        "urlTemplate": format!("{}/echo?copy=${{@args}}", s.base),
        "extractExpr": "$.query"
    }));
    let out = invoker()
        .invoke(&t, json!({"city": "a&b", "days": 2}))
        .await;
    assert_eq!(
        out.value(),
        Some(&json!(
            "copy=%7B%22city%22%3A%22a%26b%22%2C%22days%22%3A2%7D"
        ))
    );
}

#[tokio::test]
async fn an_unknown_builtin_placeholder_is_a_configuration_error() {
    let s = server::start().await;
    let t = forwarding_tool(json!({
        "method": "POST",
        "urlTemplate": format!("{}/echo", s.base),
        "bodyTemplate": "{\"args\":${@arguments}}"
    }));
    let out = invoker().invoke(&t, json!({"city": "Oslo"})).await;
    insta::assert_snapshot!(show(&out), @r#"
    {
      "ok": false,
      "error": {
        "kind": "misconfigured",
        "message": "the template bodyTemplate has the unknown placeholder '${@arguments}'; names that start with '@' are built in, and the only one is '${@args}' (the whole arguments object as JSON)",
        "details": {
          "placeholder": "@arguments",
          "template": "bodyTemplate"
        }
      }
    }
    "#);
}

/// A tool whose server answers with the `reply` argument under `status`, read as an
/// outcome (`responseEncoding: outcome`).
fn outcome_tool(base: &str, status: u16, extract: Option<&str>) -> InvokableTool {
    let spec = ToolSpec::builder("remote", "A tool of another toolscout server")
        .parameters(json!({"type": "object", "properties": {"reply": {}}}))
        .build()
        .unwrap();
    let mut block = json!({
        "method": "POST",
        "urlTemplate": format!("{base}/mirror/{status}"),
        "bodyTemplate": "${reply}",
        "headers": {"Content-Type": "application/json"},
        "responseEncoding": "outcome"
    });
    if let Some(e) = extract {
        block["extractExpr"] = json!(e);
    }
    InvokableTool::from_parts(spec, ToolType::Http, &block).unwrap()
}

#[tokio::test]
async fn an_outcome_response_passes_its_value_or_its_error_on() {
    let s = server::start().await;
    let call = |status: u16, extract: Option<&'static str>, reply: Value| {
        let t = outcome_tool(&s.base, status, extract);
        async move {
            invoker()
                .invoke(&t, json!({ "reply": reply }))
                .await
                .to_json()
        }
    };
    // A success gives its value, through extractExpr when there is one.
    assert_eq!(
        call(200, None, json!({"ok": true, "value": {"temp": 21}})).await,
        json!({"ok": true, "value": {"temp": 21}})
    );
    assert_eq!(
        call(
            200,
            Some("$.temp"),
            json!({"ok": true, "value": {"temp": 21}})
        )
        .await,
        json!({"ok": true, "value": 21})
    );
    // A failure gives the remote's kind, message and details, whatever the status.
    assert_eq!(
        call(
            422,
            None,
            json!({"ok": false, "error": {"kind": "invalid_arguments", "message": "'city' is required", "details": {"field": "city"}}})
        )
        .await,
        json!({"ok": false, "error": {"kind": "invalid_arguments", "message": "'city' is required", "details": {"field": "city", "remote_status": 422}}})
    );
    // A kind this side does not know is a tool failure that keeps the remote's word.
    assert_eq!(
        call(
            200,
            None,
            json!({"ok": false, "error": {"kind": "quota_exceeded", "message": "no calls left"}})
        )
        .await,
        json!({"ok": false, "error": {"kind": "tool_failed", "message": "no calls left", "details": {"remote_status": 200, "remote_kind": "quota_exceeded"}}})
    );
    // A body that is not an outcome is plain JSON, and a bad status is still an error.
    assert_eq!(
        call(200, None, json!({"temp": 21})).await,
        json!({"ok": true, "value": {"temp": 21}})
    );
    let failed = call(503, None, json!({"message": "down"})).await;
    assert_eq!(failed["error"]["kind"], "http_status", "{failed}");
}
