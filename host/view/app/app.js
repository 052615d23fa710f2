/* evalua view: the app. Plain JavaScript, no library, no request to any
 * host but the one that served it. Every text from the data goes in with
 * textContent (never innerHTML), so nothing in a row can run. */
'use strict';

const DATA = window.EVALUA_DATA; // set by evalua view --export: read-only, no server
const TOKEN = new URLSearchParams(location.search).get('token') || sessionStorage.getItem('evalua_token') || '';
if (TOKEN) sessionStorage.setItem('evalua_token', TOKEN);
const SVGNS = 'http://www.w3.org/2000/svg';
const state = { info: null, list: [], sel: 0, labelMetric: null, back: null };

/* ---------- DOM helpers ---------- */
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of kids.flat(Infinity)) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}
function s(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, v);
  for (const c of kids.flat(Infinity)) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
const fmt = (x, d = 3) => (x === null || x === undefined) ? '–' : (Number.isInteger(x) ? String(x) : Number(x).toFixed(d));
const main = () => document.getElementById('main');
function show(...kids) {
  main().replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));
  main().dataset.page = location.hash; // which route the content shows (tests wait on it)
}
function status(t) { document.getElementById('status').textContent = t; }
const idText = (id) => typeof id === 'string' ? id : String(id);
const ci = (lo, hi) => (lo === null || lo === undefined) ? '' : `[${fmt(lo)}, ${fmt(hi)}]`;

/* ---------- the API (or the exported data) ---------- */
async function api(name, params) {
  if (DATA) return local(name, params || {});
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') qs.set(k, v);
  const r = await fetch(`/api/${name}?${qs}`, { headers: { 'X-Evalua-Token': TOKEN } });
  const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw Object.assign(new Error(body.error || `HTTP ${r.status}`), { body });
  return body;
}
/* The items of a search, asked again each second while the run's search index is built in the
 * background (the server answers 503 with `building`, its seconds so far); null when the page changed meanwhile. */
async function searchItems(params) {
  const hash = location.hash;
  for (;;) {
    try { return await api('items', params); } catch (err) {
      if (!err.body || typeof err.body.building !== 'number') throw err;
      status(`building the run's search index in the background (${err.body.building.toFixed(1)} s so far): the search answers when it is ready…`);
      await new Promise((ok) => setTimeout(ok, 1000));
      if (location.hash !== hash) return null;
    }
  }
}
async function post(name, obj, raw) {
  if (DATA) throw new Error('this export is read-only: labels are made in evalua view');
  const r = await fetch(`/api/${name}`, { method: 'POST', body: raw !== undefined ? raw : JSON.stringify(obj),
    headers: { 'X-Evalua-Token': TOKEN, 'Content-Type': 'application/json' } });
  const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

/* The exported data answers the same questions, filtering in the page. */
function local(name, p) {
  const run = DATA.runs_detail[p.run || DATA.newest];
  if (!run && ['run', 'item', 'items'].includes(name)) throw new Error(`run ${p.run} is not in this export`);
  if (!run.items && ['item', 'items'].includes(name)) throw new Error('this export holds the items of the newest run only');
  switch (name) {
    case 'info': return DATA.info;
    case 'runs': return DATA.runs;
    case 'run': return run.summary;
    case 'labels': return DATA.labels.filter((l) => !p.metric || l.metric === p.metric);
    case 'calibration': return { text: (DATA.calibration || {})[p.metric] || 'not exported' };
    case 'queue': return DATA.queues[p.metric] || { items: [], needed: 50, labelled: 0, rule: { labels: 50, spearman: 0.7 } };
    case 'compare': return DATA.compare[`${p.a}\u0000${p.b}`] || { error: 'not exported' };
    case 'item': {
      const it = run.items.find((x) => x.system === p.system && JSON.stringify(x.item) === p.id);
      if (!it) throw new Error(`item ${p.id} is not in this export`);
      return it.full;
    }
    case 'items': {
      let rows = run.items.filter((it) => localMatch(it, p));
      if (p.sort && p.sort !== 'id') {
        const v = (it) => (it.scores[p.sort] || {}).value;
        rows = rows.slice().sort((a, b) => {
          const x = v(a), y = v(b);
          if (x == null) return y == null ? 0 : 1;
          if (y == null) return -1;
          return p.desc === '1' ? y - x : x - y;
        });
      }
      const per = Number(p.per || 50), page = Number(p.page || 1);
      return { total: rows.length, rows: rows.slice((page - 1) * per, page * per), page, per,
               exported: run.items.length, of: run.total };
    }
  }
  throw new Error(`no ${name} in the export`);
}
function localMatch(it, p) {
  if (p.system && it.system !== p.system) return false;
  const sc = (m) => it.scores[m] || {};
  if (p.below !== undefined && p.below !== '' && !(sc(p.metric).value < Number(p.below))) return false;
  const vals = Object.entries(it.scores).filter(([m]) => !p.metric || m === p.metric).map(([, v]) => v);
  if (p.unmeasured === '1' && !vals.some((v) => v.value == null)) return false;
  if (p.failing === '1' && !vals.some((v) => v.value != null && v.value < 0.5)) return false;
  for (const [k, v] of Object.entries(p)) if (k.startsWith('slice.') && String(it.slices[k.slice(6)]) !== v) return false;
  if (p.q && !searchHolds(it.hay || '', p.q)) return false;
  return true;
}
/* The server's search on an exported item's texts (its id, query, answer and contexts, folded and
 * joined by NUL; docs/view.md "The search"): every word, in any order; a word of ASCII letters and
 * digits is the start of a word there (its parts a phrase, the last a prefix), any other a substring.
 * Folded as the scan folds: case (upper, then lower: ß is ss), then the accents U+0300..U+036F dropped
 * after canonical decomposition. */
function foldText(s) {
  return s.normalize('NFD').toUpperCase().toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').normalize('NFC');
}
function searchHolds(hay, q) {
  return q.split(/\s+/).filter(Boolean).every((w) => {
    const f = foldText(w);
    if (/[^\x00-\x7f]/.test(w) || !/[a-z0-9]/.test(f)) return hay.includes(f);
    const parts = f.split(/[^a-z0-9]+/).filter(Boolean);
    return new RegExp(`(?<![\\p{L}\\p{N}])${parts.join('[^\\p{L}\\p{N}\\0]+')}`, 'u').test(hay);
  });
}

/* ---------- routing: #/page?args ---------- */
function route() {
  const [path, q] = location.hash.replace(/^#/, '').split('?');
  const args = Object.fromEntries(new URLSearchParams(q || ''));
  const page = (path || '/runs').split('/')[1] || 'runs';
  const pages = { runs: pageRuns, run: pageRun, items: pageItems, item: pageItem, queue: pageQueue,
                  calibration: pageCalibration, compare: pageCompare };
  document.onkeydown = null;
  (pages[page] || pageRuns)(args).catch((e) => show(h('p', { class: 'bad', text: `Error: ${e.message}` })));
}
function go(page, args) { location.hash = `#/${page}?${new URLSearchParams(args)}`; }

/* ---------- charts (inline SVG) ---------- */
function trendChart(points, title) { // points: [{x label, mean, lo, hi}]
  const W = 460, H = 170, L = 40, B = 30, T = 18;
  const n = points.length, xs = (i) => L + (n > 1 ? i * (W - L - 10) / (n - 1) : (W - L) / 2);
  const ys = (v) => T + (1 - v) * (H - T - B);
  const g = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': title });
  g.append(s('text', { x: L, y: 12 }, title));
  for (const v of [0, 0.5, 1]) {
    g.append(s('line', { x1: L, x2: W - 5, y1: ys(v), y2: ys(v), stroke: '#e3e7ed' }));
    g.append(s('text', { x: 4, y: ys(v) + 4 }, v.toFixed(1)));
  }
  const band = points.filter((p) => p.lo != null);
  if (band.length > 1) {
    const up = band.map((p) => `${xs(points.indexOf(p))},${ys(p.hi)}`);
    const down = band.slice().reverse().map((p) => `${xs(points.indexOf(p))},${ys(p.lo)}`);
    g.append(s('polygon', { points: up.concat(down).join(' '), fill: 'rgba(36,86,199,.15)' }));
  }
  const line = points.filter((p) => p.mean != null).map((p) => `${xs(points.indexOf(p))},${ys(p.mean)}`);
  g.append(s('polyline', { points: line.join(' '), fill: 'none', stroke: '#2456c7', 'stroke-width': 2 }));
  points.forEach((p, i) => {
    if (p.mean == null) return;
    g.append(s('circle', { cx: xs(i), cy: ys(p.mean), r: 3, fill: '#2456c7' },
      s('title', {}, `${p.x}: ${fmt(p.mean)} ${ci(p.lo, p.hi)}`)));
  });
  if (n) { g.append(s('text', { x: L, y: H - 8 }, points[0].x)); g.append(s('text', { x: W - 120, y: H - 8 }, points[n - 1].x)); }
  return g;
}
function forest(deltas, title) { // [{system, metric, delta, lo, hi, n}]
  const rows = deltas.filter((d) => d.delta != null);
  const W = 640, RH = 22, L = 230, T = 24, H = T + RH * rows.length + 24;
  let span = 0.05;
  for (const d of rows) span = Math.max(span, Math.abs(d.lo ?? d.delta), Math.abs(d.hi ?? d.delta));
  const xs = (v) => L + (v + span) / (2 * span) * (W - L - 70);
  const g = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': title });
  g.append(s('text', { x: 4, y: 14 }, title));
  g.append(s('line', { x1: xs(0), x2: xs(0), y1: T - 4, y2: H - 20, stroke: '#98a2b3' }));
  g.append(s('text', { x: xs(-span) - 10, y: H - 6 }, fmt(-span, 2)));
  g.append(s('text', { x: xs(span) - 20, y: H - 6 }, `+${fmt(span, 2)}`));
  rows.forEach((d, i) => {
    const y = T + i * RH + RH / 2;
    const worse = d.hi != null && d.hi < 0, better = d.lo != null && d.lo > 0;
    const col = worse ? '#b42318' : better ? '#127a3d' : '#2456c7';
    g.append(s('text', { x: 4, y: y + 4 }, `${d.metric} · ${d.system}`));
    if (d.lo != null) g.append(s('line', { x1: xs(d.lo), x2: xs(d.hi), y1: y, y2: y, stroke: col, 'stroke-width': 2 }));
    g.append(s('rect', { x: xs(d.delta) - 4, y: y - 4, width: 8, height: 8, fill: col },
      s('title', {}, `${d.metric} ${d.system}: ${fmt(d.delta)} ${ci(d.lo, d.hi)} on ${d.n} paired items`)));
    g.append(s('text', { x: W - 66, y: y + 4 }, `${d.delta >= 0 ? '+' : ''}${fmt(d.delta)}`));
  });
  return g;
}
function bars(items, title, max = 1) { // [{label, value, lo, hi}]
  const W = 460, RH = 20, L = 150, T = 20, H = T + RH * items.length + 8;
  const xs = (v) => L + (max ? v / max : 0) * (W - L - 60);
  const g = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': title });
  g.append(s('text', { x: 4, y: 13 }, title));
  items.forEach((b, i) => {
    const y = T + i * RH;
    g.append(s('text', { x: 4, y: y + 13 }, String(b.label).slice(0, 24)));
    g.append(s('rect', { x: L, y: y + 3, width: Math.max(0, xs(b.value || 0) - L), height: RH - 7, fill: '#9db4ea' },
      s('title', {}, `${b.label}: ${fmt(b.value)} ${ci(b.lo, b.hi)}`)));
    if (b.lo != null) g.append(s('line', { x1: xs(b.lo), x2: xs(b.hi), y1: y + RH / 2, y2: y + RH / 2, stroke: '#1d2430' }));
    g.append(s('text', { x: W - 55, y: y + 13 }, fmt(b.value)));
  });
  return g;
}

/* ---------- pages ---------- */
async function pageRuns(args) {
  const data = await api('runs', args);
  const f = h('div', { class: 'filters' },
    h('label', { text: 'label' }), h('input', { id: 'f-label', value: args.label || '' }),
    h('label', { text: 'commit' }), h('input', { id: 'f-commit', value: args.commit || '', size: 10 }),
    h('label', { text: 'judge' }), h('select', { id: 'f-judge' }, h('option', { value: '', text: 'any' }),
      data.judges.map((j) => h('option', { value: j, selected: j === args.judge, text: j }))),
    h('button', { text: 'Filter', onclick: () => go('runs', { label: val('f-label'), commit: val('f-commit'), judge: val('f-judge') }) }));
  const runs = data.runs;
  const series = {};
  for (const r of runs) for (const a of r.aggregates) {
    const k = `${a.metric} · ${a.system}`;
    (series[k] = series[k] || []);
  }
  for (const k of Object.keys(series)) {
    series[k] = runs.map((r) => {
      const a = r.aggregates.find((x) => `${x.metric} · ${x.system}` === k) || {};
      return { x: r.label || r.run_id, mean: a.mean, lo: a.lo, hi: a.hi };
    });
  }
  const table = h('table', {}, h('tr', {}, ['time', 'label', 'commit', 'judge', 'gates', ''].map((t) => h('th', { text: t }))),
    runs.slice().reverse().map((r, i, all) => h('tr', {},
      h('td', { text: r.time }), h('td', {}, h('a', { href: `#/run?run=${encodeURIComponent(r.run_id)}`, text: r.label || r.run_id })),
      h('td', { text: (r.git_commit || '').slice(0, 10) }), h('td', { text: r.judge_model || '' }),
      h('td', {}, r.gates.length ? h('span', { class: r.gates_failed ? 'bad' : 'good',
        text: `${r.gates_passed} passed, ${r.gates_failed} failed` }) : h('span', { class: 'muted', text: 'no gates' })),
      h('td', {}, all[i + 1] ? h('a', { href: `#/compare?a=${encodeURIComponent(all[i + 1].run_id)}&b=${encodeURIComponent(r.run_id)}`,
        text: 'vs previous' }) : ''))));
  show(h('h1', { text: `Runs (${runs.length})` }), f,
    h('div', { class: 'grid' }, Object.entries(series).map(([k, pts]) => h('div', { class: 'panel' }, trendChart(pts, k)))),
    h('h2', { text: 'History' }), table);
}
const val = (id) => (document.getElementById(id) || {}).value || '';

async function pageRun(args) {
  const r = await api('run', args);
  const n = r.counts.map((c) => `${c.n} (${c.system})`).join(', ');
  const failed = r.gates.filter((g) => g.status && g.status !== 'pass').length;
  const cards = h('div', { class: 'cards' },
    h('div', { class: 'card' }, 'items', h('b', { text: n || '0' })),
    h('div', { class: 'card' }, 'gates', h('b', { class: failed ? 'bad' : 'good', text: r.gates.length ? `${r.gates.length - failed}/${r.gates.length} pass` : '–' })),
    h('div', { class: 'card' }, 'judge', h('b', { text: (r.judge && r.judge.model) || '–' })),
    h('div', { class: 'card' }, 'commit', h('b', { text: (r.git_commit || '–').slice(0, 10) })),
    h('div', { class: 'card' }, 'baseline', h('b', { text: r.baseline ? (r.baseline.label || r.baseline.run_id) : 'none' })));
  const metrics = [...new Set(r.aggregates.map((a) => a.metric))];
  const cells = {};
  for (const a of r.aggregates) cells[`${a.system}\u0000${a.dim}\u0000${a.value}\u0000${a.metric}`] = a;
  const slices = [...new Set(r.aggregates.map((a) => `${a.system}\u0000${a.dim}\u0000${a.value}`))];
  const table = h('table', { id: 'slices' }, h('tr', {}, h('th', { text: 'system' }), h('th', { text: 'slice' }), h('th', { class: 'num', text: 'n' }),
    metrics.map((m) => h('th', { class: 'num', text: m }))),
    slices.map((k) => {
      const [system, dim, value] = k.split('\u0000');
      const first = metrics.map((m) => cells[`${k}\u0000${m}`]).find(Boolean) || {};
      return h('tr', {}, h('td', { text: system }), h('td', { text: dim === 'all' ? 'all' : `${dim} = ${value}` }),
        h('td', { class: 'num', text: fmt(first.n) }),
        metrics.map((m) => { const a = cells[`${k}\u0000${m}`]; return h('td', { class: 'num' }, a ? [fmt(a.mean), h('span', { class: 'ci', text: ci(a.lo, a.hi) })] : '–'); }));
    }));
  const hist = {};
  for (const b of r.histograms) { const k = `${b.metric} · ${b.system}`; (hist[k] = hist[k] || new Array(10).fill(0))[b.bin] = b.n; }
  const histos = Object.entries(hist).map(([k, counts]) => {
    const max = Math.max(...counts);
    return h('div', { class: 'panel' }, bars(counts.map((c, i) => ({ label: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}`, value: c })), `distribution: ${k}`, max));
  });
  const dims = [...new Set(r.aggregates.filter((a) => a.dim !== 'all').map((a) => a.dim))];
  const sliceBars = [];
  for (const d of dims) for (const m of metrics) {
    const items = r.aggregates.filter((a) => a.dim === d && a.metric === m).map((a) => ({ label: `${a.value} · ${a.system}`, value: a.mean, lo: a.lo, hi: a.hi }));
    if (items.length) sliceBars.push(h('div', { class: 'panel' }, bars(items, `${m} by ${d}`)));
  }
  show(h('h1', { text: `Run ${r.label || r.run_id}` }), h('p', { class: 'muted', text: `${r.run_id} · ${r.time}` }), cards,
    h('p', {}, h('a', { href: `#/items?run=${encodeURIComponent(r.run_id)}`, text: 'Items of this run →' })),
    h('h2', { text: r.baseline ? `What changed against ${r.baseline.label || r.baseline.run_id}` : 'What changed' }),
    r.deltas.length ? h('div', { class: 'panel' }, forest(r.deltas, 'paired delta (this run − baseline), 95% interval (as evalua diff gives it)')) :
      h('p', { class: 'muted', text: 'no earlier run to compare with' }),
    h('h2', { text: 'Slices × metrics (mean, 95% interval)' }), table,
    h('h2', { text: 'Score distributions' }), h('div', { class: 'grid' }, histos),
    sliceBars.length ? [h('h2', { text: 'Slices' }), h('div', { class: 'grid' }, sliceBars)] : [],
    r.unmeasured.length ? [h('h2', { text: 'Unmeasured' }), h('table', {}, r.unmeasured.map((u) => h('tr', {},
      h('td', { text: u.metric }), h('td', { text: u.system }), h('td', { class: 'num', text: u.n }), h('td', { text: u.reason || '' }))))] : []);
}

/* The items page and the label queue share the keyboard: j/k move, Enter
 * opens, 1-5 (or p/f) labels the selected item, n writes a note first. */
function labelKeys(onOpen) {
  document.onkeydown = async (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT' || e.target.tagName === 'TEXTAREA') return;
    const rows = [...document.querySelectorAll('tr.row')];
    if (!rows.length) return;
    if (e.key === 'j' || e.key === 'k') {
      state.sel = Math.max(0, Math.min(rows.length - 1, state.sel + (e.key === 'j' ? 1 : -1)));
      markSel(rows);
    } else if (e.key === 'Enter') onOpen(state.list[state.sel]);
    else if (e.key === 'n') { e.preventDefault(); openNote(); }
    else {
      const v = keyValue(e.key);
      if (v !== null) await saveLabel(state.list[state.sel], v, rows[state.sel]);
    }
  };
}
function keyValue(key) {
  const scale = state.scale || '1..5';
  if (scale === 'pass/fail') return key === 'p' ? 1 : key === 'f' ? 0 : null;
  const [lo, hi] = scale.split('..').map(Number);
  const n = Number(key);
  return /^[0-9]$/.test(key) && n >= lo && n <= hi ? n : null;
}
function markSel(rows) {
  rows.forEach((r, i) => r.classList.toggle('sel', i === state.sel));
  if (rows[state.sel]) rows[state.sel].scrollIntoView({ block: 'nearest' });
}
function openNote() {
  const box = document.getElementById('note-box');
  if (!box) return;
  box.classList.add('open');
  document.getElementById('note').focus();
}
async function saveLabel(it, value, row) {
  if (!it) return;
  const metric = val('label-metric') || state.labelMetric;
  const noteEl = document.getElementById('note');
  const note = noteEl ? noteEl.value : '';
  try {
    const l = await post('label', { item: it.item, system: it.system, metric, value, note, run: it.run_id || state.run });
    status(`labelled ${idText(it.item)} ${metric} = ${l.value} as ${l.rater}`);
    if (row) { const c = row.querySelector('.lab'); if (c) c.textContent = `${l.value}${l.note ? ' ✎' : ''}`; }
    if (noteEl) { noteEl.value = ''; document.getElementById('note-box').classList.remove('open'); }
    const rows = [...document.querySelectorAll('tr.row')];
    state.sel = Math.min(rows.length - 1, state.sel + 1);
    markSel(rows);
  } catch (err) { status(`label not saved: ${err.message}`); }
}
function labelBar(metrics) {
  const scale = state.scale || '1..5';
  return h('div', { class: 'filters' },
    h('label', { text: 'label metric' }),
    h('select', { id: 'label-metric', onchange: (e) => { state.labelMetric = e.target.value; } },
      metrics.map((m) => h('option', { value: m, selected: m === state.labelMetric, text: m }))),
    h('span', { class: 'keys', text: `keys: j/k move · Enter open · ${scale === 'pass/fail' ? 'p/f' : scale.replace('..', '-')} label (${scale}) · n note · rater ${state.info.rater}` }),
    h('span', { id: 'note-box', class: 'note-box' }, h('input', { id: 'note', placeholder: 'note for the next label', size: 40,
      onkeydown: (e) => { if (e.key === 'Escape' || e.key === 'Enter') { e.target.blur(); } } })));
}
async function labelsByItem(metric) {
  const out = {};
  for (const l of await api('labels', { metric })) out[`${l.system || ''}\u0000${JSON.stringify(l.item)}`] = l;
  return out;
}

async function pageItems(args) {
  const run = await api('run', { run: args.run });
  state.run = run.run_id;
  const metrics = run.metrics.map((m) => (typeof m === 'string' ? m : m.name));
  state.labelMetric = state.labelMetric && metrics.includes(state.labelMetric) ? state.labelMetric : metrics[0];
  const page = Number(args.page || 1);
  if (args.q && run.search_index === false && state.info.kind !== 'export') status('searching (a run\'s first search may read every row: seconds on a large run)…');
  const res = await searchItems(Object.assign({ per: 50 }, args, { run: run.run_id, page }));
  if (!res) return;
  if (res.indexed) status(`built the run's search index in ${res.indexed.toFixed(1)} s (once: the next searches read it)`);
  const labs = state.labelMetric ? await labelsByItem(state.labelMetric) : {};
  state.list = res.rows.map((r) => Object.assign(r, { run_id: run.run_id }));
  state.sel = 0;
  const dims = [...new Set(run.aggregates.filter((a) => a.dim !== 'all').map((a) => a.dim))];
  const setArg = (k, v) => { const a = Object.assign({}, args, { page: 1 }); if (v === '' || v === false) delete a[k]; else a[k] = v; go('items', a); };
  const filters = h('div', { class: 'filters' },
    h('select', { id: 'f-system', onchange: (e) => setArg('system', e.target.value) }, h('option', { value: '', text: 'every system' }),
      run.systems.map((x) => h('option', { value: x, selected: x === args.system, text: x }))),
    h('select', { id: 'f-metric', onchange: (e) => setArg('metric', e.target.value) }, h('option', { value: '', text: 'any metric' }),
      metrics.map((m) => h('option', { value: m, selected: m === args.metric, text: m }))),
    h('label', { text: 'below' }), h('input', { id: 'f-below', size: 5, value: args.below || '', onchange: (e) => setArg('below', e.target.value) }),
    h('label', {}, h('input', { type: 'checkbox', id: 'f-unmeasured', checked: args.unmeasured === '1', onchange: (e) => setArg('unmeasured', e.target.checked ? '1' : '') }), ' unmeasured'),
    h('label', {}, h('input', { type: 'checkbox', id: 'f-failing', checked: args.failing === '1', onchange: (e) => setArg('failing', e.target.checked ? '1' : '') }), ' failing (< 0.5)'),
    h('label', {}, h('input', { type: 'checkbox', id: 'f-disagree', checked: args.disagree === '1', onchange: (e) => setArg('disagree', e.target.checked ? '1' : '') }), ' systems disagree'),
    dims.map((d) => h('select', { onchange: (e) => setArg(`slice.${d}`, e.target.value) }, h('option', { value: '', text: `any ${d}` }),
      [...new Set(run.aggregates.filter((a) => a.dim === d).map((a) => a.value))].map((v) => h('option', { value: v, selected: args[`slice.${d}`] === v, text: v })))),
    h('input', { id: 'f-q', placeholder: 'search query, answer, contexts', size: 30, value: args.q || '', onchange: (e) => setArg('q', e.target.value) }));
  const sortBy = (m) => () => go('items', Object.assign({}, args, { sort: m, desc: args.sort === m && args.desc !== '1' ? '1' : '' }));
  const head = h('tr', {}, h('th', { class: 'sort', text: 'id', onclick: sortBy('id') }), h('th', { text: 'system' }), h('th', { text: 'query' }),
    metrics.map((m) => h('th', { class: 'num sort', text: m + (args.sort === m ? (args.desc === '1' ? ' ▼' : ' ▲') : ''), onclick: sortBy(m) })),
    h('th', { text: `label (${state.labelMetric || ''})` }));
  const open = (it) => { state.back = location.hash; go('item', { run: run.run_id, system: it.system, id: JSON.stringify(it.item) }); };
  const body = state.list.map((it) => {
    const l = labs[`${it.system}\u0000${JSON.stringify(it.item)}`] || labs[`\u0000${JSON.stringify(it.item)}`];
    return h('tr', { class: 'row', 'data-id': JSON.stringify(it.item) },
      h('td', {}, h('a', { href: `#/item?${new URLSearchParams({ run: run.run_id, system: it.system, id: JSON.stringify(it.item) })}`, text: idText(it.item) })),
      h('td', { text: it.system }), h('td', { text: it.query || '' }),
      metrics.map((m) => { const sc = it.scores[m]; return h('td', { class: 'num', title: sc && sc.reason ? sc.reason : undefined },
        sc ? (sc.value == null ? [h('span', { class: 'muted', text: 'unmeasured' }), h('span', { class: 'ci', text: (sc.reason || '').slice(0, 60) })] : fmt(sc.value)) : ''); }),
      h('td', { class: 'lab', text: l ? `${l.value}${l.note ? ' ✎' : ''}` : '' }));
  });
  const pages = Math.max(1, Math.ceil(res.total / res.per));
  const nav = h('div', { class: 'filters' },
    h('span', { id: 'total', text: `${res.total} items · page ${page} of ${pages}` }),
    res.of > res.exported ? h('span', { class: 'bad', text: `this export holds the first ${res.exported} of the run's ${res.of} items` }) : null,
    page > 1 ? h('button', { text: '← previous', onclick: () => go('items', Object.assign({}, args, { page: page - 1 })) }) : null,
    page < pages ? h('button', { text: 'next →', onclick: () => go('items', Object.assign({}, args, { page: page + 1 })) }) : null);
  show(h('h1', { text: `Items of ${run.label || run.run_id}` }), filters, labelBar(metrics), nav,
    h('table', { id: 'items' }, head, body), res.texts_missing ? h("p", { class: "muted", text: `texts: ${res.texts_missing}` }) : null);
  markSel([...document.querySelectorAll('tr.row')]);
  labelKeys(open);
}

/* The trajectory, as the server marked it (evalua.agent.view's rule). */
function trajectory(t) {
  if (!t) return null;
  if (t.error) return [h('h2', { text: 'Trajectory' }), h('p', { class: 'bad', text: t.error })];
  const out = [h('h2', { text: 'Trajectory' })];
  for (const st of t.steps) {
    const off = st.calls.some((c) => c.mark && c.mark !== 'ok');
    out.push(h('div', { class: `step${off ? ' off' : ''}` },
      h('div', { class: 'muted', text: `step ${st.n} · ${st.role}${st.tool ? ' · answer of ' + st.tool : ''}` }),
      st.text ? h('pre', { text: st.text }) : null,
      st.calls.map((c) => h('div', { class: 'call' }, h('b', { text: `call ${c.name}` }),
        h('pre', { text: c.arguments !== undefined ? JSON.stringify(c.arguments) : `${c.raw} (not JSON)` }),
        c.why || c.error ? h('p', { class: c.mark === 'ok' ? 'good' : 'bad',
          text: [c.why, c.error ? `failed: ${c.error}` : null].filter(Boolean).join(' · ') }) : null))));
  }
  if (t.missing.length) out.push(h('p', { class: 'bad', text: `expected, never called: ${t.missing.map((m) => `${m.name} ${JSON.stringify(m.arguments || {})}`).join('; ')}` }));
  if (t.score !== undefined && t.score !== null) out.push(h('p', { class: 'muted', text: `expected calls met, arguments counted: ${fmt(t.score)}` }));
  if (t.stop_reason) out.push(h('p', { class: 'muted', text: `stopped: ${t.stop_reason}` }));
  return out;
}

/* The item in every system of the run side by side (a prompt matrix's cells): the output with the words
 * the first cell's output lacks marked, each assertion's verdict, latency and cost. */
function sideBySide(others) {
  if (!others || others.length < 2) return null;
  const words = (t) => new Set(String(t || '').toLowerCase().split(/\s+/).filter(Boolean));
  const first = words((others[0].row || {}).answer);
  const marked = (text) => String(text || '').split(/(\s+)/).map((w) => (w.trim() && !first.has(w.toLowerCase()) ? h('mark', { text: w }) : w));
  return [h('h2', { text: `Side by side (${others.length} systems)` }), h('div', { class: 'side' }, others.map((o, i) => {
    const row = o.row || {};
    const asserts = [];
    for (const sc of o.scores) for (const a of (((sc.detail || {}).assertions) || [])) asserts.push(a);
    return h('div', { class: 'panel' }, h('b', { text: o.system }),
      h('div', { class: 'muted', text: [row.prompt_name && `prompt ${row.prompt_name}`, row.provider && `provider ${row.provider}`,
        row.latency_ms !== undefined && `${row.latency_ms} ms`, row.cost !== undefined && `$${fmt(row.cost, 4)}`].filter(Boolean).join(' · ') }),
      row.prompt ? h('pre', { text: String(row.prompt) }) : null,
      h('pre', {}, i === 0 ? String(row.answer ?? '') : marked(row.answer)),
      asserts.length ? h('ul', {}, asserts.map((a) => h('li', { class: a.pass ? 'good' : 'bad', text: `${a.pass ? '✓' : '✗'} ${a.name}: ${a.reason || ''}` }))) : null,
      h('div', { class: 'muted', text: o.scores.map((sc) => `${sc.metric} ${sc.value == null ? 'unmeasured' : fmt(sc.value)}`).join(' · ') }));
  }))];
}

/* The judge's prompt and raw answer behind each judged score, from the judge's cache; a call the
 * cache cannot give says why ("not in the cache: ..."). */
function judgeCalls(list) {
  if (!list || !list.length) return null;
  return [h('h2', { text: 'Judge prompts and answers' }), h('div', { id: 'judge' }, list.map((j) => h('div', { class: 'panel judge-metric' },
    h('b', { text: j.metric }), j.calls.map((c, i) => h('div', { class: `judge-call ${c.status}` },
      h('div', { class: 'muted', text: [`call ${i + 1}: ${c.operation || ''}`, c.model && `model ${c.model}`,
        c.latency_ms !== undefined && `${fmt(c.latency_ms, 0)} ms`, c.key && `cache entry ${c.key.slice(0, 12)}`].filter(Boolean).join(' · ') }),
      c.status === 'cached'
        ? [h('details', { class: 'prompt', open: true }, h('summary', { text: 'prompt' }),
            c.messages.map((m) => [h('div', { class: 'muted', text: m.role }), h('pre', { class: 'judge-prompt', text: m.content })])),
          h('div', { class: 'muted', text: 'raw answer' }), h('pre', { class: 'judge-answer', text: c.answer })]
        : h('p', { class: 'not-cached', text: `not in the cache: ${c.why}` }))))))];
}

async function pageItem(args) {
  const it = await api('item', args);
  const row = it.row || {};
  const ctx = Array.isArray(row.contexts) ? row.contexts : [];
  const scoreRows = it.scores.map((sc) => h('tr', {}, h('td', { text: sc.metric }),
    h('td', { class: 'num' }, sc.value == null ? h('span', { class: 'muted', text: 'unmeasured' }) : fmt(sc.value)),
    h('td', { text: sc.reason || '' }),
    h('td', {}, sc.detail ? h('details', {}, h('summary', { text: 'detail' }), h('pre', { text: JSON.stringify(sc.detail, null, 2) })) : '')));
  const across = {};
  for (const a of it.across) (across[a.metric] = across[a.metric] || []).push({ x: a.label || a.run_id, mean: a.value });
  const metrics = it.scores.map((x) => x.metric);
  state.labelMetric = state.labelMetric && metrics.includes(state.labelMetric) ? state.labelMetric : metrics[0];
  state.list = [{ item: it.item, system: it.system, run_id: it.run_id }];
  state.sel = 0;
  show(h('h1', { text: `Item ${idText(it.item)} · ${it.system}` }),
    h('p', {}, h('a', { href: state.back || `#/items?run=${encodeURIComponent(it.run_id)}`, text: '← items' }),
      ' ', Object.entries(it.slices).map(([k, v]) => h('span', { class: 'label-tag', text: `${k}: ${v}` }))),
    labelBar(metrics),
    h('table', { class: 'hidden-row' }, h('tr', { class: 'row sel' }, h('td', { text: 'your label' }), h('td', { class: 'lab', text: '' }))),
    it.texts_missing ? h('p', { class: 'muted', text: `texts: ${it.texts_missing}` }) : null,
    row.query !== undefined ? [h('h2', { text: 'Query' }), h('pre', { text: String(row.query) })] : null,
    ctx.length ? [h('h2', { text: `Contexts (${ctx.length})` }), ctx.map((c, i) => h('div', { class: 'ctx' },
      h('span', { class: 'muted', text: `#${i + 1}${c.id ? ' ' + c.id : ''}` }), h('div', { text: typeof c === 'string' ? c : (c.text || JSON.stringify(c)) })))] : null,
    row.answer !== undefined ? [h('h2', { text: 'Answer' }), h('pre', { text: String(row.answer) })] : null,
    row.gold_answers ? [h('h2', { text: 'Gold answers' }), h('ul', {}, [].concat(row.gold_answers).map((g) => h('li', { text: String(g) })))] : null,
    trajectory(it.trajectory),
    sideBySide(it.others),
    h('h2', { text: 'Metrics' }), h('table', { id: 'scores' }, h('tr', {}, ['metric', 'score', 'reason', ''].map((t) => h('th', { text: t }))), scoreRows),
    judgeCalls(it.judge),
    it.labels.length ? [h('h2', { text: 'Labels' }), h('table', { id: 'item-labels' }, it.labels.map((l) => h('tr', {},
      h('td', { text: l.metric }), h('td', { text: `${l.value} (${l.scale})` }), h('td', { text: l.rater }), h('td', { text: l.time }), h('td', { text: l.note || '' }))))] : null,
    Object.keys(across).length ? [h('h2', { text: 'Scores across runs' }), h('div', { class: 'grid' },
      Object.entries(across).map(([m, pts]) => h('div', { class: 'panel' }, trendChart(pts, m))))] : null,
    h('details', {}, h('summary', { text: 'the row as given' }), h('pre', { text: JSON.stringify(row, null, 2) })));
  labelKeys(() => {});
}

async function pageQueue(args) {
  const run = await api('run', { run: args.run });
  const metrics = run.metrics.map((m) => (typeof m === 'string' ? m : m.name));
  const metric = args.metric || state.labelMetric || metrics[0];
  state.labelMetric = metric;
  const q = await api('queue', { run: run.run_id, metric, n: 50 });
  state.list = q.items.map((x) => Object.assign(x, { run_id: run.run_id }));
  state.sel = 0;
  show(h('h1', { text: `Label queue: ${metric}` }),
    h('p', { id: 'needed', class: q.needed ? 'bad' : 'good', text: q.needed ? `${q.labelled} items labelled; the calibration rule (Spearman ≥ ${q.rule.spearman} on ≥ ${q.rule.labels} labels) needs ${q.needed} more`
      : `${q.labelled} items labelled: enough for the calibration rule (≥ ${q.rule.labels})` }),
    h('p', { class: 'muted', text: `least certain first (score near 0.5, split votes, systems that disagree), taken in turn over ${q.dim || 'the run'}; ${q.unlabelled} unlabelled` }),
    labelBar([metric]),
    DATA ? null : h('div', { class: 'filters' },
      h('a', { href: `/api/labels_jsonl?metric=${encodeURIComponent(metric)}`, download: `labels-${metric}.jsonl`, text: 'export labels (JSONL)' }),
      h('label', { text: 'import labels (JSONL):' }),
      h('input', { type: 'file', id: 'import', accept: '.jsonl,.json,application/x-ndjson', onchange: async (e) => {
        const file = e.target.files[0];
        if (!file) return;
        try {
          const r = await post('labels_import', null, await file.text());
          status(`imported ${r.added} labels (${r.already} there already)`);
        } catch (err) { status(`import refused: ${err.message}`); }
      } })),
    h('table', { id: 'queue' }, h('tr', {}, ['id', 'system', 'stratum', 'score', 'why', 'label'].map((t) => h('th', { text: t }))),
      state.list.map((it) => h('tr', { class: 'row' }, h('td', {}, h('a', { href: `#/item?${new URLSearchParams({ run: run.run_id, system: it.system, id: JSON.stringify(it.item) })}`, text: idText(it.item) })),
        h('td', { text: it.system }), h('td', { text: it.stratum }), h('td', { class: 'num', text: fmt(it.value) }), h('td', { text: it.why }), h('td', { class: 'lab' })))));
  markSel([...document.querySelectorAll('tr.row')]);
  labelKeys((it) => { state.back = location.hash; go('item', { run: run.run_id, system: it.system, id: JSON.stringify(it.item) }); });
}

async function pageCalibration(args) {
  const run = await api('run', { run: args.run });
  const metrics = run.metrics.map((m) => (typeof m === 'string' ? m : m.name));
  const metric = args.metric || state.labelMetric || metrics[0];
  const c = await api('calibration', { metric, run: args.run });
  show(h('h1', { text: `Calibration: ${metric}` }),
    h('div', { class: 'filters' }, h('select', { onchange: (e) => go('calibration', { metric: e.target.value }) },
      metrics.map((m) => h('option', { value: m, selected: m === metric, text: m })))),
    h('p', { class: 'muted', text: 'what scripts/calibrate.lua computes from the store\'s labels' + (c.command ? `: ${c.command}` : '') }),
    h('pre', { id: 'calibration', text: c.text }));
}

async function pageCompare(args) {
  const runs = (await api('runs', {})).runs;
  const a = args.a || (runs[runs.length - 2] || {}).run_id, b = args.b || (runs[runs.length - 1] || {}).run_id;
  const pick = (id, cur) => h('select', { id, onchange: () => go('compare', { a: val('c-a'), b: val('c-b') }) },
    runs.map((r) => h('option', { value: r.run_id, selected: r.run_id === cur, text: r.label || r.run_id })));
  const head = [h('h1', { text: 'Two runs compared' }), h('div', { class: 'filters' }, 'baseline ', pick('c-a', a), ' against ', pick('c-b', b))];
  if (!a || !b) return show(...head, h('p', { class: 'muted', text: 'two runs are needed' }));
  const c = await api('compare', { a, b });
  show(...head, h('div', { class: 'panel' }, forest(c.deltas, 'paired delta (b − a), 95% interval (as evalua diff gives it)')),
    h('h2', { text: `Flips at ${c.pass} (${c.flips.length})` }),
    h('table', { id: 'flips' }, h('tr', {}, ['metric', 'system', 'item', 'before', 'after'].map((t) => h('th', { text: t }))),
      c.flips.map((f) => h('tr', {}, h('td', { text: f.metric }), h('td', { text: f.system }),
        h('td', {}, h('a', { href: `#/item?${new URLSearchParams({ run: b, system: f.system, id: JSON.stringify(f.item) })}`, text: idText(f.item) })),
        h('td', { class: 'num', text: fmt(f.before) }), h('td', { class: `num ${f.after < f.before ? 'bad' : 'good'}`, text: fmt(f.after) })))),
    h('h2', { text: 'Per slice' }),
    h('table', {}, h('tr', {}, ['slice', 'metric', 'system', 'before', 'after', 'delta'].map((t) => h('th', { text: t }))),
      c.slices.map((r) => h('tr', {}, h('td', { text: r.dim === 'all' ? 'all' : `${r.dim} = ${r.value}` }), h('td', { text: r.metric }), h('td', { text: r.system }),
        h('td', { class: 'num', text: fmt(r.before) }), h('td', { class: 'num', text: fmt(r.after) }),
        h('td', { class: 'num', text: r.before != null && r.after != null ? fmt(r.after - r.before) : '–' })))));
}

async function start() {
  state.info = await api('info');
  state.scale = state.info.scale;
  status(`${state.info.file}${state.info.readonly ? ' · read-only' : ''}`);
  window.addEventListener('hashchange', route);
  route();
}
start().catch((e) => show(h('p', { class: 'bad', text: `Error: ${e.message}` })));
