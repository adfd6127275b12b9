// Boxoffice API reference: mounts Scalar's reference on #reference with the
// document and options the page names in its data attributes. A file of its
// own, not an inline script, so the page's Content-Security-Policy can allow
// scripts from this server only.
(function () {
  var el = document.getElementById("reference");
  Scalar.createApiReference(el, {
    url: el.dataset.document,
    // Offline and private: no fonts, telemetry, proxy or AI helpers from
    // outside; "try it" calls this server directly.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
    showToolbar: "never",
    hideClientButton: true, // it links to Scalar's hosted client
    persistAuth: false,
    documentDownloadType: "json",
    defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
    authentication: { preferredSecurityScheme: "ApiKeyAuth" },
    metaData: { title: "Boxoffice API reference" }
  });
})();

// Scalar's key fields show a base64 sample ("QUxMIF…") as their
// placeholder, which reads like a key already filled in. Fields are
// created as the reader opens things (the client of an operation), so
// every one is relabelled as it appears: empty, saying what goes there.
(function () {
  var sample = "QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT";
  var selector = 'input[placeholder="' + sample + '"]';
  function relabel() {
    document.querySelectorAll(selector).forEach(function (input) {
      input.setAttribute("placeholder", "Paste your svc_test_… key");
    });
  }
  relabel();
  new MutationObserver(relabel).observe(document.documentElement, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["placeholder"]
  });
})();
