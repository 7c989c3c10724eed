// Loom Desktop's exported run page: a virtual step list, a token timeline and the context of
// the selected step, drawn from the JSON in #loom-data. No network, no libraries.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("loom-data").textContent);
  const ROW = 22, MAX_MESSAGES = 60;
  const rows = D.rows, details = D.details, n = rows.length;
  const list = document.getElementById("list"), pad = document.getElementById("pad");
  const detail = document.getElementById("detail"), canvas = document.getElementById("bars");
  let current = -1;

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  const kindClass = (k) => k === "model" ? "k-model" : k.startsWith("tool:") ? "k-tool" : k === "prompt" ? "k-user" : "k-other";
  const label = (r) => r[0] === null ? "" : " · step " + r[0];

  document.getElementById("title").textContent = D.source.path.split(/[\\/]/).pop();
  document.getElementById("totals").textContent = `${D.source.format} · ${D.source.model} · ${D.totals.steps.toLocaleString()} steps · ` +
    `${D.totals.tokens_in.toLocaleString()} in / ${D.totals.tokens_out.toLocaleString()} out tokens · ${D.totals.cost}`;
  pad.style.height = (n * ROW) + "px";

  function rowHtml(i) {
    const r = rows[i];
    const bad = r[7].length ? `<span class="bad">${esc(r[7].join(" "))}</span> ` : "";
    const shield = r[8].length ? " " + esc(r[8].join(" · ")) : "";
    const tok = r[5] ? ` [${r[5].toLocaleString()} tok ${esc(r[6])}]` : "";
    return `<div class="row${i === current ? " sel" : ""}" data-i="${i}" style="top:${i * ROW}px">` +
      `<span class="seq">${r[0] === null ? "" : r[0]}</span>${"&nbsp;&nbsp;".repeat(r[2])}` +
      `<span class="${kindClass(r[1])}">${esc(r[1])}</span> ${bad}${esc(r[4])}${tok}${shield}</div>`;
  }

  function drawList() {  // only the rows in view (and a margin) exist in the DOM
    const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 10);
    const last = Math.min(n, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 10);
    let html = "";
    for (let i = first; i < last; i++) html += rowHtml(i);
    pad.innerHTML = html;
  }

  // A call's context is a chain: each link keeps the first `keep` messages of the previous
  // call's and adds `new`. Lengths come from the chain; only the messages shown are looked up,
  // so a late step of a long run costs its chain's length, not the sum of every context.
  function contextOf(step) {
    const chain = [];
    for (let s = step, guard = 0; s >= 0 && guard < 1e7; guard++) {
      const c = details[s].context;
      if (!c) break;
      chain.push(c);
      s = c.keep ? c.prev : -1;
    }
    const top = chain[0], total = top ? top.keep + top.new.length : 0;
    const at = (i) => {  // message i of the newest link, found in the link that added it
      for (const c of chain) if (i >= c.keep) return c.new[i - c.keep];
      return ["?", "", []];  // the oldest link keeps nothing, so this is never reached
    };
    return { total, fresh: top ? top.keep : 0, at, recorded: top && top.recorded };
  }

  function messageHtml(m, isNew) {
    const calls = m[2].map((c) => `<pre>→ ${esc(c)}</pre>`).join("");
    return `<div class="msg${isNew ? " new" : ""}"><span class="role">${esc(m[0])}</span>` +
      `${isNew ? '<span class="tag">NEW</span>' : ""}${m[1] ? `<pre>${esc(m[1])}</pre>` : ""}${calls}</div>`;
  }

  function contextHtml(step) {
    const d = details[step];
    if (!d.context) return `<div class="sec">Messages the model saw</div><div class="hdr">Not recorded.</div>`;
    const c = contextOf(step), total = c.total, start = Math.max(0, Math.min(c.fresh, total - MAX_MESSAGES));
    let html = `<div class="sec">Messages the model ${c.recorded ? "was sent (as recorded)" : "saw"} (${total}; ${total - c.fresh} new)</div>`;
    if (start) html += `<div class="hdr">… ${start.toLocaleString()} earlier messages not shown</div>`;
    for (let k = start; k < total; k++) html += messageHtml(c.at(k), k >= c.fresh);
    return html;
  }

  function detailHtml(step) {
    const r = rows[step], d = details[step];
    let html = `<div class="hdr"><b>${esc(r[1])}</b>${label(r)} · agent ${esc(r[3])}${r[2] ? " · depth " + r[2] : ""}` +
      `${r[5] ? ` · ${r[5].toLocaleString()} tokens · ${esc(r[6])}` : ""}</div>`;
    if (r[7].length) html += `<div class="err">${esc(r[7].join(" "))}</div>`;
    if (r[1] === "prompt") return html + `<div class="sec">User</div><pre>${esc(d.text)}</pre>`;
    if (r[1] === "model") {
      if (step === firstModel && D.system) html += `<div class="sec">System prompt</div><pre>${esc(D.system)}</pre>`;
      html += contextHtml(step) + `<div class="sec">Response</div>`;
      if (d.text) html += `<pre>${esc(d.text)}</pre>`;
      html += d.calls.map((c) => `<pre>→ ${esc(c)}</pre>`).join("") + `<div class="hdr">stop_reason: ${esc(d.stop)}</div>`;
    } else {
      html += `<div class="sec">Result</div><pre>${esc(d.result)}</pre>`;
    }
    for (const s of r[8]) html += `<div class="hdr">shield: ${esc(s)}</div>`;
    return html;
  }
  const firstModel = rows.findIndex((r) => r[1] === "model");
  const peak = D.bars.reduce((m, b) => Math.max(m, b[0] + b[1]), 1);

  function select(step, scroll) {
    if (n === 0) return;
    current = Math.max(0, Math.min(n - 1, step));
    detail.innerHTML = detailHtml(current);
    const fresh = detail.querySelector(".msg.new");  // as in the app: show what is new
    detail.scrollTop = fresh ? Math.max(0, fresh.offsetTop - detail.offsetTop - 60) : 0;
    if (scroll) {
      const top = current * ROW;
      if (top < list.scrollTop || top + ROW > list.scrollTop + list.clientHeight) list.scrollTop = top - list.clientHeight / 2;
    }
    drawList();
    drawBars();
    if (rows[current][0] !== null) history.replaceState(null, "", "#step=" + rows[current][0]);
    document.body.dataset.step = String(current);
  }

  function drawBars() {  // one column per pixel: the largest step in it (exact when zoomed in)
    const w = canvas.clientWidth, h = canvas.clientHeight, dpr = window.devicePixelRatio || 1;
    canvas.width = w * dpr; canvas.height = h * dpr;
    const g = canvas.getContext("2d"); g.scale(dpr, dpr); g.clearRect(0, 0, w, h);
    if (!n) return;
    const cols = Math.max(1, Math.min(n, Math.floor(w))), per = n / cols;
    const colors = ["#7e57c2", "#1e88e5", "#43a047", "#6d4c41"], bw = w / cols;
    for (let c = 0; c < cols; c++) {
      let best = 0, kind = 0;
      const from = Math.floor(c * per), to = Math.max(from + 1, Math.floor((c + 1) * per));
      for (let s = from; s < to && s < n; s++) {
        const t = D.bars[s][0] + D.bars[s][1];
        if (t >= best) { best = t; kind = D.bars[s][2]; }
      }
      g.fillStyle = colors[kind] || "#90a4ae";
      const bh = best ? Math.max(2, (h - 4) * best / peak) : 2;
      g.fillRect(c * bw, h - bh, Math.max(1, bw - (bw > 3 ? 1 : 0)), bh);
    }
    if (current >= 0) { g.fillStyle = "#e53935"; g.fillRect((current / n) * w, 0, 2, h); }
  }

  list.addEventListener("scroll", drawList);
  list.addEventListener("click", (e) => { const el = e.target.closest(".row"); if (el) select(+el.dataset.i, false); });
  canvas.addEventListener("click", (e) => select(Math.floor(e.offsetX / canvas.clientWidth * n), true));
  detail.addEventListener("click", (e) => { const a = e.target.closest("a[data-step]"); if (a) select(+a.dataset.step, true); });
  document.addEventListener("keydown", (e) => {
    const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: 20, PageUp: -20 };
    if (e.key in moves) { select(current + moves[e.key], true); e.preventDefault(); }
    else if (e.key === "Home") { select(0, true); e.preventDefault(); }
    else if (e.key === "End") { select(n - 1, true); e.preventDefault(); }
  });
  window.addEventListener("resize", () => { drawList(); drawBars(); });
  const asked = /#step=(\d+)/.exec(location.hash);  // a step's number is its seq, as in the app
  const row = asked ? rows.findIndex((r) => r[0] === +asked[1]) : 0;
  select(row < 0 ? 0 : row, true);
  document.body.dataset.ready = "1";
})();
