// Unit tests of the console's pure functions (Sources/Server/Console/Assets/format.js), run by
// `node --test Tests/Console` in CI; the page itself is tested in Chromium (ConsoleBrowserTests).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  answered, chartColumns, environmentWithData, formatValue, isoDay, label, readablePayload, revocationText, show, timeLeft,
  unavailableText, when,
} from "../../Sources/Server/Console/Assets/format.js";

test("a missing value reads as a dash, never null or undefined", () => {
  for (const value of [null, undefined, ""]) assert.equal(show(value), "—");
  assert.equal(show(0), "0");
  assert.equal(show(false), "false");
});

test("codes read as words", () => {
  assert.equal(label("GRACE_PERIOD"), "Grace period");
  assert.equal(label("grantRevoked"), "Grant revoked");
  assert.equal(label(null), "—");
});

test("every date reads one way: UTC to the second", () => {
  assert.equal(when("2026-12-04T18:42:16.123Z"), "2026-12-04 18:42:16 UTC");
  assert.equal(when("2026-12-04T18:42:16Z"), "2026-12-04 18:42:16 UTC");
  assert.equal(when("not a date"), "not a date");
  assert.equal(when(null), "—");
  assert.equal(isoDay(Date.UTC(2026, 11, 4, 23, 59)), "2026-12-04");
});

test("time left and answers read in words", () => {
  assert.equal(timeLeft(3 * 3600 + 25 * 60 + 59), "3 h 25 min left");
  assert.equal(timeLeft(59), "0 min left");
  assert.equal(timeLeft(null), "—");
  assert.equal(answered({}), "—");
  assert.equal(answered({ answer: { refundPreference: "DECLINE", consumptionPercentage: 25000 } }), "DECLINE, 25 % consumed");
  assert.equal(answered({ answer: {} }), "no preference");
});

test("a chart has a column per currency, per churn kind, or one", () => {
  const buckets = [{ value: { USD: 9.99 } }, { value: { EUR: 4.5, USD: 1 } }, { value: null }];
  const money = chartColumns({ kind: "money", title: "MRR" }, buckets);
  assert.deepEqual(money.map((column) => column.name), ["EUR", "USD"]);
  assert.deepEqual(buckets.map(money[1].of), [9.99, 1, 0]);
  const churn = chartColumns({ kind: "churn", title: "Churn" }, [{ voluntary: 2, involuntary: 1, other: 0 }]);
  assert.deepEqual(churn.map((column) => column.name), ["Voluntary", "Involuntary", "Other"]);
  const count = chartColumns({ kind: "count", title: "Refunds" }, [{ value: 3 }]);
  assert.deepEqual(count.map((column) => [column.name, column.of({ value: 3 })]), [["Refunds", 3]]);
  assert.equal(formatValue({ kind: "rate" }, 0.1234), "12.3 %");
  assert.equal(formatValue({ kind: "money" }, 9.5), "9.50");
  assert.equal(formatValue({ kind: "count" }, null), "—");
});

test("a server failure says its status, message and request id", () => {
  assert.equal(
    unavailableText({ status: 500, message: "internal error", requestId: "r-1" }),
    "Entitle answered HTTP 500: internal error. Request id: r-1.");
  assert.equal(unavailableText({ status: 503, message: "storage unavailable" }), "Entitle answered HTTP 503: storage unavailable.");
  assert.equal(unavailableText(new TypeError("Failed to fetch")), "Entitle did not answer (Failed to fetch).");
});

test("Charts open on the environment that has data", () => {
  const empty = { activeSubscriptions: 0, activeTrials: 0, mrr: {} };
  assert.equal(environmentWithData(["Production", "Sandbox"], [empty, { ...empty, activeTrials: 1 }]), "Sandbox");
  assert.equal(environmentWithData(["Production", "Sandbox"], [{ ...empty, mrr: { USD: 9.99 } }, empty]), "Production");
  assert.equal(environmentWithData(["Sandbox", "Production"], [empty, empty]), "Production", "nothing anywhere: Production");
  assert.equal(environmentWithData(["Sandbox", "Xcode"], [empty, empty]), "Sandbox", "else the deployment's first");
});

test("a payload's instants say when they are", () => {
  const shown = readablePayload({ purchaseDate: 1796646380510, price: 9990, nested: [{ expiresDate: 0 }], signedAt: "x" });
  assert.equal(shown.purchaseDate, "1796646380510 (2026-12-07 12:26:20 UTC)");
  assert.equal(shown.price, 9990, "not an instant");
  assert.equal(shown.nested[0].expiresDate, "0 (1970-01-01 00:00:00 UTC)");
  assert.equal(shown.signedAt, "x");
});

test("a revoked entitlement says when and why, not 'until'", () => {
  const subscriber = { subscriptions: { "pro.monthly": { revocationDate: "2026-11-24T10:00:00Z", revocationReason: 1 } } };
  assert.equal(revocationText({ state: "REVOKED", productId: "pro.monthly" }, subscriber),
    "revoked 2026-11-24 10:00:00 UTC: refunded for a problem in the app");
  const family = { subscriptions: { "pro.monthly": { revocationDate: "2026-11-24T10:00:00Z", revocationType: "FAMILY_REVOKE" } } };
  assert.equal(revocationText({ state: "REVOKED", productId: "pro.monthly" }, family), "revoked 2026-11-24 10:00:00 UTC: family sharing ended");
  assert.equal(revocationText({ state: "REVOKED", store: "promotional" }, {}), "revoked (when unknown): grant revoked by support");
  assert.equal(revocationText({ state: "ACTIVE", productId: "pro.monthly" }, subscriber), null);
});
