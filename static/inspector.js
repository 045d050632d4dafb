// The turn inspector: switches each body between pretty-printed JSON and
// the raw bytes as sent, and follows a running turn until it ends. The
// page is rendered by the server (text as text); this only toggles and
// polls through window.BP.
(() => {
  "use strict";
  const BP = window.BP;
  const root = BP.$('[data-testid="inspector"]');
  if (!root) return;

  for (const btn of BP.$$("[data-raw-toggle]", root)) {
    btn.addEventListener("click", () => {
      const box = btn.closest(".insp-body");
      const raw = BP.$('[data-view="raw"]', box);
      const pretty = BP.$('[data-view="pretty"]', box);
      const showRaw = raw.hidden;
      raw.hidden = !showRaw;
      pretty.hidden = showRaw;
      btn.textContent = showRaw ? "Show pretty JSON" : "Show raw bytes";
    });
  }

  // A running turn is reloaded once it has finished, so the page shows
  // all of it; errors are shown, not thrown.
  if (root.dataset.state !== "running") return;
  const note = BP.el("p", { class: "form-error", role: "alert", "data-testid": "inspector-poll-error", hidden: true });
  root.prepend(note);
  const poll = async () => {
    try {
      const d = await BP.api("GET", root.dataset.api);
      if (d && d.turn && d.turn.state !== "running") {
        location.reload();
        return;
      }
      BP.showError(note, "");
    } catch (e) {
      BP.showError(note, "Could not refresh this turn: " + e.message);
    }
    setTimeout(poll, 2000);
  };
  setTimeout(poll, 2000);
})();
