// Bullpen's shared browser module: one place for same-origin requests,
// the CSRF token, API errors and DOM building. Every panel script uses
// window.BP instead of keeping its own copy. Plain JS, no build step.
(() => {
  "use strict";

  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  // el builds an element; children that are strings become text nodes, so
  // user text never becomes markup.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
    }
    e.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
    return e;
  }

  // apiError turns a failed response into an Error carrying the server's
  // message, status, code, the field at fault (when the server names one)
  // and whole decoded body (a wiki conflict sends the current page along
  // with the error).
  async function apiError(res) {
    let msg = `Request failed (${res.status}${res.statusText ? " " + res.statusText : ""})`;
    let code, field;
    let body = null;
    try {
      const j = JSON.parse(await res.text());
      body = j;
      if (j && j.error) {
        if (j.error.message) msg = j.error.message;
        code = j.error.code;
        field = j.error.field;
      }
    } catch (e) { /* not JSON */ }
    const err = new Error(msg);
    err.status = res.status;
    err.code = code;
    err.field = field || "";
    err.body = body;
    return err;
  }

  // request sends a same-origin request with the CSRF token and returns
  // the raw Response; a network failure or non-2xx status throws.
  async function request(method, path, opts = {}) {
    const o = { method, credentials: "same-origin", headers: Object.assign({ Accept: "application/json" }, opts.headers || {}) };
    if (method !== "GET" && method !== "HEAD") o.headers["X-CSRF-Token"] = csrf;
    if (opts.raw !== undefined) {
      o.headers["Content-Type"] = o.headers["Content-Type"] || "application/octet-stream";
      o.body = opts.raw;
    } else if (opts.json !== undefined) {
      o.headers["Content-Type"] = "application/json";
      o.body = JSON.stringify(opts.json);
    }
    if (opts.signal) o.signal = opts.signal;
    let res;
    try {
      res = await fetch(path, o);
    } catch (e) {
      if (e && e.name === "AbortError") throw e;
      throw new Error("Could not reach the server. Check your connection and try again.");
    }
    if (!res.ok) throw await apiError(res);
    return res;
  }

  // api sends JSON (data, when given) and returns the decoded answer
  // (null for 204, the text when it is not JSON).
  async function api(method, path, data) {
    const res = await request(method, path, data === undefined ? {} : { json: data });
    if (res.status === 204) return null;
    const text = await res.text();
    try { return text ? JSON.parse(text) : null; } catch (e) { return text; }
  }

  // showError shows msg in node, or hides node when msg is empty.
  function showError(node, msg) {
    if (!node) return;
    node.textContent = msg || "";
    node.hidden = !msg;
  }

  // eventKind returns what the server declares of an event kind (its
  // label, its timeline filter group, whether it is ephemeral), read
  // from the catalogue the dashboard page carries (meta bp-event-kinds);
  // undefined for a kind the page does not know. Scripts label events
  // with it rather than spelling kinds' labels themselves.
  let kinds = null;
  function eventKind(type) {
    if (!kinds) {
      kinds = new Map();
      const node = document.querySelector('meta[name="bp-event-kinds"]');
      try {
        for (const k of (node && JSON.parse(node.content)) || []) kinds.set(k.name, k);
      } catch (e) { /* no catalogue: events go unlabelled */ }
    }
    return kinds.get(type);
  }

  window.BP = Object.freeze({ csrf, el, api, request, apiError, showError, eventKind,
    $: (sel, root = document) => root.querySelector(sel),
    $$: (sel, root = document) => Array.from(root.querySelectorAll(sel)) });
})();
