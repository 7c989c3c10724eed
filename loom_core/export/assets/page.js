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
  // the legend: the kinds and markers this run has, in the app's colours and words
  document.getElementById("legend").innerHTML =
    D.legend.kinds.map(([name, color]) => `<span><i style="background:${color}"></i>${esc(name)}</span>`).join("") +
    D.legend.marks.map(([, glyph, color, words]) => `<span><b style="color:${color}">${glyph}</b> ${esc(words)}</span>`).join("") +
    `<span>bar height: tokens</span>`;
  const MARK_ORDER = ["denied", "blocked", "error", "shield"];  // one sign per step, as in the app
  const markOf = (r) => {
    for (const name of MARK_ORDER) if (r[7].includes(name)) return D.legend.marks.find((m) => m[0] === name);
    return null;
  };

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
    let html = `<div class="hdr"><b>${esc(r[1])}</b>${label(r)}${r[3] ? " · agent " + esc(r[3]) : ""}${r[2] ? " · depth " + r[2] : ""}` +
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

  // The plot: a tokens axis on the left, step numbers (seqs) below, one column per pixel
  // (the largest step in it; exact when there is room), each step's marker above its bar.
  const LEFT = 52, RIGHT = 6, TOP = 16, BOTTOM = 18;
  const plotWidth = () => Math.max(1, canvas.clientWidth - LEFT - RIGHT);
  const tokens = (k) => k >= 10000 ? Math.round(k / 1000) + "k" : k.toLocaleString();

  function drawAxes(g, w, h) {
    g.fillStyle = "#78909c"; g.strokeStyle = "#cfd8dc"; g.font = "10px system-ui, sans-serif";
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const v of [0, peak / 2, peak]) {
      const y = h - BOTTOM - (h - BOTTOM - TOP) * v / peak;
      g.fillText(tokens(Math.round(v)), LEFT - 6, y);
      g.beginPath(); g.moveTo(LEFT, y + 0.5); g.lineTo(w - RIGHT, y + 0.5); g.stroke();
    }
    g.save(); g.translate(10, (h - BOTTOM + TOP) / 2); g.rotate(-Math.PI / 2);
    g.textAlign = "center"; g.fillText("tokens", 0, 0); g.restore();
    g.textAlign = "center"; g.textBaseline = "top";
    const every = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(plotWidth() / 48))));
    for (let s = 0; s < n; s += every) {  // a prompt row has no number: the next step's
      let t = s;
      while (t < n && rows[t][0] === null) t++;
      if (t < n && t < s + every) g.fillText(String(rows[t][0]), LEFT + (t + 0.5) * plotWidth() / n, h - BOTTOM + 3);
    }
  }

  function drawBars() {
    const w = canvas.clientWidth, h = canvas.clientHeight, dpr = window.devicePixelRatio || 1;
    canvas.width = w * dpr; canvas.height = h * dpr;
    const g = canvas.getContext("2d"); g.scale(dpr, dpr); g.clearRect(0, 0, w, h);
    if (!n) return;
    drawAxes(g, w, h);
    const pw = plotWidth(), cols = Math.max(1, Math.min(n, Math.floor(pw))), per = n / cols;
    const bw = pw / cols, base = h - BOTTOM, room = h - BOTTOM - TOP;
    g.textAlign = "center"; g.textBaseline = "bottom"; g.font = "11px system-ui, sans-serif";
    for (let c = 0; c < cols; c++) {
      let best = 0, kind = 0, mark = null;
      const from = Math.floor(c * per), to = Math.max(from + 1, Math.floor((c + 1) * per));
      for (let s = from; s < to && s < n; s++) {
        const t = D.bars[s][0] + D.bars[s][1];
        if (t >= best) { best = t; kind = D.bars[s][2]; }
        mark = mark || markOf(rows[s]);
      }
      g.fillStyle = D.legend.colors[kind] || "#90a4ae";
      const bh = best ? Math.max(2, room * best / peak) : 2, x = LEFT + c * bw;
      g.fillRect(x, base - bh, Math.max(1, bw - (bw > 3 ? 1 : 0)), bh);
      if (mark) { g.fillStyle = mark[2]; g.fillText(mark[1], x + bw / 2, base - bh - 1); }
    }
    if (current >= 0) { g.fillStyle = "#e53935"; g.fillRect(LEFT + (current / n) * pw, TOP, 2, room); }
  }

  list.addEventListener("scroll", drawList);
  list.addEventListener("click", (e) => { const el = e.target.closest(".row"); if (el) select(+el.dataset.i, false); });
  canvas.addEventListener("click", (e) => select(Math.floor((e.offsetX - LEFT) / plotWidth() * n), true));
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
