// Bullpen Activity timeline: the stored event log as lines, newest first.
// The server renders the first page (web/views/timeline.templ); this adds
// older pages, live entries and the filters. Lines and links come from the
// server (GET /api/v1/events), so live entries read the same as the first
// page; a burst of websocket events costs one request, not one per event.
(() => {
  "use strict";

  const BP = window.BP;
  const root = BP && BP.$('[data-testid="timeline"]');

  // lineNodes splits a line at backticks into text and <code>, as
  // lineParts in web/views/timeline.go does. Text only, never markup.
  function lineNodes(text) {
    return String(text || "").split("`").map((p, i) => (i % 2 ? BP.el("code", null, p) : p)).filter((p) => p !== "");
  }
  window.BPTimeline = Object.freeze({ lineNodes });
  if (!root) return;

  const { el, $, api, showError } = BP;
  const tid = (id) => $(`[data-testid="${id}"]`, root);
  const list = tid("timeline-list");
  const older = tid("timeline-older");
  const form = tid("timeline-filters");
  const MAX_SEQ = Number.MAX_SAFE_INTEGER;

  const state = {
    after: Number(root.dataset.after) || 0, // newest seq the list is current to
    nextBefore: Number(root.dataset.nextBefore) || 0,
    seen: 0, // newest seq the websocket announced
    timer: 0,
    busy: false,
    gen: 0, // bumps when the filters change, so stale answers are dropped
  };

  function renderEntry(it) {
    const line = lineNodes(it.line);
    const body = it.link
      ? el("a", { class: "tl-line", href: it.link, "data-testid": "timeline-link" }, line)
      : el("span", { class: "tl-line" }, line);
    const t = el("time", { class: "tl-time", datetime: it.at || "" });
    const d = new Date(it.at);
    if (!isNaN(d)) {
      t.textContent = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      t.title = d.toLocaleString();
    }
    return el("li", { class: "tl-entry", "data-testid": "timeline-entry", "data-seq": Number(it.seq),
      "data-kind": it.type || "", "data-actor": it.actor || "" }, body, t);
  }

  function filters() {
    const q = new URLSearchParams();
    for (const name of ["agent", "channel", "kind"]) {
      const v = form.elements[name].value;
      if (v) q.set(name, v);
    }
    return q;
  }

  async function fetchPage(extra) {
    const q = filters();
    for (const [k, v] of Object.entries(extra)) q.set(k, String(v));
    return api("GET", "/api/v1/events?" + q.toString());
  }

  function settle() {
    tid("timeline-empty").hidden = list.children.length > 0;
    older.hidden = !state.nextBefore;
  }

  async function loadOlder() {
    if (!state.nextBefore || older.disabled) return;
    older.disabled = true;
    const gen = state.gen;
    try {
      const page = await fetchPage({ before: state.nextBefore, limit: 50 });
      if (gen !== state.gen) return;
      for (const it of page.items) list.append(renderEntry(it));
      state.nextBefore = page.next_before || 0;
      showError(tid("timeline-error"), "");
    } catch (e) {
      showError(tid("timeline-error"), "Could not load older entries: " + e.message);
    } finally {
      older.disabled = false;
      settle();
    }
  }

  // refresh adds the entries after the newest shown, newest on top.
  async function refresh() {
    if (state.busy) { state.timer = setTimeout(refresh, 200); return; }
    state.busy = true;
    const gen = state.gen;
    const upto = state.seen;
    try {
      for (;;) {
        const page = await fetchPage({ after: state.after, limit: 200 });
        if (gen !== state.gen) return;
        for (const it of page.items) {
          if (!list.querySelector(`[data-seq="${Number(it.seq)}"]`)) list.prepend(renderEntry(it));
          state.after = Math.max(state.after, Number(it.seq));
        }
        if (page.items.length < 200) break;
      }
      state.after = Math.max(state.after, upto); // filtered-out events need no second look
      showError(tid("timeline-error"), "");
    } catch (e) {
      showError(tid("timeline-error"), "Could not load new entries: " + e.message);
    } finally {
      state.busy = false;
      settle();
    }
  }

  // reload shows the newest page for new filters and puts them in the URL.
  async function reload() {
    state.gen++;
    const gen = state.gen;
    const q = filters().toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + location.hash);
    try {
      const page = await fetchPage({ before: MAX_SEQ, limit: 50 });
      if (gen !== state.gen) return;
      list.replaceChildren(...page.items.map(renderEntry));
      state.nextBefore = page.next_before || 0;
      if (page.items.length) state.after = Math.max(state.after, Number(page.items[0].seq));
      showError(tid("timeline-error"), "");
    } catch (e) {
      showError(tid("timeline-error"), e.message);
    } finally {
      settle();
    }
  }

  // open follows an entry's link: a thread of this channel opens in place,
  // panel targets (#wiki…, #sandbox…) by their hash; others navigate.
  function open(e) {
    const a = e.target.closest('a[data-testid="timeline-link"]');
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    const href = a.getAttribute("href");
    if (href.startsWith("#sandbox/")) {
      const tab = document.querySelector('[data-panel-tab="sandboxes"]');
      if (tab) tab.click();
      return; // the hash is the sandbox panel's to read
    }
    const m = /^(\/c\/[^#?]+)(#thread-\d+)?$/.exec(href);
    if (m && m[1] === location.pathname && m[2]) {
      e.preventDefault();
      if (location.hash === m[2]) window.dispatchEvent(new HashChangeEvent("hashchange"));
      else location.hash = m[2];
    }
  }

  document.addEventListener("bullpen:event", (e) => {
    const seq = Number(e.detail && e.detail.seq) || 0;
    if (!seq) return; // ephemeral: never in the log
    state.seen = Math.max(state.seen, seq);
    clearTimeout(state.timer);
    state.timer = setTimeout(refresh, 150);
  });
  older.addEventListener("click", loadOlder);
  form.addEventListener("change", reload);
  form.addEventListener("submit", (e) => { e.preventDefault(); reload(); });
  root.addEventListener("click", open);
  settle();
})();
