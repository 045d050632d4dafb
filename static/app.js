// Bullpen dashboard: live events over a websocket, the composer, threads,
// older messages, new channels and the panel tabs. Plain JS, no build step.
//
// Rule: the server-sanitized message "html" is the only string ever set as
// innerHTML. Names, handles, topics and everything else go in as text.
(() => {
  "use strict";

  const body = document.body;
  if (!body || !body.classList.contains("app")) return;

  const { $, $$, el, api } = window.BP;
  const tid = (id) => `[data-testid="${id}"]`;

  const state = {
    channelId: Number(body.dataset.channelId) || 0,
    meId: Number(body.dataset.meId) || 0,
    lastSeq: Number(body.dataset.lastSeq) || 0,
    threadRootId: 0,
    counted: new Set(), // reply ids already added to their root's reply count
  };

  // ---------- DOM helpers ----------

  function initials(name) {
    const letters = String(name || "").trim().split(/\s+/).filter(Boolean)
      .slice(0, 2).map((w) => Array.from(w)[0]);
    return letters.length ? letters.join("").toUpperCase() : "?";
  }

  // avatarClass must match avatarClass in web/views/models.go.
  function avatarClass(handle) {
    let h = 0;
    for (const ch of String(handle || "")) h = (Math.imul(h, 31) + ch.codePointAt(0)) >>> 0;
    return "avatar avatar-c" + (h % 8);
  }

  const replyLabel = (n) => (n === 1 ? "1 reply" : `${n} replies`);

  function formatTime(d) {
    const now = new Date();
    const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (d.toDateString() === now.toDateString()) return hm;
    const opts = { month: "short", day: "numeric" };
    if (d.getFullYear() !== now.getFullYear()) opts.year = "numeric";
    return `${d.toLocaleDateString([], opts)}, ${hm}`;
  }

  // localizeTimes rewrites server-rendered UTC clocks in the browser's zone.
  function localizeTimes(root) {
    for (const t of $$("time[datetime]", root)) {
      const d = new Date(t.getAttribute("datetime"));
      if (isNaN(d)) continue;
      t.textContent = formatTime(d);
      t.title = d.toLocaleString();
    }
  }

  function timeEl(iso, cls, testid) {
    const t = el("time", { class: cls, datetime: iso || "", "data-testid": testid });
    const d = new Date(iso);
    if (!isNaN(d)) {
      t.textContent = formatTime(d);
      t.title = d.toLocaleString();
    }
    return t;
  }

  const showError = window.BP.showError;
  const hideError = (node) => window.BP.showError(node, "");

  const nearBottom = (s) => s.scrollHeight - s.scrollTop - s.clientHeight < 80;
  const toBottom = (s) => { s.scrollTop = s.scrollHeight; };

  // ---------- messages ----------

  function renderMessage(m, testid) {
    const a = m.author || {};
    const name = a.display_name || a.handle || "unknown";
    const agent = a.kind === "agent";
    const li = el("li", {
      class: "msg" + (agent ? " msg-agent" : "") + (m.deleted ? " msg-deleted" : ""),
      "data-testid": testid,
      "data-id": Number(m.id),
      "data-thread-id": Number(m.thread_id) || 0,
      "data-author-id": Number(a.id) || 0,
      "data-reply-count": Number(m.reply_count) || 0,
    });
    li.append(el("span", { class: avatarClass(a.handle) + (agent ? " avatar-agent" : ""), "aria-hidden": "true" }, initials(name)));
    const meta = el("div", { class: "msg-meta" },
      el("span", { class: "msg-author", "data-testid": "message-author" }, name),
      el("span", { class: "msg-handle", "data-testid": "message-handle" }, "@" + (a.handle || "")));
    if (agent) meta.append(el("span", { class: "badge badge-agent", "data-testid": "message-kind-badge" }, "agent"));
    meta.append(timeEl(m.created_at, "msg-time", "message-time"));
    if ((m.edited_at || m.edited) && !m.deleted) {
      meta.append(el("span", { class: "msg-edited", "data-testid": "message-edited" }, "(edited)"));
    }
    if (Number(m.turn_id)) {
      meta.append(el("a", { class: "msg-why", href: `/turns/${Number(m.turn_id)}`, "data-testid": "message-why", title: "Open this turn in the inspector" }, "why did it say this?"));
    }
    const main = el("div", { class: "msg-main" }, meta);
    if (m.deleted) {
      main.append(el("div", { class: "msg-body msg-body-deleted", "data-testid": "message-deleted" }, "message deleted"));
    } else {
      const b = el("div", { class: "msg-body", "data-testid": "message-body" });
      b.innerHTML = m.html || ""; // sanitized by the server
      main.append(b);
    }
    if (!Number(m.thread_id)) {
      if (testid === "message") { // chatlive.js fills these, as chat.templ renders them
        main.append(el("ol", { class: "msg-previews", "data-testid": "reply-previews", hidden: "" }),
          el("div", { class: "live-line", "data-testid": "live-line", "aria-live": "polite", hidden: "" }));
      }
      const n = Number(m.reply_count) || 0;
      const link = el("a", { href: `#thread-${Number(m.id)}`, class: "msg-replies", "data-testid": "message-replies", "data-thread-open": Number(m.id) }, replyLabel(n));
      link.hidden = n === 0;
      main.append(el("div", { class: "msg-foot" }, link));
      if (!m.deleted) {
        main.append(el("button", { type: "button", class: "msg-action", "data-testid": "message-reply", "data-thread-open": Number(m.id), title: "Reply in thread" }, "Reply"),
          rememberButton());
      }
    } else if (!m.deleted) {
      main.append(rememberButton()); // a reply is remembered like any message (remember.js)
    }
    li.append(main);
    return li;
  }

  const rememberButton = () =>
    el("button", { type: "button", class: "msg-action msg-remember", "data-testid": "message-remember", title: "Remember this for an agent" }, "Remember");

  // insertSorted puts node into list in message-id order, unless a message
  // with the same id is already there. It reports whether it inserted.
  function insertSorted(list, node) {
    const id = Number(node.dataset.id);
    if (list.querySelector(`.msg[data-id="${id}"]`)) return false;
    let after = list.lastElementChild;
    while (after && Number(after.dataset.id) > id) after = after.previousElementSibling;
    if (after) after.after(node); else list.prepend(node);
    return true;
  }

  function addTopLevel(m, own) {
    const list = $(tid("message-list"));
    const scroller = $(tid("message-scroll"));
    if (!list || !scroller) return;
    const stick = own || nearBottom(scroller);
    if (!insertSorted(list, renderMessage(m, "message"))) return;
    const empty = $(tid("message-empty"));
    if (empty) empty.hidden = true;
    if (stick) toBottom(scroller);
  }

  function setReplyCount(rootId, n) {
    for (const root of $$(`.msg[data-id="${rootId}"]`)) {
      root.dataset.replyCount = String(n);
      const link = $(tid("message-replies"), root);
      if (link) {
        link.textContent = replyLabel(n);
        link.hidden = n === 0;
      }
    }
    if (state.threadRootId === rootId) {
      $(tid("thread-reply-count")).textContent = n ? replyLabel(n) : "";
    }
  }

  function replyCount(rootId) {
    const root = $(`.msg[data-id="${rootId}"]`);
    return root ? Number(root.dataset.replyCount) || 0 : 0;
  }

  function addReply(m) {
    const rootId = Number(m.thread_id);
    if (!state.counted.has(m.id)) {
      state.counted.add(m.id);
      setReplyCount(rootId, replyCount(rootId) + 1);
    }
    if (state.threadRootId === rootId) {
      const scroller = $(tid("thread-scroll"));
      const stick = nearBottom(scroller);
      insertSorted($(tid("thread-replies")), renderMessage(m, "thread-message"));
      if (stick) toBottom(scroller);
    }
  }

  // onMessage handles a new message from an event or from our own POST.
  function onMessage(m, own) {
    if (!m || !m.id) return;
    if (Number(m.channel_id) === state.channelId) {
      if (Number(m.thread_id)) addReply(m); else addTopLevel(m, own);
      return;
    }
    const author = (m.author && m.author.id) || 0;
    if (!Number(m.thread_id) && author !== state.meId) bumpUnread(Number(m.channel_id));
  }

  // onMessageChanged re-renders an edited or deleted message wherever shown.
  function onMessageChanged(m) {
    if (!m || !m.id) return;
    for (const old of $$(`.msg[data-id="${Number(m.id)}"]`)) {
      const fresh = renderMessage(m, old.dataset.testid);
      for (const keep of ["reply-previews", "live-line"]) { // an edit keeps the answers and the live line
        const o = $(tid(keep), old), f = $(tid(keep), fresh);
        if (o && f) f.replaceWith(o);
      }
      if (!m.reply_count && old.dataset.replyCount) {
        fresh.dataset.replyCount = old.dataset.replyCount;
      }
      old.replaceWith(fresh);
      const n = Number(fresh.dataset.replyCount) || 0;
      const link = $(tid("message-replies"), fresh);
      if (link) { link.textContent = replyLabel(n); link.hidden = n === 0; }
    }
  }

  // ---------- sidebar ----------

  function channelLink(id) {
    return $(`.channel-link[data-channel-id="${Number(id)}"]`);
  }

  function bumpUnread(channelId) {
    const link = channelLink(channelId);
    const badge = link && $(tid("channel-unread"), link);
    if (!badge) return;
    badge.textContent = String((Number(badge.textContent) || 0) + 1);
    badge.hidden = false;
  }

  // dmPeers names a new DM's other members from the member list, as the
  // server does for the page: their names, and their @handles beside.
  function dmPeers(c) {
    const names = [], handles = [];
    // The event is written before the members join; the name holds them.
    const m = /^dm-(\d+)-(\d+)$/.exec(c.name || "");
    for (const id of c.member_ids || (m ? [m[1], m[2]] : [])) {
      if (Number(id) === state.meId) continue;
      const row = $(`[data-testid="member"][data-member-id="${Number(id)}"]`);
      if (!row) continue;
      names.push($(tid("member-name"), row).textContent);
      handles.push("@" + row.dataset.handle);
    }
    return { names: names.join(", "), handles: handles.join(", ") };
  }

  function onChannelCreated(c) {
    if (!c || !c.id || channelLink(c.id)) return;
    const dm = c.kind === "dm";
    const list = $(tid(dm ? "dm-list" : "channel-list"));
    if (!list) return;
    const peers = dm ? dmPeers(c) : null;
    const label = (peers && peers.names) || c.name;
    const a = el("a", {
      href: "/c/" + encodeURIComponent(c.name),
      class: "channel-link" + (c.joined ? "" : " not-joined"),
      "data-testid": dm ? "dm-link" : "channel-link",
      "data-channel-id": Number(c.id),
      "data-channel-name": c.name,
      "data-kind": c.kind || "public",
      title: c.topic || null,
    },
    dm ? el("span", { class: avatarClass(label) + " avatar-xs", "aria-hidden": "true" }, initials(label))
      : el("span", { class: "channel-prefix", "aria-hidden": "true" }, "#"),
    peers && peers.handles
      ? el("span", { class: "channel-names" }, el("span", { class: "channel-name" }, label),
        el("span", { class: "channel-handle", "data-testid": "dm-handle" }, peers.handles))
      : el("span", { class: "channel-name" }, label),
    el("span", { class: "unread", "data-testid": "channel-unread", hidden: "" }, "0"));
    const li = el("li", null, a);
    const next = Array.from(list.children).find((x) => {
      const n = $(".channel-link", x);
      return n && n.dataset.channelName.localeCompare(c.name) > 0;
    });
    list.insertBefore(li, next || null);
    if (dm) { const e = $(tid("dm-empty")); if (e) e.hidden = true; }
  }

  function onMembership(p, ev) {
    if (!p || !p.member || Number(p.member.id) !== state.meId) return;
    const link = channelLink(p.channel_id);
    if (link) link.classList.toggle("not-joined", ev.type === "channel.left");
  }

  function renderMember(m, statusOf) {
    const agent = m.kind === "agent";
    const name = m.display_name || m.handle || "unknown";
    const wrap = el("span", { class: "avatar-wrap" },
      el("span", { class: `${avatarClass(m.handle)} avatar-xs${agent ? " avatar-agent" : ""}`, "aria-hidden": "true" }, initials(name)));
    if (agent) wrap.append(el("span", { class: "status-dot", "data-testid": "member-status", "data-status": statusOf || "unknown" }));
    return el("li", {
      class: "member" + (m.muted ? " member-muted" : ""),
      "data-testid": "member",
      "data-member-id": Number(m.id),
      "data-kind": m.kind || "",
      "data-handle": m.handle || "",
      title: "@" + (m.handle || "") + (m.title ? " · " + m.title : ""),
    }, wrap,
    el("span", { class: "member-names" },
      el("span", { class: "member-name", "data-testid": "member-name" }, name),
      el("span", { class: "member-handle", "data-testid": "member-handle" }, "@" + (m.handle || ""))),
    m.muted ? el("span", { class: "badge badge-muted", "data-testid": "member-muted" }, "muted") : null,
    el("span", { class: "badge badge-" + (agent ? "agent" : "human"), "data-testid": "member-kind-badge" }, m.kind || ""));
  }

  function upsertMember(m) {
    if (!m || !m.id) return;
    const list = $(tid("member-list"));
    if (!list) return;
    const old = $(`[data-testid="member"][data-member-id="${Number(m.id)}"]`, list);
    const dot = old && $(tid("member-status"), old);
    const row = renderMember(m, dot && dot.dataset.status);
    if (old) old.replaceWith(row); else list.append(row);
    const count = $(tid("member-count"));
    if (count) count.textContent = String(list.children.length);
    if (Number(m.id) === state.meId) {
      const me = $(tid("me-name"));
      if (me) me.textContent = m.display_name || m.handle;
    }
  }

  // ---------- events ----------

  // handlers by event type; the timeline shows every stored one.
  const handlers = {
    "message.posted": (p) => onMessage(p, false),
    "message.edited": onMessageChanged,
    "message.deleted": onMessageChanged,
    "channel.created": onChannelCreated,
    "channel.joined": onMembership,
    "channel.left": onMembership,
    "member.created": upsertMember,
    "member.updated": upsertMember,
  };

  function handleEvent(ev) {
    if (!ev || typeof ev.type !== "string") return;
    const seq = Number(ev.seq) || 0;
    if (seq) {
      if (seq <= state.lastSeq) return; // replayed after a reconnect: seen already
      state.lastSeq = seq;
      body.dataset.lastSeq = String(seq);
    }
    const h = handlers[ev.type];
    try {
      if (h) h(ev.payload || {}, ev);
    } catch (e) {
      console.error("bullpen: handling", ev.type, e);
    }
    // The other scripts (timeline, chat live line, wiki) hear every event,
    // stored or ephemeral, from here: one websocket per page.
    document.dispatchEvent(new CustomEvent("bullpen:event", { detail: ev }));
  }

  // ---------- websocket ----------

  const ws = { sock: null, attempt: 0, timer: 0, openedAt: 0 };

  function setConn(s) {
    const c = $(tid("conn-status"));
    if (!c) return;
    c.dataset.state = s;
    $(".conn-label", c).textContent = { connecting: "Connecting…", open: "Live", closed: "Reconnecting…", offline: "Offline" }[s];
    body.dataset.ws = s;
  }

  function connect() {
    clearTimeout(ws.timer);
    if (ws.sock) return;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    let sock;
    try {
      sock = new WebSocket(`${proto}//${location.host}/api/v1/ws?since=${state.lastSeq}`);
    } catch (e) {
      reconnectLater();
      return;
    }
    ws.sock = sock;
    sock.onopen = () => { ws.openedAt = Date.now(); setConn("open"); };
    sock.onmessage = (e) => {
      let frame;
      try { frame = JSON.parse(e.data); } catch (err) { return; }
      for (const ev of (frame && frame.events) || []) handleEvent(ev);
    };
    sock.onclose = () => {
      if (ws.sock !== sock) return;
      ws.sock = null;
      // a connection that stayed up a while resets the backoff
      if (ws.openedAt && Date.now() - ws.openedAt > 10000) ws.attempt = 0;
      ws.openedAt = 0;
      setConn("closed");
      reconnectLater();
    };
  }

  function reconnectLater() {
    clearTimeout(ws.timer);
    const max = Math.min(15000, 500 * 2 ** ws.attempt);
    ws.attempt = Math.min(ws.attempt + 1, 10);
    ws.timer = setTimeout(connect, max / 2 + Math.random() * (max / 2));
  }

  // ---------- composers ----------

  function autosize(t) {
    t.style.height = "auto";
    t.style.height = Math.min(t.scrollHeight, 200) + "px";
  }

  // The most characters a message may have, as the server counts them
  // (code points); the composers say so before Send, in words.
  const maxChars = Number(document.body.dataset.maxMessage) || 16000;
  const fmt = (n) => n.toLocaleString("en-US");
  function charCount(s) {
    if (s.length < maxChars * 0.9) return s.length; // short: code points ≤ UTF-16 units, no note either way
    let n = 0;
    for (const _ of s) n++;
    return n;
  }

  // checkLength shows the composer's length note and reports whether the
  // text fits one message: a count from 90% of the limit, a warning with
  // what to do over it, while Send stays off.
  function checkLength(input, note, send) {
    const n = charCount(input.value);
    const over = n > maxChars;
    send.disabled = over;
    note.hidden = n < maxChars * 0.9;
    note.toggleAttribute("data-over", over);
    note.textContent = over
      ? `This message is ${fmt(n)} characters long; a message holds at most ${fmt(maxChars)}. ` +
        `Cut ${fmt(n - maxChars)} characters, or put the long part in a wiki page and link to it.`
      : `${fmt(n)} of ${fmt(maxChars)} characters`;
    return !over;
  }

  function wireComposer(form, threadId) {
    if (!form) return;
    const input = $("textarea", form);
    const send = $('button[type="submit"]', form);
    const err = $(".form-error", form);
    const note = $(".composer-limit", form);
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    input.addEventListener("input", () => { autosize(input); hideError(err); if (note) checkLength(input, note, send); });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = input.value;
      if (!text.trim() || form.dataset.busy || (note && !checkLength(input, note, send))) return;
      form.dataset.busy = "1";
      send.disabled = true;
      input.readOnly = true;
      hideError(err);
      try {
        const m = await api("POST", `/api/v1/channels/${state.channelId}/messages`, { body: text, thread_id: threadId() });
        input.value = "";
        autosize(input);
        if (note) checkLength(input, note, send);
        onMessage(m, true);
      } catch (ex) {
        showError(err, ex.message);
      } finally {
        delete form.dataset.busy;
        send.disabled = false;
        input.readOnly = false;
        input.focus();
      }
    });
  }

  // ---------- thread pane ----------

  async function openThread(id) {
    id = Number(id);
    const pane = $(tid("thread-pane"));
    if (!id || !pane) return;
    state.threadRootId = id;
    pane.dataset.rootId = String(id);
    pane.hidden = false;
    $(tid("thread-root")).replaceChildren();
    $(tid("thread-replies")).replaceChildren();
    $(tid("thread-reply-count")).textContent = "";
    hideError($(tid("thread-error")));
    $(tid("thread-loading")).hidden = false;
    if (location.hash !== `#thread-${id}`) history.replaceState(null, "", `#thread-${id}`);
    try {
      const data = await api("GET", `/api/v1/messages/${id}/thread`);
      if (state.threadRootId !== id) return;
      $(tid("thread-root")).replaceChildren(renderMessage(data.root, "thread-message"));
      const replies = $(tid("thread-replies"));
      for (const r of data.replies || []) {
        state.counted.add(r.id);
        insertSorted(replies, renderMessage(r, "thread-message"));
      }
      setReplyCount(id, Math.max(Number(data.root.reply_count) || 0, replies.children.length));
      toBottom($(tid("thread-scroll")));
      $(tid("thread-input")).focus();
    } catch (e) {
      if (state.threadRootId === id) showError($(tid("thread-error")), e.message);
    } finally {
      if (state.threadRootId === id) $(tid("thread-loading")).hidden = true;
    }
  }

  function closeThread() {
    const pane = $(tid("thread-pane"));
    if (!pane || pane.hidden) return;
    pane.hidden = true;
    pane.dataset.rootId = "";
    state.threadRootId = 0;
    if (location.hash.startsWith("#thread-")) history.replaceState(null, "", location.pathname + location.search);
  }

  function threadFromHash() {
    const m = /^#thread-(\d+)$/.exec(location.hash);
    if (m) openThread(m[1]);
  }

  // ---------- older messages ----------

  async function loadOlder(btn) {
    const cursor = btn.dataset.cursor;
    if (!cursor || btn.disabled) return;
    btn.disabled = true;
    const err = $(tid("composer-error"));
    try {
      const data = await api("GET", `/api/v1/channels/${state.channelId}/messages?before=${encodeURIComponent(cursor)}&limit=50`);
      const list = $(tid("message-list"));
      const scroller = $(tid("message-scroll"));
      const height = scroller.scrollHeight;
      const top = scroller.scrollTop;
      for (const m of data.items || []) {
        if (!Number(m.thread_id)) insertSorted(list, renderMessage(m, "message"));
      }
      scroller.scrollTop = top + (scroller.scrollHeight - height);
      btn.dataset.cursor = data.next_cursor || "";
      btn.hidden = !data.next_cursor;
      if (list.children.length) $(tid("message-empty")).hidden = true;
    } catch (e) {
      showError(err, "Could not load older messages: " + e.message);
    } finally {
      btn.disabled = false;
    }
  }

  // ---------- new channel ----------

  function wireNewChannel() {
    const form = $(tid("new-channel-form"));
    const toggle = $(tid("new-channel-toggle"));
    if (!form || !toggle) return;
    const err = $(tid("new-channel-error"));
    const show = (open) => {
      form.hidden = !open;
      toggle.setAttribute("aria-expanded", String(open));
      if (open) $(tid("new-channel-name")).focus(); else hideError(err);
    };
    toggle.addEventListener("click", () => show(form.hidden));
    $(tid("new-channel-cancel")).addEventListener("click", () => show(false));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const submit = $(tid("new-channel-submit"));
      submit.disabled = true;
      hideError(err);
      try {
        const c = await api("POST", "/api/v1/channels", {
          name: $(tid("new-channel-name")).value.trim(),
          topic: $(tid("new-channel-topic")).value.trim(),
        });
        location.assign("/c/" + encodeURIComponent(c.name));
      } catch (ex) {
        showError(err, ex.message);
        submit.disabled = false;
      }
    });
  }

  // ---------- panel tabs ----------

  function selectTab(id, remember) {
    const tabs = $$("[data-panel-tab]");
    if (!tabs.some((t) => t.dataset.panelTab === id)) return;
    for (const t of tabs) t.setAttribute("aria-selected", String(t.dataset.panelTab === id));
    for (const s of $$("[data-panel]")) s.hidden = s.dataset.panel !== id;
    if (remember) try { localStorage.setItem("bullpen.panel", id); } catch (e) { /* private mode */ }
  }

  function wireTabs() {
    const tabs = $$("[data-panel-tab]");
    for (const t of tabs) {
      t.addEventListener("click", () => selectTab(t.dataset.panelTab, true));
      t.addEventListener("keydown", (e) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
        if (!step) return;
        const next = tabs[(tabs.indexOf(t) + step + tabs.length) % tabs.length];
        next.focus();
        selectTab(next.dataset.panelTab, true);
      });
    }
    let saved = null;
    try { saved = localStorage.getItem("bullpen.panel"); } catch (e) { /* private mode */ }
    if (saved) selectTab(saved, false);
  }

  // ---------- start ----------

  document.addEventListener("click", (e) => {
    const opener = e.target.closest("[data-thread-open]");
    if (opener) {
      e.preventDefault();
      openThread(opener.dataset.threadOpen);
      return;
    }
    if (e.target.closest(tid("thread-close"))) closeThread();
    const older = e.target.closest(tid("load-older"));
    if (older) loadOlder(older);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !e.defaultPrevented) closeThread();
  });
  window.addEventListener("hashchange", threadFromHash);
  window.addEventListener("online", () => { if (!ws.sock) connect(); });

  wireComposer($(tid("composer")), () => 0);
  wireComposer($(tid("thread-composer")), () => state.threadRootId);
  wireNewChannel();
  wireTabs();
  localizeTimes(document);
  const scroller = $(tid("message-scroll"));
  if (scroller) toBottom(scroller);
  threadFromHash();
  if (location.protocol === "http:" || location.protocol === "https:") connect();
  else setConn("offline");

  // A small handle for debugging and browser tests.
  // chatlive.js draws reply previews with the same avatars.
  window.Bullpen = { handleEvent, openThread, lastSeq: () => state.lastSeq, avatarClass, initials };
})();
