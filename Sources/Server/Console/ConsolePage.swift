/// The console's page, script and style, served from the binary (no CDN, no build step).
enum ConsoleAssets {
    /// The shell the script fills; nothing in it is secret or per customer.
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Entitle console</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/console/console.css">
        <script src="/console/console.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top" id="top" hidden>
          <span class="brand">Entitle</span>
          <nav aria-label="Sections">
            <a href="#/" data-nav="overview">Overview</a>
            <a href="#/search" data-nav="search">Search</a>
            <a href="#/notifications" data-nav="notifications">Notifications</a>
            <a href="#/deliveries" data-nav="deliveries">Webhook deliveries</a>
            <a href="#/refunds" data-nav="refunds">Refund requests</a>
            <a href="#/charts" data-nav="charts">Charts</a>
          </nav>
          <span class="who" id="who"></span>
          <button type="button" id="sign-out">Sign out</button>
        </header>
        <div id="status" class="status" role="status" aria-live="polite"></div>
        <main id="main" tabindex="-1"></main>
        <noscript>The console needs JavaScript.</noscript>
        </body>
        </html>
        """#
}
