//! Native tools and the invocation pipeline: validation, approval, rate limits,
//! timeouts, output validation, usage events.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolscout_invoke::{
    Approval, ApprovalRequest, ErrorKind, InvokableTool, Invoker, NativeTool, Outcome, ToolError,
    UsageEvent,
};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::ToolType;

use crate::show;

/// Divides one integer by another.
#[derive(Deserialize, JsonSchema)]
struct DivideArgs {
    /// The dividend.
    a: i64,
    /// The divisor, not zero.
    b: i64,
    /// How to round.
    #[serde(default)]
    rounding: Rounding,
}

#[derive(Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Rounding {
    #[default]
    Down,
    Up,
}

#[derive(Serialize)]
struct Quotient {
    quotient: i64,
}

struct Divide;

impl NativeTool for Divide {
    const NAME: &'static str = "divide";
    const SUMMARY: &'static str = "Divide two integers";
    type Args = DivideArgs;
    type Output = Quotient;

    async fn call(&self, args: DivideArgs) -> Result<Quotient, ToolError> {
        if args.b == 0 {
            return Err(ToolError::failed(
                "cannot divide by zero; pass a non-zero b",
            ));
        }
        let q = match args.rounding {
            Rounding::Down => args.a.div_euclid(args.b),
            Rounding::Up => (args.a + args.b - 1).div_euclid(args.b),
        };
        Ok(Quotient { quotient: q })
    }
}

/// Sleeps.
#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// Milliseconds.
    ms: u64,
}

struct Sleep;

impl NativeTool for Sleep {
    const NAME: &'static str = "sleep";
    const SUMMARY: &'static str = "Sleep a while";
    type Args = SleepArgs;
    type Output = ();

    async fn call(&self, args: SleepArgs) -> Result<(), ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok(())
    }
}

fn invoker() -> Invoker {
    let mut inv = Invoker::default().with_native_timeout(Duration::from_millis(200));
    inv.register(Divide).unwrap();
    inv.register(Sleep).unwrap();
    inv
}

async fn call(args: serde_json::Value) -> Outcome {
    invoker().invoke_native("divide", args).await
}

#[tokio::test]
async fn typed_call() {
    let out = call(json!({"a": 7, "b": 2, "rounding": "up"})).await;
    assert_eq!(out.to_json(), json!({"ok": true, "value": {"quotient": 4}}));
}

#[test]
fn schema_comes_from_the_args_type() {
    let spec = invoker().native_tool("divide").unwrap().spec;
    insta::assert_json_snapshot!(spec.parameters);
}

#[tokio::test]
async fn invalid_arguments_name_the_path_and_the_expectation() {
    insta::assert_snapshot!(
        "missing_and_wrong_type",
        show(&call(json!({"a": "seven"})).await)
    );
    insta::assert_snapshot!(
        "bad_enum",
        show(&call(json!({"a": 1, "b": 2, "rounding": "sideways"})).await)
    );
    insta::assert_snapshot!("not_an_object", show(&call(json!([1, 2])).await));
}

#[tokio::test]
async fn a_tool_failure_is_data() {
    insta::assert_snapshot!(show(&call(json!({"a": 1, "b": 0})).await), @r#"
    {
      "ok": false,
      "error": {
        "kind": "tool_failed",
        "message": "cannot divide by zero; pass a non-zero b",
        "details": null
      }
    }
    "#);
}

#[tokio::test]
async fn a_spec_only_tool_checks_its_arguments_then_fails_with_its_own_kind() {
    let inv = invoker();
    let spec = ToolSpec::builder("get_weather", "Weather for a city")
        .parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }))
        .build()
        .unwrap();
    let t = InvokableTool::from_parts(
        spec,
        ToolType::Native,
        &json!({"func": toolscout_spec::adapters::tool_file::SPEC_ONLY_FUNC}),
    )
    .unwrap();
    assert!(t.is_spec_only());
    let bad = inv.invoke(&t, json!({})).await;
    assert_eq!(bad.error().unwrap().kind, ErrorKind::InvalidArguments);
    insta::assert_snapshot!(
        "spec_only",
        show(&inv.invoke(&t, json!({"city": "Paris"})).await)
    );
}

#[tokio::test]
async fn unknown_and_unregistered_tools() {
    let inv = invoker();
    insta::assert_snapshot!(
        "unknown_tool",
        show(&inv.invoke_native("multiply", json!({})).await)
    );
    let spec = ToolSpec::builder("weather", "Weather").build().unwrap();
    let t = InvokableTool::from_parts(
        spec,
        ToolType::Native,
        &json!({"goFunc": "github.com/acme/tools.Weather"}),
    )
    .unwrap();
    insta::assert_snapshot!("not_registered", show(&inv.invoke(&t, json!({})).await));
}

#[tokio::test]
async fn disabled_tools_are_refused() {
    let inv = invoker();
    let t = inv.native_tool("divide").unwrap().with_enabled(false);
    let out = inv.invoke(&t, json!({"a": 1, "b": 1})).await;
    assert_eq!(out.error().unwrap().kind, ErrorKind::Disabled);
    let t = t.with_disabled_reason("its bundle is disabled");
    insta::assert_snapshot!(inv.invoke(&t, json!({})).await.error().unwrap().message, @"tool 'divide' is disabled (its bundle is disabled); use another tool or ask the user to enable it");
    assert_eq!(inv.native_names(), ["divide", "sleep"]);
}

#[tokio::test]
async fn approval() {
    let mut t = invoker().native_tool("divide").unwrap();
    t.spec.metadata.requires_approval = true;
    let args = json!({"a": 4, "b": 2});

    let none = invoker().invoke(&t, args.clone()).await;
    assert_eq!(none.error().unwrap().kind, ErrorKind::ApprovalRefused);

    let refusing = invoker().with_approver(|r: &ApprovalRequest| {
        assert_eq!(r.arguments["a"], 4);
        Approval::Refused(Some("the user said no".to_owned()))
    });
    insta::assert_snapshot!(show(&refusing.invoke(&t, args.clone()).await));

    let approving = invoker().with_approver(|_: &ApprovalRequest| Approval::Approved);
    assert!(approving.invoke(&t, args).await.is_ok());
}

#[tokio::test]
async fn rate_limit_per_tool() {
    let inv = invoker();
    let mut t = inv.native_tool("divide").unwrap();
    t.spec.metadata.rate_limit_per_minute = Some(2);
    let args = json!({"a": 4, "b": 2});
    assert!(inv.invoke(&t, args.clone()).await.is_ok());
    assert!(inv.invoke(&t, args.clone()).await.is_ok());
    let third = inv.invoke(&t, args).await;
    let e = third.error().unwrap();
    assert_eq!(e.kind, ErrorKind::RateLimited);
    assert_eq!(e.details["limit_per_minute"], 2);
}

#[tokio::test]
async fn native_timeouts() {
    let inv = invoker();
    let out = inv.invoke_native("sleep", json!({"ms": 5000})).await;
    insta::assert_snapshot!(show(&out), @r#"
    {
      "ok": false,
      "error": {
        "kind": "timeout",
        "message": "tool 'sleep' did not finish within 200 ms; try a smaller request or try later",
        "details": {
          "timeout_ms": 200
        }
      }
    }
    "#);
    let mut t = inv.native_tool("sleep").unwrap();
    t.spec.metadata.timeout_seconds = Some(1);
    assert!(inv.invoke(&t, json!({"ms": 300})).await.is_ok());
}

#[tokio::test]
async fn a_tool_s_timeout_is_capped_by_the_operator() {
    // Regression (issue 61): `timeout_seconds: 4000000000` (126 years) was taken as is.
    let inv = invoker();
    assert_eq!(inv.max_timeout(), toolscout_invoke::DEFAULT_MAX_TIMEOUT);
    assert_eq!(inv.max_timeout(), Duration::from_secs(600));
    let inv = inv.with_max_timeout(Duration::from_millis(300));
    let mut t = inv.native_tool("sleep").unwrap();
    t.spec.metadata.timeout_seconds = Some(4_000_000_000);
    let started = std::time::Instant::now();
    let out = inv.invoke(&t, json!({"ms": 5000})).await;
    assert_eq!(
        out.error().map(|e| e.kind),
        Some(ErrorKind::Timeout),
        "{}",
        show(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(out.error().unwrap().details["timeout_ms"], 300);
}

#[tokio::test]
async fn output_is_validated() {
    let inv = invoker();
    let mut t = inv.native_tool("divide").unwrap();
    t.spec.output_schema = Some(json!({
        "type": "object",
        "properties": {"quotient": {"type": "integer", "minimum": 0}},
        "required": ["quotient"]
    }));
    assert!(inv.invoke(&t, json!({"a": 4, "b": 2})).await.is_ok());
    insta::assert_snapshot!(show(&inv.invoke(&t, json!({"a": -4, "b": 2})).await));
}

#[tokio::test]
async fn usage_events_are_sent() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<UsageEvent>();
    let inv = invoker().with_usage_sink(tx);
    let _ = inv.invoke_native("divide", json!({"a": 1, "b": 1})).await;
    let _ = inv.invoke_native("divide", json!({"a": 1})).await;
    let first = rx.recv().await.unwrap();
    let second = rx.recv().await.unwrap();
    assert_eq!((first.tool.as_str(), first.ok), ("divide", true));
    assert_eq!(second.error_kind, Some(ErrorKind::InvalidArguments));
}

#[test]
fn duplicate_registration_is_an_error() {
    let mut inv = invoker();
    let err = inv.register(Divide).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a native tool named 'divide' is already registered"
    );
}

/// A catalog entry's schema and a model's arguments are both hostile: a pattern that
/// backtracks (a back-reference) over ten thousand strings must not cost minutes, and a
/// nested-quantifier pattern runs in linear time.
#[test]
fn hostile_schema_patterns_are_bounded() {
    let validators = toolscout_invoke::Validators::default();
    let evil = "a".repeat(40) + "!";
    for pattern in [r"^(a+)\1*b$", "^(a|a?)+$", "^(a+)+$"] {
        let spec = ToolSpec::builder("patterned", "A tool whose schema has a pattern")
            .parameters(json!({
                "type": "object",
                "properties": {"items": {"type": "array", "items": {"type": "string", "pattern": pattern}}}
            }))
            .build()
            .unwrap();
        let args = json!({"items": vec![evil.clone(); 10_000]});
        // A backtracking limit hit is a failed match or a validation error; either way the
        // call answers, and does not hang.
        let _ = validators.check_arguments(&spec, &args);
    }
}
