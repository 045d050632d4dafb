// The History section of an agent's Memory tab (memory.js): what changed
// its memory and left no entry behind, newest first, from
// GET /api/v1/agents/:id/memory/history. A consolidation over the cap
// shows the entries it folded (before) and the ones the model wrote in
// their place (after), as one item; a merge or an expiry its text before
// and after; a forget only who forgot the entry and when (the server
// keeps no more). The text of an entry learned in a DM never reaches the
// history: the server sends a note in its place. Everything goes in as
// text. Loaded when the section is first opened, and again after each
// change made in the tab while it is open.
(() => {
  "use strict";
  const { el, api, showError } = window.BP;
  const LIMIT = 100;

  function when(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return "";
    return d.toLocaleString([], { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  }

  // group folds the rows of one consolidation (one transaction: the same
  // time and the same new entries) into one item.
  function group(rows) {
    const out = [];
    for (const h of rows) {
      const last = out[out.length - 1];
      if (h.action === "consolidated" && last && last.action === "consolidated" &&
          last.created_at === h.created_at && last.after === h.after) {
        last.befores.push(h.before || "");
        continue;
      }
      out.push(Object.assign({}, h, { befores: [h.before || ""] }));
    }
    return out;
  }

  // afterLines splits a consolidation's "after" ("#12: text" a line).
  const afterLines = (after) => (after || "").split("\n").filter((l) => l.trim() !== "");

  const entries = (n) => (n === 1 ? "1 entry" : n + " entries");

  function headline(g) {
    switch (g.action) {
      case "consolidated": return "folded " + entries(g.befores.length) + " into " + entries(afterLines(g.after).length);
      case "merged": return "entry #" + g.entry_id + " merged with a new near-duplicate";
      case "expired": return "entry #" + g.entry_id + " " + (g.after || "expired"); // "expired: over the cap of N entries"
      case "forgot": return "entry #" + g.entry_id + " forgotten";
    }
    return "entry #" + g.entry_id + " " + g.action;
  }

  function side(label, cls, texts) {
    return el("div", { class: "mem-hist-side " + cls },
      el("span", { class: "mem-hist-label" }, label),
      el("ul", {}, texts.map((t) => el("li", {}, t))));
  }

  function item(g) {
    const li = el("li", { class: "mem-hist", "data-testid": "memory-history-item", "data-action": g.action },
      el("div", { class: "mem-hist-head" },
        el("span", { class: "badge mem-hist-action mem-hist-" + g.action }, g.action), " ",
        el("span", { class: "mem-hist-what" }, headline(g)),
        el("div", { class: "mem-meta", "data-testid": "memory-history-who" },
          "by @" + (g.actor || "?") + " · ", el("time", { datetime: g.created_at, title: g.created_at }, when(g.created_at)))));
    switch (true) {
      case g.action === "forgot": // who and when: nothing of the text is kept
        break;
      case g.action === "expired":
        li.append(el("div", { class: "mem-hist-diff" }, side("its text", "mem-hist-before", g.befores)));
        break;
      case g.action !== "consolidated" && g.before === g.after: // a DM's entry (its text kept out), or the same words again
        li.append(el("div", { class: "mem-hist-diff" }, side("text, unchanged", "mem-hist-before", g.befores)));
        break;
      default:
        li.append(el("div", { class: "mem-hist-diff" }, side("before", "mem-hist-before", g.befores),
          side("after", "mem-hist-after", g.action === "consolidated" ? afterLines(g.after) : [g.after || ""])));
    }
    return li;
  }

  async function load(box, agent) {
    const list = box.querySelector(".mem-hist-list");
    const err = box.querySelector(".form-error");
    showError(err, "");
    try {
      const res = await api("GET", "/api/v1/agents/" + agent.id + "/memory/history?limit=" + LIMIT);
      const groups = group(res.items || []);
      list.replaceChildren(...groups.map(item));
      box.querySelector(".mem-hist-empty").hidden = groups.length > 0;
      const more = (res.items || []).length >= LIMIT ? "+" : "";
      box.querySelector(".mem-hist-count").textContent = groups.length ? " (" + groups.length + more + ")" : "";
      box.dataset.loaded = "1";
    } catch (x) { showError(err, x.message); }
  }

  // build returns the section for agent, closed; opening it loads it.
  function build(agent) {
    const box = el("details", { class: "mem-history", "data-testid": "memory-history-" + agent.handle },
      el("summary", { "data-testid": "memory-history-open-" + agent.handle }, "History", el("span", { class: "mem-hist-count" })),
      el("p", { class: "mem-hist-lede" }, "Consolidations, merges and expiries keep the text before and after; a forget keeps only who and when."),
      el("p", { class: "form-error", role: "alert", hidden: true }),
      el("p", { class: "panel-empty mem-hist-empty", hidden: true }, "No changes yet."),
      el("ol", { class: "mem-hist-list", "data-testid": "memory-history-list-" + agent.handle }));
    box.addEventListener("toggle", () => { if (box.open) load(box, agent); });
    return box;
  }

  // refresh reloads an open section (after a change made in the tab).
  function refresh(box, agent) {
    if (box && box.open) load(box, agent);
  }

  window.BPMemoryHistory = Object.freeze({ build, refresh });
})();
