// The schema panel: labels, relationship types, indexes and constraints of the connected database,
// each read with its own query so that one the server refuses does not hide the others.

/** `name TYPE :Label(prop, ...)`, leaving out what a rule does not have (LOOKUP indexes). */
function describeRule(r) {
  const on = (r.get('labelsOrTypes') || []).map((l) => ':' + l).join('|');
  const props = r.get('properties');
  return [r.get('name'), r.get('type'), on + (props ? `(${props.join(', ')})` : '')].join(' ').trim();
}

const PARTS = [
  ['Labels', 'CALL db.labels() YIELD label RETURN label AS name ORDER BY name', (r) => r.get('name')],
  ['Relationship types', 'CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS name ORDER BY name', (r) => r.get('name')],
  ['Indexes', 'SHOW INDEXES YIELD name, type, labelsOrTypes, properties RETURN name, type, labelsOrTypes, properties ORDER BY name',
    describeRule],
  ['Constraints', 'SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties RETURN name, type, labelsOrTypes, properties ORDER BY name',
    describeRule],
];

/** Reads the schema through `driver` and lists it in `el`; `onPick(text)` gets a clicked name. */
export async function renderSchema(el, driver, database, onPick) {
  const sections = await Promise.all(PARTS.map(async ([title, query, line]) => {
    try {
      const { records } = await driver.executeQuery(query, {}, { database, routing: 'READ' });
      return [title, records.map(line), null];
    } catch (e) {
      return [title, [], e.message];
    }
  }));
  el.replaceChildren();
  for (const [title, items, error] of sections) {
    const h = document.createElement('h3');
    h.textContent = `${title} (${items.length})`;
    el.append(h);
    const ul = document.createElement('ul');
    ul.dataset.part = title;
    if (error) {
      const li = document.createElement('li');
      li.className = 'error';
      li.textContent = error;
      ul.append(li);
    }
    for (const item of items) {
      const li = document.createElement('li');
      li.textContent = item;
      li.addEventListener('click', () => onPick(title, item));
      ul.append(li);
    }
    el.append(ul);
  }
}
