//! Each converter over a few lines written in its benchmark's format (made up here, same
//! shape), checked field by field and snapshotted.

use serde_json::json;

/// A Seal-Tools folder of three tools and three tasks, one of which calls a missing tool.
fn seal_tools_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("Seal-Tools_Dataset");
    std::fs::create_dir_all(&data).unwrap();
    let tools = [
        json!({"api_name": "getPlantingInstructions", "api_description": "Get planting instructions for a crop", "field": "Agriculture/Crop science",
               "parameters": {"crop_name": {"type": "str", "description": "The crop"}, "soil_type": {"type": "str", "description": "The soil"}, "depth": {"type": "float", "description": "cm"}},
               "required": ["crop_name", "missing_one"], "responses": {"steps": {"type": "str", "description": "What to do"}}}),
        json!({"api_name": "getTimberResources", "api_description": "Check the timber resources of an area", "field": "Forestry/Resources",
               "parameters": {"area": {"type": "str", "description": "The area"}, "limit": {"type": "int", "description": "How many"}}, "required": ["area"]}),
        json!({"api_name": "getCryptocurrencyPrice", "api_description": "The current price of a cryptocurrency", "field": "Finance/Crypto",
               "parameters": {"cryptocurrency": {"type": "str", "description": "Its name"}, "live": {"type": "bool", "description": "Live"}, "odd": {"type": "tuple"}}, "required": []}),
    ];
    let tasks = [
        json!({"id": "dev-easy-0", "query": "What does Bitcoin cost?", "calling": [{"api": "getCryptocurrencyPrice", "parameters": {"cryptocurrency": "Bitcoin"}, "responses": ["API_call_0"]}]}),
        json!({"id": "dev-difficult-1", "query": "How do I plant tomatoes in loam, and is there timber where they grow?", "calling": [
            {"api": "getPlantingInstructions", "parameters": {"crop_name": "Tomatoes", "soil_type": "loam"}, "responses": ["API_call_0"]},
            {"api": "getTimberResources", "parameters": {"area": "API_call_0"}, "responses": ["API_call_1"]},
            {"api": "getPlantingInstructions", "parameters": {"crop_name": "Beans"}, "responses": ["API_call_2"]}]}),
        json!({"id": "dev-easy-2", "query": "Book a flight", "calling": [{"api": "bookFlight", "parameters": {}}]}),
    ];
    let lines = |values: &[serde_json::Value]| {
        values
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    std::fs::write(data.join("tool.jsonl"), lines(&tools)).unwrap();
    std::fs::write(data.join("dev.jsonl"), lines(&tasks)).unwrap();
    dir
}

#[test]
fn seal_tools_tools_are_grouped_by_field_and_typed() {
    let dir = seal_tools_dir();
    let converted = toolscout_eval::convert::seal_tools(dir.path(), "dev").unwrap();
    assert_eq!(converted.tools.len(), 3);
    let planting = &converted.tools[0];
    assert_eq!(planting["bundle"], "Agriculture/Crop science");
    assert_eq!(
        planting["parameters"]["properties"]["depth"]["type"],
        "number"
    );
    // A required name that is no parameter is dropped.
    assert_eq!(planting["parameters"]["required"], json!(["crop_name"]));
    // An unknown type is left untyped rather than guessed.
    assert_eq!(
        converted.tools[2]["parameters"]["properties"]["odd"],
        json!({})
    );
    // Every tool line reads back through the JSONL adapter, bundle included.
    for tool in &converted.tools {
        toolscout_spec::adapters::jsonl::from_value(tool).unwrap();
        assert!(toolscout_spec::adapters::jsonl::bundle_of(tool).is_some());
    }
    insta::assert_snapshot!(converted.tools[0].to_string(), @r#"{"name":"getPlantingInstructions","description":"Get planting instructions for a crop","parameters":{"type":"object","properties":{"crop_name":{"type":"string","description":"The crop"},"soil_type":{"type":"string","description":"The soil"},"depth":{"type":"number","description":"cm"}},"required":["crop_name"]},"source":"seal-tools","bundle":"Agriculture/Crop science"}"#);
}

#[test]
fn seal_tools_tasks_list_each_tool_once_and_keep_their_calls() {
    let dir = seal_tools_dir();
    let converted = toolscout_eval::convert::seal_tools(dir.path(), "dev").unwrap();
    assert_eq!(converted.tasks.len(), 2);
    let multi = &converted.tasks[1];
    assert_eq!(
        multi["expected"],
        json!(["getPlantingInstructions", "getTimberResources"])
    );
    assert_eq!(multi["offered"], multi["expected"]);
    assert_eq!(multi["calls"].as_array().unwrap().len(), 3);
    assert_eq!(multi["calls"][1]["arguments"]["area"], "API_call_0");
    insta::assert_debug_snapshot!(converted.skipped, @r#"
    [
        "dev.jsonl line 3: dev-easy-2 calls bookFlight, which no tool is",
    ]
    "#);
    // The dataset folder itself works too, and written files read back.
    let again =
        toolscout_eval::convert::seal_tools(&dir.path().join("Seal-Tools_Dataset"), "dev").unwrap();
    assert_eq!(again, converted);
    let out = tempfile::tempdir().unwrap();
    let written = converted.write(out.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(written.tools)
            .unwrap()
            .lines()
            .count(),
        3
    );
    assert_eq!(
        std::fs::read_to_string(written.tasks)
            .unwrap()
            .lines()
            .count(),
        2
    );
    // The multi-tool set: the task of two tools (three calls), not the task of one.
    let multi = std::fs::read_to_string(written.multi).unwrap();
    assert_eq!(written.multi_tasks, 1);
    assert_eq!(multi.lines().count(), 1);
    assert!(multi.contains("dev-difficult-1"), "{multi}");
}

#[test]
fn a_missing_file_or_a_bad_line_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let err = toolscout_eval::convert::seal_tools(dir.path(), "dev").unwrap_err();
    assert!(err.to_string().contains("tool.jsonl"), "{err}");
    let data = dir.path().join("Seal-Tools_Dataset");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("tool.jsonl"), "{\"api_name\": \"a\"}\nnot json\n").unwrap();
    let err = toolscout_eval::convert::seal_tools(dir.path(), "dev").unwrap_err();
    assert!(
        err.to_string()
            .ends_with("line 2: expected ident at line 1 column 2"),
        "{err}"
    );
}

#[test]
fn chains_are_the_tasks_that_feed_a_result_into_a_call_and_each_gets_a_recipe() {
    let dir = seal_tools_dir();
    let converted = toolscout_eval::convert::seal_tools(dir.path(), "dev").unwrap();
    let written = converted.write(&dir.path().join("out")).unwrap();
    let (tools, tasks) = (written.tools, written.tasks);
    let chains = toolscout_eval::convert::chains(&tools, &tasks).unwrap();
    assert_eq!(chains.tasks.len(), 1, "{:?}", chains.tasks);
    assert_eq!(chains.tasks[0]["id"], "dev-difficult-1");
    assert_eq!(chains.recipes.len(), 1);
    let recipe = serde_json::Value::Object(chains.recipes[0].clone());
    insta::assert_json_snapshot!(recipe);
    // The recipe is put and checked like any: a catalog of the converted tools takes it,
    // and a call runs both steps on the evaluation's stub.
    let lines = toolscout_eval::read::tool_lines(&tools).unwrap();
    let toolbox = toolscout_eval::agent::build_toolbox(&lines, None).unwrap();
    assert_eq!(
        toolscout_eval::agent::add_recipes(&toolbox, &chains.recipes).unwrap(),
        1
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = runtime.block_on(toolbox.call(
        "getPlantingInstructions_then_getTimberResources",
        json!({"crop_name": "Tomatoes", "soil_type": "loam"}),
    ));
    let value = outcome.into_result().unwrap();
    assert_eq!(
        value["getTimberResources"]["arguments"],
        json!({"area": "done"}),
        "{value}"
    );
}

/// An MCP-Bench folder of three servers (one listing no tools) and three tasks: one
/// over one server, one over two, one that names no tool.
fn mcp_bench_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let servers = json!({"summary": {"total_servers": 3}, "servers": {
        "Paper Search": {"name": "Paper Search", "connection_status": "success", "tools": {
            "search_arxiv": {"name": "search_arxiv", "description": "Search arXiv papers", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "integer", "minimum": 1}}, "required": ["query"]}},
            "search": {"name": "search", "description": "Search every source", "input_schema": {"properties": {"q": {"type": "string"}}}}
        }},
        "BioMCP": {"name": "BioMCP", "connection_status": "success", "tools": {
            "think": {"name": "think", "description": "Plan the research", "input_schema": {}},
            "gene_getter": {"name": "gene_getter", "description": "Gene annotation", "input_schema": {"type": "object", "properties": {"gene_id_or_symbol": {"type": "string"}}}},
            "search": {"name": "search", "description": "Search biomedical records", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}
        }},
        "NASA Data": {"name": "NASA Data", "connection_status": "failed", "error": "Connection closed", "tools": {}}
    }});
    std::fs::write(dir.path().join("servers.json"), servers.to_string()).unwrap();
    let tasks = dir.path().join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    let file = |name: &str, groups: serde_json::Value| {
        std::fs::write(
            tasks.join(name),
            json!({"server_tasks": groups, "total_tasks": 0}).to_string(),
        )
        .unwrap();
    };
    file(
        "mcpbench_tasks_single_runner_format.json",
        json!([{"server_name": "Paper Search", "tasks": [
            {"task_id": "paper_search_000", "task_description": "1. Call search_arxiv for 'BRAF'. 2. search the results.",
             "fuzzy_description": "What's new on BRAF in preprints?", "distraction_servers": ["NASA Data"]},
            {"task_id": "paper_search_001", "task_description": "Find papers and read them.",
             "fuzzy_description": "Read me some papers."}
        ]}]),
    );
    file(
        "mcpbench_tasks_multi_2server_runner_format.json",
        json!([{"server_name": "Paper Search+BioMCP", "servers": ["Paper Search", "BioMCP"], "tasks": [
            {"task_id": "paper_search_biomcp_000",
             "task_description": "1) Use BioMCP:think to plan. 2) BioMCP:gene_getter for BRAF. 3) Paper Search:search_arxiv, then BioMCP:search and Paper Search:search. 4) BioMCP:gene_getter again.",
             "fuzzy_description": "I'm stuck on melanoma resistance; what do we know?", "distraction_servers": ["NASA Data"]}
        ]}]),
    );
    file("mcpbench_tasks_multi_3server_runner_format.json", json!([]));
    dir
}

#[test]
fn mcp_bench_tools_are_bundled_by_server_and_shared_names_qualified() {
    let dir = mcp_bench_dir();
    let converted =
        toolscout_eval::convert::mcp_bench(dir.path(), &dir.path().join("servers.json")).unwrap();
    let names: Vec<&str> = converted
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // In the file's order. `search` is both servers': each is qualified by its server,
    // as `import mcp` does.
    assert_eq!(
        names,
        [
            "search_arxiv",
            "paper_search_search",
            "think",
            "gene_getter",
            "biomcp_search"
        ]
    );
    // An empty schema is an object of no properties; a missing type is an object's.
    let think = &converted.tools[2];
    assert_eq!(
        think["parameters"],
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(converted.tools[1]["parameters"]["type"], "object");
    for tool in &converted.tools {
        toolscout_spec::adapters::jsonl::from_value(tool).unwrap();
        assert!(toolscout_spec::adapters::jsonl::bundle_of(tool).is_some());
    }
    insta::assert_snapshot!(converted.tools[4].to_string(), @r#"{"name":"biomcp_search","description":"Search biomedical records","parameters":{"type":"object","properties":{"query":{"type":"string"}}},"source":"mcp-bench","bundle":"BioMCP","meta":{"server":"BioMCP","tool":"search"}}"#);
}

#[test]
fn mcp_bench_tasks_expect_the_tools_their_plan_names_in_order() {
    let dir = mcp_bench_dir();
    let converted =
        toolscout_eval::convert::mcp_bench(dir.path(), &dir.path().join("servers.json")).unwrap();
    assert_eq!(converted.tasks.len(), 2);
    // The bare word "search" in a plan is English; `search_arxiv` reads as a name.
    let single = &converted.tasks[0];
    assert_eq!(single["query"], "What's new on BRAF in preprints?");
    assert_eq!(single["expected"], json!(["search_arxiv"]));
    assert_eq!(single["source"], "mcp-bench/single");
    // Two servers: each tool once, in the order first named, qualified names included.
    let multi = &converted.tasks[1];
    assert_eq!(
        multi["expected"],
        json!([
            "think",
            "gene_getter",
            "search_arxiv",
            "biomcp_search",
            "paper_search_search"
        ])
    );
    assert_eq!(multi["offered"], multi["expected"]);
    assert_eq!(multi["servers"], json!(["Paper Search", "BioMCP"]));
    assert_eq!(multi["distraction_servers"], json!(["NASA Data"]));
    insta::assert_debug_snapshot!(converted.skipped, @r#"
    [
        "server NASA Data: no tools (Connection closed)",
        "tasks/mcpbench_tasks_single_runner_format.json: paper_search_001 names no tool of its servers (Paper Search)",
    ]
    "#);
    // Written, the tasks read back as evaluation tasks over the tools.
    let out = tempfile::tempdir().unwrap();
    let written = converted.write(out.path()).unwrap();
    assert_eq!(written.multi_tasks, 1);
    let tasks = toolscout_eval::read::tasks(&written.tasks, None).unwrap();
    let lines = toolscout_eval::read::tool_lines(&written.tools).unwrap();
    for task in &tasks {
        for name in &task.expected {
            assert!(
                lines.specs.iter().any(|s| s.name.as_str() == name),
                "{name}"
            );
        }
    }
}

#[test]
fn mcp_bench_without_its_files_says_which() {
    let dir = mcp_bench_dir();
    let err =
        toolscout_eval::convert::mcp_bench(dir.path(), &dir.path().join("nope.json")).unwrap_err();
    assert!(err.to_string().contains("nope.json"), "{err}");
    std::fs::write(dir.path().join("bad.json"), "{\"summary\": {}}").unwrap();
    let err =
        toolscout_eval::convert::mcp_bench(dir.path(), &dir.path().join("bad.json")).unwrap_err();
    assert!(err.to_string().contains("collect_mcp_info.py"), "{err}");
    std::fs::remove_file(
        dir.path()
            .join("tasks/mcpbench_tasks_multi_3server_runner_format.json"),
    )
    .unwrap();
    let err = toolscout_eval::convert::mcp_bench(dir.path(), &dir.path().join("servers.json"))
        .unwrap_err();
    assert!(err.to_string().contains("3server"), "{err}");
}
