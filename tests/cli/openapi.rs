//! `toolscout import openapi`: HTTP tools from an OpenAPI document, called on loopback.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;

use insta::assert_snapshot;
use serde_json::json;

use crate::Env;

#[test]
fn openapi_operations_become_http_tools() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let api = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(stream.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        let body = r#"{"id": 7, "name": "Rex"}"#;
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        line
    });
    let doc = json!({
        "openapi": "3.0.0",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": format!("http://{addr}/v1")}],
        "paths": {
            "/pets/{petId}": {"get": {
                "operationId": "getPet",
                "summary": "Get one pet by id",
                "parameters": [
                    {"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}, "description": "The pet's id"},
                    {"name": "verbose", "in": "query", "schema": {"type": "boolean"}}
                ]
            }},
            "/pets": {"post": {
                "operationId": "createPet",
                "summary": "Add a pet",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
            }}
        },
        "components": {"schemas": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
    });
    let env = Env::new();
    let file = env.path().join("pets.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    assert_snapshot!(env.check(&["import", "openapi", file.to_str().unwrap()]));
    assert_snapshot!(env.check(&["describe", "createPet", "--level", "3"]));
    let host = format!("{}:{}", addr.ip(), addr.port());
    let out = env.all(&[
        "--allow-host",
        &host,
        "--allow-private",
        "call",
        "getPet",
        "--petId",
        "7",
        "--verbose",
        "true",
    ]);
    assert_snapshot!(out);
    assert_eq!(
        api.join().unwrap(),
        "GET /v1/pets/7?verbose=true HTTP/1.1\r\n",
        "the optional query parameter is sent when given"
    );
}

#[test]
fn a_yaml_document_with_nested_refs_is_imported_and_a_dangling_ref_skipped() {
    let env = Env::new();
    let file = env.path().join("shop.yaml");
    std::fs::write(
        &file,
        r##"openapi: 3.0.0
info: {title: Shop, version: "1"}
servers: [{url: "https://shop.example.com"}]
paths:
  /orders:
    post:
      operationId: createOrder
      summary: Place an order
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Order"}
  /broken:
    get:
      operationId: broken
      summary: Broken
      parameters:
        - {name: q, in: query, schema: {$ref: "#/components/schemas/Missing"}}
components:
  schemas:
    Order:
      type: object
      properties:
        lines: {type: array, items: {$ref: "#/components/schemas/Line"}}
    Line:
      type: object
      properties:
        sku: {type: string}
"##,
    )
    .unwrap();
    assert_snapshot!(env.all(&["import", "openapi", file.to_str().unwrap()]), @r##"
    exit 0
    imported 1 tool(s) into bundle 'shop' (new) (HTTP tools: calls need --allow-host)
    warning: skipped GET /broken (broken): openapi: parameter 'q': `$ref` "#/components/schemas/Missing" points nowhere in the document
    "##);
    assert_snapshot!(env.check(&["describe", "createOrder", "--parameter", "body"]), @r#"
    createOrder.body (object, required)
    properties: {"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}}
    "#);
}

/// Regression (issue 63): an API's bundle is named after its title, and an
/// `operationId` another API has is qualified by its bundle, not stored twice.
#[test]
fn an_api_is_named_after_its_title_and_a_shared_operation_id_qualified() {
    let env = Env::new();
    let api = |title: &str, host: &str| {
        json!({
            "openapi": "3.0.0",
            "info": {"title": title, "version": "1"},
            "servers": [{"url": format!("https://{host}")}],
            "paths": {"/forecast": {"get": {
                "operationId": "getForecast",
                "summary": format!("The forecast of {title}"),
                "parameters": [{"name": "city", "in": "query", "required": true, "schema": {"type": "string"}}]
            }}}
        })
        .to_string()
    };
    let first = env.path().join("openapi.json");
    std::fs::write(&first, api("Weather.gov API", "api.weather.gov")).unwrap();
    let second = env.path().join("spec.json");
    std::fs::write(
        &second,
        api("Open-Meteo: free weather", "api.open-meteo.com"),
    )
    .unwrap();
    let mut out = String::new();
    for file in [&first, &second] {
        out.push_str(&env.all(&["import", "openapi", file.to_str().unwrap()]));
    }
    assert_snapshot!(out, @r"
    exit 0
    imported 1 tool(s) into bundle 'weather-gov-api' (new) (HTTP tools: calls need --allow-host)
    exit 0
    imported 1 tool(s) into bundle 'open-meteo-free-weather' (new); 1 renamed, their names being taken (by a built-in or another bundle): getForecast → open_meteo_free_weather_getForecast (HTTP tools: calls need --allow-host)
    ");
    assert_snapshot!(env.check(&["list", "--bundle", "open-meteo-free-weather"]), @"open_meteo_free_weather_getForecast — The forecast of Open-Meteo: free weather");
    // A loopback API is refused, saying how to allow it.
    let local = env.path().join("local.json");
    std::fs::write(&local, api("Local", "127.0.0.1:9")).unwrap();
    env.check(&["import", "openapi", local.to_str().unwrap()]);
    let refused = env.all(&[
        "--allow-host",
        "127.0.0.1:9",
        "call",
        "local_getForecast",
        "--city",
        "Paris",
    ]);
    assert!(refused.contains("--allow-private"), "{refused}");
}
