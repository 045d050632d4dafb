// "Copy as curl / CLI / Go" on a sandbox's page: the same command (uname
// -a) run in this sandbox through the REST API, the bullpen command line
// and the Go client, ready to paste. The token stays a variable. Plain JS.
(() => {
  "use strict";

  const { $, $$ } = window.BP;
  const root = $("[data-sandboxes]");
  const box = $('[data-testid="sandbox-copy-as"]');
  if (!root || !box) return;
  const code = $('[data-testid="sandbox-copy-code"]', box);
  const copy = $('[data-testid="sandbox-copy-button"]', box);
  let id = "";
  let lang = "curl";

  const q = (s) => "'" + String(s).replace(/'/g, "'\\''") + "'"; // a shell word
  const snippets = {
    curl: () => `curl -sS -H "Authorization: Bearer $BULLPEN_TOKEN" -H 'Content-Type: application/json' \\\n  -d '{"cmd":"uname -a"}' ${q(location.origin + "/api/v1/sandboxes/" + encodeURIComponent(id) + "/run")}`,
    cli: () => `export BULLPEN_URL=${q(location.origin)}  # and BULLPEN_TOKEN\nbullpen sandbox exec ${q(id)} -- uname -a`,
    go: () => `c, err := client.New(${JSON.stringify(location.origin)}, os.Getenv("BULLPEN_TOKEN"))
if err != nil {
	log.Fatal(err)
}
res, err := c.Run(ctx, ${JSON.stringify(id)}, client.ExecRequest{Cmd: []string{"uname", "-a"}}, 0)
if err != nil {
	log.Fatal(err)
}
fmt.Print(res.Stdout)`,
  };

  function draw() {
    code.textContent = id ? snippets[lang]() : "";
    for (const b of $$("[data-copy-as]", box)) b.setAttribute("aria-pressed", String(b.dataset.copyAs === lang));
    copy.textContent = "Copy";
  }

  root.addEventListener("bp:sandbox-open", (e) => { id = (e.detail && (e.detail.id || e.detail.name)) || ""; draw(); });
  box.addEventListener("click", (e) => {
    const b = e.target.closest("[data-copy-as]");
    if (b) { lang = b.dataset.copyAs; draw(); }
  });
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      copy.textContent = "Copied";
    } catch (e) { // no clipboard outside HTTPS: select it for Ctrl+C
      const r = document.createRange();
      r.selectNodeContents(code);
      const s = getSelection();
      s.removeAllRanges();
      s.addRange(r);
      copy.textContent = "Selected: press Ctrl+C";
    }
  });
})();
