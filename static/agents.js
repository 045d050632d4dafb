// Bullpen agents panel: hire an agent from a role, each agent's live
// status (idle, thinking, running tool X) with Edit and Fire, the
// approvals waiting for a human (approve / deny), and a feed of turns,
// tool calls and limits, for all agents or the one picked.
// Plain JS; it reads /api/v1/roles, /api/v1/agents and /api/v1/approvals
// and listens to the event feed. Nothing from the server is set as HTML.
(() => {
  "use strict";

  const root = document.querySelector("[data-agents]");
  if (!root) return;
  const tid = (id) => root.querySelector(`[data-testid="${id}"]`);
  const { el, api, showError } = window.BP;
  const MAX_FEED = 200;
  const panel = root.closest("[data-panel]") || root;
  const state = { agents: new Map(), filter: 0, ws: null, attempt: 0, visible: false, timer: 0 };

  function statusText(a) {
    if (a.state === "fired") return "fired";
    const s = a.status || { state: "idle" };
    if (s.state === "tool") return "running " + s.tool;
    if (s.state === "thinking") return "thinking…";
    if (s.state === "waiting") return s.detail || "waiting for the model…";
    return "idle";
  }

  // Agent rows are kept and updated in place, so that an edit form being
  // filled in survives the status updates that stream in meanwhile.
  function renderAgents() {
    const list = tid("agents-list");
    tid("agents-empty").hidden = state.agents.size > 0;
    const rows = new Map();
    for (const li of list.children) rows.set(Number(li.dataset.id), li);
    const keep = [];
    for (const a of [...state.agents.values()].sort((x, y) => x.handle.localeCompare(y.handle))) {
      const li = rows.get(a.id) || buildRow(a);
      updateRow(li, a);
      keep.push(li);
    }
    if (keep.length !== list.children.length || keep.some((li, i) => list.children[i] !== li)) list.replaceChildren(...keep);
  }

  function buildRow(a) {
    const h = a.handle;
    const field = (label, name, max, type) => el("span", {}, el("label", {}, label,
      el("input", { name, type: type || "text", maxlength: max, "data-testid": "agent-edit-" + name + "-" + h })));
    const form = el("form", { class: "agt-form agt-edit", "data-testid": "agent-edit-form-" + h, autocomplete: "off", hidden: true },
      el("div", { class: "agt-row" }, field("Name", "name", 80), field("Title", "title", 120), field("Model", "model", 120)),
      el("div", { class: "agt-row" },
        el("span", {}, el("label", {}, "Provider", el("select", { name: "provider", "data-testid": "agent-edit-provider-" + h }))),
        el("span", {}, el("label", {}, "Runtime", el("select", { name: "runtime", "data-testid": "agent-edit-runtime-" + h },
          ...RUNTIMES.map(([v, label]) => el("option", { value: v }, label)))))),
      el("label", { class: "agt-check" }, el("input", { type: "checkbox", name: "muted", "data-testid": "agent-edit-muted-" + h }),
        " Muted (never wakes)"),
      el("div", { class: "agt-actions" },
        el("button", { type: "submit", class: "btn btn-primary btn-sm", "data-testid": "agent-edit-save-" + h }, "Save"),
        el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "agent-edit-cancel-" + h }, "Cancel")),
      el("p", { class: "form-error", role: "alert", "data-testid": "agent-edit-error-" + h, hidden: true }));
    const li = el("li", { class: "agt-item", "data-testid": "agent-" + h, "data-id": a.id },
      el("button", { type: "button", class: "agt-pick", title: "Show only this agent's activity" },
        el("span", { class: "agt-dot" }),
        el("strong", { class: "agt-name" }), " ", el("span", { class: "agt-handle" }, "@" + h),
        el("span", { class: "agt-status", "data-testid": "agent-status-" + h })),
      el("div", { class: "agt-meta" }),
      el("div", { class: "agt-net", "data-testid": "agent-network-" + h, hidden: true }),
      el("div", { class: "agt-stream", "data-testid": "agent-stream-" + h }),
      el("div", { class: "agt-turns", "data-testid": "agent-turns-" + h }),
      el("div", { class: "agt-actions agt-manage" },
        el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "agent-edit-" + h, "aria-expanded": "false" }, "Edit"),
        el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "agent-memory-" + h, "aria-expanded": "false" }, "Memory"),
        el("button", { type: "button", class: "btn btn-ghost btn-sm agt-danger", "data-testid": "agent-fire-" + h, title: "Fire: it never wakes again; its work stays" }, "Fire")),
      form,
      el("p", { class: "form-error", role: "alert", "data-testid": "agent-error-" + h, hidden: true }));
    li.querySelector(".agt-pick").addEventListener("click", () => {
      state.filter = state.filter === a.id ? 0 : a.id;
      tid("agents-filter").textContent = state.filter ? "— @" + h : "";
      renderAgents();
      for (const item of tid("agents-activity").children) item.hidden = state.filter !== 0 && Number(item.dataset.agent) !== state.filter;
    });
    const [editBtn, memoryBtn, fireBtn] = li.querySelectorAll(".agt-manage button");
    memoryBtn.addEventListener("click", () => {
      const open = window.BPMemory.toggle(li, { id: a.id, handle: h });
      memoryBtn.setAttribute("aria-expanded", open ? "true" : "false");
    });
    const rowError = li.querySelector('[data-testid="agent-error-' + h + '"]');
    const formError = form.querySelector(".form-error");
    const closeEdit = () => { form.hidden = true; editBtn.setAttribute("aria-expanded", "false"); };
    editBtn.addEventListener("click", () => {
      if (!form.hidden) { closeEdit(); return; }
      const cur = state.agents.get(a.id) || a;
      form.elements.name.value = cur.display_name || "";
      form.elements.title.value = cur.title || "";
      form.elements.model.value = (cur.spec && cur.spec.model) || "";
      form.elements.muted.checked = !!cur.muted;
      form.elements.runtime.value = (cur.spec && cur.spec.runtime) || "builtin";
      fillProviders(form.elements.provider, (cur.spec && cur.spec.provider) || "", formError);
      formError.hidden = true;
      form.hidden = false;
      editBtn.setAttribute("aria-expanded", "true");
      form.elements.name.focus();
    });
    form.querySelector('[data-testid="agent-edit-cancel-' + h + '"]').addEventListener("click", closeEdit);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const cur = state.agents.get(a.id) || a;
      const save = form.querySelector('button[type="submit"]');
      save.disabled = true;
      formError.hidden = true;
      try {
        const patch = { name: form.elements.name.value.trim(), title: form.elements.title.value.trim(), model: form.elements.model.value.trim() };
        // Provider and runtime go only when changed, so that a name edit
        // never trips over a provider the role names but nobody set up.
        if (form.elements.provider.value !== ((cur.spec && cur.spec.provider) || "")) patch.provider = form.elements.provider.value;
        if (form.elements.runtime.value !== ((cur.spec && cur.spec.runtime) || "builtin")) patch.runtime = form.elements.runtime.value;
        let updated = await api("PATCH", "/api/v1/agents/" + a.id, patch);
        if (form.elements.muted.checked !== !!cur.muted) {
          const m = await api("PATCH", "/api/v1/members/" + a.id, { muted: form.elements.muted.checked });
          updated = Object.assign({}, updated, { muted: !!m.muted });
        }
        state.agents.set(a.id, Object.assign({}, cur, updated, { status: cur.status, stream: cur.stream, streamWhole: cur.streamWhole }));
        closeEdit();
        renderAgents();
      } catch (err) {
        showError(formError, err.message); // the input stays as typed
      } finally {
        save.disabled = false;
      }
    });
    // Fire takes two clicks, like the other destructive buttons.
    let disarm = 0;
    fireBtn.addEventListener("click", async () => {
      if (fireBtn.dataset.armed !== "1") {
        fireBtn.dataset.armed = "1";
        fireBtn.textContent = "Fire @" + h + "?";
        disarm = setTimeout(() => { fireBtn.dataset.armed = ""; fireBtn.textContent = "Fire"; }, 4000);
        return;
      }
      clearTimeout(disarm);
      fireBtn.dataset.armed = "";
      fireBtn.disabled = true;
      rowError.hidden = true;
      try {
        const fired = await api("DELETE", "/api/v1/agents/" + a.id);
        const cur = state.agents.get(a.id) || a;
        state.agents.set(a.id, Object.assign({}, cur, fired, { state: "fired", status: { state: "idle" } }));
        closeEdit();
        renderAgents();
      } catch (err) {
        showError(rowError, err.message);
      } finally {
        fireBtn.disabled = false;
        fireBtn.textContent = "Fire";
      }
    });
    return li;
  }

  // The agent runtimes: the built-in loop, or an agent CLI in the sandbox.
  const RUNTIMES = [["builtin", "built-in"], ["claude-code", "Claude Code"], ["codex", "Codex"], ["opencode", "opencode"]];

  // fillProviders offers the office default and every provider set up in
  // Settings (admins can read them; only admins can edit agents), keeping
  // the agent's current one even when it is not set up.
  async function fillProviders(select, current, errorBox) {
    const names = new Set(current ? [current] : []);
    try {
      const data = await api("GET", "/api/v1/settings/providers");
      for (const p of data.items || []) names.add(p.name);
    } catch (err) {
      errorBox.textContent = "Providers: " + err.message;
      errorBox.hidden = false;
    }
    select.replaceChildren(el("option", { value: "" }, "office default"),
      ...[...names].sort().map((n) => el("option", { value: n }, n)));
    select.value = current;
  }

  // networkText says where an agent CLI's network policy stands: its
  // sandbox has that network only once a human approved it.
  function networkText(n) {
    const by = n.state === "approved" ? "approved" + (n.approval_id ? " (#" + n.approval_id + ")" : "")
      : n.state === "pending" ? "awaiting a human's approval #" + n.approval_id + "; runs with no network until then"
      : n.state === "denied" ? "denied (#" + n.approval_id + "); runs with no network"
      : "not approved yet (asked at its next turn); runs with no network until then";
    return "Network " + n.policy + ": " + by;
  }

  // runtimeOf names what runs a role's turns: the builtin loop or an agent CLI.
  function runtimeOf(spec) { return (spec && spec.runtime) || "builtin"; }

  function updateRow(li, a) {
    const fired = a.state === "fired";
    const status = fired ? "fired" : (a.status && a.status.state) || "idle";
    li.className = "agt-item" + (state.filter === a.id ? " agt-picked" : "") + (fired ? " agt-gone" : "");
    li.dataset.status = status;
    li.dataset.state = a.state || "active";
    li.querySelector(".agt-dot").className = "agt-dot agt-" + status;
    li.querySelector(".agt-name").textContent = a.display_name;
    li.querySelector(".agt-status").textContent = statusText(a) + (a.muted && !fired ? " · muted" : "");
    li.querySelector(".agt-meta").textContent = [a.title, runtimeOf(a.spec), a.spec && a.spec.provider, a.spec && a.spec.model].filter(Boolean).join(" · ");
    const net = li.querySelector(".agt-net");
    net.hidden = !a.network_approval;
    net.textContent = a.network_approval ? networkText(a.network_approval) : "";
    li.querySelector(".agt-stream").textContent = streamText(a);
    li.querySelector(".agt-manage").hidden = fired;
    if (fired) li.querySelector(".agt-edit").hidden = true;
  }

  // The hire form: a catalog role, and optionally a handle, name and title
  // of the agent's own. On failure the server's message shows and the
  // input stays.
  const hire = {
    open: tid("agent-hire-open"), form: tid("agent-hire-form"), role: tid("agent-hire-role"),
    error: tid("agent-hire-error"), result: tid("agent-hire-result"), loaded: false,
  };

  async function loadRoles() {
    if (hire.loaded) return;
    try {
      const data = await api("GET", "/api/v1/roles");
      showRoleErrors(data.errors || []);
      const prev = hire.role.value;
      hire.role.replaceChildren(el("option", { value: "" }, "Choose a role…"),
        ...data.items.map((r) => el("option", { value: r.id }, r.id + " — " +
          [r.role && r.role.title, runtimeOf(r.role), r.role && r.role.model].filter(Boolean).join(" · "))));
      if (prev) hire.role.value = prev;
      hire.loaded = true;
    } catch (err) {
      hire.role.replaceChildren(el("option", { value: "" }, "Roles are unavailable"));
      showError(hire.error, err.message);
    }
  }

  // Role files that failed to load are listed above the agents, so a
  // typo in one shows where people look, not only in the server log.
  function showRoleErrors(errors) {
    const box = tid("role-errors");
    tid("role-errors-list").replaceChildren(...errors.map((e) =>
      el("li", { "data-testid": "role-error" }, el("code", {}, e.path),
        e.kept ? " (its last good version is still hired from)" : " (left out)",
        el("ul", {}, ...(e.errors && e.errors.length ? e.errors : [e.error]).map((m) => el("li", {}, m))))));
    box.hidden = errors.length === 0;
  }

  function showHire(show) {
    hire.form.hidden = !show;
    hire.open.setAttribute("aria-expanded", String(show));
    if (show) {
      hire.result.hidden = true;
      loadRoles().then(() => hire.role.focus());
    }
  }

  hire.open.addEventListener("click", () => showHire(hire.form.hidden));
  tid("agent-hire-cancel").addEventListener("click", () => showHire(false));
  hire.form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = hire.form.elements;
    const body = { role: f.role.value };
    for (const k of ["handle", "name", "title"]) {
      const v = f[k].value.trim();
      if (v) body[k] = v;
    }
    const submit = tid("agent-hire-submit");
    submit.disabled = true;
    hire.error.hidden = true;
    try {
      const h = await api("POST", "/api/v1/agents", body);
      const a = h.agent;
      state.agents.set(a.id, a);
      renderAgents();
      hire.form.reset();
      showHire(false);
      // The token is for programs (the API still answers it); a human
      // hiring here needs none, so it is never shown.
      hire.result.replaceChildren("Hired @" + a.handle + ". Mention it in a channel to give it work.");
      hire.result.hidden = false;
    } catch (err) {
      showError(hire.error, err.message); // the input stays as typed
    } finally {
      submit.disabled = false;
    }
  });

  async function loadAgents() {
    // Loads overlap when events come fast; only the newest one may render,
    // or an older answer would undo a newer change. Live status is kept.
    const seq = state.loadSeq = (state.loadSeq || 0) + 1;
    try {
      const data = await api("GET", "/api/v1/agents");
      if (seq !== state.loadSeq) return;
      const prev = state.agents;
      state.agents = new Map();
      for (const a of data.items) {
        const old = prev.get(a.id);
        state.agents.set(a.id, old ? Object.assign(a, { status: old.status, stream: old.stream, streamWhole: old.streamWhole }) : a);
      }
      renderAgents();
      for (const a of state.agents.values()) loadTurns(a);
    } catch (err) {
      tid("agents-empty").textContent = "Agents are unavailable: " + err.message;
    }
  }

  // loadTurns lists an agent's last turns on its card, each a link to the
  // turn inspector.
  async function loadTurns(a) {
    const box = tid("agent-turns-" + a.handle);
    if (!box) return;
    try {
      const data = await window.BP.api("GET", "/api/v1/agents/" + a.id + "/turns?limit=3");
      const links = (data.items || []).map((t) => window.BP.el("a", { href: t.inspect_url, class: "agt-turn",
        "data-testid": "agent-turn-link", title: "Open this turn in the inspector" }, "turn " + t.id + " · " + t.state));
      box.replaceChildren(...(links.length ? [window.BP.el("span", { class: "agt-turns-label" }, "Last turns: ")] : []), ...links);
    } catch (err) {
      box.textContent = "Turns unavailable: " + err.message;
    }
  }

  async function loadApprovals() {
    const list = tid("approvals-list");
    let data;
    try {
      data = await api("GET", "/api/v1/approvals?state=pending");
    } catch (err) {
      return;
    }
    list.replaceChildren();
    tid("approvals-empty").hidden = data.items.length > 0;
    for (const ap of data.items) {
      const who = state.agents.get(ap.agent_id);
      const li = el("li", { class: "agt-approval", "data-testid": "approval-" + ap.id },
        el("div", {}, el("strong", {}, "#" + ap.id + " @" + (who ? who.handle : ap.agent_id)), " wants ", el("code", {}, ap.tool)),
        el("pre", { class: "agt-args" }, ap.arguments),
        el("div", { class: "agt-reason" }, ap.reason),
        el("div", { class: "agt-actions" },
          el("button", { type: "button", class: "btn btn-primary btn-sm", "data-testid": "approve-" + ap.id }, "Approve"),
          el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "deny-" + ap.id }, "Deny")));
      const [yes, no] = li.querySelectorAll("button");
      const answer = async (decision) => {
        yes.disabled = no.disabled = true;
        try {
          await api("POST", "/api/v1/approvals/" + ap.id, { decision });
        } catch (err) {
          li.append(el("div", { class: "agt-error" }, err.message));
        }
        loadApprovals();
      };
      yes.addEventListener("click", () => answer("approve"));
      no.addEventListener("click", () => answer("deny"));
      list.append(li);
    }
  }

  // describe is an agent's or an approval's stored event as the activity
  // feed shows it: who, the kind's label as the server declares it
  // (BP.eventKind), and what the payload tells.
  function describe(ev) {
    const kind = window.BP.eventKind(ev.type);
    if (!kind || kind.ephemeral || !/^(agent|approval)\./.test(ev.type)) return "";
    const p = ev.payload || {};
    const who = "@" + (p.handle || (state.agents.get(p.agent_id) || {}).handle || p.agent_id);
    const details = [
      ev.type.startsWith("approval.") && p.id ? "#" + p.id : "",
      p.reason, p.tool, p.state, p.limit, p.detail || p.error,
      p.steps ? p.steps + " steps" : "",
      p.usage ? (p.usage.input_tokens || 0) + " in / " + (p.usage.output_tokens || 0) + " out tokens" : "",
      p.duration_ms ? p.duration_ms + " ms" : "",
      p.simulated ? "simulation" : "",
    ].filter(Boolean).map((d) => String(d).slice(0, 120));
    return who + " · " + kind.label + (details.length ? ": " + details.join(", ") : "");
  }

  // streamText is what a card shows of the text an agent streams: its
  // last STREAM_SHOWN characters, starting at a word. Text cut at the front
  // (too long, or joined mid-turn) drops its partial first word for "…".
  const STREAM_SHOWN = 160;
  function streamText(a) {
    const all = a.stream || "";
    const start = Math.max(0, all.length - STREAM_SHOWN);
    const t = all.slice(start);
    const atWord = start > 0 ? /\s/.test(all[start - 1]) : a.streamWhole || all === "";
    if (atWord) return (start > 0 ? "…" : "") + t;
    const i = t.search(/\s/);
    return "…" + (i < 0 ? "" : t.slice(i).trimStart());
  }

  function onEvent(ev) {
    const p = ev.payload || {};
    const a = state.agents.get(p.agent_id);
    if (ev.type === "agent.delta" && a) {
      a.stream = ((a.stream || "") + p.text).slice(-4 * STREAM_SHOWN);
      const s = tid("agent-stream-" + a.handle);
      if (s) s.textContent = streamText(a);
      return;
    }
    if (ev.type === "agent.status") { // ephemeral, about once a second while a model call waits
      if (a) { a.status = p.status; renderAgents(); }
      return;
    }
    if (a) {
      if (ev.type === "agent.turn_started") { a.status = { state: "thinking" }; a.stream = ""; a.streamWhole = true; }
      if (ev.type === "agent.tool_started") a.status = { state: "tool", tool: p.tool };
      if (ev.type === "agent.tool_finished") a.status = { state: "thinking" };
      if (/^agent\.turn_(finished|failed|abandoned)$/.test(ev.type)) a.status = { state: "idle" };
    }
    const reload = /^agent\.(hired|fired|updated)$/.test(ev.type) ||
      (ev.type === "member.updated" && p.kind === "agent"); // muting is a member change
    if (reload) loadAgents();
    else if (a) renderAgents();
    if (a && /^agent\.turn_(finished|failed|abandoned)$/.test(ev.type)) loadTurns(a);
    if (ev.type.startsWith("approval.")) loadApprovals();
    const text = describe(ev);
    if (!text) return;
    const feed = tid("agents-activity");
    const item = el("li", { class: "agt-event agt-" + ev.type.replace(".", "-"), "data-agent": p.agent_id || 0 },
      el("time", {}, new Date(ev.at || Date.now()).toLocaleTimeString()), " ", text);
    item.hidden = state.filter !== 0 && (p.agent_id || 0) !== state.filter;
    feed.prepend(item);
    while (feed.children.length > MAX_FEED) feed.lastChild.remove();
  }

  // The feed is open only while the panel shows, like the other panels.
  function connect() {
    if (state.ws || !state.visible) return;
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/v1/ws";
    const ws = new WebSocket(url);
    state.ws = ws;
    ws.onopen = () => { state.attempt = 0; root.dataset.live = "open"; };
    ws.onmessage = (m) => {
      let frame;
      try { frame = JSON.parse(m.data); } catch (e) { return; }
      for (const ev of frame.events || []) {
        if (ev.type.startsWith("agent.") || ev.type.startsWith("approval.") || ev.type === "member.updated") onEvent(ev);
      }
    };
    ws.onclose = () => {
      state.ws = null;
      root.dataset.live = "";
      if (!state.visible) return;
      state.attempt++;
      state.timer = setTimeout(() => { loadAgents().then(loadApprovals); connect(); }, Math.min(30000, 500 * 2 ** state.attempt));
    };
  }

  function setVisible(v) {
    if (v === state.visible) return;
    state.visible = v;
    if (v) {
      loadAgents().then(loadApprovals);
      loadRoles();
      connect();
    } else {
      clearTimeout(state.timer);
      if (state.ws) state.ws.close();
    }
  }

  new MutationObserver(() => setVisible(!panel.hidden)).observe(panel, { attributes: true, attributeFilter: ["hidden"] });
  setVisible(!panel.hidden);
})();
