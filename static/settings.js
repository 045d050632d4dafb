// Settings page: model providers (add, edit, make default, delete, test
// connection), every member's tokens (create, revoke) and the sandbox
// settings. It talks to /api/v1/settings/providers, /api/v1/tokens and
// /api/v1/settings/sandboxes through window.BP and reloads after a
// change, so the page always shows the server's state (a new token's
// secret is shown once first).
// Secrets are never read back: the form's key fields start empty, and an
// empty key on an edit keeps the stored one. A refused save shows the
// server's message under the field it names (inline), and the form keeps
// what was typed.
(() => {
  "use strict";
  const { api, showError, $, $$ } = window.BP;
  const errorBox = $('[data-testid="settings-error"]');
  const form = $('[data-testid="provider-form"]');
  const title = $('[data-testid="provider-form-title"]');
  const save = $('[data-testid="provider-save"]');
  const cancel = $('[data-testid="provider-cancel"]');
  const formError = $('[data-testid="provider-form-error"]');
  let editing = 0; // the provider ID being edited, 0 when adding
  // Sent here by the dashboard's first run (#add-provider): the form is
  // focused, and a provider added takes the user back to the office.
  const firstRun = location.hash === "#add-provider";
  if (firstRun && form) {
    form.scrollIntoView({ block: "center" });
    form.elements.name.focus();
  }

  async function act(fn) {
    showError(errorBox, "");
    try {
      await fn();
      if (firstRun && !editing) location.assign("/");
      else location.reload();
    } catch (err) {
      showError(errorBox, err.message); // the form keeps what was typed
    }
  }

  // clearFieldErrors hides every inline error of the form.
  function clearFieldErrors() {
    showError(formError, "");
    $$("[data-field-error]", form).forEach((p) => showError(p, ""));
    $$("[aria-invalid]", form).forEach((i) => i.removeAttribute("aria-invalid"));
  }

  // showFormError puts a refused save's message under the field the
  // server names, marking and focusing it; else under the form.
  function showFormError(err) {
    clearFieldErrors();
    const input = err.field ? form.elements[err.field] : null;
    const slot = err.field ? $('[data-field-error="' + err.field + '"]', form) : null;
    if (!input || !slot) { showError(formError, err.message); return; }
    showError(slot, err.message);
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-errormessage", slot.id || "");
    input.focus();
  }

  // The embeddings model is for OpenAI-compatible providers: off (and
  // sent empty) for an Anthropic one.
  function syncKind() {
    const f = form.elements;
    f.embeddings_model.disabled = f.kind.value !== "openai";
  }

  function body() {
    const f = form.elements;
    const b = { name: f.name.value.trim(), kind: f.kind.value, base_url: f.base_url.value.trim(), model: f.model.value.trim(),
      embeddings_model: f.embeddings_model.disabled ? "" : f.embeddings_model.value.trim() };
    if (f.api_key.value.trim()) b.api_key = f.api_key.value.trim();
    if (f.oauth_token.value.trim()) b.oauth_token = f.oauth_token.value.trim();
    if (f.is_default.checked) b.is_default = true;
    return b;
  }

  function startEdit(row) {
    const f = form.elements;
    editing = Number(row.dataset.providerId);
    f.name.value = row.dataset.name;
    f.kind.value = row.dataset.kind;
    f.base_url.value = row.dataset.baseUrl || "";
    f.model.value = row.dataset.model || "";
    f.embeddings_model.value = row.dataset.embeddingsModel || "";
    syncKind();
    clearFieldErrors();
    f.api_key.value = "";
    f.api_key.placeholder = "empty keeps the stored key";
    f.oauth_token.value = "";
    f.is_default.checked = row.dataset.default === "true";
    title.textContent = "Edit " + row.dataset.name;
    save.textContent = "Save";
    cancel.hidden = false;
    f.name.focus();
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const b = body();
    clearFieldErrors();
    save.disabled = true;
    try {
      await (editing ? api("PATCH", "/api/v1/settings/providers/" + editing, b) : api("POST", "/api/v1/settings/providers", b));
    } catch (err) {
      save.disabled = false;
      showFormError(err); // the form keeps what was typed
      return;
    }
    if (firstRun && !editing) location.assign("/");
    else location.reload();
  });
  form.elements.kind.addEventListener("change", syncKind);
  form.addEventListener("input", (e) => {
    if (e.target.getAttribute("aria-invalid")) { // typing again clears that field's error
      e.target.removeAttribute("aria-invalid");
      showError($('[data-field-error="' + e.target.name + '"]', form), "");
    }
  });
  syncKind();
  cancel.addEventListener("click", () => location.reload());

  async function test(row, out) {
    out.hidden = false;
    out.className = "settings-result";
    out.textContent = "Testing…";
    try {
      const r = await api("POST", "/api/v1/settings/providers/" + row.dataset.providerId + "/test");
      out.textContent = (r.ok ? "✓ " : "✗ ") + r.message + " (" + r.latency_ms + " ms)";
      out.classList.add(r.ok ? "settings-ok" : "settings-bad");
    } catch (err) {
      out.textContent = "✗ " + err.message;
      out.classList.add("settings-bad");
    }
  }

  $$('[data-testid="providers"] tr[data-provider-id]').forEach((row) => {
    const id = row.dataset.providerId;
    const out = $(".settings-result", row);
    row.addEventListener("click", (e) => {
      const btn = e.target.closest("button[data-action]");
      if (!btn) return;
      switch (btn.dataset.action) {
        case "test": test(row, out); break;
        case "default": act(() => api("PATCH", "/api/v1/settings/providers/" + id, { is_default: true })); break;
        case "edit": startEdit(row); break;
        case "delete":
          // Two clicks, like every destructive button here.
          if (btn.dataset.armed !== "1") { btn.dataset.armed = "1"; btn.textContent = "Delete " + row.dataset.name + "?"; return; }
          act(() => api("DELETE", "/api/v1/settings/providers/" + id));
      }
    });
  });

  // A new token: its secret shows once, with Copy; Done reloads the list.
  const tokenForm = $('[data-testid="token-form"]');
  if (tokenForm) {
    const box = $('[data-testid="token-secret-box"]', tokenForm);
    const secret = $('[data-testid="token-secret"]', tokenForm);
    tokenForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      showError(errorBox, "");
      const f = tokenForm.elements;
      try {
        const t = await api("POST", "/api/v1/tokens", { member_id: Number(f.member_id.value), name: f.name.value.trim() });
        secret.value = t.token;
        box.hidden = false;
        f.name.value = "";
        secret.select();
      } catch (err) {
        showError(errorBox, err.message);
      }
    });
    $('[data-testid="token-copy"]', tokenForm).addEventListener("click", (e) => {
      secret.select();
      if (navigator.clipboard) navigator.clipboard.writeText(secret.value).then(() => { e.target.textContent = "Copied"; }, () => {});
    });
    $('[data-testid="token-done"]', tokenForm).addEventListener("click", () => location.reload());
  }

  // Sandbox settings apply as the box is ticked; a refusal unticks it.
  const pull = $('[data-testid="sandbox-pull-on-create"]');
  if (pull) {
    const out = $('[data-testid="sandbox-settings-result"]');
    pull.addEventListener("change", async () => {
      out.hidden = false;
      out.className = "settings-result";
      try {
        const s = await api("PATCH", "/api/v1/settings/sandboxes", { pull_on_create: pull.checked });
        pull.checked = s.pull_on_create;
        out.textContent = s.pull_on_create ? "Saved: creates pull the images they name." : "Saved: creates use only the images here.";
        out.classList.add("settings-ok");
      } catch (err) {
        pull.checked = !pull.checked;
        out.textContent = err.message;
        out.classList.add("settings-bad");
      }
    });
  }

  $$("[data-revoke]").forEach((btn) => {
    btn.addEventListener("click", () => {
      if (btn.dataset.armed !== "1") { btn.dataset.armed = "1"; btn.textContent = "Revoke?"; return; }
      act(() => api("DELETE", "/api/v1/tokens/" + btn.dataset.revoke));
    });
  });
})();
