//! OpenAPI documents become HTTP tools: parameters, templates, `$ref`s, skipped operations.

use insta::assert_json_snapshot;
use serde_json::{Value, json};
use toolscout_spec::adapters::openapi::{self, from_openapi};

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
        "skipped": api.skipped.iter().map(ToString::to_string).collect::<Vec<_>>(),
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
        "openapi: the document has no \"paths\": is it an OpenAPI or Swagger document?"
    );
    let no_server = from_openapi(&json!({"paths": {}}), None);
    assert_eq!(
        no_server.unwrap_err().to_string(),
        "openapi: the document names no absolute server URL: give the API's base URL"
    );
}

fn nested() -> Value {
    serde_json::from_str(include_str!("../data/nested_refs.json")).unwrap()
}

/// Every JSON value in `v`, itself included.
fn values(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(values).sum(),
        Value::Object(map) => map.values().map(values).sum(),
        _ => 0,
    }
}

#[test]
fn nested_refs_are_resolved_to_any_depth() {
    // Parameters through two `$ref`s, a request body in `components`, three levels of
    // schemas under an `allOf`, a recursive category, and a `$ref` that points nowhere.
    assert_json_snapshot!(check(&nested(), None));
}

#[test]
fn a_recursive_schema_is_expanded_once_then_cut() {
    let api = from_openapi(&nested(), None).unwrap();
    let filter = &api.tools[1].spec.parameters["properties"]["filter"];
    assert_eq!(
        filter["properties"]["children"]["items"],
        json!({
            "type": "object",
            "description": "Category again (recursive): the same shape as the enclosing Category"
        })
    );
}

#[test]
fn a_ref_that_points_nowhere_skips_its_operation_and_names_the_ref() {
    let api = from_openapi(&nested(), None).unwrap();
    assert_eq!(api.tools.len(), 2);
    let [skipped] = api.skipped.as_slice() else {
        panic!("{:?}", api.skipped)
    };
    assert_eq!(
        skipped.to_string(),
        "GET /broken (broken): openapi: parameter 'q': `$ref` \"#/components/schemas/Nowhere\" points nowhere in the document"
    );
}

#[test]
fn refs_outside_the_document_or_to_themselves_are_refused() {
    let doc = json!({
        "servers": [{"url": "https://a.example.com"}],
        "paths": {
            "/a": {"get": {"operationId": "a", "summary": "A",
                "parameters": [{"name": "x", "in": "query", "schema": {"$ref": "other.json#/X"}}]}},
            "/b": {"get": {"operationId": "b", "summary": "B",
                "parameters": [{"$ref": "#/components/parameters/Loop"}]}},
            "/c": {"$ref": "#/paths/~1c"}
        },
        "components": {"parameters": {"Loop": {"$ref": "#/components/parameters/Loop"}}}
    });
    let api = from_openapi(&doc, None).unwrap();
    assert!(api.tools.is_empty());
    let reasons: Vec<String> = api.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        [
            "GET /a (a): openapi: parameter 'x': `$ref` \"other.json#/X\" points outside the document: bundle the document into one file first",
            "GET /b (b): openapi: parameter 1: `$ref` \"#/components/parameters/Loop\" refers to itself",
            "* /c: `$ref` \"#/paths/~1c\" refers to itself",
        ]
    );
}

#[test]
fn a_schema_that_doubles_at_every_level_is_cut_at_the_size_bound() {
    // S0 has two properties of type S1, each of which has two of type S2…: 2^40 values
    // if expanded whole.
    let mut schemas = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/components/schemas/S{}", i + 1)});
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": {"left": next, "right": next}}),
        );
    }
    schemas.insert("S40".to_owned(), json!({"type": "string"}));
    let doc = json!({
        "servers": [{"url": "https://a.example.com"}],
        "paths": {"/t": {"post": {"operationId": "tree", "summary": "A big tree",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}},
        "components": {"schemas": schemas}
    });
    let api = from_openapi(&doc, None).unwrap();
    let body = &api.tools[0].spec.parameters["properties"]["body"];
    let n = values(body);
    assert!(
        n <= openapi::MAX_OPERATION_VALUES + 200,
        "{n} values: the bound does not hold"
    );
    assert!(
        body.to_string()
            .contains("not expanded (the schema is too large)")
    );
}

#[test]
fn a_long_chain_of_refs_is_cut_at_the_depth_bound() {
    let mut schemas = serde_json::Map::new();
    for i in 0..200 {
        schemas.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"next": {"$ref": format!("#/components/schemas/D{}", i + 1)}}}),
        );
    }
    schemas.insert("D200".to_owned(), json!({"type": "string"}));
    let doc = json!({
        "servers": [{"url": "https://a.example.com"}],
        "paths": {"/d": {"post": {"operationId": "deep", "summary": "Deep",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/D0"}}}}}}},
        "components": {"schemas": schemas}
    });
    let api = from_openapi(&doc, None).unwrap();
    let mut v = &api.tools[0].spec.parameters["properties"]["body"];
    let mut depth = 0;
    while let Some(next) = v.pointer("/properties/next") {
        v = next;
        depth += 1;
    }
    assert!(depth <= openapi::MAX_NESTING, "{depth} levels");
    assert!(
        v["description"]
            .as_str()
            .is_some_and(|d| d.ends_with("not expanded (nested too deep)")),
        "{v}"
    );
}

#[test]
fn swagger_2_definitions_and_body_parameters() {
    let doc = json!({
        "swagger": "2.0",
        "host": "api.example.com",
        "paths": {"/items": {"post": {"operationId": "addItem", "summary": "Add an item",
            "parameters": [
                {"name": "item", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Item"}},
                {"name": "tags", "in": "query", "type": "array", "items": {"$ref": "#/definitions/Tag"}}
            ]}}},
        "definitions": {
            "Item": {"type": "object", "properties": {"tag": {"$ref": "#/definitions/Tag"}}},
            "Tag": {"type": "string", "enum": ["a", "b"]}
        }
    });
    let api = from_openapi(&doc, None).unwrap();
    let tool = &api.tools[0];
    assert_eq!(
        tool.spec.parameters["properties"]["body"],
        json!({"type": "object", "properties": {"tag": {"type": "string", "enum": ["a", "b"]}}})
    );
    assert_eq!(
        tool.spec.parameters["properties"]["tags"]["items"],
        json!({"type": "string", "enum": ["a", "b"]})
    );
    assert_eq!(tool.template["bodyTemplate"], "${body}");
}

#[test]
fn parse_reads_json_by_its_first_character() {
    let doc = openapi::parse("\u{feff}\n  {\"paths\": {}}").unwrap();
    assert_eq!(doc, json!({"paths": {}}));
    let err = openapi::parse("{\"paths\": ").unwrap_err().to_string();
    assert!(
        err.starts_with("openapi: the document is not valid JSON: EOF while parsing"),
        "{err}"
    );
    let huge = " ".repeat(openapi::MAX_DOCUMENT_BYTES + 1);
    assert_eq!(
        openapi::parse(&huge).unwrap_err().to_string(),
        format!(
            "openapi: the document is {} bytes, more than the {} read",
            openapi::MAX_DOCUMENT_BYTES + 1,
            openapi::MAX_DOCUMENT_BYTES
        )
    );
}

#[cfg(feature = "yaml")]
#[test]
fn a_yaml_document_reads_like_its_json() {
    let doc = openapi::parse(include_str!("../data/petstore.yaml")).unwrap();
    assert_json_snapshot!(check(&doc, None));
}

#[cfg(feature = "yaml")]
#[test]
fn hostile_yaml_fails_with_an_error() {
    // A billion laughs: each alias doubles (ten times) what the previous one holds.
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let err = openapi::parse(&bomb).unwrap_err().to_string();
    assert!(
        err.starts_with("openapi: the document is not valid YAML: error: ")
            && err.contains("budget breached"),
        "{err}"
    );
    let deep = format!("a: {}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let err = openapi::parse(&deep).unwrap_err().to_string();
    assert!(
        err.starts_with("openapi: the document is not valid YAML: error: line 1 column 259: recursion limit exceeded"),
        "{err}"
    );
    let err = openapi::parse("- just\n- a list\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "openapi: the document is neither a JSON object nor a YAML mapping"
    );
}

#[cfg(feature = "yaml")]
#[test]
fn yaml_aliases_that_replay_a_hundred_thousand_events_are_refused() {
    // 536 bytes that grew to 10^5 values (0.45 s under the fuzzer) and were read; one
    // level more took 3.8 s before the parser's default budget refused it.
    let mut doc = String::from("openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..=4 {
        let refs = vec![format!("*a{}", level - 1); 10].join(", ");
        doc.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
    }
    doc.push_str("paths: {}\n");
    let err = openapi::parse(&doc).unwrap_err().to_string();
    assert!(
        err.starts_with("openapi: the document is not valid YAML: error: ")
            && err.contains("budget breached"),
        "{err}"
    );
    // A few aliases still read.
    let doc = openapi::parse("openapi: 3.0.0\nx-a: &a [1, 2]\nx-b: [*a, *a]\npaths: {}\n").unwrap();
    assert_eq!(doc["x-b"], json!([[1, 2], [1, 2]]));
}

#[test]
fn an_all_of_with_a_hundred_thousand_required_names_merges_in_linear_time() {
    // Each name was looked up in the names kept so far: quadratic (#36).
    let names: Vec<String> = (0..50_000).map(|i| format!("p{i}")).collect();
    let doc = json!({
        "openapi": "3.0.0",
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/a": {"post": {"operationId": "a", "requestBody": {"content": {
            "application/json": {"schema": {"allOf": [{"required": names}, {"required": names}]}}
        }}}}},
    });
    let start = std::time::Instant::now();
    let api = from_openapi(&doc, None).unwrap();
    let body = &api.tools[0].spec.parameters["properties"]["body"];
    assert_eq!(body["required"].as_array().map(Vec::len), Some(50_000));
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs() < 10, "{elapsed:?}");
}

#[cfg(not(feature = "yaml"))]
#[test]
fn yaml_without_the_feature_says_which_feature() {
    let err = openapi::parse("openapi: 3.0.0\n").unwrap_err().to_string();
    assert!(err.contains("needs the `yaml` feature"), "{err}");
}
