//! Tenants on the server (issue 39): the route table and who may use each route.
//!
//! `routes.rs`: the table is every route, and every row is answered. `auth.rs`: each
//! principal (the operator, a tenant, a wrong token, no token) on each row. A probe is one
//! request to one row, its path filled with the fixture's `weather` bundle and its
//! `get-forecast` tool (writes: a bundle nobody has), through `oneshot`. `admin.rs`: the
//! operator's API for tenants. `limits.rs`: request rates and caps. `matrix.rs`: a tenant
//! cannot tell another's tools from none, on every row.
//!
//! Over a socket, with two tenants on one server ([`two`]): `feed.rs`, the change feed
//! per view; `mcp.rs`, MCP sessions per tenant; `revoke.rs`, a revoked token's event
//! streams and MCP sessions end.

mod admin;
mod auth;
mod feed;
mod limits;
mod matrix;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod revoke;
mod routes;
mod two;

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::Value;
use toolscout_catalog::TenantLimits;
use toolscout_server::{Access, Route, ServerOptions};
use tower::ServiceExt;
use uuid::Uuid;

use crate::{Fixture, Reply, fixture_with, reply};

/// The server's own token in these tests.
const OPERATOR: &str = "s3cret";

/// A server with [`OPERATOR`] as its token over the fixture's catalog.
fn world(options: ServerOptions) -> Fixture {
    fixture_with(options.with_token(Some(OPERATOR)), true)
}

/// A new tenant of `f`'s catalog and its token's text.
fn tenant(f: &Fixture, name: &str) -> (toolscout_catalog::Tenant, String) {
    let (tenant, token) = f
        .state
        .toolbox()
        .catalog()
        .add_tenant(name, TenantLimits::default())
        .unwrap();
    (tenant, token.reveal().to_owned())
}

/// The rows of the server, but the console's static files.
fn guarded() -> impl Iterator<Item = &'static Route> {
    toolscout_server::routes()
        .iter()
        .filter(|r| r.access != Access::Asset)
}

/// The URI a probe of `route` asks: reads name the fixture's bundle and tool, writes and
/// calls a bundle nobody has, the operator's routes a tenant and a token nobody has (so
/// that the operator's probes change nothing).
fn uri(f: &Fixture, route: &Route) -> String {
    let bundle = if route.access == Access::Read {
        f.weather
    } else {
        Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0999)
    };
    let path = route
        .path
        .replace("{bundle}", &bundle.to_string())
        .replace("{slug}", "get-forecast")
        .replace("{version}", "1")
        .replace("{name}", "get_forecast")
        .replace("{tenant}", "nobody")
        .replace("{token}", "0190ffff-0000-7000-8000-000000000999");
    if path == "/tools/tools/search" {
        format!("{path}?q=forecast")
    } else {
        path
    }
}

/// One request to `route` with `method` (its own, or `HEAD` for a `GET` row) and, when
/// given, `Authorization: Bearer <token>`; a write carries `{}` as JSON.
async fn probe_with(f: &Fixture, route: &Route, method: &Method, token: Option<&str>) -> Reply {
    let mut request = Request::builder()
        .method(method)
        .uri(uri(f, route))
        .header("host", "127.0.0.1:7411")
        .header("accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let body = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
    let request = if body {
        request
            .header("content-type", "application/json")
            .body(Body::from("{}"))
    } else {
        request.body(Body::empty())
    }
    .unwrap();
    let response = f.app.clone().oneshot(request).await.unwrap();
    // An event stream does not end: its head is the answer.
    let streams = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if streams {
        return Reply {
            status: response.status(),
            headers: response.headers().clone(),
            body: Value::Null,
        };
    }
    reply(response).await
}

/// [`probe_with`] the row's own method.
async fn probe(f: &Fixture, route: &Route, token: Option<&str>) -> Reply {
    probe_with(f, route, &route.method, token).await
}

/// `METHOD /path` of a row, for messages.
fn name(route: &Route) -> String {
    format!("{} {}", route.method, route.path)
}

/// The `error.code` of a JSON error answer, `""` for any other.
fn code(r: &Reply) -> &str {
    r.body["error"]["code"].as_str().unwrap_or_default()
}
