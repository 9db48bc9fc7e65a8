//! The route table: every route the server answers, with who may use it.
//!
//! [`routes`] is the one list of the server's routes. [`crate::router`] registers each
//! row's handler through a `match` on its method and path (and `console::routes` the
//! console's rows), which panics when the router is built on a row it has no handler
//! for; the `/mcp` rows are one nested rmcp service. The `authenticate` middleware
//! (`auth.rs`) looks each request's row up by method and `MatchedPath` and lets it pass
//! by the row's [`Access`]; a route registered without a row is refused (500
//! `unlisted_route`), so a route cannot be added without saying who may use it.
//!
//! **Rationale:** one table for the routing, the access and the tests: the tests compare
//! it with their own list of every route and probe each row, so a new route is either in
//! every one of them or fails.

use axum::http::Method;

/// Who may use a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Static files, the console's and the API's own document: anyone, with or without
    /// a token (a token is not even looked at).
    Asset,
    /// A `GET` read: the operator or a tenant; without a token, the anonymous view
    /// ([`crate::AnonymousReads`]). A wrong token is refused, never read as none.
    Read,
    /// Writes, calls, `/rpc`, `/mcp`, the console's import and chat: the operator or a
    /// tenant.
    Caller,
    /// The operator only (the server's own token); 403 for a tenant.
    Operator,
}

/// One route: a method, a path (as registered with axum, `{name}` for a segment) and
/// who may use it. `HEAD` is answered by the `GET` row of its path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Route {
    /// The method.
    pub method: Method,
    /// The path pattern, e.g. `/api/v1/tools/{name}`.
    pub path: &'static str,
    /// Who may use it.
    pub access: Access,
}

const fn row(method: Method, path: &'static str, access: Access) -> Route {
    Route {
        method,
        path,
        access,
    }
}

/// The path of the MCP service, nested with everything under it.
pub(crate) const MCP_PATH: &str = "/mcp";

static ROUTES: &[Route] = &[
    // The tool-discovery manifest.
    row(Method::GET, "/api/v1/tools", Access::Read),
    row(Method::GET, "/api/v1/tools/{name}", Access::Read),
    row(Method::POST, "/api/v1/tools/{name}/invoke", Access::Caller),
    row(Method::GET, "/api/v1/events", Access::Read),
    row(Method::GET, "/api/v1/whoami", Access::Read),
    // The API's own OpenAPI document (`api_doc`).
    row(Method::GET, "/api/v1/openapi.json", Access::Asset),
    // The REST API of the tools spec.
    row(Method::GET, "/tools/bundles", Access::Read),
    row(Method::POST, "/tools/bundles", Access::Caller),
    row(Method::PUT, "/tools/bundles/{bundle}", Access::Caller),
    row(Method::PATCH, "/tools/bundles/{bundle}", Access::Caller),
    row(Method::DELETE, "/tools/bundles/{bundle}", Access::Caller),
    row(
        Method::GET,
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Read,
    ),
    row(
        Method::PUT,
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Caller,
    ),
    row(
        Method::PATCH,
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Caller,
    ),
    row(
        Method::DELETE,
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}",
        Access::Caller,
    ),
    row(
        Method::POST,
        "/tools/bundles/{bundle}/tools/{slug}/version/{version}/invoke",
        Access::Caller,
    ),
    row(Method::GET, "/tools/tools", Access::Read),
    row(Method::GET, "/tools/tools/search", Access::Read),
    // JSON-RPC 2.0 and MCP: every request needs a token, reads too.
    row(Method::POST, "/rpc", Access::Caller),
    #[cfg(feature = "mcp")]
    row(Method::GET, MCP_PATH, Access::Caller),
    #[cfg(feature = "mcp")]
    row(Method::POST, MCP_PATH, Access::Caller),
    #[cfg(feature = "mcp")]
    row(Method::DELETE, MCP_PATH, Access::Caller),
    // The web console (`console::routes`).
    row(Method::GET, "/", Access::Asset),
    row(Method::GET, "/console/console.css", Access::Asset),
    row(Method::GET, "/console/console.js", Access::Asset),
    row(Method::GET, "/console/form.js", Access::Asset),
    row(Method::GET, "/console/chat.js", Access::Asset),
    row(Method::GET, "/console/recipes.js", Access::Asset),
    row(
        Method::GET,
        "/console/api/levels/{bundle}/{slug}/{version}",
        Access::Read,
    ),
    row(
        Method::GET,
        "/console/api/bundles/{bundle}/export",
        Access::Read,
    ),
    row(Method::POST, "/console/api/bundles/import", Access::Caller),
    row(Method::GET, "/console/api/chat", Access::Read),
    row(Method::POST, "/console/api/chat", Access::Caller),
    row(Method::POST, "/console/api/chat/approve", Access::Caller),
    row(Method::POST, "/console/api/recipes/try", Access::Caller),
    // The operator's API for tenants (`admin`): a tenant's token is 403 `forbidden`, a
    // request without a token 401.
    row(Method::GET, "/admin/tenants", Access::Operator),
    row(Method::POST, "/admin/tenants", Access::Operator),
    row(Method::GET, "/admin/tenants/{tenant}", Access::Operator),
    row(Method::PATCH, "/admin/tenants/{tenant}", Access::Operator),
    row(Method::DELETE, "/admin/tenants/{tenant}", Access::Operator),
    row(
        Method::POST,
        "/admin/tenants/{tenant}/tokens",
        Access::Operator,
    ),
    row(
        Method::DELETE,
        "/admin/tenants/{tenant}/tokens/{token}",
        Access::Operator,
    ),
];

/// Every route of [`crate::router`], with who may use it (`HEAD` as `GET`): the one
/// source of the routing and of the access rules (see [`Access`]).
///
/// ```
/// use toolscout_server::{Access, routes};
///
/// let manifest = routes()
///     .iter()
///     .find(|r| r.method == "GET" && r.path == "/api/v1/tools")
///     .expect("a row");
/// assert_eq!(manifest.access, Access::Read);
/// ```
pub fn routes() -> &'static [Route] {
    ROUTES
}

/// Whether a path is the console's (registered by `console::routes`).
pub(crate) fn is_console(path: &str) -> bool {
    path == "/" || path.starts_with("/console/")
}

/// What the table says of a request.
#[derive(Debug)]
pub(crate) enum Row {
    /// Its route.
    Listed(&'static Route),
    /// Its path is in the table, its method is not: these are.
    OtherMethods(Vec<&'static Method>),
    /// A route the router matched that the table does not list.
    Unlisted,
}

/// The row of `method` (`HEAD` read as `GET`) on the route `path`.
pub(crate) fn row_of(method: &Method, path: &str) -> Row {
    let method = if method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    let mut others = Vec::new();
    for route in ROUTES.iter().filter(|r| r.path == path) {
        if route.method == method {
            return Row::Listed(route);
        }
        others.push(&route.method);
    }
    if others.is_empty() {
        Row::Unlisted
    } else {
        Row::OtherMethods(others)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_unique_and_reads_are_gets() {
        let mut seen = std::collections::HashSet::new();
        for r in routes() {
            assert!(
                seen.insert((r.method.clone(), r.path)),
                "{} {} twice",
                r.method,
                r.path
            );
            if matches!(r.access, Access::Read | Access::Asset) {
                assert_eq!(r.method, Method::GET, "{} {}", r.method, r.path);
            }
            assert_ne!(r.method, Method::HEAD, "HEAD is answered by the GET row");
        }
    }

    #[test]
    fn head_is_get_and_other_methods_are_named() {
        assert!(
            matches!(row_of(&Method::HEAD, "/api/v1/tools"), Row::Listed(r) if r.method == Method::GET)
        );
        match row_of(&Method::DELETE, "/tools/tools") {
            Row::OtherMethods(m) => assert_eq!(m, [&Method::GET]),
            other => panic!("{other:?}"),
        }
        assert!(matches!(row_of(&Method::GET, "/nowhere"), Row::Unlisted));
    }
}
