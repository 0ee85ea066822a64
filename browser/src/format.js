// Turns driver values into display text (the table) and collects the nodes and relationships a
// result holds (the graph). Integers stay the driver's lossless Integer and print exactly.
import neo4j from 'neo4j-driver';

function quoteKey(k) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : '`' + k.replace(/`/g, '``') + '`';
}

function props(p) {
  const keys = Object.keys(p || {});
  if (keys.length === 0) return '';
  return ' {' + keys.map((k) => `${quoteKey(k)}: ${formatValue(p[k])}`).join(', ') + '}';
}

function nodeText(n) {
  return '(' + n.labels.map((l) => ':' + quoteKey(l)).join('') + props(n.properties) + ')';
}

function relText(r) {
  return '[:' + quoteKey(r.type) + props(r.properties) + ']';
}

/** Cypher-like text for any value the driver returns. */
export function formatValue(v) {
  if (v === null || v === undefined) return 'null';
  if (neo4j.isInt(v)) return v.toString();
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? v.toFixed(1) : String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[' + v.map(formatValue).join(', ') + ']';
  if (neo4j.isNode(v)) return nodeText(v);
  if (neo4j.isRelationship(v)) return relText(v);
  if (neo4j.isPath(v)) {
    let text = nodeText(v.start);
    for (const s of v.segments) {
      const forward = s.relationship.startNodeElementId === s.start.elementId;
      text += (forward ? '-' : '<-') + relText(s.relationship) + (forward ? '->' : '-') + nodeText(s.end);
    }
    return text;
  }
  if (v instanceof Uint8Array) return `<${v.length} bytes>`;
  if (typeof v === 'object' && typeof v.toString === 'function' && v.toString !== Object.prototype.toString) {
    return v.toString(); // temporal, duration and point values
  }
  if (typeof v === 'object') {
    return '{' + Object.keys(v).map((k) => `${quoteKey(k)}: ${formatValue(v[k])}`).join(', ') + '}';
  }
  return String(v);
}

/** The distinct nodes and relationships anywhere in the records (inside lists, maps and paths). */
export function collectGraph(records) {
  const nodes = new Map();
  const rels = new Map();
  const visit = (v) => {
    if (v === null || v === undefined || typeof v !== 'object' || neo4j.isInt(v)) return;
    if (neo4j.isNode(v)) nodes.set(v.elementId, v);
    else if (neo4j.isRelationship(v)) rels.set(v.elementId, v);
    else if (neo4j.isPath(v)) {
      nodes.set(v.start.elementId, v.start);
      for (const s of v.segments) {
        nodes.set(s.end.elementId, s.end);
        rels.set(s.relationship.elementId, s.relationship);
      }
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v.constructor === Object) Object.values(v).forEach(visit);
  };
  for (const r of records) r.keys.forEach((k) => visit(r.get(k)));
  return { nodes: [...nodes.values()], relationships: [...rels.values()] };
}

/** Rows drawn in the table (as Neo4j Browser's default `maxRows`); the rest are only counted. */
const MAX_ROWS = 1000;

/** Renders `records` (at most MAX_ROWS of them) as an HTML table into `el`. */
export function renderTable(el, keys, records) {
  el.replaceChildren();
  if (keys.length === 0) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = '(no columns)';
    el.append(p);
    return;
  }
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const k of keys) {
    const th = document.createElement('th');
    th.textContent = k;
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of records.slice(0, MAX_ROWS)) {
    const row = body.insertRow();
    for (const k of keys) row.insertCell().textContent = formatValue(r.get(k));
  }
  el.append(table);
  if (records.length > MAX_ROWS) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = `Showing the first ${MAX_ROWS} of ${records.length} rows.`;
    el.append(p);
  }
  el.dataset.rowCount = String(Math.min(records.length, MAX_ROWS));
}
