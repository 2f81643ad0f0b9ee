// A job's flow tree: each live job message carries its node, rendered by the server from the
// tree's own template; this puts it where the same node is shown. It never builds markup.
(function () {
  "use strict";
  if (window.bullpenFlowTree) return;
  window.bullpenFlowTree = true;

  document.addEventListener("bullpen:live", function (event) {
    var message = event.detail;
    if (!message || message.type !== "job" || !message.node) return;
    var template = document.createElement("template");
    template.innerHTML = message.node;
    var fresh = template.content.firstElementChild;
    var old = fresh && fresh.id ? document.getElementById(fresh.id) : null;
    if (!old) return;
    old.replaceWith(fresh);
    if (window.htmx) window.htmx.process(fresh);
  });
})();
