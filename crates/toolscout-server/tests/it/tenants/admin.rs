//! The operator's API for tenants (`/admin/tenants`): a tenant's life over HTTP, a
//! token's text shown once, bad input refused with nothing written, a tenant refused on
//! every row of it, and sharing and owners through a bundle `PATCH`.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolscout_server::{Access, ServerOptions, routes};
use uuid::Uuid;

use super::{OPERATOR, tenant, world};
use crate::{Fixture, Reply, redact, send_with};

/// One request with `Authorization: Bearer <token>`.
async fn call(f: &Fixture, token: &str, method: &str, uri: &str, body: Option<Value>) -> Reply {
    let bearer = format!("Bearer {token}");
    send_with(&f.app, method, uri, body, &[("authorization", &bearer)]).await
}

fn generation(f: &Fixture) -> u64 {
    f.state.toolbox().catalog().generation()
}

/// What is written: the generation and every tenant (with their tokens).
fn written(f: &Fixture) -> (u64, Vec<toolscout_catalog::Tenant>) {
    (generation(f), f.state.toolbox().catalog().tenants())
}

/// [`redact`], and a token's text and prefix as their shapes.
fn shape(value: &Value) -> Value {
    match redact(value) {
        Value::String(s) if s.starts_with("tsk_") => {
            let hex = &s["tsk_".len()..];
            let all_hex = hex.bytes().all(|b| b.is_ascii_hexdigit());
            json!(format!(
                "tsk_[{} hex{}]",
                hex.len(),
                if all_hex { "" } else { "?" }
            ))
        }
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        other => other,
    }
}

/// `status code: message` of an error answer, its UUIDs and a deletion's time redacted.
fn error_line(r: &Reply) -> String {
    let error = redact(&r.body["error"]);
    let mut message = error["message"].as_str().unwrap_or("-").to_owned();
    if let Some(at) = message.find(" was deleted at ") {
        message.truncate(at);
        message.push_str(" was deleted at [time]");
    }
    format!(
        "{} {}: {message}",
        r.status.as_u16(),
        error["code"].as_str().unwrap_or("-"),
    )
}

/// `GET /api/v1/whoami` as `token`: the tenant's name, or the status.
async fn whoami(f: &Fixture, token: &str) -> String {
    let r = call(f, token, "GET", "/api/v1/whoami", None).await;
    match r.status.as_u16() {
        200 => r.body["tenant"].as_str().unwrap_or("?").to_owned(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn a_tenant_s_life_over_http() {
    let f = world(ServerOptions::default());
    // Every answer after a token's text was shown: none may hold it again.
    let mut later: Vec<String> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let seen = |r: &Reply| format!("{:?} {}", r.headers, r.body);

    let made = call(
        &f,
        OPERATOR,
        "POST",
        "/admin/tenants",
        Some(json!({"name": "acme", "limits": {"maxTools": 5}})),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.headers["cache-control"], "no-store");
    insta::assert_json_snapshot!(shape(&made.body), @r#"
    {
      "tenant": {
        "tenantID": "[uuid]",
        "name": "acme",
        "limits": {
          "maxTools": 5,
          "maxBundles": 100,
          "requestsPerSecond": 50,
          "burst": 100
        },
        "createdAt": "[time]",
        "tokens": [
          {
            "tokenID": "[uuid]",
            "prefix": "tsk_[8 hex]",
            "label": "",
            "createdAt": "[time]"
          }
        ]
      },
      "token": {
        "tokenID": "[uuid]",
        "prefix": "tsk_[8 hex]",
        "label": "",
        "createdAt": "[time]",
        "text": "tsk_[64 hex]"
      }
    }
    "#);
    let first = made.body["token"]["text"].as_str().unwrap().to_owned();
    let first_id = made.body["token"]["tokenID"].as_str().unwrap().to_owned();
    let id = made.body["tenant"]["tenantID"].as_str().unwrap().to_owned();
    assert!(first.starts_with(made.body["token"]["prefix"].as_str().unwrap()));
    texts.push(first.clone());
    assert_eq!(whoami(&f, &first).await, "acme");

    // A second tenant, whose token acme's routes do not reach.
    let beta = call(
        &f,
        OPERATOR,
        "POST",
        "/admin/tenants",
        Some(json!({"name": "beta"})),
    )
    .await;
    assert_eq!(beta.status, 201, "{}", beta.body);
    let beta_text = beta.body["token"]["text"].as_str().unwrap().to_owned();
    let beta_token = beta.body["token"]["tokenID"].as_str().unwrap().to_owned();
    texts.push(beta_text.clone());

    let added = call(
        &f,
        OPERATOR,
        "POST",
        "/admin/tenants/acme/tokens",
        Some(json!({"label": "ci"})),
    )
    .await;
    assert_eq!(added.status, 201, "{}", added.body);
    assert_eq!(added.headers["cache-control"], "no-store");
    let second = added.body["token"]["text"].as_str().unwrap().to_owned();
    let second_id = added.body["token"]["tokenID"].as_str().unwrap().to_owned();
    texts.push(second.clone());
    assert_eq!(added.body["token"]["label"], "ci");
    // The tenant as it is now: both tokens listed, neither's text.
    assert_eq!(added.body["tenant"]["tokens"].as_array().unwrap().len(), 2);
    let listed_tenant = added.body["tenant"].to_string();
    assert!(!listed_tenant.contains(&first) && !listed_tenant.contains(&second));
    assert_eq!(whoami(&f, &second).await, "acme");

    // Beta's token is not acme's to revoke: as if it did not exist.
    let foreign = call(
        &f,
        OPERATOR,
        "DELETE",
        &format!("/admin/tenants/acme/tokens/{beta_token}"),
        None,
    )
    .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert_eq!(
        foreign.body["error"]["message"],
        format!("token {beta_token} not found")
    );
    assert_eq!(whoami(&f, &beta_text).await, "beta");
    later.push(seen(&foreign));

    let revoked = call(
        &f,
        OPERATOR,
        "DELETE",
        &format!("/admin/tenants/acme/tokens/{first_id}"),
        None,
    )
    .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    insta::assert_json_snapshot!(shape(&revoked.body), @r#"
    {
      "tokenID": "[uuid]",
      "prefix": "tsk_[8 hex]",
      "label": "",
      "createdAt": "[time]",
      "revokedAt": "[time]"
    }
    "#);
    later.push(seen(&revoked));
    assert_eq!(whoami(&f, &first).await, "401");
    assert_eq!(whoami(&f, &second).await, "acme");
    // Again: nothing changes, the token is answered as it is.
    let again = call(
        &f,
        OPERATOR,
        "DELETE",
        &format!("/admin/tenants/acme/tokens/{first_id}"),
        None,
    )
    .await;
    assert_eq!(again.body, revoked.body);

    let limits = call(
        &f,
        OPERATOR,
        "PATCH",
        "/admin/tenants/acme",
        Some(json!({"limits": {"requestsPerSecond": 7}})),
    )
    .await;
    assert_eq!(limits.status, 200, "{}", limits.body);
    assert_eq!(
        limits.body["limits"],
        json!({"maxTools": 5, "maxBundles": 100, "requestsPerSecond": 7, "burst": 100})
    );
    later.push(seen(&limits));
    let who = call(&f, &second, "GET", "/api/v1/whoami", None).await;
    assert_eq!(who.body["limits"], limits.body["limits"]);

    let by_name = call(&f, OPERATOR, "GET", "/admin/tenants/acme", None).await;
    let by_id = call(&f, OPERATOR, "GET", &format!("/admin/tenants/{id}"), None).await;
    assert_eq!(by_name.status, 200, "{}", by_name.body);
    assert_eq!(by_name.body, by_id.body);
    assert_eq!(by_name.headers["cache-control"], "no-store");
    later.extend([seen(&by_name), seen(&by_id)]);
    let listed = call(&f, OPERATOR, "GET", "/admin/tenants", None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let items = listed.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], by_name.body);
    later.push(seen(&listed));

    let removed = call(&f, OPERATOR, "DELETE", "/admin/tenants/acme", None).await;
    assert_eq!(removed.status, 200, "{}", removed.body);
    insta::assert_json_snapshot!(shape(&removed.body), @r#"
    {
      "tenantID": "[uuid]",
      "name": "acme",
      "limits": {
        "maxTools": 5,
        "maxBundles": 100,
        "requestsPerSecond": 7,
        "burst": 100
      },
      "createdAt": "[time]",
      "removedAt": "[time]",
      "tokens": [
        {
          "tokenID": "[uuid]",
          "prefix": "tsk_[8 hex]",
          "label": "",
          "createdAt": "[time]",
          "revokedAt": "[time]"
        },
        {
          "tokenID": "[uuid]",
          "prefix": "tsk_[8 hex]",
          "label": "ci",
          "createdAt": "[time]",
          "revokedAt": "[time]"
        }
      ]
    }
    "#);
    assert_eq!(removed.body["tokens"][1]["tokenID"], json!(second_id));
    later.push(seen(&removed));
    // Every token of it is refused now; beta's is not.
    assert_eq!(whoami(&f, &first).await, "401");
    assert_eq!(whoami(&f, &second).await, "401");
    assert_eq!(whoami(&f, &beta_text).await, "beta");

    // Its name is free, its id still answers (as removed), and removing it again is 404.
    let gone = call(&f, OPERATOR, "GET", "/admin/tenants/acme", None).await;
    assert_eq!(error_line(&gone), "404 not_found: tenant acme not found");
    let kept = call(&f, OPERATOR, "GET", &format!("/admin/tenants/{id}"), None).await;
    assert_eq!(kept.body, removed.body);
    let twice = call(
        &f,
        OPERATOR,
        "DELETE",
        &format!("/admin/tenants/{id}"),
        None,
    )
    .await;
    assert_eq!(error_line(&twice), "404 not_found: tenant [uuid] not found");
    let reborn = call(
        &f,
        OPERATOR,
        "POST",
        "/admin/tenants",
        Some(json!({"name": "acme"})),
    )
    .await;
    assert_eq!(reborn.status, 201, "{}", reborn.body);
    assert_ne!(reborn.body["tenant"]["tenantID"], json!(id));
    assert_eq!(whoami(&f, &second).await, "401");
    later.extend([seen(&gone), seen(&kept), seen(&twice)]);
    let listed = call(&f, OPERATOR, "GET", "/admin/tenants", None).await;
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 3);
    later.push(seen(&listed));

    for answer in &later {
        for text in &texts {
            assert!(
                !answer.contains(text.as_str()),
                "a token's text in {answer}"
            );
        }
        assert!(!answer.contains("sha256"), "{answer}");
    }
}

#[tokio::test]
async fn bad_input_is_refused_and_nothing_is_written() {
    let f = world(ServerOptions::default());
    let _ = tenant(&f, "acme");
    let fresh = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0abc);
    let tenants = "/admin/tenants";
    let cases: Vec<(&str, &str, String, Option<Value>)> = vec![
        (
            "empty name",
            "POST",
            tenants.into(),
            Some(json!({"name": ""})),
        ),
        (
            "a path",
            "POST",
            tenants.into(),
            Some(json!({"name": "../x"})),
        ),
        (
            "a slash",
            "POST",
            tenants.into(),
            Some(json!({"name": "a/b"})),
        ),
        ("a dot", "POST", tenants.into(), Some(json!({"name": "."}))),
        (
            "upper case",
            "POST",
            tenants.into(),
            Some(json!({"name": "UPPER"})),
        ),
        (
            "64 characters",
            "POST",
            tenants.into(),
            Some(json!({"name": "x".repeat(64)})),
        ),
        (
            "reserved",
            "POST",
            tenants.into(),
            Some(json!({"name": "admin"})),
        ),
        (
            "a dash at an end",
            "POST",
            tenants.into(),
            Some(json!({"name": "acme-"})),
        ),
        (
            "taken",
            "POST",
            tenants.into(),
            Some(json!({"name": "acme"})),
        ),
        ("no name", "POST", tenants.into(), Some(json!({}))),
        ("a number", "POST", tenants.into(), Some(json!({"name": 7}))),
        (
            "unknown field",
            "POST",
            tenants.into(),
            Some(json!({"name": "ok", "color": "red"})),
        ),
        (
            "unknown limit",
            "POST",
            tenants.into(),
            Some(json!({"name": "ok", "limits": {"rate": 5}})),
        ),
        (
            "rate 0",
            "POST",
            tenants.into(),
            Some(json!({"name": "ok", "limits": {"requestsPerSecond": 0}})),
        ),
        (
            "burst 0",
            "POST",
            tenants.into(),
            Some(json!({"name": "ok", "limits": {"burst": 0}})),
        ),
        (
            "negative",
            "POST",
            tenants.into(),
            Some(json!({"name": "ok", "limits": {"maxTools": -1}})),
        ),
        (
            "patch rate 0",
            "PATCH",
            "/admin/tenants/acme".into(),
            Some(json!({"limits": {"requestsPerSecond": 0}})),
        ),
        (
            "patch without limits",
            "PATCH",
            "/admin/tenants/acme".into(),
            Some(json!({})),
        ),
        (
            "patch a name",
            "PATCH",
            "/admin/tenants/acme".into(),
            Some(json!({"limits": {}, "name": "other"})),
        ),
        (
            "patch nobody",
            "PATCH",
            "/admin/tenants/nobody".into(),
            Some(json!({"limits": {}})),
        ),
        (
            "a path as the tenant",
            "GET",
            "/admin/tenants/..%2Fx".into(),
            None,
        ),
        (
            "token for nobody",
            "POST",
            "/admin/tenants/nobody/tokens".into(),
            Some(json!({})),
        ),
        (
            "long label",
            "POST",
            "/admin/tenants/acme/tokens".into(),
            Some(json!({"label": "l".repeat(101)})),
        ),
        (
            "label with a newline",
            "POST",
            "/admin/tenants/acme/tokens".into(),
            Some(json!({"label": "a\nb"})),
        ),
        (
            "token field",
            "POST",
            "/admin/tenants/acme/tokens".into(),
            Some(json!({"text": "tsk_mine"})),
        ),
        (
            "revoke by text",
            "DELETE",
            format!("/admin/tenants/acme/tokens/tsk_{}", "ab".repeat(32)),
            None,
        ),
        (
            "revoke nothing",
            "DELETE",
            format!("/admin/tenants/acme/tokens/{fresh}"),
            None,
        ),
        (
            "purge",
            "DELETE",
            "/admin/tenants/acme?purge=true".into(),
            None,
        ),
        (
            "remove nobody",
            "DELETE",
            "/admin/tenants/nobody".into(),
            None,
        ),
    ];
    let mut lines = Vec::new();
    for (what, method, uri, body) in cases {
        let before = written(&f);
        let r = call(&f, OPERATOR, method, &uri, body).await;
        assert!(
            r.status.is_client_error(),
            "{what}: {} {}",
            r.status,
            r.body
        );
        assert_eq!(written(&f), before, "{what}: something was written");
        lines.push(format!("{what}: {}", error_line(&r)));
    }
    insta::assert_snapshot!(lines.join("\n"), @r#"
    empty name: 400 invalid: invalid tenant name "": a tenant name cannot be empty
    a path: 400 invalid: invalid tenant name "../x": a tenant name holds only a-z, 0-9 and '-'
    a slash: 400 invalid: invalid tenant name "a/b": a tenant name holds only a-z, 0-9 and '-'
    a dot: 400 invalid: invalid tenant name ".": a tenant name holds only a-z, 0-9 and '-'
    upper case: 400 invalid: invalid tenant name "UPPER": a tenant name holds only a-z, 0-9 and '-'
    64 characters: 400 invalid: invalid tenant name "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": a tenant name has at most 63 characters
    reserved: 400 invalid: invalid tenant name "admin": the name is reserved
    a dash at an end: 400 invalid: invalid tenant name "acme-": a tenant name cannot start or end with '-'
    taken: 409 conflict: a tenant named 'acme' exists: choose another name, or remove it first
    no name: 400 invalid: Failed to deserialize the JSON body into the target type: missing field `name` at line 1 column 2
    a number: 400 invalid: Failed to deserialize the JSON body into the target type: name: invalid type: integer `7`, expected a string at line 1 column 9
    unknown field: 400 invalid: Failed to deserialize the JSON body into the target type: color: unknown field `color`, expected `name` or `limits` at line 1 column 20
    unknown limit: 400 invalid: Failed to deserialize the JSON body into the target type: limits.rate: unknown field `rate`, expected one of `maxTools`, `maxBundles`, `requestsPerSecond`, `burst` at line 1 column 29
    rate 0: 400 invalid: invalid limits: requestsPerSecond must be at least 1 (to stop a tenant, remove it or revoke its tokens)
    burst 0: 400 invalid: invalid limits: burst must be at least 1 (to stop a tenant, remove it or revoke its tokens)
    negative: 400 invalid: Failed to deserialize the JSON body into the target type: limits.maxTools: invalid value: integer `-1`, expected u32 at line 1 column 36
    patch rate 0: 400 invalid: invalid limits: requestsPerSecond must be at least 1 (to stop a tenant, remove it or revoke its tokens)
    patch without limits: 400 invalid: Failed to deserialize the JSON body into the target type: missing field `limits` at line 1 column 2
    patch a name: 400 invalid: Failed to deserialize the JSON body into the target type: name: unknown field `name`, expected `limits` at line 1 column 19
    patch nobody: 404 not_found: tenant nobody not found
    a path as the tenant: 404 not_found: tenant ../x not found
    token for nobody: 404 not_found: tenant nobody not found
    long label: 400 invalid: invalid token label: 101 characters; a label has at most 100 and no control characters
    label with a newline: 400 invalid: invalid token label: 3 characters, with a control character; a label has at most 100 and no control characters
    token field: 400 invalid: Failed to deserialize the JSON body into the target type: text: unknown field `text`, expected `label` at line 1 column 7
    revoke by text: 400 invalid: a token is revoked by its id (tokenID, as GET /admin/tenants/{tenant} lists them), never by its text
    revoke nothing: 404 not_found: token [uuid] not found
    purge: 400 invalid: DELETE /admin/tenants/{tenant} takes no query parameters: removing a tenant revokes its tokens and keeps its bundles; delete those with DELETE /tools/bundles/{bundle}
    remove nobody: 404 not_found: tenant nobody not found
    "#);
}

#[tokio::test]
async fn a_tenant_is_refused_on_every_admin_row() {
    let f = world(ServerOptions::default());
    let (acme, token) = tenant(&f, "acme");
    let token_id = acme.tokens[0].id;
    // Each row of the operator's, asked as it would be meant.
    let requests: Vec<(&str, &str, String, Option<Value>)> = vec![
        ("GET", "/admin/tenants", "/admin/tenants".into(), None),
        (
            "POST",
            "/admin/tenants",
            "/admin/tenants".into(),
            Some(json!({"name": "evil"})),
        ),
        (
            "GET",
            "/admin/tenants/{tenant}",
            "/admin/tenants/acme".into(),
            None,
        ),
        (
            "PATCH",
            "/admin/tenants/{tenant}",
            "/admin/tenants/acme".into(),
            Some(json!({"limits": {"requestsPerSecond": 100000}})),
        ),
        (
            "DELETE",
            "/admin/tenants/{tenant}",
            "/admin/tenants/acme".into(),
            None,
        ),
        (
            "POST",
            "/admin/tenants/{tenant}/tokens",
            "/admin/tenants/acme/tokens".into(),
            Some(json!({"label": "mine"})),
        ),
        (
            "DELETE",
            "/admin/tenants/{tenant}/tokens/{token}",
            format!("/admin/tenants/acme/tokens/{token_id}"),
            None,
        ),
    ];
    let asked: BTreeSet<(String, &str)> = requests
        .iter()
        .map(|(m, row, _, _)| ((*m).to_owned(), *row))
        .collect();
    let operator_rows: BTreeSet<(String, &str)> = routes()
        .iter()
        .filter(|r| r.access == Access::Operator)
        .map(|r| (r.method.to_string(), r.path))
        .collect();
    assert_eq!(asked, operator_rows, "every row of the operator's is asked");

    let before = written(&f);
    let mut refusals = BTreeSet::new();
    for (method, _, uri, body) in &requests {
        let r = call(&f, &token, method, uri, body.clone()).await;
        assert_eq!(r.status, 403, "{method} {uri}: {}", r.body);
        refusals.insert(r.body.to_string());
        let bare = send_with(&f.app, method, uri, body.clone(), &[]).await;
        assert_eq!(bare.status, 401, "{method} {uri} without a token");
        let wrong = call(&f, "tsk_unknown", method, uri, body.clone()).await;
        assert_eq!(wrong.status, 401, "{method} {uri} with a wrong token");
    }
    assert_eq!(written(&f), before, "a refusal wrote");
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    let refusal: Value = serde_json::from_str(refusals.first().unwrap()).unwrap();
    insta::assert_json_snapshot!(refusal, @r#"
    {
      "error": {
        "code": "forbidden",
        "message": "only the server's own token may use this route"
      }
    }
    "#);
    assert_eq!(whoami(&f, &token).await, "acme");
}

/// `PATCH uri` as `token`.
async fn patch(f: &Fixture, token: &str, uri: &str, body: Value) -> Reply {
    call(f, token, "PATCH", uri, Some(body)).await
}

/// Whether `token`'s `GET /tools/bundles` lists the bundle `slug`.
async fn lists(f: &Fixture, token: &str, slug: &str) -> bool {
    let r = call(f, token, "GET", "/tools/bundles?includeDisabled=true", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["slug"] == slug)
}

#[tokio::test]
async fn the_operator_shares_and_gives_bundles_through_a_patch() {
    let f = world(ServerOptions::default());
    let (a, a_token) = tenant(&f, "tenant-a");
    let (b, b_token) = tenant(&f, "tenant-b");
    let uri = format!("/tools/bundles/{}", f.weather);
    let (a_token, b_token) = (a_token.as_str(), b_token.as_str());
    // The operator's bundle: no tenant sees it.
    assert!(!lists(&f, a_token, "weather").await);
    assert!(!lists(&f, b_token, "weather").await);

    let shared = patch(&f, OPERATOR, &uri, json!({"shared": true})).await;
    assert_eq!(shared.status, 200, "{}", shared.body);
    assert_eq!(shared.body["isShared"], true);
    assert!(shared.body.get("ownerTenantID").is_none());
    assert!(lists(&f, a_token, "weather").await);
    assert!(lists(&f, b_token, "weather").await);
    // Its tools too.
    let tools = call(&f, b_token, "GET", "/tools/tools", None).await;
    assert!(
        tools.body.to_string().contains("get_forecast"),
        "{}",
        tools.body
    );

    let given = patch(&f, OPERATOR, &uri, json!({"owner": "tenant-a"})).await;
    assert_eq!(given.status, 200, "{}", given.body);
    assert_eq!(given.body["ownerTenantID"], json!(a.id));
    assert_eq!(given.body["isShared"], true);
    assert!(lists(&f, b_token, "weather").await);
    // Each tenant is told whether the bundle is its own to change (#63: the console
    // showed a tenant controls the server then refused).
    for (token, own) in [(a_token, true), (b_token, false)] {
        let listed = call(&f, token, "GET", "/tools/bundles", None).await;
        let weather = listed.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["slug"] == "weather")
            .cloned()
            .unwrap();
        assert_eq!(weather["isOwn"], own, "{weather}");
        assert!(weather.get("ownerTenantID").is_none(), "{weather}");
    }

    let unshared = patch(&f, OPERATOR, &uri, json!({"shared": false})).await;
    assert_eq!(unshared.status, 200, "{}", unshared.body);
    assert!(unshared.body.get("isShared").is_none());
    assert!(lists(&f, a_token, "weather").await, "its owner sees it");
    assert!(!lists(&f, b_token, "weather").await);

    // Its owner may turn it off and on, not share it nor give it away.
    let before = generation(&f);
    for body in [
        json!({"shared": true}),
        json!({"owner": null}),
        json!({"owner": "tenant-b", "isEnabled": false}),
    ] {
        let r = patch(&f, a_token, &uri, body.clone()).await;
        assert_eq!(r.status, 403, "{body}: {}", r.body);
        assert_eq!(
            error_line(&r),
            "403 forbidden: only the server's own token may share a bundle or change its owner"
        );
    }
    // Nor may another tenant, whose refusal does not tell the bundle exists.
    let r = patch(&f, b_token, &uri, json!({"shared": true})).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(generation(&f), before, "a refusal wrote");
    assert!(!lists(&f, b_token, "weather").await);
    let off = patch(&f, a_token, &uri, json!({"isEnabled": false})).await;
    assert_eq!(off.status, 200, "{}", off.body);
    assert_eq!(off.body["isEnabled"], false);
    assert!(
        off.body.get("ownerTenantID").is_none(),
        "the operator's field"
    );

    // All three in one request, the owner by id.
    let all = patch(
        &f,
        OPERATOR,
        &uri,
        json!({"owner": b.id.to_string(), "shared": true, "isEnabled": true}),
    )
    .await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert_eq!(
        (
            &all.body["ownerTenantID"],
            &all.body["isShared"],
            &all.body["isEnabled"]
        ),
        (&json!(b.id), &json!(true), &json!(true))
    );
    assert!(lists(&f, a_token, "weather").await, "shared");
    let back = patch(&f, OPERATOR, &uri, json!({"owner": null, "shared": false})).await;
    assert_eq!(back.status, 200, "{}", back.body);
    assert!(back.body.get("ownerTenantID").is_none());
    assert!(!lists(&f, a_token, "weather").await);
    assert!(!lists(&f, b_token, "weather").await);

    // Refusals change nothing, the enabled flag included.
    let files = toolscout_catalog::builtin::bundles()[0].id;
    let deleted = Uuid::now_v7();
    for (method, path, body) in [
        (
            "PUT",
            format!("/tools/bundles/{deleted}"),
            json!({"slug": "old"}),
        ),
        ("DELETE", format!("/tools/bundles/{deleted}"), Value::Null),
    ] {
        let body = (!body.is_null()).then_some(body);
        let r = call(&f, OPERATOR, method, &path, body).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    // Tenant A's own bundle `weather`: the operator's cannot become A's too.
    let mine = call(
        &f,
        a_token,
        "PUT",
        &format!("/tools/bundles/{}", Uuid::now_v7()),
        Some(json!({"slug": "weather"})),
    )
    .await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    let cases = [
        ("nothing", uri.clone(), json!({})),
        ("unknown field", uri.clone(), json!({"color": "red"})),
        ("not a bool", uri.clone(), json!({"shared": "yes"})),
        (
            "unknown owner",
            uri.clone(),
            json!({"owner": "nobody", "isEnabled": false}),
        ),
        (
            "slug the owner has",
            uri.clone(),
            json!({"owner": "tenant-a", "shared": true, "isEnabled": false}),
        ),
        (
            "built-in",
            format!("/tools/bundles/{files}"),
            json!({"shared": true, "isEnabled": false}),
        ),
        (
            "deleted",
            format!("/tools/bundles/{deleted}"),
            json!({"shared": true, "isEnabled": false}),
        ),
        (
            "no bundle",
            format!("/tools/bundles/{}", Uuid::from_u128(7)),
            json!({"shared": true}),
        ),
    ];
    let mut lines = Vec::new();
    for (what, path, body) in cases {
        let before = generation(&f);
        let r = call(&f, OPERATOR, "PATCH", &path, Some(body)).await;
        assert!(
            r.status.is_client_error(),
            "{what}: {} {}",
            r.status,
            r.body
        );
        assert_eq!(generation(&f), before, "{what}: something was written");
        lines.push(format!("{what}: {}", error_line(&r)));
    }
    insta::assert_snapshot!(lines.join("\n"), @r#"
    nothing: 400 invalid: a bundle PATCH changes isEnabled, shared or owner: send at least one
    unknown field: 400 invalid: Failed to deserialize the JSON body into the target type: color: unknown field `color`, expected one of `isEnabled`, `shared`, `owner` at line 1 column 8
    not a bool: 400 invalid: Failed to deserialize the JSON body into the target type: shared: invalid type: string "yes", expected a boolean at line 1 column 15
    unknown owner: 404 not_found: tenant nobody not found
    slug the owner has: 409 conflict: bundle slug 'weather' is taken by bundle [uuid]: choose another slug
    built-in: 409 built_in: bundle 'files' is built in: only its enabled flag can change
    deleted: 409 bundle_deleted: bundle 'old' ([uuid]) was deleted at [time]
    no bundle: 404 not_found: bundle [uuid] not found
    "#);
    let catalog = f.state.toolbox().catalog();
    let weather = catalog.bundle(f.weather).unwrap();
    assert!(weather.is_enabled && !weather.shared && weather.owner.is_none());
    assert!(catalog.bundle(files).unwrap().is_enabled);
    assert!(!catalog.bundle(deleted).unwrap().shared);
}
