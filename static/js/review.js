// The test-set review screen's keys (templates/testsets/review.html). The page works without
// this file (plain forms that post and redirect); this only makes it faster: a accept, r the
// reason box, e the edit form, Enter submits the form being typed in, j/k next/previous item.
(function () {
  "use strict";

  var isTyping = window.FaithKeys.isTyping; // static/js/keys.js
  var submit = window.FaithKeys.submit;
  var FORMS = ["reject-form", "edit-form"];

  function byId(id) { return document.getElementById(id); }

  function toggleHelp() {
    var dialog = byId("review-key-help");
    if (!dialog) return;
    if (dialog.open) dialog.close(); else dialog.showModal();
  }

  function focusField(id) {
    var box = byId(id);
    if (!box) return;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  function openEdit() {
    var details = byId("edit-box");
    if (!details) return;
    details.open = true;
    focusField("edit-question");
  }

  function follow(id) {
    var link = byId(id);
    if (link) link.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var dialog = byId("review-key-help");
    if (dialog && dialog.open) {
      if (event.key === "?") { event.preventDefault(); dialog.close(); }
      return;
    }
    var form = event.target.form;
    var own = form && FORMS.indexOf(form.id) >= 0;
    if (isTyping(event.target)) {
      if (own && event.key === "Enter" && !event.shiftKey && event.target.tagName !== "SELECT") {
        event.preventDefault();
        submit(form);
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.target.blur();
      }
      return;
    }
    var key = event.key;
    if (key === "a") { event.preventDefault(); submit(byId("accept-form")); }
    else if (key === "r") { event.preventDefault(); focusField("reject-reason"); }
    else if (key === "e") { event.preventDefault(); openEdit(); }
    else if (key === "j") { event.preventDefault(); follow("item-next"); }
    else if (key === "k") { event.preventDefault(); follow("item-prev"); }
    else if (key === "?") { event.preventDefault(); toggleHelp(); }
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest(".key-help-open")) toggleHelp();
  });

  // After a swap the keyboard lands on the new item's heading (or the edit form, reopened
  // with an error on its first box), never on a detached element.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (!event.detail.target || event.detail.target.id !== "review") {
      if (!byId("review")) return;
    }
    var details = byId("edit-box");
    if (details && details.open) { focusField("edit-question"); return; }
    var heading = byId("item-heading");
    if (heading) heading.focus({ preventScroll: false });
    window.scrollTo({ top: 0 });
  });
})();
