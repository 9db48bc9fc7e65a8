//! What `discover_tools` answers, at every level and for every mistake.

use insta::assert_snapshot;
use serde_json::json;
use toolscout_discover::{DEFAULT_USAGE_HITS, DiscoverTools, Scope};
use toolscout_spec::Level;

use crate::{fixture, names, show};

#[test]
fn the_discover_tool_is_itself_a_tool() {
    let f = fixture();
    let spec = DiscoverTools::new(f.toolbox).spec().unwrap();
    assert_snapshot!(spec.disclose(Level::L3).to_text());
}

#[test]
fn the_brief_spec_is_a_fraction_of_the_full_one() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    let brief = discover.brief_spec().unwrap();
    let full = discover.spec().unwrap();
    let openai = |s: &toolscout_spec::ToolSpec| {
        toolscout_spec::tokens::count_json(
            &toolscout_spec::adapters::openai::to_openai(s, false).unwrap(),
        )
    };
    assert!(
        openai(&brief) * 2 < openai(&full),
        "brief {} tokens, full {}",
        openai(&brief),
        openai(&full)
    );
    assert_eq!(brief.name, full.name);
    assert_snapshot!(
        serde_json::to_string_pretty(
            &toolscout_spec::adapters::openai::to_openai(&brief, false).unwrap()
        )
        .unwrap()
    );
}

#[test]
fn overview_of_a_large_scope_is_categories_with_counts() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox).with_overview_threshold(5);
    assert_snapshot!(show(&discover.answer(&json!({}))));
}

#[test]
fn small_scope_lists_level1_directly() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox).with_scope(Scope::Category("weather".into()));
    assert_snapshot!(show(&discover.answer(&json!(null))), @r#"
    {
      "kind": "tools",
      "total": 2,
      "tools": [
        {
          "name": "get_weather",
          "summary": "Current weather conditions for a city"
        },
        {
          "name": "weather.forecast",
          "summary": "Daily weather forecast for a city, up to 14 days"
        }
      ]
    }
    "#);
}

#[test]
fn category_listing_pages_without_gaps_or_duplicates() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox).with_page_size(2);
    let mut seen = Vec::new();
    let mut page: Option<String> = None;
    loop {
        let mut args = json!({"category": "files"});
        if let Some(p) = &page {
            args["page"] = json!(p);
        }
        let reply = discover.answer(&args).reply;
        assert_eq!(reply["kind"], "tools", "{reply}");
        seen.extend(names(&reply, "tools"));
        match reply["next_page"].as_str() {
            Some(p) => page = Some(p.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ["read_file", "search_files", "write_file"]);
}

#[test]
fn search_ranks_and_says_how_each_tool_matched() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    let reply = discover
        .answer(&json!({"query": "what's the weather in Tokyo"}))
        .reply;
    assert_eq!(names(&reply, "tools")[0], "get_weather");
    let prefix = discover.answer(&json!({"query": "read_fi"})).reply;
    assert_eq!(prefix["kind"], "search");
    assert_eq!(
        prefix["tools"][0],
        json!({
            "name": "read_file",
            "summary": "Read a text file, whole or a range of lines",
            "match": "prefix",
            "usage": "read_file(file_path=\"…\", offset=1)"
        })
    );
    // Only the best hits carry their usage line.
    let many = discover.answer(&json!({"query": "file"})).reply;
    let with_usage = many["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h.get("usage").is_some())
        .count();
    assert_eq!(
        with_usage,
        DEFAULT_USAGE_HITS.min(many["tools"].as_array().unwrap().len())
    );
    let bare = discover.clone().with_usage_hits(0);
    let reply = bare.answer(&json!({"query": "read_fi"})).reply;
    assert!(reply["tools"][0].get("usage").is_none());
}

#[test]
fn tool_levels_and_parameter_detail() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    assert_snapshot!(show(&discover.answer(&json!({"tool": "get_weather"}))));
    assert_snapshot!(show(
        &discover.answer(&json!({"tool": "get_weather", "detail": "full"}))
    ));
    assert_snapshot!(show(&discover.answer(&json!({"tool": "get_weather", "parameter": "units"}))), @r#"
    {
      "kind": "parameter",
      "tool": "get_weather",
      "parameter": "units",
      "type": "string",
      "description": "Temperature units",
      "required": false,
      "default": "celsius",
      "enum": [
        "celsius",
        "fahrenheit"
      ]
    }
    disclosed: get_weather
    "#);
}

#[test]
fn unknown_names_get_the_closest_names_never_the_whole_catalog() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    assert_snapshot!(show(&discover.answer(&json!({"tool": "get_wether"}))), @r#"
    {
      "kind": "unknown_tool",
      "tool": "get_wether",
      "did_you_mean": [
        "get_weather"
      ],
      "message": "no tool named 'get_wether'; use one of the names above or search with `query`"
    }
    "#);
    assert_snapshot!(show(&discover.answer(&json!({"tool": "get_weather", "parameter": "town"}))), @r#"
    {
      "kind": "unknown_parameter",
      "tool": "get_weather",
      "parameter": "town",
      "parameters": [
        "city",
        "units"
      ],
      "message": "tool 'get_weather' has no parameter 'town'; its parameters are: city, units"
    }
    "#);
}

#[test]
fn disabled_and_out_of_scope_tools_say_so() {
    let f = fixture();
    let tool = f
        .toolbox
        .catalog()
        .get_tool(f.sample_bundle, "spawn-coding-agent", "1")
        .unwrap();
    f.toolbox
        .catalog()
        .patch_tool(f.sample_bundle, "spawn-coding-agent", "1", false)
        .unwrap();
    let discover = DiscoverTools::new(f.toolbox.clone());
    assert_snapshot!(show(&discover.answer(&json!({"tool": tool.spec.name.as_str()}))), @r#"
    {
      "kind": "disabled",
      "tool": "spawn_coding_agent",
      "reason": "the tool is disabled",
      "message": "'spawn_coding_agent' exists but cannot be called now (the tool is disabled); look for another tool"
    }
    "#);
    let weather_only = DiscoverTools::new(f.toolbox).with_scope(Scope::Category("weather".into()));
    assert_eq!(
        weather_only.answer(&json!({"tool": "read_file"})).reply["kind"],
        "out_of_scope"
    );
}

#[test]
fn max_tokens_returns_the_deepest_level_that_fits() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    let full = discover.answer(&json!({"tool": "read_file", "detail": "full"}));
    assert_eq!(full.reply["level"], 3);
    let small = discover.answer(&json!({"tool": "read_file", "detail": "full", "max_tokens": 120}));
    assert_eq!(small.reply["level"], 2, "{}", small.reply);
    assert!(
        toolscout_spec::tokens::count_json(&small.reply) <= 120 + 60,
        "the omitted note is small"
    );
    assert_snapshot!(small.reply["omitted"].as_str().unwrap(), @"level 3 did not fit in 120 tokens; this is level 2. Ask again with a larger max_tokens, or for one parameter with `parameter`");
    let tiny = discover.answer(&json!({"tool": "read_file", "max_tokens": 16}));
    assert_eq!(tiny.reply["level"], 1);
    assert!(tiny.disclosed.is_empty(), "level 1 activates nothing");
    let list = discover.answer(&json!({"category": "files", "max_tokens": 60}));
    assert!(list.reply["omitted"].is_string(), "{}", list.reply);
    assert!(list.reply["next_page"].is_string());
}

#[test]
fn bad_arguments_are_explained() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    assert_snapshot!(show(&discover.answer(&json!({"name": "x"}))), @r#"
    {
      "kind": "invalid",
      "message": "unknown field `name`, expected one of `query`, `tool`, `detail`, `parameter`, `category`, `page`, `max_tokens`. Arguments are optional: query, tool, detail (\"full\"), parameter, category, page, max_tokens"
    }
    "#);
    assert_eq!(
        discover.answer(&json!({"parameter": "x"})).reply["message"],
        "`parameter` and `detail` need `tool`"
    );
    assert_eq!(
        discover.answer(&json!({"page": "zz"})).reply["kind"],
        "invalid"
    );
    assert_eq!(
        discover
            .answer(&json!({"detail": "everything", "tool": "x"}))
            .reply["kind"],
        "invalid"
    );
    assert_eq!(
        discover.answer(&json!({"category": "nope"})).reply["kind"],
        "unknown_category"
    );
}

#[test]
fn the_overview_keeps_to_max_tokens() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox).with_overview_threshold(5);
    let whole = discover.answer(&json!({}));
    let budget = toolscout_spec::tokens::count_json(&whole.reply) - 10;
    let cut = discover.answer(&json!({"max_tokens": budget}));
    assert!(
        toolscout_spec::tokens::count_json(&cut.reply) <= budget,
        "{} tokens over a budget of {budget}: {}",
        toolscout_spec::tokens::count_json(&cut.reply),
        cut.reply
    );
    assert_snapshot!(show(&cut));
    let tiny = discover.answer(&json!({"max_tokens": 40}));
    assert_eq!(tiny.reply["kind"], "categories");
    assert!(tiny.reply["omitted"].is_string(), "{}", tiny.reply);
}

#[test]
fn max_tokens_below_the_schema_minimum_is_refused() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox);
    assert_snapshot!(show(&discover.answer(&json!({"tool": "read_file", "max_tokens": 10}))), @r#"
    {
      "kind": "invalid",
      "message": "max_tokens must be at least 16, not 10: no useful reply fits in fewer"
    }
    "#);
    assert_eq!(
        discover
            .answer(&json!({"tool": "read_file", "max_tokens": 16}))
            .reply["level"],
        1
    );
}

/// A search page cut to fit `max_tokens` continues, with `next_page`, at the first hit it
/// left out: paging through with a small budget shows every hit of the unbudgeted query
/// once, in order.
#[test]
fn search_pages_cut_to_fit_lose_no_hit() {
    let f = fixture();
    let discover = DiscoverTools::new(f.toolbox).with_page_size(3);
    let all_names = |budget: Option<u32>| {
        let mut out = Vec::new();
        let mut page: Option<String> = None;
        for _ in 0..50 {
            let mut args = json!({"query": "file"});
            if let Some(b) = budget {
                args["max_tokens"] = json!(b);
            }
            if let Some(p) = &page {
                args["page"] = json!(p);
            }
            let reply = discover.answer(&args).reply;
            for t in reply["tools"].as_array().unwrap() {
                out.push(t["name"].as_str().unwrap().to_owned());
            }
            match reply["next_page"].as_str() {
                Some(p) => page = Some(p.to_owned()),
                None => return out,
            }
        }
        panic!("paging did not end");
    };
    let whole = all_names(None);
    assert!(whole.len() >= 3, "{whole:?}");
    let cut = all_names(Some(60));
    assert_eq!(cut, whole);
}

#[test]
fn a_spec_only_tool_says_so_at_every_level() {
    let f = fixture();
    let spec = toolscout_spec::ToolSpec::builder("book_flight", "Book a flight between two cities")
        .description("Book a flight between two cities on a date.")
        .category("travel")
        .parameters(json!({
            "type": "object",
            "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
            "required": ["from", "to"]
        }))
        .build()
        .unwrap();
    f.toolbox
        .catalog()
        .add_tools(
            &toolscout_catalog::BundlePut::new("bfcl"),
            vec![toolscout_catalog::ToolPut::spec_only(spec)],
        )
        .unwrap();
    let d = DiscoverTools::new(f.toolbox.clone());
    let listed = d.answer(&json!({"category": "travel"}));
    let found = d.answer(&json!({"query": "book a flight"}));
    let described = d.answer(&json!({"tool": "book_flight"}));
    let parameter = d.answer(&json!({"tool": "book_flight", "parameter": "from"}));
    for reply in [
        &listed.reply["tools"][0],
        &found.reply["tools"][0],
        &described.reply,
        &parameter.reply,
    ] {
        assert_eq!(reply["spec_only"], json!(true), "{reply}");
    }
    insta::assert_snapshot!(show(&described));
    // Others are not marked.
    let read = d.answer(&json!({"tool": "read_file"}));
    assert!(read.reply.get("spec_only").is_none());
    // A list of tools to call says it in the description the model reads.
    let specs = f.toolbox.callable_specs();
    let flight = specs.iter().find(|s| s.name == "book_flight").unwrap();
    assert!(
        flight.description.starts_with("Spec only:"),
        "{}",
        flight.description
    );
}

/// A catalog with an API of three tools whose names and summaries never say the API's
/// name, beside the sample tools.
fn with_numbers_api() -> crate::Fixture {
    let f = fixture();
    let catalog = f.toolbox.catalog();
    let api = uuid::Uuid::now_v7();
    catalog
        .put_bundle(
            api,
            &toolscout_catalog::BundlePut::new("numbers")
                .with_display_name("Numbers API")
                .with_description("Trivia, math and date facts about numbers"),
        )
        .unwrap();
    for (name, summary) in [
        ("get_trivia_fact", "A trivia fact about an integer"),
        ("get_date_fact", "What happened on a day of the year"),
        ("get_random_fact", "A random fact of a given type"),
    ] {
        let spec = toolscout_spec::ToolSpec::builder(name, summary)
            .build()
            .unwrap();
        let put = toolscout_catalog::ToolPut::http(
            spec,
            json!({"method": "GET", "urlTemplate": "https://numbersapi.example.com/x"}),
        );
        catalog
            .put_tool(api, &name.replace('_', "-"), "1", &put)
            .unwrap();
    }
    f
}

/// A request that names the API a tool belongs to (#41 item 2) ranks that API's tools:
/// the bundle's name is indexed with each of its tools.
#[test]
fn a_query_naming_an_api_ranks_its_tools() {
    let f = with_numbers_api();
    let d = DiscoverTools::new(f.toolbox.clone());
    let answer = d.answer(&json!({"query": "something interesting using the Numbers API"}));
    let found = names(&answer.reply, "tools");
    assert!(
        found.iter().take(3).all(|n| n.ends_with("_fact")),
        "{found:?}"
    );
}

/// `discover_tools {"tool": X}` where X names an API (#41 item 2) lists its tools at
/// level 1 instead of answering `unknown_tool`, and they count as found (an agent
/// activates them).
#[test]
fn describing_an_api_lists_its_tools() {
    let f = with_numbers_api();
    let d = DiscoverTools::new(f.toolbox.clone());
    for name in ["Numbers API", "numbers", "numbers_api"] {
        let answer = d.answer(&json!({"tool": name}));
        assert_eq!(answer.reply["kind"], "tools", "{name}: {}", answer.reply);
        assert_eq!(answer.found().len(), 3, "{name}");
    }
    assert_snapshot!(show(&d.answer(&json!({"tool": "Numbers API"}))), @r#"
    {
      "kind": "tools",
      "total": 3,
      "tools": [
        {
          "name": "get_date_fact",
          "summary": "What happened on a day of the year"
        },
        {
          "name": "get_random_fact",
          "summary": "A random fact of a given type"
        },
        {
          "name": "get_trivia_fact",
          "summary": "A trivia fact about an integer"
        }
      ],
      "bundle": "Numbers API",
      "bundle_description": "Trivia, math and date facts about numbers",
      "message": "'Numbers API' is not a tool but the API its tools belong to; these are its tools: describe one with `tool`"
    }
    "#);
    // A name that is neither a tool nor an API is still unknown.
    let unknown = d.answer(&json!({"tool": "Letters API"}));
    assert_eq!(unknown.reply["kind"], "unknown_tool");
    assert!(unknown.found().is_empty());
}
