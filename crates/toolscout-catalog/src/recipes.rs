//! The checks of a recipe against the catalog, made under the write lock of the write
//! that adds it: every step's tool is one the writer sees (or is added by the same
//! write), the arguments fit those tools, recipes nest at most
//! [`MAX_DEPTH`](toolscout_spec::recipe::MAX_DEPTH) deep and never call themselves
//! ([`Recipe::check_tools`]).

use std::collections::HashMap;

use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::{ToolFile, ToolType};
use toolscout_spec::recipe::{Recipe, StepTool};

use crate::state::State;
use crate::view::{in_view, visible_bundles};
use crate::{Error, Result, Viewer};

/// Checks every recipe among `new` (the files of the tools one write adds, checked on
/// their own) against the tools `writer` sees in `state` and the other tools of `new`.
pub(crate) fn check_new(state: &State, writer: &Viewer, new: &[&ToolFile]) -> Result<()> {
    if !new.iter().any(|f| f.tool_type == ToolType::Recipe) {
        return Ok(());
    }
    let specs: Vec<(&ToolFile, ToolSpec)> = new
        .iter()
        .filter_map(|f| f.to_spec().ok().map(|s| (*f, s)))
        .collect();
    let batch: HashMap<&str, (&ToolFile, &ToolSpec)> = specs
        .iter()
        .map(|(f, s)| (s.name.as_str(), (*f, s)))
        .collect();
    let visible = visible_bundles(state, writer);
    let mut cache: HashMap<String, Option<StepTool>> = HashMap::new();
    let mut resolve = |name: &str| -> Option<StepTool> {
        if let Some(found) = cache.get(name) {
            return found.clone();
        }
        let found = match batch.get(name) {
            Some((file, spec)) => Some(step_tool(spec, file.tool_type, &file.implementation)),
            None => {
                let holder = state
                    .tools
                    .values()
                    .filter(|raw| {
                        raw.head.name == name && in_view(visible.as_ref(), raw.head.bundle_id)
                    })
                    .max_by_key(|raw| crate::catalog::claim_of(state, raw));
                holder
                    .and_then(|raw| state.view(raw).ok())
                    .map(|t| step_tool(&t.spec, t.tool_type, &t.implementation))
            }
        };
        cache.insert(name.to_owned(), found.clone());
        found
    };
    for (file, spec) in &specs {
        if file.tool_type != ToolType::Recipe {
            continue;
        }
        let recipe = Recipe::parse(&file.implementation).map_err(|source| Error::Recipe {
            name: spec.name.to_string(),
            source,
        })?;
        recipe
            .check_tools(spec.name.as_str(), &spec.parameters, &mut resolve)
            .map_err(|source| Error::Recipe {
                name: spec.name.to_string(),
                source,
            })?;
    }
    Ok(())
}

fn step_tool(spec: &ToolSpec, ty: ToolType, block: &serde_json::Value) -> StepTool {
    StepTool {
        parameters: spec.parameters.clone(),
        output_schema: spec.output_schema.clone(),
        recipe: (ty == ToolType::Recipe)
            .then(|| Recipe::parse(block).ok())
            .flatten(),
    }
}
