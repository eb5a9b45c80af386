import {
  answered, chartColumns, environmentWithData, formatValue, isoDay, label, readablePayload, revocationText, show, timeLeft,
  unavailableText, when,
} from "./format.js";

(function () {
  const state = { session: null };
  const main = document.getElementById("main");

  // ---- helpers -------------------------------------------------------------------------
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === false || value === null || value === undefined) continue;
      if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // The page's new content. Parts that are absent (null: no grants to list, say) are left
  // out: replaceChildren would show them as the text "null".
  function fill(...children) {
    main.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  }

  function say(message, isError) {
    const status = document.getElementById("status");
    status.textContent = message || "";
    status.className = "status" + (isError ? " error" : "");
  }




  class APIError extends Error {
    constructor(status, body, requestId) {
      super((body && body.error && body.error.message) || ("HTTP " + status));
      this.status = status;
      this.code = body && body.error && body.error.code;
      this.requestId = requestId || (body && body.error && body.error.requestId) || null;
    }
  }

  async function api(method, path, body) {
    const headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET" && state.session) headers["X-CSRF-Token"] = state.session.csrfToken;
    const response = await fetch(path, {
      method, headers, credentials: "same-origin", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let parsed = null;
    try { parsed = await response.json(); } catch (e) { parsed = null; }
    const requestId = response.headers.get("X-Request-Id");
    if (response.status === 401 && path !== "/console/session") {
      state.session = null;
      showSignIn("Your session has ended. Sign in again.");
      throw new APIError(401, parsed, requestId);
    }
    if (!response.ok) throw new APIError(response.status, parsed, requestId);
    return parsed;
  }

  function heading(text) {
    const h = el("h1", { text });
    return h;
  }

  // A new page: keyboard and screen-reader users start at its content, everyone at its top.
  function focusMain() {
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }

  // ---- sign-in -------------------------------------------------------------------------
  // `message` is information (signed out, session ended) unless `isError`.
  function showSignIn(message, isError) {
    document.getElementById("top").hidden = true;
    fill();
    const key = el("input", { id: "key", name: "key", type: "password", autocomplete: "current-password", required: true });
    const form = el("form", { id: "sign-in", class: "card narrow" },
      heading("Sign in to Entitle"),
      el("p", { text: "Use an admin API key of your app (role \"admin\" in the configuration)." }),
      el("label", { for: "key", text: "Admin API key" }), key,
      el("button", { type: "submit", id: "sign-in-button", text: "Sign in" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      say("Signing in…");
      try {
        state.session = await api("POST", "/console/session", { key: key.value });
        key.value = "";
        say("");
        enter();
      } catch (error) {
        say(error.status === 429 ? error.message : "Sign-in refused: " + error.message, true);
        key.focus();
      }
    });
    main.append(form);
    say(message || "", Boolean(isError));
    key.focus();
  }

  async function signOut() {
    try { await api("DELETE", "/console/session"); } catch (e) { /* the cookie is gone either way */ }
    state.session = null;
    location.hash = "#/";
    showSignIn("Signed out.");
  }

  function enter() {
    document.getElementById("top").hidden = false;
    document.getElementById("who").textContent = state.session.appId + " · " + state.session.keyName;
    route();
  }

  // ---- routing -------------------------------------------------------------------------
  function parseHash() {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [path, query] = hash.split("?");
    const params = new URLSearchParams(query || "");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    return { parts, params };
  }

  async function route() {
    if (!state.session) return;
    const { parts, params } = parseHash();
    const section = parts[0] || "overview";
    for (const link of document.querySelectorAll("[data-nav]")) {
      if (link.dataset.nav === section || (section === "customer" && link.dataset.nav === "search")) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    say("");
    try {
      if (section === "overview") await showOverview();
      else if (section === "search") await showSearch(params.get("q") || "");
      else if (section === "customer") await showCustomer(parts[1], params.get("at"));
      else if (section === "subscription") await showSubscription(parts[1], params.get("at"));
      else if (section === "notifications") await showNotifications(params);
      else if (section === "deliveries") await showDeliveries();
      else if (section === "refunds") await showRefunds();
      else if (section === "charts") await showCharts(params);
      else fill(heading("Not found"));
    } catch (error) {
      if (error.status !== 401) say(error.message, true);
    }
  }

  // ---- overview ------------------------------------------------------------------------
  function statCard(label, value, id) {
    return el("div", { class: "stat", id },
      el("span", { class: "stat-value", text: String(value) }), el("span", { class: "stat-label", text: label }));
  }

  function chart(hourly) {
    const ns = "http://www.w3.org/2000/svg";
    const width = 480, height = 120, gap = 2;
    const max = Math.max(1, ...hourly.map((hour) => hour.count));
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height + 16}`);
    svg.setAttribute("role", "img");
    const total = hourly.reduce((sum, hour) => sum + hour.count, 0);
    svg.setAttribute("aria-label", `Notifications per hour over the last day: ${total} in all, at most ${max} in one hour`);
    svg.setAttribute("class", "chart");
    const barWidth = width / hourly.length - gap;
    hourly.forEach((hour, index) => {
      const bar = document.createElementNS(ns, "rect");
      const barHeight = Math.round((hour.count / max) * height);
      bar.setAttribute("x", String(index * (barWidth + gap)));
      bar.setAttribute("y", String(height - barHeight));
      bar.setAttribute("width", String(barWidth));
      bar.setAttribute("height", String(Math.max(barHeight, hour.count > 0 ? 1 : 0)));
      bar.setAttribute("class", "bar");
      const title = document.createElementNS(ns, "title");
      title.textContent = `${when(hour.hourStart)}: ${hour.count}`;
      bar.append(title);
      svg.append(bar);
    });
    const axis = document.createElementNS(ns, "text");
    axis.setAttribute("x", "0");
    axis.setAttribute("y", String(height + 14));
    axis.setAttribute("class", "axis");
    axis.textContent = "24 hours ago";
    const now = document.createElementNS(ns, "text");
    now.setAttribute("x", String(width));
    now.setAttribute("y", String(height + 14));
    now.setAttribute("text-anchor", "end");
    now.setAttribute("class", "axis");
    now.textContent = "now";
    svg.append(axis, now);
    return svg;
  }

  async function showOverview() {
    const { stats } = await api("GET", "/v1/stats");
    const sections = [];
    for (const [environment, entitlements] of Object.entries(stats.activeSubscribers)) {
      sections.push(el("section", { class: "card", "aria-labelledby": "env-" + environment },
        el("h2", { id: "env-" + environment, text: environment }),
        el("div", { class: "stats" },
          Object.entries(entitlements).map(([name, count]) => statCard("active " + name, count, `active-${environment}-${name}`)),
          statCard("trials running", stats.trialsRunning[environment] || 0),
          statCard("in grace period", stats.inGracePeriod[environment] || 0),
          statCard("in billing retry", stats.inBillingRetry[environment] || 0),
          statCard("promotional grants", stats.activePromotionalGrants[environment] || 0))));
    }
    const notifications = stats.notifications;
    const byType = (counts) => el("ul", { class: "plain" },
      Object.entries(counts.byType).map(([type, count]) => el("li", { text: `${type}: ${count}` })));
    // Stored rows the server could not read are left out of every answer: support must see them.
    const unreadable = stats.unreadableRows || [];
    const unreadableCard = unreadable.length === 0 ? [] : [
      el("section", { class: "card warning", role: "alert", "aria-labelledby": "unreadable-heading" },
        el("h2", { id: "unreadable-heading", text: "Stored rows that could not be read" }),
        el("p", { text: "These are left out of every answer until repaired from a backup." }),
        el("ul", { class: "plain" }, unreadable.map((row) => el("li", {
          text: `${row.table} ${row.key}` + (row.deadline ? ` (a refund request still due: answer it by ${when(row.deadline)})` : "") }))))];
    fill(heading("Overview"),
      el("p", { class: "muted", text: "Customers counted at " + when(stats.subscribersCountedAt) + "; the rest as of " + when(stats.generatedAt) }),
      ...unreadableCard,
      ...sections,
      el("section", { class: "card", "aria-labelledby": "notifications-heading" },
        el("h2", { id: "notifications-heading", text: "Notifications" }),
        el("div", { class: "stats" },
          statCard("in the last hour", notifications.lastHour.total, "notifications-hour"),
          statCard("in the last day", notifications.lastDay.total, "notifications-day"),
          statCard("verification failures today", stats.verificationFailures.lastDay.total)),
        chart(notifications.hourly),
        el("h3", { text: "Last day by type" }), byType(notifications.lastDay)),
      el("section", { class: "card", "aria-labelledby": "deliveries-heading" },
        el("h2", { id: "deliveries-heading", text: "Webhook deliveries" }),
        el("div", { class: "stats" },
          statCard("pending", stats.webhookDeliveries.pending),
          statCard("failed", stats.webhookDeliveries.failed, "deliveries-failed")),
        el("p", {}, el("a", { href: "#/deliveries", text: "See deliveries" }))));
    focusMain();
  }

  // ---- search --------------------------------------------------------------------------
  function entitlementSummary(subscriber) {
    const names = Object.entries((subscriber && subscriber.entitlements) || {})
      .map(([name, grant]) => `${name}: ${label(grant.state).toLowerCase()}`);
    return names.length ? names.join(", ") : "no entitlements";
  }

  async function showSearch(query) {
    const input = el("input", { id: "query", name: "query", type: "search", value: query, required: true,
      autocomplete: "off", "aria-describedby": "query-help" });
    const form = el("form", { id: "search-form", class: "card", role: "search" },
      el("label", { for: "query", text: "Find a customer" }),
      el("p", { id: "query-help", class: "muted",
        text: "An appAccountToken, a transaction ID, an original transaction ID, an appTransactionId, or the order ID from Apple's receipt e-mail." }),
      el("div", { class: "row" }, input, el("button", { type: "submit", text: "Search" })));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      location.hash = "#/search?q=" + encodeURIComponent(input.value.trim());
    });
    const results = el("section", { id: "results", "aria-label": "Results" });
    fill(heading("Search"), form, results);
    if (!query) { input.focus(); return; }
    say("Searching…");
    const answer = await api("GET", "/v1/subscribers?query=" + encodeURIComponent(query));
    say("");
    if (answer.orderLookup) results.append(el("p", { class: "error", text: answer.orderLookup }));
    // Marks the results as this query's (a page replaced by the next search is never mistaken for it).
    results.setAttribute("data-query", query);
    if (!answer.matches.length) {
      results.append(el("p", { id: "no-match", text: `No customer matches “${query}”.` }));
      return;
    }
    results.append(el("ul", { class: "matches" }, answer.matches.map((match) => {
      const target = match.appAccountToken
        ? "#/customer/" + encodeURIComponent(match.appAccountToken)
        : "#/subscription/" + encodeURIComponent(match.originalTransactionId);
      const label = match.appAccountToken || ("subscription " + match.originalTransactionId);
      return el("li", { class: "card match" },
        el("a", { href: target, class: "match-link", text: label }),
        el("span", { class: "muted", text: ` matched by ${show(match.matchedBy)} · ${show(match.environment)}` }),
        el("p", { text: entitlementSummary(match.subscriber) }));
    })));
    results.querySelector("a").focus();
  }

  // ---- a customer ----------------------------------------------------------------------
  function badges(subscriber) {
    const entries = Object.entries(subscriber.entitlements || {});
    if (!entries.length) return el("p", { id: "no-entitlements", text: "No entitlements." });
    return el("ul", { class: "badges", id: "entitlements" }, entries.map(([name, grant]) =>
      el("li", { class: "badge " + (grant.isActive ? "active" : "inactive"), "data-entitlement": name, "data-state": grant.state },
        el("strong", { text: name }),
        el("span", { text: " " + label(grant.state) }),
        el("span", { class: "detail", text: revocationText(grant, subscriber) ? " " + revocationText(grant, subscriber)
          : grant.expiresDate ? " until " + when(grant.expiresDate) : " no expiry" }),
        el("span", { class: "detail", text: grant.store === "promotional" ? " · promotional grant"
          : ` · ${grant.productId} · ${grant.store === "play_store" ? "Google Play" : "App Store"}` }),
        el("span", { class: "detail", text: " · " + show(grant.environment || subscriber.environment) }))));
  }

  function subscriptionsTable(subscriber) {
    const rows = Object.entries(subscriber.subscriptions || {});
    if (!rows.length) return el("p", { text: "No subscriptions." });
    return el("div", { class: "scroll" }, el("table", { id: "subscriptions" },
      el("caption", { text: "Subscriptions" }),
      el("thead", {}, el("tr", {}, ["Product", "Store", "State", "Expires", "Renews", "Environment", "Original transaction or purchase token"].map((name) => el("th", { scope: "col", text: name })))),
      el("tbody", {}, rows.map(([product, subscription]) => el("tr", {},
        el("td", { text: subscription.productId || product }),
        el("td", { text: subscription.store === "play_store" ? "Google Play" : "App Store" }),
        el("td", { text: label(subscription.state) }), el("td", { text: when(subscription.expiresDate) }),
        el("td", { text: subscription.willRenew ? "yes" : "no" }), el("td", { text: show(subscription.environment) }),
        el("td", { class: "token", text: show(subscription.originalTransactionId || subscription.purchaseToken) }))))));
  }

  function asOfForm(base, at) {
    // A text field in the console's one date format (UTC), not the browser's date widget,
    // which would show the instant in the reader's locale and time zone.
    const input = el("input", { id: "as-of", name: "at", type: "text", inputmode: "numeric", autocomplete: "off",
      placeholder: "YYYY-MM-DD HH:MM:SS", pattern: "\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}(:\\d{2})?",
      value: at ? when(at).replace(/ UTC$/, "") : "" });
    const form = el("form", { id: "as-of-form", class: "row", "aria-label": "Show the state at a past instant" },
      el("label", { for: "as-of", text: "As of (UTC)" }), input,
      el("button", { type: "submit", text: "Show" }),
      el("button", { type: "button", id: "as-of-now", text: "Now", onclick: () => { location.hash = base; } }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (!text) { location.hash = base; return; }
      const date = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$/.test(text) ? new Date(text.replace(" ", "T") + "Z") : null;
      if (!date || isNaN(date)) { say("Write the instant as YYYY-MM-DD HH:MM:SS, in UTC.", true); input.focus(); return; }
      location.hash = base + "?at=" + encodeURIComponent(date.toISOString());
    });
    return form;
  }

  function timeline(history) {
    return el("ol", { class: "timeline", id: "history" }, history.map((entry) => {
      const item = el("li", { class: "entry kind-" + entry.kind, "data-kind": entry.kind },
        el("time", { datetime: entry.at, text: when(entry.at) }),
        el("span", { class: "kind", text: label(entry.kind) }),
        el("span", { class: "summary", text: entry.summary || "" }),
        el("span", { class: "muted", text: " · " + show(entry.source) + (entry.environment ? " · " + entry.environment : "") }));
      if (entry.kind === "delivery" && entry.status === "failed") {
        item.append(el("button", { type: "button", class: "redeliver", text: "Redeliver",
          onclick: () => redeliver(entry.deliveryId) }));
      }
      const payload = entry.payload || entry.grant;
      if (payload) {
        item.append(el("details", {}, el("summary", { text: "Details" }), el("pre", { text: JSON.stringify(readablePayload(payload), null, 2) })));
      }
      return item;
    }));
  }

  async function redeliver(id) {
    await api("POST", "/v1/webhooks/deliveries/" + encodeURIComponent(id) + "/retry");
    say("Delivery " + id + " queued again.");
  }

  function grantForm(token) {
    const entitlement = el("select", { id: "grant-entitlement", name: "entitlement" },
      state.session.entitlements.map((name) => el("option", { value: name, text: name })));
    const duration = el("select", { id: "grant-duration", name: "duration" },
      [["P7D", "1 week"], ["P1M", "1 month"], ["P3M", "3 months"], ["P1Y", "1 year"]].map(([value, label]) =>
        el("option", { value, text: label, selected: value === "P1M" })));
    const reason = el("input", { id: "grant-reason", name: "reason", type: "text", maxlength: "500", placeholder: "e.g. apology for the outage" });
    const form = el("form", { id: "grant-form", class: "card" },
      el("h2", { text: "Grant an entitlement" }),
      el("div", { class: "fields" },
        el("div", {}, el("label", { for: "grant-entitlement", text: "Entitlement" }), entitlement),
        el("div", {}, el("label", { for: "grant-duration", text: "For" }), duration),
        el("div", { class: "wide" }, el("label", { for: "grant-reason", text: "Reason (optional)" }), reason)),
      el("button", { type: "submit", id: "grant-button", text: "Grant" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const body = { duration: duration.value };
        if (reason.value.trim()) body.reason = reason.value.trim();
        await api("POST", `/v1/subscribers/${encodeURIComponent(token)}/entitlements/${encodeURIComponent(entitlement.value)}/grants`, body);
        await showCustomer(token, null);
        say(`Granted ${entitlement.value} for ${duration.selectedOptions[0].textContent}.`);
      } catch (error) {
        if (error.status !== 401) say("Grant failed: " + error.message, true);
      }
    });
    return form;
  }

  function grantsList(token, grants) {
    const active = grants.filter((grant) => grant.state === "ACTIVE");
    if (!active.length) return null;
    return el("section", { class: "card", "aria-labelledby": "grants-heading" },
      el("h2", { id: "grants-heading", text: "Active promotional grants" }),
      el("ul", { class: "plain", id: "grants" }, active.map((grant) => el("li", { "data-grant": grant.id },
        `${grant.entitlement} until ${when(grant.expiresDate)} by ${show(grant.grantedBy)}${grant.reason ? " (" + grant.reason + ")" : ""} `,
        el("button", { type: "button", class: "revoke", "aria-label": `Revoke the ${grant.entitlement} grant`, text: "Revoke",
          onclick: async () => {
            try {
              await api("DELETE", `/v1/subscribers/${encodeURIComponent(token)}/entitlements/${encodeURIComponent(grant.entitlement)}/grants/${encodeURIComponent(grant.id)}`);
              await showCustomer(token, null);
              say(`Revoked the ${grant.entitlement} grant.`);
            } catch (error) {
              if (error.status !== 401) say("Revoke failed: " + error.message, true);
            }
          } })))));
  }

  // What a re-sync did, in words. Apple is asked about the customer's stored transactions,
  // so a customer with none was not asked about at all.
  function resyncMessage(sync) {
    if (!sync.environment) return "Nothing to re-sync: Entitle has no App Store transaction of this customer to ask Apple about.";
    const stored = sync.stored === 1 ? "1 transaction" : `${sync.stored} transactions`;
    const news = sync.stored ? `Re-synced: ${stored} from Apple (${sync.environment}).`
      : `Re-synced: Apple has nothing new for this customer (${sync.environment}).`;
    const failures = sync.failures || [];
    return failures.length ? `${news} ${failures.length} could not be stored: ${show(failures[0].reason)}` : news;
  }

  async function showCustomer(token, at) {
    const base = "#/customer/" + encodeURIComponent(token);
    const suffix = at ? "?at=" + encodeURIComponent(at) : "";
    let subscriber = null;
    try {
      subscriber = (await api("GET", "/v1/subscribers/" + encodeURIComponent(token) + suffix)).subscriber;
    } catch (error) {
      if (error.status !== 404) throw error;
    }
    let history = { history: [], grants: [] };
    try { history = await api("GET", "/v1/subscribers/" + encodeURIComponent(token) + "/history"); } catch (error) {
      if (error.status !== 404) throw error;
    }
    const resync = el("button", { type: "button", id: "resync", text: "Re-sync from Apple", onclick: async () => {
      say("Asking Apple…");
      try {
        const answer = await api("POST", "/v1/subscribers/" + encodeURIComponent(token) + "/sync");
        await showCustomer(token, at);
        say(resyncMessage(answer.sync), (answer.sync.failures || []).length > 0);
      } catch (error) {
        if (error.status === 404) say(resyncMessage({}));
        else if (error.status !== 401) say("Re-sync failed: " + error.message, true);
      }
    } });
    fill(
      heading("Customer"),
      el("p", { class: "token", id: "customer-token", text: token }),
      el("section", { class: "card", "aria-labelledby": "now-heading" },
        el("h2", { id: "now-heading", text: at ? "Entitlements as of " + when(at) : "Entitlements now" }),
        asOfForm(base, at),
        subscriber ? badges(subscriber) : el("p", { id: "no-entitlements", text: "Nothing stored for this customer at that time." }),
        el("div", { class: "row" }, resync)),
      grantForm(token),
      grantsList(token, history.grants || []),
      await refundOverrideForm(token),
      el("section", { class: "card" }, subscriber ? subscriptionsTable(subscriber) : null),
      el("section", { class: "card", "aria-labelledby": "history-heading" },
        el("h2", { id: "history-heading", text: "History" }),
        history.history.length ? timeline(history.history) : el("p", { text: "No history." })));
    focusMain();
  }

  async function showSubscription(original, at) {
    const suffix = at ? "?at=" + encodeURIComponent(at) : "";
    const { subscriber } = await api("GET", "/v1/subscribers/by-transaction/" + encodeURIComponent(original) + suffix);
    if (subscriber.appAccountToken) { location.hash = "#/customer/" + encodeURIComponent(subscriber.appAccountToken); return; }
    fill(heading("Subscription " + original),
      el("p", { class: "muted", text: "This customer has no appAccountToken: grants and the history need one." }),
      el("section", { class: "card" }, asOfForm("#/subscription/" + encodeURIComponent(original), at), badges(subscriber)),
      el("section", { class: "card" }, subscriptionsTable(subscriber)));
    focusMain();
  }

  // ---- notifications -------------------------------------------------------------------
  async function showNotifications(params) {
    const [stored, refused] = await Promise.all([
      api("GET", "/v1/notifications?limit=500"), api("GET", "/v1/notifications/refused")]);
    const notifications = stored.notifications.concat(refused.refused)
      .sort((a, b) => (b.receivedAtMs || 0) - (a.receivedAtMs || 0));
    const choice = (id, label, values, selected) => el("select", { id, name: id },
      el("option", { value: "", text: label }),
      values.map((value) => el("option", { value, text: value, selected: selected === value })));
    const distinct = (key) => [...new Set(notifications.map((n) => n[key]).filter(Boolean))].sort();
    const type = choice("filter-type", "All types", distinct("notificationType"), params.get("type"));
    const environment = choice("filter-environment", "All environments", distinct("environment"), params.get("environment"));
    const result = choice("filter-result", "All results", ["applied", "refused"], params.get("result"));
    const body = el("tbody");
    function render() {
      body.replaceChildren(...notifications
        .filter((n) => (!type.value || n.notificationType === type.value) && (!environment.value || n.environment === environment.value)
          && (!result.value || n.result === result.value))
        .map((n) => el("tr", { class: "notification-" + n.result },
          el("td", { text: when(n.receivedAt) }),
          el("td", { text: (n.notificationType || "—") + (n.subtype ? " · " + n.subtype : "") }),
          el("td", { text: n.environment || "—" }),
          el("td", { text: n.result === "refused" ? `refused · ${show(n.status)}: ${show(n.reason)}` : "applied" }),
          el("td", {}, n.originalTransactionId
            ? el("a", { href: "#/subscription/" + encodeURIComponent(n.originalTransactionId), text: n.originalTransactionId }) : "—"))));
    }
    for (const select of [type, environment, result]) select.addEventListener("change", render);
    render();
    fill(heading("Notifications"),
      el("p", { class: "muted", text: "Newest first: every notification verified and stored, and those refused lately (not stored; what they claimed is unverified)." }),
      el("form", { class: "row card", "aria-label": "Filter notifications" },
        el("label", { for: "filter-type", text: "Type" }), type,
        el("label", { for: "filter-environment", text: "Environment" }), environment,
        el("label", { for: "filter-result", text: "Result" }), result),
      el("div", { class: "scroll" }, el("table", { id: "notifications" },
        el("caption", { text: "Notifications" }),
        el("thead", {}, el("tr", {}, ["Received", "Type", "Environment", "Result", "Subscription"].map((name) => el("th", { scope: "col", text: name })))),
        body)));
    focusMain();
  }

  // ---- deliveries ----------------------------------------------------------------------
  async function showDeliveries() {
    const failed = (await api("GET", "/v1/webhooks/deliveries?status=failed&limit=200")).deliveries;
    const others = (await api("GET", "/v1/webhooks/deliveries?limit=200")).deliveries.filter((d) => d.status !== "failed");
    const rows = failed.concat(others).map((delivery) => el("tr", { class: "delivery-" + delivery.status, "data-delivery": delivery.id },
      el("td", { text: label(delivery.status) }),
      el("td", { text: delivery.eventType || label(delivery.kind) }),
      el("td", { text: show(delivery.endpoint) }),
      el("td", { text: String(delivery.attempts) }),
      el("td", { text: delivery.lastStatus ? String(delivery.lastStatus) : (delivery.lastError || "—") }),
      el("td", { text: when(delivery.createdAt) }),
      el("td", {}, delivery.status === "delivered" ? "" : el("button", { type: "button", class: "retry",
        "aria-label": "Retry delivery " + delivery.id, text: "Retry", onclick: async () => {
          try {
            await api("POST", "/v1/webhooks/deliveries/" + encodeURIComponent(delivery.id) + "/retry");
            await showDeliveries();
            say("Delivery " + delivery.id + " queued again.");
          } catch (error) {
            if (error.status !== 401) say("Retry failed: " + error.message, true);
          }
        } }))));
    fill(heading("Webhook deliveries"),
      el("p", { class: "muted", text: "Failed deliveries first." }),
      rows.length ? el("div", { class: "scroll" }, el("table", { id: "deliveries" },
        el("caption", { text: "Deliveries" }),
        el("thead", {}, el("tr", {}, ["Status", "Event", "Endpoint", "Attempts", "Last answer", "Created", "Action"].map((name) => el("th", { scope: "col", text: name })))),
        el("tbody", {}, rows))) : el("p", { text: "No deliveries." }));
    focusMain();
  }

  // ---- refund reviews ------------------------------------------------------------------


  async function showRefunds() {
    const requests = (await api("GET", "/v1/refund-requests?limit=200")).refundRequests;
    const rows = requests.map((request) => el("tr", { "data-refund": request.id, "data-status": request.status },
      el("td", { text: request.store === "play_store" ? "Google Play" : "App Store" }),
      el("td", {}, request.appAccountToken
        ? el("a", { href: "#/customer/" + encodeURIComponent(request.appAccountToken), text: request.appAccountToken }) : "—"),
      el("td", { text: show(request.transactionId || request.orderId) }),
      el("td", { text: request.reason }),
      el("td", { text: when(request.requestedAt) }),
      el("td", { class: "refund-status", text: request.status === "PENDING" ? `Pending, ${timeLeft(request.secondsLeft)}` : label(request.status) }),
      el("td", { class: "refund-answer", text: answered(request) }),
      el("td", { text: show(request.decidedBy) }),
      el("td", { class: "refund-outcome", text: request.outcome ? label(request.outcome) : (request.error || "—") })));
    fill(heading("Refund requests"),
      el("p", { class: "muted", text: "What Apple and Google asked, what Entitle answered by the app's policy, and what the store decided." }),
      rows.length ? el("div", { class: "scroll" }, el("table", { id: "refunds" },
        el("caption", { text: "Refund requests, newest first" }),
        el("thead", {}, el("tr", {}, ["Store", "Customer", "Purchase", "Reason", "Requested", "Status", "Answered", "Decided by", "Outcome"].map((name) => el("th", { scope: "col", text: name })))),
        el("tbody", {}, rows))) : el("p", { text: "No refund requests." }));
    focusMain();
  }

  // The customer's standing instruction for refund reviews: set, changed or removed here.
  async function refundOverrideForm(token) {
    const path = "/v1/subscribers/" + encodeURIComponent(token) + "/refund-override";
    const current = (await api("GET", path)).refundOverride;
    // It starts on "No override" (or the one set): no single click sets the most generous
    // policy, and an override is saved only with its reason.
    const choice = el("select", { id: "refund-override", name: "override", required: true },
      el("option", { value: "", selected: !current, text: "No override (the policy decides)" }),
      ["ALWAYS_GRANT", "ALWAYS_DECLINE", "NO_PREFERENCE"].map((value) =>
        el("option", { value, selected: current && current.override === value, text: label(value) })));
    const reason = el("input", {
      id: "refund-override-reason", name: "reason", type: "text", maxlength: "500", required: true,
      value: (current && current.reason) || "" });
    const form = el("form", { class: "card", id: "refund-override-form", "aria-labelledby": "refund-override-heading" },
      el("h2", { id: "refund-override-heading", text: "Refund reviews" }),
      el("p", { id: "refund-override-current", text: current
        ? `Override: ${label(current.override)}, set by ${current.setBy} on ${when(current.setAt)}${current.reason ? " (" + current.reason + ")" : ""}.`
        : "No override: the app's refund policy decides." }),
      el("label", { for: "refund-override", text: "Override" }), choice,
      el("label", { for: "refund-override-reason", text: "Why" }), reason,
      el("div", { class: "row" },
        el("button", { type: "submit", id: "refund-override-save", text: "Save override" }),
        current ? el("button", { type: "button", id: "refund-override-remove", text: "Remove override", onclick: async () => {
          try {
            await api("DELETE", path);
            await showCustomer(token, null);
            say("Override removed: the policy decides again.");
          } catch (error) {
            if (error.status !== 401) say("Removing the override failed: " + error.message, true);
          }
        } }) : null));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!choice.value) { say("Choose an override first (or remove the one set).", true); choice.focus(); return; }
      if (!reason.value.trim()) { say("Say why, for whoever reads this customer next.", true); reason.focus(); return; }
      try {
        await api("PUT", path, { override: choice.value, reason: reason.value });
        await showCustomer(token, null);
        say("Override saved.");
      } catch (error) {
        if (error.status !== 401) say("Saving the override failed: " + error.message, true);
      }
    });
    return form;
  }

  // ---- charts --------------------------------------------------------------------------
  // The figures, as the server names them in the session ({name, title, kind}; kind "money" is
  // one bar per currency, "count", "rate" a share, "churn" stacked by kind).
  const chartFigures = () => (state.session && state.session.metrics) || [];
  const dayMs = 86400000;




  // Bars over the buckets: side by side per column, or stacked (churn). Negative values
  // (a refund larger than the day's sales) go below the zero line.
  function barChart(figure, columns, buckets, interval) {
    const ns = "http://www.w3.org/2000/svg";
    const width = 640, height = 150, top = 8, left = 48, bottom = 20;
    const stacked = figure.kind === "churn";
    const sums = buckets.map((bucket) => stacked
      ? [columns.reduce((sum, column) => sum + (column.of(bucket) || 0), 0)] : columns.map((column) => column.of(bucket) || 0));
    const max = Math.max(0, ...sums.flat()), min = Math.min(0, ...sums.flat());
    const span = max - min || 1;
    const y = (value) => top + ((max - value) / span) * height;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${top + height + bottom}`);
    svg.setAttribute("class", "chart");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", buckets.length
      ? `${figure.title} by ${interval} from ${isoDay(Date.parse(buckets[0].start))} to ${isoDay(Date.parse(buckets[buckets.length - 1].start))}: highest ${formatValue(figure, max)}; the numbers are in the table below`
      : `${figure.title}: no buckets`);
    function text(x, yPosition, content, anchor) {
      const node = document.createElementNS(ns, "text");
      node.setAttribute("x", String(x));
      node.setAttribute("y", String(yPosition));
      node.setAttribute("class", "axis");
      node.setAttribute("text-anchor", anchor);
      node.textContent = content;
      svg.append(node);
    }
    text(left - 4, top + 10, formatValue(figure, max), "end");
    text(left - 4, top + height, formatValue(figure, min), "end");
    const zero = document.createElementNS(ns, "line");
    for (const [name, value] of [["x1", left], ["x2", width], ["y1", y(0)], ["y2", y(0)]]) zero.setAttribute(name, String(value));
    zero.setAttribute("class", "zero");
    svg.append(zero);
    const slot = (width - left) / Math.max(1, buckets.length);
    const barWidth = Math.max(1, (slot - 2) / (stacked ? 1 : Math.max(1, columns.length)));
    buckets.forEach((bucket, index) => {
      let base = 0;
      columns.forEach((column, columnIndex) => {
        const value = column.of(bucket) || 0;
        const from = stacked ? base : 0, to = from + value;
        if (stacked) base = to;
        const bar = document.createElementNS(ns, "rect");
        bar.setAttribute("x", String(left + index * slot + (stacked ? 0 : columnIndex * barWidth)));
        bar.setAttribute("y", String(y(Math.max(from, to))));
        bar.setAttribute("width", String(barWidth));
        bar.setAttribute("height", String(Math.max(Math.abs(y(from) - y(to)), value ? 1 : 0)));
        bar.setAttribute("class", `bar series-${columnIndex}`);
        const title = document.createElementNS(ns, "title");
        title.textContent = `${isoDay(Date.parse(bucket.start))} · ${column.name}: ${formatValue(figure, column.of(bucket))}`;
        bar.append(title);
        svg.append(bar);
      });
    });
    if (buckets.length) {
      text(left, top + height + bottom - 4, isoDay(Date.parse(buckets[0].start)), "start");
      text(width, top + height + bottom - 4, isoDay(Date.parse(buckets[buckets.length - 1].start)), "end");
    }
    return svg;
  }

  function figureTable(figure, columns, buckets) {
    return el("div", { class: "scroll" }, el("table", { class: "figures", "data-metric": figure.name },
      el("caption", { text: figure.title + (figure.kind === "money" ? " (major units per currency)" : "") }),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Start (UTC)" }),
        columns.map((column) => el("th", { scope: "col", text: column.name })))),
      el("tbody", {}, buckets.map((bucket) => el("tr", {},
        el("th", { scope: "row", text: isoDay(Date.parse(bucket.start)) }),
        columns.map((column) => {
          const value = column.of(bucket);
          return el("td", { "data-column": column.name, "data-value": value === null || value === undefined ? "" : String(value),
            text: formatValue(figure, value) });
        }))))));
  }

  async function showCharts(params) {
    const environments = state.session.environments || [];
    // Unless asked for one, the environment that has data (a deployment with only Sandbox data
    // does not open on a page of zeros), by week.
    let environment = params.get("environment");
    if (!environments.includes(environment)) {
      const summaries = await Promise.all(environments.map((name) =>
        api("GET", "/v1/metrics/summary?environment=" + encodeURIComponent(name)).then((answer) => answer.summary)));
      environment = environmentWithData(environments, summaries);
    }
    const interval = ["day", "week", "month"].includes(params.get("interval")) ? params.get("interval") : "week";
    const tomorrow = Math.floor(Date.now() / dayMs) * dayMs + dayMs;
    const valid = (text) => /^\d{4}-\d{2}-\d{2}$/.test(text || "") && !isNaN(Date.parse(text));
    const to = valid(params.get("to")) ? params.get("to") : isoDay(tomorrow);
    const from = valid(params.get("from")) ? params.get("from") : isoDay(Date.parse(to) - 30 * dayMs);
    const query = `from=${from}&to=${to}&interval=${interval}&environment=${encodeURIComponent(environment)}`;

    const form = el("form", { class: "card row", id: "charts-form", "aria-label": "Range and interval" },
      el("label", { for: "charts-from", text: "From" }), el("input", { id: "charts-from", name: "from", type: "date", value: from, required: true }),
      el("label", { for: "charts-to", text: "To (exclusive)" }), el("input", { id: "charts-to", name: "to", type: "date", value: to, required: true }),
      el("label", { for: "charts-interval", text: "Interval" }),
      el("select", { id: "charts-interval", name: "interval" },
        ["day", "week", "month"].map((value) => el("option", { value, selected: value === interval, text: label(value) }))),
      el("label", { for: "charts-environment", text: "Environment" }),
      el("select", { id: "charts-environment", name: "environment" },
        environments.map((value) => el("option", { value, selected: value === environment, text: value }))),
      el("button", { type: "submit", text: "Show" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(form);
      location.hash = "#/charts?" + new URLSearchParams(data).toString();
    });

    say("Loading the figures…");
    const [summary, ...series] = await Promise.all([
      api("GET", "/v1/metrics/summary?environment=" + encodeURIComponent(environment)),
      ...chartFigures().map((figure) => api("GET", `/v1/metrics/${figure.name}?${query}`))]);
    say("");
    const now = summary.summary;
    const money = (amounts) => Object.keys(amounts || {}).sort().map((currency) => `${amounts[currency].toFixed(2)} ${currency}`).join(" · ") || "0";
    const cards = el("section", { class: "card", "aria-labelledby": "charts-now" },
      el("h2", { id: "charts-now", text: `Now (${environment})` }),
      el("div", { class: "stats" },
        statCard("Active subscriptions", now.activeSubscriptions, "charts-active"),
        statCard("Active trials", now.activeTrials, "charts-trials"),
        statCard("MRR", money(now.mrr), "charts-mrr"),
        statCard("ARR", money(now.arr), "charts-arr")));
    const sections = chartFigures().map((figure, index) => {
      const buckets = series[index].buckets;
      const columns = chartColumns(figure, buckets);
      const id = "chart-" + figure.name;
      return el("section", { class: "card", id, "aria-labelledby": id + "-heading" },
        el("h2", { id: id + "-heading", text: figure.title }),
        // The numbers under each chart, folded: the page is a page of charts, each table a click away.
        columns.length ? [barChart(figure, columns, buckets, interval),
          el("details", { class: "numbers" }, el("summary", { text: "The numbers" }), figureTable(figure, columns, buckets))]
          : el("p", { class: "muted none", text: `No ${figure.title.toLowerCase()} in this range.` }),
        // The server names the file (Content-Disposition).
        el("p", {}, el("a", { class: "csv", href: `/v1/metrics/${figure.name}?${query}&format=csv`, download: true,
          text: `Download ${figure.title} as CSV` })));
    });
    fill(heading("Charts"),
      el("p", { class: "muted", text: "The business figures, kept from the stored facts as they arrive (UTC buckets; a stock is taken at the end of its bucket, or now)." }),
      form, cards, sections);
    focusMain();
  }

  // ---- start ---------------------------------------------------------------------------
  document.getElementById("sign-out").addEventListener("click", signOut);
  window.addEventListener("hashchange", route);
  // Only "not signed in" (401) asks for the key; any other failure says what went wrong, with
  // the request id to look up in the server's log, and offers to try again.
  function showUnavailable(error) {
    const status = error instanceof APIError ? error.status : null;
    fill(
      heading("The console cannot reach Entitle"),
      el("p", { id: "unavailable", "data-status": status ?? "", text: unavailableText(error) }),
      el("button", { type: "button", onclick: () => location.reload(), text: "Try again" }));
    say("");
    focusMain();
  }

  (async function start() {
    try {
      state.session = await api("GET", "/console/session");
      enter();
    } catch (error) {
      if (error instanceof APIError && error.status === 401) showSignIn();
      else showUnavailable(error);
    }
  })();
})();
