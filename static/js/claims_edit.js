/* Loaded by templates/annotate/claims_edit.html (no inline script: the Content-Security-Policy allows none). */
/* Split at the cursor: the claim's textarea reports its caret in UTF-16 units, which the server
   converts to code points. A typed "second claim starts with" wins when both are given. */
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (!form.classList || !form.classList.contains("split-at-form")) { return; }
  var item = form.closest(".claim-item");
  var area = item && item.querySelector("[data-claim-text]");
  var before = form.querySelector("[name=before]");
  if (area && !before.value.trim()) {
    if (area.value !== area.defaultValue) {
      event.preventDefault(); event.stopImmediatePropagation();
      alert("Save the edited text first, then split it.");
      return;
    }
    form.querySelector("[name=at_utf16]").value = String(area.selectionStart);
  }
}, true);
