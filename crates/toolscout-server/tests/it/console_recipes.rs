//! Recipes on the server: a put that does not check is a 400 naming the step, and the
//! console's `POST /console/api/recipes/try` checks an unsaved recipe as its put would,
//! runs it with its steps' progress as server-sent events, and never runs a step that
//! requires approval without the operator's.

use serde_json::{Value, json};
use toolscout_catalog::{Catalog, CatalogOptions, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, Approval, ApprovalRequest, Invoker};
use toolscout_search::SearchIndex;
use toolscout_server::{AppState, ServerOptions, router};
use uuid::Uuid;

use crate::{Reply, fixture, fixture_with, send, send_with};

const TRY: &str = "/console/api/recipes/try";
const OPERATOR: &str = "s3cret";

/// The clock → json_query recipe of the console's example, named `name`.
fn tokyo(name: &str) -> Value {
    json!({
        "slug": "tokyo-offset", "version": "1", "name": name,
        "description": "The current UTC offset of Tokyo: reads the clock there, then selects the offset.",
        "type": "recipe", "argSchema": {"type": "object", "properties": {}},
        "impl": {"steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
            {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}],
         "result": "$.steps.offset[0]"}
    })
}

/// A recipe that writes `note.txt` with the built-in `write_file`, which requires approval.
fn writer() -> Value {
    json!({
        "name": "write_note", "description": "Writes a note.", "type": "recipe",
        "impl": {"steps": [{"id": "save", "tool": "write_file",
            "args": {"file_path": "note.txt", "content": "from a recipe"}}]}
    })
}

/// The server-sent events of an answer: `(event, data)` in order.
fn events(r: &Reply) -> Vec<(String, Value)> {
    let text = r.body.as_str().unwrap_or_default();
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            let mut name = String::from("message");
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            (!data.is_empty()).then(|| (name, serde_json::from_str(&data).unwrap()))
        })
        .collect()
}

/// Each step event as `event step`, then the outcome.
fn story(r: &Reply) -> (Vec<String>, Value) {
    let all = events(r);
    let (last, steps) = all.split_last().expect("no events");
    assert_eq!(last.0, "outcome", "{all:?}");
    let told = steps
        .iter()
        .map(|(name, e)| {
            assert_eq!(name, "step");
            format!(
                "{} {}",
                e["event"].as_str().unwrap(),
                e["step"].as_str().unwrap()
            )
        })
        .collect();
    (told, last.1.clone())
}

#[tokio::test]
async fn a_put_recipe_that_does_not_check_is_a_400_naming_the_step() {
    let f = fixture();
    let bundle = Uuid::now_v7();
    let put = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{bundle}"),
        Some(json!({"slug": "mine"})),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    let mut body = tokyo("tokyo_offset");
    body["impl"]["steps"][1]["tool"] = json!("json_quarry");
    let r = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{bundle}/tools/tokyo-offset/version/1"),
        Some(body),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    insta::assert_json_snapshot!(r.body, @r#"
    {
      "error": {
        "code": "invalid",
        "message": "recipe 'tokyo_offset': step 'offset': calls 'json_quarry', which no tool of the catalog is named; did you mean: json_query?",
        "details": {
          "recipe": "tokyo_offset",
          "step": "offset",
          "problem": "calls 'json_quarry', which no tool of the catalog is named; did you mean: json_query?"
        }
      }
    }
    "#);
}

#[tokio::test]
async fn a_tried_recipe_streams_each_step_then_its_outcome_and_is_not_saved() {
    let f = fixture();
    let catalog = f.state.toolbox().catalog();
    let before = catalog.generation();
    let r = send(
        &f.app,
        "POST",
        TRY,
        Some(json!({"tool": tokyo("tokyo_offset"), "args": {}})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.headers["content-type"], "text/event-stream");
    let (told, outcome) = story(&r);
    assert_eq!(
        told,
        [
            "step_started now",
            "step_finished now",
            "step_started offset",
            "step_finished offset"
        ]
    );
    assert_eq!(outcome, json!({"ok": true, "value": "+09:00"}));
    let finished = &events(&r)[1].1;
    assert_eq!(finished["ok"], true);
    assert_eq!(finished["tool"], "clock");
    assert_eq!(finished["recipe"], "tokyo_offset");
    assert!(finished["ms"].is_u64(), "{finished}");
    assert_eq!(catalog.generation(), before, "the try wrote to the catalog");
    assert!(catalog.name_holder("tokyo_offset").is_none());

    // Without slug and version (the save gives them), with arguments of its own.
    let mut body = tokyo("zone_offset");
    body.as_object_mut().unwrap().remove("slug");
    body.as_object_mut().unwrap().remove("version");
    body["argSchema"] =
        json!({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]});
    body["impl"]["steps"][0]["args"] = json!({"action": "now"});
    body["impl"]["steps"][0]["from"] = json!({"time_zone": "$.args.zone"});
    let r = send(
        &f.app,
        "POST",
        TRY,
        Some(json!({"tool": body.clone(), "args": {"zone": "Asia/Kolkata"}})),
    )
    .await;
    assert_eq!(story(&r).1, json!({"ok": true, "value": "+05:30"}));
    // Arguments that do not fit its schema: the outcome says so, and no step ran.
    let r = send(&f.app, "POST", TRY, Some(json!({"tool": body, "args": {}}))).await;
    let (told, outcome) = story(&r);
    assert!(told.is_empty(), "{told:?}");
    assert_eq!(outcome["error"]["kind"], "invalid_arguments", "{outcome}");
}

#[tokio::test]
async fn a_tried_recipe_is_refused_as_its_put_would_be_and_nothing_runs() {
    let f = fixture();
    let cases = [
        (
            json!({"tool": "json_quarry"}),
            "recipe 'tokyo_offset': step 'offset': calls 'json_quarry', which no tool of the catalog is named; did you mean: json_query?",
        ),
        (
            json!({"from": {"value": "$.steps.later"}}),
            "recipe 'tokyo_offset': step 'offset': from.value reads step 'later', which the recipe does not have (its steps: now, offset)",
        ),
        (
            json!({"args": {"path": 3}}),
            "recipe 'tokyo_offset': step 'offset': args.path: 3 is integer, but the parameter takes string for 'json_query'",
        ),
    ];
    for (change, want) in cases {
        let mut body = tokyo("tokyo_offset");
        for (k, v) in change.as_object().unwrap() {
            body["impl"]["steps"][1][k] = v.clone();
        }
        let r = send(&f.app, "POST", TRY, Some(json!({"tool": body}))).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.body["error"]["code"], "invalid");
        assert_eq!(r.body["error"]["message"], want, "{}", r.body);
    }
    // Another type of tool, and a built-in's name.
    let http = json!({"tool": {"slug": "sea", "version": "1", "name": "sea", "description": "Sea.",
        "type": "http", "impl": {"method": "GET", "urlTemplate": "https://api.example.com/"}}});
    let r = send(&f.app, "POST", TRY, Some(http)).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["error"]["message"],
        "tool 'sea' is of type \"http\": only a recipe (\"type\": \"recipe\") is checked without being put"
    );
    let r = send(&f.app, "POST", TRY, Some(json!({"tool": tokyo("clock")}))).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "built_in");
    // A body that is not one.
    let r = send(&f.app, "POST", TRY, Some(json!({"recipe": {}}))).await;
    assert_eq!(r.status, 400, "{}", r.body);
}

/// A server with the built-ins over a workspace, whose invoker's approver approves
/// every call it is asked about (as `serve --approve` would the tools it names).
fn approving(options: ServerOptions) -> (axum::Router, tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let catalog = Catalog::open_with(
        dir.path(),
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap();
    let mut invoker = Invoker::default();
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(workspace.path(), AllowedHosts::default()),
    )
    .unwrap();
    let invoker = invoker.with_approver(|_: &ApprovalRequest| Approval::Approved);
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap();
    (router(AppState::new(toolbox, options)), dir, workspace)
}

#[tokio::test]
async fn a_tried_recipe_never_runs_a_step_that_requires_approval_without_the_operators() {
    let (app, _dir, workspace) = approving(ServerOptions::default().with_token(Some(OPERATOR)));
    let note = workspace.path().join("note.txt");
    let operator = [("authorization", format!("Bearer {OPERATOR}"))];
    let operator = [(operator[0].0, operator[0].1.as_str())];

    // Not approved: refused before any step, though the server's approver approves all.
    let r = send_with(
        &app,
        "POST",
        TRY,
        Some(json!({"tool": writer()})),
        &operator,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (told, outcome) = story(&r);
    assert!(told.is_empty(), "a step ran: {told:?}");
    assert_eq!(outcome["error"]["kind"], "approval_refused", "{outcome}");
    assert_eq!(
        outcome["error"]["message"],
        "step 'save' (write_file) of recipe 'write_note' requires approval, and a recipe that is not saved runs only with its caller's approval: approve this run to try it; nothing ran"
    );
    assert!(!note.exists(), "the step wrote");

    // A tenant cannot approve.
    let token = {
        let r = send_with(
            &app,
            "POST",
            "/admin/tenants",
            Some(json!({"name": "acme"})),
            &operator,
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body["token"]["text"].as_str().unwrap().to_owned()
    };
    let tenant = [("authorization", format!("Bearer {token}"))];
    let tenant = [(tenant[0].0, tenant[0].1.as_str())];
    let approved = json!({"tool": writer(), "approved": true});
    let r = send_with(&app, "POST", TRY, Some(approved.clone()), &tenant).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "forbidden");
    let r = send_with(&app, "POST", TRY, Some(json!({"tool": writer()})), &tenant).await;
    assert_eq!(story(&r).1["error"]["kind"], "approval_refused");
    assert!(!note.exists(), "the step wrote");

    // Nor can anyone on a server without a token.
    let (open, _dir2, _ws2) = approving(ServerOptions::default());
    let r = send(&open, "POST", TRY, Some(approved.clone())).await;
    assert_eq!(r.status, 403, "{}", r.body);

    // The operator approves: it runs.
    let r = send_with(&app, "POST", TRY, Some(approved), &operator).await;
    let (told, outcome) = story(&r);
    assert_eq!(told, ["step_started save", "step_finished save"]);
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "from a recipe");
}

#[tokio::test]
async fn the_try_needs_a_token_where_calls_do() {
    let f = fixture_with(ServerOptions::default().with_token(Some(OPERATOR)), true);
    let r = send(&f.app, "POST", TRY, Some(json!({"tool": tokyo("t")}))).await;
    assert_eq!(r.status, 401, "{}", r.body);
}
