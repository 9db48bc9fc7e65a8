//! Limits per tenant over HTTP: a request rate (429 with `Retry-After`) that leaves
//! other tenants and the operator alone, and caps on tools and bundles (403).

use serde_json::json;
use toolscout_catalog::TenantLimits;
use toolscout_server::ServerOptions;

use super::{OPERATOR, world};
use crate::send_with;

#[tokio::test]
async fn a_tenant_over_its_rate_gets_429_and_the_others_do_not() {
    let f = world(ServerOptions::default());
    let catalog = f.state.toolbox().catalog();
    let slow = TenantLimits {
        requests_per_second: 1,
        burst: 2,
        ..TenantLimits::default()
    };
    let (_, noisy) = catalog.add_tenant("noisy", slow).unwrap();
    let (_, calm) = catalog.add_tenant("calm", slow).unwrap();
    let get = |token: String| {
        let app = f.app.clone();
        async move {
            send_with(
                &app,
                "GET",
                "/api/v1/whoami",
                None,
                &[("authorization", &format!("Bearer {token}"))],
            )
            .await
        }
    };
    let noisy = noisy.reveal().to_owned();
    assert_eq!(get(noisy.clone()).await.status, 200);
    assert_eq!(get(noisy.clone()).await.status, 200);
    let started = std::time::Instant::now();
    let refused = get(noisy.clone()).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    // Held briefly (the wait for the next request is a second; at most 50 ms of it).
    assert!(started.elapsed() < std::time::Duration::from_millis(500));
    assert_eq!(refused.headers["retry-after"], "1");
    insta::assert_json_snapshot!(refused.body, @r#"
    {
      "error": {
        "code": "rate_limited",
        "message": "this tenant may send 1 requests a second (bursts of 2): try again in 1 s",
        "details": {
          "requestsPerSecond": 1,
          "burst": 2,
          "retryAfter": 1
        }
      }
    }
    "#);
    // Another tenant, with its own bucket, and the operator are served.
    assert_eq!(get(calm.reveal().to_owned()).await.status, 200);
    for _ in 0..20 {
        assert_eq!(get(OPERATOR.to_owned()).await.status, 200);
    }
    // A second later the noisy tenant has one more request.
    tokio::time::sleep(std::time::Duration::from_millis(1_050)).await;
    assert_eq!(get(noisy.clone()).await.status, 200);
    assert_eq!(get(noisy).await.status, 429);
}

#[tokio::test]
async fn a_tenant_past_its_caps_gets_403_and_nothing_is_written() {
    let f = world(ServerOptions::default());
    let catalog = f.state.toolbox().catalog();
    let small = TenantLimits {
        max_tools: 1,
        max_bundles: 1,
        ..TenantLimits::default()
    };
    let (_, token) = catalog.add_tenant("small", small).unwrap();
    let auth = format!("Bearer {}", token.reveal());
    let headers = [("authorization", auth.as_str())];
    let (one, two) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    let put = |uri: String, body: serde_json::Value| {
        let app = f.app.clone();
        async move { send_with(&app, "PUT", &uri, Some(body), &headers).await }
    };
    let r = put(format!("/tools/bundles/{one}"), json!({"slug": "one"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body.get("ownerTenantID"), None, "{}", r.body);
    let generation = catalog.generation();
    let r = put(format!("/tools/bundles/{two}"), json!({"slug": "two"})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "limit_exceeded");
    assert_eq!(
        r.body["error"]["details"],
        json!({"what": "bundles", "limit": 1, "held": 1, "adding": 1})
    );
    assert_eq!(catalog.generation(), generation);
    let tool = |name: &str| {
        json!({"name": name, "description": "A tool.", "type": "http",
            "impl": {"method": "GET", "urlTemplate": "https://api.example.com/t"}})
    };
    let r = put(
        format!("/tools/bundles/{one}/tools/a/version/1"),
        tool("small_a"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = put(
        format!("/tools/bundles/{one}/tools/b/version/1"),
        tool("small_b"),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"]["details"]["what"], "tools");
    assert!(catalog.heads().iter().all(|h| h.name != "small_b"));
}
