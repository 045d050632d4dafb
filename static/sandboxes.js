// Bullpen sandboxes panel: the member's sandboxes with state and usage, a
// create form, and for the open sandbox lifecycle buttons, the exec history
// (every command, agents' too, stored; live output as it comes), a command
// box and a file browser. Plain JS, no build step; it talks to
// /api/v1/sandboxes and, while the panel is open, listens to the event
// feed for sandbox events and live output. terminal.js adds the terminal.
//
// Links: #sandbox=<sandbox id>&exec=<exec id> opens the sandbox with that
// command's entry open (the timeline links here).
//
// Rule: nothing from the server is set as HTML; everything goes in as text.
(() => {
  "use strict";

  const root = document.querySelector("[data-sandboxes]");
  if (!root) return;
  const panel = root.closest("[data-panel]") || root;

  const { el, api, request, showError } = window.BP;
  const tid = (id) => root.querySelector(`[data-testid="${id}"]`);
  const API = "/api/v1/sandboxes";
  const meId = Number(document.body.dataset.meId) || 0;
  const MAX_LOG_EXECS = 100;
  const HISTORY_PAGE = 30;
  const MAX_VIEW_BYTES = 256 << 10;
  const WITHHELD = "(output not stored: this sandbox holds secrets, which a command could print)";

  const state = {
    items: [], // the list, as the API returned it
    open: null, // the open sandbox
    dir: "", // the file browser's directory
    execs: new Map(), // exec id -> log block of the open sandbox
    olderBefore: 0, // cursor of the next older history page (0: none)
    handles: new Map(), // member id -> handle, for "by @engineer"
    timer: 0,
    ws: null,
    wsTimer: 0,
    wsAttempt: 0,
    visible: false,
  };

  const sbPath = (sb, rest) => `${API}/${encodeURIComponent(sb.id)}${rest || ""}`;
  const label = (sb) => sb.name || sb.id;

  function mib(n) {
    if (!n && n !== 0) return "";
    if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + " GiB";
    if (n >= 1 << 20) return Math.round(n / (1 << 20)) + " MiB";
    if (n >= 1 << 10) return Math.round(n / (1 << 10)) + " KiB";
    return n + " B";
  }

  function usageText(sb) {
    const u = sb.usage;
    const disk = sb.disk_unbounded ? ", unbounded disk" : sb.disk_bytes ? `, disk ${mib(sb.disk_bytes)}` : "";
    const limit = `limit ${mib(sb.memory_bytes)}${sb.cpu ? `, ${sb.cpu} CPU` : ""}${disk}`;
    if (!u) return limit;
    return `mem ${mib(u.memory_bytes)} · cpu ${u.cpu_seconds.toFixed(2)} s · ${u.pids} procs · ${limit}`;
  }

  function stateBadge(s, testid) {
    return el("span", { class: "sbx-state", "data-state": s, "data-testid": testid }, s);
  }

  // ---------- list ----------

  async function loadList() {
    try {
      const res = await api("GET", `${API}?stats=true`);
      state.items = (res && res.items) || [];
      showError(tid("sandbox-error"), "");
    } catch (e) {
      showError(tid("sandbox-error"), e.message);
      state.items = [];
    }
    renderList();
    if (state.open) {
      const fresh = state.items.find((s) => s.id === state.open.id);
      if (fresh) renderDetailHead(fresh);
    }
  }

  function renderList() {
    const list = tid("sandbox-list");
    list.replaceChildren(...state.items.map((sb) =>
      el("li", { class: "sbx-item", "data-testid": "sandbox-item", "data-id": sb.id, tabindex: "0", role: "button" },
        el("span", { class: "sbx-item-name", "data-testid": "sandbox-item-name" }, label(sb)),
        stateBadge(sb.state, "sandbox-item-state"),
        el("span", { class: "sbx-item-sub" }, `${sb.image} · ${sb.id}`),
        el("span", { class: "sbx-item-usage", "data-testid": "sandbox-item-usage" }, usageText(sb)))));
    tid("sandbox-empty").hidden = state.items.length > 0 || !tid("sandbox-error").hidden;
  }

  function toggleCreate(open) {
    const form = tid("sandbox-create-form");
    form.hidden = !open;
    tid("sandbox-new").setAttribute("aria-expanded", String(open));
    showError(tid("sandbox-create-error"), "");
    if (open) tid("sandbox-name").focus();
  }

  async function create(e) {
    e.preventDefault();
    const f = e.target;
    const spec = {};
    const name = f.name.value.trim();
    const image = f.image.value.trim();
    const memory = f.memory.value.trim();
    const cpu = f.cpu.value.trim();
    if (name) spec.name = name;
    if (image && image !== "host") spec.image = image;
    if (memory) spec.memory = /^\d+$/.test(memory) ? Number(memory) : memory;
    if (cpu) {
      spec.cpu = Number(cpu);
      if (!isFinite(spec.cpu)) return showError(tid("sandbox-create-error"), "CPU cores must be a number, e.g. 0.5");
    }
    const timeout = f.timeout.value.trim();
    if (timeout) spec.timeout = /^\d+$/.test(timeout) ? Number(timeout) : timeout;
    const ports = f.ports.value.trim();
    if (ports) {
      spec.ports = ports.split(/[\s,]+/).filter(Boolean).map(Number);
      if (spec.ports.some((p) => !Number.isInteger(p))) return showError(tid("sandbox-create-error"), "Ports must be numbers, e.g. 8000, 3000");
    }
    if (f.network.value === "open") spec.network = "open";
    if (f.network.value === "allow") {
      const items = f.allow.value.split(/[\s,]+/).filter(Boolean);
      spec.network = { allow: items.filter((x) => /^[0-9.]+(\/\d+)?$/.test(x)), domains: items.filter((x) => !/^[0-9.]+(\/\d+)?$/.test(x)) };
    }
    const btn = tid("sandbox-create-submit");
    btn.disabled = true;
    try {
      const sb = await api("POST", API, spec);
      f.name.value = "";
      toggleCreate(false);
      await loadList();
      openSandbox(sb);
    } catch (err) {
      showError(tid("sandbox-create-error"), err.message);
    } finally {
      btn.disabled = false;
    }
  }

  // ---------- detail ----------

  function showView(name) {
    for (const v of root.querySelectorAll("[data-sbx-view]")) v.hidden = v.dataset.sbxView !== name;
  }

  function openSandbox(sb) {
    state.open = sb;
    state.execs.clear();
    const log = tid("sandbox-log");
    log.replaceChildren(tid("sandbox-log-older"), tid("sandbox-log-empty") || el("p", { class: "panel-empty", "data-testid": "sandbox-log-empty" }));
    tid("sandbox-log-empty").hidden = false;
    showError(tid("sandbox-detail-error"), "");
    tid("sandbox-file-viewer").hidden = true;
    renderDetailHead(sb);
    showView("detail");
    state.dir = sb.workdir || "/";
    state.olderBefore = 0;
    tid("sandbox-log-older").hidden = true;
    loadFiles();
    root.dispatchEvent(new CustomEvent("bp:sandbox-open", { detail: sb }));
    return loadHistory(0);
  }

  function closeSandbox() {
    state.open = null;
    state.execs.clear();
    root.dispatchEvent(new CustomEvent("bp:sandbox-close"));
    if (location.hash.startsWith("#sandbox=") || location.hash.startsWith("#sandbox/")) history.replaceState(null, "", location.pathname + location.search);
    showView("list");
    loadList();
  }

  function renderDetailHead(sb) {
    state.open = sb;
    tid("sandbox-detail-name").textContent = label(sb);
    tid("sandbox-detail-state").replaceWith(stateBadge(sb.state, "sandbox-detail-state"));
    tid("sandbox-detail-meta").textContent = `${sb.id} · image ${sb.image} · ${usageText(sb)}`;
    const can = {
      pause: sb.state === "running", resume: sb.state === "paused", stop: sb.state === "running" || sb.state === "paused",
      start: sb.state === "stopped", terminate: sb.state !== "terminated",
    };
    for (const b of root.querySelectorAll("[data-sbx-action]")) b.hidden = !can[b.dataset.sbxAction];
    tid("sandbox-command-run").disabled = sb.state !== "running";
  }

  async function refreshOpen() {
    if (!state.open) return;
    try {
      renderDetailHead(await api("GET", sbPath(state.open)));
    } catch (e) {
      if (e.status === 404) closeSandbox();
    }
  }

  async function lifecycle(action) {
    const sb = state.open;
    if (!sb) return;
    const btn = root.querySelector(`[data-sbx-action="${action}"]`);
    if (action === "terminate" && btn.dataset.armed !== "1") {
      btn.dataset.armed = "1";
      btn.textContent = "Terminate: sure?";
      setTimeout(() => { btn.dataset.armed = ""; btn.textContent = "Terminate"; }, 4000);
      return;
    }
    btn.disabled = true;
    try {
      if (action === "terminate") {
        await api("DELETE", sbPath(sb));
        closeSandbox();
        return;
      }
      renderDetailHead(await api("POST", sbPath(sb, "/" + action)));
    } catch (e) {
      showError(tid("sandbox-detail-error"), e.message);
    } finally {
      btn.disabled = false;
      btn.dataset.armed = "";
      if (action === "terminate") btn.textContent = "Terminate";
    }
  }

  // ---------- exec log ----------

  // execBlock returns the log block of an exec, made on first sight: from
  // the command box's own stream, the event feed or the stored history,
  // whichever is first. A block made live is open; one from the history
  // (hist set) shows its summary line and opens on a click, and goes
  // before hist.anchor (history pages go above the live entries).
  function execBlock(id, command, by, hist) {
    let b = state.execs.get(id);
    if (b) {
      if (command && !b.cmd.textContent) b.cmd.textContent = "$ " + command;
      return b;
    }
    const cmd = el("span", { class: "sbx-exec-cmd", "data-testid": "sandbox-exec-command" }, command ? "$ " + command : "");
    const who = el("span", { class: "sbx-by", "data-testid": "sandbox-exec-by" }, by ? "@" + by : "");
    const end = el("span", { class: "sbx-exec-end", "data-testid": "sandbox-exec-end", hidden: true });
    const head = el("button", { type: "button", class: "sbx-exec-head", "data-testid": "sandbox-exec-toggle", "aria-expanded": String(!hist) }, cmd, who, end);
    const out = el("pre", { class: "sbx-exec-out", "data-testid": "sandbox-exec-output", hidden: !!hist });
    const node = el("div", { class: "sbx-exec", id: "exec-" + id, "data-testid": "sandbox-exec", "data-exec-id": id }, head, out);
    head.addEventListener("click", () => toggleExec(b));
    b = { id, node, cmd, who, out, end, head, off: { stdout: 0, stderr: 0 }, done: false, cut: false };
    state.execs.set(id, b);
    const log = tid("sandbox-log");
    tid("sandbox-log-empty").hidden = true;
    if (hist && hist.anchor) log.insertBefore(node, hist.anchor);
    else log.append(node);
    const all = log.querySelectorAll(".sbx-exec");
    for (let i = 0; i < all.length - MAX_LOG_EXECS; i++) {
      state.execs.delete(all[i].dataset.execId);
      all[i].remove();
    }
    return b;
  }

  // markTerminal marks a block as a terminal session (a PTY command): the
  // terminal draws it live, so its raw output (escape codes and all) is
  // not shown here; the screen's text, kept by the server, is once it ends.
  function markTerminal(b, pty) {
    if (!pty || b.pty) return;
    b.pty = true;
    b.cmd.after(el("span", { class: "sbx-exec-tag", "data-testid": "sandbox-exec-tag" }, "terminal"));
    if (!b.done) b.out.replaceChildren(el("span", { class: "sbx-note" }, "(a terminal session: it shows live in the terminal; its text is kept here when it ends)"));
  }

  function toggleExec(b, open) {
    const show = open === undefined ? b.out.hidden : open;
    b.out.hidden = !show;
    b.head.setAttribute("aria-expanded", String(show));
    if (show && state.open) history.replaceState(null, "", `#sandbox=${encodeURIComponent(state.open.id)}&exec=${encodeURIComponent(b.id)}`);
  }

  // ---------- exec history ----------

  async function handleOf(id) {
    if (!id) return "";
    if (!state.handles.size) {
      try {
        const res = await api("GET", "/api/v1/members");
        for (const m of (res && res.items) || []) state.handles.set(m.id, m.handle);
      } catch (e) { /* names are a nicety; the history shows without them */ }
    }
    return state.handles.get(id) || "";
  }

  // loadHistory reads a page of the stored history (before: 0 for the
  // newest) and puts it above what is shown, oldest first.
  async function loadHistory(before) {
    const sb = state.open;
    if (!sb) return;
    let page;
    try {
      page = await api("GET", sbPath(sb, `/execs?limit=${HISTORY_PAGE}` + (before ? `&before=${before}` : "")));
    } catch (e) {
      showError(tid("sandbox-detail-error"), "Could not load the exec history: " + e.message);
      return;
    }
    await handleOf(1);
    // refreshOpen replaces state.open with a fresh copy: compare ids
    if (!state.open || state.open.id !== sb.id) return;
    const log = tid("sandbox-log");
    const anchor = log.querySelector(".sbx-exec");
    for (const x of (page.items || []).slice().reverse()) addHistory(x, anchor);
    state.olderBefore = page.next_before || 0;
    tid("sandbox-log-older").hidden = !state.olderBefore;
  }

  function addHistory(x, anchor) {
    const seen = state.execs.has(x.id);
    const b = execBlock(x.id, x.command, state.handles.get(x.by_id) || "", { anchor });
    markTerminal(b, x.pty);
    if (!b.who.textContent && state.handles.get(x.by_id)) b.who.textContent = "@" + state.handles.get(x.by_id);
    b.node.dataset.startedAt = x.started_at || "";
    if (x.running) return;
    if (!seen || !b.out.textContent || b.pty) {
      b.out.replaceChildren();
      if (x.stdout) b.out.append(el("span", { class: "sbx-stdout" }, x.stdout));
      if (x.stderr) b.out.append(el("span", { class: "sbx-stderr" }, x.stderr));
      if (x.output_withheld) b.out.append(el("span", { class: "sbx-note" }, WITHHELD));
      else if (!x.stdout && !x.stderr) b.out.append(el("span", { class: "sbx-note" }, "(no output)"));
      b.off = { stdout: x.stdout_bytes || 0, stderr: x.stderr_bytes || 0 };
    }
    finish(b, x.error ? { error: x.error } : x);
  }

  // openFromHash opens #sandbox=<id>[&exec=<id>], or the timeline's
  // #sandbox/<id>[/exec/<id>]: the Sandboxes tab, the sandbox, and that
  // command's entry, reading older pages until found.
  async function openFromHash() {
    const m = /^#sandbox=([^&]+)(?:&exec=([^&]+))?/.exec(location.hash) || /^#sandbox\/([^/]+)(?:\/exec\/([^/]+))?$/.exec(location.hash);
    if (!m) return;
    const id = decodeURIComponent(m[1]);
    const execID = m[2] ? decodeURIComponent(m[2]) : "";
    const tab = document.querySelector('[data-panel-tab="sandboxes"]');
    if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();
    if (!state.open || state.open.id !== id) {
      let sb;
      try {
        sb = await api("GET", sbPath({ id }));
      } catch (e) {
        showError(tid("sandbox-error"), `Sandbox ${id}: ${e.message}`);
        return;
      }
      await openSandbox(sb);
    }
    if (!execID) return;
    for (let pages = 0; !state.execs.has(execID) && state.olderBefore && pages < 10; pages++) await loadHistory(state.olderBefore);
    const b = state.execs.get(execID);
    if (!b) return showError(tid("sandbox-detail-error"), `Command ${execID} is not in this sandbox's history.`);
    toggleExec(b, true);
    b.node.classList.add("sbx-exec-linked");
    b.node.scrollIntoView({ block: "nearest" });
  }

  function decode(chunk) {
    if (typeof chunk.data === "string") return chunk.data;
    if (chunk.data_b64) {
      const bin = atob(chunk.data_b64);
      const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
      return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
    }
    return "";
  }

  // addOutput appends a chunk once: chunks carry their offset in the
  // stream, so one seen from both the stream and the feed shows once.
  function addOutput(b, chunk) {
    if (b.pty) return; // the terminal shows it
    const stream = chunk.stream === "stderr" ? "stderr" : "stdout";
    if (chunk.truncated) {
      if (!b.cut) b.out.append(el("span", { class: "sbx-note" }, "\n[live output cut here; the command goes on]\n"));
      b.cut = true;
      return;
    }
    const off = Number(chunk.off) || 0;
    const text = decode(chunk);
    if (off < b.off[stream]) return; // seen already
    if (off > b.off[stream]) b.out.append(el("span", { class: "sbx-note" }, "[…]"));
    b.off[stream] = off + (chunk.data_b64 ? atob(chunk.data_b64).length : new TextEncoder().encode(text).length);
    b.out.append(el("span", { class: "sbx-" + stream }, text));
    const log = tid("sandbox-log");
    log.scrollTop = log.scrollHeight;
  }

  function finish(b, end) {
    if (b.done) return;
    b.done = true;
    let text;
    let ok = true;
    if (b.pty && !end.error) { // the session's text, kept by the server, replaces the note
      b.out.replaceChildren(end.stdout ? el("span", { class: "sbx-stdout" }, end.stdout)
        : el("span", { class: "sbx-note" }, end.output_withheld ? WITHHELD : "(no output)"));
    }
    if (end.error) {
      text = "error: " + (end.error.message || end.error);
      ok = false;
    } else if (end.ended) {
      // closed by its user: how a terminal session ends, not a failure
      text = "ended" + (end.duration_ms !== undefined ? " · " + duration(end.duration_ms) : "");
      b.end.dataset.state = "ended";
    } else {
      ok = end.exit_code === 0;
      text = `exit ${end.exit_code}`;
      if (end.signal) text += ` (${end.signal})`;
      if (end.timed_out) text += " · timed out";
      if (end.duration_ms !== undefined) text += ` · ${end.duration_ms} ms`;
    }
    b.end.textContent = text;
    b.end.dataset.ok = String(ok);
    b.end.hidden = false;
  }

  // duration reads a terminal session's length: "850 ms", "12.3 s", "4 min 5 s".
  function duration(ms) {
    if (ms < 1000) return ms + " ms";
    if (ms < 60000) return (Math.floor(ms / 100) / 10).toFixed(1) + " s";
    return `${Math.floor(ms / 60000)} min ${Math.floor((ms % 60000) / 1000)} s`;
  }

  async function runCommand(e) {
    e.preventDefault();
    const sb = state.open;
    const input = tid("sandbox-command-input");
    const command = input.value.trim();
    if (!sb || !command) return;
    showError(tid("sandbox-detail-error"), "");
    input.value = "";
    let res;
    try {
      res = await request("POST", sbPath(sb, "/exec"), { json: { cmd: command }, headers: { Accept: "application/x-ndjson" } });
    } catch (err) {
      showError(tid("sandbox-detail-error"), err.message);
      input.value = command;
      return;
    }
    let b = null;
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg;
        try { msg = JSON.parse(line); } catch (err) { continue; }
        if (msg.exec_id) b = execBlock(msg.exec_id, command, state.handles.get(meId) || "");
        else if (b && msg.stream) addOutput(b, msg);
        else if (b && (msg.exit_code !== undefined || msg.error)) finish(b, msg);
      }
      if (done) break;
    }
    loadFiles();
  }

  // ---------- files ----------

  function joinPath(dir, name) {
    return (dir.endsWith("/") ? dir : dir + "/") + name;
  }

  function parentOf(p) {
    const i = p.replace(/\/+$/, "").lastIndexOf("/");
    return i <= 0 ? "/" : p.slice(0, i);
  }

  async function loadFiles() {
    const sb = state.open;
    if (!sb) return;
    tid("sandbox-files-path").textContent = state.dir;
    try {
      const res = await api("GET", sbPath(sb, "/files/list?path=" + encodeURIComponent(state.dir)));
      const items = ((res && res.items) || []).sort((a, b) => (b.is_dir - a.is_dir) || a.name.localeCompare(b.name));
      showError(tid("sandbox-files-error"), "");
      tid("sandbox-file-list").replaceChildren(...items.map(fileRow));
    } catch (e) {
      showError(tid("sandbox-files-error"), e.message);
      tid("sandbox-file-list").replaceChildren();
    }
  }

  function fileRow(f) {
    const open = el("button", { type: "button", class: "sbx-file-open", "data-testid": "sandbox-file-open" }, f.name + (f.is_dir ? "/" : ""));
    open.addEventListener("click", () => (f.is_dir ? cd(f.path) : viewFile(f)));
    const del = el("button", { type: "button", class: "icon-btn sbx-del", "data-testid": "sandbox-file-delete", "aria-label": "Delete " + f.name, title: "Delete" }, "×");
    del.addEventListener("click", () => removeFile(f, del));
    return el("li", { class: "sbx-file", "data-testid": "sandbox-file", "data-name": f.name, "data-dir": String(!!f.is_dir) },
      open, f.is_dir ? null : el("span", { class: "sbx-file-size" }, mib(f.size)), del);
  }

  function cd(p) {
    state.dir = p;
    tid("sandbox-file-viewer").hidden = true;
    loadFiles();
  }

  async function viewFile(f) {
    const sb = state.open;
    const viewer = tid("sandbox-file-viewer");
    tid("sandbox-file-viewer-path").textContent = f.path;
    const text = tid("sandbox-file-text");
    viewer.hidden = false;
    if (f.size > MAX_VIEW_BYTES) {
      text.textContent = `This file is ${mib(f.size)}; only files up to ${mib(MAX_VIEW_BYTES)} open here.`;
      return;
    }
    try {
      const res = await request("GET", sbPath(sb, "/files?path=" + encodeURIComponent(f.path)));
      const bytes = new Uint8Array(await res.arrayBuffer());
      text.textContent = bytes.includes(0) ? "(binary file)" : new TextDecoder().decode(bytes);
    } catch (e) {
      text.textContent = "";
      showError(tid("sandbox-files-error"), e.message);
    }
  }

  async function removeFile(f, btn) {
    if (btn.dataset.armed !== "1") {
      btn.dataset.armed = "1";
      btn.textContent = "Delete?";
      setTimeout(() => { btn.dataset.armed = ""; btn.textContent = "×"; }, 4000);
      return;
    }
    try {
      await api("DELETE", sbPath(state.open, `/files?recursive=${f.is_dir}&path=` + encodeURIComponent(f.path)));
      loadFiles();
    } catch (e) {
      showError(tid("sandbox-files-error"), e.message);
    }
  }

  async function upload(e) {
    const input = e.target;
    const file = input.files && input.files[0];
    if (!file || !state.open) return;
    try {
      await request("PUT", sbPath(state.open, "/files?path=" + encodeURIComponent(joinPath(state.dir, file.name))), { raw: file });
      loadFiles();
    } catch (err) {
      showError(tid("sandbox-files-error"), err.message);
    } finally {
      input.value = "";
    }
  }

  // ---------- live events ----------

  function onEvent(ev) {
    const p = ev.payload || {};
    if (typeof ev.type !== "string" || !ev.type.startsWith("sandbox.")) return;
    const here = state.open && p.id === state.open.id;
    switch (ev.type) {
      case "sandbox.output":
        if (here) addOutput(execBlock(p.exec_id), p);
        break;
      case "sandbox.exec_started":
        if (here) markTerminal(execBlock(p.exec_id, p.command, state.handles.get(p.by_id) || ""), p.pty);
        break;
      case "sandbox.exec_finished":
        if (here) {
          const b = execBlock(p.exec_id, p.command);
          markTerminal(b, p.pty);
          finish(b, p);
        }
        break;
      case "sandbox.created":
      case "sandbox.state":
        if (here) refreshOpen();
        if (!state.open) loadList();
        break;
    }
  }

  function connect() {
    clearTimeout(state.wsTimer);
    if (state.ws || !state.visible) return;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    let sock;
    try {
      sock = new WebSocket(`${proto}//${location.host}/api/v1/ws`);
    } catch (e) {
      return reconnect();
    }
    state.ws = sock;
    sock.onopen = () => { state.wsAttempt = 0; root.dataset.live = "open"; };
    sock.onmessage = (m) => {
      let frame;
      try { frame = JSON.parse(m.data); } catch (e) { return; }
      for (const ev of (frame && frame.events) || []) onEvent(ev);
    };
    sock.onclose = () => {
      if (state.ws !== sock) return;
      state.ws = null;
      root.dataset.live = "closed";
      reconnect();
    };
  }

  function reconnect() {
    if (!state.visible) return;
    const max = Math.min(15000, 500 * 2 ** state.wsAttempt);
    state.wsAttempt = Math.min(state.wsAttempt + 1, 10);
    state.wsTimer = setTimeout(connect, max / 2 + Math.random() * (max / 2));
  }

  // The panel works only while visible: polling usage and the feed stop
  // when another tab is chosen.
  function setVisible(v) {
    if (v === state.visible) return;
    state.visible = v;
    clearInterval(state.timer);
    if (v) {
      if (state.open) refreshOpen(); else loadList();
      state.timer = setInterval(() => (state.open ? refreshOpen() : loadList()), 5000);
      connect();
    } else {
      clearTimeout(state.wsTimer);
      if (state.ws) {
        const s = state.ws;
        state.ws = null;
        s.close();
      }
      root.dataset.live = "";
    }
  }

  // ---------- wiring ----------

  tid("sandbox-new").addEventListener("click", () => toggleCreate(tid("sandbox-create-form").hidden));
  tid("sandbox-create-cancel").addEventListener("click", () => toggleCreate(false));
  tid("sandbox-create-form").addEventListener("submit", create);
  tid("sandbox-network").addEventListener("change", (e) => {
    for (const n of root.querySelectorAll("[data-sbx-allow]")) n.hidden = e.target.value !== "allow";
  });
  tid("sandbox-refresh").addEventListener("click", loadList);
  tid("sandbox-list").addEventListener("click", (e) => {
    const item = e.target.closest("[data-testid=sandbox-item]");
    const sb = item && state.items.find((s) => s.id === item.dataset.id);
    if (sb) openSandbox(sb);
  });
  tid("sandbox-list").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.matches("[data-testid=sandbox-item]")) e.target.click();
  });
  tid("sandbox-back").addEventListener("click", closeSandbox);
  tid("sandbox-log-older").addEventListener("click", () => loadHistory(state.olderBefore));
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
  for (const b of root.querySelectorAll("[data-sbx-action]")) {
    b.addEventListener("click", () => lifecycle(b.dataset.sbxAction));
  }
  tid("sandbox-command-form").addEventListener("submit", runCommand);
  tid("sandbox-files-up").addEventListener("click", () => cd(parentOf(state.dir)));
  tid("sandbox-files-refresh").addEventListener("click", loadFiles);
  tid("sandbox-upload-input").addEventListener("change", upload);
  tid("sandbox-file-viewer-close").addEventListener("click", () => { tid("sandbox-file-viewer").hidden = true; });

  new MutationObserver(() => setVisible(!panel.hidden)).observe(panel, { attributes: true, attributeFilter: ["hidden"] });
  setVisible(!panel.hidden);

  // A small handle for debugging and browser tests.
  window.BullpenSandboxes = { state, loadList, openSandbox, onEvent };
})();
