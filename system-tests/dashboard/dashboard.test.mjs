// Browser test of the kvrouter dashboard: Debian's headless Chromium driven by playwright-core.
// Never downloads a browser: it launches /usr/bin/chromium (or $CHROMIUM) with the flags this
// machine's closed network needs and a fresh user-data dir.
//
// Environment:
//   DASHBOARD_URL    ingress whose /dashboard is opened (required)
//   CONTROL_URL      ingress whose tracker is disturbed through /admin/debug/* (default DASHBOARD_URL)
//   EXPECT_TRACKERS  number of tracker rows expected (default 2)
//   EXPECT_REPLICAS  number of replica columns expected (default 4)
//   STEPS            comma list, in order, of: converged, lagging, diverged, accuracy (default converged,lagging,diverged)
//   DIVERGE_REPLICA  replica whose state is corrupted in the diverged step (default: first column)
//   MISMATCH_REPLICA replica the accuracy step expects flagged, and flagged unaligned (others must not be)
//   ARTIFACTS        where screenshots go (default ./artifacts)
//   TIMEOUT_MS       per wait (default 30000)
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = process.env;
const DASHBOARD_URL = required("DASHBOARD_URL");
const CONTROL_URL = env.CONTROL_URL || DASHBOARD_URL;
const TRACKERS = Number(env.EXPECT_TRACKERS || 2);
const REPLICAS = Number(env.EXPECT_REPLICAS || 4);
const STEPS = (env.STEPS || "converged,lagging,diverged").split(",").map((s) => s.trim()).filter(Boolean);
const ARTIFACTS = env.ARTIFACTS || "artifacts";
const TIMEOUT = Number(env.TIMEOUT_MS || 30000);
const CHROMIUM = env.CHROMIUM || "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

function required(name) {
  if (!env[name]) {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return env[name];
}

function log(msg) {
  console.log(`[dashboard-test] ${msg}`);
}

async function post(url) {
  const r = await fetch(url, { method: "POST" });
  if (!r.ok) throw new Error(`POST ${url}: HTTP ${r.status} ${await r.text()}`);
}

async function getJson(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status}`);
  return r.json();
}

/** What the matrix shows: {overall, cells: [{tracker, replica, state}], polls}. */
async function matrix(page) {
  return page.evaluate(() => ({
    overall: document.getElementById("overall").dataset.state,
    consistency: document.body.dataset.consistency || "",
    polls: Number(document.body.dataset.polls || 0),
    cells: [...document.querySelectorAll('#matrix-replicas td.cell[data-kind="replica"]')].map((c) => ({
      tracker: c.dataset.tracker, replica: c.dataset.replica, state: c.dataset.state })),
    origins: [...document.querySelectorAll('#matrix-origins td.cell[data-kind="origin"]')].map((c) => ({
      tracker: c.dataset.tracker, origin: c.dataset.origin, state: c.dataset.state })),
    accuracy: Object.fromEntries([...document.querySelectorAll("#replicas tr[data-replica]")].map((tr) =>
      [tr.dataset.replica, tr.querySelector("td.accuracy").dataset.accuracy])),
    alignment: Object.fromEntries([...document.querySelectorAll("#replicas tr[data-replica]")].map((tr) =>
      [tr.dataset.replica, tr.querySelector("td.alignment").dataset.alignment])),
    accuracyAlert: document.getElementById("accuracy-alert").hidden ? "" : document.getElementById("accuracy-alert").textContent,
    errors: document.getElementById("errors").textContent,
  }));
}

/** Polls the page until check(view) returns true; fails with the last view after TIMEOUT. */
async function until(page, what, check) {
  const deadline = Date.now() + TIMEOUT;
  let view;
  for (;;) {
    view = await matrix(page);
    if (check(view)) {
      log(`ok: ${what}`);
      return view;
    }
    if (Date.now() > deadline) {
      await shot(page, "failed");
      throw new Error(`timed out waiting for: ${what}\nlast view: ${JSON.stringify(view, null, 1)}`);
    }
    await page.waitForTimeout(250); // polling the rendered page, bounded by the deadline
  }
}

async function shot(page, name) {
  const file = join(ARTIFACTS, `dashboard-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  log(`screenshot ${file}`);
}

const allConverged = (v) =>
  v.consistency === "ok" && v.overall === "converged" && v.polls >= 3 &&
  v.cells.length === TRACKERS * REPLICAS && new Set(v.cells.map((c) => c.tracker)).size === TRACKERS &&
  v.cells.every((c) => c.state === "converged") && v.origins.every((c) => c.state === "converged");

async function main() {
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "kvrouter-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1600, height: 1200 } });
  const pageErrors = [];
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(DASHBOARD_URL + "/dashboard");
    const controlled = (await getJson(CONTROL_URL + "/dashboard/cluster.json")).self;
    log(`page ${DASHBOARD_URL}/dashboard; disturbed tracker ${controlled}`);
    for (const step of STEPS) {
      if (step === "converged") {
        await until(page, `every one of ${TRACKERS} x ${REPLICAS} cells converged`, allConverged);
        const charted = await page.evaluate(() => document.querySelectorAll("#chart-decisions path, #chart-inflight path").length);
        if (charted === 0) throw new Error("live charts drew no lines");
        await shot(page, "converged");
      } else if (step === "lagging") {
        await post(CONTROL_URL + "/admin/debug/pause-events");
        try {
          await until(page, `tracker ${controlled} shown lagging`, (v) =>
            v.overall === "lagging" && v.cells.some((c) => c.tracker === controlled && c.state === "lagging") &&
            v.cells.every((c) => c.state !== "diverged"));
          await shot(page, "lagging");
        } finally {
          await post(CONTROL_URL + "/admin/debug/resume-events");
        }
        await until(page, "converged again after resume", allConverged);
      } else if (step === "diverged") {
        const view = await matrix(page);
        const replica = env.DIVERGE_REPLICA || view.cells[0].replica;
        await post(`${CONTROL_URL}/admin/debug/diverge?replica=${encodeURIComponent(replica)}`);
        await until(page, `cell ${controlled} x ${replica} shown diverged`, (v) =>
          v.overall === "diverged" &&
          v.cells.some((c) => c.tracker === controlled && c.replica === replica && c.state === "diverged"));
        await shot(page, "diverged");
      } else if (step === "accuracy") {
        const bad = required("MISMATCH_REPLICA");
        await until(page, `replica ${bad} flagged for index accuracy, no other replica flagged`, (v) =>
          v.accuracy[bad] === "mismatch" && v.accuracyAlert.includes(bad) &&
          Object.entries(v.accuracy).every(([r, s]) => r === bad || s !== "mismatch") &&
          Object.values(v.accuracy).filter((s) => s === "ok").length >= 1);
        await until(page, `replica ${bad} flagged unaligned by its agent's probe, no other replica`, (v) =>
          v.alignment[bad] === "unaligned" &&
          Object.entries(v.alignment).every(([r, s]) => r === bad || s !== "unaligned"));
        await shot(page, "accuracy");
      } else {
        throw new Error(`unknown step ${step}`);
      }
    }
    if (pageErrors.length) throw new Error("page errors: " + pageErrors.join("; "));
    log(`PASS ${STEPS.join(",")}`);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`[dashboard-test] FAIL ${e.stack || e}`);
  process.exit(1);
});
