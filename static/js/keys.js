// What the keyboard screens (labelling, pairwise) share: whether a key press is typing into a
// field, and submitting a form as a click on Save would. Loaded before each screen's own file.
(function () {
  "use strict";

  function isTyping(el) {
    if (!el || !el.tagName) return false;
    if (el.isContentEditable) return true;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag === "INPUT") {
      var type = (el.type || "text").toLowerCase();
      return ["radio", "checkbox", "button", "submit", "reset", "hidden"].indexOf(type) < 0;
    }
    return false;
  }

  function submit(form) {
    if (!form) return;
    // htmx binds a swapped-in form's hx-post only when the swap settles (20 ms later): a key
    // pressed in between would post the form natively and reload the page. Processing it now
    // binds it at once; htmx skips a form it has bound already.
    if (window.htmx && form.hasAttribute("hx-post")) window.htmx.process(form);
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  window.FaithKeys = { isTyping: isTyping, submit: submit };
})();
