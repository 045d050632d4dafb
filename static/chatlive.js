// Bullpen chat: agents' work shown in the channel. Under each root message
// the latest replies (so an answer reads without opening the thread), and
// on the message an agent is working on a live line: "@engineer is
// thinking…", "@engineer is running `make test` in its sandbox", the text
// it streams, and how the turn ended when it did not simply answer.
// Events come from app.js ("bullpen:event"); the server's sanitized "html"
// is the only string set as innerHTML.
(() => {
  "use strict";

  const BP = window.BP, app = window.Bullpen, tl = window.BPTimeline;
  const body = document.body;
  if (!BP || !app || !tl || !body.classList.contains("app")) return;
  const { el, $ } = BP;
  const channelId = Number(body.dataset.channelId) || 0;
  const PREVIEWS = 2; // as repliesPerRoot in web/timeline_page.go
  const TEXT_TAIL = 400; // characters of streamed text kept in the line

  // turns: turn id → { handle, target (root message id), text, state }
  const turns = new Map();

  const rootEl = (id) => $(`[data-testid="message-list"] > [data-testid="message"][data-id="${Number(id)}"]`);
  const part = (node, id) => node && $(`[data-testid="${id}"]`, node);

  // ---------- reply previews ----------

  function renderPreview(m, rootId) {
    const a = m.author || {};
    const agent = a.kind === "agent";
    const b = el("div", { class: "preview-body", "data-testid": "reply-preview-body" });
    b.innerHTML = m.html || ""; // sanitized by the server
    return el("li", { class: "msg-preview" + (agent ? " msg-preview-agent" : ""), "data-testid": "reply-preview", "data-id": Number(m.id) },
      el("span", { class: `${app.avatarClass(a.handle)} avatar-xs${agent ? " avatar-agent" : ""}`, "aria-hidden": "true" },
        app.initials(a.display_name || a.handle)),
      el("a", { class: "preview-handle", href: `#thread-${rootId}`, "data-thread-open": rootId, "data-testid": "reply-preview-handle" }, "@" + (a.handle || "")),
      b);
  }

  function addPreview(m) {
    const rootId = Number(m.thread_id);
    const list = part(rootEl(rootId), "reply-previews");
    if (!list || list.querySelector(`[data-id="${Number(m.id)}"]`)) return;
    let after = list.lastElementChild;
    while (after && Number(after.dataset.id) > Number(m.id)) after = after.previousElementSibling;
    const li = renderPreview(m, rootId);
    if (after) after.after(li); else list.prepend(li);
    while (list.children.length > PREVIEWS) list.firstElementChild.remove();
    list.hidden = false;
  }

  function changePreview(m) {
    const list = part(rootEl(m.thread_id), "reply-previews");
    const old = list && list.querySelector(`[data-id="${Number(m.id)}"]`);
    if (!old) return;
    if (m.deleted) old.remove(); else old.replaceWith(renderPreview(m, Number(m.thread_id)));
    list.hidden = list.children.length === 0;
  }

  // ---------- live line ----------

  // toolPhrase says what a tool call is doing, as doing in agentlines.go (the Go timeline line).
  const phrases = {
    post_message: "posting", read_channel: "reading the channel", read_thread: "reading the thread",
    list_members: "looking up the team", wiki_search: "searching the wiki", wiki_read: "reading the wiki",
    wiki_write: "writing the wiki", sandbox_read_file: "reading a file in its sandbox",
    sandbox_write_file: "writing a file in its sandbox", sandbox_list_files: "listing files in its sandbox",
    memory_write: "remembering", memory_search: "searching its memory", memory_forget: "forgetting",
    task_create: "creating a task", task_list: "looking at the tasks", task_claim: "claiming a task",
    task_update: "updating a task", task_handoff: "handing a task off", task_submit: "submitting a task",
  };
  function toolPhrase(tool, args) {
    if (tool === "sandbox_exec") {
      const cmd = args && typeof args === "object" ? String(args.command || "") : "";
      const short = cmd.replace(/\s+/g, " ").trim();
      return short ? `running \`${short.length > 80 ? short.slice(0, 79) + "…" : short}\` in its sandbox` : "running a command in its sandbox";
    }
    return phrases[tool] || "using " + tool;
  }

  const limitNames = { hop_budget: "hop budget", rate_limit: "rate limit", turn_steps: "step limit",
    turn_tokens: "turn token limit", daily_tokens: "daily token budget", turn_deadline: "turn deadline" };
  const limitText = (p) => (limitNames[p.limit] || p.limit) + (p.budget ? ` (${p.budget})` : "") + " reached";

  // row finds or makes the line's row for a turn (or a wake that never ran).
  function row(key, target) {
    const line = part(rootEl(target), "live-line");
    if (!line) return null;
    let r = line.querySelector(`[data-turn="${key}"]`);
    if (!r) {
      r = el("div", { class: "live-turn", "data-testid": "live-turn", "data-turn": key },
        el("span", { class: "live-status", "data-testid": "live-status" }),
        el("span", { class: "live-text", "data-testid": "live-text" }));
      line.append(r);
    }
    line.hidden = false;
    return r;
  }

  function draw(id) {
    const t = turns.get(id);
    const r = t && row(id, t.target);
    if (!r) return;
    r.dataset.state = t.state;
    $(".live-status", r).replaceChildren(...tl.lineNodes(t.status));
    const text = $(".live-text", r);
    text.textContent = t.text.length > TEXT_TAIL ? "…" + t.text.slice(-TEXT_TAIL) : t.text;
    text.hidden = !t.text;
  }

  // end closes a turn's row: an answered turn's row goes (the answer shows
  // under the message); a failed or stopped one stays with its reason.
  function end(id, state, status) {
    const t = turns.get(id);
    if (!t) return;
    if (t.state === "stopped" && state === "done") state = "stopped"; // the stop said why
    else if (status) t.status = status;
    t.state = state;
    t.text = state === "done" ? "" : t.text;
    if (state !== "done") { draw(id); return; }
    const r = row(id, t.target);
    if (r) {
      const line = r.parentElement;
      r.remove();
      line.hidden = line.children.length === 0;
    }
    turns.delete(id);
  }

  const on = {
    "agent.turn_started": (p, ev) => {
      if (Number(ev.channel_id) !== channelId) return;
      const ids = p.message_ids || [];
      const target = Number(p.thread_id) || Number(ids[ids.length - 1]) || 0;
      if (!target) return;
      turns.set(Number(p.turn_id), { handle: p.handle, target, text: "", state: "thinking", status: `@${p.handle} is thinking…` });
      draw(Number(p.turn_id));
    },
    "agent.status": (p) => {
      const t = turns.get(Number(p.status && p.status.turn_id));
      if (!t || t.state === "tool") return;
      // A model call is "thinking"; a slow one says how long it has waited.
      const slow = p.status.state === "waiting" && Number(p.status.waited_s) >= 10 && p.status.detail;
      t.status = `@${t.handle} is thinking…` + (slow ? ` (${p.status.detail})` : "");
      draw(Number(p.status.turn_id));
    },
    "agent.tool_started": (p) => {
      const t = turns.get(Number(p.turn_id));
      if (!t) return;
      t.state = "tool";
      t.status = `@${t.handle} is ${toolPhrase(p.tool, p.arguments)}`;
      draw(Number(p.turn_id));
    },
    "agent.tool_finished": (p) => {
      const t = turns.get(Number(p.turn_id));
      if (!t) return;
      t.state = "thinking";
      t.status = `@${t.handle} is thinking…`;
      draw(Number(p.turn_id));
    },
    "agent.delta": (p) => {
      const t = turns.get(Number(p.turn_id));
      if (!t) return;
      t.text += String(p.text || "");
      draw(Number(p.turn_id));
    },
    "agent.limit_reached": (p, ev) => {
      if (Number(ev.channel_id) !== channelId) return;
      if (turns.has(Number(p.turn_id))) {
        end(Number(p.turn_id), "stopped", `@${p.handle} stopped: ${limitText(p)}`);
        return;
      }
      const target = Number(p.thread_id) || Number(p.message_id);
      const r = target && row("limit-" + Number(ev.seq), target); // no turn ran: say so on the message
      if (!r) return;
      r.dataset.state = "stopped";
      $(".live-status", r).textContent = `@${p.handle} was not woken: ${limitText(p)}`;
      $(".live-text", r).hidden = true;
    },
    "agent.turn_finished": (p) => end(Number(p.turn_id), "done"),
    "agent.turn_failed": (p) => end(Number(p.turn_id), "failed", `@${p.handle || turnHandle(p)}'s turn failed: ${clip(p.error)}`),
    "agent.turn_abandoned": (p) => end(Number(p.turn_id), "failed", `@${p.handle || turnHandle(p)}'s turn was abandoned${p.error ? ": " + clip(p.error) : ""}`),
    "message.posted": (m) => { if (Number(m.channel_id) === channelId && Number(m.thread_id)) addPreview(m); },
    "message.edited": (m) => { if (Number(m.channel_id) === channelId && Number(m.thread_id)) changePreview(m); },
    "message.deleted": (m) => { if (Number(m.channel_id) === channelId && Number(m.thread_id)) changePreview(m); },
  };
  const turnHandle = (p) => (turns.get(Number(p.turn_id)) || {}).handle || "agent";
  const clip = (s) => { s = String(s || "").replace(/\s+/g, " ").trim(); return s.length > 120 ? s.slice(0, 119) + "…" : s; };

  // Older messages (app.js's "Load older") come without their answers:
  // fetch the latest replies of those that have some, one request a batch.
  async function fillOlder(roots) {
    const ids = roots.filter((li) => !part(li, "reply-previews").children.length).map((li) => Number(li.dataset.id));
    if (!ids.length) return;
    try {
      const r = await BP.api("GET", `/api/v1/channels/${channelId}/latest-replies?roots=${ids.join(",")}&per_root=${PREVIEWS}`);
      for (const m of r.items || []) addPreview(m);
    } catch (err) {
      console.warn("bullpen: replies of older messages", err.message);
    }
  }
  const list = $('[data-testid="message-list"]');
  if (list && window.MutationObserver) {
    new MutationObserver((muts) => {
      const roots = [];
      for (const m of muts) {
        for (const n of m.addedNodes) {
          if (n.dataset && n.dataset.testid === "message" && Number(n.dataset.replyCount) > 0 && part(n, "reply-previews")) roots.push(n);
        }
      }
      if (roots.length) fillOlder(roots);
    }).observe(list, { childList: true });
  }

  document.addEventListener("bullpen:event", (e) => {
    const ev = e.detail || {};
    const h = on[ev.type];
    if (!h) return;
    try {
      h(ev.payload || {}, ev);
    } catch (err) {
      console.error("bullpen: chat live line", ev.type, err);
    }
  });
})();
