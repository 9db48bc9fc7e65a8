//! The small catalog every test searches, and the `check` helper.

use serde_json::json;
use toolscout_search::{IndexDoc, SearchIndex, SearchQuery, SearchResults};
use toolscout_spec::ToolSpec;

/// One tool of the fixture: spec, bundle, enabled, modified-at, scope.
pub(crate) struct Tool {
    pub(crate) spec: ToolSpec,
    pub(crate) bundle: Option<&'static str>,
    pub(crate) enabled: bool,
    pub(crate) modified_at: i64,
    pub(crate) scope: Option<&'static str>,
}

pub(crate) fn tool(name: &str, summary: &str, tags: &[&str], category: Option<&str>) -> Tool {
    let mut b = ToolSpec::builder(name, summary);
    for t in tags {
        b = b.tag(*t);
    }
    if let Some(c) = category {
        b = b.category(c);
    }
    Tool {
        spec: b.build().unwrap(),
        bundle: None,
        enabled: true,
        modified_at: 0,
        scope: None,
    }
}

pub(crate) fn tools() -> Vec<Tool> {
    let mut weather = tool(
        "get_weather",
        "Current weather for a city.",
        &["web"],
        Some("weather"),
    );
    weather.spec.parameters = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Tokyo"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        },
        "required": ["city"]
    });
    let mut write = tool(
        "write_file",
        "Write text to a file, replacing it.",
        &["fs"],
        Some("files"),
    );
    write.enabled = false;
    let mut translate = tool(
        "translateText",
        "Translate text between two languages.",
        &[],
        None,
    );
    translate.bundle = Some("lang");
    let mut slack = tool("notify_slack", "Notify the team on chat.", &["chat"], None);
    slack.modified_at = 100;
    let mut teams = tool("notify_teams", "Notify the team on chat.", &["chat"], None);
    teams.modified_at = 200;
    vec![
        weather,
        tool(
            "get_weather_forecast",
            "Weather forecast for the next seven days.",
            &["web"],
            Some("weather"),
        ),
        tool(
            "weather_alerts",
            "Severe weather warnings for a region.",
            &["web"],
            Some("weather"),
        ),
        tool(
            "get_stock_price",
            "Latest stock price for a ticker symbol.",
            &["finance"],
            None,
        ),
        tool(
            "read_file",
            "Read a text file, whole or a range of lines.",
            &["fs"],
            Some("files"),
        ),
        write,
        translate,
        tool(
            "calc_bmi",
            "Body mass index from weight and height.",
            &["health"],
            None,
        ),
        tool("cn_weather", "查询城市的天气预报", &["web"], None),
        slack,
        teams,
    ]
}

pub(crate) fn index() -> SearchIndex {
    let tools = tools();
    let index = SearchIndex::in_memory().unwrap();
    feed(&index, &tools);
    index
}

pub(crate) fn feed(index: &SearchIndex, tools: &[Tool]) {
    let docs = tools.iter().map(|t| {
        IndexDoc::new(&t.spec)
            .with_bundle(t.bundle)
            .with_enabled(t.enabled)
            .with_modified_at(t.modified_at)
            .with_scope(t.scope)
    });
    index.extend(docs, &mut |_| {}).unwrap();
}

/// The results as a model or a person would read them: one hit a line, then the notes.
pub(crate) fn render(found: &SearchResults) -> String {
    let mut out = String::new();
    for h in &found.hits {
        out.push_str(&format!(
            "{:<22} {:<7} {:<9} {:.2}\n",
            h.id,
            h.tier.as_str(),
            h.field.as_str(),
            h.score
        ));
    }
    if found.hits.is_empty() {
        out.push_str("(no hits)\n");
    }
    if let Some(s) = found.name_status {
        out.push_str(&format!("name status: {s:?}\n"));
    }
    if !found.did_you_mean.is_empty() {
        out.push_str(&format!(
            "did you mean: {}\n",
            found.did_you_mean.join(", ")
        ));
    }
    out
}

/// Searches the fixture and renders the first page.
pub(crate) fn check(q: SearchQuery) -> String {
    render(&index().search(&q).unwrap())
}
