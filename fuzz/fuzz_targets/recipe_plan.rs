//! Recipe plans (issue 61): up to four recipes (a JSON array of `impl` blocks, named
//! `r0`…`r3`, which may call each other and the plain tools `t` and `u`) read and checked
//! as a put checks them; a plan the check takes never makes more than
//! `MAX_CALLS_PER_RUN` calls, however its `forEach` lists and nested recipes multiply.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolscout_spec::recipe::{MAX_CALLS_PER_RUN, Recipe, StepTool};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let blocks = match value {
        Value::Array(items) => items.into_iter().take(4).collect(),
        other => vec![other],
    };
    let recipes: Vec<Option<Recipe>> = blocks.iter().map(|b| Recipe::parse(b).ok()).collect();
    let params = json!({"type": "object", "properties": {
        "items": {"type": "array", "maxItems": 60},
        "list": {"type": "array"},
        "x": {}
    }});
    let mut resolve = |name: &str| -> Option<StepTool> {
        match name {
            "t" | "u" => Some(StepTool {
                parameters: json!({"type": "object", "properties": {"x": {}, "items": {"type": "array"}}}),
                output_schema: Some(json!({"type": "array", "maxItems": 30})),
                recipe: None,
            }),
            _ => {
                let i: usize = name.strip_prefix('r')?.parse().ok()?;
                let recipe = recipes.get(i)?.clone()?;
                Some(StepTool {
                    parameters: params.clone(),
                    output_schema: None,
                    recipe: Some(recipe),
                })
            }
        }
    };
    for (i, recipe) in recipes.iter().enumerate() {
        let Some(recipe) = recipe else { continue };
        let name = format!("r{i}");
        if recipe.check_tools(&name, &params, &mut resolve).is_ok() {
            let most = recipe.most_calls(&params, &mut resolve);
            assert!(
                most <= MAX_CALLS_PER_RUN as u64,
                "{name} was taken with up to {most} calls"
            );
        }
    }
});
