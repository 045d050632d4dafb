// Members in the sidebar: a click (or Enter) on a member opens a direct
// message with them, the + beside "Direct messages" picks a member to
// write to, and a fired agent moves to "Former agents" as soon as it is
// fired. Plain JS, no build step; names go in as text.
(() => {
  "use strict";

  const body = document.body;
  if (!body || !body.classList.contains("app")) return;
  const { $, $$, el, api, showError } = window.BP;
  const tid = (id) => `[data-testid="${id}"]`;
  const meId = Number(body.dataset.meId) || 0;

  // openDM opens (or finds) the DM with a member and goes there.
  async function openDM(memberId, errorBox) {
    showError(errorBox, "");
    try {
      const c = await api("POST", "/api/v1/dms", { member_id: Number(memberId) });
      location.assign("/c/" + encodeURIComponent(c.name));
    } catch (e) {
      showError(errorBox || $(tid("composer-error")), "Could not open a direct message: " + e.message);
    }
  }

  const list = $(tid("member-list"));
  if (list) {
    // Rows added live (app.js renderMember) get the same affordance.
    const mark = () => {
      for (const li of $$(tid("member"), list)) {
        if (Number(li.dataset.memberId) === meId || li.getAttribute("role")) continue;
        li.setAttribute("role", "button");
        li.setAttribute("tabindex", "0");
        li.classList.add("member-dm");
      }
    };
    new MutationObserver(mark).observe(list, { childList: true });
    mark();
    const pick = (e) => {
      const li = e.target.closest(tid("member"));
      if (!li || Number(li.dataset.memberId) === meId) return;
      if (e.type === "keydown" && e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      openDM(li.dataset.memberId);
    };
    list.addEventListener("click", pick);
    list.addEventListener("keydown", pick);
  }

  // The + picker: every member but me, filtered as one types.
  const toggle = $(tid("new-dm-toggle"));
  const picker = $(tid("new-dm-picker"));
  if (toggle && picker) {
    const filter = $(tid("new-dm-filter"));
    const options = $(tid("new-dm-list"));
    const err = $(tid("new-dm-error"));
    const fill = () => {
      const needle = filter.value.trim().toLowerCase().replace(/^@/, "");
      options.replaceChildren();
      for (const li of $$(tid("member"), list || document)) {
        if (Number(li.dataset.memberId) === meId) continue;
        const name = ($(tid("member-name"), li) || {}).textContent || "";
        const handle = li.dataset.handle || "";
        if (needle && !handle.includes(needle) && !name.toLowerCase().includes(needle)) continue;
        options.append(el("li", {},
          el("button", { type: "button", class: "new-dm-option", "data-testid": "new-dm-option", "data-member-id": li.dataset.memberId, "data-handle": handle },
            el("span", { class: "member-name" }, name), " ", el("span", { class: "member-handle" }, "@" + handle),
            el("span", { class: "badge badge-" + (li.dataset.kind || "human") }, li.dataset.kind || ""))));
      }
      if (!options.children.length) options.append(el("li", { class: "side-empty" }, "Nobody matches."));
    };
    const show = (open) => {
      picker.hidden = !open;
      toggle.setAttribute("aria-expanded", String(open));
      if (open) { filter.value = ""; fill(); filter.focus(); } else showError(err, "");
    };
    toggle.addEventListener("click", () => show(picker.hidden));
    filter.addEventListener("input", fill);
    filter.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { e.preventDefault(); show(false); toggle.focus(); }
      if (e.key === "Enter") {
        e.preventDefault();
        const first = $(tid("new-dm-option"), options);
        if (first) openDM(first.dataset.memberId, err);
      }
    });
    options.addEventListener("click", (e) => {
      const b = e.target.closest(tid("new-dm-option"));
      if (b) openDM(b.dataset.memberId, err);
    });
  }

  // A fired agent leaves the member list for "Former agents".
  document.addEventListener("bullpen:event", (e) => {
    const ev = e.detail || {};
    if (ev.type !== "agent.fired") return;
    const p = ev.payload || {};
    const row = list && $(`[data-testid="member"][data-member-id="${Number(p.agent_id)}"]`, list);
    const former = $(tid("former-agents"));
    const flist = $(tid("former-list"));
    if (!row || !former || !flist) return;
    const name = ($(tid("member-name"), row) || {}).textContent || p.handle || "";
    row.remove();
    flist.append(el("li", { class: "member member-former", "data-testid": "former-member", "data-member-id": Number(p.agent_id), "data-handle": p.handle || "", title: "@" + (p.handle || "") + " was fired" },
      el("span", { class: "member-names" },
        el("span", { class: "member-name", "data-testid": "member-name" }, name),
        el("span", { class: "member-handle", "data-testid": "member-handle" }, "@" + (p.handle || ""))),
      el("span", { class: "badge badge-muted" }, "fired")));
    former.hidden = false;
    $(tid("former-count")).textContent = String(flist.children.length);
    const count = $(tid("member-count"));
    if (count) count.textContent = String(list.children.length);
  });
})();
