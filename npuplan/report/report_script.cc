// The report page's script (see report_script.h), kept as JavaScript in a raw
// string: edit it here; the browser test (tests/browser_report.sh) runs it.
#include "npuplan/report/report_script.h"

namespace npuplan::report {

std::string_view ReportScript() {
  // Over 150 lines by design: the body is one data literal (the page's script), not logic.
  static constexpr char kScript[] = R"js('use strict';
// npuplan report: draws the stream timeline and the memory chart from the
// page's JSON data (npuplan/report/report_data.h). No network, no library.
(function () {
  const started = performance.now();
  const root = document.documentElement;
  window.addEventListener('error', function (e) { root.setAttribute('data-error', String(e.message)); });
  const D = JSON.parse(document.getElementById('report-data').textContent);
  const $ = function (id) { return document.getElementById(id); };
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#76b7b2', '#ff9da7', '#9c755f',
    '#e15759', '#8cd17d', '#499894', '#d37295', '#fabfd2', '#b6992d', '#86bcb6', '#d4a6c8'];
  const OTHER = '#c7c7c7';

  // ---- nodes -------------------------------------------------------------
  const names = [];
  (function () {
    let prev = '';
    for (let i = 0; i < D.names.length; i += 3) {
      const p = D.names[i], q = D.names[i + 1];
      prev = prev.slice(0, p) + D.names[i + 2] + (q > 0 ? prev.slice(prev.length - q) : '');
      names.push(prev);
    }
  })();
  const nodeEngine = (i) => D.kinds[D.kind[i]][0];
  const nodeGraph = (i) => D.kinds[D.kind[i]][1];
  const nodeType = (i) => D.kinds[D.kind[i]][2];

  // ---- formatting --------------------------------------------------------
  function fmtTime(ns) {
    const a = Math.abs(ns);
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e8 ? 1 : 3).replace(/\.?0+$/, '') + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e5 ? 1 : 3).replace(/\.?0+$/, '') + ' µs';
    return Math.round(ns) + ' ns';
  }
  function fmtBytes(b) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i + 1 < u.length) { b /= 1024; i++; }
    return (i === 0 ? String(Math.round(b)) : b.toFixed(1)) + ' ' + u[i];
  }
  function niceStep(span, target) {
    const raw = span / target;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }
  function setTip(tip, lines, ev, box) {
    tip.textContent = '';
    for (const l of lines) {
      const div = document.createElement('div');
      div.textContent = l;
      tip.appendChild(div);
    }
    tip.hidden = false;
    const r = box.getBoundingClientRect();
    let x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 14;
    if (x + tip.offsetWidth > r.width) x = Math.max(0, ev.clientX - r.left - tip.offsetWidth - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function fitCanvas(canvas, cssW, cssH) {
    const dpr = window.devicePixelRatio || 1;
    canvas.style.width = cssW + 'px';
    canvas.style.height = cssH + 'px';
    canvas.width = Math.max(1, Math.round(cssW * dpr));
    canvas.height = Math.max(1, Math.round(cssH * dpr));
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  // ---- timeline ----------------------------------------------------------
  function Timeline() {
    const box = $('timeline');
    const S = D.streams;
    const makespan = Math.max(1, D.makespan);
    const perItem = Array.isArray(D.tasks);
    // Tasks in global arrays, stream after stream, each stream by start.
    let n = 0;
    if (perItem) for (const t of D.tasks) n += t.length / 2;
    const tStart = new Float64Array(n), tEnd = new Float64Array(n);
    const tNode = new Int32Array(n), tStream = new Int32Array(n), tRun = new Int32Array(n), tAtt = new Int32Array(n).fill(-1);
    const streamFirst = new Int32Array(S.length + 1);
    if (perItem) {
      let k = 0;
      for (let s = 0; s < S.length; s++) {
        streamFirst[s] = k;
        const a = D.tasks[s];
        let end = 0;
        for (let i = 0; i < a.length; i += 2, k++) {
          tStart[k] = end + a[i];
          end = tEnd[k] = tStart[k] + a[i + 1];
          tStream[k] = s;
        }
      }
      streamFirst[S.length] = k;
      // Tasks named in "ext"; every other task takes the next node number.
      tNode.fill(-1);
      for (let i = 0; i < D.ext.length; i += 5) {
        const id = streamFirst[D.ext[i]] + D.ext[i + 1];
        tNode[id] = D.ext[i + 2];
        tAtt[id] = D.ext[i + 3];
        tRun[id] = D.ext[i + 4];
      }
      let next = 0;
      for (let i = 0; i < n; i++) if (tNode[i] < 0) tNode[i] = next++;
    }
    const crit = new Uint8Array(n);
    let critCount = 0;
    if (perItem) {
      for (let s = 0; s < S.length; s++) {
        let t = 0;
        for (const d of D.crit[s]) { t += d; crit[streamFirst[s] + t] = 1; critCount++; }
      }
    }
    const firstTaskOfNode = new Int32Array(names.length).fill(-1);
    for (let i = n - 1; i >= 0; i--) firstTaskOfNode[tNode[i]] = i;
    // Blocked waits and records per stream.
    const waits = [], records = [];
    if (perItem) {
      for (let s = 0; s < S.length; s++) {
        const w = D.waits[s], ws = [];
        let end = 0;
        for (let i = 0; i < w.length; i += 2) { const st = end + w[i]; end = st + w[i + 1]; ws.push(st, end); }
        waits.push(ws);
        const r = D.records[s], rs = [];
        let t = 0;
        for (let i = 0; i < r.length; i++) { t += r[i]; rs.push(t); }
        records.push(rs);
      }
    }
    // Arrows.
    const na = perItem ? D.arrows.length / 6 : 0;
    const aFS = new Int32Array(na), aF = new Float64Array(na), aTS = new Int32Array(na), aT = new Float64Array(na);
    const aKind = new Int32Array(na), aId = new Int32Array(na);
    {
      let t = 0;
      for (let i = 0; i < na; i++) {
        const b = 6 * i;
        aFS[i] = D.arrows[b]; t += D.arrows[b + 1]; aF[i] = t;
        aTS[i] = D.arrows[b + 2]; aT[i] = t + D.arrows[b + 3];
        aKind[i] = D.arrows[b + 4]; aId[i] = D.arrows[b + 5];
      }
    }
    // Memory in use over time.
    const memT = [], memB = [];
    if (D.memt) {
      let t = 0;
      for (let i = 0; i < D.memt.steps.length; i += 2) { t += D.memt.steps[i]; memT.push(t); memB.push(D.memt.steps[i + 1] * D.memt.unit); }
    }

    // ---- lanes: grouped under their logical stream ----
    const order = S.map((s, i) => i).sort((a, b) => {
      const la = S[a].logical < 0 ? 1e9 : S[a].logical, lb = S[b].logical < 0 ? 1e9 : S[b].logical;
      if (la !== lb) return la - lb;
      if (S[a].attached !== S[b].attached) return S[a].attached - S[b].attached;
      if (S[a].piece !== S[b].piece) return S[a].piece - S[b].piece;
      return S[a].id - S[b].id;
    });
    const splitAny = S.some((s) => s.pieces > 1);
    $('tl-phys').checked = !(splitAny && S.length > 16);
    let lanes = [], laneOfStream = new Int32Array(S.length);
    let LANE_H = 18;
    const HEAD_H = 15, AXIS_H = 22;
    const MEM_H = memT.length ? 48 : 0, LABEL_W = 190;
    let laneY = [], groupHeads = [], totalH = 0, hiddenIdle = 0;

    function buildLanes() {
      const physical = $('tl-phys').checked, idle = $('tl-idle').checked;
      lanes = [];
      groupHeads = [];
      laneOfStream.fill(-1);
      hiddenIdle = 0;
      const visible = order.filter((s) => idle || streamFirst[s + 1] > streamFirst[s]);
      hiddenIdle = order.length - visible.length;
      let lastGroup = null;
      for (const s of visible) {
        const st = S[s];
        const group = st.logical;
        const merge = !physical && !st.attached && st.pieces > 1 && group >= 0;
        const members = visible.filter((x) => S[x].logical === group);
        const groupLanes = members.filter((x) => !(merge && !S[x].attached && S[x].piece > 0)).length;
        if (group !== lastGroup) {
          // A header row only for a logical stream with several lanes (pieces, attached streams).
          if (groupLanes > 1 || members.length > 1) {
            const pieces = members.filter((x) => !S[x].attached).length;
            let title = group < 0 ? 'other streams' : 'logical stream ' + group + (st.label ? " '" + st.label + "'" : '');
            if (pieces > 1) title += ' · ' + pieces + ' physical';
            groupHeads.push({ lane: lanes.length, title: title });
          }
          lastGroup = group;
        }
        if (merge && st.piece > 0) continue;
        const streams = merge ? members.filter((x) => !S[x].attached) : [s];
        let title = merge ? 'stream ' + st.id + ' + ' + (streams.length - 1) + ' pieces'
          : (st.attached ? 'attached ' : 'stream ') + st.id + (st.pieces > 1 && !st.attached ? ' (' + (st.piece + 1) + '/' + st.pieces + ')' : '');
        if (groupLanes <= 1 && members.length <= 1 && st.label) title += " '" + st.label + "'";
        let busy = 0;
        for (const x of streams) busy += S[x].busy;
        const lane = { title: title, streams: streams, util: busy / makespan };
        for (const x of streams) laneOfStream[x] = lanes.length;
        // Task ids of the lane by start, with the running maximum of ends.
        let ids = [];
        for (const x of streams) for (let i = streamFirst[x]; i < streamFirst[x + 1]; i++) ids.push(i);
        if (streams.length > 1) ids.sort((a, b) => tStart[a] - tStart[b] || a - b);
        lane.ids = Int32Array.from(ids);
        lane.maxEnd = new Float64Array(ids.length);
        let m = -1;
        for (let i = 0; i < ids.length; i++) { m = Math.max(m, tEnd[ids[i]]); lane.maxEnd[i] = m; }
        lanes.push(lane);
      }
      $('tl-hidden').textContent = hiddenIdle ? hiddenIdle + (hiddenIdle === 1 ? ' idle stream' : ' idle streams') + ' hidden (nothing runs on them in this run)' : '';
      // Taller lanes when there are few of them.
      LANE_H = Math.max(18, Math.min(40, Math.floor(320 / Math.max(1, lanes.length))));
      laneY = [];
      let y = AXIS_H, g = 0;
      for (let l = 0; l < lanes.length; l++) {
        while (g < groupHeads.length && groupHeads[g].lane === l) { groupHeads[g].y = y; y += HEAD_H; g++; }
        laneY.push(y);
        y += LANE_H;
      }
      totalH = y + MEM_H + 4;
    }

    // ---- colours ----
    let colourOf = null, legend = [];
    function buildColours() {
      const mode = $('tl-colour').value;
      const key = mode === 'engine' ? (i) => nodeEngine(tNode[i]) : mode === 'graph' ? (i) => nodeGraph(tNode[i]) : (i) => S[tStream[i]].logical;
      const label = mode === 'engine' ? (k) => D.engines[k] || '(no engine)' : mode === 'graph' ? (k) => D.graphs[k] : (k) => (k < 0 ? 'no logical stream' : 'logical ' + k);
      const count = new Map();
      for (let i = 0; i < n; i++) { const k = key(i); count.set(k, (count.get(k) || 0) + 1); }
      const keys = Array.from(count.keys()).sort((a, b) => count.get(b) - count.get(a) || String(label(a)).localeCompare(String(label(b))));
      const colour = new Map();
      keys.forEach((k, i) => colour.set(k, i < PALETTE.length - 1 || keys.length === PALETTE.length ? PALETTE[i] : OTHER));
      const c = new Array(n);
      for (let i = 0; i < n; i++) c[i] = colour.get(key(i));
      colourOf = c;
      legend = keys.map((k) => ({ label: label(k), colour: colour.get(k), count: count.get(k) }));
      const el = $('tl-legend');
      el.textContent = '';
      const shown = legend.slice(0, PALETTE.length - 1);
      for (const e of shown) {
        const span = document.createElement('span');
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.background = e.colour;
        span.appendChild(sw);
        span.appendChild(document.createTextNode(e.label + ' (' + e.count + ')'));
        el.appendChild(span);
      }
      if (legend.length > shown.length) {
        const rest = legend.slice(shown.length).reduce((a, e) => a + e.count, 0);
        const span = document.createElement('span');
        span.textContent = (legend.length - shown.length) + ' more: ' + rest + ' tasks in grey';
        el.appendChild(span);
      }
    }

    // ---- view ----
    const main = $('tl-main'), mini = $('tl-mini'), tip = $('tl-tip');
    let W = 800, t0 = 0, t1 = makespan, selected = -1, hoverLane = -1;
    const stats = { tasks: 0, columns: 0, arrows: 0, bundles: 0 };
    function plotW() { return Math.max(100, W - LABEL_W - 8); }
    function xOf(t) { return LABEL_W + (t - t0) / (t1 - t0) * plotW(); }
    function tOf(x) { return t0 + (x - LABEL_W) / plotW() * (t1 - t0); }
    function clampView() {
      const minSpan = Math.max(10, makespan * 1e-7);
      let span = Math.min(makespan, Math.max(minSpan, t1 - t0));
      let a = Math.min(Math.max(0, t0), makespan - span);
      t0 = a; t1 = a + span;
    }
    function firstVisible(lane, t) {  // first index whose running max end > t
      let lo = 0, hi = lane.ids.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (lane.maxEnd[mid] > t) hi = mid; else lo = mid + 1; }
      return lo;
    }

    function drawMain() {
      const showCrit = $('tl-crit').checked;
      const ctx = fitCanvas(main, W, totalH);
      ctx.font = '11px sans-serif';
      ctx.textBaseline = 'middle';
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, W, totalH);
      const pw = plotW(), k = pw / (t1 - t0);
      // Axis.
      const step = niceStep(t1 - t0, Math.max(2, Math.floor(pw / 110)));
      ctx.strokeStyle = '#e6e6e6';
      ctx.fillStyle = '#444';
      ctx.textAlign = 'center';
      for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
        const x = xOf(t);
        ctx.beginPath(); ctx.moveTo(x + 0.5, AXIS_H - 4); ctx.lineTo(x + 0.5, totalH); ctx.stroke();
        ctx.fillText(fmtTime(t), x, 9);
      }
      // Group headers and lane labels.
      ctx.textAlign = 'left';
      for (const g of groupHeads) {
        ctx.fillStyle = '#eef2f7';
        ctx.fillRect(0, g.y, W, HEAD_H - 1);
        ctx.fillStyle = '#223';
        ctx.font = 'bold 11px sans-serif';
        ctx.fillText(g.title, 4, g.y + HEAD_H / 2);
        ctx.font = '11px sans-serif';
      }
      stats.tasks = 0; stats.columns = 0;
      const critCols = [];
      for (let l = 0; l < lanes.length; l++) {
        const lane = lanes[l], y = laneY[l];
        ctx.fillStyle = l % 2 ? '#fafafa' : '#f3f3f3';
        ctx.fillRect(LABEL_W, y, pw, LANE_H - 1);
        ctx.fillStyle = '#333';
        ctx.fillText(lane.title.length > 26 ? lane.title.slice(0, 25) + '…' : lane.title, 12, y + LANE_H / 2);
        ctx.fillStyle = '#777';
        ctx.textAlign = 'right';
        ctx.fillText(Math.round(100 * Math.min(1, lane.util)) + '%', LABEL_W - 4, y + LANE_H / 2);
        ctx.textAlign = 'left';
        ctx.save();
        ctx.beginPath(); ctx.rect(LABEL_W, y, pw, LANE_H); ctx.clip();
        // Tasks: wide ones as boxes, narrow ones summed per pixel column.
        const colBusy = new Float32Array(Math.ceil(pw) + 2), colTask = new Int32Array(Math.ceil(pw) + 2).fill(-1);
        const colWidest = new Float32Array(Math.ceil(pw) + 2), colCrit = new Uint8Array(Math.ceil(pw) + 2);
        for (let i = firstVisible(lane, t0); i < lane.ids.length; i++) {
          const id = lane.ids[i];
          if (tStart[id] > t1) break;
          const x0 = xOf(tStart[id]), x1 = xOf(tEnd[id]), w = x1 - x0;
          if (w >= 2) {
            ctx.fillStyle = colourOf[id];
            ctx.fillRect(x0, y + 2, w, LANE_H - 5);
            if (w >= 5) { ctx.strokeStyle = 'rgba(0,0,0,.35)'; ctx.strokeRect(x0 + 0.5, y + 2.5, w - 1, LANE_H - 6); }
            if (crit[id] && showCrit) { ctx.fillStyle = '#d00'; ctx.fillRect(x0, y + LANE_H - 4, w, 3); }
            if (w >= 40) {
              ctx.save(); ctx.beginPath(); ctx.rect(x0 + 2, y, w - 4, LANE_H); ctx.clip();
              ctx.fillStyle = '#000'; ctx.fillText(names[tNode[id]], x0 + 3, y + LANE_H / 2); ctx.restore();
            }
            stats.tasks++;
          } else {
            const c = Math.max(0, Math.floor(x0 - LABEL_W));
            colBusy[c] += Math.max(0, w);
            if (w >= colWidest[c]) { colWidest[c] = w; colTask[c] = id; }
            if (crit[id]) colCrit[c] = 1;
          }
        }
        for (let c = 0; c < colBusy.length; c++) {
          if (colTask[c] < 0) continue;
          const h = Math.max(2, Math.min(1, colBusy[c]) * (LANE_H - 5));
          ctx.fillStyle = colourOf[colTask[c]];
          ctx.fillRect(LABEL_W + c, y + LANE_H - 3 - h, 1, h);
          if (colCrit[c] && showCrit) critCols.push(LABEL_W + c, y);
          stats.columns++;
        }
        // Blocked waits (grey, top) and records (ticks) when they are visible at all.
        for (const s of lane.streams) {
          const w = waits[s] || [];
          ctx.fillStyle = '#9a9a9a';
          for (let i = 0; i < w.length; i += 2) {
            if (w[i + 1] < t0 || w[i] > t1) continue;
            const x0 = xOf(w[i]), x1 = xOf(w[i + 1]);
            if (x1 - x0 >= 1) ctx.fillRect(x0, y, x1 - x0, 2);
          }
          const r = records[s] || [];
          if (r.length && (t1 - t0) * r.length / makespan < pw / 3) {
            ctx.fillStyle = '#222';
            for (const t of r) if (t >= t0 && t <= t1) ctx.fillRect(xOf(t), y + LANE_H - 6, 1, 5);
          }
        }
        ctx.restore();
      }
      ctx.fillStyle = '#d00';
      for (let i = 0; i < critCols.length; i += 2) ctx.fillRect(critCols[i], critCols[i + 1] + LANE_H - 3, 1, 2);
      drawMemoryLane(ctx);
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL_W, AXIS_H, pw, totalH - AXIS_H); ctx.clip();
      if ($('tl-events').checked) drawArrows(ctx);
      if (selected >= 0 && laneOfStream[tStream[selected]] >= 0) {
        const l = laneOfStream[tStream[selected]], x0 = xOf(tStart[selected]), x1 = Math.max(x0 + 3, xOf(tEnd[selected]));
        ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
        ctx.strokeRect(x0 - 2, laneY[l], x1 - x0 + 4, LANE_H - 1);
        ctx.beginPath(); ctx.moveTo((x0 + x1) / 2, laneY[l] - 1); ctx.lineTo((x0 + x1) / 2 - 5, laneY[l] - 8); ctx.lineTo((x0 + x1) / 2 + 5, laneY[l] - 8); ctx.closePath(); ctx.fillStyle = '#000'; ctx.fill();
        ctx.lineWidth = 1;
      }
      ctx.restore();
      $('tl-window').textContent = fmtTime(t0) + ' – ' + fmtTime(t1) + ' of ' + fmtTime(makespan);
      box.setAttribute('data-drawn-tasks', stats.tasks);
      box.setAttribute('data-drawn-columns', stats.columns);
      box.setAttribute('data-drawn-arrows', stats.arrows);
      box.setAttribute('data-drawn-bundles', stats.bundles);
    }

    function drawMemoryLane(ctx) {
      if (!memT.length) return;
      const y = laneY.length ? laneY[laneY.length - 1] + LANE_H + 4 : AXIS_H, h = MEM_H - 8, pw = plotW();
      const max = Math.max(1, D.memt.max);
      ctx.fillStyle = '#333';
      ctx.fillText('memory in use', 4, y + h / 2);
      ctx.textAlign = 'right'; ctx.fillStyle = '#777';
      ctx.fillText(fmtBytes(max), LABEL_W - 4, y + 6); ctx.textAlign = 'left';
      ctx.fillStyle = '#f3f3f3';
      ctx.fillRect(LABEL_W, y, pw, h);
      ctx.beginPath();
      ctx.moveTo(LABEL_W, y + h);
      let last = 0;
      for (let i = 0; i < memT.length; i++) {
        const x = Math.min(LABEL_W + pw, Math.max(LABEL_W, xOf(memT[i])));
        ctx.lineTo(x, y + h - last / max * h);
        last = memB[i];
        ctx.lineTo(x, y + h - last / max * h);
      }
      ctx.lineTo(LABEL_W + pw, y + h - last / max * h);
      ctx.lineTo(LABEL_W + pw, y + h);
      ctx.closePath();
      ctx.fillStyle = 'rgba(49,130,189,.45)';
      ctx.fill();
      ctx.strokeStyle = '#3182bd';
      ctx.stroke();
    }

    function arrowHead(ctx, x0, y0, x1, y1, size) {
      const a = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - size * Math.cos(a - 0.45), y1 - size * Math.sin(a - 0.45));
      ctx.lineTo(x1 - size * Math.cos(a + 0.45), y1 - size * Math.sin(a + 0.45));
      ctx.closePath();
      ctx.fill();
    }
    const BUNDLE_ABOVE = 150;
    function visibleArrows() {
      const out = [];
      for (let i = 0; i < na && aF[i] <= t1; i++) {
        if (aT[i] < t0) continue;
        if (laneOfStream[aFS[i]] === laneOfStream[aTS[i]] || laneOfStream[aFS[i]] < 0 || laneOfStream[aTS[i]] < 0) continue;
        out.push(i);
      }
      return out;
    }
    function drawArrows(ctx) {
      const vis = visibleArrows();
      stats.arrows = 0; stats.bundles = 0;
      ctx.strokeStyle = 'rgba(200,0,50,.75)';
      ctx.fillStyle = 'rgba(200,0,50,.85)';
      const mid = (l) => laneY[l] + LANE_H / 2;
      if (vis.length <= BUNDLE_ABOVE) {
        for (const i of vis) {
          const x0 = xOf(aF[i]), x1 = xOf(aT[i]), y0 = mid(laneOfStream[aFS[i]]), y1 = mid(laneOfStream[aTS[i]]);
          ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
          arrowHead(ctx, x0, y0, x1, y1, 6);
          stats.arrows++;
        }
        return;
      }
      // Dense: one arrow per (lane pair, bucket of both ends), at most about
      // 48 buckets across, width by count; fainter the denser the view.
      const bundles = new Map(), px = Math.max(28, plotW() / 48);
      for (const i of vis) {
        const x0 = xOf(aF[i]), x1 = xOf(aT[i]);
        const key = ((laneOfStream[aFS[i]] * lanes.length + laneOfStream[aTS[i]]) * 4096 + Math.floor(x0 / px)) * 4096 + Math.floor(x1 / px);
        let b = bundles.get(key);
        if (!b) { b = { x0: 0, x1: 0, n: 0, l0: laneOfStream[aFS[i]], l1: laneOfStream[aTS[i]] }; bundles.set(key, b); }
        b.x0 += x0; b.x1 += x1; b.n++;
      }
      ctx.font = '10px sans-serif';
      const alpha = vis.length > 1500 ? 0.22 : 0.55, labels = bundles.size <= 80;
      ctx.strokeStyle = 'rgba(200,0,50,' + alpha + ')';
      ctx.fillStyle = 'rgba(200,0,50,' + Math.min(1, alpha + 0.2) + ')';
      for (const b of bundles.values()) {
        const x0 = b.x0 / b.n, x1 = b.x1 / b.n, y0 = mid(b.l0), y1 = mid(b.l1);
        ctx.lineWidth = vis.length > 1500 ? 1 : Math.min(4, 1 + Math.log2(b.n) / 2);
        ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
        arrowHead(ctx, x0, y0, x1, y1, 4 + ctx.lineWidth);
        if (labels && b.n > 1) {
          const f = ctx.fillStyle;
          ctx.fillStyle = '#700'; ctx.fillText(String(b.n), (x0 + x1) / 2 + 3, (y0 + y1) / 2 - 4); ctx.fillStyle = f;
        }
        stats.bundles++;
        stats.arrows += b.n;
      }
      ctx.lineWidth = 1;
      ctx.font = '11px sans-serif';
    }

    // ---- minimap: how many streams are busy, over the whole run ----
    let miniBusy = null;
    const MINI_H = 40;
    function buildMini() {
      const pw = Math.ceil(plotW());
      miniBusy = new Float32Array(pw);
      const scale = pw / makespan;
      for (let id = 0; id < n; id++) {
        const a = tStart[id] * scale, b = tEnd[id] * scale;
        for (let c = Math.floor(a); c <= Math.min(pw - 1, Math.floor(b)); c++) miniBusy[c] += Math.min(b, c + 1) - Math.max(a, c);
      }
    }
    function drawMini() {
      const ctx = fitCanvas(mini, W, MINI_H);
      ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, MINI_H);
      ctx.fillStyle = '#555'; ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';
      ctx.fillText('busy streams, whole run', 4, MINI_H / 2 - 7);
      ctx.fillText('(drag to move)', 4, MINI_H / 2 + 7);
      const pw = plotW();
      let max = 1;
      for (const v of miniBusy) max = Math.max(max, v);
      ctx.fillStyle = '#4e79a7';
      for (let c = 0; c < miniBusy.length; c++) {
        if (miniBusy[c] <= 0) continue;
        const h = Math.max(1, miniBusy[c] / max * (MINI_H - 4));
        ctx.fillRect(LABEL_W + c, MINI_H - 2 - h, 1, h);
      }
      const x0 = LABEL_W + t0 / makespan * pw, x1 = LABEL_W + t1 / makespan * pw;
      ctx.fillStyle = 'rgba(255,190,0,.18)'; ctx.fillRect(x0, 0, Math.max(2, x1 - x0), MINI_H);
      ctx.strokeStyle = '#c80'; ctx.lineWidth = 2; ctx.strokeRect(x0 + 1, 1, Math.max(2, x1 - x0) - 2, MINI_H - 2); ctx.lineWidth = 1;
    }

    function redraw() { clampView(); drawMain(); drawMini(); }
    let pending = false;
    function schedule() { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; redraw(); }); } }
    function zoomAt(x, factor) {
      const tc = tOf(Math.max(LABEL_W, x)), frac = (Math.max(LABEL_W, x) - LABEL_W) / plotW();
      const span = (t1 - t0) * factor;
      t0 = tc - frac * span; t1 = t0 + span;
      schedule();
    }

    // ---- hover ----
    function taskAt(x, y) {
      const l = laneY.findIndex((ly) => y >= ly && y < ly + LANE_H);
      if (l < 0) return -1;
      const t = tOf(x), slack = 2 * (t1 - t0) / plotW();
      const lane = lanes[l];
      let best = -1, bestD = Infinity;
      for (let i = firstVisible(lane, t - slack); i < lane.ids.length; i++) {
        const id = lane.ids[i];
        if (tStart[id] > t + slack) break;
        const d = t < tStart[id] ? tStart[id] - t : t > tEnd[id] ? t - tEnd[id] : 0;
        if (d < bestD || (d === bestD && tEnd[id] - tStart[id] > tEnd[best] - tStart[best])) { best = id; bestD = d; }
      }
      return bestD <= slack ? best : -1;
    }
    function describe(id) {
      const nd = tNode[id], st = S[tStream[id]];
      const lines = [names[nd], 'engine ' + (D.engines[nodeEngine(nd)] || '-') + ' · type ' + D.types[nodeType(nd)] + ' · graph ' + D.graphs[nodeGraph(nd)],
        st.name + (tAtt[id] >= 0 ? ' · attached slot ' + tAtt[id] : '') + (tRun[id] > 0 ? ' · run ' + tRun[id] : ''),
        fmtTime(tStart[id]) + ' – ' + fmtTime(tEnd[id]) + ' (' + fmtTime(tEnd[id] - tStart[id]) + ')'];
      if (crit[id]) lines.push('on the critical path');
      return lines;
    }
    main.addEventListener('mousemove', (ev) => {
      if (drag) return;
      const r = main.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      const id = taskAt(x, y);
      if (id >= 0) { setTip(tip, describe(id), ev, box); return; }
      const memY = laneY.length ? laneY[laneY.length - 1] + LANE_H + 4 : AXIS_H;
      if (memT.length && y >= memY && x >= LABEL_W) {
        const t = tOf(x);
        let lo = 0, hi = memT.length;
        while (lo < hi) { const m = (lo + hi) >> 1; if (memT[m] <= t) lo = m + 1; else hi = m; }
        setTip(tip, ['memory in use at ' + fmtTime(t), fmtBytes(lo > 0 ? memB[lo - 1] : 0) + ' of the pool (estimated from the tasks that touch each buffer)'], ev, box);
        return;
      }
      tip.hidden = true;
    });
    main.addEventListener('mouseleave', () => { tip.hidden = true; });
    let drag = null;
    main.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, t0: t0, span: t1 - t0 }; main.style.cursor = 'grabbing'; tip.hidden = true; });
    window.addEventListener('mouseup', () => { drag = null; miniDrag = false; main.style.cursor = ''; });
    window.addEventListener('mousemove', (ev) => {
      if (drag) { t0 = drag.t0 - (ev.clientX - drag.x) / plotW() * drag.span; t1 = t0 + drag.span; schedule(); }
      if (miniDrag) moveMini(ev);
    });
    main.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = main.getBoundingClientRect();
      if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) { const d = ev.deltaX / plotW() * (t1 - t0); t0 += d; t1 += d; schedule(); return; }
      zoomAt(ev.clientX - r.left, Math.exp(ev.deltaY * 0.002));
    }, { passive: false });
    main.addEventListener('dblclick', (ev) => { const r = main.getBoundingClientRect(); zoomAt(ev.clientX - r.left, ev.shiftKey ? 2 : 0.5); });
    let miniDrag = false;
    function moveMini(ev) {
      const r = mini.getBoundingClientRect(), span = t1 - t0;
      const t = (ev.clientX - r.left - LABEL_W) / plotW() * makespan;
      t0 = t - span / 2; t1 = t0 + span; schedule();
    }
    mini.addEventListener('mousedown', (ev) => { miniDrag = true; moveMini(ev); });
    $('tl-fit').addEventListener('click', () => { t0 = 0; t1 = makespan; schedule(); });
    $('tl-in').addEventListener('click', () => zoomAt(LABEL_W + plotW() / 2, 0.5));
    $('tl-out').addEventListener('click', () => zoomAt(LABEL_W + plotW() / 2, 2));
    $('tl-events').addEventListener('change', schedule);
    $('tl-crit').addEventListener('change', schedule);
    $('tl-colour').addEventListener('change', () => { buildColours(); schedule(); });
    $('tl-phys').addEventListener('change', () => { buildLanes(); buildMini(); schedule(); });
    $('tl-idle').addEventListener('change', () => { buildLanes(); buildMini(); schedule(); });

    // ---- search ----
    const results = $('tl-results');
    function focusTask(id) {
      selected = id;
      box.setAttribute('data-selected', names[tNode[id]]);
      const span = Math.max(tEnd[id] - tStart[id], 1) * 60, c = (tStart[id] + tEnd[id]) / 2;
      const s = Math.min(makespan, Math.max(span, makespan / 5000, 50));
      t0 = c - s / 2; t1 = c + s / 2;
      schedule();
      main.scrollIntoView({ block: 'nearest' });
    }
    function search() {
      const q = $('tl-search').value.trim().toLowerCase();
      results.textContent = '';
      if (!q) { results.hidden = true; $('tl-found').textContent = ''; return []; }
      const hits = [];
      let total = 0;
      for (let i = 0; i < names.length; i++) {
        if (firstTaskOfNode[i] < 0 || names[i].toLowerCase().indexOf(q) < 0) continue;
        total++;
        if (hits.length < 30) hits.push(i);
      }
      $('tl-found').textContent = total + (total === 1 ? ' task' : ' tasks');
      for (const i of hits) {
        const li = document.createElement('li');
        li.textContent = names[i] + ' — ' + S[tStream[firstTaskOfNode[i]]].name + ', ' + fmtTime(tStart[firstTaskOfNode[i]]);
        li.addEventListener('click', () => focusTask(firstTaskOfNode[i]));
        results.appendChild(li);
      }
      results.hidden = hits.length === 0;
      return hits;
    }
    let searchTimer = 0;
    $('tl-search').addEventListener('input', () => { clearTimeout(searchTimer); searchTimer = setTimeout(search, 120); });
    $('tl-search').addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') { const hits = search(); if (hits.length) focusTask(firstTaskOfNode[hits[0]]); }
    });
    if (!perItem) {
      $('tl-search').disabled = true;
      $('tl-search').placeholder = 'search needs per-task data (--max-items)';
    }

    function layout() {
      W = Math.max(600, box.clientWidth);
      buildMini();
      redraw();
    }
    buildLanes();
    buildColours();
    window.addEventListener('resize', () => { layout(); });
    layout();
    box.setAttribute('data-lanes', lanes.length);
    box.setAttribute('data-tasks', n);
    box.setAttribute('data-arrows', na);
    box.setAttribute('data-critical', critCount);
    box.setAttribute('data-state', 'ready');
    // From the address: #find=NAME searches and marks; #view=FROM,TO (µs) shows that window.
    const m = /[#&]find=([^&]+)/.exec(location.hash);
    if (m) { $('tl-search').value = decodeURIComponent(m[1]); const hits = search(); if (hits.length) { focusTask(firstTaskOfNode[hits[0]]); redraw(); } }
    const v = /[#&]view=([0-9.]+),([0-9.]+)/.exec(location.hash);
    if (v) { t0 = parseFloat(v[1]) * 1000; t1 = parseFloat(v[2]) * 1000; redraw(); }
  }

  // ---- aggregated timeline (above --max-items) ----
  function BucketTimeline() {
    const box = $('timeline'), main = $('tl-main');
    const S = D.streams, W = Math.max(600, box.clientWidth), LABEL_W = 190, LANE_H = 18, AXIS_H = 22;
    const H = AXIS_H + S.length * LANE_H + 4;
    const ctx = fitCanvas(main, W, H);
    ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    const pw = W - LABEL_W - 8;
    for (let s = 0; s < S.length; s++) {
      const y = AXIS_H + s * LANE_H, row = D.buckets[s];
      ctx.fillStyle = '#333'; ctx.fillText(S[s].name, 4, y + LANE_H / 2);
      ctx.fillStyle = '#f3f3f3'; ctx.fillRect(LABEL_W, y, pw, LANE_H - 1);
      ctx.fillStyle = '#4e79a7';
      for (let b = 0; b < row.length; b++) {
        if (!row[b]) continue;
        const h = Math.max(1, row[b] / 100 * (LANE_H - 4));
        ctx.fillRect(LABEL_W + b / row.length * pw, y + LANE_H - 2 - h, Math.max(0.5, pw / row.length), h);
      }
    }
    for (const id of ['tl-search', 'tl-colour', 'tl-events', 'tl-crit', 'tl-phys', 'tl-idle', 'tl-fit', 'tl-in', 'tl-out']) $(id).disabled = true;
    box.setAttribute('data-lanes', S.length);
    box.setAttribute('data-state', 'ready');
  }

  // ---- memory chart (plan order) ----
  function Memory() {
    const box = $('memory');
    if (!box || !D.pool) return;
    const P = D.pool, canvas = $('mem-main'), tip = $('mem-tip');
    const bufs = [];
    if (P.b) {
      let lower = 0;
      for (let i = 0; i < P.b.length; i += 5) {
        lower += P.b[i];
        bufs.push({ lo: lower, hi: lower + P.b[i + 1], off: P.b[i + 2] * P.unit, size: P.b[i + 3] * P.unit, node: P.b[i + 4], out: 0, members: 1 });
      }
      for (let i = 0; i < P.bx.length; i++) { const b = bufs[P.bx[i][0]]; b.out = P.bx[i][1]; b.members = P.bx[i][2]; }
    }
    // Live bytes per change point (positions are integers: one pass over a delta array).
    const live = [];
    if (P.b) {
      const delta = new Float64Array(Math.max(P.x1, 0) + 2);
      for (const b of bufs) { if (b.hi <= b.lo || b.size <= 0) continue; delta[b.lo] += b.size; delta[b.hi] -= b.size; }
      let v = 0;
      for (let x = 0; x < delta.length; x++) { if (delta[x] !== 0) { v += delta[x]; live.push([x, v]); } }
    } else if (P.live) {
      let x = 0;
      for (let i = 0; i < P.live.length; i += 2) { x += P.live[i]; live.push([x, P.live[i + 1] * P.unit]); }
    }
    let maxLive = 0;
    for (const [, v] of live) maxLive = Math.max(maxLive, v);
    // The x axis: where at least 1 % of the most live bytes are live (a long
    // stretch of constants before the first activation is left out).
    let x0 = P.x0, x1 = Math.max(P.x1, P.x0 + 1);
    {
      let first = -1, last = -1;
      for (let i = 0; i < live.length; i++) {
        if (live[i][1] >= 0.01 * maxLive && maxLive > 0) { if (first < 0) first = live[i][0]; last = i + 1 < live.length ? live[i + 1][0] : x1; }
      }
      if (first >= 0 && last > first) { x0 = first; x1 = last; }
    }
    const W = Math.max(600, box.clientWidth), LEFT = 90, TOP = 10, PH = 260, BAND = 40, H = TOP + PH + 30 + BAND;
    const ymax = Math.max(P.peak, P.lower, maxLive, 1);
    const pw = W - LEFT - 160;
    const X = (p) => LEFT + (p - x0) / (x1 - x0) * pw, Y = (b) => TOP + PH - b / ymax * PH;
    const ctx = fitCanvas(canvas, W, H);
    ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.strokeStyle = '#e6e6e6'; ctx.fillStyle = '#444'; ctx.textAlign = 'right';
    const ys = niceStep(ymax, 6);
    for (let b = 0; b <= ymax; b += ys) { ctx.beginPath(); ctx.moveTo(LEFT, Y(b) + 0.5); ctx.lineTo(LEFT + pw, Y(b) + 0.5); ctx.stroke(); ctx.fillText(fmtBytes(b), LEFT - 4, Y(b)); }
    ctx.textAlign = 'center';
    const xs = niceStep(x1 - x0, 10);
    for (let p = Math.ceil(x0 / xs) * xs; p <= x1; p += xs) ctx.fillText(String(p), X(p), TOP + PH + 10);
    ctx.fillText('plan-order position (' + x0 + '–' + x1 + ': where at least 1 % of the most live bytes are live)', LEFT + pw / 2, TOP + PH + 24);
    ctx.save(); ctx.beginPath(); ctx.rect(LEFT, 0, pw, TOP + PH + 1); ctx.clip();
    // Buffers: one path filled once, outlines for those big enough to show one.
    let drawn = 0;
    const outline = new Path2D();
    ctx.beginPath();
    for (const b of bufs) {
      if (b.hi <= b.lo || b.size <= 0) continue;
      const bx = X(b.lo), bw = Math.max(0.6, X(b.hi) - bx), by = Y(b.off + b.size), bh = Math.max(0.6, Y(b.off) - by);
      ctx.rect(bx, by, bw, bh);
      if (bw > 3 && bh > 3) outline.rect(bx + 0.5, by + 0.5, bw - 1, bh - 1);
      drawn++;
    }
    ctx.fillStyle = 'rgba(158,202,225,.85)';
    ctx.fill();
    ctx.strokeStyle = '#3182bd';
    ctx.stroke(outline);
    // Live curve, peak, lower bound.
    ctx.strokeStyle = '#111'; ctx.lineWidth = 1.5; ctx.beginPath();
    let last = 0; ctx.moveTo(X(x0), Y(0));
    for (const [x, v] of live) { ctx.lineTo(X(x), Y(last)); ctx.lineTo(X(x), Y(v)); last = v; }
    ctx.lineTo(X(x1), Y(last)); ctx.stroke();
    ctx.lineWidth = 1.5; ctx.setLineDash([6, 3]); ctx.strokeStyle = '#d62728';
    ctx.beginPath(); ctx.moveTo(LEFT, Y(P.peak)); ctx.lineTo(LEFT + pw, Y(P.peak)); ctx.stroke();
    ctx.setLineDash([2, 2]); ctx.strokeStyle = '#1f77b4';
    ctx.beginPath(); ctx.moveTo(LEFT, Y(P.lower)); ctx.lineTo(LEFT + pw, Y(P.lower)); ctx.stroke();
    ctx.setLineDash([]); ctx.lineWidth = 1;
    ctx.restore();
    ctx.textAlign = 'left'; ctx.fillStyle = '#d62728'; ctx.fillText('peak ' + fmtBytes(P.peak), LEFT + pw + 4, Y(P.peak) - 6);
    ctx.fillStyle = '#1f77b4'; ctx.fillText('lower bound ' + fmtBytes(P.lower), LEFT + pw + 4, Y(P.lower) + (P.lower === P.peak ? 8 : 6));
    // Constants and inputs: their own band (not to the activation scale).
    const by = TOP + PH + 34;
    ctx.fillStyle = '#efe6d4'; ctx.fillRect(LEFT, by, pw, BAND - 12);
    ctx.fillStyle = '#5a4a2a';
    ctx.fillText('constants / weights ' + fmtBytes(P.constant) + ' · inputs ' + fmtBytes(P.input) + ' — in their own regions, live for the whole run', LEFT + 6, by + (BAND - 12) / 2);
    ctx.textAlign = 'right'; ctx.fillText('other regions', LEFT - 4, by + (BAND - 12) / 2);
    box.setAttribute('data-drawn-buffers', drawn);
    box.setAttribute('data-x-range', x0 + '-' + x1);
    box.setAttribute('data-live-points', live.length);
    box.setAttribute('data-state', 'ready');
    canvas.addEventListener('mousemove', (ev) => {
      const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      if (x < LEFT || x > LEFT + pw || y < TOP || y > TOP + PH) { tip.hidden = true; return; }
      const p = x0 + (x - LEFT) / pw * (x1 - x0), bytes = (TOP + PH - y) / PH * ymax;
      let v = 0;
      for (const [lx, lv] of live) { if (lx > p) break; v = lv; }
      const lines = ['position ' + Math.floor(p) + ': ' + fmtBytes(v) + ' live'];
      for (const b of bufs) {
        if (b.lo > p) break;
        if (p < b.hi && bytes >= b.off && bytes < b.off + b.size) {
          lines.push('buffer ' + names[b.node] + ':' + (b.out < 0 ? 'ws' : b.out) + (b.members > 1 ? ' (+' + (b.members - 1) + ' aliases)' : ''));
          lines.push('offset ' + b.off + ', size ' + fmtBytes(b.size) + ', live [' + b.lo + ', ' + b.hi + ')');
          break;
        }
      }
      setTip(tip, lines, ev, box);
    });
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  }

  if (D.buckets) BucketTimeline(); else Timeline();
  Memory();
  root.setAttribute('data-script-ms', String(Math.round(performance.now() - started)));
  root.setAttribute('data-report', 'ready');
})();
)js";
  return kScript;
}

}  // namespace npuplan::report
