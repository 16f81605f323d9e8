// Starts the interactive reference on /docs. Loaded in <head> before the (deferred) Scalar bundle, both from
// /docs/assets/ on the API itself. Without JavaScript, or if the bundle does not load, the page keeps its
// server-rendered index of the operations instead.
(function () {
  'use strict';
  var root = document.documentElement;
  // Set before the body is painted: hides the plain index while the reference loads (see docs.css).
  root.classList.add('docs-js');

  function fallback(reason) {
    root.classList.remove('docs-js');
    root.classList.add('docs-fallback');
    if (reason) console.error('API reference unavailable:', reason);
  }

  document.addEventListener('DOMContentLoaded', function () {
    var mount = document.getElementById('reference');
    if (!mount) return fallback('no #reference element');
    // Deferred scripts have run by now; no Scalar means its bundle failed to load.
    if (!window.Scalar || typeof window.Scalar.createApiReference !== 'function')
      return fallback('Scalar bundle not loaded');
    try {
      window.Scalar.createApiReference(mount, {
        url: mount.getAttribute('data-openapi-url') || '/v1/openapi.json',
        // The try-it console talks to the API that served this page, whatever `servers` the document lists
        // (it has one only when PUBLIC_BASE_URL is set). Requests go straight there: no proxyUrl, so no proxy.
        servers: [{ url: window.location.origin, description: 'This API (the origin of this page)' }],
        // Nothing below reaches beyond this origin:
        withDefaultFonts: false, // no fonts from fonts.scalar.com; system fonts instead
        telemetry: false,
        hideClientButton: true, // the "Open API Client" link goes to client.scalar.com
        showDeveloperTools: 'never', // toolbar (shown on localhost by default) that uploads to Scalar's registry
        agent: { disabled: true }, // "Ask AI" chat backed by api.scalar.com (on by default on localhost)
        mcp: { disabled: true }, // MCP button that uploads the document to Scalar (on by default on localhost)
        persistAuth: false, // keys typed into the console stay in memory, not localStorage
        operationTitleSource: 'path', // summaries here are sentences; the sidebar lists paths
        documentDownloadType: 'json',
        defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
        onLoaded: function () {
          root.classList.add('docs-ready');
        },
      });
      root.classList.add('docs-mounted');
    } catch (err) {
      fallback(err);
    }
  });
})();
