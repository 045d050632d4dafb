// The Memory tab of an agent's card: its entries with kind, source link,
// recall count and pin; a proposed lesson waits with Save and Edit for
// the human it was proposed to; Edit, Pin and Forget (two clicks) on each;
// Teach adds one. Its History (memhistory.js) lists what left no entry:
// consolidations, merges and expiries with their text before and after,
// forgets with only who and when. Everything goes in as text. agents.js
// calls BPMemory.toggle(container, agent) from the card's Memory button.
(() => {
  "use strict";
  const { el, api, showError } = window.BP;
  let me = 0; // the signed-in member's ID, read once (GET /api/v1/me)

  // openMessage shows a message in its thread: the thread it is a reply
  // in, or its own, on its channel's page.
  async function openMessage(id, err) {
    try {
      const m = await api("GET", "/api/v1/messages/" + id);
      const c = await api("GET", "/api/v1/channels/" + m.channel_id);
      location.assign("/c/" + encodeURIComponent(c.name) + "#thread-" + (Number(m.thread_id) || Number(m.id)));
    } catch (x) { showError(err, x.message); }
  }

  function sourceLink(e, err) {
    switch (e.source_kind) {
      case "turn": return el("a", { href: "/turns/" + e.source_id, "data-testid": "memory-source" }, "turn " + e.source_id);
      case "message": {
        const a = el("a", { href: "#", "data-testid": "memory-source" }, "message " + e.source_id);
        a.addEventListener("click", (ev) => { ev.preventDefault(); openMessage(e.source_id, err); });
        return a;
      }
      case "task": return el("a", { href: "/tasks/" + e.source_id, "data-testid": "memory-source" }, "task " + e.source_id);
      case "consolidation": return el("span", { "data-testid": "memory-source" }, "consolidated by @" + (e.author || "?") + " (see History)");
    }
    return el("span", { "data-testid": "memory-source" }, "taught by @" + (e.author || "?"));
  }

  function entryRow(box, agent, e) {
    const base = "/api/v1/agents/" + agent.id + "/memory/" + e.id;
    const err = el("p", { class: "form-error", role: "alert", hidden: true });
    const text = el("span", { class: "mem-text", "data-testid": "memory-text" }, e.text);
    const li = el("li", { class: "mem-item" + (e.proposed_to ? " mem-proposed" : ""), "data-testid": "memory-entry-" + e.id },
      el("span", { class: "badge mem-kind" }, e.kind), " ", text,
      el("div", { class: "mem-meta" }, sourceLink(e, err), " · ",
        el("span", { "data-testid": "memory-recalls" }, e.recall_count + (e.recall_count === 1 ? " recall" : " recalls")),
        e.pinned ? " · pinned" : "", e.proposed_to ? " · proposed, waiting for confirmation" : ""),
      err);
    const btn = (label, testid, fn) => {
      const b = el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": testid + "-" + e.id }, label);
      b.addEventListener("click", async () => {
        b.disabled = true;
        showError(err, "");
        try { await fn(b); } catch (x) { showError(err, x.message); } finally { b.disabled = false; }
      });
      return b;
    };
    const edit = async (confirm) => {
      const form = el("form", { class: "mem-edit" }, el("textarea", { name: "text", maxlength: 2000, rows: 2, "data-testid": "memory-edit-text-" + e.id }),
        el("button", { type: "submit", class: "btn btn-primary btn-sm", "data-testid": "memory-edit-save-" + e.id }, "Save"));
      form.elements.text.value = e.text;
      text.replaceWith(form);
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        try {
          const t = form.elements.text.value;
          await (confirm ? api("POST", base + "/confirm", { text: t }) : api("PATCH", base, { text: t }));
          load(box, agent);
        } catch (x) { showError(err, x.message); }
      });
    };
    const actions = el("div", { class: "agt-actions" });
    if (e.proposed_to && e.proposed_to === me) {
      actions.append(btn("Save", "memory-confirm", async () => { await api("POST", base + "/confirm", {}); load(box, agent); }),
        btn("Edit", "memory-confirm-edit", () => edit(true)));
    } else {
      actions.append(btn("Edit", "memory-edit", () => edit(false)),
        btn(e.pinned ? "Unpin" : "Pin", "memory-pin", async () => { await api("PATCH", base, { pinned: !e.pinned }); load(box, agent); }));
    }
    actions.append(btn("Forget", "memory-forget", async (b) => {
      if (b.dataset.armed !== "1") { b.dataset.armed = "1"; b.textContent = "Forget for good?"; return; }
      await api("DELETE", base);
      load(box, agent);
    }));
    li.append(actions);
    return li;
  }

  async function load(box, agent) {
    const list = box.querySelector(".mem-list");
    const err = box.querySelector(".mem-error");
    showError(err, "");
    try {
      if (!me) me = (await api("GET", "/api/v1/me")).id;
      const res = await api("GET", "/api/v1/agents/" + agent.id + "/memory?limit=200");
      list.replaceChildren(...res.items.map((e) => entryRow(box, agent, e)));
      box.querySelector(".mem-empty").hidden = res.items.length > 0;
    } catch (x) { showError(err, x.message); }
    window.BPMemoryHistory.refresh(box.querySelector(".mem-history"), agent);
  }

  function build(agent) {
    const teach = el("form", { class: "mem-teach", autocomplete: "off", "data-testid": "memory-teach-" + agent.handle },
      el("select", { name: "kind", "aria-label": "Kind" }, ...["fact", "lesson", "preference", "procedure"].map((k) => el("option", { value: k }, k))),
      el("input", { name: "text", maxlength: 2000, placeholder: "Teach @" + agent.handle + " something…", "data-testid": "memory-teach-text-" + agent.handle }),
      el("button", { type: "submit", class: "btn btn-primary btn-sm" }, "Teach"));
    const box = el("div", { class: "mem", "data-testid": "memory-" + agent.handle },
      teach, el("p", { class: "form-error mem-error", role: "alert", hidden: true }),
      el("p", { class: "panel-empty mem-empty", hidden: true }, "Nothing remembered yet."),
      el("ul", { class: "mem-list", "data-testid": "memory-list-" + agent.handle }),
      window.BPMemoryHistory.build(agent));
    teach.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        await api("POST", "/api/v1/agents/" + agent.id + "/memory", { text: teach.elements.text.value, kind: teach.elements.kind.value });
        teach.elements.text.value = "";
        load(box, agent);
      } catch (x) { showError(box.querySelector(".mem-error"), x.message); }
    });
    return box;
  }

  // toggle opens (and loads) or closes the memory of agent under container.
  function toggle(container, agent) {
    let box = container.querySelector(".mem");
    if (box && !box.hidden) { box.hidden = true; return false; }
    if (!box) { box = build(agent); container.append(box); }
    box.hidden = false;
    load(box, agent);
    return true;
  }

  window.BPMemory = Object.freeze({ toggle });
})();
