// Bullpen wiki panel: page list and search, reading view with backlinks,
// editor with preview and conflict handling, history with diffs. Plain JS,
// no build step; it talks to /api/v1/wiki.
//
// Rule: only server-sanitized HTML (a page's "html", the preview's "html",
// a search hit's "snippet_html") is ever set as innerHTML. Titles, tags,
// names, summaries and diff lines go in as text.
(() => {
  "use strict";

  const root = document.querySelector("[data-wiki]");
  if (!root) return;

  const { el, api } = window.BP;
  const $$ = (sel) => window.BP.$$(sel, root);
  const tid = (id) => root.querySelector(`[data-testid="${id}"]`);
  const API = "/api/v1/wiki";

  const state = {
    view: "list",
    page: null, // the page being read, as the API returned it
    edit: null, // { slug, base } while editing; slug "" for a new page
    searchTimer: 0,
  };

  const when = (iso) => {
    const d = new Date(iso);
    return isNaN(d) ? "" : d.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  };

  const page = (slug) => `${API}/pages/${encodeURIComponent(slug)}`;

  const showError = (msg) => window.BP.showError(tid("wiki-error"), msg);

  function show(view) {
    state.view = view;
    for (const s of $$("[data-wiki-view]")) s.hidden = s.dataset.wikiView !== view;
    showError("");
  }

  // ---------- list and search ----------

  async function loadList() {
    const q = tid("wiki-search").value.trim();
    const tag = tid("wiki-tag").value;
    const list = tid("wiki-list");
    try {
      const params = new URLSearchParams();
      if (tag) params.set("tag", tag);
      let items;
      if (q) {
        params.set("q", q);
        params.set("prefix", "1");
        items = (await api("GET", `${API}/search?${params}`)).items;
      } else {
        params.set("sort", "updated");
        items = (await api("GET", `${API}/pages?${params}`)).items;
      }
      list.replaceChildren(...items.map((p) => listItem(p, q !== "")));
      tid("wiki-empty").hidden = items.length > 0 || q !== "" || tag !== "";
      if (q && items.length === 0) list.append(el("li", { class: "wiki-hint" }, "No page matches."));
      loadSide();
    } catch (e) {
      showError(e.message);
    }
  }

  function listItem(p, hit) {
    const li = el("li", { class: "wiki-item", "data-testid": "wiki-item", "data-slug": p.slug },
      el("a", { href: `/wiki/${encodeURIComponent(p.slug)}`, "data-wiki-slug": p.slug, class: "wiki-item-title" }, p.title));
    if (hit) {
      const snip = el("p", { class: "wiki-snippet", "data-testid": "wiki-snippet" });
      snip.innerHTML = p.snippet_html || ""; // escaped by the server, matches in <mark>
      li.append(snip);
    } else {
      li.append(el("p", { class: "wiki-hint" }, `rev ${p.revision} · ${p.updated_by_handle ? "@" + p.updated_by_handle + " · " : ""}${when(p.updated_at)}`));
    }
    if (p.tags && p.tags.length) li.append(tagList(p.tags));
    return li;
  }

  function tagList(tags) {
    return el("ul", { class: "wiki-tags" }, ...tags.map((t) => el("li", { class: "wiki-tag" }, t)));
  }

  async function loadSide() {
    try {
      const [wanted, tags] = await Promise.all([api("GET", `${API}/wanted?limit=50`), api("GET", `${API}/tags`)]);
      tid("wiki-wanted").replaceChildren(...wanted.items.map((w) =>
        el("li", { class: "wiki-item", "data-testid": "wiki-wanted-item" },
          el("a", { href: "#", "data-wiki-create": w.label || w.target, class: "wiki-missing" }, w.label || w.target),
          el("span", { class: "wiki-hint" }, ` linked from ${w.from.map((f) => f.title).join(", ")}`))));
      const sel = tid("wiki-tag");
      const cur = sel.value;
      sel.replaceChildren(el("option", { value: "" }, "All tags"),
        ...tags.items.map((t) => el("option", { value: t.tag }, `${t.tag} (${t.count})`)));
      sel.value = cur;
    } catch (e) { /* the list itself shows errors */ }
  }

  // ---------- reading ----------

  async function openPage(slug, quiet) {
    try {
      const [p, back] = await Promise.all([api("GET", `${page(slug)}?deleted=1`), api("GET", `${page(slug)}/backlinks`)]);
      state.page = p;
      tid("wiki-title").textContent = p.title;
      tid("wiki-meta").textContent = `Revision ${p.revision} · edited by @${p.updated_by_handle || "?"} · ${when(p.updated_at)}`;
      tid("wiki-page-tags").replaceChildren(...(p.tags || []).map((t) => el("li", { class: "wiki-tag" }, t)));
      tid("wiki-body").innerHTML = p.html || ""; // sanitized by the server
      tid("wiki-backlinks").replaceChildren(...(back.items.length ? back.items.map((b) =>
        el("li", {}, el("a", { href: `/wiki/${encodeURIComponent(b.slug)}`, "data-wiki-slug": b.slug }, b.title)))
        : [el("li", { class: "wiki-hint" }, "No page links here yet.")]));
      notice(p.deleted ? "This page is deleted." : "", p.deleted ? "Undelete" : "", undelete);
      tid("wiki-edit").disabled = tid("wiki-delete").disabled = p.deleted;
      if (!quiet) show("page");
      history.replaceState(null, "", `#wiki/${encodeURIComponent(p.slug)}`);
    } catch (e) {
      if (e.status === 404 && !quiet) return startEdit(null, slug);
      showError(e.message);
    }
  }

  function notice(text, action, fn) {
    const n = tid("wiki-notice");
    n.hidden = !text;
    tid("wiki-notice-text").textContent = text;
    const b = tid("wiki-notice-action");
    b.hidden = !action;
    b.textContent = action;
    b.onclick = fn;
  }

  async function undelete() {
    try {
      await api("POST", `${page(state.page.slug)}/undelete`);
      openPage(state.page.slug);
    } catch (e) { showError(e.message); }
  }

  async function remove() {
    const p = state.page;
    if (!p || !window.confirm(`Delete “${p.title}”? It can be undeleted later.`)) return;
    try {
      await api("DELETE", page(p.slug));
      openPage(p.slug);
    } catch (e) { showError(e.message); }
  }

  // ---------- editing ----------

  // startEdit opens the editor on page p, or on a new page (titled title).
  function startEdit(p, title) {
    state.edit = { slug: p ? p.slug : "", base: p ? p.revision : 0 };
    tid("wiki-edit-title").value = p ? p.title : (title || "");
    tid("wiki-edit-tags").value = p ? (p.tags || []).join(", ") : "";
    tid("wiki-edit-body").value = p ? p.body : "";
    tid("wiki-edit-summary").value = "";
    tid("wiki-conflict").hidden = true;
    tid("wiki-save").textContent = "Save";
    writeTab("write");
    show("edit");
    tid(p ? "wiki-edit-body" : "wiki-edit-title").focus();
  }

  function writeTab(which) {
    for (const t of $$("[data-wiki-tab]")) t.setAttribute("aria-selected", String(t.dataset.wikiTab === which));
    tid("wiki-edit-body").hidden = which !== "write";
    tid("wiki-preview").hidden = which !== "preview";
    if (which === "preview") preview();
  }

  async function preview() {
    const out = tid("wiki-preview");
    out.textContent = "Rendering…";
    try {
      const r = await api("POST", `${API}/preview`, { body: tid("wiki-edit-body").value });
      out.innerHTML = r.html; // sanitized by the server
    } catch (e) {
      out.textContent = e.message;
    }
  }

  const tagsOf = (s) => s.split(",").map((t) => t.trim()).filter(Boolean);

  async function save(ev) {
    ev.preventDefault();
    const btn = tid("wiki-save");
    const data = {
      title: tid("wiki-edit-title").value,
      body: tid("wiki-edit-body").value,
      tags: tagsOf(tid("wiki-edit-tags").value),
      summary: tid("wiki-edit-summary").value,
    };
    btn.disabled = true;
    try {
      const p = state.edit.slug
        ? await api("PUT", page(state.edit.slug), { ...data, base_revision: state.edit.base })
        : await api("POST", `${API}/pages`, data);
      state.edit = null;
      await openPage(p.slug);
      loadList();
    } catch (e) {
      if (e.status === 409 && e.body && e.body.current) conflict(e.message, e.body.current);
      else showError(e.message);
    } finally {
      btn.disabled = false;
    }
  }

  // conflict keeps what the user typed, shows the current page beside it,
  // and moves the edit onto the current revision so a save re-bases it.
  function conflict(msg, cur) {
    state.edit = { slug: cur.slug, base: cur.revision };
    tid("wiki-conflict-text").textContent = msg;
    tid("wiki-conflict-theirs").value = cur.body;
    tid("wiki-conflict").hidden = false;
    tid("wiki-conflict-take").onclick = () => {
      tid("wiki-edit-title").value = cur.title;
      tid("wiki-edit-tags").value = (cur.tags || []).join(", ");
      tid("wiki-edit-body").value = cur.body;
    };
    tid("wiki-save").textContent = cur.deleted ? "Save" : `Save over revision ${cur.revision}`;
  }

  function cancelEdit() {
    const slug = state.edit && state.edit.slug;
    state.edit = null;
    if (slug) openPage(slug);
    else show("list");
  }

  // ---------- history ----------

  async function openHistory() {
    const p = state.page;
    if (!p) return;
    try {
      const revs = (await api("GET", `${page(p.slug)}/revisions`)).items;
      tid("wiki-history-title").textContent = `History of “${p.title}”`;
      tid("wiki-revisions").replaceChildren(...revs.map((r) => {
        const li = el("li", { class: "wiki-revision", "data-testid": "wiki-revision", "data-rev": r.number },
          el("strong", {}, `#${r.number}`), " ",
          el("span", {}, `@${r.author_handle || "?"} · ${when(r.created_at)}`),
          r.summary ? el("span", { class: "wiki-summary" }, ` — ${r.summary}`) : null,
          r.restored_from ? el("span", { class: "wiki-hint" }, ` (restored #${r.restored_from})`) : null,
          el("span", { class: "wiki-rev-actions" },
            el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-rev-view": r.number }, "View"),
            r.number > 1 ? el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-rev-diff": r.number, "data-testid": "wiki-rev-diff" }, "Diff") : null,
            r.number !== p.revision ? el("button", { type: "button", class: "btn btn-ghost btn-sm", "data-rev-restore": r.number }, "Restore") : null));
        return li;
      }));
      tid("wiki-diff").hidden = tid("wiki-revision-body").hidden = true;
      show("history");
    } catch (e) { showError(e.message); }
  }

  async function showDiff(n) {
    try {
      const d = await api("GET", `${page(state.page.slug)}/diff?from=${n - 1}&to=${n}`);
      const out = tid("wiki-diff");
      const head = el("p", { class: "wiki-hint" }, `Revision ${d.from} → ${d.to}: +${d.added} −${d.removed}` +
        (d.from_title !== d.to_title ? ` · title “${d.from_title}” → “${d.to_title}”` : ""));
      out.replaceChildren(head, ...d.lines.map((l) =>
        el("div", { class: `wiki-diff-line wiki-diff-${l.op}`, "data-testid": "wiki-diff-line" },
          { insert: "+ ", delete: "− ", equal: "  " }[l.op] + l.text)));
      out.hidden = false;
      tid("wiki-revision-body").hidden = true;
    } catch (e) { showError(e.message); }
  }

  async function viewRevision(n) {
    try {
      const r = await api("GET", `${page(state.page.slug)}/revisions/${n}`);
      const html = (await api("POST", `${API}/preview`, { body: r.body })).html;
      const out = tid("wiki-revision-body");
      out.innerHTML = html; // sanitized by the server
      out.prepend(el("h3", {}, `Revision ${r.number}: ${r.title}`));
      out.hidden = false;
      tid("wiki-diff").hidden = true;
    } catch (e) { showError(e.message); }
  }

  async function restore(n) {
    const p = state.page;
    if (!window.confirm(`Restore revision ${n}? This saves it as a new revision.`)) return;
    try {
      await api("POST", `${page(p.slug)}/restore`, { revision: n, base_revision: p.revision });
      await openPage(p.slug);
      loadList();
    } catch (e) {
      showError(e.status === 409 ? `${e.message} Reload the page and try again.` : e.message);
    }
  }

  // ---------- live updates ----------

  // The dashboard's script passes on every event; a wiki.* one means a
  // page changed somewhere.
  let liveTimer = 0;
  function onWikiEvent() {
    clearTimeout(liveTimer);
    liveTimer = setTimeout(async () => {
      if (state.view === "list") loadList();
      else if (state.view === "page" && state.page) openPage(state.page.slug, true);
      else if (state.view === "edit" && state.edit && state.edit.slug) {
        try {
          const cur = await api("GET", `${page(state.edit.slug)}?deleted=1`);
          if (cur.revision > state.edit.base) {
            showError(`Someone saved revision ${cur.revision} while you were editing; saving will show both versions.`);
          }
        } catch (e) { /* the save will tell */ }
      }
    }, 300);
  }

  function watchActivity() {
    document.addEventListener("bullpen:event", (e) => {
      if (String((e.detail && e.detail.type) || "").startsWith("wiki.")) onWikiEvent();
    });
  }

  // ---------- wiring ----------

  // #wiki/SLUG opens a page; #wiki-diff/SLUG/N (the timeline's links to
  // an edit) opens revision N's diff in the page's history.
  async function openFromHash() {
    const d = /^#wiki-diff\/(.+)\/(\d+)$/.exec(location.hash);
    const m = d || /^#wiki\/(.+)$/.exec(location.hash);
    if (!m) return;
    const tab = document.querySelector('[data-panel-tab="wiki"]');
    if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();
    await openPage(decodeURIComponent(m[1]));
    if (!d || !state.page || state.page.slug !== decodeURIComponent(m[1])) return;
    await openHistory();
    showDiff(Number(d[2]));
  }

  // Links to pages anywhere on the dashboard open in the panel.
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-wiki-slug], a[href^='/wiki/']");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    const slug = a.dataset.wikiSlug || decodeURIComponent(a.getAttribute("href").slice(6));
    e.preventDefault();
    const tab = document.querySelector('[data-panel-tab="wiki"]');
    if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();
    openPage(slug);
  });

  root.addEventListener("click", (e) => {
    const t = e.target;
    const create = t.closest("[data-wiki-create]");
    if (create) { e.preventDefault(); startEdit(null, create.dataset.wikiCreate); }
    if (t.closest("[data-wiki-back]")) { show("list"); loadList(); history.replaceState(null, "", location.pathname); }
    const v = t.closest("[data-rev-view]");
    if (v) viewRevision(Number(v.dataset.revView));
    const d = t.closest("[data-rev-diff]");
    if (d) showDiff(Number(d.dataset.revDiff));
    const r = t.closest("[data-rev-restore]");
    if (r) restore(Number(r.dataset.revRestore));
    const tab = t.closest("[data-wiki-tab]");
    if (tab) writeTab(tab.dataset.wikiTab);
  });
  tid("wiki-new").addEventListener("click", () => startEdit(null, tid("wiki-search").value.trim()));
  tid("wiki-edit").addEventListener("click", () => state.page && startEdit(state.page));
  tid("wiki-delete").addEventListener("click", remove);
  tid("wiki-history").addEventListener("click", openHistory);
  tid("wiki-history-back").addEventListener("click", () => show("page"));
  tid("wiki-cancel").addEventListener("click", cancelEdit);
  tid("wiki-editor").addEventListener("submit", save);
  // toList shows the list for a search or a tag chosen while a page or
  // its history is open (the results would land in a hidden list). An
  // edit stays open, so nothing typed is lost; the user is told why.
  function toList() {
    if (state.view === "edit") {
      showError("Save or cancel the edit to see the search results.");
      return false;
    }
    if (state.view !== "list") {
      show("list");
      history.replaceState(null, "", location.pathname + location.search);
    }
    return true;
  }
  tid("wiki-search-form").addEventListener("submit", (e) => { e.preventDefault(); if (toList()) loadList(); });
  tid("wiki-search").addEventListener("input", () => {
    clearTimeout(state.searchTimer);
    if (toList()) state.searchTimer = setTimeout(loadList, 200);
  });
  tid("wiki-tag").addEventListener("change", () => { if (toList()) loadList(); });
  window.addEventListener("hashchange", openFromHash);

  watchActivity();
  loadList();
  openFromHash();

  // A small handle for browser tests.
  window.BullpenWiki = { openPage, startEdit, state };
})();
