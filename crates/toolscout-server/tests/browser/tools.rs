//! The Tools screen: search as you type, levels, the live tester, creating a bundle and
//! a tool with a validation error at its field, enable/disable.

use anyhow::{Result, ensure};
use fantoccini::Locator;
use fantoccini::key::Key;

use toolscout_server::{AnonymousReads, ServerOptions};

use crate::{Env, Server, Session};

/// Types a prefix of `clock` and sees it ranked with its tier and field; opens it;
/// switches levels (token counts change); calls it from the generated form, then with
/// a bad argument, and sees both outcomes.
pub(crate) async fn search_levels_and_tester(env: Env) -> Result<()> {
    let server = Server::start(None).await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&server.url).await?;
        s.find("#results li").await?; // the first page, before any search
        s.wait_text("#result-info", "6 tools").await?;

        // Filters: a bundle, then a tag.
        s.find("#filter-bundle")
            .await?
            .select_by_label("files")
            .await?;
        s.wait_text("#result-info", "3 tools").await?;
        let listed = s
            .js("[...document.querySelectorAll('#results li')].map(li => li.dataset.tool)")
            .await?;
        ensure!(
            listed == serde_json::json!(["read_file", "write_file", "search_files"]),
            "the files bundle lists {listed}"
        );
        s.find("#filter-bundle")
            .await?
            .select_by_label("all")
            .await?;
        s.type_into("#filter-tag", "time").await?;
        s.wait_text("#result-info", "1 tool ").await?;
        s.wait_text("#results li:first-child .name", "clock")
            .await?;
        // Deleting the tag key by key (clear() sends no input event).
        let backspaces: String = std::iter::repeat_n(char::from(Key::Backspace), 4).collect();
        s.find("#filter-tag").await?.send_keys(&backspaces).await?;
        s.wait_text("#result-info", "6 tools").await?;
        let search = s.find("#search").await?;
        search.send_keys("clo").await?;
        let first = s
            .wait_text("#results li:first-child .name", "clock")
            .await?;
        ensure!(first == "clock", "the first hit for 'clo' is {first:?}");
        let badge = s
            .wait_text("#results li:first-child .badge", "prefix")
            .await?;
        ensure!(badge.contains("name"), "the tier badge says {badge:?}");
        s.wait_text("#result-info", "(ranked)").await?;

        s.find("#results li:first-child .name")
            .await?
            .click()
            .await?;
        s.wait_text("#tool-view h2", "clock").await?;
        let l2 = s.wait_text("#level-tokens", "level 2:").await?;
        s.find("#level-1").await?.click().await?;
        let l1 = s.wait_text("#level-tokens", "level 1:").await?;
        let l1_text = s.find("#level-text").await?.text().await?;
        ensure!(
            l1_text.contains("clock") && !l1_text.contains("time_zone"),
            "level 1 shows {l1_text:?}"
        );
        s.find("#level-3").await?.click().await?;
        let l3 = s.wait_text("#level-tokens", "level 3:").await?;
        let tokens = |t: &str| -> usize {
            t.split(": ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        ensure!(
            0 < tokens(&l1) && tokens(&l1) < tokens(&l2) && tokens(&l2) < tokens(&l3),
            "token counts do not grow with the level: {l1:?}, {l2:?}, {l3:?}"
        );
        s.wait_text("#level-text", "Asia/Tokyo").await?; // level 3 has the examples
        s.find("#level-parameter")
            .await?
            .select_by_label("time_zone")
            .await?;
        s.wait_text("#level-tokens", "parameter time_zone:").await?;

        // The generated form: an enum as a select, a default filled in, a required mark.
        let zone = s.find("#arg-time_zone").await?;
        ensure!(
            zone.prop("value").await?.as_deref() == Some("UTC"),
            "the default is not filled in"
        );
        s.find("label[for=arg-action] .req").await?;
        s.find("#arg-action").await?.select_by_label("now").await?;
        s.type_into("#arg-time_zone", "Asia/Tokyo").await?;
        s.find("#arg-call").await?.click().await?;
        let ok = s
            .wait_text("#arg-outcome .outcome.ok", "Asia/Tokyo")
            .await?;
        ensure!(
            ok.contains("ok ·") && ok.contains(" ms") && ok.contains("unix_seconds"),
            "{ok}"
        );
        s.wait_text("#usage", "Called 1 time").await?;
        s.find("#level-1").await?.click().await?;
        s.client.set_window_size(1200, 1000).await?;
        s.screenshot("tools").await?;

        // A bad argument comes back as the error's kind and message.
        s.type_into("#arg-time_zone", "Mars/Olympus").await?;
        s.find("#arg-call").await?.click().await?;
        let err = s
            .wait_text("#arg-outcome .outcome.err", "invalid_arguments")
            .await?;
        ensure!(err.contains("Mars/Olympus"), "{err}");

        // Readable on a phone: one column, nothing wider than the screen.
        s.client.set_window_size(400, 860).await?;
        let fits = s
            .js("document.documentElement.scrollWidth <= window.innerWidth")
            .await?;
        ensure!(
            fits == serde_json::json!(true),
            "the page is wider than a phone"
        );
        s.screenshot("tools-phone").await?;
        s.client.set_window_size(1200, 1000).await?;

        // Raw JSON mode carries the form's values over.
        s.find("#arg-raw-mode").await?.click().await?;
        let raw = s
            .find("#arg-raw")
            .await?
            .prop("value")
            .await?
            .unwrap_or_default();
        ensure!(
            raw.contains("\"action\": \"now\"") && raw.contains("Mars/Olympus"),
            "{raw}"
        );
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// Creates a bundle (after a bad slug shown at its field) and a tool in it (after a bad
/// argSchema shown at its field), disables and enables the tool, makes a new version
/// and deletes it.
pub(crate) async fn create_validate_and_toggle(env: Env) -> Result<()> {
    let server = Server::start(None).await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&server.url).await?;
        s.find("#results li").await?;
        s.find("#new-bundle").await?.click().await?;
        s.type_into("#bundle-slug", "Sea Tools!").await?;
        s.type_into("#bundle-display", "Sea tools").await?;
        s.find("#bundle-form button[type=submit]").await?.click().await?;
        let err = s.wait_text("#bundle-slug-error", "slug").await?;
        ensure!(err.contains("Sea Tools!"), "the slug error does not quote the slug: {err}");
        let invalid = s.find("#bundle-slug").await?.attr("aria-invalid").await?;
        ensure!(invalid.as_deref() == Some("true"), "the slug field is not marked invalid");

        s.type_into("#bundle-slug", "sea").await?;
        s.find("#bundle-form button[type=submit]").await?.click().await?;
        s.wait_text(".created", "Bundle sea created").await?;

        s.type_into("#tool-slug", "sea-temp").await?;
        s.type_into("#tool-name", "sea_temperature").await?;
        s.type_into("#tool-summary", "Water temperature at a beach").await?;
        s.type_into("#tool-args", r#"{"type": "array"}"#).await?;
        s.type_into(
            "#tool-impl",
            r#"{"method": "GET", "urlTemplate": "https://api.example.com/sea?b=${beach}"}"#,
        )
        .await?;
        s.find("#tool-form button[type=submit]").await?.click().await?;
        let err = s.wait_text("#tool-args-error", "parameters").await?;
        ensure!(err.contains("\"object\""), "{err}");
        s.screenshot("tools-validation").await?;

        let schema = r#"{"type": "object", "properties": {
            "beach": {"type": "string", "description": "Beach name"},
            "options": {"type": "object", "properties": {
                "units": {"type": "string", "enum": ["C", "F"], "default": "C"},
                "depth": {"type": "number"}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "hourly": {"type": "boolean"}},
            "required": ["beach"]}"#;
        s.type_into("#tool-args", schema).await?;
        s.find("#tool-form button[type=submit]").await?.click().await?;
        s.wait_text("#tool-view h2", "sea_temperature").await?;

        // The form generated from that schema: a nested object, an array, a boolean.
        s.type_into("#arg-beach", "Bondi").await?;
        s.type_into("#arg-options-depth", "1.5").await?;
        s.find("#arg-tags-add").await?.click().await?;
        s.find("#arg-tags-add").await?.click().await?;
        s.type_into("#arg-tags-0", "surf").await?;
        s.type_into("#arg-tags-1", "swim").await?;
        s.find("#arg-hourly").await?.select_by_label("true").await?;
        s.find("#arg-raw-mode").await?.click().await?;
        let raw = s.find("#arg-raw").await?.prop("value").await?.unwrap_or_default();
        let args: serde_json::Value = serde_json::from_str(&raw)?;
        ensure!(
            args == serde_json::json!({"beach": "Bondi", "options": {"units": "C", "depth": 1.5}, "tags": ["surf", "swim"], "hourly": true}),
            "the form built {args}"
        );

        // Found by search, in the new bundle.
        s.type_into("#search", "sea_temperature").await?;
        let badge = s.wait_text("#results li:first-child .badge", "exact").await?;
        ensure!(badge.contains("name"), "{badge}");
        s.wait_text("#results li:first-child .meta", "sea · v1").await?;

        // Disable it from its page: it says so, and the API agrees.
        let toggle = "#tool-view .switch input";
        s.find(toggle).await?.click().await?;
        s.wait_text("#tool-reason", "disabled").await?;
        let enabled = s
            .js("fetch('/tools/tools/search?q=sea_temperature&includeDisabled=true').then(r => r.json()).then(b => b.items[0].isEnabled)")
            .await?;
        ensure!(enabled == serde_json::json!(false), "the API still says enabled: {enabled}");
        s.find(toggle).await?.click().await?;
        s.client
            .wait()
            .for_element(Locator::Css("#tool-view h2"))
            .await?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while s.client.find(Locator::Css("#tool-reason")).await.is_ok() {
            ensure!(std::time::Instant::now() < deadline, "the tool still shows as disabled");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }

        // An edit is a new version, prefilled from the current one; then delete it.
        s.find("#new-version").await?.click().await?;
        let version = s.find("#tool-version").await?.prop("value").await?;
        ensure!(version.as_deref() == Some("2"), "the new version is {version:?}");
        s.type_into("#tool-summary", "Sea water temperature at a beach").await?;
        s.find("#tool-form button[type=submit]").await?.click().await?;
        s.wait_text("#tool-view", "sea-temp v2").await?;
        s.wait_text("#level-text", "Sea water temperature").await?;
        s.find("#delete-tool").await?.click().await?;
        s.client.accept_alert().await?;
        s.wait_text("#detail", "sea_temperature v2 deleted.").await?;
        let versions = s
            .js("fetch('/tools/tools?includeDisabled=true&pageSize=1000').then(r => r.json()).then(b => b.items.filter(t => t.slug === 'sea-temp').map(t => t.version))")
            .await?;
        ensure!(versions == serde_json::json!(["1"]), "versions left: {versions}");

        // Deleting the bundle (a soft delete) takes it out of the bundle list.
        s.find("#bundles-panel summary").await?.click().await?;
        s.find("#bundles li[data-bundle=sea] button.danger").await?.click().await?;
        s.client.accept_alert().await?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while s.client.find(Locator::Css("#bundles li[data-bundle=sea]")).await.is_ok() {
            ensure!(std::time::Instant::now() < deadline, "the bundle is still listed");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        // Its tools stay (soft delete) but are no longer served.
        let left = s
            .js("fetch('/tools/tools?pageSize=1000').then(r => r.json()).then(b => b.items.filter(t => t.slug === 'sea-temp').length)")
            .await?;
        ensure!(left == serde_json::json!(0), "{left} sea tools are still served");
        let callable = s
            .js("fetch('/tools/tools?includeDisabled=true&pageSize=1000').then(r => r.json()).then(b => b.items.filter(t => t.slug === 'sea-temp').map(t => t.isCallable))")
            .await?;
        ensure!(callable == serde_json::json!([false]), "after the delete: {callable}");
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// A tool written by someone else (another tab, process or replica) appears in the open
/// list without a reload: the page follows `GET /api/v1/events`.
pub(crate) async fn list_follows_the_catalog_live(env: Env) -> Result<()> {
    let server = Server::start(None).await?;
    follows_live(env, server, None).await
}

/// The same on a server whose every request needs the token: the page's stream of
/// changes sends it (read with `fetch`, since `EventSource` cannot send a header).
pub(crate) async fn list_follows_the_catalog_live_with_a_token(env: Env) -> Result<()> {
    const TOKEN: &str = "s3cret-live";
    let options = ServerOptions::default()
        .with_token(Some(TOKEN))
        .with_anonymous_reads(AnonymousReads::Off);
    let server = Server::start_with_options(None, false, options).await?;
    follows_live(env, server, Some(TOKEN)).await
}

async fn follows_live(env: Env, server: Server, token: Option<&str>) -> Result<()> {
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&server.url).await?;
        if let Some(token) = token {
            s.type_into("#token", token).await?;
            s.find("#login button").await?.click().await?;
            s.wait_text("#login-state", "token set").await?;
            s.client.refresh().await?;
        }
        s.wait_text("#result-info", "6 tools").await?;
        let api = server.url.trim_end_matches('/').to_owned();
        let bundle = uuid::Uuid::now_v7();
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(token) = token {
            headers.insert(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {token}").parse()?,
            );
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .build()?;
        let put = client
            .put(format!("{api}/tools/bundles/{bundle}"))
            .json(&serde_json::json!({"slug": "live"}))
            .send()
            .await?;
        ensure!(
            put.status().is_success(),
            "creating the bundle: {}",
            put.status()
        );
        let put = client
            .put(format!("{api}/tools/bundles/{bundle}/tools/tide/version/1"))
            .json(&serde_json::json!({
                "name": "tide_times",
                "description": "High and low tide times for a harbour.",
                "type": "http",
                "argSchema": {"type": "object", "properties": {"harbour": {"type": "string"}}},
                "impl": {"method": "GET", "urlTemplate": "https://api.example.com/t"}
            }))
            .send()
            .await?;
        ensure!(
            put.status().is_success(),
            "creating the tool: {}",
            put.status()
        );
        s.wait_text("#result-info", "7 tools").await?;
        let listed = s
            .js("[...document.querySelectorAll('#results li')].map(li => li.dataset.tool)")
            .await?;
        ensure!(
            listed.to_string().contains("tide_times"),
            "the list did not take the new tool in: {listed}"
        );
        Ok(())
    }
    .await;
    s.close().await;
    result
}
