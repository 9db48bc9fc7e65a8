//! Recipes on the server: a put that does not check is a 400 naming the step.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::{fixture, send};

/// The clock → json_query recipe of the console's example, named `name`.
fn tokyo(name: &str) -> Value {
    json!({
        "slug": "tokyo-offset", "version": "1", "name": name,
        "description": "The current UTC offset of Tokyo: reads the clock there, then selects the offset.",
        "type": "recipe", "argSchema": {"type": "object", "properties": {}},
        "impl": {"steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
            {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}],
         "result": "$.steps.offset[0]"}
    })
}

#[tokio::test]
async fn a_put_recipe_that_does_not_check_is_a_400_naming_the_step() {
    let f = fixture();
    let bundle = Uuid::now_v7();
    let put = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{bundle}"),
        Some(json!({"slug": "mine"})),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    let mut body = tokyo("tokyo_offset");
    body["impl"]["steps"][1]["tool"] = json!("json_quarry");
    let r = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{bundle}/tools/tokyo-offset/version/1"),
        Some(body),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    insta::assert_json_snapshot!(r.body, @r#"
    {
      "error": {
        "code": "invalid",
        "message": "recipe 'tokyo_offset': step 'offset': calls 'json_quarry', which no tool of the catalog is named",
        "details": {
          "recipe": "tokyo_offset",
          "step": "offset",
          "problem": "calls 'json_quarry', which no tool of the catalog is named"
        }
      }
    }
    "#);
}
