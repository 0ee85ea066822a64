// Arbor Browser end to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core): `arbor serve` with basic auth on free ports, `/` redirects a browser to the
// page, a wrong password is refused, the right one connects over Bolt-over-WebSocket with the
// official JavaScript driver, a query creates and returns a small graph (table rows, graph drawing
// node and relationship counts), EXPLAIN and PROFILE draw plan trees, a syntax error shows Neo4j's
// code, and the schema and history panels fill. Screenshots go to $ARBOR_ARTIFACTS (default
// target/ci-artifacts/): browser-graph.png, browser-plan.png. Binary: $ARBOR_BIN (default
// target/release/arbor); browser: $CHROMIUM (default /usr/bin/chromium).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const BIN = process.env.ARBOR_BIN || join(root, 'target/release/arbor');
const ARTIFACTS = process.env.ARBOR_ARTIFACTS || join(root, 'target/ci-artifacts');
const PASSWORD = 'browser-test-secret';
// The flags this machine's closed network needs (no background connections, no sandbox as root).
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let server;
let dataDir;
let browser;
let page;
let http;
let bolt;
const pageErrors = [];

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.unref();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function waitReady(proc) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`arbor serve exited with ${proc.exitCode}`);
    try {
      const r = await fetch(`http://127.0.0.1:${http}/health/ready`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('arbor serve did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Replaces the editor's text (CodeMirror) the way a paste would. */
async function setQuery(text) {
  await page.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

async function runAndWait(button) {
  const before = await page.getAttribute('#summary', 'data-run');
  await page.click(button);
  await page.waitForFunction((b) => {
    const s = document.getElementById('summary');
    return s.dataset.run !== b && (s.dataset.state === 'done' || s.dataset.state === 'error');
  }, before);
  return page.getAttribute('#summary', 'data-state');
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'arbor-browser-'));
  [bolt, http] = [await freePort(), await freePort()];
  server = spawn(BIN, ['serve', '--data', dataDir, '--listen', `127.0.0.1:${bolt}`,
    '--http-listen', `127.0.0.1:${http}`, '--auth', 'basic', '--initial-password', PASSWORD], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitReady(server);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: FLAGS,
    chromiumSandbox: false,
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  mkdirSync(ARTIFACTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.on('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

test('Arbor Browser in headless Chromium', async (t) => {
  await t.test('/ redirects a browser to /browser/, which loads with the Bolt address filled in', async () => {
    const r = await fetch(`http://127.0.0.1:${http}/`, { headers: { Accept: 'application/json' } });
    assert.ok((await r.json()).bolt_direct, 'a driver still gets the discovery document at /');
    const reply = await page.goto(`http://127.0.0.1:${http}/`);
    assert.equal(reply.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/browser/');
    await page.waitForFunction(() => document.getElementById('url').value !== '');
    assert.equal(await page.inputValue('#url'), `bolt://127.0.0.1:${bolt}`);
  });

  await t.test('a wrong password is refused with Neo4j\'s code', async () => {
    await page.fill('#user', 'neo4j');
    await page.fill('#password', 'not-the-password');
    await page.click('#connect');
    await page.waitForSelector('#status[data-state="error"]');
    assert.match(await page.textContent('#status'), /Neo\.ClientError\.Security\.Unauthorized/);
  });

  await t.test('connects over WebSocket with the official driver', async () => {
    await page.fill('#password', PASSWORD);
    await page.click('#connect');
    await page.waitForSelector('#status[data-state="connected"]');
    assert.match(await page.textContent('#status'), /Neo4j\/5\./);
  });

  await t.test('a query that creates and returns a graph: table rows and graph drawing', async () => {
    await setQuery("CREATE p = (:Person {name: 'Ada'})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob'})"
      + "-[:KNOWS {since: 2021}]->(:Person {name: 'Cy'})\n"
      + 'WITH p UNWIND relationships(p) AS r\nRETURN startNode(r) AS a, r, endNode(r) AS b ORDER BY r.since');
    assert.equal(await runAndWait('#run'), 'done', await page.textContent('#summary'));
    assert.match(await page.textContent('#summary'), /2 rows.*nodesCreated: 3.*relationshipsCreated: 2/);
    await page.click('.tabs button[data-tab="table"]');
    const header = await page.$$eval('#table th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(header, ['a', 'r', 'b']);
    const rows = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.deepEqual(rows, [
      ['(:Person {name: "Ada"})', '[:KNOWS {since: 2020}]', '(:Person {name: "Bob"})'],
      ['(:Person {name: "Bob"})', '[:KNOWS {since: 2021}]', '(:Person {name: "Cy"})'],
    ]);
    await page.click('.tabs button[data-tab="graph"]');
    await page.waitForSelector('#graph[data-node-count="3"]');
    assert.equal(await page.getAttribute('#graph', 'data-relationship-count'), '2');
    assert.ok((await page.$$('#graph canvas')).length > 0, 'cytoscape drew on a canvas');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-graph.png') });
  });

  await t.test('EXPLAIN and PROFILE draw the plan as a tree', async () => {
    await setQuery('MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.name AS name ORDER BY name');
    assert.equal(await runAndWait('#explain'), 'done', await page.textContent('#summary'));
    await page.waitForSelector('#pane-plan.active');
    const ops = Number(await page.getAttribute('#plan', 'data-operator-count'));
    assert.ok(ops >= 3, `at least three operators, got ${ops}`);
    const rootOp = await page.getAttribute('#plan > ul > li > .plan-op', 'data-operator');
    assert.match(rootOp, /^ProduceResults/);
    const all = await page.$$eval('#plan .plan-op', (els) => els.map((e) => e.dataset.operator));
    assert.equal(all.length, ops);
    assert.ok(all.some((o) => /Scan|Seek/.test(o)), `a scan or seek among ${all}`);
    const depth = await page.$$eval('#plan .plan-op', (els) => Math.max(...els.map((e) => {
      let d = 0;
      for (let n = e; n && n.id !== 'plan'; n = n.parentElement) if (n.tagName === 'UL') d += 1;
      return d;
    })));
    assert.ok(depth >= 3, `a tree at least three levels deep, got ${depth}`);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-plan.png') });
    assert.equal(await runAndWait('#profile'), 'done', await page.textContent('#summary'));
    await page.click('.tabs button[data-tab="plan"]');
    assert.match(await page.textContent('#plan .plan-op'), /DB hits: \d+/);
    assert.match(await page.textContent('#summary'), /^2 rows/);
  });

  await t.test('a syntax error shows Neo4j\'s status code', async () => {
    await setQuery('MATCH (n RETURN n');
    assert.equal(await runAndWait('#run'), 'error');
    assert.match(await page.textContent('#summary'), /Neo\.ClientError\.Statement\.SyntaxError/);
  });

  await t.test('the schema lists the new label and type, the history the queries', async () => {
    await page.click('#schema-refresh');
    await page.waitForFunction(() => {
      const l = document.querySelector('#schema ul[data-part="Labels"]');
      const r = document.querySelector('#schema ul[data-part="Relationship types"]');
      return l && r && l.textContent.includes('Person') && r.textContent.includes('KNOWS');
    });
    const history = await page.$$eval('#history li', (lis) => lis.map((li) => li.textContent));
    assert.equal(history[0], 'MATCH (n RETURN n');
    assert.ok(history.some((q) => q.startsWith('CREATE p = ')), 'the CREATE query is in the history');
    await page.click('#history li:nth-child(2)');
    assert.match(await page.textContent('.cm-content'), /MATCH \(a:Person\)/);
  });

  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
