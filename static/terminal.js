// Bullpen sandbox terminal: a login shell in the open sandbox on a real
// terminal (a PTY of the window's size, resized with it), drawn by the
// vendored xterm.js, over the exec websocket (GET
// /api/v1/sandboxes/:id/exec/ws, first message with "pty"). Every key goes
// to the shell as typed (raw mode: vim, top and Ctrl-C work), and the
// terminal's output comes back as the socket's output messages.
// xterm.js (about 500 KB) is not part of the page: the first opening of a
// terminal fetches it, from the fingerprinted URLs the page gives on this
// script's data-xterm-* attributes. Plain JS, no build step.
(() => {
  "use strict";

  const assets = document.currentScript ? document.currentScript.dataset : {};
  const root = document.querySelector("[data-sandboxes]");
  if (!root) return;
  const { showError } = window.BP;
  const tid = (id) => root.querySelector(`[data-testid="${id}"]`);
  const wrap = tid("sandbox-terminal-wrap");
  const box = tid("sandbox-terminal");
  const openBtn = tid("sandbox-terminal-open");
  const restartBtn = tid("sandbox-terminal-restart");
  const closeBtn = tid("sandbox-terminal-close");
  // The shell: bash when the image has it, else sh, as a login shell.
  const SHELL = ["/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"];

  const state = { sb: null, term: null, fit: null, ws: null, live: false, resizing: 0 };

  // loadXterm fetches the terminal library once: its stylesheet and its
  // two scripts, in parallel; the promise settles when all three loaded.
  let xterm = null;
  function loadXterm() {
    if (typeof window.Terminal === "function") return Promise.resolve();
    if (xterm) return xterm;
    const load = (tag, attrs) => new Promise((resolve, reject) => {
      const el = document.createElement(tag);
      Object.assign(el, attrs);
      el.onload = resolve;
      el.onerror = () => { xterm = null; reject(new Error("could not load " + (attrs.src || attrs.href))); };
      document.head.appendChild(el);
    });
    xterm = Promise.all([
      load("link", { rel: "stylesheet", href: assets.xtermCss }),
      load("script", { src: assets.xtermJs, async: false }),
      load("script", { src: assets.xtermFit, async: false }),
    ]);
    return xterm;
  }

  function ensureTerm() {
    if (state.term) return state.term;
    const term = new window.Terminal({
      cursorBlink: true, fontSize: 13, rows: 16, scrollback: 2000,
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
      theme: { background: "#0f172a", foreground: "#e2e8f0" },
    });
    if (window.FitAddon && window.FitAddon.FitAddon) {
      state.fit = new window.FitAddon.FitAddon();
      term.loadAddon(state.fit);
    }
    term.open(box);
    term.onData((data) => { if (state.live) send({ stdin: data }); });
    term.onResize(onResize);
    state.term = term;
    return term;
  }

  const fit = () => { if (state.fit && !wrap.hidden) try { state.fit.fit(); } catch (e) { /* not laid out yet */ } };

  function decode(m) {
    if (typeof m.data === "string") return m.data;
    if (m.data_b64) return new TextDecoder().decode(Uint8Array.from(atob(m.data_b64), (c) => c.charCodeAt(0)));
    return "";
  }

  // onMessage writes one server message: output, or the shell's end.
  function onMessage(ev) {
    let m;
    try { m = JSON.parse(ev.data); } catch (e) { return; }
    const term = state.term;
    if (m.exec_id) { root.dataset.terminalExec = m.exec_id; return; }
    if (m.stream) {
      term.write(decode(m)); // a PTY joins stdout and stderr as the terminal shows them
      return;
    }
    if (m.error && m.exit_code === undefined && state.live) {
      showError(tid("sandbox-detail-error"), "Terminal: " + (m.error.message || m.error.code));
      return;
    }
    if (m.error) term.write(`\r\n\x1b[31m[${m.error.message || m.error.code}]\x1b[0m\r\n`);
    else if (m.exit_code !== undefined) term.write(`\r\n\x1b[90m[shell ended: exit ${m.exit_code}]\x1b[0m\r\n`);
  }

  function send(msg) {
    if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
  }

  // onResize tells the shell's terminal its new size, once the window
  // settles.
  function onResize(size) {
    if (!state.live) return;
    clearTimeout(state.resizing);
    state.resizing = setTimeout(() => send({ resize: { rows: size.rows, cols: size.cols } }), 150);
  }

  function connect() {
    const sb = state.sb;
    if (!sb) return;
    disconnect();
    const term = ensureTerm();
    term.reset();
    fit();
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/api/v1/sandboxes/${encodeURIComponent(sb.id)}/exec/ws`);
    state.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify({ cmd: SHELL, env: { TERM: "xterm-256color" }, pty: { rows: term.rows, cols: term.cols } }));
      state.live = true;
      root.dataset.terminal = "open";
      term.focus();
    };
    ws.onmessage = onMessage;
    ws.onclose = () => {
      if (state.ws !== ws) return;
      state.ws = null;
      state.live = false;
      root.dataset.terminal = "closed";
    };
    ws.onerror = () => showError(tid("sandbox-detail-error"), "The terminal lost its connection to the server.");
  }

  function disconnect() {
    const ws = state.ws;
    state.ws = null;
    state.live = false;
    if (ws) ws.close();
    root.dataset.terminal = "";
  }

  function show(on) {
    wrap.hidden = !on;
    openBtn.hidden = on;
    restartBtn.hidden = !on;
    closeBtn.hidden = !on;
    if (on) {
      loadXterm().then(() => {
        if (wrap.hidden) return; // closed while the library loaded
        connect();
        fit();
      }, (e) => showError(tid("sandbox-detail-error"), "The terminal could not load: " + e.message));
    } else {
      disconnect();
    }
  }

  openBtn.addEventListener("click", () => show(true));
  closeBtn.addEventListener("click", () => show(false));
  restartBtn.addEventListener("click", connect);
  root.addEventListener("bp:sandbox-open", (e) => {
    if (state.sb && state.sb.id !== e.detail.id) show(false);
    state.sb = e.detail;
    openBtn.disabled = e.detail.state !== "running";
  });
  root.addEventListener("bp:sandbox-close", () => { show(false); state.sb = null; });
  window.addEventListener("resize", fit);
  window.addEventListener("bp:layout", () => setTimeout(fit, 0));
})();
