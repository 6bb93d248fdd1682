// Unit tests of the dashboard's Prometheus text parsing (ingress/src/main/resources/dashboard/prom.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const KvProm = require("../../ingress/src/main/resources/dashboard/prom.js");

const before = `# HELP kvrouter_decision_seconds x
# TYPE kvrouter_decision_seconds histogram
kvrouter_decision_seconds_bucket{le="0.001"} 10
kvrouter_decision_seconds_bucket{le="0.01"} 10
kvrouter_decision_seconds_bucket{le="+Inf"} 10
kvrouter_decision_seconds_count 10
kvrouter_requests_total{model="m",status="200"} 5.0
kvrouter_requests_total{model="m",status="503"} 1.0
kvrouter_prediction_mismatch_alert{replica="sim-1"} 1.0
odd_total{path="a \\"quoted\\" \\\\ value"} 2
`;
const after = before
  .replace('le="0.01"} 10', 'le="0.01"} 110')
  .replace('le="+Inf"} 10', 'le="+Inf"} 110');

test("parses names, labels with escapes and values", () => {
  const s = KvProm.parse(before);
  assert.equal(KvProm.sum(s, "kvrouter_requests_total"), 6);
  assert.equal(KvProm.sum(s, "kvrouter_requests_total", { status: "503" }), 1);
  assert.equal(KvProm.sum(s, "missing_total"), null);
  assert.deepEqual(KvProm.byLabel(s, "kvrouter_requests_total", "status"), { 200: 5, 503: 1 });
  assert.equal(KvProm.sum(s, "odd_total", { path: 'a "quoted" \\ value' }), 2);
  assert.equal(KvProm.sum(s, "kvrouter_prediction_mismatch_alert", { replica: "sim-1" }), 1);
});

test("quantile between two scrapes interpolates inside the bucket that holds the rank", () => {
  const a = KvProm.parse(before), b = KvProm.parse(after);
  // 100 new observations, all in (0.001, 0.01]: the median is halfway through that bucket.
  assert.ok(Math.abs(KvProm.quantileBetween(a, b, "kvrouter_decision_seconds", 0.5) - 0.0055) < 1e-9);
  assert.equal(KvProm.quantileBetween(a, a, "kvrouter_decision_seconds", 0.5), null);
});
