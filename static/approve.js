// Approvals where they are asked: the agent's message that asks for
// approval #N gets Approve and Deny buttons, in the channel and in its
// thread, live for everyone who sees it; the Agents tab carries a badge
// with the count waiting; and a new request raises a browser notification
// while the tab is in the background, once the user allowed it.
// Plain JS, no build step; everything goes in as text.
(() => {
  "use strict";

  const body = document.body;
  if (!body || !body.classList.contains("app") || body.dataset.agentsOn !== "on") return; // no agents, nothing asks
  const { $, $$, el, api } = window.BP;
  const tid = (id) => `[data-testid="${id}"]`;
  const ASK = /\bapproval #(\d+)\b/;

  const known = new Map(); // approval id → approval (pending and the last answered)
  let ready = false;

  async function load() {
    try {
      const data = await api("GET", "/api/v1/approvals");
      known.clear();
      for (const a of data.items || []) known.set(Number(a.id), a);
      ready = true;
    } catch (e) {
      return; // agents are off: nothing to answer
    }
    decorateAll();
    badge();
  }

  // decorate adds (or refreshes) the answer box of one message, when it
  // is the agent's own request for an approval this page knows.
  // A reply preview under a root message (chatlive.js) counts too: the
  // request is often a reply in the thread of the message that woke it.
  function decorate(li) {
    const preview = li.classList.contains("msg-preview");
    const b = $(tid(preview ? "reply-preview-body" : "message-body"), li);
    const m = b && ASK.exec(b.textContent || "");
    const a = m && known.get(Number(m[1]));
    let box = b && b.nextElementSibling && b.nextElementSibling.classList.contains("msg-approval") ? b.nextElementSibling : null;
    if (!a || !byAgent(li, preview, a)) {
      if (box) box.remove();
      return;
    }
    if (!box) {
      box = el("div", { class: "msg-approval", "data-testid": "message-approval" });
      b.after(box);
    }
    box.dataset.approvalId = String(a.id);
    box.dataset.state = a.state;
    if (a.state === "pending") {
      const err = el("span", { class: "form-error", role: "alert", "data-testid": "message-approval-error", hidden: "" });
      box.replaceChildren(
        el("button", { type: "button", class: "btn btn-primary btn-sm", "data-testid": "approval-approve", "data-decision": "approve" }, "Approve"),
        el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "approval-deny", "data-decision": "deny" }, "Deny"),
        el("span", { class: "msg-approval-what" }, "approval #" + a.id + ": " + a.tool), err);
    } else {
      box.replaceChildren(el("span", { class: "badge badge-" + (a.state === "approved" ? "agent" : "muted"), "data-testid": "message-approval-state" },
        a.state === "approved" ? "Approved" : "Denied"), el("span", { class: "msg-approval-what" }, " approval #" + a.id + " (" + a.tool + ")"));
    }
  }

  // byAgent tells whether the message is the asking agent's own.
  function byAgent(li, preview, a) {
    if (!preview) return Number(li.dataset.authorId) === Number(a.agent_id);
    const row = $(`[data-testid="member"][data-member-id="${Number(a.agent_id)}"]`);
    const h = $(tid("reply-preview-handle"), li);
    return !!row && !!h && h.textContent === "@" + row.dataset.handle;
  }

  function decorateAll() {
    if (!ready) return;
    for (const li of $$(".msg, .msg-preview")) decorate(li);
  }

  function badge() {
    const n = [...known.values()].filter((a) => a.state === "pending").length;
    const tab = $(tid("panel-tab-agents"));
    if (tab) {
      let b = $(tid("approvals-badge"), tab);
      if (!b) { b = el("span", { class: "tab-count", "data-testid": "approvals-badge", title: "Approvals waiting" }); tab.append(" ", b); }
      b.textContent = String(n);
      b.hidden = n === 0;
    }
    const phone = $(tid("phone-approvals")); // the phone's Agents button
    if (phone) {
      phone.textContent = String(n);
      phone.hidden = n === 0;
    }
    document.title = document.title.replace(/^\(\d+\) /, "");
    if (n) document.title = `(${n}) ` + document.title;
  }

  document.addEventListener("click", async (e) => {
    const btn = e.target.closest(".msg-approval [data-decision]");
    if (!btn) return;
    const box = btn.closest(".msg-approval");
    const id = Number(box.dataset.approvalId);
    const err = $(tid("message-approval-error"), box);
    for (const b of $$("button", box)) b.disabled = true;
    try {
      const a = await api("POST", "/api/v1/approvals/" + id, { decision: btn.dataset.decision });
      known.set(id, a);
      decorateAll();
      badge();
    } catch (ex) {
      if (err) { err.textContent = ex.message; err.hidden = false; }
      for (const b of $$("button", box)) b.disabled = false;
    }
  });

  function notify(a) {
    if (!document.hidden || typeof Notification === "undefined" || Notification.permission !== "granted") return;
    try {
      const n = new Notification(`@${a.handle} asks for approval #${a.id}`, { body: `${a.tool}: ${a.reason || ""}`.slice(0, 200), tag: "bullpen-approval-" + a.id });
      n.onclick = () => { window.focus(); n.close(); };
    } catch (e) { /* some browsers allow notifications from a service worker only */ }
  }

  // The "notify me" button asks for the permission once, on a click.
  const ask = $(tid("approvals-notify"));
  if (ask && typeof Notification !== "undefined") {
    const show = () => { ask.hidden = Notification.permission !== "default"; };
    ask.addEventListener("click", async () => { try { await Notification.requestPermission(); } catch (e) { /* refused */ } show(); });
    show();
  }

  document.addEventListener("bullpen:event", (e) => {
    const ev = e.detail || {};
    if (ev.type !== "approval.requested" && ev.type !== "approval.answered") return;
    const a = ev.payload || {};
    known.set(Number(a.id), a);
    if (ev.type === "approval.requested") notify(a);
    decorateAll();
    badge();
  });

  // Messages arrive live, and threads open: decorate what is added.
  const watch = new MutationObserver((records) => {
    if (!ready) return;
    for (const r of records) {
      for (const n of r.addedNodes) {
        if (n.nodeType !== 1) continue;
        if (n.matches(".msg, .msg-preview")) decorate(n);
        for (const li of $$(".msg, .msg-preview", n)) decorate(li);
      }
    }
  });
  for (const id of ["message-list", "thread-root", "thread-replies"]) {
    const list = $(tid(id));
    if (list) watch.observe(list, { childList: true, subtree: true });
  }
  load();
})();
