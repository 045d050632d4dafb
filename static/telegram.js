// Telegram settings page: sends its forms to /api/v1/telegram as JSON with
// the session's CSRF token (through window.BP), then reloads to show the new state.
(function () {
  "use strict";
  var errorBox = document.querySelector('[data-testid="telegram-form-error"]');

  // call sends one change through the shared module, then reloads to show
  // the new state; a refusal stays on the page with the server's message.
  function call(method, url, body) {
    return window.BP.api(method, url, body).then(function () {
      location.reload();
    }).catch(function (err) {
      window.BP.showError(errorBox, err.message);
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
