// The first run's guided empty state (chat.templ, firstRun): hire the
// starter team in one click, then a suggested first message to the lead.
// Plain JS, no build step.
(() => {
  "use strict";

  const { $, el, api, showError } = window.BP;
  const tid = (id) => `[data-testid="${id}"]`;
  const card = $(tid("first-run"));
  if (!card) return;

  const hire = $(tid("first-run-hire"));
  if (hire) {
    hire.addEventListener("click", async () => {
      const err = $(tid("first-run-error"));
      hire.disabled = true;
      showError(err, "");
      try {
        const data = await api("POST", "/api/v1/teams", { pack: "starter" });
        const handles = (data.items || []).map((a) => "@" + a.handle);
        const step = $(tid("first-run-team"));
        step.classList.add("done");
        step.dataset.done = "true";
        hire.replaceWith(el("span", { class: "first-run-hint", "data-testid": "first-run-hired" },
          handles.length ? "Hired " + handles.join(", ") + "." : "The starter team was already hired."));
      } catch (e) {
        showError(err, e.message);
        hire.disabled = false;
      }
    });
  }

  const suggest = $(tid("first-run-suggest"));
  const input = $(tid("composer-input"));
  if (suggest && input) {
    suggest.addEventListener("click", () => {
      input.value = suggest.dataset.text || "";
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    });
  }
})();
