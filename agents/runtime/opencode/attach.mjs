// Bullpen's client of a running `opencode serve`, run by opencode's own
// binary as Bun (BUN_BE_BUN=1): it sends one prompt (stdin) to a session
// and prints the session's parts as `opencode run --format json` prints
// them, until the session is idle. opencode's own `run --attach` returns
// as soon as its prompt call does, before the events of the last step
// reach it, so its stream lacks the final answer.
//
// Environment: OC_URL (the server), OC_PASSWORD (its basic auth password),
// OC_SESSION (a session to continue; empty starts one).
const base = process.env.OC_URL;
const auth = "Basic " + btoa("opencode:" + (process.env.OC_PASSWORD ?? ""));
const headers = { authorization: auth, "content-type": "application/json" };

async function call(method, path, body) {
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  }
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

function print(type, sessionID, fields) {
  process.stdout.write(JSON.stringify({ type, timestamp: Date.now(), sessionID, ...fields }) + "\n");
}

async function main() {
  const prompt = await new Response(Bun.stdin.stream()).text();
  let sessionID = process.env.OC_SESSION;
  if (!sessionID) {
    sessionID = (await call("POST", "/session", {})).id;
  }
  const events = await fetch(base + "/event", { headers: { authorization: auth, accept: "text/event-stream" } });
  if (!events.ok || !events.body) {
    throw new Error(`GET /event: ${events.status}`);
  }
  await call("POST", `/session/${sessionID}/prompt_async`, { parts: [{ type: "text", text: prompt }] });
  const reader = events.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      throw new Error("the server closed its event stream before the session was idle");
    }
    buf += value;
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
      if (data && (await handle(JSON.parse(data), sessionID))) {
        return;
      }
    }
  }
}

// handle prints one event; it reports whether the session is done.
async function handle(ev, sessionID) {
  const p = ev.properties ?? {};
  switch (ev.type) {
    case "message.part.updated": {
      const part = p.part;
      if (!part || part.sessionID !== sessionID) return false;
      if (part.type === "tool" && (part.state?.status === "completed" || part.state?.status === "error")) print("tool_use", sessionID, { part });
      else if (part.type === "step-start") print("step_start", sessionID, { part });
      else if (part.type === "step-finish") print("step_finish", sessionID, { part });
      else if (part.type === "text" && part.time?.end) print("text", sessionID, { part });
      return false;
    }
    case "session.error":
      if (p.sessionID === sessionID && p.error) print("error", sessionID, { error: p.error });
      return false;
    case "permission.asked":
      if (p.sessionID === sessionID) await call("POST", `/permission/${p.id}/reply`, { reply: "reject" });
      return false;
    case "session.status":
      return p.sessionID === sessionID && p.status?.type === "idle";
  }
  return false;
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bullpen attach: ${err.message}\n`);
    process.exit(1);
  },
);
