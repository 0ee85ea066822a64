// The graph drawing: the result's nodes and relationships laid out by cytoscape (canvas). The
// container's data-node-count / data-relationship-count attributes tell tests what is drawn.
import cytoscape from 'cytoscape';
import { formatValue } from './format.js';

const PALETTE = ['#4C8EDA', '#F79767', '#57C7E3', '#F16667', '#D9C8AE', '#8DCC93', '#ECB5C9', '#FFC454', '#DA7194', '#569480'];
const colours = new Map();

function colourOf(label) {
  if (!colours.has(label)) colours.set(label, PALETTE[colours.size % PALETTE.length]);
  return colours.get(label);
}

function caption(n) {
  const p = n.properties || {};
  for (const k of ['name', 'title', 'id', 'label']) if (k in p) return String(formatValue(p[k])).replace(/^"|"$/g, '');
  return n.labels[0] || '';
}

const MAX_NODES = 500;
let cy = null;

/** Draws `graph` ({nodes, relationships}) into `el`; `onSelect(text)` gets a clicked item's details. */
export function renderGraph(el, full, onSelect) {
  if (cy) cy.destroy();
  // As Neo4j Browser, a drawing stops at a few hundred nodes (their relationships among them kept).
  const nodes = full.nodes.slice(0, MAX_NODES);
  const shown = new Set(nodes.map((n) => n.elementId));
  const graph = {
    nodes,
    relationships: full.nodes.length > MAX_NODES
      ? full.relationships.filter((r) => shown.has(r.startNodeElementId) && shown.has(r.endNodeElementId))
      : full.relationships,
  };
  const known = new Set(graph.nodes.map((n) => n.elementId));
  const elements = graph.nodes.map((n) => ({
    data: { id: 'n' + n.elementId, caption: caption(n), colour: colourOf(n.labels[0] || ''), item: n },
  }));
  // A relationship whose end nodes are not in the result gets them as bare placeholders.
  for (const r of graph.relationships) {
    for (const end of [r.startNodeElementId, r.endNodeElementId]) {
      if (!known.has(end)) {
        known.add(end);
        elements.push({ data: { id: 'n' + end, caption: '', colour: '#cccccc', item: null } });
      }
    }
    elements.push({
      data: { id: 'r' + r.elementId, source: 'n' + r.startNodeElementId, target: 'n' + r.endNodeElementId, caption: r.type, item: r },
    });
  }
  cy = cytoscape({
    container: el,
    elements,
    layout: { name: elements.length > 300 ? 'grid' : 'cose', animate: false, randomize: false, nodeDimensionsIncludeLabels: true },
    wheelSensitivity: 0.3,
    style: [
      { selector: 'node', style: { 'background-color': 'data(colour)', label: 'data(caption)', 'font-size': 10, 'text-valign': 'center', 'text-halign': 'center', width: 44, height: 44, color: '#222', 'text-wrap': 'ellipsis', 'text-max-width': 40 } },
      { selector: 'edge', style: { width: 1.5, 'line-color': '#a5abb6', 'target-arrow-color': '#a5abb6', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', label: 'data(caption)', 'font-size': 8, 'text-rotation': 'autorotate', 'text-background-color': '#fff', 'text-background-opacity': 1 } },
      { selector: ':selected', style: { 'border-width': 3, 'border-color': '#222', 'line-color': '#222' } },
    ],
  });
  cy.on('tap', 'node, edge', (e) => {
    const item = e.target.data('item');
    onSelect(item ? formatValue(item) + '   (elementId ' + item.elementId + ')' : '(not in the result)');
  });
  el.dataset.nodeCount = String(cy.nodes().length);
  el.dataset.relationshipCount = String(cy.edges().length);
}

/** Re-fits the drawing after its pane becomes visible (cytoscape measures its container). */
export function refitGraph() {
  if (cy) {
    cy.resize();
    cy.fit(undefined, 20);
  }
}
