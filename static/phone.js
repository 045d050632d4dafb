// Bullpen on a phone (below 700 px, see app.css): the sidebar opens as a
// sheet from the chat header's ☰ button and closes on a channel, on ×, on
// the backdrop or on Escape; the bottom bar shows the chat or one panel as
// a full-screen sheet; the Agents button counts the approvals waiting.
// Wider windows never show these controls, so nothing here changes them.
// Plain JS, no build step.
(() => {
  "use strict";

  const body = document.body;
  if (!body || !body.classList.contains("app")) return;
  const $ = (s) => document.querySelector(s);
  const tid = (id) => $('[data-testid="' + id + '"]');
  const opener = tid("nav-open");
  const bar = tid("phone-bar");
  if (!opener || !bar) return;

  function setNav(open) {
    body.classList.toggle("nav-shown", open);
    opener.setAttribute("aria-expanded", String(open));
    if (open) (tid("nav-close") || opener).focus();
  }

  // markSheet shows the chat ("chat") or a panel's sheet, and presses its
  // button in the bar.
  function markSheet(id) {
    body.classList.toggle("sheet-open", id !== "chat");
    for (const b of bar.querySelectorAll("[data-sheet]")) b.setAttribute("aria-pressed", String(b.dataset.sheet === id));
    window.dispatchEvent(new Event("bp:layout"));
  }

  // showSheet shows the chat or a panel, through the panel's own tab so
  // app.js keeps choosing and remembering the panel.
  function showSheet(id) {
    markSheet(id);
    if (id !== "chat") {
      const tab = tid("panel-tab-" + id);
      if (tab) tab.click();
    }
  }

  // A panel chosen by a link (#sandbox=…, #wiki/…, a timeline entry)
  // clicks its tab: on a phone that shows its sheet, or the link would
  // open a panel nobody sees.
  const phone = window.matchMedia("(max-width: 699px)");
  for (const t of document.querySelectorAll("[data-panel-tab]")) {
    t.addEventListener("click", () => { if (phone.matches) markSheet(t.dataset.panelTab); });
  }

  opener.addEventListener("click", () => setNav(true));
  document.addEventListener("click", (e) => {
    if (e.target.closest('[data-testid="nav-close"]')) setNav(false);
    else if (body.classList.contains("nav-shown") && !e.target.closest('[data-testid="nav-open"]') &&
      (e.target.closest(".channel-link") || !e.target.closest(".sidebar"))) setNav(false); // a channel, or the backdrop
    const b = e.target.closest("[data-sheet]");
    if (b) showSheet(b.dataset.sheet);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !body.classList.contains("nav-shown")) return;
    e.preventDefault();
    setNav(false);
    opener.focus();
  });

  // The count of waiting approvals follows the Agents panel's list.
  const list = tid("approvals-list");
  const count = tid("phone-approvals");
  if (list && count) {
    const show = () => {
      const n = list.children.length;
      count.textContent = String(n);
      count.hidden = n === 0;
    };
    new MutationObserver(show).observe(list, { childList: true });
    show();
  }
})();
