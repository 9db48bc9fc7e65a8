//! OpenAPI documents become HTTP tools: parameters, templates, `$ref`s, skipped operations.

use insta::assert_json_snapshot;
use serde_json::{Value, json};
use toolscout_spec::adapters::openapi::from_openapi;

/// Each tool of `doc` as `{name, summary, parameters, template}`, then the skipped ones.
fn check(doc: &Value, base: Option<&str>) -> Value {
    let api = from_openapi(doc, base).unwrap();
    json!({
        "tools": api.tools.iter().map(|t| json!({
            "name": t.spec.name.as_str(),
            "summary": t.spec.summary,
            "parameters": t.spec.parameters,
            "template": t.template,
        })).collect::<Vec<_>>(),
        "skipped": api.skipped.iter().map(|s| format!("{} {}: {}", s.method, s.path, s.reason)).collect::<Vec<_>>(),
    })
}

fn pets() -> Value {
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://pets.example.com/v1/"}],
        "paths": {
            "/pets/{petId}": {"get": {
                "operationId": "getPet",
                "summary": "Get one pet by id",
                "parameters": [
                    {"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}, "description": "The pet's id"},
                    {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                    {"name": "format", "in": "query", "required": true, "schema": {"type": "string"}}
                ]
            }},
            "/pets": {"post": {
                "operationId": "createPet",
                "description": "Add a pet. It gets an id.",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
            }},
            "/bad": {"get": {"operationId": "bad op", "summary": "two\nlines"}}
        },
        "components": {"schemas": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
    })
}

#[test]
fn operations_become_http_tools() {
    assert_json_snapshot!(check(&pets(), None));
}

#[test]
fn a_base_url_given_replaces_the_documents_server() {
    let api = from_openapi(&pets(), Some("http://127.0.0.1:8080/")).unwrap();
    assert_eq!(
        api.tools[1].template["urlTemplate"],
        "http://127.0.0.1:8080/pets"
    );
}

#[test]
fn swagger_2_builds_its_base_from_host_and_base_path() {
    let doc = json!({
        "swagger": "2.0",
        "host": "api.example.com",
        "basePath": "/v2",
        "schemes": ["http"],
        "paths": {"/items": {"get": {"operationId": "listItems", "summary": "List items",
            "parameters": [{"name": "limit", "in": "query", "type": "integer"}]}}}
    });
    let api = from_openapi(&doc, None).unwrap();
    assert_eq!(
        api.tools[0].template["urlTemplate"],
        "http://api.example.com/v2/items"
    );
    assert_eq!(
        api.tools[0].spec.parameters["properties"]["limit"],
        json!({"type": "integer"})
    );
}

#[test]
fn a_document_without_paths_or_server_is_refused() {
    let no_paths = from_openapi(
        &json!({"servers": [{"url": "https://a.example.com"}]}),
        None,
    );
    assert_eq!(
        no_paths.unwrap_err().to_string(),
        "openapi: the document has no \"paths\": is it an OpenAPI document in JSON?"
    );
    let no_server = from_openapi(&json!({"paths": {}}), None);
    assert_eq!(
        no_server.unwrap_err().to_string(),
        "openapi: the document names no absolute server URL: give the API's base URL"
    );
}
