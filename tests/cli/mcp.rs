//! `toolscout import mcp`: the tools of another MCP server (here, another toolscout
//! serving MCP over stdio), with calls proxied to it.

use insta::assert_snapshot;

use crate::Env;

#[test]
fn mcp_server_tools_are_imported_and_proxied() {
    let env = Env::new();
    let remote = env.path().join("remote");
    let bin = env!("CARGO_BIN_EXE_toolscout");
    let out = env.check(&[
        "import",
        "mcp",
        "--bundle",
        "remote",
        "--",
        bin,
        "--catalog",
        remote.to_str().unwrap(),
        "serve",
        "--mcp",
        "stdio",
    ]);
    assert_snapshot!(out);
    assert_snapshot!(env.check(&["list", "--bundle", "remote"]));
    let call = env.all(&[
        "call",
        "call_tool",
        "--args",
        r#"{"name": "json_query", "arguments": {"value": {"a": [1, 2]}, "path": "$.a[1]"}}"#,
    ]);
    assert_snapshot!(call);
}
