// The pairwise screen's keys: a (left), b (right), = (tie) save and move on; u undoes the last
// choice; ? shows the keys. The page works without this file (plain forms); this only makes it
// faster.
(function () {
  "use strict";

  var CHOICE_KEYS = { a: "a", b: "b", "=": "=" };

  function byId(id) { return document.getElementById(id); }

  var isTyping = window.FaithKeys.isTyping; // static/js/keys.js
  var submit = window.FaithKeys.submit;

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var dialog = byId("key-help");
    if (dialog && dialog.open) {
      if (event.key === "?") { event.preventDefault(); dialog.close(); }
      return; // Escape closes the dialog natively
    }
    if (isTyping(event.target)) return;
    var key = event.key;
    if (Object.prototype.hasOwnProperty.call(CHOICE_KEYS, key)) {
      var form = byId("pairwise-form");
      var button = form && form.querySelector('button[data-key="' + CHOICE_KEYS[key] + '"]');
      // A click, not requestSubmit(button): htmx sends the clicked button's name and value.
      if (button) { event.preventDefault(); button.click(); }
    } else if (key === "u") {
      event.preventDefault();
      submit(byId("pairwise-undo-form"));
    } else if (key === "?") {
      event.preventDefault();
      if (dialog) { if (dialog.open) dialog.close(); else dialog.showModal(); }
    }
  });

  document.addEventListener("click", function (event) {
    var opener = event.target.closest && event.target.closest(".key-help-open");
    if (!opener) return;
    var dialog = byId("key-help");
    if (dialog) dialog.showModal();
  });
})();
