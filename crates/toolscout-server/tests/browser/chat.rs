//! The chat: a scripted model searches, discloses, calls `clock` and answers, with every
//! event shown; the "+" palette inserts a call and pins a tool.

use anyhow::{Result, ensure};
use fantoccini::key::Key;
use toolscout_server::console::ChatSettings;

use crate::endpoint::{Endpoint, call, text};
use crate::{Env, Server, Session};

pub(crate) async fn search_call_answer_and_palette(env: Env) -> Result<()> {
    let model = Endpoint::start(vec![
        call(
            "c1",
            "discover_tools",
            r#"{"query":"current time in a time zone"}"#,
        ),
        call("c2", "discover_tools", r#"{"tool":"clock"}"#),
        call(
            "c3",
            "clock",
            r#"{"action":"now","time_zone":"Asia/Tokyo"}"#,
        ),
        text("It is now evening in Tokyo."),
    ])
    .await;
    let server = Server::start(Some(ChatSettings::new(
        &model.base_url,
        "sk-test",
        "scripted-model",
    )))
    .await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&format!("{}#/chat", server.url)).await?;
        s.wait_text("#chat-status", "scripted-model").await?;
        ensure!(
            !s.find("#tools-screen").await?.is_displayed().await?,
            "the Tools screen shows beside the chat"
        );
        s.type_into("#chat-input", "What time is it in Tokyo?")
            .await?;
        s.find("#send").await?.click().await?;

        // The run's events, in order: search (whose best hit is activated), disclosure,
        // call, answer.
        let log = s
            .wait_text("#chat-log", "It is now evening in Tokyo.")
            .await?;
        let order = [
            "What time is it in Tokyo?",
            "search discover_tools",
            "current time in a time zone",
            "activated clock",
            "disclosed clock",
            "call clock",
            "Asia/Tokyo",
            "It is now evening in Tokyo.",
            "4 steps",
        ];
        let mut at = 0;
        for needle in order {
            let found = log[at..].find(needle);
            ensure!(
                found.is_some(),
                "the chat log lacks {needle:?} after position {at}:\n{log}"
            );
            at += found.unwrap_or(0);
        }
        // The clock call's result, as the model read it.
        let result = s
            .js("document.querySelector('#chat-log li[data-call=c3] details pre').textContent")
            .await?;
        ensure!(
            result.as_str().is_some_and(|r| r.contains("unix_seconds")),
            "the call's result is not shown: {result}"
        );
        let requests = model.requests();
        ensure!(requests.len() == 4, "{} model requests", requests.len());
        ensure!(
            Endpoint::tool_names(&requests[3]).contains(&"clock".to_owned()),
            "clock was not activated for the model: {:?}",
            Endpoint::tool_names(&requests[3])
        );
        s.screenshot("chat").await?;

        // "+" in an empty composer opens the palette; Enter inserts a call to fill in.
        s.find("#chat-input").await?.send_keys("+").await?;
        s.find("#palette-search").await?.send_keys("clo").await?;
        s.wait_text("#palette-results [aria-selected=true]", "clock")
            .await?;
        s.screenshot("chat-palette").await?;
        s.find("#palette-search")
            .await?
            .send_keys(&char::from(Key::Enter).to_string())
            .await?;
        ensure!(
            s.find("#palette").await?.attr("hidden").await?.is_some(),
            "the palette stayed open"
        );
        s.find("#call-card #call-arg-action")
            .await?
            .select_by_label("now")
            .await?;
        s.find("#call-arg-call").await?.click().await?;
        let called = s.wait_text("#chat-log", "you called clock").await?;
        ensure!(called.contains("→ ok"), "{called}");
        s.screenshot("chat-palette-call").await?;

        // The palette's keyboard: the arrows move the selection, Escape closes it.
        s.find("#plus").await?.click().await?;
        s.find("#palette-search").await?.send_keys("file").await?;
        let first = s
            .wait_text("#palette-results [aria-selected=true]", "file")
            .await?;
        let down = char::from(Key::Down).to_string();
        s.find("#palette-search").await?.send_keys(&down).await?;
        let second = s
            .wait_text("#palette-results [aria-selected=true]", "file")
            .await?;
        ensure!(
            first != second,
            "ArrowDown did not move the selection from {first:?}"
        );
        let escape = char::from(Key::Escape).to_string();
        s.find("#palette-search").await?.send_keys(&escape).await?;
        ensure!(
            s.find("#palette").await?.attr("hidden").await?.is_some(),
            "Escape did not close the palette"
        );

        // Pinning a tool puts it in the tools array from the first step of the next turn.
        model.push(vec![text("Noted.")]);
        s.find("#plus").await?.click().await?;
        s.find("#palette-search").await?.send_keys("clock").await?;
        s.wait_text("#palette-results [aria-selected=true]", "clock")
            .await?;
        s.find("#palette-results [aria-selected=true] .pin")
            .await?
            .click()
            .await?;
        s.wait_text("#pinned", "clock").await?;
        s.type_into("#chat-input", "Thanks").await?;
        s.find("#send").await?.click().await?;
        s.wait_text("#chat-log", "Noted.").await?;
        let requests = model.requests();
        let last = requests.last().cloned().unwrap_or_default();
        ensure!(
            Endpoint::tool_names(&last).contains(&"clock".to_owned()),
            "the pinned tool is not offered: {:?}",
            Endpoint::tool_names(&last)
        );
        // The next turn carries the transcript, including the call made from the palette.
        let carried = last["messages"].to_string();
        ensure!(
            carried.contains("I called the tool clock") && carried.contains("evening in Tokyo"),
            "the transcript was not carried over: {carried}"
        );
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// A call to a tool that requires approval waits for the person's button: Approve runs
/// it, Refuse tells the model.
pub(crate) async fn approvals_are_buttons(env: Env) -> Result<()> {
    let args = r#"{"name":"guarded_clock","arguments":{"action":"now"}}"#;
    let model = Endpoint::start(vec![
        call("a1", "call_tool", args),
        text("Approved and done."),
        call("a2", "call_tool", args),
        text("You refused; I did not call it."),
    ])
    .await;
    let settings = ChatSettings::new(&model.base_url, "", "scripted-model");
    let server = Server::start_with(Some(settings), true).await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&format!("{}#/chat", server.url)).await?;
        s.wait_text("#chat-status", "scripted-model").await?;
        s.type_into("#chat-input", "Time, please").await?;
        s.find("#send").await?.click().await?;
        s.wait_text("#chat-log", "approve guarded_clock?").await?;
        ensure!(
            model.requests().len() == 1,
            "the run went on before the approval"
        );
        s.find("#chat-log li:last-child button.primary")
            .await?
            .click()
            .await?;
        let log = s.wait_text("#chat-log", "Approved and done.").await?;
        ensure!(log.contains("approved"), "{log}");
        let result = s
            .js("document.querySelector('#chat-log li[data-call=a1] details pre').textContent")
            .await?;
        ensure!(
            result.as_str().is_some_and(|r| r.contains("unix_seconds")),
            "the approved call did not run: {result}"
        );

        s.type_into("#chat-input", "Again").await?;
        s.find("#send").await?.click().await?;
        s.wait_text("#chat-log li:last-child", "approve guarded_clock?")
            .await?;
        s.find("#chat-log li:last-child button.danger")
            .await?
            .click()
            .await?;
        s.wait_text("#chat-log", "You refused; I did not call it.")
            .await?;
        let result = s
            .js("document.querySelector('#chat-log li[data-call=a2] details pre').textContent")
            .await?;
        ensure!(
            result
                .as_str()
                .is_some_and(|r| r.contains("approval_refused") || r.contains("did not approve")),
            "the refusal did not reach the model: {result}"
        );
        s.screenshot("chat-approvals").await?;
        Ok(())
    }
    .await;
    s.close().await;
    result
}

/// A recipe with a step that requires approval: one approval, listing the steps, then
/// each step's progress under the call.
pub(crate) async fn a_recipe_asks_once_and_shows_its_steps(env: Env) -> Result<()> {
    let model = Endpoint::start(vec![
        call(
            "r1",
            "call_tool",
            r#"{"name":"guarded_offset","arguments":{}}"#,
        ),
        text("Tokyo is at +09:00."),
    ])
    .await;
    let settings = ChatSettings::new(&model.base_url, "", "scripted-model");
    let server = Server::start_with(Some(settings), true).await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&format!("{}#/chat", server.url)).await?;
        s.wait_text("#chat-status", "scripted-model").await?;
        s.type_into("#chat-input", "Tokyo's offset?").await?;
        s.find("#send").await?.click().await?;
        let asked = s
            .wait_text("#chat-log li:last-child", "approve guarded_offset?")
            .await?;
        ensure!(
            asked.contains("a recipe; it runs now (guarded_clock, asks approval), offset (json_query)"),
            "the approval does not list the steps: {asked}"
        );
        s.find("#chat-log li:last-child button.primary")
            .await?
            .click()
            .await?;
        let log = s.wait_text("#chat-log", "Tokyo is at +09:00.").await?;
        let steps = s
            .js("[...document.querySelectorAll('#chat-log li[data-call=r1] .chat-step')].map(e => e.textContent).join('\\n')")
            .await?;
        let steps = steps.as_str().unwrap_or_default().to_owned();
        ensure!(
            steps.contains("step now · guarded_clock ✓") && steps.contains("step offset · json_query ✓"),
            "the steps are not shown under the call: {steps:?}\n{log}"
        );
        let result = s
            .js("document.querySelector('#chat-log li[data-call=r1] details pre').textContent")
            .await?;
        ensure!(
            result.as_str().is_some_and(|r| r.contains("+09:00")),
            "the recipe's result is not shown: {result}"
        );
        s.screenshot("chat-recipe").await?;
        Ok(())
    }
    .await;
    s.close().await;
    result
}

pub(crate) async fn without_endpoint_says_so(env: Env) -> Result<()> {
    let server = Server::start(None).await?;
    let s = Session::open(&env).await?;
    let result = async {
        s.client.goto(&format!("{}#/chat", server.url)).await?;
        let status = s
            .wait_text(
                "#chat-status",
                "no OpenAI-compatible endpoint is configured",
            )
            .await?;
        ensure!(status.contains("--model"), "{status}");
        let disabled = s.find("#send").await?.prop("disabled").await?;
        ensure!(
            disabled.as_deref() == Some("true"),
            "Send is enabled: {disabled:?}"
        );
        s.screenshot("chat-without-endpoint").await?;
        Ok(())
    }
    .await;
    s.close().await;
    result
}
