//! What a new user tripped over in the console (#63): a token's "Use" that did not
//! reload the tool list, controls a tenant was shown and the server refused, a recipe's
//! "New version" that opened the generic form, a builder without a summary, and a moved
//! step that changed the recipe's result or read a step that now came after it.

use anyhow::{Result, ensure};
use serde_json::{Value, json};
use toolscout_server::ServerOptions;

use crate::{Env, Server, Session};

const OPERATOR: &str = "s3cret-first-hour";

/// A REST client of the server, with `token`.
fn client(token: &str) -> Result<reqwest::Client> {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse()?,
    );
    Ok(reqwest::Client::builder()
        .default_headers(headers)
        .build()?)
}

/// Sends a JSON request and returns the answer's body, which must be a success.
async fn send(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Value,
) -> Result<Value> {
    let reply = client.request(method, &url).json(&body).send().await?;
    let status = reply.status();
    let body: Value = reply.json().await?;
    ensure!(status.is_success(), "{url}: {status} {body}");
    Ok(body)
}

/// A bundle made with `POST /tools/bundles` and one HTTP tool in it; the bundle's id.
async fn bundle_with_tool(
    client: &reqwest::Client,
    api: &str,
    slug: &str,
    tool: &str,
) -> Result<String> {
    let made = send(
        client,
        reqwest::Method::POST,
        format!("{api}/tools/bundles"),
        json!({"slug": slug}),
    )
    .await?;
    let id = made["bundleID"].as_str().unwrap_or_default().to_owned();
    send(
        client,
        reqwest::Method::PUT,
        format!("{api}/tools/bundles/{id}/tools/{slug}-tool/version/1"),
        json!({"name": tool, "description": format!("The {slug} tool."), "type": "http",
            "impl": {"method": "GET", "urlTemplate": "https://api.example.com/x"}}),
    )
    .await?;
    Ok(id)
}

/// The names of the rows of `#results` that have an enable switch, and of those that
/// have none.
async fn switches(s: &Session) -> Result<Value> {
    s.js("Object.fromEntries([...document.querySelectorAll('#results li')].map(li => [li.dataset.tool, !!li.querySelector('input.toggle')]))").await
}

pub(crate) async fn a_token_reloads_the_view_and_a_tenant_sees_only_its_controls(
    env: Env,
) -> Result<()> {
    let options = ServerOptions::default().with_token(Some(OPERATOR));
    let server = Server::start_with_options(None, false, options).await?;
    let api = server.url.trim_end_matches('/').to_owned();
    let operator = client(OPERATOR)?;
    let tenant = send(
        &operator,
        reqwest::Method::POST,
        format!("{api}/admin/tenants"),
        json!({"name": "acme"}),
    )
    .await?;
    let tenant_token = tenant["token"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let acme = client(&tenant_token)?;
    bundle_with_tool(&acme, &api, "crm", "crm_lookup").await?;
    let weather = bundle_with_tool(&operator, &api, "weather", "get_forecast").await?;
    send(
        &operator,
        reqwest::Method::PATCH,
        format!("{api}/tools/bundles/{weather}"),
        json!({"shared": true}),
    )
    .await?;

    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&server.url).await?;
        // Without a token: the shared bundle and the built-ins, and no control the
        // server would refuse.
        s.wait_text("#result-info", "7 tools").await?;
        let anonymous = switches(&s).await?;
        ensure!(
            anonymous.get("crm_lookup").is_none() && anonymous["get_forecast"] == false,
            "before the token: {anonymous}"
        );
        // The tenant's token, used: the list is read again in its view, at once.
        s.type_into("#token", &tenant_token).await?;
        s.find("#login button").await?.click().await?;
        s.wait_text("#result-info", "8 tools").await?;
        let mine = switches(&s).await?;
        ensure!(
            mine["crm_lookup"] == true
                && mine["get_forecast"] == false
                && mine["read_file"] == false,
            "a tenant's switches: {mine}"
        );
        // Its bundle by its slug, not its id.
        let meta = s
            .find("#results li[data-tool=crm_lookup] .meta")
            .await?
            .text()
            .await?;
        ensure!(meta.starts_with("crm · v1"), "{meta}");
        // The bundles: its own can be switched and deleted, the shared one cannot.
        s.find("#bundles-panel summary").await?.click().await?;
        let panel = s
            .js("Object.fromEntries([...document.querySelectorAll('#bundles li')].map(li => [li.dataset.bundle, [!!li.querySelector('input.toggle'), !!li.querySelector('button.danger')]]))")
            .await?;
        ensure!(
            panel["crm"] == json!([true, true])
                && panel["weather"] == json!([false, false])
                && panel["files"] == json!([false, false]),
            "the bundles a tenant may change: {panel}"
        );
        // A shared tool's page: no switch, no new version, no delete.
        s.find("#results li[data-tool=get_forecast] button.name")
            .await?
            .click()
            .await?;
        s.wait_text("#tool-view h2", "get_forecast").await?;
        let controls = s
            .js("['#tool-view input.toggle', '#new-version', '#delete-tool'].map(c => !!document.querySelector(c))")
            .await?;
        ensure!(
            controls == json!([false, false, false]),
            "a shared tool's controls: {controls}"
        );
        s.screenshot("first-hour-tenant").await?;
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// The JSON the builder shows.
async fn shown(s: &Session) -> Result<Value> {
    let text = s.find("#recipe-json").await?.text().await?;
    Ok(serde_json::from_str(&text)?)
}

pub(crate) async fn a_recipe_s_new_version_opens_the_builder_and_moves_keep_the_result(
    env: Env,
) -> Result<()> {
    let server = Server::start(None).await?;
    let api = server.url.trim_end_matches('/').to_owned();
    let http = reqwest::Client::new();
    let made = send(
        &http,
        reqwest::Method::POST,
        format!("{api}/tools/bundles"),
        json!({"slug": "mine"}),
    )
    .await?;
    let bundle = made["bundleID"].as_str().unwrap_or_default().to_owned();
    let recipe = json!({
        "name": "zone_offset", "summary": "The UTC offset of a time zone",
        "description": "Reads the clock in a time zone, then selects its UTC offset.",
        "type": "recipe",
        "argSchema": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
        "impl": {"steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now"}, "from": {"time_zone": "$.args.zone"}},
            {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}
        ], "result": "$.steps.offset[0]"}
    });
    send(
        &http,
        reqwest::Method::PUT,
        format!("{api}/tools/bundles/{bundle}/tools/zone-offset/version/1"),
        recipe.clone(),
    )
    .await?;

    let s = Session::open(&env).await?;
    let result = async {
        s.client.set_window_size(1400, 1100).await?;
        // A new recipe's default result, "the last step's", stays that step's when the
        // step moves.
        s.client.goto(&format!("{}#/recipes", server.url)).await?;
        s.type_into("#recipe-name", "moved").await?;
        for tool in ["clock", "json_query"] {
            s.type_into("#recipe-palette-search", tool).await?;
            s.find(&format!("#recipe-palette-results li[data-tool={tool}]"))
                .await?
                .click()
                .await?;
        }
        ensure!(
            shown(&s).await?["impl"]["result"] == "$.steps.json_query",
            "{}",
            shown(&s).await?
        );
        s.find("#s2 button[aria-label='move step up']")
            .await?
            .click()
            .await?;
        let moved = shown(&s).await?;
        ensure!(
            moved["impl"]["result"] == "$.steps.json_query"
                && moved["impl"]["steps"][0]["id"] == "json_query",
            "moving the last step changed the result: {moved}"
        );
        // No summary and no description: said at once, not at the save.
        let problems = s.wait_text("#recipe-json-error", "say what the recipe does").await?;
        ensure!(problems.contains("a summary or a description"), "{problems}");

        // A saved recipe's "New version": the builder, loaded as it was saved.
        s.client
            .goto(&format!(
                "{}#/tool/{bundle}/zone-offset/1",
                server.url
            ))
            .await?;
        s.client.refresh().await?;
        s.find("#new-version").await?.click().await?;
        s.wait_text("#recipe-title", "New version of zone_offset").await?;
        ensure!(
            s.find("#recipes-screen").await?.is_displayed().await?,
            "the builder is not shown"
        );
        let loaded = shown(&s).await?;
        ensure!(
            loaded["impl"] == recipe["impl"]
                && loaded["argSchema"] == recipe["argSchema"]
                && loaded["summary"] == recipe["summary"]
                && loaded["version"] == "2"
                && loaded["slug"] == "zone-offset",
            "the builder holds another recipe: {loaded}"
        );
        // Moving `offset` before `now`: its source comes after it now, said at once,
        // and the result stays `offset`'s.
        let offset = s
            .js("[...document.querySelectorAll('#recipe-steps li.step')].find(li => li.dataset.tool === 'json_query').id")
            .await?;
        let offset = offset.as_str().unwrap_or_default().to_owned();
        s.find(&format!("#{offset} button[aria-label='move step up']"))
            .await?
            .click()
            .await?;
        let problems = s.wait_text("#recipe-json-error", "not before this step").await?;
        ensure!(problems.contains("step offset: value comes from $.steps.now"), "{problems}");
        ensure!(
            shown(&s).await?["impl"]["result"] == "$.steps.offset[0]",
            "{}",
            shown(&s).await?
        );
        // And the run is not tried with it.
        s.find("#recipe-run").await?.click().await?;
        s.wait_text("#recipe-outcome", "not before this step").await?;
        // Moved back, it saves as version 2.
        s.find(&format!("#{offset} button[aria-label='move step down']"))
            .await?
            .click()
            .await?;
        s.find("#recipe-save").await?.click().await?;
        s.wait_text("#recipe-saved", "Saved zone_offset v2").await?;
        s.screenshot("first-hour-recipe-new-version").await?;
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// A turn the endpoint refuses is said once, and the chat goes on: the message back in
/// the input, the next turn sent without the failed one (#63 item 2).
pub(crate) async fn a_failed_chat_turn_leaves_the_chat_usable(env: Env) -> Result<()> {
    use crate::endpoint::{Endpoint, Reply, text};
    let model = Endpoint::start(vec![Reply::Refuse(
        400,
        "the request exceeds the context size".to_owned(),
    )])
    .await;
    let settings =
        toolscout_server::console::ChatSettings::new(&model.base_url, "", "scripted-model");
    let server = Server::start(Some(settings)).await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&format!("{}#/chat", server.url)).await?;
        s.wait_text("#chat-status", "scripted-model").await?;
        s.type_into("#chat-input", "What time is it in Tokyo?")
            .await?;
        s.find("#send").await?.click().await?;
        s.wait_text("#chat-log", "the model endpoint failed")
            .await?;
        let errors = s
            .js("[...document.querySelectorAll('#chat-log li.error')].map(li => li.textContent)")
            .await?;
        ensure!(
            errors.as_array().map(Vec::len) == Some(1)
                && errors.to_string().contains("exceeds the context size"),
            "the failure is said once: {errors}"
        );
        let input = s.find("#chat-input").await?.prop("value").await?;
        ensure!(
            input.as_deref() == Some("What time is it in Tokyo?"),
            "the message is not back in the input: {input:?}"
        );
        ensure!(
            s.find("#send").await?.is_enabled().await?,
            "the chat is not usable after a failed turn"
        );
        // The next turn: answered, sent with the one user message.
        model.push(vec![text("It is evening in Tokyo.")]);
        s.find("#send").await?.click().await?;
        s.wait_text("#chat-log", "It is evening in Tokyo.").await?;
        let requests = model.requests();
        let users: Vec<&Value> = requests
            .last()
            .and_then(|r| r["messages"].as_array())
            .map(|m| m.iter().filter(|m| m["role"] == "user").collect())
            .unwrap_or_default();
        ensure!(
            users.len() == 1,
            "the second turn carried the failed one: {users:?}"
        );
        Ok(())
    }
    .await;
    s.close().await;
    result
}
