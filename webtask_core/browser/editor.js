// What an editor holds, read as the tree shows it (observe_names.js): an editable region's text
// markdown-like, a code editor's text as is; null when the element left the page. Given the element
// itself, not its mark: an editor may rewrite its root's attributes (CKEditor 5 drops the mark).
(el) => {
  const VALUE_MAX = 100;
  const listeners = null;
  // @include observe_names.js
  // @include observe_widgets.js
  if (!el.isConnected) return null;
  const code = codeEditorText(el);
  if (code !== null) return {code: true, text: code.replace(/\n+$/, '')};
  const cm6 = el.closest('.cm-editor');
  if (cm6) return {code: true, text: Array.from(cm6.querySelectorAll('.cm-line'), (line) => line.textContent).join('\n')};
  return {code: false, text: editableText(el)};
}
