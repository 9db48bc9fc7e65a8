//! The lint rules on the built-in tools and on a catalog with mistakes.

use insta::assert_snapshot;
use serde_json::{Value, json};
use toolscout_catalog::lint::{Report, Severity, lint};
use toolscout_catalog::{BundlePut, CatalogOptions, ToolPut};
use toolscout_spec::ToolSpec;
use uuid::Uuid;

/// Every issue of `report` on a line, then the counts.
fn check(report: &Report) -> String {
    let mut out: Vec<String> = report
        .issues
        .iter()
        .map(|i| {
            format!(
                "{}[{}] {}: {}",
                i.severity.as_str(),
                i.check,
                i.tool,
                i.message
            )
        })
        .collect();
    out.push(format!("{} tools; {:?}", report.tools, report.counts()));
    out.join("\n")
}

/// A spec of `name` with `description` (summary: its first sentence) and `parameters`.
fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    let summary = description.split(". ").next().unwrap_or(description);
    ToolSpec::builder(name, summary.trim_end_matches('.'))
        .description(description)
        .parameters(parameters)
        .build()
        .unwrap()
}

#[test]
fn builtin_tools_are_clean() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = crate::open(dir.path());
    let report = lint(&catalog.tools());
    assert_eq!(report.count(Severity::Error), 0);
    assert_eq!(report.count(Severity::Warning), 0);
    assert_eq!(report.tools, 6);
}

#[test]
fn lint_reports_clashes_duplicates_and_bad_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let catalog =
        crate::open_with(dir.path(), CatalogOptions::default().with_builtins(false)).unwrap();
    let city =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let tools = [
        spec(
            "get_weather",
            "Current weather conditions for a city, with temperature and wind.",
            city.clone(),
        ),
        spec(
            "weather.get",
            "Current weather conditions for a city, with temperature and wind speed.",
            city.clone(),
        ),
        spec(
            "Get_Weather",
            "Something else entirely.",
            json!({"type": "object", "properties": {"days": {"type": "array"}}}),
        ),
        spec(
            &"a".repeat(70),
            "A tool with a long name.",
            json!({"type": "object", "properties": {}}),
        ),
    ];
    let first = Uuid::now_v7();
    catalog.put_bundle(first, &BundlePut::new("first")).unwrap();
    for (i, s) in tools.iter().enumerate() {
        let put = ToolPut::http(
            s.clone(),
            json!({"method": "GET", "urlTemplate": "https://api.example.com/"}),
        );
        catalog
            .put_tool(first, &format!("t{i}"), "1", &put)
            .unwrap();
    }
    // The same name in a second bundle: which one a model gets is a matter of timing.
    let second = Uuid::now_v7();
    catalog
        .put_bundle(second, &BundlePut::new("second"))
        .unwrap();
    let put = ToolPut::http(
        tools[0].clone(),
        json!({"method": "GET", "urlTemplate": "https://api.example.com/"}),
    );
    catalog.put_tool(second, "t0", "1", &put).unwrap();

    let report = lint(&catalog.tools());
    assert_eq!(report.count(Severity::Error), 3, "{}", check(&report));
    assert_snapshot!(check(&report));
}
