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
})();
