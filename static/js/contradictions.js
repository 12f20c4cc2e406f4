/* Loaded by templates/annotate/contradictions.html (no inline script: the Content-Security-Policy allows none). */
(function () {
  var button = document.getElementById("copy-markdown");
  if (!button || !navigator.clipboard) { return; }
  button.hidden = false;
  button.addEventListener("click", function () {
    fetch(button.dataset.src, {credentials: "same-origin"})
      .then(function (response) { return response.text(); })
      .then(function (text) { return navigator.clipboard.writeText(text); })
      .then(function () { document.getElementById("copy-status").textContent = "Copied."; })
      .catch(function () { document.getElementById("copy-status").textContent = "Could not copy; use Download Markdown."; });
  });
})();
