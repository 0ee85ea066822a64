// Arbor Browser: the page's wiring. Connects with the official neo4j-driver (its browser build
// speaks Bolt over WebSocket to the Bolt port), runs the editor's query, and shows the result as a
// table, a graph drawing and (for EXPLAIN/PROFILE) a plan tree; the schema and the history sit on
// the side. State that tests read is on the DOM: #status[data-state], #summary[data-state],
// #table[data-row-count], #graph[data-node-count|data-relationship-count],
// #plan[data-operator-count] and .plan-op[data-operator].
import neo4j from 'neo4j-driver';
import './style.css';
import { createEditor } from './editor.js';
import { collectGraph, renderTable } from './format.js';
import { renderGraph, refitGraph } from './graph.js';
import { renderPlan } from './plan.js';
import { renderSchema } from './schema.js';
import { clearHistory, remember, renderHistory } from './history.js';

const $ = (id) => document.getElementById(id);
const SAVED = 'arbor.browser.connection';
let driver = null;
let pendingGraph = null;
let runs = 0;

function setStatus(state, text) {
  $('status').dataset.state = state;
  $('status').textContent = text;
}

function setSummary(state, text) {
  $('summary').dataset.state = state;
  $('summary').textContent = text;
}

function showTab(name) {
  for (const b of document.querySelectorAll('.tabs button')) b.classList.toggle('active', b.dataset.tab === name);
  for (const p of document.querySelectorAll('.pane')) p.classList.toggle('active', p.id === 'pane-' + name);
  if (name === 'graph') {
    if (pendingGraph) {
      renderGraph($('graph'), pendingGraph, (t) => { $('graph-detail').textContent = t; });
      pendingGraph = null;
    }
    refitGraph();
  }
}

function enableRun(on) {
  for (const id of ['run', 'explain', 'profile', 'schema-refresh']) $(id).disabled = !on;
  $('disconnect').disabled = !on;
}

async function defaultUrl() {
  // The discovery document at / names the Bolt address this server listens on.
  try {
    const r = await fetch('../', { headers: { Accept: 'application/json' } });
    const doc = await r.json();
    if (doc.bolt_direct) return doc.bolt_direct.replace('bolt://127.0.0.1', `bolt://${location.hostname}`);
  } catch {
    // Not served by arbor (a dev server): fall back to the default port.
  }
  return `bolt://${location.hostname || '127.0.0.1'}:7687`;
}

async function connect(event) {
  event.preventDefault();
  if (driver) await disconnect();
  const url = $('url').value.trim();
  const user = $('user').value;
  setStatus('connecting', `connecting to ${url} ...`);
  try {
    driver = neo4j.driver(url, neo4j.auth.basic(user, $('password').value), { userAgent: 'arbor-browser/0.1' });
    const info = await driver.getServerInfo();
    localStorage.setItem(SAVED, JSON.stringify({ url, user }));
    setStatus('connected', `connected to ${info.address} (${info.agent}) as ${user}`);
    enableRun(true);
    refreshSchema();
  } catch (e) {
    if (driver) driver.close();
    driver = null;
    setStatus('error', `connection failed: ${e.code ? e.code + ': ' : ''}${e.message}`);
  }
}

async function disconnect() {
  enableRun(false);
  if (driver) await driver.close();
  driver = null;
  setStatus('disconnected', 'not connected');
}

function refreshSchema() {
  if (!driver) return;
  renderSchema($('schema'), driver, undefined, (part, item) => {
    if (part === 'Labels') editor.set(`MATCH (n:\`${item}\`) RETURN n LIMIT 25`);
    else if (part === 'Relationship types') editor.set(`MATCH p = ()-[:\`${item}\`]->() RETURN p LIMIT 25`);
  });
}

function describe(summary, ms, rows) {
  const counters = summary.counters.updates();
  const changed = Object.entries(counters).filter(([, n]) => n > 0).map(([k, n]) => `${k}: ${n}`);
  const parts = [`${rows} row${rows === 1 ? '' : 's'}`, `${ms} ms`];
  if (changed.length) parts.push(changed.join(', '));
  if (summary.notifications && summary.notifications.length) parts.push(`${summary.notifications.length} notification(s): ${summary.notifications.map((n) => n.title).join('; ')}`);
  return parts.join(' | ');
}

async function run(prefix = '') {
  if (!driver) return;
  let query = editor.get().trim();
  if (!query) return;
  remember(query);
  renderHistory($('history'), (q) => editor.set(q));
  if (prefix && !new RegExp('^' + prefix + '\\b', 'i').test(query)) query = `${prefix} ${query}`;
  setSummary('running', 'running ...');
  $('summary').dataset.run = String(++runs);
  const started = performance.now();
  const session = driver.session();
  try {
    const pending = session.run(query);
    const keys = await pending.keys();
    const result = await pending;
    const ms = Math.round(performance.now() - started);
    const summary = result.summary;
    renderTable($('table'), keys, result.records);
    const graph = collectGraph(result.records);
    pendingGraph = graph;
    $('graph').dataset.nodeCount = '0';
    $('graph').dataset.relationshipCount = '0';
    const profiled = summary.hasProfile();
    renderPlan($('plan'), profiled ? summary.profile : summary.hasPlan() ? summary.plan : null, profiled);
    setSummary('done', describe(summary, ms, result.records.length));
    if (summary.hasPlan() || profiled) showTab(result.records.length ? 'table' : 'plan');
    else if (graph.nodes.length) showTab('graph');
    else showTab('table');
    if (summary.counters.containsUpdates() || summary.counters.containsSystemUpdates()) refreshSchema();
  } catch (e) {
    setSummary('error', `${e.code || 'Error'}: ${e.message}`);
  } finally {
    await session.close();
  }
}

const editor = createEditor($('editor'), 'MATCH (n) RETURN n LIMIT 25', () => run());

$('connect-form').addEventListener('submit', connect);
$('disconnect').addEventListener('click', disconnect);
$('run').addEventListener('click', () => run());
$('explain').addEventListener('click', () => run('EXPLAIN'));
$('profile').addEventListener('click', () => run('PROFILE'));
$('schema-refresh').addEventListener('click', refreshSchema);
$('history-clear').addEventListener('click', () => { clearHistory(); renderHistory($('history'), (q) => editor.set(q)); });
for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
renderHistory($('history'), (q) => editor.set(q));
renderPlan($('plan'), null, false);

(async () => {
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(SAVED) || '{}'); } catch { /* ignore */ }
  $('url').value = saved.url || (await defaultUrl());
  if (saved.user) $('user').value = saved.user;
})();
