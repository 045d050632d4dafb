// "Remember for @agent" on a message: the message's Remember button opens
// a small form under it (the agent, the kind, the text, editable) that
// writes the text as a memory entry of the chosen agent, its source the
// message (POST /api/v1/agents/:id/memory), and says so inline. Plain JS,
// no build step; everything goes in as text.
(() => {
  "use strict";
  const body = document.body;
  if (!body || !body.classList.contains("app") || body.dataset.agentsOn !== "on") return; // no agents, no memory
  const { $, el, api, showError } = window.BP;
  const KINDS = ["fact", "lesson", "preference", "procedure"];

  let agents = null; // active agents, read once per page
  async function loadAgents() {
    if (!agents) agents = ((await api("GET", "/api/v1/agents")).items || []).filter((a) => a.state !== "fired");
    return agents;
  }

  // pick chooses the agent the message most likely concerns: its author
  // when an agent, else the first agent it @mentions, else the first.
  function pick(li, text, list) {
    const author = list.find((a) => a.id === Number(li.dataset.authorId));
    if (author) return author.id;
    const m = list.find((a) => new RegExp("(^|\\W)@" + a.handle + "\\b").test(text));
    return (m || list[0]).id;
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
})();
