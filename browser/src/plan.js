// EXPLAIN / PROFILE plans drawn as a tree: each operator a box with its details, its children
// (the operators feeding it) below, joined by lines. Boxes carry data-operator for tests.
import { formatValue } from './format.js';

const SHOWN_ARGS = ['Details', 'EstimatedRows', 'PageCacheHits', 'Memory'];

function opBox(op, profiled) {
  const box = document.createElement('div');
  box.className = 'plan-op';
  box.dataset.operator = op.operatorType;
  const title = document.createElement('div');
  title.className = 'plan-op-name';
  title.textContent = op.operatorType.replace(/@.*$/, '');
  box.append(title);
  const args = op.arguments || {};
  const lines = [];
  for (const k of SHOWN_ARGS) if (k in args) lines.push(`${k}: ${formatValue(args[k]).replace(/^"|"$/g, '')}`);
  if (op.identifiers && op.identifiers.length) lines.push('Variables: ' + op.identifiers.join(', '));
  if (profiled) lines.push(`Rows: ${op.rows}`, `DB hits: ${op.dbHits}`);
  for (const l of lines) {
    const d = document.createElement('div');
    d.className = 'plan-op-arg';
    d.textContent = l;
    box.append(d);
  }
  return box;
}

function subtree(op, profiled, counter) {
  counter.n += 1;
  const li = document.createElement('li');
  li.append(opBox(op, profiled));
  const kids = op.children || [];
  if (kids.length) {
    const ul = document.createElement('ul');
    for (const c of kids) ul.append(subtree(c, profiled, counter));
    li.append(ul);
  }
  return li;
}

/** Draws `plan` (summary.plan or summary.profile) into `el`, or says there is none. */
export function renderPlan(el, plan, profiled) {
  el.replaceChildren();
  if (!plan) {
    el.dataset.operatorCount = '0';
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = 'No plan: prefix a query with EXPLAIN or PROFILE (or use the buttons).';
    el.append(p);
    return;
  }
  const counter = { n: 0 };
  const ul = document.createElement('ul');
  ul.className = 'plan-tree';
  ul.append(subtree(plan, profiled, counter));
  el.append(ul);
  el.dataset.operatorCount = String(counter.n);
}
