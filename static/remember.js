// Memory in the chat. "Remember for @agent" on a message or a thread
// reply: its Remember button opens a small form under it (the agent, the
// kind, the text, editable) that writes the text as a memory entry of the
// chosen agent, its source the message (POST /api/v1/agents/:id/memory),
// and says so inline. And a lesson an agent proposed from your correction
// waits under that agent's reply in the thread, with Save and Edit (POST
// …/memory/:entry/confirm), as it does in the agent's Memory tab. Plain
// JS, no build step; everything goes in as text.
(() => {
  "use strict";
  const body = document.body;
  if (!body || !body.classList.contains("app") || body.dataset.agentsOn !== "on" || body.dataset.memoryOn !== "on") return; // no agents or no memory: nothing to remember
  const { $, $$, el, api, showError } = window.BP;
  const KINDS = ["fact", "lesson", "preference", "procedure"];

  let agents = null; // active agents, read once per page
  async function loadAgents() {
    if (!agents) agents = ((await api("GET", "/api/v1/agents")).items || []).filter((a) => a.state !== "fired");
    return agents;
  }

  let me = null; // the signed-in member's ID, read once
  async function myID() {
    if (me === null) me = (await api("GET", "/api/v1/me")).id;
    return me;
  }

  // pick chooses the agent the message most likely concerns: its author
  // when an agent, else the first agent it @mentions; for a reply in the
  // thread pane, then the thread's agents (the latest one to speak in it,
  // else the first its root mentions); else the first agent.
  function pick(li, text, list) {
    const byAuthor = (node) => list.find((a) => a.id === Number(node.dataset.authorId));
    const byMention = (t) => list.find((a) => new RegExp("(^|\\W)@" + a.handle + "\\b").test(t));
    let found = byAuthor(li) || byMention(text);
    const pane = li.closest('[data-testid="thread-pane"]');
    if (!found && pane) {
      const msgs = $$(".msg", pane).reverse();
      for (const m of msgs) if (!found) found = byAuthor(m);
      const root = $('[data-testid="thread-root"] [data-testid="message-body"]', pane);
      if (!found && root) found = byMention(root.innerText || "");
    }
    return (found || list[0]).id;
  }

  async function open(li) {
    const main = $(".msg-main", li);
    const old = $('[data-testid="remember-box"]', main);
    if (old) { old.remove(); return; } // a second click closes it
    const box = el("div", { class: "remember-box", "data-testid": "remember-box" });
    const err = el("p", { class: "form-error", role: "alert", "data-testid": "remember-error", hidden: "" });
    main.append(box);
    let list;
    try {
      list = await loadAgents();
    } catch (x) {
      box.append(err);
      showError(err, x.message);
      return;
    }
    if (list.length === 0) {
      box.append(el("p", { class: "remember-done" }, "No agents to remember it: hire one first."));
      return;
    }
    const bodyNode = $('[data-testid="message-body"]', li);
    const text = ((bodyNode && bodyNode.innerText) || "").trim();
    const form = el("form", { class: "remember-form", "data-testid": "remember-form" },
      el("label", {}, "Remember for ", el("select", { name: "agent", "data-testid": "remember-agent" },
        list.map((a) => el("option", { value: a.id }, "@" + a.handle)))),
      el("label", {}, "as ", el("select", { name: "kind", "data-testid": "remember-kind" }, KINDS.map((k) => el("option", { value: k }, k)))),
      el("textarea", { name: "text", rows: 3, maxlength: 2000, "aria-label": "What to remember", "data-testid": "remember-text" }),
      el("div", { class: "remember-foot" },
        el("button", { type: "submit", class: "btn btn-primary btn-sm", "data-testid": "remember-save" }, "Remember"),
        el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "remember-cancel" }, "Cancel")),
      err);
    form.elements.text.value = text;
    form.elements.agent.value = String(pick(li, text, list));
    box.append(form);
    form.elements.text.focus();
    $('[data-testid="remember-cancel"]', form).addEventListener("click", () => box.remove());
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const save = $('[data-testid="remember-save"]', form);
      save.disabled = true;
      showError(err, "");
      const agent = list.find((a) => a.id === Number(form.elements.agent.value));
      try {
        const e = await api("POST", "/api/v1/agents/" + agent.id + "/memory", {
          text: form.elements.text.value, kind: form.elements.kind.value,
          source_kind: "message", source_id: Number(li.dataset.id), channel_id: Number(body.dataset.channelId) || undefined,
        });
        box.replaceChildren(el("p", { class: "remember-done", role: "status", "data-testid": "remember-done", "data-entry-id": e.id },
          "Remembered for @" + agent.handle + " as a " + e.kind + (e.merged ? " (merged with a similar entry)" : "") + "."));
      } catch (x) {
        showError(err, x.message);
      } finally {
        save.disabled = false;
      }
    });
  }

  document.addEventListener("click", (ev) => {
    const b = ev.target.closest('[data-testid="message-remember"]');
    if (!b) return;
    const li = b.closest(".msg");
    if (li) open(li);
  });

  // ---------- lessons proposed to you, under the agent's reply ----------

  // proposalBox shows entry e, a lesson agent proposed to the viewer, with
  // Save (as worded) and Edit (then Save); either confirms it.
  function proposalBox(agent, e) {
    const base = "/api/v1/agents/" + agent.id + "/memory/" + e.id;
    const err = el("p", { class: "form-error", role: "alert", hidden: "" });
    const text = el("p", { class: "proposal-text", "data-testid": "proposal-text" }, e.text);
    const box = el("div", { class: "remember-box proposal-box", "data-testid": "memory-proposal", "data-entry-id": e.id },
      el("p", { class: "proposal-head" }, "@" + agent.handle + " proposes a lesson from your correction. Keep it?"), text);
    const done = (saved) => box.replaceChildren(el("p", { class: "remember-done", role: "status", "data-testid": "proposal-saved" },
      "Saved as a lesson of @" + agent.handle + ": " + saved.text));
    const confirm = async (b, withText) => {
      b.disabled = true;
      showError(err, "");
      try { done(await api("POST", base + "/confirm", withText === undefined ? {} : { text: withText })); } catch (x) { showError(err, x.message); b.disabled = false; }
    };
    const save = el("button", { type: "button", class: "btn btn-primary btn-sm", "data-testid": "proposal-save" }, "Save");
    const edit = el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "proposal-edit" }, "Edit");
    const foot = el("div", { class: "remember-foot" }, save, edit);
    save.addEventListener("click", () => confirm(save));
    edit.addEventListener("click", () => {
      const form = el("form", { class: "remember-form", "data-testid": "proposal-form" },
        el("textarea", { name: "text", rows: 2, maxlength: 2000, "aria-label": "The lesson, in your words", "data-testid": "proposal-edit-text" }),
        el("div", { class: "remember-foot" }, el("button", { type: "submit", class: "btn btn-primary btn-sm", "data-testid": "proposal-edit-save" }, "Save")));
      form.elements.text.value = e.text;
      text.replaceWith(form);
      foot.remove();
      form.addEventListener("submit", (ev) => { ev.preventDefault(); confirm($("button", form), form.elements.text.value); });
      form.elements.text.focus();
    });
    box.append(foot, err);
    return box;
  }

  // offer puts, under each agent reply in nodes whose turn proposed a
  // lesson to the viewer and still waits, that proposal: one read of the
  // agent's lessons per agent.
  async function offer(nodes) {
    const byAgent = new Map();
    for (const li of nodes) {
      const why = $('[data-testid="message-why"]', li);
      const turn = why && Number((why.getAttribute("href") || "").split("/").pop());
      if (!turn || $('[data-testid="memory-proposal"]', li)) continue;
      const id = Number(li.dataset.authorId);
      if (!byAgent.has(id)) byAgent.set(id, []);
      byAgent.get(id).push({ li, turn });
    }
    if (byAgent.size === 0) return;
    try {
      const [mine, list] = [await myID(), await loadAgents()];
      for (const [id, msgs] of byAgent) {
        const agent = list.find((a) => a.id === id);
        if (!agent) continue;
        const res = await api("GET", "/api/v1/agents/" + id + "/memory?kind=lesson&limit=200");
        for (const e of res.items || []) {
          if (e.proposed_to !== mine || e.source_kind !== "turn") continue;
          const m = msgs.find((x) => x.turn === e.source_id);
          if (m && !$('[data-testid="memory-proposal"]', m.li)) $(".msg-main", m.li).append(proposalBox(agent, e));
        }
      }
    } catch (x) { /* the Memory tab still offers it */ }
  }

  // The thread pane's agent replies, as app.js draws them (the opened
  // thread at once, then each live reply).
  const pane = $('[data-testid="thread-pane"]');
  if (pane) {
    let pending = [];
    let timer = 0;
    new MutationObserver((records) => {
      for (const r of records) {
        for (const n of r.addedNodes) if (n.nodeType === 1 && n.matches(".msg.msg-agent")) pending.push(n);
      }
      if (pending.length && !timer) {
        timer = setTimeout(() => { const nodes = pending; pending = []; timer = 0; offer(nodes); }, 50);
      }
    }).observe(pane, { childList: true, subtree: true });
  }
})();
