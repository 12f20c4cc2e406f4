// The labelling screen's keyboard and text selection. The page works without this file (plain
// forms); this only makes it faster. Offsets are sent as the browser counts them (UTF-16 code
// units); the server converts them to code points and verifies the quote.
(function () {
  "use strict";

  var VERDICT_KEYS = {
    "1": "SUPPORTED", s: "SUPPORTED",
    "2": "CONTRADICTED", c: "CONTRADICTED",
    "3": "NOT_IN_PILE", n: "NOT_IN_PILE",
  };

  function byId(id) { return document.getElementById(id); }

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

  function showCorrectField() {
    var form = byId("label-form");
    var box = byId("correct-field");
    if (!form || !box) return;
    var checked = form.querySelector("input[name=verdict]:checked");
    box.hidden = !checked || checked.value === "SUPPORTED";
  }

  function chooseVerdict(verdict) {
    var form = byId("label-form");
    if (!form) return;
    var radio = form.querySelector('input[name=verdict][value="' + verdict + '"]');
    if (radio) {
      radio.checked = true;
      showCorrectField();
    }
  }

  function submit(form) {
    if (!form) return;
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  function toggleHelp() {
    var dialog = byId("key-help");
    if (!dialog) return;
    if (dialog.open) dialog.close(); else dialog.showModal();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var dialog = byId("key-help");
    if (dialog && dialog.open) {
      if (event.key === "?") { event.preventDefault(); dialog.close(); }
      return; // Escape closes the dialog natively
    }
    if (isTyping(event.target)) return;
    var key = event.key;
    if (Object.prototype.hasOwnProperty.call(VERDICT_KEYS, key)) {
      event.preventDefault();
      chooseVerdict(VERDICT_KEYS[key]);
    } else if (key === "Enter") {
      var tag = event.target && event.target.tagName;
      if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY") return; // their own action
      event.preventDefault();
      submit(byId("label-form"));
    } else if (key === "u") {
      event.preventDefault();
      submit(byId("undo-form"));
    } else if (key === "j" || key === "k") {
      var link = byId(key === "j" ? "claim-prev" : "claim-next");
      if (link) { event.preventDefault(); link.click(); }
    } else if (key === "?") {
      event.preventDefault();
      toggleHelp();
    }
  });

  // A selection inside one passage becomes the quote: passage, UTF-16 offsets, exact text.
  function passageOf(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentElement);
    return el ? el.closest(".passage-text[data-passage-id]") : null;
  }

  document.addEventListener("selectionchange", function () {
    var selection = document.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    var range = selection.getRangeAt(0);
    var passage = passageOf(range.startContainer);
    if (!passage || passage !== passageOf(range.endContainer)) return;
    var text = range.toString();
    if (!text.trim()) return;
    var before = document.createRange();
    before.selectNodeContents(passage);
    before.setEnd(range.startContainer, range.startOffset);
    var start = before.toString().length; // UTF-16 code units, as JavaScript counts
    var fields = {
      passage: byId("quote-passage"), quote: byId("quote-text"),
      start: byId("quote-start"), end: byId("quote-end"),
    };
    if (!fields.quote) return;
    fields.passage.value = passage.getAttribute("data-passage-id");
    fields.quote.value = text;
    fields.start.value = String(start);
    fields.end.value = String(start + text.length);
  });

  document.addEventListener("input", function (event) {
    // A quote edited by hand has no browser offsets: the server looks it up in the passage.
    if (event.target && (event.target.id === "quote-text" || event.target.id === "quote-passage")) {
      byId("quote-start").value = "";
      byId("quote-end").value = "";
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (target.closest && target.closest("#quote-clear")) {
      ["quote-passage", "quote-text", "quote-start", "quote-end"].forEach(function (id) {
        var el = byId(id);
        if (el) el.value = "";
      });
    } else if (target.closest && target.closest(".key-help-open")) {
      toggleHelp();
    }
  });

  document.addEventListener("change", function (event) {
    if (event.target && event.target.name === "verdict") showCorrectField();
  });

  document.body.addEventListener("htmx:afterSettle", function (event) {
    if (!byId("screen")) return;
    // A page of the pile came in: the analyst is reading it, keep their place.
    if (event.detail && event.detail.target && event.detail.target.id === "pile") return;
    showCorrectField();
    var heading = byId("claim-heading") || document.querySelector("#screen h1");
    if (heading) {
      heading.setAttribute("tabindex", "-1");
      heading.focus({ preventScroll: false });
    }
  });

  // A save that lost to concurrent saves answers 503 with the screen as sent (verdict, quote,
  // the message): htmx leaves error statuses unswapped unless told.
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 503 && byId("screen")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.body.addEventListener("labelSaved", function () {
    window.scrollTo({ top: 0 });
  });

  showCorrectField();
})();
