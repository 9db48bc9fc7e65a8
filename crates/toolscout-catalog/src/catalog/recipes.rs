//! The checks of a recipe against the catalog, made under the write lock of the write
//! that adds it: every step's tool is one the writer sees (or is added by the same
//! write), the arguments fit those tools, recipes nest at most
//! [`MAX_DEPTH`](toolscout_spec::recipe::MAX_DEPTH) deep and never call themselves
//! ([`Recipe::check_tools`]). [`check_draft`] makes the same checks of a recipe that is
//! not written ([`crate::CatalogView::check_recipe`]).

use std::collections::HashMap;

use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::{ToolFile, ToolType};
use toolscout_spec::recipe::{Recipe, RecipeError, StepTool};
use toolscout_spec::suggest::{closest_names, did_you_mean};

use super::Catalog;
use crate::state::State;
use crate::state::visible::{best_of, in_view, visible_bundles};
use crate::{Error, Result, ToolPut, Viewer};

/// The checks a put of `put` as `<slug, version>` by `viewer` makes of the tool itself
/// (its name, slug, version, spec and `impl` block, then [`check_new`]), without a
/// bundle and without writing: what a put would refuse, this refuses with the same
/// error. Only a recipe is accepted. Returns the tool's spec.
pub(crate) fn check_draft(
    catalog: &Catalog,
    viewer: &Viewer,
    slug: &str,
    version: &str,
    put: &ToolPut,
) -> Result<ToolSpec> {
    let ty = match put.tool_type {
        ToolType::Recipe => "recipe",
        ToolType::Native => "native",
        ToolType::Http => "http",
    };
    if ty != "recipe" {
        return Err(Error::ToolBody {
            reason: format!(
                "tool '{}' is of type \"{ty}\": only a recipe (\"type\": \"recipe\") is checked without being put",
                put.spec.name
            ),
        });
    }
    catalog.check_tool_name(put.spec.name.as_str())?;
    // The ids are placeholders: the file is checked, never written.
    let (file, spec) = crate::model::new_tool_file(
        uuid::Uuid::nil(),
        uuid::Uuid::nil(),
        slug,
        version,
        put,
        crate::model::now(),
    )?;
    let state = catalog.lock_state();
    check_new(&state, viewer, &[&file])?;
    Ok(spec)
}

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
    let mut cache: HashMap<String, Option<StepTool>> = HashMap::new();
    let mut resolve = |name: &str| -> Option<StepTool> {
        if let Some(found) = cache.get(name) {
            return found.clone();
        }
        let found = match batch.get(name) {
            Some((file, spec)) => Some(step_tool(spec, file.tool_type, &file.implementation)),
            None => {
                // The tool a run of the writer's would call: its view's precedence of
                // owners, never the tool of that name changed last.
                let holder = best_of(
                    state,
                    writer,
                    state
                        .tools
                        .values()
                        .map(Box::as_ref)
                        .filter(|raw| raw.head.name == name),
                )
                .and_then(|(id, _)| state.tools.get(&id));
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
        if let Err(mut source) =
            recipe.check_tools(spec.name.as_str(), &spec.parameters, &mut resolve)
        {
            if let Some(hint) = unknown_step_tool(&recipe, &source, &mut resolve)
                .and_then(|tool| suggest(state, writer, &batch, tool))
            {
                source.message = format!("{}; {hint}", source.message);
            }
            return Err(Error::Recipe {
                name: spec.name.to_string(),
                source,
            });
        }
    }
    Ok(())
}

/// The tool of the step `error` names, when no tool of that name is found.
fn unknown_step_tool<'r>(
    recipe: &'r Recipe,
    error: &RecipeError,
    resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
) -> Option<&'r str> {
    let id = error.step.as_deref()?.trim_matches('\'');
    let step = recipe.steps.iter().find(|s| s.id == id)?;
    resolve(&step.tool).is_none().then_some(step.tool.as_str())
}

/// "did you mean: clock?": the names closest to `name` among the tools `writer` sees and
/// those of the write.
fn suggest(
    state: &State,
    writer: &Viewer,
    batch: &HashMap<&str, (&ToolFile, &ToolSpec)>,
    name: &str,
) -> Option<String> {
    let visible = visible_bundles(state, writer);
    let seen = state
        .tools
        .values()
        .filter(|raw| in_view(visible.as_ref(), raw.head.bundle_id))
        .map(|raw| raw.head.name.as_str());
    did_you_mean(&closest_names(name, seen.chain(batch.keys().copied())))
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
