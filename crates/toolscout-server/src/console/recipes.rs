//! The console's recipe builder tries a recipe before it is saved:
//! `POST /console/api/recipes/try` with
//! `{"tool": <the recipe's tool body, as the tool PUT takes it>, "args": {…}, "approved": false}`.
//!
//! The recipe is checked as its put would be, in the caller's view
//! ([`CatalogView::check_recipe`](toolscout_catalog::CatalogView::check_recipe)): one
//! that does not check is a 400 `invalid` whose message names the step (and whose
//! `details` say which), and nothing runs. `slug` and `version` may be left out (the
//! save gives them); `bundleID` is ignored (a try is in no bundle). Then it runs
//! ([`Toolbox::call_recipe_draft`](toolscout_discover::Toolbox::call_recipe_draft)) and
//! the answer is server-sent events:
//!
//! * `event: step`, one [`RecipeEvent`] each (`step_started`, `step_finished`,
//!   `step_skipped` in its `event` field), as the steps go;
//! * `event: outcome`, last: `{"ok": true, "value"}` or `{"ok": false, "error"}`.
//!
//! **Approval.** A recipe that requires approval, or one of whose steps does, runs only
//! with `"approved": true`, which only a client with the server's token may send (403
//! `forbidden` otherwise, as on the invoke routes); the console's tester asks the person
//! first. Without it the outcome is `approval_refused` and nothing runs: the server's
//! approver (`serve --approve TOOL`) is never asked about an unsaved recipe, whose name
//! is whatever its author typed. Closing the stream stops the run.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use toolscout_catalog::AuthoredTool;
use toolscout_discover::{Progress, RecipeEvent};

use crate::error::AppError;
use crate::manifest::approval;
use crate::rest::blocking;
use crate::{AppState, Principal};

/// The slug a try checks when the body gives none.
const DRAFT_SLUG: &str = "draft";

/// The body of `POST /console/api/recipes/try`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TryRecipe {
    /// The recipe's tool body, as `PUT /tools/bundles/…/tools/…/version/…` takes it.
    tool: Map<String, Value>,
    /// The recipe's arguments.
    #[serde(default)]
    args: Value,
    /// The caller (the operator, asked by the console) approves the run.
    #[serde(default)]
    approved: bool,
}

/// Aborts the run when the answer's stream is dropped (the client went away).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `POST /console/api/recipes/try`: checks the recipe, then runs it, streamed.
pub(crate) async fn try_recipe(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: Result<Json<TryRecipe>, JsonRejection>,
) -> Result<Response, AppError> {
    let Json(body) = body?;
    let approved = approval(body.approved, &state, &principal)?;
    let mut tool = body.tool;
    for (key, default) in [("slug", DRAFT_SLUG), ("version", "1")] {
        if matches!(tool.get(key), None | Some(Value::Null)) {
            tool.insert(key.to_owned(), json!(default));
        }
    }
    // A try is in no bundle: the nil id stands for the one the save will name.
    let AuthoredTool {
        slug, version, put, ..
    } = AuthoredTool::from_json(tool, Some(uuid::Uuid::nil()))?;
    let (spec, put) = blocking(&state, &principal, move |view| {
        view.check_recipe(&slug, &version, &put)
            .map(|spec| (spec, put))
    })
    .await?;
    let toolbox = state.toolbox_for(principal.viewer());
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    let steps = tx.clone();
    let progress: Progress = Arc::new(move |e: &RecipeEvent| {
        let data = serde_json::to_value(e).unwrap_or(Value::Null);
        let _ = steps.send(event("step", &data));
    });
    let run = tokio::spawn(async move {
        let outcome = toolbox
            .call_recipe_draft(
                spec,
                &put.implementation,
                body.args,
                approved,
                Some(progress),
            )
            .await;
        let _ = tx.send(event("outcome", &outcome.to_json()));
    });
    let stream =
        futures_util::stream::unfold((rx, AbortOnDrop(run)), |(mut rx, guard)| async move {
            rx.recv()
                .await
                .map(|e| (Ok::<_, Infallible>(e), (rx, guard)))
        });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}
