// Telegram settings page: sends its forms to /api/v1/telegram as JSON with
// the session's CSRF token, then reloads to show the new state.
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var errorBox = document.querySelector('[data-testid="telegram-form-error"]');

  function call(method, url, body) {
    var opts = { method: method, credentials: "same-origin", headers: { "X-CSRF-Token": csrf } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(url, opts).then(function (res) {
      if (res.ok) { location.reload(); return; }
      return res.json().then(function (j) {
        throw new Error((j && j.error && j.error.message) || res.statusText);
      });
    }).catch(function (err) {
      errorBox.textContent = err.message;
      errorBox.hidden = false;
    });
  }

  function value(form, name) {
    var el = form.elements[name];
    return el ? el.value.trim() : "";
  }

  document.querySelectorAll("[data-telegram-form]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var kind = form.getAttribute("data-telegram-form");
      if (kind === "settings") {
        var body = { mode: value(form, "mode"), webhook_url: value(form, "webhook_url") };
        if (form.elements.token && value(form, "token") !== "") body.token = value(form, "token");
        call("PUT", "/api/v1/telegram", body);
      } else if (kind === "user") {
        call("POST", "/api/v1/telegram/users", {
          telegram_user_id: Number(value(form, "telegram_user_id")),
          handle: value(form, "handle"),
          can_approve: form.elements.can_approve.checked
        });
      } else if (kind === "chat") {
        call("PUT", "/api/v1/telegram/chats/" + encodeURIComponent(value(form, "chat_id")), { channel: value(form, "channel") });
      }
    });
  });
  document.querySelectorAll("[data-telegram-delete]").forEach(function (btn) {
    btn.addEventListener("click", function () { call("DELETE", btn.getAttribute("data-telegram-delete")); });
  });
  document.querySelectorAll("[data-telegram-resend]").forEach(function (btn) {
    btn.addEventListener("click", function () { call("POST", btn.getAttribute("data-telegram-resend")); });
  });
})();
