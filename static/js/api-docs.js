/* Starts the vendored Swagger UI on /api/v1/docs with the settings django-ninja put in the page. */
(function () {
  "use strict";
  const data = document.body.dataset;
  const config = JSON.parse(document.getElementById("swagger-settings").textContent);
  config.dom_id = "#swagger-ui";
  config.presets = [window.SwaggerUIBundle.presets.apis];
  if (data.apiCsrf && data.csrfToken) {
    config.requestInterceptor = function (req) {
      req.headers["X-CSRFToken"] = data.csrfToken;
      return req;
    };
  }
  window.kybernesisDocs = window.SwaggerUIBundle(config);

  // Keyboard fixes over Swagger UI's markup: the deep link inside each operation's toggle button is a
  // second tab stop nested in a button (the button already expands it and updates the address), and
  // scrollable code samples must be reachable by keyboard to be scrolled.
  function fix(root) {
    root.querySelectorAll(".opblock-summary-control a[href]").forEach((link) => {
      link.removeAttribute("href");
      link.setAttribute("tabindex", "-1");
    });
    root.querySelectorAll(".highlight-code > .microlight:not([tabindex])").forEach((code) => {
      code.setAttribute("tabindex", "0");
      code.setAttribute("aria-label", "Code sample");
    });
  }
  new MutationObserver(() => fix(document)).observe(document.getElementById("swagger-ui"), { childList: true, subtree: true });
})();
