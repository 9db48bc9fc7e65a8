// The Recipes screen: a recipe built from catalog tools. Steps are picked with a palette
// (search as you type); each step's parameters are a value (the form widgets of the
// step tool's schema) or a source (a recipe argument, an earlier step's result, plus a
// sub-path). The recipe's JSON is shown as it is built; it is tried before it is saved
// (POST /console/api/recipes/try: checked as the put would check it, then run with each
// step's progress streamed) and saved as a new tool with the REST tool PUT.
//
// Steps and arguments are held by a key of their own, not their id or name, so that a
// mapping follows a step or an argument that is renamed.
"use strict";

window.Recipes = (() => {
  const TYPES = ["string", "number", "integer", "boolean", "object", "array"];
  const steps = []; // {key, tool, card, idInput, params: Map(name -> param)}
  const args = []; // {key, name, type, required, row}
  let counter = 0;
  let runForm = null; // the tester's form over the recipe's own argSchema
  let runSchema = "";
  let slugEdited = false;

  const screen = () => $("#recipes-screen");

  function show() {
    const select = $("#recipe-bundle");
    const current = select.value;
    select.replaceChildren();
    for (const b of Console.bundles.values()) if (!b.isBuiltIn && Console.mayChange(b.bundleID)) select.append(el("option", { value: b.bundleID, text: b.slug }));
    if (!select.children.length) select.append(el("option", { value: "", text: "no bundle of yours yet: create one on the Tools screen" }));
    if (current) select.value = current;
    update();
  }

  // ---- the recipe's arguments ---------------------------------------------------------

  function addArgument() {
    const key = ++counter;
    const a = { key };
    const name = el("input", { type: "text", id: "recipe-arg-" + key + "-name", "aria-label": "argument name", placeholder: "name", autocomplete: "off" });
    const type = el("select", { id: "recipe-arg-" + key + "-type", "aria-label": "argument type" });
    TYPES.forEach((t) => type.append(el("option", { value: t, text: t })));
    const required = el("input", { type: "checkbox", id: "recipe-arg-" + key + "-required" });
    const remove = el("button", { type: "button", class: "danger", text: "Remove", "aria-label": "remove argument" });
    a.row = el("div", { class: "row arg", "data-arg-key": String(key) }, name, type,
      el("label", { class: "switch" }, required, document.createTextNode(" required")), remove);
    a.name = () => name.value.trim();
    a.type = () => type.value;
    a.required = () => required.checked;
    remove.addEventListener("click", () => {
      args.splice(args.indexOf(a), 1);
      a.row.remove();
      update();
    });
    args.push(a);
    $("#recipe-arg-list").append(a.row);
    name.focus();
    update();
  }
  $("#recipe-arg-add").addEventListener("click", addArgument);

  function argSchema() {
    const properties = {};
    const required = [];
    for (const a of args) {
      if (!a.name()) continue;
      properties[a.name()] = { type: a.type() };
      if (a.required()) required.push(a.name());
    }
    const schema = { type: "object", properties };
    if (required.length) schema.required = required;
    return schema;
  }

  // ---- steps --------------------------------------------------------------------------

  // A step id from a tool name: letters, digits and '_', unique in the recipe.
  function defaultId(tool) {
    let base = tool.replace(/[^A-Za-z0-9_]/g, "_").slice(0, 60);
    if (!/^[A-Za-z_]/.test(base)) base = "s_" + base;
    const taken = new Set(steps.map((s) => s.id()));
    let id = base;
    for (let n = 2; taken.has(id); n++) id = base + "_" + n;
    return id;
  }

  function addStep(tool) {
    const key = ++counter;
    const prefix = "s" + key;
    const s = { key, tool, params: new Map() };
    const idInput = el("input", { type: "text", id: prefix + "-id", value: defaultId(tool.name || tool.slug), autocomplete: "off", size: 14 });
    s.id = () => idInput.value.trim();
    const up = el("button", { type: "button", text: "↑", title: "move up", "aria-label": "move step up" });
    const down = el("button", { type: "button", text: "↓", title: "move down", "aria-label": "move step down" });
    const remove = el("button", { type: "button", class: "danger", text: "Remove", "aria-label": "remove step" });
    up.addEventListener("click", () => move(s, -1));
    down.addEventListener("click", () => move(s, 1));
    remove.addEventListener("click", () => {
      steps.splice(steps.indexOf(s), 1);
      s.card.remove();
      update();
    });
    const head = el("div", { class: "row step-head" },
      el("label", { for: prefix + "-id", text: "Step" }), idInput,
      el("span", { class: "calls", text: "calls " }, el("strong", { text: tool.name || tool.slug })),
      el("span", { class: "spacer" }), up, down, remove);
    s.card = el("li", { class: "step", id: prefix, "data-tool": tool.name || tool.slug }, head);
    if (tool.summary) s.card.append(el("p", { class: "desc", text: tool.summary }));
    const schema = tool.argSchema || {};
    const needed = new Set(schema.required || []);
    const props = Object.entries(schema.properties || {});
    if (!props.length) s.card.append(el("p", { class: "hint", text: "This tool takes no arguments." }));
    for (const [name, sub] of props) s.params.set(name, param(prefix, name, sub, needed.has(name)));
    s.params.forEach((p) => s.card.append(p.element));
    steps.push(s);
    $("#recipe-steps").append(s.card);
    update();
    return s;
  }

  // One parameter of a step: a value (the schema's widget) or a source and a sub-path.
  // Ids: `<step>-p-<name>` the widget, `-m-` its mode, `-src-` the source, `-sub-` the
  // sub-path (the kind before the name, so that no parameter's name makes another's id).
  function param(prefix, name, schema, required) {
    const safe = SchemaForm.safe(name);
    const field = SchemaForm.field(schema, name, required, prefix + "-p-" + safe);
    const mode = el("select", { id: prefix + "-m-" + safe, class: "mode", "aria-label": "how " + name + " is given" },
      el("option", { value: "value", text: "a value" }), el("option", { value: "from", text: "from a source" }));
    const source = el("select", { id: prefix + "-src-" + safe, "aria-label": name + ": source" });
    const path = el("input", { type: "text", id: prefix + "-sub-" + safe, autocomplete: "off", "aria-label": name + ": sub-path", placeholder: "sub-path, e.g. .utc_offset" });
    const label = el("span", { class: "label", text: name });
    if (required) label.append(el("abbr", { class: "req", title: "required", text: "*" }));
    const from = el("div", { class: "row from", hidden: true }, label, el("span", { class: "arrow", "aria-hidden": "true", text: "←" }), source, path);
    mode.addEventListener("change", () => {
      field.element.hidden = mode.value === "from";
      from.hidden = mode.value !== "from";
    });
    const element = el("div", { class: "param", "data-param": name }, el("div", { class: "param-body" }, field.element, from), mode);
    return { name, field, mode, source, path, element };
  }

  function move(s, by) {
    const i = steps.indexOf(s);
    const j = i + by;
    if (j < 0 || j >= steps.length) return;
    // "The last step's result" means a step: it stays that step's, wherever it moves.
    const result = $("#recipe-result");
    if (result.value === "last") result.value = "step:" + steps[steps.length - 1].key;
    steps.splice(i, 1);
    steps.splice(j, 0, s);
    steps.forEach((x) => $("#recipe-steps").append(x.card));
    update();
  }

  // The sources a step at position `at` may read: the arguments and the steps before it.
  function sources(at) {
    const out = [];
    for (const a of args) if (a.name()) out.push({ value: "arg:" + a.key, text: "$.args." + a.name() });
    steps.slice(0, at).forEach((s) => out.push({ value: "step:" + s.key, text: "$.steps." + s.id() }));
    return out;
  }

  // What a source value stands for: `$.args.x`, `$.steps.id`, or null when it is gone.
  function root(value) {
    const [kind, key] = [value.split(":")[0], Number(value.split(":")[1])];
    if (kind === "arg") { const a = args.find((x) => x.key === key); return a && a.name() ? "$.args." + a.name() : null; }
    if (kind === "step") { const s = steps.find((x) => x.key === key); return s ? "$.steps." + s.id() : null; }
    return null;
  }

  // A root and a sub-path typed by the person: ".x", "x", "[0]", or a whole "$…" path.
  function join(base, sub) {
    sub = sub.trim();
    if (!sub) return base;
    if (sub.startsWith("$")) return sub;
    return base + (sub.startsWith(".") || sub.startsWith("[") ? sub : "." + sub);
  }

  function fillSelect(select, options, empty) {
    const current = select.value;
    select.replaceChildren(el("option", { value: "", text: empty }));
    options.forEach((o) => select.append(el("option", { value: o.value, text: o.text })));
    if (current && !options.some((o) => o.value === current)) {
      // A source that is no longer before this step stays chosen, marked: the check says why.
      const gone = root(current);
      if (gone) select.append(el("option", { value: current, text: gone + " (not before this step)" }));
    }
    select.value = current;
  }

  // ---- the JSON -----------------------------------------------------------------------

  const slugOf = (name) => name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64);

  // The tool body the try and the save send, and what keeps it from being whole.
  function body() {
    const problems = [];
    const built = steps.map((s, i) => {
      const step = { id: s.id(), tool: s.tool.name || s.tool.slug };
      const literal = {};
      const from = {};
      const before = new Set(sources(i).map((o) => o.value));
      for (const p of s.params.values()) {
        if (p.mode.value === "from") {
          const base = p.source.value ? root(p.source.value) : null;
          if (!base) problems.push("step " + (step.id || i + 1) + ": choose where " + p.name + " comes from");
          // A step it was mapped from that now comes later: nothing to read yet.
          else if (!before.has(p.source.value)) problems.push("step " + (step.id || i + 1) + ": " + p.name + " comes from " + base + ", which is not before this step: move the step or choose another source");
          else from[p.name] = join(base, p.path.value);
          continue;
        }
        try {
          const v = p.field.value();
          if (v !== undefined) literal[p.name] = v;
        } catch (e) { problems.push("step " + (step.id || i + 1) + ": " + e.message); }
      }
      if (Object.keys(literal).length) step.args = literal;
      if (Object.keys(from).length) step.from = from;
      return step;
    });
    const recipe = { steps: built };
    const choice = $("#recipe-result").value;
    const sub = $("#recipe-result-path").value;
    let base = null;
    if (choice === "last" && steps.length) base = "$.steps." + steps[steps.length - 1].id();
    else if (choice === "all") base = "$.steps";
    else if (choice.startsWith("step:")) base = root(choice);
    if (base) recipe.result = join(base, sub);
    const name = $("#recipe-name").value.trim();
    const summary = $("#recipe-summary").value.trim();
    const tool = {
      slug: $("#recipe-slug").value.trim() || slugOf(name) || "recipe",
      version: $("#recipe-version").value.trim() || "1",
      name,
      description: $("#recipe-description").value.trim(),
      type: "recipe",
      argSchema: argSchema(),
      impl: recipe,
    };
    if (summary) tool.summary = summary;
    if (!name) problems.push("give the recipe a name");
    // The catalog takes the summary from the description when there is none.
    if (!summary && !tool.description) problems.push("say what the recipe does: a summary or a description");
    if (!steps.length) problems.push("add a step: find a tool below the steps");
    return { tool, problems };
  }

  // Brings everything that depends on names and order up to date, then the JSON.
  function update() {
    steps.forEach((s, i) => s.params.forEach((p) => fillSelect(p.source, sources(i), "— choose —")));
    const result = $("#recipe-result");
    const current = result.value || "last";
    result.replaceChildren(el("option", { value: "last", text: "the last step's result" }));
    steps.forEach((s) => result.append(el("option", { value: "step:" + s.key, text: "$.steps." + s.id() })));
    result.append(el("option", { value: "all", text: "every step's result ($.steps)" }));
    result.value = [...result.options].some((o) => o.value === current) ? current : "last";
    if (!slugEdited) $("#recipe-slug").value = slugOf($("#recipe-name").value.trim());
    const { tool, problems } = body();
    $("#recipe-json").textContent = JSON.stringify(tool, null, 2);
    $("#recipe-json-error").textContent = problems.join("; ");
    const schema = JSON.stringify(tool.argSchema);
    if (schema !== runSchema) {
      let old = {};
      try { if (runForm) old = runForm.value(); } catch (_) { /* a JSON box mid-edit */ }
      runSchema = schema;
      runForm = SchemaForm.build(tool.argSchema, "recipe-run-arg");
      runForm.set(old);
      $("#recipe-run-args").replaceChildren(runForm.element);
    }
    const asks = steps.some((s) => s.tool.metadata && s.tool.metadata.requires_approval);
    if (asks) $("#recipe-approve-box").hidden = false;
  }

  const builder = $("#recipe-builder");
  builder.addEventListener("input", (e) => { if (e.target.id !== "recipe-palette-search") update(); });
  builder.addEventListener("change", (e) => { if (e.target.id !== "recipe-palette-search") update(); });
  $("#recipe-slug").addEventListener("input", () => { slugEdited = $("#recipe-slug").value.trim() !== ""; update(); });
  $("#recipe-version").addEventListener("input", update);

  // ---- the palette of tools -------------------------------------------------------------

  let hits = [];
  let active = -1;
  let seq = 0;
  let typing = null;

  async function search() {
    const q = $("#recipe-palette-search").value.trim();
    const mine = ++seq;
    const list = $("#recipe-palette-results");
    if (!q) { list.replaceChildren(); hits = []; $("#recipe-palette-search").setAttribute("aria-expanded", "false"); return; }
    const reply = await Console.api("GET", "/tools/tools/search?pageSize=8&q=" + encodeURIComponent(q));
    if (mine !== seq) return;
    hits = reply.ok ? reply.body.items.filter((t) => t.isCallable) : [];
    list.replaceChildren();
    if (!reply.ok) list.append(el("li", { class: "form-error", text: Console.errorText(reply) }));
    hits.forEach((t, i) => {
      const li = el("li", { role: "option", id: "recipe-option-" + i, "aria-selected": "false", "data-tool": t.name || t.slug },
        el("strong", { text: t.name || t.slug }), el("span", { class: "summary", text: t.summary || "" }));
      li.addEventListener("click", () => pick(i));
      list.append(li);
    });
    $("#recipe-palette-search").setAttribute("aria-expanded", String(hits.length > 0));
    select(hits.length ? 0 : -1);
  }

  function select(i) {
    active = i;
    document.querySelectorAll("#recipe-palette-results [role=option]").forEach((li, j) => li.setAttribute("aria-selected", String(j === i)));
    const input = $("#recipe-palette-search");
    if (i >= 0) input.setAttribute("aria-activedescendant", "recipe-option-" + i);
    else input.removeAttribute("aria-activedescendant");
  }

  function pick(i) {
    const t = hits[i];
    if (!t) return;
    const s = addStep(t);
    $("#recipe-palette-search").value = "";
    $("#recipe-palette-results").replaceChildren();
    hits = [];
    s.card.scrollIntoView({ block: "nearest" });
    $("#recipe-palette-search").focus();
  }

  $("#recipe-palette-search").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(search, 100); });
  $("#recipe-palette-search").addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown") { e.preventDefault(); if (hits.length) select((active + 1) % hits.length); }
    else if (e.key === "ArrowUp") { e.preventDefault(); if (hits.length) select((active - 1 + hits.length) % hits.length); }
    else if (e.key === "Enter") { e.preventDefault(); if (active >= 0) pick(active); }
    else if (e.key === "Escape") { e.preventDefault(); $("#recipe-palette-search").value = ""; search(); }
  });

  // ---- errors at their step -------------------------------------------------------------

  // Marks the step an error names (`details.step` of a check, or "step 'id'" in a message).
  function markStep(error) {
    steps.forEach((s) => { s.card.classList.remove("invalid"); s.card.removeAttribute("aria-invalid"); });
    if (!error) return;
    let id = error.details && error.details.step;
    if (!id) { const m = /step '([^']+)'/.exec(error.message || ""); id = m && m[1]; }
    const s = id && steps.find((x) => x.id() === id);
    if (s) { s.card.classList.add("invalid"); s.card.setAttribute("aria-invalid", "true"); }
  }

  // ---- the tester -----------------------------------------------------------------------

  let running = false;

  async function run() {
    if (running) return;
    const outcome = $("#recipe-outcome");
    const progress = $("#recipe-progress");
    const { tool, problems } = body();
    progress.replaceChildren();
    if (problems.length) { outcome.replaceChildren(el("p", { class: "form-error", text: problems.join("; ") })); return; }
    let runArgs;
    try { runArgs = runForm ? runForm.value() : {}; } catch (e) {
      outcome.replaceChildren(el("p", { class: "form-error", text: "arguments: " + e.message }));
      return;
    }
    const request = { tool, args: runArgs };
    if ($("#recipe-approve").checked) request.approved = true;
    running = true;
    $("#recipe-run").disabled = true;
    outcome.replaceChildren(el("p", { class: "muted", text: "running…" }));
    const started = performance.now();
    const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    if (Console.token()) headers.Authorization = "Bearer " + Console.token();
    try {
      const response = await fetch("/console/api/recipes/try", { method: "POST", headers, body: JSON.stringify(request) });
      if (!response.ok) {
        let error = { message: "HTTP " + response.status };
        try { error = (await response.json()).error || error; } catch (_) { /* keep the status */ }
        showOutcome({ ok: false, error: { kind: error.code, message: error.message, details: error.details } }, started);
        return;
      }
      const rows = new Map();
      await Console.readEvents(response, (event, data) => {
        let d;
        try { d = JSON.parse(data); } catch (_) { return; }
        if (event === "step") showStep(rows, d);
        else if (event === "outcome") showOutcome(d, started);
      });
    } catch (e) {
      showOutcome({ ok: false, error: { kind: "network", message: "the server cannot be reached: " + e.message } }, started);
    } finally {
      running = false;
      $("#recipe-run").disabled = false;
    }
  }
  $("#recipe-run").addEventListener("click", run);

  function showStep(rows, e) {
    const key = e.recipe + "/" + e.step + (e.item === undefined ? "" : "#" + e.item);
    const what = e.step + (e.item === undefined ? "" : " [" + e.item + "]") + " · " + e.tool;
    let li = rows.get(key);
    if (!li) {
      li = el("li", { "data-step": e.step });
      rows.set(key, li);
      $("#recipe-progress").append(li);
    }
    if (e.event === "step_started") { li.className = "running"; li.textContent = "▶ " + what + " started"; }
    else if (e.event === "step_finished") {
      li.className = e.ok ? "ok" : "err";
      li.textContent = (e.ok ? "✓ " : "✗ ") + what + " · " + e.ms + " ms" + (e.error ? " · " + e.error : "");
    } else if (e.event === "step_skipped") { li.className = "skipped"; li.textContent = "⤼ " + what + " skipped"; }
  }

  function showOutcome(body, started) {
    const ms = Math.round(performance.now() - started);
    const card = el("div", { class: "outcome " + (body.ok ? "ok" : "err") });
    if (body.ok) {
      card.append(el("p", { class: "head", text: "ok · " + ms + " ms" }), el("pre", { id: "recipe-value", text: JSON.stringify(body.value, null, 2) }));
      markStep(null);
    } else {
      const err = body.error || {};
      card.append(el("p", { class: "head", text: (err.kind || "error") + " · " + ms + " ms" }), el("p", { class: "message", text: err.message || "" }));
      if (err.details) card.append(el("pre", { text: JSON.stringify(err.details, null, 2) }));
      if (err.kind === "approval_refused") $("#recipe-approve-box").hidden = false;
      markStep(err);
    }
    $("#recipe-outcome").replaceChildren(card);
  }

  // ---- saving -------------------------------------------------------------------------------

  async function save() {
    const error = $("#recipe-error");
    const saved = $("#recipe-saved");
    error.textContent = "";
    saved.replaceChildren();
    const { tool, problems } = body();
    if (problems.length) { error.textContent = problems.join("; "); return; }
    const t = { bundleID: $("#recipe-bundle").value, slug: tool.slug, version: tool.version };
    if (!t.bundleID) { error.textContent = "create a bundle first (Tools → New bundle): built-in bundles take no new tools"; return; }
    $("#recipe-save").disabled = true;
    const reply = await Console.api("PUT", Console.toolPath(t), tool);
    $("#recipe-save").disabled = false;
    if (!reply.ok) {
      error.textContent = Console.errorText(reply);
      markStep(reply.body && reply.body.error);
      return;
    }
    markStep(null);
    const href = "#/tool/" + t.bundleID + "/" + encodeURIComponent(t.slug) + "/" + encodeURIComponent(t.version);
    saved.append(document.createTextNode("Saved " + tool.name + " v" + t.version + " in " + Console.bundleSlug(t.bundleID) + ". "),
      el("a", { href, id: "recipe-open", text: "Open it on the Tools screen" }));
    Console.refreshList(false);
  }
  $("#recipe-save").addEventListener("click", save);

  // ---- a saved recipe, for its next version -------------------------------------------

  // The tool a step calls, as the search API shows it (its argSchema for the forms).
  async function stepTool(name) {
    const reply = await Console.api("GET", "/tools/tools/search?pageSize=5&q=" + encodeURIComponent(name));
    return reply.ok ? reply.body.items.find((t) => (t.name || t.slug) === name) : undefined;
  }

  // The source option and sub-path of a selection `path` ($.args.x…, $.steps.id…).
  function parse(path) {
    const m = /^\$\.(args|steps)\.([A-Za-z0-9_]+)(.*)$/.exec(path);
    if (!m) return null;
    if (m[1] === "args") { const a = args.find((x) => x.name() === m[2]); return a ? { value: "arg:" + a.key, sub: m[3] } : null; }
    const s = steps.find((x) => x.id() === m[2]);
    return s ? { value: "step:" + s.key, sub: m[3] } : null;
  }

  // Loads the recipe `t` (a tool of the REST API) into the builder as its next version.
  // Returns false, changing nothing, for a recipe the builder cannot show: steps with
  // `forEach`, `when` or `after`, selections it cannot point at, a step tool not found.
  async function edit(t) {
    const impl = t.impl || {};
    const plain = (impl.steps || []).every((st) => !st.forEach && !st.when && !(st.after || []).length
      && Object.values(st.from || {}).every((f) => typeof f === "string"));
    if (!plain || !impl.steps || !impl.steps.length) return false;
    const tools = await Promise.all(impl.steps.map((st) => stepTool(st.tool)));
    if (tools.some((x) => !x)) return false;
    show();
    // Cleared, then filled as a person would.
    steps.splice(0).forEach((x) => x.card.remove());
    args.splice(0).forEach((x) => x.row.remove());
    $("#recipe-title").textContent = "New version of " + (t.name || t.slug);
    $("#recipe-name").value = t.name || "";
    $("#recipe-summary").value = t.summary || "";
    $("#recipe-description").value = t.description || "";
    $("#recipe-slug").value = t.slug;
    slugEdited = true;
    $("#recipe-version").value = /^\d+$/.test(t.version) ? String(Number(t.version) + 1) : t.version + "-2";
    const schema = t.argSchema || {};
    const required = new Set(schema.required || []);
    for (const [name, sub] of Object.entries(schema.properties || {})) {
      addArgument();
      const a = args[args.length - 1];
      $("#recipe-arg-" + a.key + "-name").value = name;
      if (TYPES.includes(sub.type)) $("#recipe-arg-" + a.key + "-type").value = sub.type;
      $("#recipe-arg-" + a.key + "-required").checked = required.has(name);
    }
    impl.steps.forEach((st, i) => {
      const s = addStep(tools[i]);
      $("#s" + s.key + "-id").value = st.id;
    });
    update();
    impl.steps.forEach((st, i) => {
      const s = steps[i];
      for (const [name, v] of Object.entries(st.args || {})) { const p = s.params.get(name); if (p) p.field.set(v); }
      for (const [name, path] of Object.entries(st.from || {})) {
        const p = s.params.get(name);
        const at = parse(path);
        if (!p || !at) continue;
        p.mode.value = "from";
        p.mode.dispatchEvent(new Event("change"));
        fillSelect(p.source, sources(i), "— choose —");
        p.source.value = at.value;
        p.path.value = at.sub;
      }
    });
    update();
    const result = $("#recipe-result");
    if (impl.result === "$.steps") result.value = "all";
    else if (typeof impl.result === "string") {
      const at = parse(impl.result);
      if (at) { result.value = at.value; $("#recipe-result-path").value = at.sub; }
    }
    $("#recipe-bundle").value = t.bundleID;
    update();
    return true;
  }

  return { show, addStep, edit };
})();
