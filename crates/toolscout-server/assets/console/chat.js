// The chat: one agent turn per message, its events streamed from POST /console/api/chat
// (server-sent events read from the fetch body), and the "+" palette.
"use strict";

window.Chat = (() => {
  let transcript = []; // the messages of the last `done` event, in the OpenAI wire format
  const pinned = new Map(); // tool name -> hit
  let checked = false;
  let busy = false;

  const log = () => $("#chat-log");
  function entry(cls, ...children) {
    const li = el("li", { class: cls }, ...children);
    log().append(li);
    li.scrollIntoView({ block: "nearest" });
    return li;
  }
  const short = (v, n) => { const s = typeof v === "string" ? v : JSON.stringify(v); return s.length > n ? s.slice(0, n) + "…" : s; };

  async function show() {
    if (checked) return;
    checked = true;
    const reply = await Console.api("GET", "/console/api/chat");
    const status = $("#chat-status");
    if (reply.ok && reply.body.configured) {
      status.textContent = "Model: " + reply.body.model + " · tools are found by search, or pinned with +";
      status.className = "chat-status";
    } else {
      status.textContent = (reply.body && reply.body.message) || "The chat is not available: " + Console.errorText(reply);
      status.className = "chat-status off";
      $("#send").disabled = true;
    }
  }

  // ---- a turn ----------------------------------------------------------------------

  async function send(text) {
    if (busy) return;
    busy = true;
    $("#send").disabled = true;
    entry("user", document.createTextNode(text));
    const messages = transcript.concat([{ role: "user", content: text }]);
    const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    if (Console.token()) headers.Authorization = "Bearer " + Console.token();
    let response;
    try {
      response = await fetch("/console/api/chat", { method: "POST", headers, body: JSON.stringify({ messages, pinned: [...pinned.keys()] }) });
    } catch (e) {
      entry("error", document.createTextNode("the server cannot be reached: " + e.message));
      return done();
    }
    if (!response.ok) {
      let message = "HTTP " + response.status;
      try { message = (await response.json()).error.message; } catch (_) { /* keep the status */ }
      entry("error", document.createTextNode(message));
      return done();
    }
    // What to go back to when the turn fails at the endpoint: the conversation before it.
    const state = { run: null, answer: null, calls: new Map(), before: transcript, text };
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) handle(state, name, JSON.parse(data.join("\n")));
      }
    }
    done();
  }

  function done() {
    busy = false;
    $("#send").disabled = false;
  }

  function handle(state, name, data) {
    if (name === "run") { state.run = data.run; return; }
    if (name === "done") {
      const reason = data.stop && data.stop.reason;
      if (reason === "endpoint_error") {
        // A failed turn leaves the chat as it was before it, so the next message does
        // not carry what broke this one; the message goes back into the input.
        transcript = state.before;
        entry("error", document.createTextNode("the model endpoint failed: " + (data.stop.message || "") + " — the conversation goes on from before this message"));
        if (!$("#chat-input").value.trim()) $("#chat-input").value = state.text;
      } else {
        transcript = data.messages || transcript;
        if (reason && reason !== "answer") entry("error", document.createTextNode("the run stopped: " + reason.replace(/_/g, " ")));
      }
      const usage = data.usage || {};
      entry("event", document.createTextNode(data.steps + " step" + (data.steps === 1 ? "" : "s") + " · " + ((usage.prompt_tokens || 0) + (usage.completion_tokens || 0)) + " tokens"));
      state.answer = null;
      return;
    }
    if (name !== "agent") return;
    switch (data.type) {
      case "text_delta":
        if (!state.answer) state.answer = entry("assistant");
        state.answer.textContent += data.text;
        break;
      case "step_started":
        state.answer = null;
        break;
      case "tool_call_started": {
        const search = data.tool.startsWith("discover_");
        const li = entry("event call", el("span", { class: "what", text: (search ? "search " : "call ") + data.tool }), document.createTextNode(" " + short(data.arguments, 300)));
        li.dataset.call = data.call_id;
        state.calls.set(data.call_id, li);
        break;
      }
      case "tool_progress": {
        // A recipe's steps, under its call, as they start and finish.
        const p = data.progress || {};
        if (p.event !== "step_finished" && p.event !== "step_skipped") break;
        const li = state.calls.get(data.call_id) || entry("event call");
        const item = p.item === undefined ? "" : " #" + p.item;
        const mark = p.event === "step_skipped" ? "– skipped" : p.ok ? "✓ " + p.ms + " ms" : "✗ " + (p.error || "failed");
        li.append(el("div", { class: "chat-step", "data-step": p.step, text: "step " + p.step + item + " · " + p.tool + " " + mark }));
        break;
      }
      case "tool_call_finished": {
        const li = state.calls.get(data.call_id) || entry("event call");
        const details = el("details", {}, el("summary", { text: data.ok ? "→ ok" : "→ failed" }), el("pre", { text: JSON.stringify(data.result, null, 2) }));
        details.classList.add(data.ok ? "ok" : "failed");
        li.append(details);
        break;
      }
      case "disclosed":
        entry("event", el("span", { class: "what", text: "disclosed " }), document.createTextNode(data.tools.join(", ")));
        break;
      case "translated":
        // A request not in English is searched as the model wrote it in English.
        entry("event", el("span", { class: "what", text: "searched in English " }), document.createTextNode(data.text));
        break;
      case "offered":
        entry("event", el("span", { class: "what", text: "offered compactly " }), document.createTextNode(data.tools.join(", ")));
        break;
      case "activated":
        entry("event", el("span", { class: "what", text: "activated " }), document.createTextNode(data.tool + (data.evicted ? " (evicted " + data.evicted + ")" : "")));
        break;
      case "approval_requested": {
        const li = entry("event call", el("span", { class: "what", text: "approve " + data.tool + "? " }), document.createTextNode(short(data.arguments, 300) + " "));
        if (data.steps && data.steps.length) {
          // A recipe: the one approval covers every step it runs.
          li.append(el("div", { class: "chat-step", text: "a recipe; it runs " + data.steps.map((x) => x.step + " (" + x.tool + (x.requires_approval ? ", asks approval" : "") + ")").join(", ") }));
        }
        for (const [label, approve] of [["Approve", true], ["Refuse", false]]) {
          const b = el("button", { type: "button", class: approve ? "primary" : "danger", text: label });
          b.addEventListener("click", async () => {
            li.querySelectorAll("button").forEach((x) => { x.disabled = true; });
            const r = await Console.api("POST", "/console/api/chat/approve", { run: state.run, callId: data.call_id, approve });
            li.append(document.createTextNode(r.ok ? (approve ? " approved" : " refused") : " " + Console.errorText(r)));
          });
          li.append(b, document.createTextNode(" "));
        }
        break;
      }
      case "answer_questioned":
        // The answer above reported work before any tool ran: the model is asked to call one.
        entry("event", el("span", { class: "what", text: "no tool has run yet " }), document.createTextNode("— the model is asked to call one"));
        break;
      case "final_answer":
        if (!state.answer || !state.answer.textContent) (state.answer || entry("assistant")).textContent = data.text;
        break;
      default:
        break;
    }
  }

  $("#composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("#chat-input").value.trim();
    if (!text) return;
    $("#chat-input").value = "";
    send(text);
  });
  $("#chat-input").addEventListener("keydown", (e) => {
    if (e.key === "+" && $("#chat-input").value.trim() === "") { e.preventDefault(); openPalette(); }
    else if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#composer").requestSubmit(); }
  });

  // ---- the "+" palette -----------------------------------------------------------------

  let hits = [];
  let active = -1;
  let seq = 0;

  function openPalette() {
    $("#palette").hidden = false;
    $("#plus").setAttribute("aria-expanded", "true");
    $("#palette-search").value = "";
    $("#palette-results").replaceChildren();
    hits = [];
    $("#palette-search").focus();
  }
  function closePalette() {
    $("#palette").hidden = true;
    $("#plus").setAttribute("aria-expanded", "false");
    $("#chat-input").focus();
  }
  $("#plus").addEventListener("click", openPalette);

  async function searchPalette() {
    const q = $("#palette-search").value.trim();
    const mine = ++seq;
    if (!q) { $("#palette-results").replaceChildren(); hits = []; return; }
    const reply = await Console.api("GET", "/tools/tools/search?pageSize=12&q=" + encodeURIComponent(q));
    if (mine !== seq) return;
    hits = reply.ok ? reply.body.items.filter((t) => t.isCallable) : [];
    const list = $("#palette-results");
    list.replaceChildren();
    if (!reply.ok) list.append(el("li", { class: "form-error", text: Console.errorText(reply) }));
    hits.forEach((t, i) => {
      const li = el("li", { role: "option", id: "palette-option-" + i, "aria-selected": "false", "data-tool": t.name || t.slug },
        el("strong", { text: t.name || t.slug }), el("span", { class: "summary", text: t.summary || "" }));
      const pin = el("button", { type: "button", class: "pin", text: "Pin", "aria-label": "pin " + (t.name || t.slug) + " for the model" });
      pin.addEventListener("click", (e) => { e.stopPropagation(); pick(i, true); });
      li.append(pin);
      li.addEventListener("click", () => pick(i, false));
      list.append(li);
    });
    select(hits.length ? 0 : -1);
  }
  function select(i) {
    active = i;
    document.querySelectorAll("#palette-results [role=option]").forEach((li, j) => li.setAttribute("aria-selected", String(j === i)));
    const input = $("#palette-search");
    if (i >= 0) { input.setAttribute("aria-activedescendant", "palette-option-" + i); $("#palette-option-" + i).scrollIntoView({ block: "nearest" }); }
    else input.removeAttribute("aria-activedescendant");
  }
  let paletteTyping = null;
  $("#palette-search").addEventListener("input", () => { clearTimeout(paletteTyping); paletteTyping = setTimeout(searchPalette, 100); });
  $("#palette-search").addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown") { e.preventDefault(); if (hits.length) select((active + 1) % hits.length); }
    else if (e.key === "ArrowUp") { e.preventDefault(); if (hits.length) select((active - 1 + hits.length) % hits.length); }
    else if (e.key === "Enter") { e.preventDefault(); if (active >= 0) pick(active, e.ctrlKey || e.metaKey); }
    else if (e.key === "Escape") { e.preventDefault(); closePalette(); }
  });

  function pick(i, pin) {
    const t = hits[i];
    if (!t) return;
    closePalette();
    if (pin) { pinned.set(t.name || t.slug, t); renderPinned(); } else insertCall(t);
  }

  function renderPinned() {
    const box = $("#pinned");
    box.replaceChildren();
    for (const name of pinned.keys()) {
      const chip = el("span", { class: "chip", "data-tool": name, text: "📌 " + name + " " });
      const x = el("button", { type: "button", text: "×", "aria-label": "unpin " + name });
      x.addEventListener("click", () => { pinned.delete(name); renderPinned(); });
      chip.append(x);
      box.append(chip);
    }
  }

  // A structured call the person fills (the tester form) and sends: the call runs
  // through the REST API, and its result joins the transcript for the model to read.
  function insertCall(t) {
    const card = $("#call-card");
    const name = t.name || t.slug;
    const cancel = el("button", { type: "button", text: "Cancel" });
    cancel.addEventListener("click", () => { card.hidden = true; card.replaceChildren(); });
    card.replaceChildren(el("p", {}, el("strong", { text: "Call " + name }), document.createTextNode(" "), cancel));
    card.append(Console.tester(t, {
      prefix: "call-arg", bare: true, callLabel: "Send call",
      onOutcome: (args, body, ms) => {
        const li = entry("event call", el("span", { class: "what", text: "you called " + name }), document.createTextNode(" " + short(args, 300) + " · " + ms + " ms"));
        li.append(el("details", { open: true }, el("summary", { text: body.ok ? "→ ok" : "→ failed" }), el("pre", { text: JSON.stringify(body.ok ? body.value : body.error, null, 2) })));
        transcript = transcript.concat([{ role: "user", content: "I called the tool " + name + " with " + JSON.stringify(args) + "; the result: " + JSON.stringify(body) }]);
        card.hidden = true;
        card.replaceChildren();
      },
    }));
    card.hidden = false;
    const first = card.querySelector("input, select, textarea");
    if (first) first.focus();
  }

  return { show };
})();
