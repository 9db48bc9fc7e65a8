//! `Toolbox::builder`: native tools named once, HTTP and OpenAPI tools, a private
//! catalog by default and a directory when asked.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolscout_discover::{DEFAULT_BUNDLE, Error, Lookup, Toolbox};
use toolscout_invoke::{HttpImpl, NativeTool, ToolError};
use toolscout_spec::ToolSpec;

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    /// The first.
    a: i64,
    /// The second.
    b: i64,
}

struct Add;

impl NativeTool for Add {
    const NAME: &'static str = "add";
    const SUMMARY: &'static str = "Add two integers";
    type Args = Pair;
    type Output = i64;

    async fn call(&self, args: Pair) -> Result<i64, ToolError> {
        Ok(args.a + args.b)
    }
}

fn names(toolbox: &Toolbox) -> Vec<String> {
    let mut names: Vec<String> = toolbox
        .callable_specs()
        .into_iter()
        .map(|s| s.name.to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn native_http_and_openapi_tools_are_found_and_called() {
    let weather = ToolSpec::builder("get_weather", "Current weather for a city")
        .build()
        .unwrap();
    let petstore = json!({
        "openapi": "3.0.0",
        "servers": [{"url": "https://pets.example.com"}],
        "paths": {"/pets": {"get": {"operationId": "listPets", "summary": "List the pets"}}}
    });
    let toolbox = Toolbox::builder()
        .native(Add)
        .http(weather, HttpImpl::get("https://weather.example.com/now"))
        .http_from_openapi_document(petstore, None)
        .build()
        .unwrap();
    assert_eq!(names(&toolbox), ["add", "get_weather", "listPets"]);
    let Lookup::Found(tool) = toolbox.lookup("add") else {
        panic!("add is not callable");
    };
    let bundle = toolbox.catalog().bundle(tool.bundle_id).unwrap();
    assert_eq!(bundle.slug, DEFAULT_BUNDLE);
    let sum = toolbox.call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.to_json(), json!({"ok": true, "value": 5}));
    // Found by search too: the index is in step.
    let hits = toolbox
        .search(&toolscout_search::SearchQuery::new("list pets"))
        .unwrap();
    assert_eq!(hits.hits[0].0.spec.name, "listPets");
}

#[test]
fn the_private_catalog_is_removed_with_the_last_toolbox() {
    let toolbox = Toolbox::builder().native(Add).build().unwrap();
    let root = toolbox.catalog().root().to_owned();
    let clone = toolbox.clone();
    drop(toolbox);
    assert!(root.exists(), "a clone still uses it");
    drop(clone);
    assert!(!root.exists(), "{} is left behind", root.display());
}

#[test]
fn a_directory_keeps_the_tools_and_a_second_build_leaves_them_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let first = Toolbox::builder()
        .native(Add)
        .directory(dir.path())
        .build()
        .unwrap();
    let Lookup::Found(stored) = first.lookup("add") else {
        panic!("add is not callable");
    };
    drop(first);
    assert!(dir.path().join("bundles").exists());
    let again = Toolbox::builder()
        .native(Add)
        .directory(dir.path())
        .build()
        .unwrap();
    let Lookup::Found(reopened) = again.lookup("add") else {
        panic!("add is not callable after reopening");
    };
    assert_eq!(reopened.id, stored.id);
    assert_eq!(names(&again), ["add"]);
}

#[test]
fn a_native_tool_given_twice_or_a_missing_openapi_file_is_an_error() {
    let twice = Toolbox::builder().native(Add).native(Add).build();
    assert!(matches!(twice, Err(Error::Invoke(_))), "{twice:?}");
    let missing = Toolbox::builder()
        .http_from_openapi("/nonexistent/petstore.json")
        .build();
    let Err(Error::File { path, .. }) = missing else {
        panic!("{missing:?}");
    };
    assert_eq!(path.to_str(), Some("/nonexistent/petstore.json"));
}

/// A medical appointment with a physician.
#[derive(Deserialize, JsonSchema)]
struct Appointment {
    /// What is wrong, in the patient's own words.
    symptoms: String,
}

/// A tool described in other words than the requests it answers.
struct BookAppointment;

impl NativeTool for BookAppointment {
    const NAME: &'static str = "book_appointment";
    const SUMMARY: &'static str = "Book a medical appointment with a physician";
    type Args = Appointment;
    type Output = String;

    async fn call(&self, args: Appointment) -> Result<String, ToolError> {
        Ok(format!("booked ({})", args.symptoms))
    }
}

/// The tools a paraphrase is asked of: the one it means and two it does not.
fn paraphrase_tools() -> toolscout_discover::ToolboxBuilder {
    let weather = ToolSpec::builder("get_weather", "Current weather for a city")
        .build()
        .unwrap();
    Toolbox::builder()
        .native(Add)
        .native(BookAppointment)
        .http(weather, HttpImpl::get("https://weather.example.com/now"))
}

/// The names `query` finds, best first.
fn found(toolbox: &Toolbox, query: &str) -> Vec<String> {
    let hits = toolbox
        .search(&toolscout_search::SearchQuery::new(query))
        .unwrap();
    hits.hits
        .iter()
        .map(|(tool, _)| tool.spec.name.to_string())
        .collect()
}

const PARAPHRASE: &str = "I feel sick, find me a doctor";

#[test]
fn an_embedder_finds_a_paraphrase_that_words_alone_miss() {
    let encoder = std::sync::Arc::new(toolscout_embed::Encoder::bundled().unwrap());
    let by_meaning = paraphrase_tools().embedder(encoder).build().unwrap();
    assert_eq!(
        found(&by_meaning, PARAPHRASE).first().map(String::as_str),
        Some("book_appointment")
    );
    let by_words = paraphrase_tools().words_only().build().unwrap();
    let words = found(&by_words, PARAPHRASE);
    assert!(!words.iter().any(|n| n == "book_appointment"), "{words:?}");
}

/// With the feature `embed` (the `toolscout` library's default) the builder's own index
/// ranks by meaning, with the built-in encoder.
#[cfg(feature = "embed")]
#[test]
fn the_default_index_ranks_by_meaning_with_the_feature_embed() {
    let toolbox = paraphrase_tools().build().unwrap();
    assert_eq!(
        found(&toolbox, PARAPHRASE).first().map(String::as_str),
        Some("book_appointment")
    );
}
