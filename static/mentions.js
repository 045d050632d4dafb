// @mentions in the composers: typing @ suggests handles (name, agent or
// human, and state: working, idle, muted, fired), and a message naming a
// handle nobody has, or a fired agent, gets a warning before it is sent.
// Plain JS, no build step; names go in as text.
(() => {
  "use strict";

  const body = document.body;
  if (!body || !body.classList.contains("app")) return;
  const { $, $$, el, api } = window.BP;
  const tid = (id) => `[data-testid="${id}"]`;
  const MAX = 8;

  // people maps a handle to {handle, name, kind, muted, fired, working}.
  let people = null;
  let loading = null;
  const working = new Map(); // agent id → turns running

  async function load() {
    if (people) return people;
    if (!loading) {
      loading = (async () => {
        const ms = await api("GET", "/api/v1/members");
        let as = [];
        if (body.dataset.agentsOn === "on") as = (await api("GET", "/api/v1/agents")).items || [];
        const byId = new Map(as.map((a) => [a.id, a]));
        const out = new Map();
        for (const m of ms.items || []) {
          const a = byId.get(m.id);
          if (a && a.status && a.status.state && a.status.state !== "idle") working.set(m.id, 1);
          out.set(m.handle, { id: m.id, handle: m.handle, name: m.display_name || m.handle, kind: m.kind, muted: !!m.muted, fired: !!a && a.state === "fired" });
        }
        people = out;
        return out;
      })().finally(() => { loading = null; });
    }
    return loading;
  }

  function stateOf(p) {
    if (p.fired) return "fired";
    if (p.muted) return "muted";
    if (p.kind !== "agent") return "";
    return working.get(p.id) ? "working" : "idle";
  }

  document.addEventListener("bullpen:event", (e) => {
    const ev = e.detail || {};
    const p = ev.payload || {};
    if (/^(member\.(created|updated)|agent\.(hired|fired|updated))$/.test(ev.type)) people = null;
    if (ev.type === "agent.turn_started") working.set(Number(p.agent_id), 1);
    if (/^agent\.turn_(finished|failed|abandoned)$/.test(ev.type)) working.delete(Number(p.agent_id));
  });

  // mentionsIn returns the @handles of a body outside code, as the server
  // reads them (bullpen.ParseMentions), near enough for a warning.
  function mentionsIn(text) {
    const plain = text.replace(/```[\s\S]*?(```|$)/g, " ").replace(/`[^`\n]*`/g, " ");
    const out = new Set();
    for (const m of plain.matchAll(/(^|[^A-Za-z0-9_.@])@([A-Za-z][A-Za-z0-9_-]{1,31})(?![A-Za-z0-9_@-])/g)) {
      out.add(m[2].toLowerCase().replace(/[-_]+$/, ""));
    }
    out.delete("all");
    out.delete("here");
    return [...out];
  }

  function wire(form, input) {
    if (!form || !input) return;
    const box = $(".composer-box", form) || form;
    const menu = el("ul", { class: "mention-menu", role: "listbox", "data-testid": "mention-menu", hidden: "" });
    box.append(menu);
    const warn = el("div", { class: "mention-warning", role: "alert", "data-testid": "mention-warning", hidden: "" });
    form.insertBefore(warn, box.nextSibling);
    let active = 0;
    let range = null; // [start, end] of the "@query" being completed

    const close = () => { menu.hidden = true; menu.replaceChildren(); range = null; };
    const items = () => $$(tid("mention-option"), menu);
    const highlight = (i) => {
      const all = items();
      if (!all.length) return;
      active = (i + all.length) % all.length;
      all.forEach((o, j) => o.setAttribute("aria-selected", String(j === active)));
    };

    let asked = 0; // the newest suggest call: an older one that was waiting for the list must not draw
    async function suggest() {
      const seq = ++asked;
      const upto = input.value.slice(0, input.selectionStart);
      const m = /(^|[^A-Za-z0-9_.@])@([A-Za-z0-9_-]{0,32})$/.exec(upto);
      if (!m) return close();
      const q = m[2].toLowerCase();
      let all;
      try { all = await load(); } catch (e) { return close(); }
      if (seq !== asked) return;
      const hits = [...all.values()]
        .filter((p) => p.handle.startsWith(q) || p.name.toLowerCase().includes(q))
        .sort((a, b) => (a.fired - b.fired) || (b.handle.startsWith(q) - a.handle.startsWith(q)) || a.handle.localeCompare(b.handle))
        .slice(0, MAX);
      if (!hits.length) return close();
      range = [upto.length - q.length - 1, upto.length];
      menu.replaceChildren(...hits.map((p) => el("li", {
        role: "option", class: "mention-option" + (p.fired ? " mention-fired" : ""), "data-testid": "mention-option", "data-handle": p.handle,
      }, el("span", { class: "mention-name" }, p.name), el("span", { class: "mention-handle" }, "@" + p.handle),
      el("span", { class: "badge badge-" + (p.kind === "agent" ? "agent" : "human") }, p.kind),
      stateOf(p) ? el("span", { class: "mention-state mention-state-" + stateOf(p), "data-testid": "mention-state" }, stateOf(p)) : null)));
      menu.hidden = false;
      highlight(0);
    }

    function choose(option) {
      if (!option || !range) return;
      const text = "@" + option.dataset.handle + " ";
      const v = input.value;
      input.value = v.slice(0, range[0]) + text + v.slice(range[1]).replace(/^ /, "");
      const caret = range[0] + text.length;
      input.setSelectionRange(caret, caret);
      close();
      input.focus();
      input.dispatchEvent(new Event("input"));
    }

    // The warning stays until the text really changes (a stray line break
    // from the Enter that was refused does not count).
    input.addEventListener("input", () => {
      suggest();
      if (input.value.trim() !== (warn.dataset.text || "")) warn.hidden = true;
    });
    input.addEventListener("blur", () => setTimeout(close, 150));
    menu.addEventListener("mousedown", (e) => { e.preventDefault(); choose(e.target.closest(tid("mention-option"))); });
    // Capture, so the menu's keys come before the composer's Enter-to-send.
    form.addEventListener("keydown", (e) => {
      if (menu.hidden || e.target !== input) return;
      const step = { ArrowDown: 1, ArrowUp: -1 }[e.key];
      if (step) { e.preventDefault(); highlight(active + step); return; }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        e.stopImmediatePropagation();
        swallow = e.key === "Enter";
        choose(items()[active]);
      } else if (e.key === "Escape") {
        e.preventDefault();
        e.stopImmediatePropagation();
        close();
      }
    }, true);
    // Some input paths (automation, some IMEs) still deliver the Enter
    // that picked a handle as a keypress: it must not add a line.
    let swallow = false;
    form.addEventListener("keypress", (e) => {
      if (swallow && e.key === "Enter") { e.preventDefault(); e.stopImmediatePropagation(); }
      swallow = false;
    }, true);
    form.addEventListener("keyup", () => { swallow = false; }, true);

    // Before sending: a handle nobody has, or a fired agent, is named in a
    // warning; sending the same text again goes through.
    document.addEventListener("submit", async (e) => {
      if (e.target !== form) return;
      const text = input.value.trim();
      if (form.dataset.mentionOk === text) return;
      const named = mentionsIn(text);
      if (!named.length || !people) {
        if (named.length && !people) {
          // First post before the menu was ever opened: look, then resend.
          e.preventDefault();
          e.stopImmediatePropagation();
          try { await load(); } catch (err) { form.dataset.mentionOk = text; }
          form.requestSubmit();
        }
        return;
      }
      const unknown = named.filter((h) => !people.has(h));
      const fired = named.filter((h) => people.has(h) && people.get(h).fired);
      if (!unknown.length && !fired.length) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      const parts = [];
      if (unknown.length) parts.push("No member is called " + unknown.map((h) => "@" + h).join(", ") + ": nobody will be woken by it.");
      if (fired.length) parts.push(fired.map((h) => "@" + h).join(", ") + (fired.length > 1 ? " were" : " was") + " fired and will not answer.");
      const again = el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "mention-send-anyway" }, "Send anyway");
      again.addEventListener("click", () => { form.dataset.mentionOk = text; warn.hidden = true; form.requestSubmit(); });
      warn.replaceChildren(el("span", {}, parts.join(" ")), " ", again);
      warn.dataset.text = text;
      warn.hidden = false;
    }, true);
  }

  wire($(tid("composer")), $(tid("composer-input")));
  wire($(tid("thread-composer")), $(tid("thread-input")));
})();
