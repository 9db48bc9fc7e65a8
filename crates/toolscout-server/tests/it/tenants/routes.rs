//! The route table is complete: it lists every route the server answers, once, and the
//! server answers every row.

use std::collections::BTreeSet;

use axum::http::Method;
use toolscout_server::{Access, ServerOptions, routes};

use super::{OPERATOR, name, probe_with, world};

/// Every route of the server, written out.
///
/// **Rationale:** the server refuses a route without a row of `routes()` (500
/// `unlisted_route`), and this list must equal `routes()`: so a new route is added in
/// three places or a test fails, the handler, the table (or nobody may use it) and here
/// (or `the_table_is_every_route` fails), and the probes of this module and of `auth.rs`
/// then reach it, since they go over the table (and the isolation matrix must have
/// requests for it, `matrix::every_row_is_probed`).
const EVERY_ROUTE: &[(&str, &str, Access)] = &[
    ("GET", "/api/v1/tools", Access::Read),
    ("GET", "/api/v1/tools/{name}", Access::Read),
    ("POST", "/api/v1/tools/{name}/invoke", Access::Caller),
    ("GET", "/api/v1/events", Access::Read),
    ("GET", "/api/v1/whoami", Access::Read),
    ("GET", "/api/v1/openapi.json", Access::Asset),
    ("GET", "/tools/bundles", Access::Read),
    ("POST", "/tools/bundles", Access::Caller),
    ("PUT", "/tools/bundles/{bundle}", Access::Caller),
    ("PATCH", "/tools/bundles/{bundle}", Access::Caller),
    ("DELETE", "/tools/bundles/{bundle}", Access::Caller),
    (
        "GET",
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Read,
    ),
    (
        "PUT",
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Caller,
    ),
    (
        "PATCH",
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Caller,
    ),
    (
        "DELETE",
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Caller,
    ),
    (
        "POST",
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}/invoke",
        Access::Caller,
    ),
    ("GET", "/tools/tools", Access::Read),
    ("GET", "/tools/tools/search", Access::Read),
    ("POST", "/rpc", Access::Caller),
    #[cfg(feature = "mcp")]
    ("GET", "/mcp", Access::Caller),
    #[cfg(feature = "mcp")]
    ("POST", "/mcp", Access::Caller),
    #[cfg(feature = "mcp")]
    ("DELETE", "/mcp", Access::Caller),
    ("GET", "/", Access::Asset),
    ("GET", "/console/console.css", Access::Asset),
    ("GET", "/console/console.js", Access::Asset),
    ("GET", "/console/form.js", Access::Asset),
    ("GET", "/console/chat.js", Access::Asset),
    ("GET", "/console/recipes.js", Access::Asset),
    (
        "GET",
        "/console/api/levels/{bundle}/{slug}/{version}",
        Access::Read,
    ),
    ("GET", "/console/api/bundles/{bundle}/export", Access::Read),
    ("POST", "/console/api/bundles/import", Access::Caller),
    ("GET", "/console/api/chat", Access::Read),
    ("POST", "/console/api/chat", Access::Caller),
    ("POST", "/console/api/chat/approve", Access::Caller),
    ("POST", "/console/api/recipes/try", Access::Caller),
    ("GET", "/admin/tenants", Access::Operator),
    ("POST", "/admin/tenants", Access::Operator),
    ("GET", "/admin/tenants/{tenant}", Access::Operator),
    ("PATCH", "/admin/tenants/{tenant}", Access::Operator),
    ("DELETE", "/admin/tenants/{tenant}", Access::Operator),
    ("POST", "/admin/tenants/{tenant}/tokens", Access::Operator),
    (
        "DELETE",
        "/admin/tenants/{tenant}/tokens/{token}",
        Access::Operator,
    ),
];

#[test]
fn the_table_is_every_route() {
    let table: BTreeSet<(String, &str, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path, format!("{:?}", r.access)))
        .collect();
    assert_eq!(table.len(), routes().len(), "routes() lists a row twice");
    let expected: BTreeSet<(String, &str, String)> = EVERY_ROUTE
        .iter()
        .map(|(m, p, a)| ((*m).to_owned(), *p, format!("{a:?}")))
        .collect();
    let missing: Vec<_> = expected.difference(&table).collect();
    let unexpected: Vec<_> = table.difference(&expected).collect();
    assert!(
        missing.is_empty() && unexpected.is_empty(),
        "rows this test lists but routes() does not: {missing:?}\nrows of routes() this test does not list: {unexpected:?}"
    );
}

#[tokio::test]
async fn the_server_answers_every_row() {
    let f = world(ServerOptions::default());
    for route in routes() {
        let mut methods = vec![route.method.clone()];
        if route.method == Method::GET {
            methods.push(Method::HEAD);
        }
        for method in &methods {
            let r = probe_with(&f, route, method, Some(OPERATOR)).await;
            let what = format!("{method} for {}: {} {}", name(route), r.status, r.body);
            let fallback = r.status == 404
                && r.body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("no route"));
            assert!(!fallback, "the fallback answered {what}");
            // The middleware's 405 has no body; a handler's (rmcp's) says why.
            assert!(
                !(r.status == 405 && r.body.is_null()),
                "no handler for {what}"
            );
            assert_ne!(r.body["error"]["code"], "unlisted_route", "{what}");
        }
    }
}

#[tokio::test]
async fn a_listed_path_with_another_method_is_405_before_any_token() {
    let f = world(ServerOptions::default());
    for (method, uri, allow) in [
        ("DELETE", "/tools/tools", "GET,HEAD"),
        ("DELETE", "/api/v1/whoami", "GET,HEAD"),
        ("GET", "/rpc", "POST"),
        ("DELETE", "/console/api/chat", "GET,HEAD,POST"),
    ] {
        let r = crate::send(&f.app, method, uri, None).await;
        assert_eq!(r.status, 405, "{method} {uri}: {}", r.body);
        assert_eq!(r.headers["allow"], allow, "{method} {uri}");
    }
    // Not a listed path: the fallback's 404, with or without a token.
    let r = crate::send_with(
        &f.app,
        "GET",
        "/nowhere",
        None,
        &[("authorization", "Bearer tsk_nothing")],
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.body);
}
