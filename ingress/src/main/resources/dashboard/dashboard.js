// The dashboard's live loop: every REFRESH_MS it reads /admin/consistency, /admin/replicas,
// /metrics and /dashboard/cluster.json from the ingress that served the page, renders the
// tables and the consistency matrices, and keeps the last WINDOW_MS of derived series in memory
// for the charts. Stable hooks for tests: #overall[data-state], td.cell[data-kind][data-tracker]
// [data-replica|data-origin][data-state], tr[data-replica] td.accuracy[data-accuracy],
// body[data-polls] (number of completed polls) and body[data-consistency] (ok|missing|error).
"use strict";
(() => {
  const REFRESH_MS = 1000;
  const WINDOW_MS = 5 * 60 * 1000;
  const series = new Map(); // key -> [[t, v]]
  let prev = null; // {t, scrape}
  let polls = 0;
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const $ = (id) => document.getElementById(id);

  async function fetchText(path) {
    const r = await fetch(path, { headers, cache: "no-store" });
    if (!r.ok) {
      const e = new Error(`${path}: HTTP ${r.status}`);
      e.status = r.status;
      throw e;
    }
    return r.text();
  }

  function push(key, t, v) {
    if (v === null || v === undefined || !Number.isFinite(v)) return;
    if (!series.has(key)) series.set(key, []);
    const list = series.get(key);
    list.push([t, v]);
    while (list.length && list[0][0] < t - WINDOW_MS) list.shift();
  }

  function pointsOf(key) {
    return series.get(key) || [];
  }

  function seriesWithPrefix(prefix) {
    return [...series.keys()].filter((k) => k.startsWith(prefix)).sort()
      .map((k) => ({ name: k.slice(prefix.length), points: series.get(k) }));
  }

  function td(text, attrs) {
    const cell = document.createElement("td");
    cell.textContent = text;
    for (const k in attrs || {}) cell.setAttribute(k, attrs[k]);
    return cell;
  }

  function short(address) {
    return String(address).replace(/^pekko:\/\/[^@]*@/, "");
  }

  // ---- cluster and replicas ----

  function renderMembers(cluster) {
    const body = $("members").tBodies[0];
    body.replaceChildren();
    if (cluster.self) $("self").textContent = cluster.self;
    for (const m of cluster.members || []) {
      const tr = document.createElement("tr");
      tr.dataset.address = m.address;
      tr.dataset.status = m.status;
      tr.append(td(short(m.address) + (m.self ? " (this node)" : "")), td((m.roles || []).join(", ")),
        td(m.status, { "data-state": m.status === "Up" ? "converged" : "lagging" }),
        td(m.reachable ? "yes" : "no", { "data-state": m.reachable ? "converged" : "diverged" }));
      body.appendChild(tr);
    }
  }

  function accuracyOf(replica, scrape) {
    if (!scrape) return { state: "unknown" };
    const alert = KvProm.sum(scrape, "kvrouter_prediction_mismatch_alert", { replica });
    const ratio = KvProm.sum(scrape, "kvrouter_prediction_mismatch_ratio", { replica });
    const count = KvProm.sum(scrape, "kvrouter_prediction_error_tokens_count", { replica });
    const total = KvProm.sum(scrape, "kvrouter_prediction_error_tokens_sum", { replica });
    if (alert === null) return { state: "unknown", count };
    return { state: alert > 0 ? "mismatch" : "ok", ratio, mean: count ? total / count : null, count };
  }

  // Converged (trackers agree with each other) and accurate (they agree with the engine, from every
  // ingress's predictions) are two things: /admin/consistency's per_replica cell, side by side.
  function agreementCells(r, perReplica) {
    const cell = perReplica ? perReplica[r.replica] : undefined;
    if (!cell) return [td("–", { "data-converged": "unknown" }), td("–", { "data-accurate": "unknown" })];
    const acc = cell.accurate === null || cell.accurate === undefined ? "unknown" : cell.accurate ? "yes" : "no";
    return [
      td(cell.converged ? "yes" : "no", { "data-converged": String(cell.converged), "data-state": cell.converged ? "converged" : "lagging", id: "converged-" + r.replica }),
      td(acc === "unknown" ? "no data" : acc, { "data-accurate": acc, "data-state": acc === "no" ? "diverged" : acc === "yes" ? "converged" : "unknown", id: "accurate-" + r.replica }),
    ];
  }

  // Which engine serves the replica (kind and version; hash algorithm and block size on hover).
  function engineCell(r) {
    const e = r.engine || {};
    const title = `hash algo ${e.hash_algo || "unknown"}, engine block size ${e.block_size ?? "unknown"}`
      + (r.keys ? `; router keys: block size ${r.keys.block_size}, extras ${(r.keys.extras || []).join(", ")}` : "");
    return td(`${e.kind || "unknown"} ${e.version || "unknown"}`, { class: "engine", title, id: "engine-" + r.replica });
  }

  // The agent's alignment verdict: an unaligned replica is flagged (routed by load alone), with why.
  function alignmentCell(r) {
    const a = r.alignment || { state: "unchecked", reason: "" };
    const label = a.state === "unaligned" ? "UNALIGNED" : a.state;
    const state = a.state === "unaligned" ? "diverged" : a.state === "aligned" ? "converged" : "unknown";
    return td(label, { class: "alignment", "data-alignment": a.state, "data-state": state, title: a.reason || "", id: "alignment-" + r.replica });
  }

  function renderReplicas(replicas, scrape, perReplica) {
    const body = $("replicas").tBodies[0];
    body.replaceChildren();
    const flagged = [];
    for (const r of replicas) {
      const a = accuracyOf(r.replica, scrape);
      const tr = document.createElement("tr");
      tr.dataset.replica = r.replica;
      const label = { ok: "ok", mismatch: "MISMATCH", unknown: "no data" }[a.state];
      if (a.state === "mismatch") flagged.push(r.replica);
      tr.append(td(r.replica), ...agreementCells(r, perReplica),
        td(label, { class: "accuracy", "data-accuracy": a.state, id: "accuracy-" + r.replica }),
        td(a.ratio === null || a.ratio === undefined ? "–" : (100 * a.ratio).toFixed(0) + "%"),
        td(a.mean === null || a.mean === undefined ? "–" : a.mean.toFixed(1) + " tok"),
        td(r.block_size), td(r.kv_events), td(r.blocks),
        td(`${r.epoch}:${r.seq}`), td(r.in_flight), td(`${r.waiting} / ${r.running}`),
        td(r.kv_usage === undefined ? "" : (100 * r.kv_usage).toFixed(1) + "%"), td(r.model), td(r.url),
        engineCell(r), alignmentCell(r),
        td(r.role || "both", { class: "role" }),
        td(r.dp_size > 1 ? `${r.dp_rank} of ${r.dp_size}` : "–", { class: "dp-rank" }));
      body.appendChild(tr);
    }
    const alert = $("accuracy-alert");
    alert.hidden = flagged.length === 0;
    alert.textContent = flagged.length ? "index mismatch: " + flagged.join(", ") : "";
  }

  // ---- consistency ----

  function cellState(tracker, entry) {
    if (!tracker.reachable || !entry) return "unknown";
    return entry.state || "unknown";
  }

  function renderMatrix(table, kind, columns, trackers, pick, self) {
    const head = document.createElement("tr");
    head.append(document.createElement("th"));
    for (const c of columns) {
      const th = document.createElement("th");
      th.textContent = kind === "origin" ? short(c) : c;
      head.appendChild(th);
    }
    table.tHead.replaceChildren(head);
    const body = table.tBodies[0];
    body.replaceChildren();
    for (const t of trackers) {
      const tr = document.createElement("tr");
      tr.dataset.tracker = t.ingress;
      const th = document.createElement("th");
      th.textContent = short(t.ingress) + (t.ingress === self ? " (this node)" : "") + (t.reachable ? "" : " — unreachable");
      tr.appendChild(th);
      for (const c of columns) {
        const entry = (pick(t) || {})[c];
        const state = cellState(t, entry);
        const cell = document.createElement("td");
        cell.className = "cell";
        cell.dataset.kind = kind;
        cell.dataset.tracker = t.ingress;
        cell.dataset[kind] = c;
        cell.dataset.state = state;
        if (entry) {
          const wm = kind === "replica" ? `e${entry.epoch}:${entry.seq}` : `seq ${entry.seq}`;
          const size = kind === "replica" ? `${entry.blocks} blocks` : `${entry.count} reservations`;
          const lag = entry.lag_seq ? ` (−${entry.lag_seq})` : "";
          cell.title = `${state}: ${wm}, ${size}, digest ${entry.digest}`;
          for (const line of [wm + lag, size, "#" + String(entry.digest || "").slice(0, 8), state]) {
            const span = document.createElement("span");
            span.textContent = line;
            cell.appendChild(span);
          }
        } else {
          cell.textContent = "—";
        }
        tr.appendChild(cell);
      }
      body.appendChild(tr);
    }
  }

  function renderConsistency(c, self, t) {
    const overall = c.diverged ? "diverged" : c.lagging ? "lagging" : c.converged ? "converged" : "unknown";
    const badge = $("overall");
    badge.dataset.state = overall;
    badge.textContent = { converged: "all trackers agree", lagging: "a tracker is lagging", diverged: "DIVERGED", unknown: "unknown" }[overall];
    const trackers = c.trackers || [];
    renderMatrix($("matrix-replicas"), "replica", c.replicas || [], trackers, (x) => x.replicas, self);
    renderMatrix($("matrix-origins"), "origin", c.origins || [], trackers, (x) => x.origins, self);
    for (const tr of trackers) {
      let lag = 0;
      for (const v of Object.values(tr.replicas || {})) lag += v.lag_seq || 0;
      for (const v of Object.values(tr.origins || {})) lag += v.lag_seq || 0;
      push("lagseq:" + short(tr.ingress), t, lag);
    }
    $("consistency-note").textContent = `${trackers.length} trackers, ${(c.replicas || []).length} replicas, ${(c.origins || []).length} origins`;
  }

  // ---- metrics-derived series ----

  function rate(cur, name, dt, filter) {
    const a = KvProm.sum(prev.scrape, name, filter), b = KvProm.sum(cur, name, filter);
    if (a === null || b === null || b < a) return null;
    return (b - a) / dt;
  }

  function meanBetween(cur, base, filter) {
    const ds = rate(cur, base + "_sum", 1, filter), dc = rate(cur, base + "_count", 1, filter);
    return dc ? ds / dc : null;
  }

  function recordMetrics(scrape, t) {
    if (prev) {
      const dt = (t - prev.t) / 1000;
      for (const [base, key, scale] of [["kvrouter_event_lag_seconds", "eventlag", 1000],
        ["kvrouter_reservation_propagation_seconds", "propagation", 1000],
        ["kvrouter_decision_seconds", "latency", 1000]]) {
        const p50 = KvProm.quantileBetween(prev.scrape, scrape, base, 0.5);
        const p99 = KvProm.quantileBetween(prev.scrape, scrape, base, 0.99);
        const mean = meanBetween(scrape, base);
        push(key + ":p50", t, p50 === null ? null : p50 * scale);
        push(key + ":p99", t, p99 === null ? null : p99 * scale);
        push(key + ":mean", t, mean === null ? null : mean * scale);
      }
      for (const [name, label] of [["kvrouter_event_gaps_total", "gaps"], ["kvrouter_replays_total", "replays"],
        ["kvrouter_snapshots_total", "snapshots"], ["kvrouter_digest_mismatches_total", "digest mismatches"]]) {
        push("plane:" + label, t, rate(scrape, name, dt));
      }
      const prompt = rate(scrape, "kvrouter_prompt_tokens_total", dt);
      const predicted = rate(scrape, "kvrouter_predicted_cached_tokens_total", dt);
      const engine = rate(scrape, "kvrouter_engine_cached_tokens_total", dt);
      push("cached:predicted", t, predicted);
      push("cached:engine-reported", t, engine);
      if (prompt) {
        push("hit:predicted", t, predicted / prompt);
        push("hit:engine-reported", t, engine / prompt);
      }
      push("decisions:decisions/s", t, rate(scrape, "kvrouter_decision_seconds_count", dt));
      push("decisions:retries/s", t, rate(scrape, "kvrouter_retries_total", dt));
      push("decisions:rejected/s", t, rate(scrape, "kvrouter_rejected_total", dt));
      for (const replica of Object.keys(KvProm.byLabel(scrape, "kvrouter_prediction_error_tokens_count", "replica"))) {
        push("error:" + replica, t, meanBetween(scrape, "kvrouter_prediction_error_tokens", { replica }));
      }
    }
    prev = { t, scrape };
  }

  function recordLoad(replicas, t) {
    for (const r of replicas) {
      push("inflight:" + r.replica, t, r.in_flight);
      push("prefill:" + r.replica, t, r.prefill_tokens);
      push("decode:" + r.replica, t, r.decode_tokens);
      push("kv:" + r.replica, t, r.kv_usage === undefined ? null : 100 * r.kv_usage);
    }
  }

  function drawCharts(t) {
    const pct = (v) => v.toFixed(0) + "%";
    const ratio = (v) => (100 * v).toFixed(0) + "%";
    const charts = [
      ["chart-event-lag", "KV event lag", "ms", seriesWithPrefix("eventlag:")],
      ["chart-propagation", "Reservation propagation", "ms", seriesWithPrefix("propagation:")],
      ["chart-lag-seq", "Tracker lag behind the others", "events", seriesWithPrefix("lagseq:")],
      ["chart-plane", "Gaps, replays, snapshots, digest mismatches", "per s", seriesWithPrefix("plane:")],
      ["chart-cached", "Cached prompt tokens: predicted vs engine-reported", "tokens/s", seriesWithPrefix("cached:")],
      ["chart-hit-rate", "Hit rate", "", seriesWithPrefix("hit:"), ratio, 1],
      ["chart-error", "Mean |predicted − reported| per replica", "tokens", seriesWithPrefix("error:")],
      ["chart-decisions", "Decisions", "per s", seriesWithPrefix("decisions:")],
      ["chart-latency", "Decision latency", "ms", seriesWithPrefix("latency:")],
      ["chart-inflight", "In flight", "requests", seriesWithPrefix("inflight:")],
      ["chart-prefill", "Prefill tokens", "tokens", seriesWithPrefix("prefill:")],
      ["chart-decode", "Decode tokens", "tokens", seriesWithPrefix("decode:")],
      ["chart-kv", "KV cache usage", "%", seriesWithPrefix("kv:"), pct, 100],
    ];
    for (const [id, title, unit, s, format, max] of charts) {
      const container = $(id);
      if (container) KvCharts.line(container, { title, unit, series: s, windowMs: WINDOW_MS, now: t, format, max });
    }
  }

  // ---- the loop ----

  async function poll() {
    const [consistency, replicas, metrics, cluster] = await Promise.allSettled([
      fetchText("/admin/consistency").then(JSON.parse),
      fetchText("/admin/replicas").then(JSON.parse),
      fetchText("/metrics").then(KvProm.parse),
      fetchText("/dashboard/cluster.json").then(JSON.parse),
    ]);
    const t = Date.now();
    const errors = [];
    const scrape = metrics.status === "fulfilled" ? metrics.value : null;
    if (scrape) recordMetrics(scrape, t); else errors.push(metrics.reason.message);
    let self = null;
    if (cluster.status === "fulfilled") {
      self = cluster.value.self || null;
      renderMembers(cluster.value);
    } else errors.push(cluster.reason.message);
    if (replicas.status === "fulfilled") {
      recordLoad(replicas.value, t);
      renderReplicas(replicas.value, scrape, consistency.status === "fulfilled" ? consistency.value.per_replica : undefined);
    } else errors.push(replicas.reason.message);
    if (consistency.status === "fulfilled") {
      document.body.dataset.consistency = "ok";
      renderConsistency(consistency.value, self, t);
    } else {
      const missing = consistency.reason.status === 404;
      document.body.dataset.consistency = missing ? "missing" : "error";
      errors.push(missing ? "/admin/consistency is not served by this ingress (tracker consistency layer missing)" : consistency.reason.message);
    }
    drawCharts(t);
    $("errors").textContent = errors.join(" · ");
    $("updated").textContent = new Date(t).toLocaleTimeString();
    polls++;
    document.body.dataset.polls = String(polls);
  }

  async function loop() {
    if (!$("paused").checked) {
      try {
        await poll();
      } catch (e) {
        $("errors").textContent = "dashboard error: " + e;
      }
    }
    setTimeout(loop, REFRESH_MS);
  }

  loop();
})();
