// Plain SVG line charts, no dependencies. KvCharts.line(container, spec) redraws the chart in
// container from spec = {title, unit, series: [{name, points: [[tMillis, value], ...]}],
// windowMs, now, format?}. Cost: O(points) per draw; the whole SVG is replaced each time.
"use strict";
const KvCharts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  const W = 420, H = 190, L = 52, R = 8, T = 20, B = 34;

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function defaultFormat(v) {
    const a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1e3) return (v / 1e3).toFixed(1) + "k";
    if (a >= 10) return v.toFixed(0);
    if (a >= 1) return v.toFixed(1);
    if (a >= 0.001) return v.toFixed(3);
    return v.toExponential(1);
  }

  function line(container, spec) {
    const fmt = spec.format || defaultFormat;
    const now = spec.now, from = now - spec.windowMs;
    let max = 0;
    for (const s of spec.series) for (const [t, v] of s.points) if (t >= from && Number.isFinite(v)) max = Math.max(max, v);
    if (spec.max !== undefined) max = Math.max(max, spec.max);
    if (max === 0) max = 1;
    const x = (t) => L + ((t - from) / spec.windowMs) * (W - L - R);
    const y = (v) => T + (1 - v / max) * (H - T - B);
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": spec.title });
    svg.appendChild(el("text", { x: 4, y: 13, class: "title" }, spec.title + (spec.unit ? ` (${spec.unit})` : "")));
    for (let i = 0; i <= 4; i++) {
      const v = (max * i) / 4;
      svg.appendChild(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
      svg.appendChild(el("text", { x: L - 4, y: y(v) + 3, "text-anchor": "end" }, fmt(v)));
    }
    svg.appendChild(el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }));
    svg.appendChild(el("text", { x: L, y: H - B + 12 }, `-${Math.round(spec.windowMs / 60000)} min`));
    svg.appendChild(el("text", { x: W - R, y: H - B + 12, "text-anchor": "end" }, "now"));
    let legendX = L;
    spec.series.forEach((s, i) => {
      const colour = COLOURS[i % COLOURS.length];
      const pts = s.points.filter(([t, v]) => t >= from && Number.isFinite(v));
      if (pts.length > 1) {
        const d = pts.map(([t, v], j) => `${j ? "L" : "M"}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join("");
        svg.appendChild(el("path", { d, fill: "none", stroke: colour, "stroke-width": 1.5, "data-series": s.name }));
      } else if (pts.length === 1) {
        svg.appendChild(el("circle", { cx: x(pts[0][0]), cy: y(pts[0][1]), r: 2, fill: colour, "data-series": s.name }));
      }
      const last = pts.length ? fmt(pts[pts.length - 1][1]) : "–";
      const label = el("text", { x: legendX + 12, y: H - 6 }, `${s.name} ${last}`);
      svg.appendChild(el("rect", { x: legendX, y: H - 14, width: 9, height: 9, fill: colour }));
      svg.appendChild(label);
      legendX += 16 + 6.2 * (s.name.length + last.length + 1);
    });
    if (!spec.series.length || spec.series.every((s) => !s.points.length)) {
      svg.appendChild(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, spec.empty || "no data yet"));
    }
    container.replaceChildren(svg);
  }

  return { line };
})();
