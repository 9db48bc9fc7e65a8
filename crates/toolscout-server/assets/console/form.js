// A form generated from a JSON Schema (a tool's argSchema): types, enums, defaults,
// required marks, nested objects and arrays; anything else is a JSON text box.
// `SchemaForm.build(schema, prefix)` returns {element, value(), set(value)}; value()
// throws an Error whose message names the field when a JSON box does not parse.
// `SchemaForm.field(schema, name, required, id)` is one parameter's widget, alike.
"use strict";

const SchemaForm = (() => {
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c) e.append(c);
    return e;
  }

  const safe = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, "_");

  function typeOf(schema) {
    let t = schema.type;
    if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
    if (!t && schema.properties) t = "object";
    if (!t && schema.items) t = "array";
    return t;
  }

  function labelFor(id, name, required) {
    const label = el("label", { for: id, text: name });
    if (required) label.append(el("abbr", { class: "req", title: "required", text: "*" }));
    return label;
  }

  function describe(schema, id) {
    const bits = [];
    if (schema.description) bits.push(schema.description);
    if (schema.format) bits.push("format: " + schema.format);
    if (schema.default !== undefined) bits.push("default: " + JSON.stringify(schema.default));
    return bits.length ? el("p", { class: "desc", id: id + "-desc", text: bits.join(" · ") }) : null;
  }

  // One field: returns {element, value(), set(v)}; value() is undefined when empty.
  function field(schema, name, required, id) {
    schema = schema || {};
    const type = typeOf(schema);
    const wrap = el("div", { class: "field" });
    const desc = describe(schema, id);
    if (Array.isArray(schema.enum)) {
      const select = el("select", { id, name, required, "aria-describedby": desc && id + "-desc" });
      if (!required || schema.default === undefined) select.append(el("option", { value: "", text: "—" }));
      schema.enum.forEach((v, i) => select.append(el("option", { value: String(i), text: typeof v === "string" ? v : JSON.stringify(v) })));
      const set = (v) => {
        const i = schema.enum.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
        select.value = i >= 0 ? String(i) : "";
      };
      if (schema.default !== undefined) set(schema.default);
      wrap.append(labelFor(id, name, required), desc || "", select);
      return { element: wrap, value: () => (select.value === "" ? undefined : schema.enum[Number(select.value)]), set };
    }
    if (type === "object" && schema.properties) {
      const fs = el("fieldset", { id });
      fs.append(el("legend", { text: name }));
      if (required) fs.firstChild.append(el("abbr", { class: "req", title: "required", text: "*" }));
      if (desc) fs.append(desc);
      const inner = object(schema, id);
      fs.append(inner.element);
      wrap.append(fs);
      return {
        element: wrap,
        value: () => {
          const v = inner.value();
          return !required && Object.keys(v).length === 0 ? undefined : v;
        },
        set: inner.set,
      };
    }
    if (type === "array" && schema.items && typeOf(schema.items) !== "array") {
      const list = el("div", { class: "items", id });
      const items = [];
      const add = (v) => {
        const n = items.length;
        const f = field(schema.items, name + "[" + n + "]", false, id + "-" + n);
        const row = el("div", { class: "row" }, f.element);
        const remove = el("button", { type: "button", class: "danger", text: "Remove", "aria-label": "Remove item " + (n + 1) + " of " + name });
        remove.addEventListener("click", () => {
          items.splice(items.indexOf(entry), 1);
          row.remove();
        });
        const entry = { f, row };
        row.append(remove);
        items.push(entry);
        list.append(row);
        if (v !== undefined) f.set(v);
      };
      const addButton = el("button", { type: "button", id: id + "-add", text: "Add " + name + " item" });
      addButton.addEventListener("click", () => add());
      const label = el("div", { class: "label", text: name });
      if (required) label.append(el("abbr", { class: "req", title: "required", text: "*" }));
      wrap.append(label, desc || "", list, addButton);
      const set = (v) => {
        items.splice(0).forEach((e) => e.row.remove());
        (Array.isArray(v) ? v : []).forEach((x) => add(x));
      };
      if (Array.isArray(schema.default)) set(schema.default);
      return {
        element: wrap,
        value: () => {
          const v = items.map((e) => e.f.value()).filter((x) => x !== undefined);
          return v.length === 0 && !required ? undefined : v;
        },
        set,
      };
    }
    if (type === "boolean") {
      const select = el("select", { id, name, required, "aria-describedby": desc && id + "-desc" });
      for (const [value, text] of [["", "—"], ["true", "true"], ["false", "false"]]) select.append(el("option", { value, text }));
      const set = (v) => { select.value = v === true ? "true" : v === false ? "false" : ""; };
      if (schema.default !== undefined) set(schema.default);
      wrap.append(labelFor(id, name, required), desc || "", select);
      return { element: wrap, value: () => (select.value === "" ? undefined : select.value === "true"), set };
    }
    if (type === "integer" || type === "number") {
      const input = el("input", {
        id, name, type: "number", required, step: type === "integer" ? "1" : "any",
        min: schema.minimum, max: schema.maximum, "aria-describedby": desc && id + "-desc",
      });
      const set = (v) => { input.value = v === undefined || v === null ? "" : String(v); };
      if (schema.default !== undefined) set(schema.default);
      wrap.append(labelFor(id, name, required), desc || "", input);
      return { element: wrap, value: () => (input.value === "" ? undefined : Number(input.value)), set };
    }
    if (type === "string") {
      const placeholder = schema.format === "date-time" ? "2025-03-14T15:00:00Z" : schema.examples && schema.examples[0];
      const long = (schema.maxLength || 0) > 200 || /content|text|body|code|query/.test(name);
      const input = long
        ? el("textarea", { id, name, rows: 3, required, placeholder, "aria-describedby": desc && id + "-desc" })
        : el("input", { id, name, type: "text", required, placeholder, "aria-describedby": desc && id + "-desc" });
      const set = (v) => { input.value = v === undefined || v === null ? "" : String(v); };
      if (schema.default !== undefined) set(schema.default);
      wrap.append(labelFor(id, name, required), desc || "", input);
      return { element: wrap, value: () => (input.value === "" ? undefined : input.value), set };
    }
    // Any other shape: raw JSON for this field.
    const box = el("textarea", { id, name, rows: 2, placeholder: "JSON", "aria-describedby": desc && id + "-desc" });
    const set = (v) => { box.value = v === undefined ? "" : JSON.stringify(v); };
    if (schema.default !== undefined) set(schema.default);
    wrap.append(labelFor(id, name + " (JSON)", required), desc || "", box);
    return {
      element: wrap,
      value: () => {
        if (box.value.trim() === "") return undefined;
        try { return JSON.parse(box.value); } catch (e) { throw new Error(name + ": not JSON (" + e.message + ")"); }
      },
      set,
    };
  }

  function object(schema, prefix) {
    const element = el("div", { class: "object" });
    const required = new Set(schema.required || []);
    const fields = {};
    for (const [name, sub] of Object.entries(schema.properties || {})) {
      const f = field(sub, name, required.has(name), prefix + "-" + safe(name));
      fields[name] = f;
      element.append(f.element);
    }
    if (Object.keys(fields).length === 0) element.append(el("p", { class: "hint", text: "This tool takes no arguments." }));
    return {
      element,
      value: () => {
        const out = {};
        for (const [name, f] of Object.entries(fields)) {
          const v = f.value();
          if (v !== undefined) out[name] = v;
        }
        return out;
      },
      set: (v) => {
        for (const [name, f] of Object.entries(fields)) f.set(v && typeof v === "object" ? v[name] : undefined);
      },
    };
  }

  return { build: (schema, prefix) => object(schema || {}, prefix), field, el, safe };
})();
