// The toolscout console: routing, the token, and the Tools screen. A client of the
// public REST API (/tools/…) plus /console/api/levels for token counts. The Recipes
// screen is recipes.js, the chat chat.js.
"use strict";

const el = SchemaForm.el;
const $ = (sel) => document.querySelector(sel);

const Console = {
  bundles: new Map(), // bundleID -> bundle
  token: () => sessionStorage.getItem("toolscout-token") || "",

  // When this page last changed the catalog: its own changes re-read what they need.
  ownWrite: 0,

  async api(method, path, body) {
    if (method !== "GET") Console.ownWrite = Date.now();
    const headers = { Accept: "application/json" };
    const token = Console.token();
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      return { status: 0, ok: false, body: { error: { code: "network", message: "the server cannot be reached: " + e.message } } };
    }
    let data = null;
    const text = await response.text();
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: { code: "invalid", message: text } }; }
    return { status: response.status, ok: response.ok, body: data };
  },

  errorText(reply) {
    const e = reply.body && reply.body.error;
    if (!e) return "HTTP " + reply.status;
    return typeof e === "string" ? e : (e.message || JSON.stringify(e));
  },

  async loadBundles() {
    const reply = await Console.api("GET", "/tools/bundles?includeDisabled=true&pageSize=1000");
    if (!reply.ok) return;
    Console.bundles = new Map(reply.body.items.map((b) => [b.bundleID, b]));
    const select = $("#filter-bundle");
    const current = select.value;
    select.replaceChildren(el("option", { value: "", text: "all" }));
    for (const b of Console.bundles.values()) select.append(el("option", { value: b.bundleID, text: b.slug }));
    select.value = current;
    renderBundles();
  },

  bundleSlug: (id) => (Console.bundles.get(id) || {}).slug || String(id).slice(0, 8),

  // Who the server takes this page for (GET /api/v1/whoami): "operator", "tenant" or
  // "anonymous". Only the controls it may use are shown.
  who: "operator",
  async loadWho() {
    const reply = await Console.api("GET", "/api/v1/whoami");
    Console.who = reply.ok && reply.body ? reply.body.kind : "anonymous";
  },
  // Whether this page may change the bundle `id` and its tools: the operator any (a
  // built-in one's tools included), a tenant only its own; nobody without a token.
  mayChange(id) {
    const b = Console.bundles.get(id);
    if (Console.who === "operator") return true;
    return Console.who === "tenant" && !!b && b.isOwn === true;
  },
  // Reads who this page is, its bundles and its list again (a new token).
  async reload() {
    await Console.loadWho();
    await Console.loadBundles();
    refreshList(false);
    route();
  },
  toolPath: (t) => "/tools/bundles/" + t.bundleID + "/tools/" + encodeURIComponent(t.slug) + "/version/" + encodeURIComponent(t.version),
};

// ---- the token -------------------------------------------------------------------

function showLogin() {
  $("#login-state").textContent = Console.token() ? "token set for this tab" : "";
}
$("#login").addEventListener("submit", (e) => {
  e.preventDefault();
  const v = $("#token").value.trim();
  if (v) sessionStorage.setItem("toolscout-token", v); else sessionStorage.removeItem("toolscout-token");
  $("#token").value = "";
  showLogin();
  restartChanges();
  // Another token is another view of the catalog: its bundles, its tools, its controls.
  $("#detail").replaceChildren();
  Console.reload();
});

// ---- routing -----------------------------------------------------------------------

function route() {
  const hash = location.hash || "#/tools";
  const screen = hash.startsWith("#/chat") ? "chat" : hash.startsWith("#/recipes") ? "recipes" : "tools";
  for (const name of ["tools", "recipes", "chat"]) {
    $("#" + name + "-screen").hidden = screen !== name;
    $("#nav-" + name).classList.toggle("current", screen === name);
  }
  if (screen === "chat") { if (window.Chat) window.Chat.show(); return; }
  if (screen === "recipes") { if (window.Recipes) window.Recipes.show(); return; }
  const m = hash.match(/^#\/tool\/([^/]+)\/([^/]+)\/([^/]+)$/);
  if (m) showTool(m[1], decodeURIComponent(m[2]), decodeURIComponent(m[3]));
}
window.addEventListener("hashchange", route);

// ---- the list: search as you type, filters, pages -------------------------------

let listSeq = 0;
let nextPage = null;

function listQuery(pageToken) {
  const q = $("#search").value.trim();
  const disabled = $("#filter-disabled").checked;
  const p = new URLSearchParams();
  if (disabled) p.set("includeDisabled", "true");
  if (pageToken) p.set("pageToken", pageToken);
  if (q) {
    p.set("q", q);
    p.set("pageSize", "50");
    return { search: true, url: "/tools/tools/search?" + p };
  }
  p.set("pageSize", "50");
  if ($("#filter-bundle").value) p.set("bundleIDs", $("#filter-bundle").value);
  if ($("#filter-tag").value.trim()) p.set("tags", $("#filter-tag").value.trim());
  return { search: false, url: "/tools/tools?" + p };
}

async function refreshList(append) {
  const seq = ++listSeq;
  const query = listQuery(append ? nextPage : null);
  const started = performance.now();
  const reply = await Console.api("GET", query.url);
  if (seq !== listSeq) return; // a newer keystroke won
  const info = $("#result-info");
  if (!reply.ok) {
    info.textContent = Console.errorText(reply);
    info.className = "form-error";
    if (!append) $("#results").replaceChildren();
    return;
  }
  info.className = "muted";
  let items = reply.body.items;
  if (query.search) {
    // The search API ranks the whole catalog; the bundle and tag filters narrow its page.
    const bundle = $("#filter-bundle").value;
    const tag = $("#filter-tag").value.trim();
    items = items.filter((t) => (!bundle || t.bundleID === bundle) && (!tag || (t.tags || []).includes(tag)));
  }
  nextPage = reply.body.nextPageToken || null;
  const list = $("#results");
  if (!append) list.replaceChildren();
  items.forEach((t) => list.append(resultRow(t)));
  const ms = Math.round(performance.now() - started);
  const dym = reply.body.didYouMean && reply.body.didYouMean.length ? " · did you mean " + reply.body.didYouMean.join(", ") + "?" : "";
  const n = list.children.length;
  info.textContent = n + (nextPage ? "+" : "") + (n === 1 && !nextPage ? " tool" : " tools") + (query.search ? " (ranked)" : "") + " in " + ms + " ms" + dym;
  $("#more").hidden = !nextPage;
}

function enabledSwitch(checked, label, onChange) {
  const input = el("input", { type: "checkbox", class: "toggle", checked, "aria-label": label });
  input.addEventListener("change", async () => {
    input.disabled = true;
    const ok = await onChange(input.checked);
    if (!ok) input.checked = !input.checked;
    input.disabled = false;
  });
  return el("label", { class: "switch" }, input, document.createTextNode(" enabled"));
}

async function patchTool(t, enabled) {
  const reply = await Console.api("PATCH", Console.toolPath(t), { isEnabled: enabled });
  $("#result-info").textContent = reply.ok ? (t.name || t.slug) + (enabled ? " enabled" : " disabled") : Console.errorText(reply);
  $("#result-info").className = reply.ok ? "muted" : "form-error";
  return reply.ok;
}

function resultRow(t) {
  const name = t.name || t.slug;
  const li = el("li", { "data-tool": name });
  const open = el("button", { type: "button", class: "name", text: name });
  open.addEventListener("click", () => { location.hash = "#/tool/" + t.bundleID + "/" + encodeURIComponent(t.slug) + "/" + encodeURIComponent(t.version); });
  const meta = el("span", { class: "meta", text: Console.bundleSlug(t.bundleID) + " · v" + t.version });
  if (t.match) meta.append(el("span", { class: "badge tier-" + t.match.tier, title: "matched by " + t.match.tier + " on " + t.match.field, text: t.match.tier + " · " + t.match.field }));
  if (!t.isCallable) meta.append(el("span", { class: "badge off", text: t.disabledReason || "disabled" }));
  const left = el("div", {}, open, document.createTextNode(" "), meta);
  li.append(left);
  if (Console.mayChange(t.bundleID)) li.append(enabledSwitch(t.isEnabled, "enable " + name, (on) => patchTool(t, on)));
  li.append(el("div", { class: "summary", text: t.summary || t.description || "" }));
  return li;
}

let typing = null;
$("#search").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => refreshList(false), 120);
});
for (const id of ["#filter-bundle", "#filter-disabled"]) $(id).addEventListener("change", () => refreshList(false));
$("#filter-tag").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => refreshList(false), 200);
});
$("#more").addEventListener("click", () => refreshList(true));

// ---- live: the catalog's change feed -----------------------------------------------------

// Another tab, process or replica changed the catalog: the list is read again (once for a
// burst), unless the user is paging through more than the first page, or this page made
// the change itself (it re-reads what it changed, and a redraw under the user's hand
// would move what they are about to click).
//
// The feed is read with fetch and a small reader of server-sent events, not EventSource,
// which cannot send the token (Authorization); the token never goes in the URL, where
// logs would keep it. Like EventSource, it reconnects after the server's `retry:` and
// resumes with Last-Event-ID.
let following = null;
const Feed = {
  last: null, // the id of the last event read
  retry: 2000, // ms before reconnecting
  controller: null, // aborts the stream being read
  wake: null, // ends the wait before reconnecting
};

function reread() {
  clearTimeout(following);
  following = setTimeout(async () => {
    if (Date.now() - Console.ownWrite < 2000) return;
    if (nextPage !== null && $("#results").children.length > 50) return;
    await Console.loadBundles();
    refreshList(false);
  }, 200);
}

// Reads a response's server-sent events until it ends, calling `handle(event, data)`.
async function readEvents(response, handle) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? "" : line.slice(colon + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "event") event = v;
        else if (field === "data") data.push(v);
        else if (field === "id") Feed.last = v;
        else if (field === "retry" && /^\d+$/.test(v)) Feed.retry = Number(v);
      }
      handle(event, data.join("\n"));
    }
  }
}

async function followChanges() {
  if (!window.fetch || !window.ReadableStream || !window.TextDecoder || !window.AbortController) return;
  for (;;) {
    const controller = new AbortController();
    Feed.controller = controller;
    const headers = { Accept: "text/event-stream" };
    const token = Console.token();
    if (token) headers.Authorization = "Bearer " + token;
    if (Feed.last !== null) headers["Last-Event-ID"] = Feed.last;
    let wait = Feed.retry;
    try {
      const response = await fetch("/api/v1/events", { headers, cache: "no-store", signal: controller.signal });
      if (response.ok && response.body) {
        await readEvents(response, (event) => {
          if (event === "change" || event === "reset") reread();
        });
      } else {
        // Refused: a token that is not (or no longer) valid waits for a new one; too
        // many streams, for a free one.
        wait = Math.max(wait, response.status === 401 || response.status === 403 ? 30000 : 5000);
      }
    } catch (_) {
      // The network, or a new token (the stream was aborted to start again at once).
    }
    if (controller.signal.aborted) continue;
    await new Promise((resolve) => {
      Feed.wake = resolve;
      setTimeout(resolve, wait);
    });
    Feed.wake = null;
  }
}

// A new token is another reader: its stream starts again, from its own view.
function restartChanges() {
  Feed.last = null;
  if (Feed.controller) Feed.controller.abort();
  if (Feed.wake) Feed.wake();
}
followChanges();

// ---- bundles -------------------------------------------------------------------------

function renderBundles() {
  const list = $("#bundles");
  list.replaceChildren();
  for (const b of Console.bundles.values()) {
    const li = el("li", { "data-bundle": b.slug });
    li.append(el("span", { class: "label", text: b.displayName || b.slug }), el("span", { class: "meta", text: b.slug + (b.isBuiltIn ? " · built-in" : b.isShared ? " · shared" : "") }));
    const mine = Console.mayChange(b.bundleID);
    if (mine) li.append(enabledSwitch(b.isEnabled, "enable bundle " + b.slug, async (on) => {
      const reply = await Console.api("PATCH", "/tools/bundles/" + b.bundleID, { isEnabled: on });
      if (reply.ok) { b.isEnabled = on; refreshList(false); }
      else $("#result-info").textContent = Console.errorText(reply);
      return reply.ok;
    }));
    li.append(el("a", { href: "/console/api/bundles/" + b.bundleID + "/export", download: b.slug + ".zip", class: "export", "aria-label": "export bundle " + b.slug + " as ZIP", text: "Export ZIP" }));
    if (mine && !b.isBuiltIn) {
      const del = el("button", { type: "button", class: "danger", text: "Delete", "aria-label": "delete bundle " + b.slug });
      del.addEventListener("click", async () => {
        if (!confirm("Delete bundle " + b.slug + "? Its tools stop being served.")) return;
        const reply = await Console.api("DELETE", "/tools/bundles/" + b.bundleID);
        if (reply.ok) { await Console.loadBundles(); refreshList(false); } else alert(Console.errorText(reply));
      });
      li.append(del);
    }
    list.append(li);
  }
}

$("#import").addEventListener("click", async () => {
  const state = $("#import-state");
  const file = $("#import-file").files[0];
  if (!file) { state.textContent = "choose a ZIP file first"; state.className = "form-error"; return; }
  const headers = { "Content-Type": "application/zip" };
  if (Console.token()) headers.Authorization = "Bearer " + Console.token();
  let reply;
  try {
    Console.ownWrite = Date.now();
    const response = await fetch("/console/api/bundles/import", { method: "POST", headers, body: await file.arrayBuffer() });
    reply = { ok: response.ok, status: response.status, body: await response.json().catch(() => null) };
  } catch (e) { reply = { ok: false, status: 0, body: { error: { message: e.message } } }; }
  if (!reply.ok) { state.textContent = Console.errorText(reply); state.className = "form-error"; return; }
  state.className = "muted";
  state.textContent = "Imported " + reply.body.tools.length + " tool(s) into " + reply.body.bundle.slug + (reply.body.created ? " (new bundle)" : "");
  await Console.loadBundles();
  refreshList(false);
});

// A labelled input with a place for its own error.
function input(id, label, attrs, hint) {
  const tag = attrs && attrs.rows ? "textarea" : "input";
  const control = el(tag, Object.assign({ id, name: id, type: tag === "input" ? "text" : undefined, "aria-describedby": id + "-error" }, attrs || {}));
  return el("div", { class: "field" }, el("label", { for: id, text: label }), hint ? el("p", { class: "desc", text: hint }) : null, control, el("p", { class: "field-error", id: id + "-error", role: "alert" }));
}

// Puts an API error next to the field it concerns; `fields` maps a field id to the
// words of the server's message that point at it.
function showError(form, fields, message) {
  form.querySelectorAll(".field-error, .form-error").forEach((e) => { e.textContent = ""; });
  form.querySelectorAll("[aria-invalid]").forEach((e) => e.removeAttribute("aria-invalid"));
  const lower = message.toLowerCase();
  for (const [id, words] of fields) {
    if (words.some((w) => lower.includes(w))) {
      form.querySelector("#" + id + "-error").textContent = message;
      form.querySelector("#" + id).setAttribute("aria-invalid", "true");
      form.querySelector("#" + id).focus();
      return;
    }
  }
  form.querySelector(".form-error").textContent = message;
}

function bundleForm() {
  const form = el("form", { id: "bundle-form", "aria-label": "New bundle" });
  form.append(el("h2", { text: "New bundle" }),
    input("bundle-slug", "Slug", { required: true, placeholder: "e.g. weather" }, "lowercase letters, digits and '-'"),
    input("bundle-display", "Display name", {}),
    input("bundle-description", "Description", { rows: 2 }),
    el("p", { class: "form-error", role: "alert" }),
    el("button", { type: "submit", class: "primary", text: "Create bundle" }));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { slug: $("#bundle-slug").value.trim(), displayName: $("#bundle-display").value.trim(), description: $("#bundle-description").value.trim() };
    const reply = await Console.api("POST", "/tools/bundles", body);
    if (!reply.ok) return showError(form, [["bundle-slug", ["slug"]], ["bundle-display", ["display"]], ["bundle-description", ["description"]]], Console.errorText(reply));
    await Console.loadBundles();
    $("#detail").replaceChildren(el("p", { role: "status", class: "created", text: "Bundle " + reply.body.slug + " created." }), toolForm(null, reply.body.bundleID));
  });
  $("#detail").replaceChildren(form);
  $("#bundle-slug").focus();
}

function toolForm(base, bundleID) {
  const form = el("form", { id: "tool-form", "aria-label": base ? "New version" : "New tool" });
  const bundles = el("select", { id: "tool-bundle", name: "tool-bundle", "aria-describedby": "tool-bundle-error" });
  for (const b of Console.bundles.values()) if (!b.isBuiltIn && Console.mayChange(b.bundleID)) bundles.append(el("option", { value: b.bundleID, text: b.slug }));
  const type = el("select", { id: "tool-type", name: "tool-type" }, el("option", { value: "http", text: "http" }), el("option", { value: "native", text: "native" }), el("option", { value: "recipe", text: "recipe" }));
  form.append(el("h2", { text: base ? "New version of " + (base.name || base.slug) : "New tool" }),
    el("div", { class: "field" }, el("label", { for: "tool-bundle", text: "Bundle" }), bundles, el("p", { class: "field-error", id: "tool-bundle-error", role: "alert" })),
    input("tool-slug", "Slug", { required: true, placeholder: "e.g. sea-temperature" }),
    input("tool-version", "Version", { required: true, value: "1" }, "versions are immutable: an edit is a new version"),
    input("tool-name", "Name", { required: true, placeholder: "e.g. sea_temperature" }, "what the model calls it: letters, digits, '_', '-', '.'"),
    input("tool-summary", "Summary", { placeholder: "one line" }),
    input("tool-description", "Description", { rows: 3 }),
    el("div", { class: "field" }, el("label", { for: "tool-type", text: "Type" }), type),
    input("tool-args", "argSchema (JSON Schema)", { rows: 6, value: '{"type": "object", "properties": {}}' }),
    input("tool-impl", "impl (JSON)", { rows: 3, value: '{"method": "GET", "urlTemplate": "https://api.example.com/"}' }),
    el("p", { class: "form-error", role: "alert" }),
    el("button", { type: "submit", class: "primary", text: base ? "Create version" : "Create tool" }));
  $("#detail").append(form);
  if (bundleID) bundles.value = bundleID;
  if (base) {
    bundles.value = base.bundleID;
    $("#tool-slug").value = base.slug;
    $("#tool-version").value = /^\d+$/.test(base.version) ? String(Number(base.version) + 1) : base.version + "-2";
    $("#tool-name").value = base.name || "";
    $("#tool-summary").value = base.summary || "";
    $("#tool-description").value = base.description || "";
    type.value = ["http", "recipe"].includes(base.type) ? base.type : "native";
    $("#tool-args").value = JSON.stringify(base.argSchema || {}, null, 2);
    $("#tool-impl").value = JSON.stringify(base.impl || {}, null, 2);
  }
  const fields = [["tool-slug", ["slug"]], ["tool-version", ["version"]], ["tool-name", ["tool name", "name \""]],
    ["tool-summary", ["summary"]], ["tool-args", ["parameters", "argschema", "schema"]], ["tool-impl", ["impl", "urltemplate", "func"]],
    ["tool-description", ["description"]], ["tool-bundle", ["bundle"]]];
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const parsed = {};
    for (const [id, key] of [["tool-args", "argSchema"], ["tool-impl", "impl"]]) {
      try { parsed[key] = JSON.parse($("#" + id).value); } catch (err) { return showError(form, [[id, [""]]], key + " is not JSON: " + err.message); }
    }
    const body = { type: type.value, name: $("#tool-name").value.trim(), description: $("#tool-description").value.trim(), argSchema: parsed.argSchema, impl: parsed.impl };
    const summary = $("#tool-summary").value.trim();
    if (summary) body.summary = summary;
    if (base) for (const k of ["category", "tags", "metadata", "examples", "errors", "notes", "returns", "outputSchema", "displayName"]) if (base[k] !== undefined) body[k] = base[k];
    const t = { bundleID: bundles.value, slug: $("#tool-slug").value.trim(), version: $("#tool-version").value.trim() };
    if (!t.bundleID) return showError(form, [["tool-bundle", [""]]], "create a bundle first: built-in bundles take no new tools");
    if (!t.slug) return showError(form, [["tool-slug", [""]]], "a tool needs a slug");
    if (!t.version) return showError(form, [["tool-version", [""]]], "a tool needs a version");
    const reply = await Console.api("PUT", Console.toolPath(t), body);
    if (!reply.ok) return showError(form, fields, Console.errorText(reply));
    location.hash = "#/tool/" + t.bundleID + "/" + encodeURIComponent(t.slug) + "/" + encodeURIComponent(t.version);
    refreshList(false);
  });
  return form;
}

$("#new-bundle").addEventListener("click", bundleForm);
$("#new-recipe").addEventListener("click", () => { location.hash = "#/recipes"; });
$("#new-tool").addEventListener("click", () => { $("#detail").replaceChildren(); toolForm(null, null); $("#tool-slug").focus(); });

// ---- one tool: levels, usage, toggles, the live tester ------------------------------

async function showTool(bundleID, slug, version) {
  const detail = $("#detail");
  const t0 = { bundleID, slug, version };
  const [reply, levels] = await Promise.all([
    Console.api("GET", Console.toolPath(t0)),
    Console.api("GET", "/console/api/levels/" + bundleID + "/" + encodeURIComponent(slug) + "/" + encodeURIComponent(version)),
  ]);
  if (!reply.ok) { detail.replaceChildren(el("p", { class: "form-error", text: Console.errorText(reply) })); return; }
  const t = reply.body;
  const name = t.name || t.slug;
  document.querySelectorAll("#results li").forEach((li) => li.classList.toggle("selected", li.dataset.tool === name));
  const head = el("div", { id: "tool-view" });
  head.append(el("h2", { text: name }));
  const meta = el("p", { class: "muted" }, document.createTextNode(Console.bundleSlug(t.bundleID) + " · " + t.slug + " v" + t.version + " · " + t.type));
  if (t.isBuiltIn) meta.append(el("span", { class: "badge", text: "built-in" }));
  if (!t.isCallable) meta.append(el("span", { class: "badge off", id: "tool-reason", text: t.disabledReason || "disabled" }));
  head.append(meta);
  head.append(el("p", { id: "usage", class: "muted", text: "Called " + t.callCount + " time" + (t.callCount === 1 ? "" : "s") + (t.lastCalledAt ? ", last at " + t.lastCalledAt : "") }));
  const actions = el("div", { class: "row" });
  const mine = Console.mayChange(t.bundleID);
  if (mine) actions.append(enabledSwitch(t.isEnabled, "enable " + name, async (on) => {
    const ok = await patchTool(t, on);
    if (ok) { refreshList(false); showTool(bundleID, slug, version); }
    return ok;
  }));
  if (mine && !t.isBuiltIn) {
    const edit = el("button", { type: "button", id: "new-version", text: "New version" });
    // A recipe's next version is built where it was: in the recipe builder, its steps,
    // arguments and result loaded (a recipe the builder cannot show opens the form).
    edit.addEventListener("click", async () => {
      if (t.type === "recipe" && window.Recipes && await window.Recipes.edit(t)) { location.hash = "#/recipes"; return; }
      detail.replaceChildren();
      toolForm(t, null);
    });
    const del = el("button", { type: "button", class: "danger", id: "delete-tool", text: "Delete" });
    del.addEventListener("click", async () => {
      if (!confirm("Delete " + name + " v" + t.version + "?")) return;
      const r = await Console.api("DELETE", Console.toolPath(t));
      if (r.ok) { detail.replaceChildren(el("p", { role: "status", text: name + " v" + t.version + " deleted." })); refreshList(false); }
      else alert(Console.errorText(r));
    });
    actions.append(edit, del);
  }
  head.append(actions);
  head.append(levelsView(levels));
  head.append(tester(t));
  detail.replaceChildren(head);
}

function levelsView(reply) {
  const box = el("section", { "aria-label": "What a model sees" });
  box.append(el("h3", { text: "What a model sees" }));
  if (!reply.ok) { box.append(el("p", { class: "form-error", text: Console.errorText(reply) })); return box; }
  const tabs = el("div", { class: "tabs", role: "tablist" });
  const text = el("pre", { id: "level-text", role: "tabpanel" });
  const tokens = el("span", { id: "level-tokens", class: "tokens" });
  const choose = (label, body, n, tab) => {
    tabs.querySelectorAll("[role=tab]").forEach((b) => b.setAttribute("aria-selected", String(b === tab)));
    const parameter = tabs.querySelector("#level-parameter");
    if (tab && parameter) parameter.value = "";
    text.textContent = body;
    tokens.textContent = label + ": " + n + " tokens";
  };
  for (const l of reply.body.levels) {
    const tab = el("button", { type: "button", role: "tab", id: "level-" + l.level, text: "L" + l.level, title: l.tokens + " tokens" });
    tab.addEventListener("click", () => choose("level " + l.level, l.text, l.tokens, tab));
    tabs.append(tab);
  }
  if (reply.body.parameters.length) {
    const select = el("select", { id: "level-parameter", "aria-label": "one parameter" }, el("option", { value: "", text: "one parameter…" }));
    reply.body.parameters.forEach((p, i) => select.append(el("option", { value: String(i), text: p.name })));
    select.addEventListener("change", () => {
      const p = reply.body.parameters[Number(select.value)];
      if (p) choose("parameter " + p.name, p.text, p.tokens, null);
    });
    tabs.append(select);
  }
  tabs.append(tokens);
  box.append(tabs, text);
  const first = tabs.querySelector("#level-2") || tabs.querySelector("[role=tab]");
  if (first) first.click();
  return box;
}

// The live tester: a form from argSchema, or raw JSON; the outcome with its timing.
function tester(t, opts) {
  opts = opts || {};
  const prefix = opts.prefix || "arg";
  const box = el("section", { class: "tester", "aria-label": "Try it" });
  if (!opts.bare) box.append(el("h3", { text: "Try it" }));
  const form = SchemaForm.build(t.argSchema, prefix);
  const raw = el("textarea", { id: prefix + "-raw", rows: 5, hidden: true, "aria-label": "arguments as JSON" });
  const rawMode = el("input", { type: "checkbox", id: prefix + "-raw-mode" });
  rawMode.addEventListener("change", () => {
    try {
      if (rawMode.checked) raw.value = JSON.stringify(form.value(), null, 2);
      else form.set(JSON.parse(raw.value || "{}"));
    } catch (e) { rawMode.checked = !rawMode.checked; outcome.replaceChildren(el("p", { class: "form-error", text: e.message })); return; }
    raw.hidden = !rawMode.checked;
    form.element.hidden = rawMode.checked;
  });
  const approval = (t.metadata && t.metadata.requires_approval) ? el("label", { class: "field" }, el("input", { type: "checkbox", id: prefix + "-approve" }), document.createTextNode(" I approve this call (this tool requires approval)")) : null;
  const call = el("button", { type: "button", class: "primary", id: prefix + "-call", text: opts.callLabel || "Call " + (t.name || t.slug) });
  const outcome = el("div", { id: prefix + "-outcome", role: "status" });
  box.append(form.element, el("label", { class: "switch" }, rawMode, document.createTextNode(" raw JSON")), raw, approval || "", el("div", { class: "row" }, call), outcome);
  call.addEventListener("click", async () => {
    let args;
    try { args = rawMode.checked ? JSON.parse(raw.value || "{}") : form.value(); } catch (e) {
      outcome.replaceChildren(el("p", { class: "form-error", text: "arguments: " + e.message }));
      return;
    }
    if (approval && !approval.querySelector("input").checked) {
      outcome.replaceChildren(el("p", { class: "form-error", text: "this tool requires approval: tick the box to approve the call" }));
      return;
    }
    call.disabled = true;
    const started = performance.now();
    const reply = await Console.api("POST", Console.toolPath(t) + "/invoke", { args });
    const ms = Math.round(performance.now() - started);
    call.disabled = false;
    const body = reply.body || {};
    const ok = body.ok === true;
    const card = el("div", { class: "outcome " + (ok ? "ok" : "err") });
    if (ok) card.append(el("p", { class: "head", text: "ok · " + ms + " ms" }), el("pre", { text: JSON.stringify(body.value, null, 2) }));
    else {
      const err = body.error || {};
      card.append(el("p", { class: "head", text: (err.kind || err.code || "error") + " · " + ms + " ms" }), el("p", { class: "message", text: err.message || Console.errorText(reply) }));
      if (err.details) card.append(el("pre", { text: JSON.stringify(err.details, null, 2) }));
    }
    outcome.replaceChildren(card);
    if (opts.onOutcome) opts.onOutcome(args, body, ms);
    else if (ok) {
      const usage = $("#usage");
      if (usage) usage.textContent = "Called " + (t.callCount + 1) + " time" + (t.callCount === 0 ? "" : "s") + ", last just now";
      t.callCount += 1;
    }
  });
  return box;
}
Console.tester = tester;
Console.readEvents = readEvents;
Console.refreshList = refreshList;

// ---- start ---------------------------------------------------------------------------

showLogin();
Console.reload();
