//! Browser tests of the web console: a real server on 127.0.0.1, headless Chromium
//! driven through chromedriver (WebDriver, `fantoccini`), and a scripted
//! OpenAI-compatible endpoint for the chat.
//!
//! One binary with its own harness, so that chromedriver starts once: each flow gets a
//! fresh server and a fresh browser session (its own profile directory), and saves a
//! screenshot under `$CARGO_TARGET_TMPDIR/console-screenshots/`.
//!
//! The browser is `/usr/bin/chromium` with `/usr/bin/chromedriver` (Debian's `chromium`
//! and `chromium-driver`), or `$TOOLSCOUT_CHROMIUM` and `$TOOLSCOUT_CHROMEDRIVER`. When
//! they are missing and the tests run as root on a machine with `apt-get`, they are
//! installed; otherwise the run fails and says what to install.
//! `TOOLSCOUT_SKIP_BROWSER=1` skips the flows, saying so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;
mod chat;
mod endpoint;
mod first_hour;
mod recipes;
mod tools;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use fantoccini::{Client, Locator};
use serde_json::json;
use tempfile::TempDir;
use toolscout_catalog::{Catalog, CatalogOptions, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, Invoker};
use toolscout_search::SearchIndex;
use toolscout_server::console::{ChatSettings, Console};
use toolscout_server::{AppState, ServerOptions};

type Flow = fn(Env) -> Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// The flows, in the order they run.
const FLOWS: &[(&str, Flow)] = &[
    ("tools_search_levels_and_tester", |e| {
        Box::pin(tools::search_levels_and_tester(e))
    }),
    ("tools_create_validate_and_toggle", |e| {
        Box::pin(tools::create_validate_and_toggle(e))
    }),
    ("tools_list_follows_the_catalog_live", |e| {
        Box::pin(tools::list_follows_the_catalog_live(e))
    }),
    ("tools_list_follows_the_catalog_live_with_a_token", |e| {
        Box::pin(tools::list_follows_the_catalog_live_with_a_token(e))
    }),
    ("recipes_build_try_save_and_find", |e| {
        Box::pin(recipes::build_try_save_and_find(e))
    }),
    ("recipes_a_bad_mapping_is_shown_at_its_step", |e| {
        Box::pin(recipes::a_bad_mapping_is_shown_at_its_step(e))
    }),
    (
        "tools_a_token_reloads_the_view_and_a_tenant_sees_only_its_controls",
        |e| Box::pin(first_hour::a_token_reloads_the_view_and_a_tenant_sees_only_its_controls(e)),
    ),
    (
        "recipes_a_new_version_opens_the_builder_and_moves_keep_the_result",
        |e| {
            Box::pin(
                first_hour::a_recipe_s_new_version_opens_the_builder_and_moves_keep_the_result(e),
            )
        },
    ),
    ("chat_a_failed_turn_leaves_the_chat_usable", |e| {
        Box::pin(first_hour::a_failed_chat_turn_leaves_the_chat_usable(e))
    }),
    ("chat_search_call_answer_and_palette", |e| {
        Box::pin(chat::search_call_answer_and_palette(e))
    }),
    ("chat_approvals_are_buttons", |e| {
        Box::pin(chat::approvals_are_buttons(e))
    }),
    ("chat_a_recipe_asks_once_and_shows_its_steps", |e| {
        Box::pin(chat::a_recipe_asks_once_and_shows_its_steps(e))
    }),
    ("chat_without_endpoint_says_so", |e| {
        Box::pin(chat::without_endpoint_says_so(e))
    }),
];

/// What a flow gets: where chromedriver and Chromium are.
#[derive(Clone)]
struct Env {
    webdriver: String,
    chromium: PathBuf,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in FLOWS {
            println!("{name}: test");
        }
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let flows: Vec<&(&str, Flow)> = FLOWS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    if flows.is_empty() {
        println!("running 0 browser flows");
        return;
    }
    if std::env::var("TOOLSCOUT_SKIP_BROWSER").is_ok_and(|v| v == "1") {
        println!(
            "skipping {} browser flows: TOOLSCOUT_SKIP_BROWSER=1",
            flows.len()
        );
        return;
    }
    let (chromium, chromedriver) = match browser::find_or_install() {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("the console's browser tests cannot run: {e:#}");
            std::process::exit(1);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let driver = match runtime.block_on(browser::Driver::start(&chromedriver)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("the console's browser tests cannot run: {e:#}");
            std::process::exit(1);
        }
    };
    let env = Env {
        webdriver: driver.url.clone(),
        chromium,
    };
    let plural = if flows.len() == 1 { "" } else { "s" };
    println!("running {} browser flow{plural}", flows.len());
    let mut failed = Vec::new();
    for (name, flow) in flows {
        let started = Instant::now();
        let outcome = runtime.block_on(async {
            let task = tokio::spawn(tokio::time::timeout(
                Duration::from_secs(90),
                flow(env.clone()),
            ));
            match task.await {
                Ok(Ok(r)) => r,
                Ok(Err(_)) => Err(anyhow::anyhow!("timed out after 90 s")),
                Err(e) => Err(anyhow::anyhow!("panicked: {e}")),
            }
        });
        match outcome {
            Ok(()) => println!(
                "test {name} ... ok ({:.1} s)",
                started.elapsed().as_secs_f64()
            ),
            Err(e) => {
                println!("test {name} ... FAILED");
                eprintln!("---- {name} ----\n{e:?}\n");
                failed.push(*name);
            }
        }
    }
    drop(driver);
    if failed.is_empty() {
        println!("browser flows: ok");
    } else {
        println!("browser flows failed: {}", failed.join(", "));
        std::process::exit(1);
    }
}

/// A console server over a temporary catalog with the built-in tools.
struct Server {
    url: String,
    _catalog: TempDir,
    _workspace: TempDir,
}

impl Server {
    async fn start(chat: Option<ChatSettings>) -> Result<Server> {
        Server::start_with(chat, false).await
    }

    /// With `guarded`, the catalog also has `guarded_clock` (the clock, requiring
    /// approval) and the recipe `guarded_offset` over it. The invoker has no approver, as in `toolscout serve`: the person's
    /// answer in the chat is the gate (the agent host calls with the approval given).
    async fn start_with(chat: Option<ChatSettings>, guarded: bool) -> Result<Server> {
        Server::start_with_options(chat, guarded, ServerOptions::default()).await
    }

    /// [`Server::start_with`] with these options.
    async fn start_with_options(
        chat: Option<ChatSettings>,
        guarded: bool,
        options: ServerOptions,
    ) -> Result<Server> {
        let catalog_dir = tempfile::tempdir()?;
        let workspace = tempfile::tempdir()?;
        let catalog = Catalog::open_with(
            catalog_dir.path(),
            CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
        )?;
        if guarded {
            let clock = builtin::tool("clock").context("the built-in clock")?;
            let mut spec = clock.spec.clone();
            spec.name = toolscout_spec::ToolName::new("guarded_clock")?;
            spec.metadata.requires_approval = true;
            let bundle = uuid::Uuid::now_v7();
            catalog.put_bundle(bundle, &toolscout_catalog::BundlePut::new("guarded"))?;
            catalog.put_tool(
                bundle,
                "guarded-clock",
                "1",
                &toolscout_catalog::ToolPut::native(spec, "clock"),
            )?;
            // And a recipe over it: one approval for its steps.
            let recipe = toolscout_spec::ToolSpec::builder(
                "guarded_offset",
                "Tokyo's UTC offset, read from the guarded clock",
            )
            .build()?;
            let block = serde_json::json!({"steps": [
                {"id": "now", "tool": "guarded_clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
                {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"}, "from": {"value": "$.steps.now"}}
            ], "result": "$.steps.offset[0]"});
            catalog.put_tool(
                bundle,
                "guarded-offset",
                "1",
                &toolscout_catalog::ToolPut::recipe(recipe, block),
            )?;
        }
        let mut invoker = Invoker::default();
        toolscout_invoke::builtin::register(
            &mut invoker,
            &BuiltinConfig::new(workspace.path(), AllowedHosts::default()),
        )?;
        let toolbox = Toolbox::new(catalog, SearchIndex::in_memory()?, invoker)?;
        let state = AppState::new(toolbox, options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/", listener.local_addr()?);
        let console = Console::default().with_chat(chat);
        tokio::spawn(toolscout_server::console::serve_on(
            listener, state, console,
        ));
        Ok(Server {
            url,
            _catalog: catalog_dir,
            _workspace: workspace,
        })
    }
}

/// A browser session with its own profile; closed when the flow ends.
struct Session {
    client: Client,
    _profile: TempDir,
}

impl Session {
    async fn open(env: &Env) -> Result<Session> {
        let profile = tempfile::tempdir()?;
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".to_owned(),
            json!({
                "binary": env.chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1200,900",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let client = fantoccini::ClientBuilder::new(
            hyper_util::client::legacy::connect::HttpConnector::new(),
        )
        .capabilities(caps)
        .connect(&env.webdriver)
        .await
        .context("starting a Chromium session through chromedriver")?;
        Ok(Session {
            client,
            _profile: profile,
        })
    }

    async fn close(self) {
        let _ = self.client.close().await;
    }

    /// Saves a screenshot as `<name>.png` and says where.
    async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        let png = self.client.screenshot().await?;
        std::fs::write(&path, png)?;
        println!("  screenshot: {}", path.display());
        Ok(path)
    }

    /// Waits for an element.
    async fn find(&self, css: &str) -> Result<fantoccini::elements::Element> {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(css))
            .await
            .with_context(|| format!("no element {css} within 10 s"))
    }

    /// Waits until the text of `css` contains `needle`; returns the text.
    async fn wait_text(&self, css: &str, needle: &str) -> Result<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = String::new();
        loop {
            if let Ok(e) = self.client.find(Locator::Css(css)).await
                && let Ok(t) = e.text().await
            {
                if t.contains(needle) {
                    return Ok(t);
                }
                last = t;
            }
            if Instant::now() > deadline {
                bail!("{css} never contained {needle:?} within 10 s; its text: {last:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Clears an input and types `text` into it.
    async fn type_into(&self, css: &str, text: &str) -> Result<()> {
        let e = self.find(css).await?;
        e.clear().await?;
        e.send_keys(text).await?;
        Ok(())
    }

    /// The value of a JavaScript expression.
    async fn js(&self, expression: &str) -> Result<serde_json::Value> {
        Ok(self
            .client
            .execute(&format!("return {expression};"), vec![])
            .await?)
    }
}
