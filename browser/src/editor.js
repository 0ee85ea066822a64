// The Cypher editor: CodeMirror 6 with the Cypher mode of @codemirror/legacy-modes (keywords,
// strings, numbers, comments highlighted), Ctrl/Cmd+Enter runs the query.
import { EditorView, basicSetup } from 'codemirror';
import { keymap } from '@codemirror/view';
import { Prec } from '@codemirror/state';
import { StreamLanguage } from '@codemirror/language';
import { cypher } from '@codemirror/legacy-modes/mode/cypher';

/** Creates the editor in `parent`; `onRun()` is called on Ctrl/Cmd+Enter. */
export function createEditor(parent, initial, onRun) {
  const runKeys = Prec.highest(
    keymap.of([{ key: 'Mod-Enter', run: () => { onRun(); return true; } }]),
  );
  const view = new EditorView({
    doc: initial,
    parent,
    extensions: [basicSetup, StreamLanguage.define(cypher), runKeys, EditorView.lineWrapping],
  });
  return {
    get: () => view.state.doc.toString(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
  };
}
