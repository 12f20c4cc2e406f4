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

  var isTyping = window.FaithKeys.isTyping; // static/js/keys.js
  var submit = window.FaithKeys.submit;

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

  function showGuidelines(open) {
    var panel = byId("guidelines");
    if (!panel) return;
    panel.open = open;
    if (open) {
      panel.scrollIntoView({ block: "start" });
      panel.querySelector("summary").focus();
    }
  }

  // q: the quote box, to type or paste the deciding sentence (Escape leaves it for the keys).
  function focusQuote() {
    var box = byId("quote-text");
    if (!box) return;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  // p: the pile, with the caret at the start of its first passage, so Shift+arrows select
  // from there under caret browsing (F7).
  function focusPile() {
    var pile = byId("pile");
    if (!pile) return;
    pile.setAttribute("tabindex", "-1");
    pile.focus({ preventScroll: true });
    pile.scrollIntoView({ block: "start" });
    var text = pile.querySelector(".passage-text");
    var node = text && text.firstChild;
    if (node) document.getSelection().collapse(node, 0);
  }

  // o: the skip form, open, on its first reason (arrows choose, Enter skips, Escape closes).
  function openSkip() {
    var box = document.querySelector(".skip-claim");
    if (!box) return;
    box.open = true;
    var reason = box.querySelector("input[name=reason]:checked") ||
      box.querySelector("input[name=reason]");
    if (reason) {
      reason.focus();
      box.scrollIntoView({ block: "nearest" });
    }
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
    if (event.key === "Enter" && !event.shiftKey && isTyping(event.target) &&
        event.target.form && event.target.form.id === "label-form") {
      // Enter saves from anywhere in the form, the quote and the note too (Shift+Enter: a
      // new line in the note).
      event.preventDefault();
      submit(event.target.form);
      return;
    }
    var skipBox = event.target.closest && event.target.closest(".skip-claim");
    if (event.key === "Escape" && skipBox) {
      event.preventDefault();
      skipBox.open = false;
      focusHeading();
      return;
    }
    if (event.key === "Escape" && isTyping(event.target) && event.target.form &&
        event.target.form.id === "label-form") {
      // Out of the quote box or the note, so the letter keys work again.
      event.preventDefault();
      event.target.blur();
      return;
    }
    if (isTyping(event.target)) return;
    var key = event.key;
    var item = event.target.closest && event.target.closest(".quote-span");
    if (item && (key === "Delete" || key === "Backspace")) {
      event.preventDefault();
      spanRemove(item, true);
      return;
    }
    if (Object.prototype.hasOwnProperty.call(VERDICT_KEYS, key)) {
      event.preventDefault();
      chooseVerdict(VERDICT_KEYS[key]);
    } else if (key === "Enter") {
      var tag = event.target && event.target.tagName;
      if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY") return; // their own action
      var own = event.target.form;
      if (own && own.id !== "label-form") return; // the skip form's own Enter
      event.preventDefault();
      submit(byId("label-form"));
    } else if (key === "a") {
      event.preventDefault();
      spanAddArm();
    } else if (key === "x") {
      event.preventDefault();
      var spans = moreSpans();
      if (spans.length) spanRemove(spans[spans.length - 1], false);
      else spanStatus("The quote has no second span to remove.");
    } else if (key === "u") {
      event.preventDefault();
      submit(byId("undo-form"));
    } else if (key === "j" || key === "k") {
      // j next, k previous: the Gmail and vim habit analysts bring.
      var link = byId(key === "j" ? "claim-next" : "claim-prev");
      if (link) { event.preventDefault(); link.click(); }
    } else if (key === "q") {
      event.preventDefault();
      focusQuote();
    } else if (key === "p") {
      event.preventDefault();
      focusPile();
    } else if (key === "]" || key === "[" || key === "}" || key === "{") {
      event.preventDefault();
      sentenceStep(key);
    } else if (key === "o") {
      event.preventDefault();
      openSkip();
    } else if (key === "?") {
      event.preventDefault();
      toggleHelp();
    } else if (key === "g") {
      event.preventDefault();
      var panel = byId("guidelines");
      if (panel) showGuidelines(!panel.open);
    }
  });

  // A selection inside one passage becomes the quote: passage, UTF-16 offsets, exact text.
  // A mouse drag is snapped to whole words when the button is released (a drag that starts
  // or ends inside a word takes the whole word); a selection adjusted with the keyboard
  // (Shift+arrows) is taken as it is. The quote stays painted in its passage (the CSS Custom
  // Highlight API, no change to the DOM) until it is cleared or replaced.
  var HIGHLIGHT = "label-quote";
  var WORD = /[\p{L}\p{N}\p{M}_'\u2019]/u;
  var dragging = false;

  function passageOf(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentElement);
    return el ? el.closest(".passage-text[data-passage-id]") : null;
  }

  function quoteFields() {
    return {
      passage: byId("quote-passage"), quote: byId("quote-text"),
      start: byId("quote-start"), end: byId("quote-end"),
    };
  }

  function offsetIn(passage, container, offset) {
    var before = document.createRange();
    before.selectNodeContents(passage);
    before.setEnd(container, offset);
    return before.toString().length; // UTF-16 code units, as JavaScript counts
  }

  // The DOM range of UTF-16 offsets [start, end) of the passage's text.
  function rangeAt(passage, start, end) {
    var walker = document.createTreeWalker(passage, NodeFilter.SHOW_TEXT);
    var range = document.createRange();
    var seen = 0, started = false, node;
    while ((node = walker.nextNode())) {
      var length = node.data.length;
      if (!started && start <= seen + length) { range.setStart(node, start - seen); started = true; }
      if (started && end <= seen + length) { range.setEnd(node, end - seen); return range; }
      seen += length;
    }
    return null;
  }

  // Whole words: trim white space at the edges, then widen an edge that falls inside a word.
  function snapToWords(text, start, end) {
    while (start < end && /\s/.test(text.charAt(start))) start++;
    while (end > start && /\s/.test(text.charAt(end - 1))) end--;
    while (start > 0 && WORD.test(text.charAt(start - 1)) && WORD.test(text.charAt(start))) start--;
    while (end < text.length && WORD.test(text.charAt(end)) && WORD.test(text.charAt(end - 1))) end++;
    return [start, end];
  }

  // Every span of the quote: the first in the form's own fields, the others in the list of
  // more spans (hidden inputs per span, sent as more_passage, more_start_utf16 …).
  var SPANS_MAX = 5;
  var adding = false; // the next selection adds a span (the "a" key, "Add another span")
  var lastTaken = ""; // the selection last taken ("passage:start:end")
  var active = 1; // the span a selection changes: 1, or the span just added

  function moreSpans() {
    return Array.prototype.slice.call(document.querySelectorAll("#quote-spans .quote-span"));
  }

  function spanField(li, name) { return li.querySelector('input[name="more_' + name + '"]'); }

  function allSpans() {
    var f = quoteFields();
    var spans = [];
    if (f.quote && f.passage) {
      spans.push({ number: 1, passage: f.passage.value, start: f.start.value,
                   end: f.end.value, quote: f.quote.value, typed: true });
    }
    moreSpans().forEach(function (li, index) {
      spans.push({ number: index + 2, passage: spanField(li, "passage").value,
                   start: spanField(li, "start_utf16").value,
                   end: spanField(li, "end_utf16").value, quote: spanField(li, "quote").value });
    });
    return spans;
  }

  // A new claim's screen (a swap by htmx or one shown ahead): no span is being added.
  function newScreenSpans() {
    adding = false;
    active = 1;
    lastTaken = "";
    spanStatus("");
  }

  function spanStatus(text) {
    var status = byId("quote-span-status");
    if (status) status.textContent = text;
  }

  // Where a span is in its passage's text (UTF-16), or null; a quote typed by hand (the first
  // span) is found where the server will find it.
  function spanPlace(span) {
    if (!span.quote || !span.passage) return null;
    var passage = document.querySelector(
      '.passage-text[data-passage-id="' + span.passage + '"]');
    if (!passage) return null; // on another page of the pile
    var text = passage.textContent;
    var start = parseInt(span.start, 10), end = parseInt(span.end, 10);
    if (isNaN(start) || isNaN(end) || text.slice(start, end) !== span.quote) {
      if (!span.typed) return null;
      start = text.indexOf(span.quote);
      end = start + span.quote.length;
    }
    if (start < 0) return null;
    return { passage: passage, start: start, end: end };
  }

  function highlightName(number) { return number === 1 ? HIGHLIGHT : HIGHLIGHT + "-" + number; }

  function paintQuote() {
    document.querySelectorAll(".passage.quoted").forEach(function (el) {
      el.classList.remove("quoted");
    });
    document.querySelectorAll(".span-marker").forEach(function (el) { el.remove(); });
    var painting = window.CSS && CSS.highlights && window.Highlight;
    if (window.CSS && CSS.highlights) {
      for (var n = 1; n <= SPANS_MAX; n++) CSS.highlights.delete(highlightName(n));
    }
    var spans = allSpans();
    var several = spans.length > 1;
    var box = byId("quote-spans-box");
    if (box) box.hidden = moreSpans().length === 0;
    spans.forEach(function (span) {
      var place = spanPlace(span);
      if (!place) return;
      var range = rangeAt(place.passage, place.start, place.end);
      if (!range) return;
      var article = place.passage.closest(".passage");
      article.classList.add("quoted");
      if (painting) CSS.highlights.set(highlightName(span.number), new Highlight(range));
      if (several) markSpan(article, range, span.number);
    });
  }

  // A numbered badge where a span starts, when the quote has several (outside the passage's
  // text, so offsets are unchanged).
  function markSpan(article, range, number) {
    var rects = range.getClientRects();
    if (!rects.length) return;
    var frame = article.getBoundingClientRect();
    var marker = document.createElement("span");
    marker.className = "span-marker span-number span-number-" + number;
    marker.setAttribute("aria-hidden", "true");
    marker.textContent = String(number);
    marker.style.left = Math.max(0, rects[0].left - frame.left - 6) + "px";
    marker.style.top = Math.max(0, rects[0].top - frame.top - 12) + "px";
    article.appendChild(marker);
  }

  function overlapping(passageId, start, end, except) {
    return allSpans().find(function (span) {
      if (span.number === except) return false;
      var place = spanPlace(span);
      return place && span.passage === passageId && start < place.end && place.start < end;
    });
  }

  function renumberSpans() {
    moreSpans().forEach(function (li, index) {
      var number = index + 2;
      li.setAttribute("data-number", String(number));
      var badge = li.querySelector(".span-number");
      badge.textContent = String(number);
      badge.className = "span-number span-number-" + number;
      li.querySelector(".visually-hidden").textContent = "Span " + number + ":";
      var remove = li.querySelector(".quote-span-remove");
      remove.title = "Remove span " + number;
      remove.querySelector(".visually-hidden").textContent = " span " + number;
    });
  }

  function spanItem(number) {
    var li = document.createElement("li");
    li.className = "quote-span";
    li.tabIndex = 0;
    li.setAttribute("aria-describedby", "quote-span-keys");
    var badge = document.createElement("span");
    badge.className = "span-number";
    badge.setAttribute("aria-hidden", "true");
    var name = document.createElement("span");
    name.className = "visually-hidden";
    var where = document.createElement("span");
    where.className = "span-where";
    where.appendChild(document.createTextNode("passage #"));
    var rank = document.createElement("span");
    rank.className = "span-rank";
    where.appendChild(rank);
    var quote = document.createElement("span");
    quote.className = "span-quote";
    quote.dir = "auto";
    li.append(badge, name, " ", where, " “", quote, "”");
    ["passage", "start_utf16", "end_utf16", "quote"].forEach(function (field) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = "more_" + field;
      li.appendChild(input);
    });
    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "link small quote-span-remove";
    remove.tabIndex = -1;
    remove.append("Remove");
    var hidden = document.createElement("span");
    hidden.className = "visually-hidden";
    remove.appendChild(hidden);
    li.append(" ", remove);
    byId("quote-spans").appendChild(li);
    renumberSpans();
    return li;
  }

  function spanSet(li, passage, start, end, quote) {
    spanField(li, "passage").value = passage.getAttribute("data-passage-id");
    spanField(li, "start_utf16").value = String(start);
    spanField(li, "end_utf16").value = String(end);
    spanField(li, "quote").value = quote;
    li.setAttribute("data-passage", passage.getAttribute("data-passage-id"));
    var title = byId(passage.closest(".passage").getAttribute("aria-labelledby"));
    var rank = title ? (title.textContent.match(/^#(\d+)/) || [])[1] : "";
    li.querySelector(".span-rank").textContent = rank || "?";
    li.querySelector(".span-quote").textContent = quote;
  }

  function spanRemove(li, focusAfter) {
    var items = moreSpans();
    var index = items.indexOf(li);
    var number = index + 2;
    li.remove();
    if (active === number) active = 1; else if (active > number) active -= 1;
    renumberSpans();
    paintQuote();
    spanStatus("Span " + number + " removed.");
    if (!focusAfter) return;
    var rest = moreSpans();
    var next = rest[index] || rest[index - 1] || byId("quote-text");
    if (next) next.focus();
  }

  // The first span was cleared: the second takes its place, as the server would.
  function spanPromote() {
    var second = moreSpans()[0];
    var f = quoteFields();
    if (!second || f.quote.value) return;
    f.passage.value = spanField(second, "passage").value;
    f.start.value = spanField(second, "start_utf16").value;
    f.end.value = spanField(second, "end_utf16").value;
    f.quote.value = spanField(second, "quote").value;
    second.remove();
    renumberSpans();
  }

  function spanAddArm() {
    var f = quoteFields();
    if (!f.quote) return;
    if (!f.quote.value) {
      adding = false;
      spanStatus("Select the first span in the pile.");
    } else if (allSpans().length >= SPANS_MAX) {
      adding = false;
      spanStatus("A quote has at most " + SPANS_MAX + " spans: remove one first.");
    } else {
      adding = true;
      spanStatus("Select span " + (allSpans().length + 1) + " in the pile.");
    }
  }

  // A quote typed or pasted: its passage is the chosen one if that holds it, else the first
  // passage of this page of the pile that does.
  function passageForTypedQuote(quote) {
    var select = byId("quote-passage");
    if (!select || !quote) return;
    var chosen = select.value &&
      document.querySelector('.passage-text[data-passage-id="' + select.value + '"]');
    if (chosen && chosen.textContent.indexOf(quote) >= 0) return;
    var found = Array.prototype.find.call(
      document.querySelectorAll(".passage-text[data-passage-id]"),
      function (el) { return el.textContent.indexOf(quote) >= 0; });
    if (found) select.value = found.getAttribute("data-passage-id");
  }

  // `adds`: this selection is a new span (Ctrl+drag, or after "a"); else it changes the span
  // being selected (the first, or the one just added).
  function takeSelection(snap, adds) {
    var selection = document.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) {
      lastTaken = "";
      return;
    }
    var range = selection.getRangeAt(0);
    var passage = passageOf(range.startContainer);
    if (!passage || passage !== passageOf(range.endContainer)) return;
    var f = quoteFields();
    if (!f.quote) return;
    var text = passage.textContent;
    var start = offsetIn(passage, range.startContainer, range.startOffset);
    var end = offsetIn(passage, range.endContainer, range.endOffset);
    if (snap) {
      var snapped = snapToWords(text, start, end);
      if (snapped[0] >= snapped[1]) return;
      if (snapped[0] !== start || snapped[1] !== end) {
        start = snapped[0]; end = snapped[1];
        var wider = rangeAt(passage, start, end);
        if (wider) { selection.removeAllRanges(); selection.addRange(wider); }
      }
    }
    var quote = text.slice(start, end);
    if (!quote.trim()) return;
    var passageId = passage.getAttribute("data-passage-id");
    // The selection a span already holds (the browser repeats a selection change after the
    // snap): nothing changes, and "a" still waits for the next selection.
    var same = allSpans().some(function (span) {
      var place = spanPlace(span);
      return place && span.passage === passageId && place.start === start && place.end === end;
    });
    // A selection change that repeats the last one taken (the browser's echo of the snap, after
    // a span was refused or removed) changes nothing: only a drag or a new selection does.
    var key = passageId + ":" + start + ":" + end;
    if (!snap && key === lastTaken) return;
    lastTaken = key;
    if (same) return;
    if ((adds || adding) && f.quote.value) {
      adding = false;
      if (allSpans().length >= SPANS_MAX) {
        spanStatus("A quote has at most " + SPANS_MAX + " spans: remove one first.");
        return;
      }
      active = allSpans().length + 1;
      var clash = overlapping(passageId, start, end, null);
      if (clash) {
        spanStatus("That overlaps span " + clash.number + ": select another place.");
        active = 1;
        return;
      }
      spanSet(spanItem(active), passage, start, end, quote);
      spanStatus("Span " + active + " added.");
      paintQuote();
      return;
    }
    adding = false;
    if (active > 1 && moreSpans()[active - 2]) {
      var other = overlapping(passageId, start, end, active);
      if (other) {
        spanStatus("That overlaps span " + other.number + ".");
        return;
      }
      spanSet(moreSpans()[active - 2], passage, start, end, quote);
      paintQuote();
      return;
    }
    active = 1;
    f.passage.value = passageId;
    f.quote.value = quote;
    f.start.value = String(start);
    f.end.value = String(end);
    paintQuote();
  }

  // Sentence by sentence from the keyboard, with no mouse and no caret browsing: "]" selects
  // the next sentence of the pile (its first at first, then on across passages), "[" the
  // previous; "}" (Shift+]) widens the selection by the next sentence of its passage, "{"
  // narrows it by its last. The selection becomes the quote as a mouse's does; after "a" it is
  // the next span. Sentence boundaries are the browser's own (Intl.Segmenter), trimmed of the
  // white space between sentences.
  function sentencesOf(passage) {
    var text = passage.textContent;
    var found = [];
    var segments = typeof Intl !== "undefined" && Intl.Segmenter
      ? Array.from(new Intl.Segmenter(document.documentElement.lang || undefined,
          { granularity: "sentence" }).segment(text), function (s) { return [s.index, s.index + s.segment.length]; })
      : [[0, text.length]];
    segments.forEach(function (piece) {
      var edges = snapToWords(text, piece[0], piece[1]);
      if (edges[0] < edges[1]) found.push(edges);
    });
    return found;
  }

  function pilePassages() {
    return Array.prototype.slice.call(document.querySelectorAll("#pile .passage-text[data-passage-id]"));
  }

  // Where the selection is, in sentences: {passage, first, last} (indices into its sentences).
  function sentencesSelected() {
    var selection = document.getSelection();
    if (!selection || selection.rangeCount === 0) return null;
    var range = selection.getRangeAt(0);
    var passage = passageOf(range.startContainer);
    if (!passage || passage !== passageOf(range.endContainer)) return null;
    var start = offsetIn(passage, range.startContainer, range.startOffset);
    var end = offsetIn(passage, range.endContainer, range.endOffset);
    var list = sentencesOf(passage);
    var first = 0, last = 0;
    list.forEach(function (edges, index) {
      if (edges[0] <= start) first = index;
      if (edges[0] < Math.max(end, start + 1)) last = index;
    });
    return { passage: passage, list: list, first: first, last: Math.max(first, last),
             collapsed: selection.isCollapsed };
  }

  function sentencesSelect(passage, list, first, last) {
    var range = rangeAt(passage, list[first][0], list[last][1]);
    if (!range) return;
    var selection = document.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    // Taken now, not at the selectionchange the browser may leave out (a selection set back to
    // one it held a moment before fires none in Chromium); the event that does come repeats it.
    takeSelection(false);
    var article = passage.closest(".passage") || passage;
    article.scrollIntoView({ block: "nearest" });
    spanStatus("Sentence " + (first + 1) + (last > first ? "–" + (last + 1) : "") + " of " +
      list.length + " in passage " + (pilePassages().indexOf(passage) + 1) + " selected.");
  }

  function sentenceStep(key) {
    var passages = pilePassages();
    if (!passages.length) return;
    var at = sentencesSelected();
    if (!at) {
      // Nothing selected in the pile yet: the first sentence ("]") or the last ("[").
      var edge = key === "[" ? passages[passages.length - 1] : passages[0];
      var all = sentencesOf(edge);
      if (all.length) sentencesSelect(edge, all, key === "[" ? all.length - 1 : 0, key === "[" ? all.length - 1 : 0);
      return;
    }
    var list = at.list, index = passages.indexOf(at.passage);
    if (key === "}") {
      if (at.last + 1 < list.length) sentencesSelect(at.passage, list, at.first, at.last + 1);
      else spanStatus("A span stays in one passage: that was its last sentence.");
    } else if (key === "{") {
      sentencesSelect(at.passage, list, at.first, Math.max(at.first, at.last - 1));
    } else if (key === "]") {
      var next = at.collapsed ? at.first : at.last + 1;
      if (next < list.length) sentencesSelect(at.passage, list, next, next);
      else if (index + 1 < passages.length) {
        var following = sentencesOf(passages[index + 1]);
        if (following.length) sentencesSelect(passages[index + 1], following, 0, 0);
      } else spanStatus("That was the last sentence on this page of the pile.");
    } else if (key === "[") {
      if (at.first > 0) sentencesSelect(at.passage, list, at.first - 1, at.first - 1);
      else if (index > 0) {
        var before = sentencesOf(passages[index - 1]);
        if (before.length) sentencesSelect(passages[index - 1], before, before.length - 1, before.length - 1);
      } else spanStatus("That was the first sentence of this page of the pile.");
    }
  }

  var dragAdds = false;

  document.addEventListener("pointerdown", function (event) {
    dragging = event.button === 0 && Boolean(passageOf(event.target));
    // Ctrl (Cmd on a Mac) held while dragging: the drag adds a span. A plain drag changes the
    // first span.
    dragAdds = dragging && (event.ctrlKey || event.metaKey);
    if (dragging && !dragAdds && !adding) active = 1;
  });

  document.addEventListener("pointerup", function (event) {
    if (!dragging) return;
    dragging = false;
    takeSelection(true, dragAdds || event.ctrlKey || event.metaKey);
    dragAdds = false;
  });

  window.addEventListener("resize", function () { paintQuote(); });

  document.addEventListener("selectionchange", function () {
    if (!dragging) takeSelection(false);
  });

  document.addEventListener("input", function (event) {
    // A quote edited by hand has no browser offsets: the server looks it up in the passage.
    if (event.target && (event.target.id === "quote-text" || event.target.id === "quote-passage")) {
      byId("quote-start").value = "";
      byId("quote-end").value = "";
      if (event.target.id === "quote-text") passageForTypedQuote(event.target.value);
      paintQuote();
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (target.closest && target.closest(".quote-span-remove")) {
      spanRemove(target.closest(".quote-span"), false);
      var quoteBox = byId("quote-text");
      if (quoteBox) quoteBox.focus();
    } else if (target.closest && target.closest("#quote-span-add")) {
      spanAddArm();
    } else if (target.closest && target.closest("#quote-clear")) {
      ["quote-passage", "quote-text", "quote-start", "quote-end"].forEach(function (id) {
        var el = byId(id);
        if (el) el.value = "";
      });
      active = 1;
      spanPromote();
      paintQuote();
      var box = byId("quote-text");
      if (box) box.focus();
    } else if (target.closest && target.closest("a[data-focus]")) {
      // The screen's skip links: to the quote box or into the pile, as q and p do.
      event.preventDefault();
      if (target.closest("a[data-focus]").dataset.focus === "pile") focusPile();
      else focusQuote();
    } else if (target.closest && target.closest(".guidelines-open")) {
      event.preventDefault();
      var dialog = byId("key-help");
      if (dialog && dialog.open) dialog.close();
      showGuidelines(true);
    } else if (target.closest && target.closest(".key-help-open")) {
      toggleHelp();
    }
  });

  document.addEventListener("change", function (event) {
    if (event.target && event.target.name === "verdict") showCorrectField();
  });

  document.body.addEventListener("htmx:afterSettle", function (event) {
    swapping = false;
    if (!byId("screen")) return;
    // A page of the pile came in: the spans being selected (and "a") carry on across pages.
    var pileOnly = event.detail && event.detail.target && event.detail.target.id === "pile";
    if (!pileOnly) newScreenSpans();
    timingScreen();
    paintQuote();
    showCorrectField();
    fetchFollowing();
    release();
  });

  function focusHeading() {
    var heading = byId("claim-heading") || document.querySelector("#screen h1");
    if (heading && document.activeElement !== heading) {
      heading.setAttribute("tabindex", "-1");
      heading.focus({ preventScroll: false });
    }
  }

  // The next claim's heading takes focus in the same task as the swap (htmx has just put focus
  // back on the new quote box, which shares the old one's id): no key an analyst presses
  // between the swap and the settle can land in the quote box.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (!byId("screen")) return;
    // A page of the pile came in: the analyst is reading it, keep their place.
    if (event.detail && event.detail.target && event.detail.target.id === "pile") return;
    // Until the settle, htmx has not taken over the new forms: a save now would post natively.
    swapping = true;
    focusHeading();
  });

  // Save-and-next without the wait (HumanSignal/label-studio#9101). Once a claim's screen is
  // shown, the screen its save will answer with is fetched (GET …/label/<id>/following/, which
  // reserves that claim for this analyst) and kept aside. At a save that passes the checks
  // the server makes first (a verdict; a quote where one is needed, found in its passage;
  // none with NOT_IN_PILE), that screen is shown at once and the save is posted; its answer
  // then confirms the claim shown (only the counters and the "Saved …" line are taken from
  // it, so what the analyst began on the next claim stays) or wins: a refusal (the form as
  // sent, with its message), a busy database's 503, or another claim (the one rendered ahead
  // was lost meanwhile: labelled by others once its reservation expired) replaces the screen.
  // A save that fails the first checks goes the usual way and shows nothing ahead.
  // One request from the screen at a time, as hx-sync keeps htmx's own: a save, an undo, a
  // skip, j/k or a page of the pile asked for while the screen ahead is fetched, or while a
  // save shown ahead is posted, waits for it and then goes, in order.
  var following = null; // {after: claim id, html} for the screen of that claim
  var fetching = false; // the screen ahead is being fetched
  var swapping = false; // htmx swapped a screen in and has not settled it
  var saving = null; // {to: claim id shown ahead, previous: the saved claim's screen}
  var held = []; // forms and links whose request waits for `fetching` or `saving`

  function busy() { return fetching || swapping || Boolean(saving); }

  // Send what waited, in order; how many went (a form or link of a screen since replaced
  // is dropped, as hx-sync drops a request of a replaced element).
  function release() {
    var waiting = held;
    var sent = 0;
    held = [];
    waiting.forEach(function (el) {
      if (busy()) held.push(el);
      else if (!document.contains(el)) return;
      else {
        sent += 1;
        if (el.tagName === "FORM") submit(el); else el.click();
      }
    });
    return sent;
  }

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    if (!busy()) return;
    event.preventDefault();
    var el = event.detail && event.detail.elt;
    if (el && held.indexOf(el) < 0) held.push(el);
  });

  function screenIn(html) {
    var box = document.createElement("template");
    box.innerHTML = html || "";
    return box.content.querySelector("#screen");
  }

  function fetchFollowing() {
    var screen = byId("screen");
    var url = screen && screen.getAttribute("data-following-url");
    var after = screen && screen.getAttribute("data-claim-id");
    if (!url || busy() || (following && following.after === after)) return;
    following = null;
    fetching = true;
    fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true", "HX-Target": "screen" } })
      .then(function (response) { return response.status === 200 ? response.text() : ""; })
      .catch(function () { return ""; }) // no screen ahead: the save waits for the server
      .then(function (html) {
        fetching = false;
        var now = byId("screen");
        if (html && now && now.getAttribute("data-claim-id") === after) {
          following = { after: after, html: html };
          now.setAttribute("data-following-ready", "");
        }
        release();
      });
  }

  function passesFirstChecks(form) {
    var verdict = form.querySelector("input[name=verdict]:checked");
    if (!verdict) return false;
    var quote = form.querySelector("[name=quote]");
    var passage = form.querySelector("[name=passage]");
    var quoted = (quote && quote.value) || "";
    var chosen = (passage && passage.value) || "";
    if (verdict.value === "NOT_IN_PILE") return !quoted && !chosen;
    if (!quoted && !chosen) return form.getAttribute("data-quote-required") !== "true";
    var shown = chosen && document.querySelector('.passage-text[data-passage-id="' + chosen + '"]');
    return Boolean(shown && quoted && shown.textContent.indexOf(quoted) >= 0);
  }

  // Time per label (issue 32): the time each claim's screen is shown while the tab is visible,
  // sent with its save as `seconds` (the server caps it: a screen left open is not work).
  // A refused save keeps counting on the same claim; a new claim starts from zero.
  var timing = { claim: null, ms: 0, since: null };

  function timingScreen() {
    var screen = byId("screen");
    var claim = screen && screen.getAttribute("data-claim-id");
    if (!claim || claim === timing.claim) return;
    timing = { claim: claim, ms: 0, since: document.hidden ? null : performance.now() };
  }

  function timingSeconds() {
    var ms = timing.ms + (timing.since === null ? 0 : performance.now() - timing.since);
    return (ms / 1000).toFixed(1);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden && timing.since !== null) {
      timing.ms += performance.now() - timing.since;
      timing.since = null;
    } else if (!document.hidden && timing.since === null) {
      timing.since = performance.now();
    }
  });

  function show(screen) {
    var live = byId("screen");
    if (!live) return;
    live.replaceWith(screen);
    timingScreen();
    if (window.htmx) window.htmx.process(screen);
    newScreenSpans();
    focusHeading();
    paintQuote();
    showCorrectField();
    window.scrollTo({ top: 0 });
  }

  function saveAhead(form, screen) {
    var next = screenIn(following.html);
    following = null;
    var body = new URLSearchParams(new FormData(form));
    saving = { to: next.getAttribute("data-claim-id"), previous: screen };
    var line = document.createElement("aside");
    line.className = "label-saving";
    line.setAttribute("role", "status");
    line.setAttribute("aria-label", "Last save");
    var text = screen.querySelector("[data-testid=claim-text]");
    line.textContent = "Saving your label for “" + (text ? text.textContent : "") + "”…";
    var status = next.querySelector(".label-status");
    if (status) status.after(line);
    show(next);
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      // The claim shown ahead: a save answered for it comes back as the counters and the
      // "Saved …" line alone (views/labelling.py `_confirmation`), not its screen again.
      headers: {
        "HX-Request": "true",
        "HX-Target": "screen",
        "HX-Current-URL": location.href,
        "X-Screen-Ahead": saving.to,
      },
    })
      .then(function (response) {
        return response.text().then(function (html) { answered(response, html); });
      })
      .catch(function () { answered(null, ""); });
  }

  function answered(response, html) {
    var done = saving;
    saving = null;
    var fresh = screenIn(html);
    var live = byId("screen");
    var confirmed = Boolean(response && response.ok && fresh && live &&
      fresh.getAttribute("data-claim-id") === done.to &&
      live.getAttribute("data-claim-id") === done.to && !fresh.querySelector(".label-error"));
    if (confirmed) {
      var line = live.querySelector(".label-saving");
      if (line) line.remove();
      ["label-status", "last-saved"].forEach(function (name) {
        var mine = live.querySelector("." + name);
        var theirs = fresh.querySelector("." + name);
        if (theirs && mine) mine.replaceWith(theirs);
        else if (mine) mine.remove();
        else if (theirs) live.querySelector(".label-status").after(theirs);
        if (theirs && window.htmx) window.htmx.process(theirs);
      });
    } else if (fresh && fresh.hasAttribute("data-confirmation")) {
      // Saved, but the screen shown is no longer the one the confirmation is for: load the
      // queue's screen whole (the claim stays reserved for this analyst).
      location.assign((response && response.headers.get("HX-Push-Url")) || location.href);
      return;
    } else if (fresh) {
      show(fresh); // the server's answer wins
    } else {
      // No screen came back (a server error, the network): the claim comes back as sent.
      show(done.previous);
      var error = document.createElement("div");
      error.className = "error label-error";
      error.setAttribute("role", "alert");
      error.textContent = "Your label was not saved: the server did not answer. Your verdict " +
        "and quote are still in the form: press Save again.";
      var top = done.previous.querySelector(".label-status");
      if (top) top.after(error);
    }
    if (response) {
      var pushed = response.headers.get("HX-Push-Url");
      if (pushed && pushed !== location.pathname + location.search) {
        history.pushState({ htmx: true }, "", pushed);
      }
      var events = response.headers.get("HX-Trigger");
      if (events && window.htmx) {
        try {
          var parsed = JSON.parse(events);
          Object.keys(parsed).forEach(function (name) {
            window.htmx.trigger(document.body, name, parsed[name]);
          });
        } catch (e) { /* not JSON: no events */ }
      }
    }
    // A request sent now brings a screen of its own (its settle fetches what follows that).
    if (!release()) fetchFollowing();
  }

  // Capture, so this runs before htmx's own handler on the form.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form || !form.closest("#main") || form.getAttribute("method") === "dialog") return;
    var seconds = form.id === "label-form" && form.querySelector("input[name=seconds]");
    if (seconds) seconds.value = timingSeconds();
    if (busy()) {
      event.preventDefault();
      event.stopPropagation();
      if (held.indexOf(form) < 0) held.push(form);
      return;
    }
    var screen = byId("screen");
    if (form.id !== "label-form" || !following || !screen) return;
    if (following.after !== screen.getAttribute("data-claim-id")) return;
    if (!screenIn(following.html) || !passesFirstChecks(form)) return;
    event.preventDefault();
    event.stopPropagation();
    saveAhead(form, screen);
  }, true);

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
  paintQuote();
  timingScreen();
  fetchFollowing();
})();
