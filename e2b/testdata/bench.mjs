// Create → first command output, through the official e2b SDK and through
// Bullpen's native REST API (fetch, the same client runtime), interleaved
// in one run against one server. Prints figure lines (p50 of N each) and
// the ratio. Run by cmd/bullpen's BenchmarkE2BFirstOutput.
const { Sandbox } = await import(process.env.E2B_SDK);
const n = Number(process.env.BENCH_N || 20);
const auth = { Authorization: 'Bearer ' + process.env.BULLPEN_TOKEN, 'Content-Type': 'application/json' };

async function viaSDK() {
  const t0 = performance.now();
  const sbx = await Sandbox.create('base', { timeoutMs: 300_000 });
  let first = 0;
  await sbx.commands.run('echo hi', { onStdout: () => { if (!first) first = performance.now() } });
  const d = first - t0;
  await sbx.kill();
  return d;
}

async function viaREST() {
  const t0 = performance.now();
  const c = await fetch(process.env.BULLPEN_URL + 'api/v1/sandboxes', { method: 'POST', headers: auth, body: JSON.stringify({ timeout: 300 }) });
  const { id } = await c.json();
  const r = await fetch(process.env.BULLPEN_URL + 'api/v1/sandboxes/' + id + '/exec', { method: 'POST', headers: auth, body: JSON.stringify({ cmd: ['echo', 'hi'] }) });
  const reader = r.body.getReader();
  let first = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!first && new TextDecoder().decode(value).includes('hi')) first = performance.now();
  }
  await fetch(process.env.BULLPEN_URL + 'api/v1/sandboxes/' + id, { method: 'DELETE', headers: auth });
  return first - t0;
}

const p50 = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
await viaSDK(); await viaREST(); // warm both paths (module load, connections)
const sdk = [], rest = [];
for (let i = 0; i < n; i++) {
  sdk.push(await viaSDK());
  rest.push(await viaREST());
}
console.log(`figure e2b_sdk_first_output_p50_ms ${p50(sdk).toFixed(1)} ms`);
console.log(`figure e2b_rest_first_output_p50_ms ${p50(rest).toFixed(1)} ms`);
console.log(`figure e2b_sdk_over_rest ${(p50(sdk) / p50(rest)).toFixed(2)} x`);
