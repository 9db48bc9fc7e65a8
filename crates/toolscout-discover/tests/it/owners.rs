//! Names resolve by owner (issue 61): in a caller's view a name stands for the caller's
//! own tool, then a shared one, then a built-in, never for whichever was changed last
//! across owners; the operator reaches a tenant's tool by its qualified name only; a
//! tool's rate limit is counted per tool and caller, not per name.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolscout_catalog::{BundlePut, Catalog, TenantLimits, ToolPut, Viewer, builtin};
use toolscout_discover::{Lookup, Toolbox};
use toolscout_invoke::{Approval, ApprovalRequest, BoxFuture, DynTool, Invoker, ToolError};
use toolscout_search::SearchIndex;
use toolscout_spec::ToolSpec;
use uuid::Uuid;

/// A native test tool that says which tool ran (its `tag`).
struct Tagged {
    name: &'static str,
    spec: ToolSpec,
}

impl DynTool for Tagged {
    fn name(&self) -> &str {
        self.name
    }
    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        Ok(self.spec.clone())
    }
    fn call_json(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move { Ok(json!({"ran": args["tag"]})) })
    }
}

struct World {
    toolbox: Toolbox,
    acme: toolscout_catalog::TenantId,
    bravo: toolscout_catalog::TenantId,
    ops: Uuid,
    approvals: Arc<Mutex<Vec<ApprovalRequest>>>,
    _dir: tempfile::TempDir,
}

/// A tool named `name` that runs the native `tagged` with the tag `tag`, at most
/// `per_minute` calls a minute when given.
fn put(c: &Catalog, bundle: Uuid, name: &str, tag: &str, per_minute: Option<u32>) {
    let spec = ToolSpec::builder(name, format!("Says {tag}"))
        .parameters(json!({"type": "object", "properties": {"tag": {"type": "string"}}}))
        .with_metadata(|m| m.rate_limit_per_minute = per_minute)
        .build()
        .unwrap();
    // A recipe around the native tool: the catalog tool's name is free, the tag fixed.
    let block = json!({"steps": [{"id": "t", "tool": "tagged", "args": {"tag": tag}}],
        "result": "$.steps.t"});
    let put = ToolPut::recipe(spec, block);
    c.put_tool(
        bundle,
        &toolscout_spec::name::slug_from_name(name),
        "1",
        &put,
    )
    .unwrap();
}

fn bundle(c: &Catalog, slug: &str, owner: Option<toolscout_catalog::TenantId>) -> Uuid {
    let id = Uuid::now_v7();
    c.put_bundle(id, &BundlePut::new(slug)).unwrap();
    if owner.is_some() {
        c.set_bundle_owner(id, owner).unwrap();
    }
    id
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let mut natives: Vec<&str> = builtin::NATIVE_FUNCTIONS.to_vec();
    natives.push("tagged");
    let catalog = Catalog::open(dir.path(), &natives).unwrap();
    let (acme, _) = catalog.add_tenant("acme", TenantLimits::default()).unwrap();
    let (bravo, _) = catalog
        .add_tenant("bravo", TenantLimits::default())
        .unwrap();
    let lib = bundle(&catalog, "lib", None);
    let spec = ToolSpec::builder("tagged", "Says its tag")
        .parameters(json!({"type": "object", "properties": {"tag": {"type": "string"}}}))
        .build()
        .unwrap();
    catalog
        .put_tool(lib, "tagged", "1", &ToolPut::native(spec.clone(), "tagged"))
        .unwrap();
    catalog.set_bundle_shared(lib, true).unwrap();
    let mut invoker = Invoker::default();
    invoker
        .register_dyn(Arc::new(Tagged {
            name: "tagged",
            spec,
        }))
        .unwrap();
    let approvals = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&approvals);
    let invoker = invoker.with_approver(move |r: &ApprovalRequest| {
        seen.lock().unwrap().push(r.clone());
        Approval::Approved
    });
    let ops = bundle(&catalog, "ops", None);
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap();
    World {
        toolbox,
        acme: acme.id,
        bravo: bravo.id,
        ops,
        approvals,
        _dir: dir,
    }
}

fn found(l: Lookup) -> toolscout_catalog::Tool {
    match l {
        Lookup::Found(t) => *t,
        other => panic!("expected a tool, got {other:?}"),
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_name_resolves_by_owner_never_by_recency() {
    // Regression: the operator's `note_time` went to a tenant's newer `note_time`.
    let w = world();
    put(w.toolbox.catalog(), w.ops, "note_time", "operator", None);
    let tools = bundle(w.toolbox.catalog(), "tools", Some(w.acme));
    std::thread::sleep(std::time::Duration::from_millis(5));
    put(w.toolbox.catalog(), tools, "note_time", "acme", None);
    let operator = w.toolbox.as_viewer(Viewer::Operator);
    let acme = w.toolbox.as_viewer(Viewer::Tenant(w.acme));
    assert_eq!(found(operator.lookup("note_time")).bundle_id, w.ops);
    assert_eq!(found(acme.lookup("note_time")).bundle_id, tools);
    // The call runs the caller's own.
    let rt = rt();
    let out = rt.block_on(operator.call("note_time", json!({})));
    assert_eq!(out.value(), Some(&json!({"ran": "operator"})), "{out:?}");
    let out = rt.block_on(acme.call("note_time", json!({})));
    assert_eq!(out.value(), Some(&json!({"ran": "acme"})), "{out:?}");
    // A name only a tenant holds is none of the operator's, but by its qualified name.
    let only = bundle(w.toolbox.catalog(), "only", Some(w.bravo));
    put(w.toolbox.catalog(), only, "bravo_sync", "bravo", None);
    assert!(matches!(
        operator.lookup("bravo_sync"),
        Lookup::NotFound { .. }
    ));
    let by_qualified = found(operator.lookup("bravo:only/bravo-sync"));
    assert_eq!(by_qualified.bundle_id, only);
    assert_eq!(
        found(operator.lookup("bravo:only/bravo_sync")).bundle_id,
        only
    );
    assert_eq!(found(operator.lookup("ops/note-time")).bundle_id, w.ops);
    // A tenant names only what it sees: another tenant's qualified name is none.
    assert!(matches!(
        acme.lookup("bravo:only/bravo-sync"),
        Lookup::NotFound { .. }
    ));
    assert_eq!(found(acme.lookup("acme:tools/note-time")).bundle_id, tools);
    // A shared bundle is the second choice: a tenant's own tool wins over it, and the
    // operator's own, whichever was changed last.
    let shelf = bundle(w.toolbox.catalog(), "shelf", Some(w.bravo));
    w.toolbox.catalog().set_bundle_shared(shelf, true).unwrap();
    put(w.toolbox.catalog(), shelf, "note_time", "bravo", None);
    assert_eq!(found(operator.lookup("note_time")).bundle_id, w.ops);
    assert_eq!(found(acme.lookup("note_time")).bundle_id, tools);
    let (carol, _) = w
        .toolbox
        .catalog()
        .add_tenant("carol", TenantLimits::default())
        .unwrap();
    let carol = w.toolbox.as_viewer(Viewer::Tenant(carol.id));
    assert_eq!(found(carol.lookup("note_time")).bundle_id, shelf);
    // Of two shared tools, the operator's comes first, though older.
    let lib = w.toolbox.view().heads();
    let lib = lib.iter().find(|h| h.name == "tagged").unwrap().bundle_id;
    let older = bundle(w.toolbox.catalog(), "older", None);
    w.toolbox.catalog().set_bundle_shared(older, true).unwrap();
    put(w.toolbox.catalog(), older, "stamp", "operator", None);
    put(w.toolbox.catalog(), shelf, "stamp", "bravo", None);
    assert_eq!(found(carol.lookup("stamp")).bundle_id, older);
    assert_ne!(lib, older);
}

#[test]
fn an_approval_names_the_tool_by_its_owner_bundle_and_slug() {
    let w = world();
    let tools = bundle(w.toolbox.catalog(), "tools", Some(w.acme));
    let spec = ToolSpec::builder("note_time", "Says acme")
        .with_metadata(|m| m.requires_approval = true)
        .build()
        .unwrap();
    let block = json!({"steps": [{"id": "t", "tool": "tagged", "args": {"tag": "acme"}}]});
    w.toolbox
        .catalog()
        .put_tool(tools, "note-time", "1", &ToolPut::recipe(spec, block))
        .unwrap();
    let acme = w.toolbox.as_viewer(Viewer::Tenant(w.acme));
    let out = rt().block_on(acme.call("note_time", json!({})));
    assert!(out.is_ok(), "{out:?}");
    let asked = w.approvals.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "note_time");
    assert_eq!(
        asked[0]
            .qualified
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("acme:tools/note-time")
    );
    assert_eq!(
        asked[0].steps[0]
            .qualified
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("lib/tagged")
    );
}

#[test]
fn a_tools_rate_limit_is_its_own_and_each_caller_s() {
    // Regression: tenant B's calls of its own `bravo_sync` used up A's `bravo_sync`.
    let w = world();
    let a = bundle(w.toolbox.catalog(), "a", Some(w.acme));
    let b = bundle(w.toolbox.catalog(), "b", Some(w.bravo));
    put(w.toolbox.catalog(), a, "bravo_sync", "a", Some(2));
    put(w.toolbox.catalog(), b, "bravo_sync", "b", Some(2));
    let rt = rt();
    let acme = w.toolbox.as_viewer(Viewer::Tenant(w.acme));
    let bravo = w.toolbox.as_viewer(Viewer::Tenant(w.bravo));
    for _ in 0..2 {
        let out = rt.block_on(bravo.call("bravo_sync", json!({})));
        assert!(out.is_ok(), "{out:?}");
    }
    let out = rt.block_on(bravo.call("bravo_sync", json!({})));
    assert_eq!(
        out.error().map(|e| e.kind),
        Some(toolscout_invoke::ErrorKind::RateLimited)
    );
    let out = rt.block_on(acme.call("bravo_sync", json!({})));
    assert!(out.is_ok(), "A's budget is its own: {out:?}");
    // A shared tool's limit is counted per caller.
    let lib = w.toolbox.view().heads();
    let lib = lib.iter().find(|h| h.name == "tagged").unwrap().bundle_id;
    put(w.toolbox.catalog(), lib, "common", "shared", Some(1));
    assert!(rt.block_on(bravo.call("common", json!({}))).is_ok());
    assert!(!rt.block_on(bravo.call("common", json!({}))).is_ok());
    let out = rt.block_on(acme.call("common", json!({})));
    assert!(out.is_ok(), "{out:?}");
}
