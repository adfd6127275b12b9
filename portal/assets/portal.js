// Boxoffice developer portal: copy buttons and confirmations. Served from
// /portal/assets/ (the pages' Content-Security-Policy allows no inline
// script). Everything works without it, except copying with one click.
"use strict";

document.addEventListener("click", function (event) {
  var button = event.target.closest("button[data-copy]");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  var text = source.textContent.trim();
  var status = document.getElementById(button.getAttribute("data-copy") + "-status");
  var say = function (message) {
    button.textContent = message;
    if (status) status.textContent = message;
  };
  var select = function () {
    var range = document.createRange();
    range.selectNodeContents(source);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    say("Selected: press Ctrl+C");
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(function () {
      say("Copied");
      button.classList.add("done");
    }, select);
  } else {
    select();
  }
});

// Forms that change something for good ask first: data-confirm holds the
// question. Without JavaScript they submit at once.
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
