// Bullpen agents panel: each agent's live status (idle, thinking, running
// tool X), the approvals waiting for a human (approve / deny), and a feed
// of turns, tool calls and limits, for all agents or the one picked.
// Plain JS; it reads /api/v1/agents and /api/v1/approvals and listens to
// the event feed. Nothing from the server is set as HTML.
(() => {
  "use strict";

  const root = document.querySelector("[data-agents]");
  if (!root) return;
  const tid = (id) => root.querySelector(`[data-testid="${id}"]`);
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  const MAX_FEED = 200;
  const panel = root.closest("[data-panel]") || root;
  const state = { agents: new Map(), filter: 0, ws: null, attempt: 0, visible: false, timer: 0 };

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
    }
    e.append(...children.filter((c) => c !== null && c !== undefined));
    return e;
  }

  async function api(method, path, body) {
    const opts = { method, headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((data.error && data.error.message) || res.statusText);
    return data;
  }

  function statusText(a) {
    if (a.state === "fired") return "fired";
    const s = a.status || { state: "idle" };
    if (s.state === "tool") return "running " + s.tool;
    if (s.state === "thinking") return "thinking…";
    return "idle";
  }

  function renderAgents() {
    const list = tid("agents-list");
    list.replaceChildren();
    tid("agents-empty").hidden = state.agents.size > 0;
    for (const a of [...state.agents.values()].sort((x, y) => x.handle.localeCompare(y.handle))) {
      const status = (a.status && a.status.state) || "idle";
      const li = el("li", { class: "agt-item" + (state.filter === a.id ? " agt-picked" : ""), "data-testid": "agent-" + a.handle,
        "data-status": a.state === "fired" ? "fired" : status },
        el("button", { type: "button", class: "agt-pick", title: "Show only this agent's activity" },
          el("span", { class: "agt-dot agt-" + (a.state === "fired" ? "fired" : status) }),
          el("strong", {}, a.display_name), " ", el("span", { class: "agt-handle" }, "@" + a.handle),
          el("span", { class: "agt-status", "data-testid": "agent-status-" + a.handle }, statusText(a))),
        el("div", { class: "agt-meta" }, [a.title, a.spec && a.spec.provider ? a.spec.provider : "", a.spec && a.spec.model].filter(Boolean).join(" · ")),
        el("div", { class: "agt-stream", "data-testid": "agent-stream-" + a.handle }, a.stream || ""));
      li.querySelector(".agt-pick").addEventListener("click", () => {
        state.filter = state.filter === a.id ? 0 : a.id;
        tid("agents-filter").textContent = state.filter ? "— @" + a.handle : "";
        renderAgents();
        for (const item of tid("agents-activity").children) item.hidden = state.filter !== 0 && Number(item.dataset.agent) !== state.filter;
      });
      list.append(li);
    }
  }

  async function loadAgents() {
    try {
      const data = await api("GET", "/api/v1/agents");
      state.agents.clear();
      for (const a of data.items) state.agents.set(a.id, a);
      renderAgents();
    } catch (err) {
      tid("agents-empty").textContent = "Agents are unavailable: " + err.message;
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

  function describe(ev) {
    const p = ev.payload || {};
    const who = "@" + (p.handle || (state.agents.get(p.agent_id) || {}).handle || p.agent_id);
    switch (ev.type) {
      case "agent.wake_queued": return who + " woken (" + p.reason + ")";
      case "agent.turn_started": return who + " started a turn" + (p.simulated ? " (simulation)" : "");
      case "agent.turn_finished": return who + " finished: " + (p.steps || 0) + " steps, " +
        ((p.usage && p.usage.input_tokens) || 0) + " in / " + ((p.usage && p.usage.output_tokens) || 0) + " out tokens, " + (p.duration_ms || 0) + " ms";
      case "agent.turn_failed": return who + " failed: " + (p.error || "");
      case "agent.turn_abandoned": return who + "'s turn was interrupted; it will run again";
      case "agent.tool_started": return who + " → " + p.tool;
      case "agent.tool_finished": return who + " ← " + p.tool + " " + p.state + " (" + (p.duration_ms || 0) + " ms)";
      case "agent.limit_reached": return who + " stopped by " + p.limit + ": " + p.detail;
      case "approval.requested": return who + " asks approval #" + p.id + " for " + p.tool;
      case "approval.answered": return "approval #" + p.id + " " + p.state;
      case "agent.hired": return "hired @" + p.handle;
      case "agent.fired": return "fired @" + p.handle;
    }
    return "";
  }

  function onEvent(ev) {
    const p = ev.payload || {};
    const a = state.agents.get(p.agent_id);
    if (ev.type === "agent.delta" && a) {
      a.stream = ((a.stream || "") + p.text).slice(-160);
      const s = tid("agent-stream-" + a.handle);
      if (s) s.textContent = a.stream;
      return;
    }
    if (a) {
      if (ev.type === "agent.turn_started") { a.status = { state: "thinking" }; a.stream = ""; }
      if (ev.type === "agent.tool_started") a.status = { state: "tool", tool: p.tool };
      if (ev.type === "agent.tool_finished") a.status = { state: "thinking" };
      if (/^agent\.turn_(finished|failed|abandoned)$/.test(ev.type)) a.status = { state: "idle" };
    }
    if (/^agent\.(hired|fired|updated)$/.test(ev.type)) loadAgents();
    else if (a) renderAgents();
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
    ws.onopen = () => { state.attempt = 0; };
    ws.onmessage = (m) => {
      let frame;
      try { frame = JSON.parse(m.data); } catch (e) { return; }
      for (const ev of frame.events || []) {
        if (ev.type.startsWith("agent.") || ev.type.startsWith("approval.")) onEvent(ev);
      }
    };
    ws.onclose = () => {
      state.ws = null;
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
      connect();
    } else {
      clearTimeout(state.timer);
      if (state.ws) state.ws.close();
    }
  }

  new MutationObserver(() => setVisible(!panel.hidden)).observe(panel, { attributes: true, attributeFilter: ["hidden"] });
  setVisible(!panel.hidden);
})();
