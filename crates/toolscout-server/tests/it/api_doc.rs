//! The server's own API document (`GET /api/v1/openapi.json`) is the route table, every
//! operation with an example; and a bundle is made without a client-chosen id.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolscout_server::{api_document, routes};

use crate::{fixture, send, send_with};

/// Regression (issue 63): the write API was found only in the code.
#[test]
fn the_api_document_lists_every_route_of_the_table_and_no_other() {
    let doc = api_document();
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| (method.to_uppercase(), path.clone()))
        })
        .collect();
    let table: BTreeSet<(String, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned()))
        .collect();
    let undocumented: Vec<_> = table.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&table).collect();
    assert!(
        undocumented.is_empty() && stale.is_empty(),
        "routes the document leaves out: {undocumented:?}\noperations of no route: {stale:?}"
    );
}

#[test]
fn every_operation_has_an_example_of_its_body_and_of_its_answer() {
    let doc = api_document();
    let mut missing = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{} {path}", method.to_uppercase());
            if op["summary"].as_str().is_none_or(str::is_empty) {
                missing.push(format!("{at}: summary"));
            }
            if let Some(content) = op["requestBody"]["content"].as_object() {
                for (media, m) in content {
                    if media == "application/json" && m.get("example").is_none() {
                        missing.push(format!("{at}: request example"));
                    }
                }
            }
            let answers = op["responses"].as_object().unwrap();
            let success = answers
                .iter()
                .find(|(status, _)| status.starts_with('2'))
                .map(|(_, a)| a);
            match success {
                None => missing.push(format!("{at}: no 2xx answer")),
                Some(a) => {
                    for (media, m) in a["content"].as_object().into_iter().flatten() {
                        let binary = m["schema"]["format"] == "binary";
                        let static_file = media.starts_with("text/") && path != "/api/v1/events";
                        if !binary && !static_file && m.get("example").is_none() {
                            missing.push(format!("{at}: answer example ({media})"));
                        }
                    }
                }
            }
            // Every path parameter is declared.
            for segment in path.split('/').filter(|s| s.starts_with('{')) {
                let name = segment.trim_matches(['{', '}']);
                let declared = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["name"] == name && p["in"] == "path");
                if !declared {
                    missing.push(format!("{at}: path parameter {name}"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[tokio::test]
async fn the_document_is_served_to_anyone_with_the_crate_s_version() {
    let f = crate::fixture_with(
        toolscout_server::ServerOptions::default().with_token(Some("s3cret")),
        true,
    );
    let r = send(&f.app, "GET", "/api/v1/openapi.json", None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["openapi"], "3.1.0");
    assert_eq!(r.body["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(&r.body, api_document());
}

/// Regression (issue 63): a client had to invent a bundle's id, and a UUIDv4 was refused.
#[tokio::test]
async fn a_bundle_post_makes_its_id_and_answers_201_with_where_it_is() {
    let f = fixture();
    let body = json!({"slug": "maps", "displayName": "Maps", "description": "Places and routes."});
    let r = send(&f.app, "POST", "/tools/bundles", Some(body.clone())).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = uuid::Uuid::parse_str(r.body["bundleID"].as_str().unwrap()).unwrap();
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(
        r.headers["location"].to_str().unwrap(),
        format!("/tools/bundles/{id}")
    );
    assert_eq!(
        (&r.body["slug"], &r.body["isEnabled"]),
        (&json!("maps"), &json!(true))
    );
    // It is there, and a tool can be put in it.
    let tool = json!({"name": "route_between", "description": "A route between two places.", "type": "http",
        "impl": {"method": "GET", "urlTemplate": "https://maps.example.com/route"}});
    let put = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{id}/tools/route-between/version/1"),
        Some(tool),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    // The same slug again: a conflict, nothing made.
    let again = send(&f.app, "POST", "/tools/bundles", Some(body)).await;
    assert_eq!(again.status, 409, "{}", again.body);
    let listed = send(&f.app, "GET", "/tools/bundles", None).await;
    let slugs: Vec<&Value> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["slug"])
        .filter(|s| *s == "maps")
        .collect();
    assert_eq!(slugs.len(), 1, "{}", listed.body);
    // A body that is no bundle is refused saying so.
    let bad = send_with(
        &f.app,
        "POST",
        "/tools/bundles",
        Some(json!({"name": "x"})),
        &[],
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
}
