// Bullpen dashboard layout: the panel area beside the chat (wiki,
// sandboxes, agents, …) can be dragged wider, toggled wide, or opened full
// width with the chat hidden ("← Back to chat" or Esc returns). The width
// and the full-width choice are kept in localStorage. Plain JS, no build.
(() => {
  "use strict";

  const body = document.body;
  if (!body || !body.classList.contains("app")) return;
  const { $ } = window.BP;
  const layout = $(".layout");
  const handle = $('[data-testid="panels-resize"]');
  const widen = $('[data-testid="panels-widen"]');
  const full = $('[data-testid="panels-full"]');
  const back = $('[data-testid="panels-back"]');
  if (!layout || !handle || !widen || !full || !back) return;

  const KEY_WIDTH = "bullpen.panelWidth";
  const KEY_FULL = "bullpen.panelFull";
  const MIN = 280;
  const STEP = 40;

  const saved = {
    get(k) { try { return localStorage.getItem(k); } catch (e) { return null; } },
    set(k, v) {
      try { if (v === null) localStorage.removeItem(k); else localStorage.setItem(k, v); } catch (e) { /* private mode */ }
    },
  };

  // cssPx reads a length the stylesheet sets for this window size.
  const cssPx = (name, def) => parseInt(getComputedStyle(layout).getPropertyValue(name), 10) || def;
  const normal = () => cssPx("--panel-default", 380);
  const chatMin = () => cssPx("--chat-min", 320);
  const room = () => layout.clientWidth - $(".sidebar").offsetWidth - chatMin();
  const wide = () => Math.max(normal() + STEP, Math.min(720, Math.round(layout.clientWidth * 0.55)));
  const current = () => $(".panels").getBoundingClientRect().width;

  // setWidth sets the panel's width (0: the stylesheet's); the grid itself
  // keeps the chat at its minimum, so a saved width fits a smaller window.
  function setWidth(px, remember) {
    if (px > 0) {
      px = Math.round(Math.max(MIN, px));
      layout.style.setProperty("--panel-w", px + "px");
    } else {
      px = 0;
      layout.style.removeProperty("--panel-w");
    }
    widen.setAttribute("aria-pressed", String(px > normal()));
    handle.setAttribute("aria-valuenow", String(Math.round(px || normal())));
    if (remember) saved.set(KEY_WIDTH, px ? String(px) : null);
    window.dispatchEvent(new Event("bp:layout"));
  }

  function setFull(on, remember) {
    body.classList.toggle("panels-full", on);
    full.setAttribute("aria-pressed", String(on));
    full.hidden = on;
    widen.hidden = on;
    back.hidden = !on;
    if (remember) saved.set(KEY_FULL, on ? location.pathname : null);
    window.dispatchEvent(new Event("bp:layout"));
  }

  widen.addEventListener("click", () => setWidth(widen.getAttribute("aria-pressed") === "true" ? 0 : Math.min(wide(), Math.max(room(), MIN)), true));
  full.addEventListener("click", () => setFull(true, true));
  back.addEventListener("click", () => setFull(false, true));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && body.classList.contains("panels-full") && !e.target.closest(".xterm")) setFull(false, true);
  });

  // Drag the handle on the panel's left edge; arrow keys move it too.
  handle.addEventListener("pointerdown", (e) => {
    e.preventDefault();
    handle.setPointerCapture(e.pointerId);
    handle.classList.add("dragging");
    const right = layout.getBoundingClientRect().right;
    const move = (ev) => setWidth(Math.min(right - ev.clientX, room()), false);
    const up = () => {
      handle.classList.remove("dragging");
      handle.removeEventListener("pointermove", move);
      setWidth(current(), true);
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up, { once: true });
    handle.addEventListener("pointercancel", up, { once: true });
  });
  handle.addEventListener("keydown", (e) => {
    const step = { ArrowLeft: STEP, ArrowRight: -STEP }[e.key];
    if (!step) return;
    e.preventDefault();
    setWidth(Math.min(current() + step, room()), true);
  });

  setWidth(Number(saved.get(KEY_WIDTH)) || 0, false);
  // Full width survives a reload of the same page only: choosing a channel
  // (another page, or a channel link) always shows its chat.
  document.addEventListener("click", (e) => {
    if (e.target.closest("a.channel-link")) saved.set(KEY_FULL, null);
  });
  setFull(saved.get(KEY_FULL) === location.pathname, false);
})();
