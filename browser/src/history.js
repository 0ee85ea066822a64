// Query history kept in localStorage (most recent first, duplicates moved to the top).
const KEY = 'arbor.browser.history';
const LIMIT = 100;

export function loadHistory() {
  try {
    const h = JSON.parse(localStorage.getItem(KEY) || '[]');
    return Array.isArray(h) ? h.filter((q) => typeof q === 'string') : [];
  } catch {
    return [];
  }
}

export function remember(query) {
  const h = loadHistory().filter((q) => q !== query);
  h.unshift(query);
  localStorage.setItem(KEY, JSON.stringify(h.slice(0, LIMIT)));
}

export function clearHistory() {
  localStorage.removeItem(KEY);
}

/** Lists the history in `el`; clicking an entry calls `onPick(query)`. */
export function renderHistory(el, onPick) {
  el.replaceChildren();
  for (const q of loadHistory()) {
    const li = document.createElement('li');
    li.textContent = q;
    li.title = 'Load into the editor';
    li.addEventListener('click', () => onPick(q));
    el.append(li);
  }
}
