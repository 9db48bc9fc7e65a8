//! `call_tool`: the meta-tool that calls any tool of the catalog by name, offered next
//! to the `discover_*` tools wherever a model browses (the agent loop's `Browse` policy,
//! the MCP server's `discover` mode). One spec, so every model reads the same tool.

use serde_json::json;
use toolscout_spec::ToolSpec;

/// The name of the meta-tool that calls any tool by name.
pub const CALL_TOOL: &str = "call_tool";

/// Its description, from `prompts/call_tool.md`.
const DESCRIPTION: &str = include_str!("../prompts/call_tool.md");

/// The spec of [`CALL_TOOL`]: `call_tool {name: string, arguments?: object}`.
///
/// `arguments` may be left out (a tool without parameters): every caller reads a
/// missing one as `{}`.
///
/// ```
/// let spec = toolscout_discover::call_tool_spec();
/// assert_eq!(spec.name.as_str(), "call_tool");
/// assert_eq!(spec.parameters["required"], serde_json::json!(["name"]));
/// ```
pub fn call_tool_spec() -> ToolSpec {
    ToolSpec::builder(CALL_TOOL, "Call any tool by name with JSON arguments")
        .title("Call a tool")
        .description(DESCRIPTION.trim())
        .parameters(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's exact name, as a discover tool shows it"},
                "arguments": {"type": "object", "description": "The tool's arguments, matching its parameters ({} when it has none)"}
            },
            "required": ["name"],
            "additionalProperties": false
        }))
        .returns("the tool's result: {\"ok\":true,\"value\":…} or {\"ok\":false,\"error\":{\"kind\":…,\"message\":…}}")
        .example(
            "Read a file",
            json!({"name": "read_file", "arguments": {"file_path": "README.md"}}),
        )
        .with_metadata(|m| m.open_world = true)
        .build()
        // A fixed, valid spec: the doc test builds it.
        .unwrap_or_else(|e| unreachable!("the call_tool spec is valid: {e}"))
}
