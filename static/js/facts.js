/* Loaded by templates/annotate/facts.html (no inline script: the Content-Security-Policy allows none). */
/* A selection inside one passage fills the form: the passage, the text, and its offsets in
   UTF-16 units (what the browser counts), which the server converts to code points. */
document.addEventListener("selectionchange", function () {
  var selection = document.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) { return; }
  var range = selection.getRangeAt(0);
  var start = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
  var end = range.endContainer.nodeType === 1 ? range.endContainer : range.endContainer.parentElement;
  var passage = start && start.closest(".fact-source");
  if (!passage || !end || end.closest(".fact-source") !== passage) { return; }
  var before = document.createRange();
  before.selectNodeContents(passage);
  before.setEnd(range.startContainer, range.startOffset);
  var startUnits = before.toString().length;
  var text = range.toString();
  var form = document.querySelector(".fact-form");
  form.querySelector("[name=passage]").value = passage.dataset.passage;
  form.querySelector("[name=quote]").value = text;
  form.querySelector("[name=start_utf16]").value = String(startUnits);
  form.querySelector("[name=end_utf16]").value = String(startUnits + text.length);
});
/* Typing in the box instead clears the offsets: the server then finds the text itself. */
document.addEventListener("input", function (event) {
  if (event.target.id !== "fact-quote") { return; }
  var form = event.target.form;
  form.querySelector("[name=start_utf16]").value = "";
  form.querySelector("[name=end_utf16]").value = "";
});
