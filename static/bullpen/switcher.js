// The "Go to queue" box: arrow keys move between the box and its suggestions, Escape closes them.
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var box = event.target.closest ? event.target.closest("form.switcher") : null;
    if (!box) return;
    var input = box.querySelector("input[name=q]");
    var list = box.querySelector(".switcher-matches");
    if (event.key === "Escape") {
      if (!list.firstChild) return;
      event.preventDefault();
      list.replaceChildren();
      input.focus();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    var links = Array.prototype.slice.call(list.querySelectorAll("a"));
    if (!links.length) return;
    event.preventDefault();
    var at = links.indexOf(event.target);
    var down = event.key === "ArrowDown";
    if (at === -1) {
      links[down ? 0 : links.length - 1].focus();
    } else if (!down && at === 0) {
      input.focus();
    } else {
      links[Math.min(links.length - 1, down ? at + 1 : at - 1)].focus();
    }
  });
})();
