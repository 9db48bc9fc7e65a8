//! Recipes through a toolbox: checked when put, run as a graph with one approval, errors
//! naming the step, writes last, progress told, usage counted.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolscout_catalog::{BundlePut, Catalog, Error, ToolPut, builtin};
use toolscout_discover::{RecipeEvent, Toolbox};
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{
    Approval, ApprovalRequest, BoxFuture, DynTool, ErrorKind, Invoker, ToolError,
};
use toolscout_search::SearchIndex;
use toolscout_spec::{Level, ToolSpec};
use uuid::Uuid;

/// A native test tool: `f` on the arguments, with a spec of the given parameters and flags.
struct TestTool {
    name: &'static str,
    spec: ToolSpec,
    f: Box<dyn Fn(Value) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>,
}

impl DynTool for TestTool {
    fn name(&self) -> &str {
        self.name
    }
    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        Ok(self.spec.clone())
    }
    fn call_json(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        (self.f)(args)
    }
}

fn spec(name: &str, params: Value, read_only: bool, approval: bool) -> ToolSpec {
    ToolSpec::builder(name, format!("Test tool {name}"))
        .parameters(params)
        .with_metadata(|m| {
            m.read_only = read_only;
            m.requires_approval = approval;
        })
        .build()
        .unwrap()
}

struct World {
    toolbox: Toolbox,
    bundle: Uuid,
    written: Arc<Mutex<Vec<Value>>>,
    approvals: Arc<Mutex<Vec<ApprovalRequest>>>,
    _dir: tempfile::TempDir,
    _workspace: tempfile::TempDir,
}

const NATIVES: [&str; 5] = ["slow", "record", "fail", "guarded", "double"];

fn world(approve: bool) -> World {
    let dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut natives: Vec<&str> = builtin::NATIVE_FUNCTIONS.to_vec();
    natives.extend(NATIVES);
    let catalog = Catalog::open(dir.path(), &natives).unwrap();
    let bundle = Uuid::now_v7();
    catalog.put_bundle(bundle, &BundlePut::new("mine")).unwrap();
    let written = Arc::new(Mutex::new(Vec::new()));
    let approvals = Arc::new(Mutex::new(Vec::new()));
    let value_param = json!({"type": "object", "properties": {"value": {}}, "required": ["value"]});
    let int_param =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let ms_param = json!({"type": "object", "properties": {"ms": {"type": "integer"}, "tag": {"type": "string"}}, "required": ["ms"]});
    let w = Arc::clone(&written);
    let tools = vec![
        TestTool {
            name: "slow",
            spec: spec("slow", ms_param, true, false),
            f: Box::new(|args| {
                Box::pin(async move {
                    let ms = args["ms"].as_u64().unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(json!({"tag": args["tag"], "slept": ms}))
                })
            }),
        },
        TestTool {
            name: "record",
            spec: spec("record", value_param.clone(), false, false),
            f: Box::new(move |args| {
                let w = Arc::clone(&w);
                Box::pin(async move {
                    w.lock().unwrap().push(args["value"].clone());
                    Ok(json!({"written": args["value"]}))
                })
            }),
        },
        TestTool {
            name: "fail",
            spec: spec("fail", value_param.clone(), true, false),
            f: Box::new(|args| {
                Box::pin(
                    async move { Err(ToolError::failed(format!("cannot do {}", args["value"]))) },
                )
            }),
        },
        TestTool {
            name: "guarded",
            spec: spec("guarded", value_param, true, true),
            f: Box::new(|args| Box::pin(async move { Ok(args["value"].clone()) })),
        },
        TestTool {
            name: "double",
            spec: {
                let mut s = spec("double", int_param, true, false);
                s.output_schema = Some(json!({"type": "integer"}));
                s
            },
            f: Box::new(|args| {
                Box::pin(async move { Ok(json!(args["n"].as_i64().unwrap_or(0) * 2)) })
            }),
        },
    ];
    let mut invoker = Invoker::default();
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(workspace.path(), toolscout_invoke::AllowedHosts::default()),
    )
    .unwrap();
    for t in tools {
        let s = t.spec.clone();
        invoker.register_dyn(Arc::new(t)).unwrap();
        let slug = s.name.to_string();
        catalog
            .put_tool(bundle, &slug, "1", &ToolPut::native(s, &slug))
            .unwrap();
    }
    let seen = Arc::clone(&approvals);
    let invoker = invoker.with_approver(move |r: &ApprovalRequest| {
        seen.lock().unwrap().push(r.clone());
        if approve {
            Approval::Approved
        } else {
            Approval::Refused(Some("not today".to_owned()))
        }
    });
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap();
    World {
        toolbox,
        bundle,
        written,
        approvals,
        _dir: dir,
        _workspace: workspace,
    }
}

impl World {
    fn put(
        &self,
        name: &str,
        params: Value,
        block: Value,
    ) -> Result<toolscout_catalog::Tool, Error> {
        let spec = ToolSpec::builder(name, format!("Recipe {name}"))
            .parameters(params)
            .build()
            .unwrap();
        self.toolbox.catalog().put_tool(
            self.bundle,
            &toolscout_spec::name::slug_from_name(name),
            "1",
            &ToolPut::recipe(spec, block),
        )
    }

    fn put_ok(&self, name: &str, block: Value) {
        self.put(name, json!({"type": "object", "properties": {}}), block)
            .unwrap();
    }

    async fn call(&self, name: &str, args: Value) -> (Result<Value, ToolError>, Vec<RecipeEvent>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let outcome = self
            .toolbox
            .call(name, args)
            .observed(Arc::new(move |e: &RecipeEvent| {
                sink.lock().unwrap().push(e.clone());
            }))
            .await;
        let events = events.lock().unwrap().clone();
        (outcome.into_result(), events)
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The README's recipe: the clock in Tokyo, then its UTC offset selected.
fn tokyo_offset() -> Value {
    json!({
        "steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
            {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}
        ],
        "result": "$.steps.offset[0]"
    })
}

#[test]
fn clock_then_json_query_runs_with_no_arguments() {
    let w = world(true);
    w.put_ok("tokyo_offset", tokyo_offset());
    let (result, events) = rt().block_on(w.call("tokyo_offset", json!({})));
    assert_eq!(result.unwrap(), json!("+09:00"));
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RecipeEvent::StepStarted { step, .. } => Some(step.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["now", "offset"]);
    // Usage: the recipe and each step.
    let catalog = w.toolbox.catalog();
    std::thread::sleep(Duration::from_millis(50));
    for name in ["tokyo_offset", "clock", "json_query"] {
        let (id, _) = catalog.name_holder(name).unwrap();
        assert_eq!(catalog.tool(id).unwrap().usage.call_count, 1, "{name}");
    }
}

#[test]
fn steps_without_dependencies_run_at_the_same_time() {
    let w = world(true);
    w.put_ok(
        "pair",
        json!({
            "steps": [
                {"id": "left", "tool": "slow", "args": {"ms": 300, "tag": "L"}},
                {"id": "right", "tool": "slow", "args": {"ms": 300, "tag": "R"}},
                {"id": "both", "tool": "slow", "args": {"ms": 1},
                 "from": {"tag": "$.steps.right.tag"}, "after": ["left"]}
            ],
            "result": {"tag": "$.steps.both.tag", "left": "$.steps.left.slept"}
        }),
    );
    let started = Instant::now();
    let (result, events) = rt().block_on(w.call("pair", json!({})));
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(550),
        "the pair ran one after the other: {took:?}"
    );
    let result = result.unwrap();
    assert_eq!(result["left"], json!(300));
    assert_eq!(result["tag"], json!("R"));
    // Both started before either finished; `both` started after both finished.
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            RecipeEvent::StepStarted { step, .. } => format!("+{step}"),
            RecipeEvent::StepFinished { step, .. } => format!("-{step}"),
            RecipeEvent::StepSkipped { step, .. } => format!("~{step}"),
            _ => String::new(),
        })
        .collect();
    assert_eq!(&kinds[..2], ["+left", "+right"], "{kinds:?}");
    assert_eq!(&kinds[4..], ["+both", "-both"], "{kinds:?}");
}

#[test]
fn for_each_runs_once_per_item_in_order_and_when_skips() {
    let w = world(true);
    w.put(
        "doubles",
        json!({"type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "integer"}}, "also": {"type": "boolean"}}}),
        json!({
            "steps": [
                {"id": "each", "tool": "double", "forEach": "$.args.numbers", "from": {"n": "$.item"}},
                {"id": "extra", "tool": "double", "when": "$.args.also", "args": {"n": 100}},
                {"id": "after_extra", "tool": "double", "from": {"n": "$.steps.extra"}}
            ],
            "result": {"each": "$.steps.each", "extra": "$.steps.extra", "after": "$.steps.after_extra"}
        }),
    )
    .unwrap();
    let rt = rt();
    let (result, events) = rt.block_on(w.call("doubles", json!({"numbers": [1, 2, 3, 4, 5, 6]})));
    assert_eq!(
        result.unwrap(),
        json!({"each": [2, 4, 6, 8, 10, 12], "extra": null, "after": null})
    );
    let skipped: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RecipeEvent::StepSkipped { step, .. } => Some(step.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, ["extra", "after_extra"]);
    let (result, _) = rt.block_on(w.call("doubles", json!({"numbers": [], "also": true})));
    assert_eq!(
        result.unwrap(),
        json!({"each": [], "extra": 200, "after": 400})
    );
}

#[test]
fn a_failed_step_is_named_with_what_it_got_and_writes_wait_for_reads() {
    let w = world(true);
    w.put_ok(
        "read_then_write",
        json!({
            "steps": [
                {"id": "check", "tool": "fail", "args": {"value": "the check"}},
                {"id": "save", "tool": "record", "args": {"value": "saved"}}
            ]
        }),
    );
    let (result, _) = rt().block_on(w.call("read_then_write", json!({})));
    let e = result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ToolFailed);
    assert_eq!(
        e.message,
        "step 'check' (fail) of recipe 'read_then_write' failed: cannot do \"the check\""
    );
    assert_eq!(e.details["step"], "check");
    assert_eq!(e.details["arguments"], json!({"value": "the check"}));
    assert_eq!(e.details["wrote"], json!([]));
    assert!(
        w.written.lock().unwrap().is_empty(),
        "the write ran although the read failed"
    );
}

#[test]
fn a_step_s_arguments_are_validated_and_a_missing_selection_is_named() {
    let w = world(true);
    w.put(
        "twice",
        json!({"type": "object", "properties": {"n": {}}}),
        json!({"steps": [{"id": "d", "tool": "double", "from": {"n": "$.args.n"}}]}),
    )
    .unwrap();
    let rt = rt();
    let (result, _) = rt.block_on(w.call("twice", json!({"n": "seven"})));
    let e = result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(
        e.message
            .starts_with("step 'd' (double) of recipe 'twice' failed: "),
        "{}",
        e.message
    );
    assert_eq!(e.details["arguments"], json!({"n": "seven"}));
    let (result, _) = rt.block_on(w.call("twice", json!({})));
    assert_eq!(
        result.unwrap_err().message,
        "step 'd' (double) of recipe 'twice' failed: from.n: $.args.n selected nothing, and 'double' requires 'n'"
    );
}

#[test]
fn one_approval_covers_the_call_and_a_refusal_runs_nothing() {
    for approve in [true, false] {
        let w = world(approve);
        w.put(
            "guarded_save",
            json!({"type": "object", "properties": {"items": {"type": "array"}}}),
            json!({
                "steps": [
                    {"id": "g", "tool": "guarded", "forEach": "$.args.items", "from": {"value": "$.item"}},
                    {"id": "save", "tool": "record", "from": {"value": "$.steps.g"}}
                ]
            }),
        )
        .unwrap();
        let (result, events) = rt().block_on(w.call("guarded_save", json!({"items": [1, 2, 3]})));
        let approvals = w.approvals.lock().unwrap().clone();
        assert_eq!(approvals.len(), 1, "one approval for the whole call");
        assert_eq!(approvals[0].tool, "guarded_save");
        let steps: Vec<(String, bool)> = approvals[0]
            .steps
            .iter()
            .map(|s| (format!("{}:{}", s.step, s.tool), s.requires_approval))
            .collect();
        assert_eq!(
            steps,
            [
                ("g:guarded".to_owned(), true),
                ("save:record".to_owned(), false)
            ]
        );
        if approve {
            assert_eq!(
                result.unwrap(),
                json!({"g": [1, 2, 3], "save": {"written": [1, 2, 3]}})
            );
        } else {
            assert_eq!(result.unwrap_err().kind, ErrorKind::ApprovalRefused);
            assert!(events.is_empty(), "a step ran: {events:?}");
            assert!(w.written.lock().unwrap().is_empty());
        }
    }
}

#[test]
fn put_refuses_a_missing_tool_a_cycle_and_a_wrong_type_naming_the_step() {
    let w = world(true);
    let before = w.toolbox.catalog().generation();
    let empty = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let cases = [
        (
            json!({"steps": [{"id": "a", "tool": "clock", "args": {"action": "now"}}, {"id": "b", "tool": "no_such_tool"}]}),
            "recipe 'r': step 'b': calls 'no_such_tool', which no tool of the catalog is named",
        ),
        (
            json!({"steps": [{"id": "a", "tool": "double", "from": {"n": "$.steps.b"}}, {"id": "b", "tool": "double", "from": {"n": "$.steps.a"}}]}),
            "recipe 'r': the steps a, b wait for each other (a cycle)",
        ),
        (
            json!({"steps": [{"id": "a", "tool": "double", "from": {"n": "$.args.text"}}]}),
            "recipe 'r': step 'a': from.n: $.args.text gives string, but 'double' takes integer for 'n'",
        ),
        (
            json!({"steps": [{"id": "a", "tool": "clock", "args": {"action": "yesterday"}}]}),
            "recipe 'r': step 'a': args.action: \"yesterday\" is not one of [\"now\",\"convert\"] for 'clock'",
        ),
        (
            json!({"steps": [{"id": "a", "tool": "r"}]}),
            "recipe 'r': step 'a': calls 'r', which is a recipe on the way here (r → r): recipes may not call themselves",
        ),
    ];
    for (block, want) in cases {
        let e = w.put("r", empty.clone(), block).unwrap_err();
        assert_eq!(e.to_string(), want);
    }
    assert_eq!(
        w.toolbox.catalog().generation(),
        before,
        "a refused put wrote something"
    );
}

#[test]
fn level_3_shows_the_steps_and_levels_1_and_2_one_tool() {
    let w = world(true);
    w.put_ok("tokyo_offset", tokyo_offset());
    let Some((id, true)) = w.toolbox.catalog().name_holder("tokyo_offset") else {
        panic!("the recipe is not callable");
    };
    let spec = w.toolbox.catalog().tool(id).unwrap().spec;
    let text: Vec<String> = Level::ALL
        .iter()
        .map(|l| spec.disclose(*l).to_text())
        .collect();
    insta::assert_snapshot!(text.join("\n---\n"));
    assert!(!text[1].contains("Steps"));
    // Search finds it like any tool.
    let hits = w
        .toolbox
        .search(&toolscout_search::SearchQuery::new("tokyo offset"))
        .unwrap();
    assert_eq!(hits.hits[0].0.spec.name.as_str(), "tokyo_offset");
}

#[test]
fn a_step_whose_tool_went_away_fails_before_anything_runs() {
    let w = world(true);
    w.put_ok(
        "save_then_double",
        json!({"steps": [
            {"id": "save", "tool": "record", "args": {"value": 1}},
            {"id": "d", "tool": "double", "args": {"n": 1}, "after": ["save"]}
        ]}),
    );
    let catalog = w.toolbox.catalog();
    let (id, _) = catalog.name_holder("double").unwrap();
    let t = catalog.tool(id).unwrap();
    catalog
        .delete_tool(t.bundle_id, &t.slug, &t.version)
        .unwrap();
    let (result, events) = rt().block_on(w.call("save_then_double", json!({})));
    let e = result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownTool);
    assert_eq!(
        e.message,
        "step 'd' of recipe 'save_then_double' calls 'double', which is no tool of the catalog; nothing ran"
    );
    assert!(events.is_empty());
    assert!(w.written.lock().unwrap().is_empty());
}

impl World {
    /// A draft recipe `name` (its spec and block, checked as a put would), run with
    /// `approved`: the outcome and the events.
    async fn try_draft(
        &self,
        name: &str,
        requires_approval: bool,
        block: Value,
        approved: bool,
    ) -> (Result<Value, ToolError>, Vec<RecipeEvent>) {
        let spec = ToolSpec::builder(name, format!("Draft {name}"))
            .with_metadata(|m| m.requires_approval = requires_approval)
            .build()
            .unwrap();
        let spec = self
            .toolbox
            .view()
            .check_recipe(
                &toolscout_spec::name::slug_from_name(name),
                "1",
                &ToolPut::recipe(spec, block.clone()),
            )
            .unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let progress: toolscout_discover::Progress =
            Arc::new(move |e: &RecipeEvent| sink.lock().unwrap().push(e.clone()));
        let outcome = self
            .toolbox
            .call_recipe_draft(spec, &block, json!({}), approved, Some(progress))
            .await;
        let events = events.lock().unwrap().clone();
        (outcome.into_result(), events)
    }
}

#[test]
fn a_draft_runs_like_a_stored_recipe_and_writes_nothing_to_the_catalog() {
    let w = world(true);
    let before = w.toolbox.catalog().generation();
    let block = json!({
        "steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
            {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}
        ],
        "result": "$.steps.offset[0]"
    });
    let (result, events) = rt().block_on(w.try_draft("tokyo_offset", false, block, false));
    assert_eq!(result.unwrap(), json!("+09:00"));
    let told: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .map(|e| {
            format!(
                "{} {}",
                e["event"].as_str().unwrap(),
                e["step"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        told,
        [
            "step_started now",
            "step_finished now",
            "step_started offset",
            "step_finished offset"
        ]
    );
    let catalog = w.toolbox.catalog();
    assert_eq!(catalog.generation(), before, "a draft wrote to the catalog");
    assert!(catalog.name_holder("tokyo_offset").is_none());
    // The steps' calls are counted, as any call of their tools.
    std::thread::sleep(Duration::from_millis(50));
    let (id, _) = catalog.name_holder("clock").unwrap();
    assert_eq!(catalog.tool(id).unwrap().usage.call_count, 1);
}

#[test]
fn a_draft_is_refused_as_its_put_would_be() {
    let w = world(true);
    let params = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    for block in [
        json!({"steps": [{"id": "a", "tool": "clock", "args": {"action": "now"}}, {"id": "b", "tool": "no_such_tool"}]}),
        json!({"steps": [{"id": "a", "tool": "double", "from": {"n": "$.steps.b"}}, {"id": "b", "tool": "double", "from": {"n": "$.steps.a"}}]}),
        json!({"steps": [{"id": "a", "tool": "double", "from": {"n": "$.args.text"}}]}),
        json!({"steps": [{"id": "a", "tool": "r"}]}),
    ] {
        let spec = ToolSpec::builder("r", "Recipe r")
            .parameters(params.clone())
            .build()
            .unwrap();
        let draft = w
            .toolbox
            .view()
            .check_recipe("r", "1", &ToolPut::recipe(spec, block.clone()))
            .unwrap_err();
        let put = w.put("r", params.clone(), block).unwrap_err();
        assert_eq!(draft.to_string(), put.to_string());
    }
    // Only a recipe is checked so; a built-in's name is refused as a put refuses it.
    let spec = ToolSpec::builder("sea", "Sea").build().unwrap();
    let http = ToolPut::http(
        spec,
        json!({"method": "GET", "urlTemplate": "https://api.example.com/"}),
    );
    assert_eq!(
        w.toolbox
            .view()
            .check_recipe("sea", "1", &http)
            .unwrap_err()
            .to_string(),
        "tool 'sea' is of type \"http\": only a recipe (\"type\": \"recipe\") is checked without being put"
    );
    let spec = ToolSpec::builder("clock", "A second clock")
        .build()
        .unwrap();
    let clock = ToolPut::recipe(
        spec,
        json!({"steps": [{"id": "a", "tool": "clock", "args": {"action": "now"}}]}),
    );
    let err = w
        .toolbox
        .view()
        .check_recipe("clock", "1", &clock)
        .unwrap_err();
    assert!(matches!(err, Error::ReservedName { .. }), "{err}");
}

#[test]
fn a_draft_needing_approval_runs_only_when_its_caller_approves_and_no_approver_is_asked() {
    // The approver approves everything: a draft must not reach it.
    let w = world(true);
    let block = json!({"steps": [
        {"id": "g", "tool": "guarded", "args": {"value": 7}},
        {"id": "d", "tool": "double", "args": {"n": 1}}
    ]});
    let rt = rt();
    let (result, events) = rt.block_on(w.try_draft("guarded_draft", false, block.clone(), false));
    let e = result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ApprovalRefused);
    assert_eq!(
        e.message,
        "step 'g' (guarded) of recipe 'guarded_draft' requires approval, and a recipe that is not saved runs only with its caller's approval: approve this run to try it; nothing ran"
    );
    assert_eq!(e.details["steps"], json!(["g"]));
    assert!(events.is_empty(), "a step ran: {events:?}");
    // A draft that asks for approval itself, with steps that do not.
    let plain = json!({"steps": [{"id": "d", "tool": "double", "args": {"n": 2}}]});
    let (result, _) = rt.block_on(w.try_draft("asks", true, plain.clone(), false));
    assert_eq!(
        result.unwrap_err().message,
        "recipe 'asks' requires approval, and a recipe that is not saved runs only with its caller's approval: approve this run to try it; nothing ran"
    );
    let (result, _) = rt.block_on(w.try_draft("asks", true, plain, true));
    assert_eq!(result.unwrap(), json!({"d": 4}));
    let (result, _) = rt.block_on(w.try_draft("guarded_draft", false, block, true));
    assert_eq!(result.unwrap(), json!({"g": 7, "d": 2}));
    assert!(
        w.approvals.lock().unwrap().is_empty(),
        "the approver was asked about a draft"
    );
}

#[test]
fn a_nested_recipe_runs_the_plan_that_was_approved() {
    // Regression (issue 61): approval was asked for the plan at the start, while a
    // nested recipe looked its steps up again when it ran; a recipe put in place of
    // `target` 0.3 s into the call wrote a file with no approval.
    let w = world(false);
    w.put_ok(
        "target",
        json!({"steps": [{"id": "d", "tool": "double", "args": {"n": 21}}], "result": "$.steps.d"}),
    );
    w.put_ok(
        "mid",
        json!({"steps": [{"id": "t", "tool": "target"}], "result": "$.steps.t"}),
    );
    w.put_ok(
        "outer",
        json!({"steps": [
            {"id": "wait", "tool": "slow", "args": {"ms": 300}},
            {"id": "m", "tool": "mid", "when": "$.steps.wait.slept"}
        ], "result": "$.steps.m"}),
    );
    let rt = rt();
    let toolbox = w.toolbox.clone();
    let call = rt.spawn(async move { toolbox.call("outer", json!({})).await });
    std::thread::sleep(Duration::from_millis(100));
    // `target` gets a version that writes: a put of it needs no approval, a run does.
    let spec = ToolSpec::builder("target", "Recipe target")
        .parameters(json!({"type": "object", "properties": {}}))
        .build()
        .unwrap();
    let block = json!({"steps": [{"id": "w", "tool": "write_file",
        "args": {"file_path": "pwned.txt", "content": "no approval"}}]});
    w.toolbox
        .catalog()
        .put_tool(w.bundle, "target", "2", &ToolPut::recipe(spec, block))
        .unwrap();
    let outcome = rt.block_on(call).unwrap();
    assert_eq!(outcome.value(), Some(&json!(42)), "{outcome:?}");
    assert!(!w._workspace.path().join("pwned.txt").exists());
    assert!(w.approvals.lock().unwrap().is_empty());
    // A second call plans the new `target`, asks, and is refused.
    let outcome = rt.block_on(w.toolbox.call("outer", json!({})));
    assert_eq!(
        outcome.error().map(|e| e.kind),
        Some(ErrorKind::ApprovalRefused),
        "{outcome:?}"
    );
    assert!(!w._workspace.path().join("pwned.txt").exists());
}

/// A recipe of `n` levels, each a `forEach` over its `items` argument calling the level
/// below; the lowest calls `double`. Returns the top level's name.
fn put_levels(w: &World, n: usize, max_items: Option<u64>) -> String {
    let mut items = json!({"type": "array"});
    if let Some(m) = max_items {
        items["maxItems"] = json!(m);
    }
    let params = json!({"type": "object", "properties": {"items": items}});
    let mut below = "double".to_owned();
    for level in 1..=n {
        let name = format!("level_{level}");
        let from = if below == "double" {
            json!({"n": "$.index"})
        } else {
            json!({"items": "$.args.items"})
        };
        w.put(
            &name,
            params.clone(),
            json!({"steps": [{"id": "each", "tool": below, "forEach": "$.args.items", "from": from}]}),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        below = name;
    }
    below
}

#[test]
fn a_recipe_whose_calls_could_pass_the_cap_is_refused_at_put() {
    // Regression (issue 61): four nested 100-item `forEach` levels made 10⁸ calls from
    // one request.
    let w = world(true);
    put_levels(&w, 1, None);
    let spec_params = json!({"type": "object", "properties": {"items": {"type": "array"}}});
    let Err(err) = w.put(
        "level_2",
        spec_params,
        json!({"steps": [{"id": "each", "tool": "level_1", "forEach": "$.args.items",
                "from": {"items": "$.args.items"}}]}),
    ) else {
        panic!("a recipe of 10,100 calls at most was put");
    };
    insta::assert_snapshot!(err.to_string(), @r"recipe 'level_2': step 'each': one run could make 10100 tool calls, more than the 10000 a run may make (10100 here: a forEach of up to 100 items, each a run of 'level_1' of up to 100 calls); give the list a forEach goes over a smaller maxItems, or split the recipe");
    // Declared bounds make the fan-out known: 2 levels of at most 50 items pass.
    let w = world(true);
    let top = put_levels(&w, 2, Some(50));
    assert_eq!(top, "level_2");
}

#[test]
fn a_run_stops_at_the_cap_of_calls() {
    // The cap holds at run time too: `level_1` was put with a fan-out of one, then
    // changed to 100 items, after `level_2` was put over it.
    let w = world(true);
    let params =
        json!({"type": "object", "properties": {"items": {"type": "array", "maxItems": 100}}});
    w.put(
        "level_1",
        params.clone(),
        json!({"steps": [{"id": "one", "tool": "double", "args": {"n": 1}}]}),
    )
    .unwrap();
    w.put(
        "level_2",
        params.clone(),
        json!({"steps": [{"id": "each", "tool": "level_1", "forEach": "$.args.items",
            "from": {"items": "$.args.items"}}]}),
    )
    .unwrap();
    let spec = ToolSpec::builder("level_1", "Recipe level_1")
        .parameters(params)
        .build()
        .unwrap();
    let block = json!({"steps": [{"id": "each", "tool": "double", "forEach": "$.args.items",
        "from": {"n": "$.index"}}]});
    w.toolbox
        .catalog()
        .put_tool(w.bundle, "level-1", "2", &ToolPut::recipe(spec, block))
        .unwrap();
    let items: Vec<u32> = (0..100).collect();
    let started = Instant::now();
    let (result, events) = rt().block_on(w.call("level_2", json!({"items": items})));
    let Err(err) = result else {
        panic!("the run was not stopped at the cap");
    };
    assert_eq!(err.kind, ErrorKind::TooLarge, "{err:?}");
    assert!(err.message.contains("10000 calls"), "{}", err.message);
    let calls = events
        .iter()
        .filter(|e| matches!(e, RecipeEvent::StepStarted { .. }))
        .count();
    assert!(calls <= 10_000, "{calls}");
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// `Toolbox::call(..)` asks the approver of a tool that requires approval; `.approved()`
/// (the caller asked its own) does not, and `.approved_if(false)` is the plain call.
#[test]
fn a_call_marked_approved_does_not_ask_the_approver_again() {
    let w = world(false);
    let rt = rt();
    let refused = rt.block_on(w.toolbox.call("guarded", json!({"value": 7})));
    assert!(!refused.is_ok(), "{refused:?}");
    assert_eq!(w.approvals.lock().unwrap().len(), 1);

    let plain = rt.block_on(
        w.toolbox
            .call("guarded", json!({"value": 7}))
            .approved_if(false),
    );
    assert!(!plain.is_ok(), "{plain:?}");
    assert_eq!(w.approvals.lock().unwrap().len(), 2);

    let ran = rt.block_on(w.toolbox.call("guarded", json!({"value": 7})).approved());
    assert_eq!(ran.into_result().unwrap(), json!(7));
    assert_eq!(w.approvals.lock().unwrap().len(), 2, "no approver asked");
}
