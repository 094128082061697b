// The dashboard's one script: pages work without it. A button with
// data-copy="<id>" copies the value of the field with that id; it is hidden
// in the page and shown here, so without script the field alone is offered,
// read-only and selectable. What happened is said in the element
// "<id>-copied" (a live region).
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var id = button.getAttribute("data-copy");
  var field = document.getElementById(id);
  var said = document.getElementById(id + "-copied");
  if (!field) {
    return;
  }
  function say(text) {
    if (said) {
      said.textContent = text;
    }
  }
  function selectField() {
    field.focus();
    field.select();
    say("Selected: press Ctrl+C (or ⌘C) to copy it.");
  }
  button.hidden = false;
  field.addEventListener("focus", function () { field.select(); });
  button.addEventListener("click", function () {
    if (!navigator.clipboard || !navigator.clipboard.writeText) {
      selectField();
      return;
    }
    navigator.clipboard.writeText(field.value).then(function () { say("Copied."); }, selectField);
  });
});
