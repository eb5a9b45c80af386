// The console's pure functions: how values, codes, dates and chart columns read on the page.
// No DOM here, so `node --test` checks them (Tests/Console/format.test.js).

// A value for the page: never "null", "undefined" or an empty cell.
export function show(value) {
  return value === null || value === undefined || value === "" ? "—" : String(value);
}

// Entitle's own codes as people read them: GRACE_PERIOD → "Grace period", grantRevoked →
// "Grant revoked". Apple's names (DID_RENEW, INVALID_CHAIN) are shown as Apple writes them;
// raw codes stay in data-* attributes, for scripts and tests.
export function label(code) {
  if (code === null || code === undefined || code === "") return "—";
  const words = String(code).replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// Every date in the console is shown one way: UTC, to the second.
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return isNaN(date) ? iso : date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC").replace(/Z$/, " UTC");
}

// Time left before a store stops weighing an answer, in words.
export function timeLeft(seconds) {
  if (seconds === undefined || seconds === null) return "—";
  const hours = Math.floor(seconds / 3600), minutes = Math.floor((seconds % 3600) / 60);
  return hours ? `${hours} h ${minutes} min left` : `${minutes} min left`;
}

// What was answered, in words: the preference (or none) and the consumption sent.
export function answered(request) {
  const answer = request.answer;
  if (!answer) return "—";
  const preference = answer.refundPreference || "no preference";
  const share = answer.consumptionPercentage ?? answer.consumptionPercentageMilliunits;
  return share === undefined ? preference : `${preference}, ${share / 1000} % consumed`;
}

export function isoDay(ms) { return new Date(ms).toISOString().slice(0, 10); }

// A bucket's columns: one per currency for money, the kinds for churn, else one value.
export function chartColumns(figure, buckets) {
  if (figure.kind === "money") {
    const currencies = new Set();
    for (const bucket of buckets) for (const currency of Object.keys(bucket.value || {})) currencies.add(currency);
    return [...currencies].sort().map((currency) => ({ name: currency, of: (bucket) => (bucket.value || {})[currency] ?? 0 }));
  }
  if (figure.kind === "churn") {
    return ["voluntary", "involuntary", "other"].map((kind) => ({ name: label(kind), of: (bucket) => bucket[kind] }));
  }
  return [{ name: figure.title, of: (bucket) => bucket.value }];
}

export function formatValue(figure, value) {
  if (value === null || value === undefined) return "—";
  if (figure.kind === "rate") return (value * 100).toFixed(1) + " %";
  if (figure.kind === "money") return value.toFixed(2);
  return String(value);
}

// What the page says when the server answered something other than "not signed in": the
// status, the server's message and the request id to find in its log.
export function unavailableText(error) {
  if (!error || error.status === undefined || error.status === null) {
    return "Entitle did not answer (" + (error && error.message ? error.message : "network error") + ").";
  }
  const id = error.requestId ? ` Request id: ${error.requestId}.` : "";
  return `Entitle answered HTTP ${error.status}: ${error.message}.${id}`;
}

// The environment the Charts page opens on: the first (in the deployment's order) whose summary
// shows anything — subscriptions, trials or MRR — else Production when listed, else the first.
export function environmentWithData(environments, summaries) {
  const hasData = (summary) => Boolean(summary) && ((summary.activeSubscriptions || 0) > 0 || (summary.activeTrials || 0) > 0
    || Object.values(summary.mrr || {}).some((amount) => amount !== 0));
  const index = summaries.findIndex(hasData);
  if (index >= 0 && index < environments.length) return environments[index];
  return environments.includes("Production") ? "Production" : environments[0];
}

// A signed payload as the Details of a history entry show it: Apple's and Google's instants are
// epoch milliseconds, so each member named like one (…Date, …At, …Time, …Ms) that holds a
// number also says when that is, in the console's one date format.
export function readablePayload(value, key = "") {
  if (Array.isArray(value)) return value.map((item) => readablePayload(item));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, readablePayload(item, name)]));
  }
  if (typeof value === "number" && /(Date|At|Time|Ms)$/.test(key) && Number.isInteger(value) && Math.abs(value) < 8.64e15) {
    return `${value} (${when(new Date(value).toISOString())})`;
  }
  return value;
}

// Why a revoked entitlement is revoked, and since when: Apple's refund reasons, a family
// member's access ended, or support's revocation of a grant. Nil for one that is not revoked.
export function revocationText(grant, subscriber) {
  if (!grant || grant.state !== "REVOKED") return null;
  const subscription = ((subscriber && subscriber.subscriptions) || {})[grant.productId] || {};
  const at = subscription.revocationDate || grant.revocationDate || grant.revokedAt;
  const why = subscription.revocationType === "FAMILY_REVOKE" ? "family sharing ended"
    : subscription.revocationReason === 1 ? "refunded for a problem in the app"
    : subscription.revocationReason === 0 ? "refunded"
    : grant.store === "promotional" ? "grant revoked by support"
    : "refunded or revoked";
  return `revoked ${at ? when(at) : "(when unknown)"}: ${why}`;
}
