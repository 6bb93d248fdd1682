// Prometheus text exposition parsing and the few computations the dashboard needs on it.
// Contract: KvProm.parse(text) returns {samples: Map<name, [{labels, value}]>}; every helper
// takes such a parsed scrape. Cost: O(lines) to parse, O(samples of one name) per query.
"use strict";
const KvProm = (() => {
  const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

  function unescape(v) {
    return v.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }

  function parseValue(s) {
    if (s === "+Inf") return Infinity;
    if (s === "-Inf") return -Infinity;
    return Number(s);
  }

  function parse(text) {
    const samples = new Map();
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (!line || line.startsWith("#")) continue;
      let name, labels = {}, rest;
      const brace = line.indexOf("{");
      const space = line.indexOf(" ");
      if (brace >= 0 && (space < 0 || brace < space)) {
        name = line.slice(0, brace);
        const close = line.lastIndexOf("}");
        const body = line.slice(brace + 1, close);
        for (const m of body.matchAll(LABEL)) labels[m[1]] = unescape(m[2]);
        rest = line.slice(close + 1).trim();
      } else {
        name = line.slice(0, space);
        rest = line.slice(space + 1).trim();
      }
      const value = parseValue(rest.split(/\s+/)[0]);
      if (!samples.has(name)) samples.set(name, []);
      samples.get(name).push({ labels, value });
    }
    return { samples };
  }

  function matches(labels, filter) {
    for (const k in filter || {}) if (labels[k] !== filter[k]) return false;
    return true;
  }

  /** Sum of every sample of a name whose labels match filter; null when the name is absent. */
  function sum(scrape, name, filter) {
    const list = scrape.samples.get(name);
    if (!list) return null;
    let total = 0;
    for (const s of list) if (matches(s.labels, filter) && Number.isFinite(s.value)) total += s.value;
    return total;
  }

  /** {labelValue: summed value} over a name's samples, grouped by one label. */
  function byLabel(scrape, name, label) {
    const out = {};
    for (const s of scrape.samples.get(name) || []) {
      const key = s.labels[label];
      if (key === undefined) continue;
      out[key] = (out[key] || 0) + s.value;
    }
    return out;
  }

  /** Cumulative histogram buckets of base name (…_bucket) as sorted [[le, count]]. */
  function buckets(scrape, base, filter) {
    const acc = new Map();
    for (const s of scrape.samples.get(base + "_bucket") || []) {
      if (!matches(s.labels, filter)) continue;
      const le = parseValue(s.labels.le);
      acc.set(le, (acc.get(le) || 0) + s.value);
    }
    return [...acc.entries()].sort((a, b) => a[0] - b[0]);
  }

  /**
   * The q-quantile of the observations between two scrapes of a histogram, by linear
   * interpolation inside the bucket (as PromQL's histogram_quantile). Null without observations.
   */
  function quantileBetween(prev, cur, base, q, filter) {
    const a = new Map(buckets(prev, base, filter));
    const b = buckets(cur, base, filter);
    if (!b.length) return null;
    const deltas = b.map(([le, c]) => [le, Math.max(0, c - (a.get(le) || 0))]);
    const total = deltas[deltas.length - 1][1];
    if (total <= 0) return null;
    const rank = q * total;
    let lower = 0, below = 0;
    for (const [le, c] of deltas) {
      if (c >= rank) {
        if (!Number.isFinite(le)) return lower;
        const inBucket = c - below;
        return inBucket <= 0 ? le : lower + (le - lower) * ((rank - below) / inBucket);
      }
      lower = Number.isFinite(le) ? le : lower;
      below = c;
    }
    return lower;
  }

  return { parse, sum, byLabel, buckets, quantileBetween };
})();
if (typeof module !== "undefined") module.exports = KvProm;
