//! The Recipes screen: a recipe built from the palette and the step forms, its JSON
//! shown as it is built, tried before it is saved (each step's progress, then the
//! result), saved into a bundle and found on the Tools screen with its steps at level
//! 3; a mapping of the wrong type shown at its step, from the try and from the save.

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use crate::{Env, Server, Session};

/// A bundle of the operator's, made through the REST API (the Tools screen's own flow
/// is `tools::create_validate_and_toggle`).
async fn bundle(server: &Server, slug: &str) -> Result<()> {
    let api = server.url.trim_end_matches('/');
    let put = reqwest::Client::new()
        .put(format!("{api}/tools/bundles/{}", uuid::Uuid::now_v7()))
        .json(&json!({ "slug": slug }))
        .send()
        .await?;
    ensure!(
        put.status().is_success(),
        "creating the bundle: {}",
        put.status()
    );
    Ok(())
}

/// Adds a step calling `tool` with the palette: types its name, picks its row.
async fn add_step(s: &Session, tool: &str) -> Result<()> {
    s.type_into("#recipe-palette-search", tool).await?;
    s.find(&format!("#recipe-palette-results li[data-tool={tool}]"))
        .await?
        .click()
        .await?;
    Ok(())
}

/// The JSON the builder shows.
async fn shown(s: &Session) -> Result<Value> {
    let text = s.find("#recipe-json").await?.text().await?;
    Ok(serde_json::from_str(&text)?)
}

/// Builds clock → json_query, tries it (the steps' events, then `+09:00`), saves it and
/// finds it on the Tools screen with its steps at level 3, callable from the tester.
pub(crate) async fn build_try_save_and_find(env: Env) -> Result<()> {
    let server = Server::start(None).await?;
    bundle(&server, "mine").await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.set_window_size(1400, 1100).await?;
        s.client.goto(&server.url).await?;
        s.find("#results li").await?;
        s.find("#new-recipe").await?.click().await?;
        ensure!(
            s.find("#recipes-screen").await?.is_displayed().await?,
            "the Recipes screen is not shown"
        );
        s.type_into("#recipe-name", "tokyo_offset").await?;
        s.type_into(
            "#recipe-description",
            "The current UTC offset of Tokyo: reads the clock there, then selects the offset.",
        )
        .await?;

        // The first step: clock, its id edited, its form filled.
        add_step(&s, "clock").await?;
        let id = s.find("#s1-id").await?;
        ensure!(
            id.prop("value").await?.as_deref() == Some("clock"),
            "the step id is not defaulted from the tool name"
        );
        s.type_into("#s1-id", "now").await?;
        s.find("#s1-p-action").await?.select_by_label("now").await?;
        s.type_into("#s1-p-time_zone", "Asia/Tokyo").await?;

        // The second: json_query, its `value` mapped from the first step's result.
        add_step(&s, "json_query").await?;
        s.type_into("#s2-id", "offset").await?;
        s.type_into("#s2-p-path", "$.utc_offset").await?;
        s.find("#s2-m-value")
            .await?
            .select_by_label("from a source")
            .await?;
        let offered = s
            .js("[...document.querySelectorAll('#s2-src-value option')].map(o => o.textContent)")
            .await?;
        ensure!(
            offered == json!(["— choose —", "$.steps.now"]),
            "the sources offered to the second step: {offered}"
        );
        s.find("#s2-src-value")
            .await?
            .select_by_label("$.steps.now")
            .await?;
        ensure!(
            !s.find("#s2-p-value").await?.is_displayed().await?,
            "the value's own widget still shows beside its source"
        );
        s.type_into("#recipe-result-path", "[0]").await?;

        // The JSON, as the builder shows it.
        let tool = shown(&s).await?;
        ensure!(
            tool["impl"]
                == json!({"steps": [
                    {"id": "now", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
                    {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}],
                  "result": "$.steps.offset[0]"}),
            "the builder made {tool:#}"
        );
        ensure!(
            tool["type"] == "recipe"
                && tool["name"] == "tokyo_offset"
                && tool["slug"] == "tokyo-offset",
            "{tool:#}"
        );

        // Tried before it is saved: each step, then the result.
        s.find("#recipe-run").await?.click().await?;
        let ok = s
            .wait_text("#recipe-outcome .outcome.ok", "+09:00")
            .await?;
        ensure!(ok.contains("ok ·"), "{ok}");
        let progress = s.find("#recipe-progress").await?.text().await?;
        let now = progress.find("✓ now · clock");
        let offset = progress.find("✓ offset · json_query");
        ensure!(
            matches!((now, offset), (Some(a), Some(b)) if a < b),
            "the steps' progress: {progress:?}"
        );
        let saved = s
            .js("fetch('/tools/tools/search?q=tokyo_offset').then(r => r.json()).then(b => b.items.filter(t => t.name === 'tokyo_offset').length)")
            .await?;
        ensure!(saved == json!(0), "the try saved the recipe");
        // The whole builder in one screenshot: the window as tall as the page at its width.
        s.client.set_window_size(1200, 1300).await?;
        let height = s
            .js("document.documentElement.scrollHeight + window.outerHeight - window.innerHeight")
            .await?
            .as_u64()
            .unwrap_or(1300);
        s.client
            .set_window_size(1200, u32::try_from(height)?.min(2000))
            .await?;
        s.js("window.scrollTo(0, 0) || true").await?;
        s.screenshot("recipes").await?;
        s.client.set_window_size(1400, 1100).await?;

        // Saved into the bundle picked, then found on the Tools screen.
        s.find("#recipe-bundle").await?.select_by_label("mine").await?;
        s.find("#recipe-save").await?.click().await?;
        s.wait_text("#recipe-saved", "Saved tokyo_offset v1 in mine")
            .await?;
        s.find("#recipe-open").await?.click().await?;
        s.wait_text("#tool-view h2", "tokyo_offset").await?;
        s.wait_text("#tool-view", "tokyo-offset v1 · recipe").await?;
        s.find("#level-3").await?.click().await?;
        let l3 = s.wait_text("#level-text", "json_query").await?;
        ensure!(
            l3.contains("- now: clock") && l3.contains("- offset: json_query (after now)"),
            "level 3 does not show the steps: {l3}"
        );
        s.type_into("#search", "tokyo").await?;
        s.wait_text("#results li:first-child .name", "tokyo_offset")
            .await?;
        s.find("#arg-call").await?.click().await?;
        s.wait_text("#arg-outcome .outcome.ok", "+09:00").await?;
        s.screenshot("recipes-saved").await?;
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// A mapping of the wrong type (an integer argument into clock's `time_zone`): the try
/// and the save refuse it, and the builder shows their error at the step it names.
pub(crate) async fn a_bad_mapping_is_shown_at_its_step(env: Env) -> Result<()> {
    let server = Server::start(None).await?;
    bundle(&server, "mine").await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&format!("{}#/recipes", server.url)).await?;
        s.find("#recipe-name").await?;
        s.type_into("#recipe-name", "zone_clock").await?;
        s.type_into("#recipe-description", "The time in a zone.")
            .await?;
        s.find("#recipe-arg-add").await?.click().await?;
        s.type_into("#recipe-arg-1-name", "zone").await?;
        s.find("#recipe-arg-1-type")
            .await?
            .select_by_label("integer")
            .await?;
        add_step(&s, "clock").await?;
        s.find("#s2-p-action").await?.select_by_label("now").await?;
        s.find("#s2-m-time_zone")
            .await?
            .select_by_label("from a source")
            .await?;
        s.find("#s2-src-time_zone")
            .await?
            .select_by_label("$.args.zone")
            .await?;
        let tool = shown(&s).await?;
        ensure!(
            tool["impl"]["steps"][0]["from"] == json!({"time_zone": "$.args.zone"})
                && tool["argSchema"]["properties"]["zone"] == json!({"type": "integer"}),
            "{tool:#}"
        );
        let want = "recipe 'zone_clock': step 'clock': from.time_zone: $.args.zone gives integer";

        // The try: refused before anything runs, at the step.
        s.find("#recipe-run").await?.click().await?;
        let err = s.wait_text("#recipe-outcome .outcome.err", want).await?;
        ensure!(err.contains("invalid"), "{err}");
        let progress = s.find("#recipe-progress").await?.text().await?;
        ensure!(progress.is_empty(), "a step ran: {progress}");
        let marked = s.find("#s2").await?.attr("aria-invalid").await?;
        ensure!(marked.as_deref() == Some("true"), "the step is not marked");

        // The save: the put's error beside the builder.
        s.find("#recipe-bundle")
            .await?
            .select_by_label("mine")
            .await?;
        s.find("#recipe-save").await?.click().await?;
        s.wait_text("#recipe-error", want).await?;
        s.screenshot("recipes-error").await?;

        // Fixed (a string argument), it runs.
        s.find("#recipe-arg-1-type")
            .await?
            .select_by_label("string")
            .await?;
        s.type_into("#recipe-run-arg-zone", "Asia/Tokyo").await?;
        s.find("#recipe-run").await?.click().await?;
        s.wait_text("#recipe-outcome .outcome.ok", "+09:00").await?;
        let marked = s.find("#s2").await?.attr("aria-invalid").await?;
        ensure!(marked.is_none(), "the step is still marked");
        Ok(())
    }
    .await;
    s.close().await;
    result
}
