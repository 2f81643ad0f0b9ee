// Colour scheme: the system's unless this browser chose light or dark in the header.
// Loaded in <head> without defer, so the choice is on <html> before the first paint.
(function () {
  "use strict";

  // Versioned: a later change of what is stored gets a new key instead of misreading this one.
  var KEY = "bullpen.theme.v1";
  var CHOICES = { light: true, dark: true };

  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return CHOICES[value] ? value : "system";
    } catch (e) {
      return "system"; // storage blocked: follow the system
    }
  }

  function apply(choice) {
    if (CHOICES[choice]) document.documentElement.dataset.theme = choice;
    else delete document.documentElement.dataset.theme;
  }

  function remember(choice) {
    try {
      if (CHOICES[choice]) window.localStorage.setItem(KEY, choice);
      else window.localStorage.removeItem(KEY);
    } catch (e) { /* storage blocked: the choice lasts for this page */ }
  }

  // The header is rendered with "system" selected; show what this browser chose instead.
  function showChoice() {
    var select = document.getElementById("theme-choice");
    if (select) select.value = document.documentElement.dataset.theme || "system";
  }

  apply(stored());

  document.addEventListener("change", function (event) {
    if (event.target.id !== "theme-choice") return;
    apply(event.target.value);
    remember(event.target.value);
  });
  // Another tab chose: follow it.
  window.addEventListener("storage", function (event) {
    if (event.key !== KEY && event.key !== null) return; // null: storage cleared
    apply(stored());
    showChoice();
  });
  document.addEventListener("DOMContentLoaded", showChoice);
  // A boosted navigation renders a new header.
  document.addEventListener("htmx:afterSettle", showChoice);
})();
