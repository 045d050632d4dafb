// Drives Bullpen's E2B-compatible API with the official e2b SDK and checks
// each result against Bullpen's native REST API (BULLPEN_URL,
// BULLPEN_TOKEN). Prints "ok NAME" per check and exits non-zero on the
// first failure. Run by cmd/bullpen's TestE2BSDK.
import { createHash } from 'node:crypto';
const { Sandbox, CommandExitError, NotFoundError, SandboxNotFoundError, AuthenticationError } = await import(process.env.E2B_SDK);

const native = async (method, path, body) => {
  const r = await fetch(process.env.BULLPEN_URL + 'api/v1/' + path, {
    method, headers: { Authorization: 'Bearer ' + process.env.BULLPEN_TOKEN, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
};
const fail = (name, why) => { console.log('FAIL ' + name + ': ' + why); process.exit(1); };
const check = (name, cond, why) => { if (!cond) fail(name, why); console.log('ok ' + name); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const until = async (fn, ms = 5000) => { const end = Date.now() + ms; while (Date.now() < end) { if (await fn()) return true; await sleep(50); } return false; };

// create, with metadata, envs and a timeout
const sbx = await Sandbox.create('base', { timeoutMs: 600_000, metadata: { suite: 'sdk', run: process.env.RUN_ID }, envs: { GREETING: 'hi' } });
let nv = await native('GET', 'sandboxes/' + sbx.sandboxId);
check('create', nv.status === 200 && nv.body.state === 'running' && nv.body.tags.suite === 'sdk' && nv.body.env.GREETING === 'hi' && nv.body.network.allow === undefined,
  JSON.stringify(nv.body));
const info = await sbx.getInfo();
check('getInfo', info.sandboxId === sbx.sandboxId && info.templateId === 'base' && info.metadata.suite === 'sdk' && info.state === 'running' &&
  Math.abs(new Date(nv.body.expires_at) - info.endAt) < 1000 && info.memoryMB * 1048576 === nv.body.memory_bytes, JSON.stringify(info));

// commands, with and without streaming
const r1 = await sbx.commands.run('echo $GREETING; echo err >&2');
check('run', r1.exitCode === 0 && r1.stdout === 'hi\n' && r1.stderr === 'err\n', JSON.stringify(r1));
let streamed = '';
await sbx.commands.run('for i in 1 2 3; do echo line$i; sleep 0.05; done', { onStdout: (d) => { streamed += d } });
check('run streamed', streamed === 'line1\nline2\nline3\n', JSON.stringify(streamed));
try { await sbx.commands.run('echo out; exit 7'); fail('exit code', 'no error') } catch (e) {
  check('exit code', e instanceof CommandExitError && e.exitCode === 7 && e.stdout === 'out\n', String(e));
}
let hist;
check('exec history', await until(async () => {
  hist = await native('GET', 'sandboxes/' + sbx.sandboxId + '/execs');
  return hist.body.items.some((x) => x.command.includes('exit 7') && x.exit_code === 7 && x.stdout === 'out\n' && x.by_id === 1);
}), JSON.stringify(hist.body).slice(0, 500));

// background process, list, connect, stdin, signals
const bg = await sbx.commands.run('while read l; do echo got:$l; done; echo eof', { background: true, stdin: true });
const procs = await sbx.commands.list();
check('list processes', procs.some((p) => p.pid === bg.pid && p.cmd === '/bin/bash'), JSON.stringify(procs));
await sbx.commands.sendStdin(bg.pid, 'one\n');
let seen = '';
const again = await sbx.commands.connect(bg.pid, { onStdout: (d) => { seen += d } });
await sbx.commands.sendStdin(bg.pid, 'two\n');
check('stdin', await until(() => bg.stdout.includes('got:one') && bg.stdout.includes('got:two') && seen.includes('got:two')), JSON.stringify([bg.stdout, seen]));
await sbx.commands.closeStdin(bg.pid);
const bgEnd = await bg.wait();
check('close stdin', bgEnd.exitCode === 0 && bgEnd.stdout.endsWith('eof\n'), JSON.stringify(bgEnd));
await again.wait().catch(() => {});

const sleeper = await sbx.commands.run('trap "echo term; exit 143" TERM; echo ready; while true; do sleep 0.1; done', { background: true });
await until(() => sleeper.stdout.includes('ready'));
// The SDK's kill sends SIGKILL; SIGTERM goes through the SDK's own
// process.Process client.
await sbx.commands.rpc.sendSignal({ process: { selector: { case: 'pid', value: sleeper.pid } }, signal: 15 });
const termEnd = await sleeper.wait().catch((e) => e);
check('SIGTERM', termEnd.exitCode === 143 && termEnd.stdout.includes('term'), JSON.stringify(termEnd));
const victim = await sbx.commands.run('sleep 600', { background: true });
check('kill', await sbx.commands.kill(victim.pid) === true, 'kill answered false');
const killed = await victim.wait().catch((e) => e);
check('SIGKILL', killed.exitCode !== 0 && !(await sbx.commands.list()).some((p) => p.pid === victim.pid), JSON.stringify(killed));

// PTY
let pty = '';
const term = await sbx.pty.create({ cols: 100, rows: 30, onData: (d) => { pty += new TextDecoder().decode(d) } });
await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size; tty\n'));
check('pty', await until(() => pty.includes('30 100') && pty.includes('/dev/pts/')), JSON.stringify(pty.slice(-300)));
await sbx.pty.resize(term.pid, { cols: 120, rows: 40 });
await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size\n'));
check('pty resize', await until(() => pty.includes('40 120')), JSON.stringify(pty.slice(-300)));
await sbx.pty.kill(term.pid);

// files: up and down, 100 MB by SHA-256
const w = await sbx.files.write('dir/sub/a.txt', 'abc');
check('write', w.path.endsWith('/dir/sub/a.txt') && (await sbx.files.read('dir/sub/a.txt')) === 'abc', JSON.stringify(w));
const nf = await native('GET', 'sandboxes/' + sbx.sandboxId + '/files/stat?path=dir/sub/a.txt');
check('write seen natively', nf.status === 200 && nf.body.size === 3, JSON.stringify(nf.body));
const big = Buffer.alloc(100 << 20);
for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE((i * 2654435761) >>> 0, i);
const want = createHash('sha256').update(big).digest('hex');
await sbx.files.write('/tmp/big.bin', big);
const back = Buffer.from(await sbx.files.read('/tmp/big.bin', { format: 'bytes' }));
const inside = (await sbx.commands.run('sha256sum /tmp/big.bin')).stdout.split(' ')[0];
check('100 MB round trip', back.length === big.length && createHash('sha256').update(back).digest('hex') === want && inside === want, `${back.length} ${inside}`);
await sbx.files.remove('/tmp/big.bin');
check('make dir', (await sbx.files.makeDir('d2')) === true && (await sbx.files.makeDir('d2')) === false, 'makeDir');
const moved = await sbx.files.rename('dir/sub/a.txt', 'd2/b.txt');
check('move', moved.name === 'b.txt' && (await sbx.files.exists('d2/b.txt')) && !(await sbx.files.exists('dir/sub/a.txt')), JSON.stringify(moved));
const ls = await sbx.files.list('d2');
const nls = await native('GET', 'sandboxes/' + sbx.sandboxId + '/files/list?path=d2');
check('list dir', ls.length === 1 && ls[0].name === 'b.txt' && ls[0].type === 'file' && JSON.stringify(nls.body).includes('b.txt'), JSON.stringify(ls));
const st = await sbx.files.getInfo('d2');
check('stat', st.type === 'dir' && st.name === 'd2', JSON.stringify(st));

// watch a directory
const events = [];
await sbx.files.makeDir('watched');
const watcher = await sbx.files.watchDir('watched', (e) => events.push(e.type + ':' + e.name));
await sbx.files.write('watched/new.txt', 'x');
await until(() => events.includes('create:new.txt'));
await sleep(300);
await sbx.files.write('watched/new.txt', 'longer');
await until(() => events.includes('write:new.txt'));
await sbx.files.remove('watched/new.txt');
check('watch', await until(() => events.includes('create:new.txt') && events.includes('write:new.txt') && events.includes('remove:new.txt')), JSON.stringify(events));
await watcher.stop();

// list and filter
const other = await Sandbox.create('base', { timeoutMs: 600_000, metadata: { suite: 'sdk', run: process.env.RUN_ID, role: 'other' } });
const byRun = await Sandbox.list({ query: { metadata: { run: process.env.RUN_ID } } }).nextItems();
const byRole = await Sandbox.list({ query: { metadata: { run: process.env.RUN_ID, role: 'other' } } }).nextItems();
const nlist = await native('GET', 'sandboxes?tag=run=' + process.env.RUN_ID);
check('list filter', byRun.length === 2 && byRole.length === 1 && byRole[0].sandboxId === other.sandboxId && (nlist.body.items ?? nlist.body).length === 2,
  JSON.stringify([byRun.map((s) => s.sandboxId), byRole.map((s) => s.sandboxId)]));

// timeout
await sbx.setTimeout(1_800_000);
nv = await native('GET', 'sandboxes/' + sbx.sandboxId);
check('set timeout', Math.abs(new Date(nv.body.expires_at) - (Date.now() + 1_800_000)) < 5000, nv.body.expires_at);

// pause and resume, files kept
await other.files.write('/home/sandbox/kept.txt', 'still here');
check('pause', (await other.pause()) === true && (await native('GET', 'sandboxes/' + other.sandboxId)).body.state === 'paused', 'not paused');
const paused = await Sandbox.list({ query: { metadata: { run: process.env.RUN_ID }, state: ['paused'] } }).nextItems();
check('state filter', paused.length === 1 && paused[0].sandboxId === other.sandboxId && paused[0].state === 'paused', JSON.stringify(paused));
const resumed = await Sandbox.connect(other.sandboxId);
check('resume', (await native('GET', 'sandboxes/' + other.sandboxId)).body.state === 'running' &&
  (await resumed.files.read('/home/sandbox/kept.txt')) === 'still here' && (await resumed.commands.run('cat kept.txt')).stdout === 'still here', 'files not kept');

// metrics
const metrics = await sbx.getMetrics();
check('metrics', metrics.length === 1 && metrics[0].memUsed > 0 && metrics[0].memTotal === nv.body.memory_bytes, JSON.stringify(metrics));

// published ports
const srv = await sbx.commands.run('mkdir -p www && echo served > www/index.html && cd www && exec python3 -m http.server 8000', { background: true });
const host = sbx.getHost(8000);
let page = null;
await until(async () => {
  const r = await fetch(process.env.E2B_SANDBOX_URL + '/index.html', { headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '8000', 'X-Access-Token': process.env.E2B_API_KEY } }).catch(() => null);
  if (r && r.status === 200) page = await r.text();
  return page !== null;
}, 15000);
const ports = await native('GET', 'sandboxes/' + sbx.sandboxId + '/ports');
check('published port', page === 'served\n' && host.startsWith('8000-' + sbx.sandboxId) && (ports.body.items ?? ports.body).some((p) => p.port === 8000), JSON.stringify([page, host, ports.body]));
await sbx.commands.kill(srv.pid);

// bad input: E2B-shaped errors, nothing changes
const before = (await native('GET', 'sandboxes')).body;
const count = (before.items ?? before).length;
try { await Sandbox.create('no-such-template'); fail('unknown template', 'created') } catch (e) { check('unknown template', e instanceof NotFoundError || /not found/.test(e.message), String(e)) }
try { await Sandbox.create('base', { apiKey: 'e2b_nothex' }); fail('bad key', 'created') } catch (e) { check('bad key shape', e instanceof AuthenticationError, String(e)) }
try { await Sandbox.getInfo('sb_0000000000000000'); fail('foreign id', 'found') } catch (e) { check('foreign id', e instanceof SandboxNotFoundError, String(e)) }
const after = (await native('GET', 'sandboxes')).body;
check('nothing changed', (after.items ?? after).length === count, `${count} -> ${(after.items ?? after).length}`);

// kill
const gone = async (id) => { const r = await native('GET', 'sandboxes/' + id); return r.status === 404 || r.body.state === 'terminated' };
check('kill sandbox', (await Sandbox.kill(other.sandboxId)) === true && (await gone(other.sandboxId)) &&
  (await Sandbox.kill(other.sandboxId)) === false, 'not killed');
await sbx.kill();
check('kill instance', (await gone(sbx.sandboxId)) && !(await Sandbox.list({ query: { metadata: { run: process.env.RUN_ID } } }).nextItems()).length, 'still there');
console.log('ALL OK');
