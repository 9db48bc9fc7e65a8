//! Tool-set identity: same tools → same id, whatever the order; any change → new id.

use serde_json::json;
use toolscout_spec::identity::toolset_id;
use toolscout_spec::sample;

#[test]
fn same_tools_same_id_in_any_order() {
    let tools = sample::catalog();
    let id = toolset_id(&tools);
    let mut rotated = tools.clone();
    rotated.rotate_left(3);
    assert_eq!(toolset_id(&rotated), id);
    assert_eq!(id.get_version_num(), 5);
}

#[test]
fn schema_key_order_does_not_matter() {
    let mut a = sample::catalog();
    let mut b = a.clone();
    a[0].parameters = json!({"type": "object", "properties": {"x": {"type": "string"}}});
    b[0].parameters = json!({"properties": {"x": {"type": "string"}}, "type": "object"});
    assert_eq!(toolset_id(&a), toolset_id(&b));
}

#[test]
fn any_change_gives_a_new_id() {
    let tools = sample::catalog();
    let id = toolset_id(&tools);
    let mut changed = Vec::new();
    let mut t = tools.clone();
    t[1].version = Some("2".into());
    changed.push(toolset_id(&t));
    let mut t = tools.clone();
    t[1].description.push('.');
    changed.push(toolset_id(&t));
    let mut t = tools.clone();
    t[1].parameters["properties"]["mode"]["default"] = json!("append");
    changed.push(toolset_id(&t));
    let mut t = tools.clone();
    t.pop();
    changed.push(toolset_id(&t));
    let mut t = tools.clone();
    t[2].name = toolscout_spec::ToolName::new("find_files").unwrap();
    changed.push(toolset_id(&t));
    for (i, c) in changed.iter().enumerate() {
        assert_ne!(*c, id, "change {i} kept the id");
    }
    assert_eq!(toolset_id(&[]), toolset_id(&[]));
    assert_ne!(toolset_id(&[]), id);
}
