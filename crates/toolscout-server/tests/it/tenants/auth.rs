//! Who may use each row: the operator's token, a tenant's, a wrong one, none.

use serde_json::json;
use toolscout_catalog::{Catalog, CatalogOptions, builtin};
use toolscout_server::{Access, AnonymousReads, ServerOptions, routes};

use super::{OPERATOR, code, guarded, name, probe, tenant, world};
use crate::{Fixture, send_with};

/// A second process on `f`'s catalog (as the CLI is beside a server).
fn other_process(f: &Fixture) -> Catalog {
    Catalog::open_with(
        f._catalog_dir.path(),
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap()
}

#[tokio::test]
async fn a_wrong_token_is_one_401_on_every_row_but_the_assets() {
    let f = world(ServerOptions::default());
    let unknown = format!("tsk_{}", "0123456789abcdef".repeat(4));
    let row = guarded().next().unwrap();
    // Before any tenant exists.
    let before = probe(&f, row, Some(&unknown)).await;
    assert_eq!(before.status, 401, "{}", before.body);
    insta::assert_json_snapshot!(before.body, @r#"
    {
      "error": {
        "code": "unauthorized",
        "message": "the bearer token is not valid here: send the server's token or a live tenant token"
      }
    }
    "#);
    let catalog = f.state.toolbox().catalog();
    let (acme, _live) = tenant(&f, "acme");
    let revoked = catalog.add_token(acme.id, "old laptop").unwrap();
    catalog.revoke_token(revoked.info().id).unwrap();
    let (gone, removed) = tenant(&f, "gone");
    catalog.remove_tenant(gone.id).unwrap();
    let wrong = [
        ("unknown", unknown.as_str()),
        ("revoked", revoked.reveal()),
        ("of a removed tenant", removed.as_str()),
        ("not a tenant token", "nope"),
        ("the operator's, cut", &OPERATOR[..4]),
    ];
    for route in guarded() {
        for (what, token) in wrong {
            let r = probe(&f, route, Some(token)).await;
            assert_eq!(r.status, 401, "{what} on {}: {}", name(route), r.body);
            assert_eq!(r.body, before.body, "{what} on {}", name(route));
            assert_eq!(r.headers["www-authenticate"], "Bearer");
        }
    }
    // The console's files need no token, and look at none.
    for route in routes().iter().filter(|r| r.access == Access::Asset) {
        let r = probe(&f, route, Some(&unknown)).await;
        assert_eq!(r.status, 200, "{}", name(route));
    }
}

#[tokio::test]
async fn a_tenant_is_served_on_every_row_but_the_operators() {
    let f = world(ServerOptions::default());
    let (_acme, token) = tenant(&f, "acme");
    for route in guarded().filter(|r| r.access != Access::Operator) {
        let r = probe(&f, route, Some(&token)).await;
        // Answered by the handler, in the tenant's view (the fixture's bundle is the
        // operator's, so a read of it is a 404 like a bundle nobody has; a probe of /mcp
        // without a session gets rmcp's 400, as the operator's does).
        assert!(
            r.status != 401
                && r.status != 500
                && !["forbidden", "unlisted_route"].contains(&code(&r)),
            "{}: {} {}",
            name(route),
            r.status,
            r.body
        );
    }
    let whoami = send_with(
        &f.app,
        "GET",
        "/api/v1/whoami",
        None,
        &[("authorization", &format!("Bearer {token}"))],
    )
    .await;
    insta::assert_json_snapshot!(whoami.body, @r#"
    {
      "kind": "tenant",
      "tenant": "acme",
      "limits": {
        "maxTools": 10000,
        "maxBundles": 100,
        "requestsPerSecond": 50,
        "burst": 100
      }
    }
    "#);
    for route in routes().iter().filter(|r| r.access == Access::Asset) {
        assert_eq!(probe(&f, route, Some(&token)).await.status, 200);
    }
}

#[tokio::test]
async fn a_tenant_token_on_a_server_without_a_token_is_still_the_tenant() {
    // `--no-auth` serves a request without a token as the operator; a tenant's token
    // says who it is, and is not widened to the operator.
    let f = crate::fixture();
    let (_acme, token) = tenant(&f, "acme");
    let bearer = format!("Bearer {token}");
    let r = send_with(
        &f.app,
        "GET",
        "/api/v1/whoami",
        None,
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!(r.body["kind"], "tenant", "{}", r.body);
    let r = send_with(
        &f.app,
        "GET",
        "/tools/bundles",
        None,
        &[("authorization", &bearer)],
    )
    .await;
    // The tenant's view: the built-ins, not the operator's bundle.
    assert_eq!(r.status, 200, "{}", r.body);
    let items = r.body["items"].as_array().unwrap();
    assert!(items.iter().all(|b| b["isBuiltIn"] == true), "{}", r.body);
    let r = crate::send(&f.app, "GET", "/api/v1/whoami", None).await;
    assert_eq!(r.body["kind"], "operator", "{}", r.body);
    let r = send_with(
        &f.app,
        "GET",
        "/api/v1/whoami",
        None,
        &[("authorization", "Bearer tsk_unknown")],
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.body);
}

#[tokio::test]
async fn the_operator_passes_everywhere_as_before() {
    let f = world(ServerOptions::default());
    // With tenants on the server: the operator's view is not theirs.
    let _ = tenant(&f, "acme");
    for route in guarded() {
        let r = probe(&f, route, Some(OPERATOR)).await;
        assert!(
            r.status != 401 && !["forbidden", "unlisted_route"].contains(&code(&r)),
            "{}: {} {}",
            name(route),
            r.status,
            r.body
        );
        if route.access == Access::Read {
            assert_eq!(r.status, 200, "{}: {}", name(route), r.body);
        }
    }
    let r = send_with(
        &f.app,
        "GET",
        "/api/v1/whoami",
        None,
        &[("authorization", &format!("Bearer {OPERATOR}"))],
    )
    .await;
    assert_eq!(r.body, json!({"kind": "operator"}));
    // Without a token, writes and calls are refused as before.
    for route in guarded().filter(|r| r.access == Access::Caller) {
        let r = probe(&f, route, None).await;
        assert_eq!(r.status, 401, "{}: {}", name(route), r.body);
    }
}

#[tokio::test]
async fn reads_without_a_token_see_the_operators_view_until_a_tenant_exists() {
    let f = world(ServerOptions::default());
    let reads = || guarded().filter(|r| r.access == Access::Read);
    for route in reads() {
        let r = probe(&f, route, None).await;
        assert_eq!(r.status, 200, "{}: {}", name(route), r.body);
    }
    let r = crate::send(&f.app, "GET", "/api/v1/whoami", None).await;
    assert_eq!(r.body, json!({"kind": "anonymous"}));

    // A tenant added by another process counts at the next request.
    let other = other_process(&f);
    other
        .add_tenant("acme", toolscout_catalog::TenantLimits::default())
        .unwrap();
    for route in reads() {
        let r = probe(&f, route, None).await;
        // The public view: served, without the operator's own bundle.
        assert_ne!(r.status, 401, "{}: {}", name(route), r.body);
        if r.status == 200 {
            assert!(!r.body.to_string().contains("get_forecast"), "{}", r.body);
        }
    }
}

#[tokio::test]
async fn anonymous_reads_public_and_off() {
    let public = world(ServerOptions::default().with_anonymous_reads(AnonymousReads::Public));
    let off = world(ServerOptions::default().with_anonymous_reads(AnonymousReads::Off));
    for route in guarded().filter(|r| r.access == Access::Read) {
        let r = probe(&off, route, None).await;
        assert_eq!(r.status, 401, "off, {}: {}", name(route), r.body);
        // The public view, though no tenant exists.
        let r = probe(&public, route, None).await;
        assert_ne!(r.status, 401, "public, {}: {}", name(route), r.body);
        if r.status == 200 {
            assert!(!r.body.to_string().contains("get_forecast"), "{}", r.body);
        }
    }
    let r = crate::send(&public.app, "GET", "/api/v1/whoami", None).await;
    assert_eq!(r.body, json!({"kind": "anonymous"}));
    // A token is a token whatever the anonymous reads.
    let r = send_with(
        &off.app,
        "GET",
        "/tools/bundles",
        None,
        &[("authorization", &format!("Bearer {OPERATOR}"))],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn a_token_revoked_by_another_process_is_refused_at_the_next_request() {
    let f = world(ServerOptions::default());
    let (acme, token) = tenant(&f, "acme");
    let headers = [("authorization", format!("Bearer {token}"))];
    let headers = [(headers[0].0, headers[0].1.as_str())];
    let whoami = || send_with(&f.app, "GET", "/api/v1/whoami", None, &headers);
    assert_eq!(whoami().await.status, 200);
    let other = other_process(&f);
    let info = other.tenant(&acme.name).unwrap().tokens[0].id;
    other.revoke_token(info).unwrap();
    let r = whoami().await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(code(&r), "unauthorized");
}

#[tokio::test]
async fn manifest_answers_to_a_token_are_private_and_vary_with_it() {
    let f = world(ServerOptions::default());
    let bearer = format!("Bearer {OPERATOR}");
    for uri in [
        "/api/v1/tools",
        "/api/v1/tools?limit=1",
        "/api/v1/tools/get_forecast",
    ] {
        let authorized = send_with(&f.app, "GET", uri, None, &[("authorization", &bearer)]).await;
        assert_eq!(authorized.status, 200, "{uri}");
        assert_eq!(authorized.headers["cache-control"], "private, max-age=60");
        assert!(varies_with_authorization(&authorized), "{uri}");
        let etag = authorized.headers["etag"].to_str().unwrap().to_owned();
        let revalidated = send_with(
            &f.app,
            "GET",
            uri,
            None,
            &[("authorization", &bearer), ("if-none-match", &etag)],
        )
        .await;
        assert_eq!(revalidated.status, 304, "{uri}");
        assert_eq!(revalidated.headers["cache-control"], "private, max-age=60");
        assert!(varies_with_authorization(&revalidated), "{uri}");
        let anonymous = crate::send(&f.app, "GET", uri, None).await;
        assert_eq!(anonymous.headers["cache-control"], "public, max-age=60");
        assert!(varies_with_authorization(&anonymous), "{uri}");
    }
    // Errors vary with it too: a did-you-mean depends on who asks.
    let unknown = crate::send(&f.app, "GET", "/api/v1/tools/get_forecats", None).await;
    assert_eq!(unknown.status, 404);
    assert!(varies_with_authorization(&unknown));
}

fn varies_with_authorization(r: &crate::Reply) -> bool {
    r.headers
        .get_all("vary")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim().eq_ignore_ascii_case("authorization"))
}
