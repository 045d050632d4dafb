// The Tasks board, the task page and the routine pages: every form with
// data-task-action calls the REST API with the member's session; a refusal
// shows under the form and changes nothing (the API checks everything).
// The pages stay current over the websocket: a task.* or routine.* event
// re-reads the page and swaps its data-live regions, except one the user
// is typing in. Plain JS, no build step; everything goes in as text.
(() => {
  "use strict";
  const { $, $$, api, showError } = window.BP;
  const main = $("main");
  if (!main) return;
  const handles = JSON.parse(main.dataset.handles || "{}");
  const taskID = Number(main.dataset.taskId || 0);

  const num = (v) => (String(v || "").trim() === "" ? 0 : Number(String(v).trim().replace(/^#/, "")));
  const words = (v) => String(v || "").split(/[,\s]+/).filter(Boolean);

  // A number field that is not a whole number is refused here, before
  // anything is sent: the API would only see a zero.
  function whole(name, v) {
    const n = num(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(name + " must be a number");
    return n;
  }

  // dueTime turns a datetime-local value into RFC 3339 in the browser's zone.
  function dueTime(v) {
    if (!v) return undefined;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw new Error("due is not a date and time");
    return d.toISOString();
  }

  const taskPath = (suffix) => "/api/v1/tasks/" + taskID + (suffix || "");

  // Each action builds its request from the form and says what to do
  // after it succeeded.
  const actions = {
    async create(f) {
      const review = f.elements.review.value;
      const body = {
        title: f.elements.title.value.trim(), body: f.elements.body.value,
        channel_id: num(f.elements.channel_id.value), owner_id: whole("owner", f.elements.owner_id.value),
        labels: words(f.elements.labels.value), parent_id: whole("parent task", f.elements.parent_id.value),
        due: dueTime(f.elements.due.value),
        review_human: review === "human", reviewer_id: review === "human" ? 0 : num(review),
      };
      const t = await api("POST", "/api/v1/tasks", body);
      f.reset();
      const done = $('[data-testid="task-create-done"]', f);
      done.replaceChildren("Created ", Object.assign(document.createElement("a"), { href: "/tasks/" + t.id, textContent: "#" + t.id + " " + t.title }));
      done.hidden = false;
      refresh();
    },
    claim: () => api("POST", taskPath("/claim")),
    reopen: () => api("PATCH", taskPath(), { state: "open", note: "reopened" }),
    submit: (f) => api("POST", taskPath("/submit"), { note: f.elements.note.value }),
    review: (f, submitter) => api("POST", taskPath("/review"),
      { approve: (submitter && submitter.value) === "approve", note: f.elements.note.value }),
    assign(f) {
      const to = num(f.elements.to.value);
      if (!to) throw new Error("Choose the member to assign it to.");
      return api("POST", taskPath("/handoff"), { to, message: f.elements.message.value });
    },
    cancel: (f) => api("PATCH", taskPath(), { state: "cancelled", note: f.elements.note.value }),
    "routine-toggle": (f) => api("PATCH", "/api/v1/routines/" + Number(f.dataset.routineId), { enabled: f.dataset.enabled !== "on" }),
    "routine-save": saveRoutine,
    async "routine-delete"(f) {
      const b = $("button", f);
      if (b.dataset.armed !== "1") { // two clicks, like Forget
        b.dataset.armed = "1";
        b.textContent = "Delete for good?";
        return;
      }
      await api("DELETE", "/api/v1/routines/" + Number(f.dataset.routineId));
      location.assign("/routines");
    },
  };

  // routineBody reads the editor: only the fields of the chosen schedule
  // and action are sent; the other schedule is cleared.
  function routineBody(f) {
    const e = f.elements;
    const cron = e.kind.value === "cron";
    const body = {
      name: e.name.value.trim(), cron: cron ? e.cron.value.trim() : "", tz: cron ? e.tz.value.trim() : "",
      interval_sec: cron ? 0 : whole("the interval", e.interval_sec.value),
      channel_id: num(e.channel_id.value), action: e.action.value, skip: e.skip.value,
      skip_label: e.skip.value === "no_open_label" ? e.skip_label.value.trim() : "", enabled: e.enabled.checked,
    };
    if (!cron && body.interval_sec === 0) throw new Error("Give the interval in seconds (at least 1).");
    if (body.action === "wake") {
      body.agent_id = num(e.agent_id.value);
      body.prompt = e.prompt.value;
    } else {
      body.task = { title: e.task_title.value.trim(), body: e.task_body.value, labels: words(e.task_labels.value),
        owner_id: num(e.task_owner_id.value) };
    }
    return body;
  }

  async function saveRoutine(f) {
    const id = Number(f.dataset.routineId);
    const r = await api(id ? "PATCH" : "POST", id ? "/api/v1/routines/" + id : "/api/v1/routines", routineBody(f));
    if (!id) {
      location.assign("/routines/" + r.id);
      return;
    }
    const done = $('[data-testid="routine-saved"]', f);
    done.textContent = "Saved.";
    done.hidden = false;
    refresh();
  }

  // claimError names the current owner of a task someone else holds.
  function claimError(x) {
    const t = x.body && x.body.task;
    if (x.status === 409 && t && t.owner_id) return "Already claimed by " + (handles[t.owner_id] || "member " + t.owner_id) + ".";
    return x.message;
  }

  document.addEventListener("submit", async (ev) => {
    const f = ev.target.closest("form[data-task-action]");
    if (!f) return;
    ev.preventDefault();
    const act = actions[f.dataset.taskAction];
    const err = $(".form-error", f);
    const buttons = $$("button", f);
    showError(err, "");
    f.dataset.busy = "1";
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await act(f, ev.submitter);
      if (f.closest("[data-live]") && f.dataset.taskAction !== "routine-delete") await refresh(true);
    } catch (x) {
      showError(err, f.dataset.taskAction === "claim" ? claimError(x) : x.message);
      if (err) err.scrollIntoView({ block: "nearest" });
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
      delete f.dataset.busy;
    }
  });

  // Enter in the review note must not approve (the first button is the
  // form's default): the reviewer clicks the answer they mean.
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && ev.target.closest('form[data-task-action="review"]') && ev.target.tagName === "INPUT") ev.preventDefault();
  });

  // The routine editor shows the fields of the chosen schedule, action
  // and skip condition only.
  function showChosen() {
    const f = $('[data-testid="routine-form"]');
    if (!f) return;
    const e = f.elements;
    for (const [attr, v] of [["whenKind", e.kind.value], ["whenAction", e.action.value], ["whenSkip", e.skip.value]]) {
      for (const n of $$("[data-" + attr.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()) + "]", f)) n.hidden = n.dataset[attr] !== v;
    }
  }
  document.addEventListener("change", (ev) => { if (ev.target.closest('[data-testid="routine-form"]')) showChosen(); });
  showChosen();

  // dirty tells whether the user is using a region: an action of its in
  // flight, focus in it, or text typed in one of its fields.
  function dirty(region) {
    if ($("form[data-busy]", region)) return true; // an answer is on its way to a form in it
    if (region.contains(document.activeElement) && document.activeElement !== document.body) return true;
    return $$("input, textarea", region).some((i) => i.type !== "checkbox" && i.type !== "radio" && i.value !== i.defaultValue);
  }

  // refresh re-reads the page and swaps each data-live region (a region
  // in use waits for the next event, unless force: after its own action).
  let pending = null;
  async function refresh(force) {
    let html;
    try {
      const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!res.ok) return;
      html = await res.text();
    } catch (e) {
      return; // offline: the next event or reload brings it
    }
    const doc = new DOMParser().parseFromString(html, "text/html");
    for (const fresh of doc.querySelectorAll("[data-live]")) {
      const cur = $(`[data-live="${fresh.dataset.live}"]`);
      if (!cur || (!force && dirty(cur))) continue;
      const errors = $$(".form-error:not([hidden])", cur).map((n) => [n.closest("form[data-task-action]")?.dataset.taskAction, n.textContent]);
      cur.replaceWith(document.adoptNode(fresh));
      for (const [act, msg] of errors) { // an error stays until the next try
        const f = act && $(`[data-live] form[data-task-action="${act}"]`);
        if (f) showError($(".form-error", f), msg);
      }
    }
    main.dataset.refreshed = String(Number(main.dataset.refreshed || 0) + 1);
  }
  const later = () => { clearTimeout(pending); pending = setTimeout(() => refresh(false), 150); };

  // The event feed: any task or routine change may change this page.
  let attempt = 0;
  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/v1/ws");
    ws.onopen = () => { attempt = 0; main.dataset.ws = "open"; };
    ws.onmessage = (m) => {
      let frame;
      try { frame = JSON.parse(m.data); } catch (e) { return; }
      if ((frame.events || []).some((ev) => /^(task|routine)\./.test(ev.type || ""))) later();
    };
    ws.onclose = () => {
      main.dataset.ws = "closed";
      attempt++;
      setTimeout(() => { later(); connect(); }, Math.min(30000, 500 * 2 ** attempt));
    };
  }
  connect();
})();
