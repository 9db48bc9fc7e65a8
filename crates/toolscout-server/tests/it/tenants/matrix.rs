//! The isolation matrix of the rows ready for tenants: tenant A's requests, asked in a
//! world with tenant B and in the same world without B, get the same answers (status,
//! body and headers, once times and freshly minted ids are numbered), and no answer of
//! A's names anything of B's that A did not put in the request. So A cannot tell "B has
//! it" from "nobody has it", and no count, identity or ETag of A's moves with B's tools.
//!
//! Every row must have requests here ([`every_row_is_probed`]), but the console's
//! files and the event feed and MCP, which `feed.rs`, `mcp.rs` and `revoke.rs` test
//! over a socket.

use std::collections::BTreeSet;

use axum::Router;
use serde_json::{Value, json};
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, TenantLimits, ToolPut, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::Invoker;
use toolscout_search::SearchIndex;
use toolscout_server::{AppState, ServerOptions, router, routes};
use toolscout_spec::ToolSpec;
use uuid::Uuid;

use crate::send_with;

const OPERATOR: &str = "s3cret";

/// Fixed ids, the same in every world.
fn id(n: u128) -> Uuid {
    Uuid::from_u128(0x0191_0000_0000_7000_8000_0000_0000_0000 | n)
}
const OPS: u128 = 10;
const SHARED: u128 = 11;
const A_CRM: u128 = 12;
const B_CRM: u128 = 13;

/// What only B has: its names, words, ids and tenant name. None may reach A.
const B_SECRETS: [&str; 6] = [
    "bravo_crm_lookup",
    "bravomark",
    "bravo_invoice_sender",
    "Bravo's customers",
    "01910000-0000-7000-8000-00000000000d",
    "tenant-b",
];

struct World {
    app: Router,
    state: AppState,
    a_token: String,
    _dir: tempfile::TempDir,
}

fn tool(name: &str, summary: &str, words: &str) -> ToolPut {
    let spec = ToolSpec::builder(name, summary)
        .description(words)
        .parameters(json!({
            "type": "object",
            "properties": {"customer": {"type": "string"}},
            "required": ["customer"]
        }))
        .category("crm")
        .build()
        .unwrap();
    ToolPut::http(
        spec,
        json!({"method": "GET", "urlTemplate": "https://api.example.com/x"}),
    )
}

/// Built-ins; the operator's `ops-kit` and shared `shared-kit`; A's `crm`; with `b`,
/// B's `crm` (B calls the shared tool 11 times).
fn world(with_b: bool) -> World {
    let dir = tempfile::tempdir().unwrap();
    let c = Catalog::open_with(
        dir.path(),
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap();
    // A's requests come faster than a tenant's default rate: the limiter is
    // `limits.rs`'s subject, not this test's.
    let unlimited = TenantLimits {
        requests_per_second: 1_000_000,
        burst: 1_000_000,
        ..TenantLimits::default()
    };
    let (a, a_token) = c.add_tenant("tenant-a", unlimited).unwrap();
    c.put_bundle(id(OPS), &BundlePut::new("ops-kit")).unwrap();
    c.put_tool(
        id(OPS),
        "deploy",
        "1",
        &tool("ops_deploy", "Deploy a service", "opsmark"),
    )
    .unwrap();
    c.put_bundle(id(SHARED), &BundlePut::new("shared-kit"))
        .unwrap();
    c.put_tool(
        id(SHARED),
        "ping",
        "1",
        &tool("shared_ping", "Ping a host", "pingmark"),
    )
    .unwrap();
    c.set_bundle_shared(id(SHARED), true).unwrap();
    c.put_bundle(
        id(A_CRM),
        &BundlePut::new("crm").with_description("Alpha's customers"),
    )
    .unwrap();
    for (slug, t) in [
        (
            "lookup",
            tool("alpha_crm_lookup", "Find an alpha customer", "alphamark"),
        ),
        (
            "customer",
            tool(
                "crm_lookup_customer",
                "Look a customer up",
                "alphamark record",
            ),
        ),
        (
            "off",
            tool("alpha_disabled", "A disabled alpha tool", "alphamark"),
        ),
    ] {
        c.put_tool(id(A_CRM), slug, "1", &t).unwrap();
    }
    c.patch_tool(id(A_CRM), "off", "1", false).unwrap();
    c.set_bundle_owner(id(A_CRM), Some(a.id)).unwrap();
    if with_b {
        let (b, _) = c.add_tenant("tenant-b", TenantLimits::default()).unwrap();
        c.put_bundle(
            id(B_CRM),
            &BundlePut::new("crm").with_description("Bravo's customers"),
        )
        .unwrap();
        for (slug, t) in [
            (
                "lookup",
                tool("bravo_crm_lookup", "Find a bravo customer", "bravomark"),
            ),
            (
                "customer",
                tool(
                    "crm_lookup_customer",
                    "Look a customer up, bravo style",
                    "bravomark",
                ),
            ),
            (
                "send",
                tool(
                    "bravo_invoice_sender",
                    "Send an invoice",
                    "bravomark invoice",
                ),
            ),
        ] {
            c.put_tool(id(B_CRM), slug, "1", &t).unwrap();
        }
        c.set_bundle_owner(id(B_CRM), Some(b.id)).unwrap();
        let shared = c
            .view(&toolscout_catalog::Viewer::Operator)
            .get_tool(id(SHARED), "ping", "1")
            .unwrap();
        for _ in 0..11 {
            c.record_call(shared.id, chrono::Utc::now()).unwrap();
        }
    }
    let toolbox = Toolbox::new(c, SearchIndex::in_memory().unwrap(), Invoker::default()).unwrap();
    let state = AppState::new(toolbox, ServerOptions::default().with_token(Some(OPERATOR)));
    World {
        app: router(state.clone()),
        state,
        a_token: a_token.reveal().to_owned(),
        _dir: dir,
    }
}

/// One request of A's: method, path and query, JSON body.
type Request = (&'static str, String, Option<Value>);

/// A's requests, row by row: each slot filled with A's own, a shared, a built-in, B's and
/// a fresh value (and typos and prefixes of B's names).
fn requests() -> Vec<Request> {
    let (a, b, fresh) = (id(A_CRM), id(B_CRM), id(0xfff));
    let tool_path =
        |bundle: Uuid, slug: &str| format!("/tools/bundles/{bundle}/tools/{slug}/version/1");
    let names = [
        "alpha_crm_lookup",
        "crm_lookup_customer",
        "shared_ping",
        "clock",
        "ops_deploy",
        "bravo_crm_lookup",
        "bravo_crm_lookp",
        "bravo_crm",
        "bravo_invoice_sender",
        "nobody_has_this",
    ];
    let mut r: Vec<Request> = vec![
        ("GET", "/api/v1/tools".into(), None),
        ("GET", "/api/v1/tools?limit=2".into(), None),
        ("GET", "/api/v1/whoami".into(), None),
        ("GET", "/tools/bundles".into(), None),
        (
            "GET",
            "/tools/bundles?includeDisabled=true&includeDeleted=true".into(),
            None,
        ),
        ("GET", format!("/tools/bundles?bundleIDs={b}"), None),
        ("GET", "/tools/tools?includeDisabled=true".into(), None),
        ("GET", format!("/tools/tools?bundleIDs={b},{a}"), None),
        ("GET", "/tools/tools?tags=crm".into(), None),
        (
            "POST",
            "/rpc".into(),
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
        ),
        (
            "POST",
            "/rpc".into(),
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "server/identity"})),
        ),
    ];
    for name in names {
        r.push(("GET", format!("/api/v1/tools/{name}"), None));
        r.push((
            "POST",
            format!("/api/v1/tools/{name}/invoke"),
            Some(json!({"args": {}})),
        ));
        r.push(("GET", format!("/tools/tools/search?q={name}"), None));
        r.push((
            "GET",
            format!("/tools/tools/search?q={name}&includeDisabled=true"),
            None,
        ));
        for method in ["tools/describe", "tools/call"] {
            r.push((
                "POST",
                "/rpc".into(),
                Some(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"name": name, "arguments": {"customer": "x"}}})),
            ));
        }
        r.push((
            "POST",
            "/rpc".into(),
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/search", "params": {"query": name}})),
        ));
    }
    for words in [
        "bravomark",
        "alphamark",
        "customer",
        "invoice",
        "crm lookup",
    ] {
        r.push((
            "GET",
            format!("/tools/tools/search?q={}", words.replace(' ', "%20")),
            None,
        ));
    }
    for (bundle, slug) in [
        (a, "lookup"),
        (a, "off"),
        (b, "lookup"),
        (b, "send"),
        (fresh, "lookup"),
        (id(SHARED), "ping"),
        (id(OPS), "deploy"),
    ] {
        r.push(("GET", tool_path(bundle, slug), None));
        r.push((
            "POST",
            format!("{}/invoke", tool_path(bundle, slug)),
            Some(json!({"args": {"customer": "x"}})),
        ));
        r.push((
            "GET",
            format!("/console/api/levels/{bundle}/{slug}/1"),
            None,
        ));
    }
    for bundle in [a, b, fresh, id(SHARED), id(OPS)] {
        r.push(("GET", format!("/console/api/bundles/{bundle}/export"), None));
    }
    // The console's chat: no model endpoint here, and no call waits for approval.
    r.push(("GET", "/console/api/chat".into(), None));
    r.push((
        "POST",
        "/console/api/chat".into(),
        Some(json!({"messages": [{"role": "user", "content": "bravo_crm_lookup"}], "pinned": ["bravo_crm_lookup"]})),
    ));
    r.push((
        "POST",
        "/console/api/chat/approve".into(),
        Some(json!({"run": fresh, "callId": "call_0", "approve": true})),
    ));
    // The console's recipe try: a recipe over each name, checked in A's view (B's tools
    // are no tool of the catalog, as nobody's are) and run when it checks.
    for name in names {
        let recipe = |approved: bool| {
            json!({"tool": {"name": "alpha_try", "description": "Tries a step.", "type": "recipe",
                "impl": {"steps": [{"id": "one", "tool": name, "args": {"customer": "x"}}]}},
                "approved": approved})
        };
        r.push((
            "POST",
            "/console/api/recipes/try".into(),
            Some(recipe(false)),
        ));
        r.push((
            "POST",
            "/console/api/recipes/try".into(),
            Some(recipe(true)),
        ));
    }
    // Imports (an archive made in the world itself, see `archive`): the shared bundle
    // under B's id, under a fresh one and as it is, and A's own bundle again.
    for (of, as_id, slug) in [
        (id(SHARED), b, "imported"),
        (id(SHARED), fresh, "imported-too"),
        (id(SHARED), id(SHARED), "shared-kit"),
        (a, a, "crm"),
    ] {
        r.push((
            "POST",
            "/console/api/bundles/import".into(),
            Some(json!({"archiveOf": of, "as": as_id, "slug": slug})),
        ));
    }
    // The operator's: refused alike whatever they name (A, B, nobody), sharing and
    // owners included.
    r.push(("GET", "/admin/tenants".into(), None));
    r.push((
        "POST",
        "/admin/tenants".into(),
        Some(json!({"name": "tenant-b"})),
    ));
    for tenant in ["tenant-a", "tenant-b", "nobody"] {
        let at = format!("/admin/tenants/{tenant}");
        r.push(("GET", at.clone(), None));
        r.push((
            "PATCH",
            at.clone(),
            Some(json!({"limits": {"requestsPerSecond": 1000}})),
        ));
        r.push(("POST", format!("{at}/tokens"), Some(json!({}))));
        r.push(("DELETE", format!("{at}/tokens/{fresh}"), None));
        r.push(("DELETE", at, None));
    }
    for bundle in [a, b, fresh, id(SHARED), id(OPS)] {
        for patch in [
            json!({"shared": true}),
            json!({"owner": "tenant-a"}),
            json!({"owner": null, "isEnabled": true}),
        ] {
            r.push(("PATCH", format!("/tools/bundles/{bundle}"), Some(patch)));
        }
    }
    // Writes, last (they change A's world alike in both): into B's bundle, a fresh one,
    // the shared and the operator's, then A's own.
    for bundle in [b, fresh, id(SHARED), id(OPS), a] {
        r.push((
            "PATCH",
            format!("/tools/bundles/{bundle}"),
            Some(json!({"isEnabled": true})),
        ));
        r.push((
            "PUT",
            tool_path(bundle, "new"),
            Some(
                json!({"name": "alpha_new_tool", "description": "New.", "type": "http",
                "impl": {"method": "GET", "urlTemplate": "https://api.example.com/n"}}),
            ),
        ));
        r.push((
            "PATCH",
            tool_path(bundle, "lookup"),
            Some(json!({"isEnabled": false})),
        ));
        r.push(("DELETE", tool_path(bundle, "send"), None));
        r.push((
            "PUT",
            format!("/tools/bundles/{bundle}"),
            Some(json!({"slug": "crm"})),
        ));
        r.push(("DELETE", format!("/tools/bundles/{bundle}"), None));
    }
    r.push((
        "PUT",
        format!("/tools/bundles/{}", id(0x1234)),
        Some(json!({"slug": "crm"})),
    ));
    r.push((
        "PUT",
        format!("/tools/bundles/{}", id(0x1235)),
        Some(json!({"slug": "mail"})),
    ));
    // A bundle made with an id of the server's: a slug B has too, and a new one.
    for slug in ["crm", "billing"] {
        r.push(("POST", "/tools/bundles".into(), Some(json!({"slug": slug}))));
    }
    r.push(("GET", "/tools/bundles?includeDeleted=true".into(), None));
    r
}

/// `text` with RFC 3339 times as `<T>` and UUIDs (but the fixed ones) numbered by first
/// appearance: what differs between two worlds built at other moments.
fn normalize(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut seen: Vec<String> = Vec::new();
    let mut i = 0;
    let hex = |b: u8| b.is_ascii_hexdigit();
    let digit = |b: u8| b.is_ascii_digit();
    while i < bytes.len() {
        // A UUID: 8-4-4-4-12 hex digits.
        let uuid_at = |i: usize| {
            let shape = [8, 4, 4, 4, 12];
            let mut j = i;
            for (k, n) in shape.iter().enumerate() {
                if j + n > bytes.len() || !bytes[j..j + n].iter().all(|b| hex(*b)) {
                    return None;
                }
                j += n;
                if k < 4 {
                    if bytes.get(j) != Some(&b'-') {
                        return None;
                    }
                    j += 1;
                }
            }
            Some(j)
        };
        if let Some(end) = uuid_at(i) {
            let u = &text[i..end];
            if u.starts_with("01910000-0000-7000-8000-") {
                out.push_str(u);
            } else {
                let n = seen.iter().position(|s| s == u).unwrap_or_else(|| {
                    seen.push(u.to_owned());
                    seen.len() - 1
                });
                out.push_str(&format!("<id{n}>"));
            }
            i = end;
            continue;
        }
        // A time: YYYY-MM-DDTHH:MM:SS, fraction and zone.
        if i + 19 <= bytes.len()
            && bytes[i..i + 4].iter().all(|b| digit(*b))
            && bytes[i + 4] == b'-'
            && bytes[i + 10] == b'T'
            && bytes[i + 13] == b':'
        {
            let mut j = i + 19;
            while j < bytes.len()
                && (digit(bytes[j]) || matches!(bytes[j], b'.' | b'Z' | b'+' | b':'))
            {
                j += 1;
            }
            out.push_str("<T>");
            i = j;
            continue;
        }
        let ch = text[i..].chars().next().unwrap();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// An event stream with its steps' durations (`"ms":12`) as `"ms":<n>`: the one part of
/// a recipe's run that differs between two worlds.
fn without_timings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"ms\":") {
        let (before, after) = rest.split_at(at + 5);
        out.push_str(before);
        out.push_str("<n>");
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// A search's hits in name order: BM25 statistics are index-wide, so another tenant's
/// tools may reorder a tenant's hits (documented), never change which they are.
fn as_set(mut body: Value) -> Value {
    let key = |v: &Value| {
        v.get("displayName")
            .or_else(|| v.get("name"))
            .map(Value::to_string)
            .unwrap_or_default()
    };
    for pointer in [
        "/items",
        "/result/tools",
        "/didYouMean",
        "/result/did_you_mean",
    ] {
        if let Some(items) = body.pointer_mut(pointer).and_then(Value::as_array_mut) {
            items.sort_by_key(|v| if v.is_string() { v.to_string() } else { key(v) });
        }
    }
    body
}

/// A ZIP archive as its entries' names and texts (a tool file holds its ids and times,
/// numbered by [`normalize`] like any other).
fn unzipped(bytes: &[u8]) -> Value {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut entries = serde_json::Map::new();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        let name = entry.name().unwrap().to_string();
        entries.insert(name, Value::String(text));
    }
    Value::Object(entries)
}

/// The archive an import request of the matrix sends: bundle `archiveOf` of the world,
/// exported by the operator, with the bundle id `as` and the slug `slug` written in.
fn archive(w: &World, spec: &Value) -> Vec<u8> {
    let of: Uuid = spec["archiveOf"].as_str().unwrap().parse().unwrap();
    let mut exported = std::io::Cursor::new(Vec::new());
    w.state
        .toolbox()
        .catalog()
        .export_bundle(of, &mut exported)
        .unwrap();
    let mut source = zip::ZipArchive::new(std::io::Cursor::new(exported.into_inner())).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..source.len() {
        let mut entry = source.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        if name == "manifest.json" {
            let mut manifest: Value = serde_json::from_str(&text).unwrap();
            manifest["bundle"]["bundleID"] = spec["as"].clone();
            manifest["bundle"]["slug"] = spec["slug"].clone();
            text = manifest.to_string();
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut out, text.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// An answer as compared: status, the headers that say something, the body.
async fn answer(w: &World, (method, uri, body): &Request) -> String {
    let auth = format!("Bearer {}", w.a_token);
    let request = axum::http::Request::builder()
        .method(*method)
        .uri(uri)
        .header("authorization", &auth)
        .header("host", "127.0.0.1:7411");
    let request = match body {
        Some(b) if uri.ends_with("/import") => request
            .header("content-type", "application/zip")
            .body(axum::body::Body::from(archive(w, b))),
        Some(b) => request
            .header("content-type", "application/json")
            .body(axum::body::Body::from(b.to_string())),
        None => request.body(axum::body::Body::empty()),
    }
    .unwrap();
    let response = tower::ServiceExt::oneshot(w.app.clone(), request)
        .await
        .unwrap();
    let status = response.status();
    let response_headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let streamed = response_headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let body = if bytes.starts_with(b"PK") {
        unzipped(&bytes)
    } else if streamed {
        Value::String(without_timings(&String::from_utf8_lossy(&bytes)))
    } else {
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    };
    let search = uri.contains("/search") || body.pointer("/result/tools").is_some();
    let body = if search { as_set(body) } else { body };
    let r = crate::Reply {
        status,
        headers: response_headers,
        body,
    };
    let mut headers: Vec<String> = r
        .headers
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "date" | "content-length"))
        .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("?")))
        .collect();
    headers.sort();
    normalize(&format!("{}\n{}\n{}", r.status, headers.join("\n"), r.body))
}

#[tokio::test]
async fn a_tenant_cannot_tell_another_tenant_s_tools_from_none() {
    let (with_b, without_b) = (world(true), world(false));
    let mut differences = Vec::new();
    for request in requests() {
        let (one, two) = (
            answer(&with_b, &request).await,
            answer(&without_b, &request).await,
        );
        // The one known exception (SECURITY.md): a PUT of a new bundle at an id another
        // party's bundle holds cannot make that bundle; it is refused as not found, where
        // at a free id the bundle would be made. Ids are UUIDv7s A is never shown.
        let foreign_id_put =
            request.0 == "PUT" && request.1 == format!("/tools/bundles/{}", id(B_CRM));
        if one != two && !foreign_id_put {
            differences.push(format!(
                "{} {}\n  with B:    {one}\n  without B: {two}",
                request.0, request.1
            ));
        }
        if request.1.ends_with("/import") {
            // Every import is A's own, in both worlds.
            assert!(one.starts_with("200"), "{one}");
            assert!(
                !one.contains("\"created\":false")
                    || request.2.as_ref().is_some_and(|b| b["slug"] == "crm"),
                "{one}"
            );
        }
        let asked = format!("{} {}", request.1, request.2.clone().unwrap_or(Value::Null));
        for secret in B_SECRETS {
            assert!(
                asked.contains(secret) || !one.contains(secret),
                "{} {}: {secret:?} in {one}",
                request.0,
                request.1
            );
        }
        assert!(!one.contains("\"callCount\":11"), "{one}");
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // The operator sees B.
    let r = send_with(
        &with_b.app,
        "GET",
        "/tools/tools/search?q=bravomark",
        None,
        &[
            ("authorization", &format!("Bearer {OPERATOR}")),
            ("host", "127.0.0.1:7411"),
        ],
    )
    .await;
    assert!(
        r.body.to_string().contains("bravo_crm_lookup"),
        "{}",
        r.body
    );
    drop(with_b.state);
}

#[test]
fn every_row_is_probed() {
    let asked: BTreeSet<(String, String)> = requests()
        .iter()
        .map(|(m, uri, _)| (m.to_string(), pattern(uri)))
        .collect();
    let missing: Vec<String> = routes()
        .iter()
        .filter(|r| {
            r.access != toolscout_server::Access::Asset
                && r.path != "/api/v1/events"
                && !r.path.starts_with("/mcp")
        })
        .map(|r| (r.method.to_string(), r.path.to_owned()))
        .filter(|row| !asked.contains(row))
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    assert!(
        missing.is_empty(),
        "rows without a request in the matrix: {missing:?}"
    );
}

/// The route pattern a request's URI matches.
fn pattern(uri: &str) -> String {
    let path = uri.split('?').next().unwrap_or(uri);
    let parts: Vec<&str> = path.split('/').collect();
    let named = |i: usize, name: &str| {
        if parts.len() > i {
            name.to_owned()
        } else {
            String::new()
        }
    };
    let _ = named;
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let replaced = match (parts.get(1).copied(), parts.get(2).copied(), i) {
            (Some("tools"), Some("bundles"), 3) => "{bundle}",
            (Some("tools"), Some("bundles"), 5) => "{slug}",
            (Some("tools"), Some("bundles"), 7) => "{version}",
            (Some("api"), Some("v1"), 4) if parts.get(3) == Some(&"tools") => "{name}",
            (Some("admin"), Some("tenants"), 3) => "{tenant}",
            (Some("admin"), Some("tenants"), 5) => "{token}",
            (Some("console"), Some("api"), 4) if parts.get(3) == Some(&"levels") => "{bundle}",
            (Some("console"), Some("api"), 5) if parts.get(3) == Some(&"levels") => "{slug}",
            (Some("console"), Some("api"), 6) if parts.get(3) == Some(&"levels") => "{version}",
            (Some("console"), Some("api"), 4)
                if parts.get(3) == Some(&"bundles") && parts.get(5) == Some(&"export") =>
            {
                "{bundle}"
            }
            _ => p,
        };
        out.push(replaced);
    }
    out.join("/")
}
