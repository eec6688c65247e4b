/* global document, window, EventSource */
// The session-handoff dashboard: one card per workspace, kept live by server-sent events.
// Everything from the daemon is put into the page as text (textContent) — except HANDOFF.md, which
// the daemon renders with every character of the source escaped. No inline script: the page's CSP
// allows scripts from this origin only. Times in words and the order of the cards come from the
// daemon's own compiled modules (protocol/time-words.ts, protocol/urgency.ts, protocol/way-out.ts), so the page and the
// CLI say the same.
import { formatAge, formatDuration, formatRelative } from '/dashboard/lib/time-words.js';
import { compareUrgency, urgencyRank } from '/dashboard/lib/urgency.js';
import { wayOutSentence } from '/dashboard/lib/way-out.js';

const SVG = 'http://www.w3.org/2000/svg';
const SERIES_COLOURS = ['#2563eb', '#9333ea', '#0d9488', '#c2410c', '#4d7c0f', '#be185d', '#0369a1', '#854d0e'];
const STEP_MARK = { done: '✓', running: '▸', blocked: '✗', pending: '·' };

const state = {
  cards: new Map(),
  daemon: null,
  /** Server time minus our time, so ages follow the daemon's clock. */
  skewMs: 0,
  /** root → { id, loading, error, revisions } of the cycle whose HANDOFF.md is open. */
  open: new Map(),
};

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'class') el.className = value;
    else if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof window.Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) if (value !== null && value !== undefined) el.setAttribute(name, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof window.Node ? child : document.createTextNode(String(child)));
  return el;
}

const now = () => Date.now() + state.skewMs;

const age = (iso) => formatAge((now() - Date.parse(iso)) / 1000);
const duration = (seconds) => (seconds === null || seconds === undefined ? '' : formatDuration(seconds));

// The reader's own locale (the browser's languages), never a fixed one.
const LOCALE = navigator.languages && navigator.languages.length > 0 ? navigator.languages : undefined;
const DATE_TIME = new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeStyle: 'short' });
const TIME = new Intl.DateTimeFormat(LOCALE, { timeStyle: 'short' });
const dateTime = (ms) => DATE_TIME.format(new Date(ms));

/** "in 2 h 5 min", with the moment itself in the reader's locale beside it. */
function moment(ms) {
  return h('span', { class: 'moment', title: dateTime(ms) }, `${formatRelative((ms - now()) / 1000)} (${dateTime(ms)})`);
}

/** Text with `command` spans shown as code; every part goes in as text, never as markup. */
function words(text) {
  return String(text)
    .split('`')
    .map((part, i) => (i % 2 === 1 ? h('code', {}, part) : part));
}

const ageSpan = (iso) => h('span', { class: 'age', 'data-at': iso }, age(iso));

function percentText(value) {
  return value === null || value === undefined ? 'unknown' : `${value} %`;
}

function level(percent, thresholds) {
  if (percent === null || percent === undefined) return 'unknown';
  if (percent >= thresholds.evacuate_percent) return 'evacuate';
  if (percent >= thresholds.prepare_percent) return 'prepare';
  return 'fine';
}

// ---------------------------------------------------------------- the pressure timeline

const STAGE_SHORT = {
  PREPARE: 'PREPARE',
  EVACUATE: 'EVACUATE',
  HANDOFF_READY: 'READY',
  TAKEOVER: 'TAKEOVER',
  RETURN_HANDOFF_READY: 'RETURN',
  CLOSED: 'CLOSED',
};

/** A stage label's 10 px font (app.css), measured wide: Chromium's widest capital is ~7 px; rows 12 px apart. */
const LABEL_CHAR_PX = 7.2;
const LABEL_GAP_PX = 4;
const LABEL_ROW_PX = 12;

/** The stage entries since the workspace last was NORMAL (or CLOSED): the cycle the timeline is about. */
function episodeMarks(stages) {
  const list = stages || [];
  let from = 0;
  list.forEach((mark, i) => {
    if (mark.stage === 'NORMAL') from = i + 1;
  });
  return list.slice(from);
}

function timeline(card) {
  const { thresholds } = card.status;
  const W = 720;
  const H = 230;
  const pad = { left: 44, right: 132, top: 14, bottom: 30 };
  const series = card.history.filter((x) => x.points.some((p) => p.percent !== null));
  const marks = episodeMarks(card.stages);
  // A blocked way out (PREPARE's rehearsal, journaled with the workspace) is marked where it was found.
  const wayOut = card.status.way_out;
  const blockedAt = wayOut && wayOut.state === 'blocked' && wayOut.checked_at ? Date.parse(wayOut.checked_at) : null;
  const times = [
    ...series.flatMap((x) => x.points.map((p) => Date.parse(p.t))),
    ...marks.map((m) => Date.parse(m.at)),
    ...(blockedAt === null ? [] : [blockedAt]),
  ];
  const end = Math.max(now(), ...times);
  // At least two minutes wide, with a little room before the first reading.
  const start = Math.min(end - 2 * 60_000, ...times.map((t) => t - 15_000));
  const peak = Math.max(100, ...series.flatMap((x) => x.points.map((p) => p.percent ?? 0)));
  const top = Math.ceil(peak / 10) * 10;
  const x = (t) => pad.left + ((t - start) / Math.max(1, end - start)) * (W - pad.left - pad.right);
  const y = (p) => pad.top + (1 - p / top) * (H - pad.top - pad.bottom);

  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': `pressure timeline of ${card.root}` });
  for (let p = 0; p <= top; p += 25) {
    svg.append(s('line', { x1: pad.left, x2: W - pad.right, y1: y(p), y2: y(p), class: 'grid' }));
    svg.append(s('text', { x: pad.left - 6, y: y(p) + 4, class: 'axis', 'text-anchor': 'end' }, `${p}`));
  }
  const relax = thresholds.prepare_percent - thresholds.hysteresis_percent;
  svg.append(s('line', { x1: pad.left, x2: W - pad.right, y1: y(relax), y2: y(relax), class: 'threshold relax', 'data-line': 'relax' }));
  for (const [name, value] of [
    ['prepare', thresholds.prepare_percent],
    ['evacuate', thresholds.evacuate_percent],
  ]) {
    svg.append(s('line', { x1: pad.left, x2: W - pad.right, y1: y(value), y2: y(value), class: `threshold ${name}`, 'data-line': String(value) }));
    svg.append(s('text', { x: W - pad.right + 4, y: y(value) + 4, class: `threshold-label ${name}` }, `${value} % ${name.toUpperCase()}`));
  }
  svg.append(s('text', { x: pad.left, y: H - 8, class: 'axis' }, TIME.format(new Date(start))));
  // Where this episode's stages began: a line and the stage's name at the top. Stages a few seconds
  // apart would print over each other: each name takes the first row where it clears the others, to
  // the left of its line where the right would run past the plot into the threshold labels.
  const rows = [];
  for (const mark of marks) {
    const mx = x(Date.parse(mark.at));
    const text = STAGE_SHORT[mark.stage] || mark.stage;
    const width = text.length * LABEL_CHAR_PX;
    const left = mx + 3 + width > W - pad.right;
    const span = left ? [mx - 3 - width, mx - 3] : [mx + 3, mx + 3 + width];
    const clear = (taken) => taken.every(([a, b]) => span[1] + LABEL_GAP_PX <= a || b + LABEL_GAP_PX <= span[0]);
    let row = rows.findIndex(clear);
    if (row === -1) row = rows.push([]) - 1;
    rows[row].push(span);
    svg.append(s('line', { x1: mx, x2: mx, y1: pad.top, y2: H - pad.bottom, class: `stage-mark ${mark.stage}`, 'data-stage': mark.stage }));
    svg.append(
      s(
        'text',
        { x: left ? mx - 3 : mx + 3, y: pad.top + 10 + row * LABEL_ROW_PX, 'text-anchor': left ? 'end' : 'start', class: `stage-label ${mark.stage}` },
        text,
      ),
    );
  }
  if (blockedAt !== null) {
    const bx = x(blockedAt);
    svg.append(s('line', { x1: bx, x2: bx, y1: pad.top, y2: H - pad.bottom, class: 'way-out-mark', 'data-way-out': 'blocked' }));
    svg.append(s('text', { x: bx + 3, y: pad.top + 22, class: 'way-out-label' }, 'WAY OUT BLOCKED'));
  }
  svg.append(s('text', { x: W - pad.right, y: H - 8, class: 'axis', 'text-anchor': 'end' }, 'now'));

  series.forEach((one, index) => {
    const colour = SERIES_COLOURS[index % SERIES_COLOURS.length];
    const points = one.points.filter((p) => p.percent !== null).map((p) => [x(Date.parse(p.t)), y(p.percent)]);
    if (points.length === 0) return;
    // A reading holds until the next one: draw steps, and carry the last value on to now.
    const path = points.map(([px, py], i) => (i === 0 ? `M${px},${py}` : `H${px}V${py}`)).join('');
    const last = points[points.length - 1];
    svg.append(s('path', { d: path, class: 'series', stroke: colour, 'data-series': one.key }));
    svg.append(s('path', { d: `M${last[0]},${last[1]}H${x(end)}`, class: 'series carry', stroke: colour }));
    for (const [px, py] of points) svg.append(s('circle', { cx: px, cy: py, r: 3, fill: colour }));
  });

  const legend = h(
    'ul',
    { class: 'legend' },
    series.length === 0
      ? h('li', { class: 'muted' }, 'no readings yet — the timeline fills as the agent reports')
      : [
          ...series.map((one, index) => {
            const latest = [...one.points].reverse().find((p) => p.percent !== null);
            return h(
              'li',
              {},
              h('span', { class: 'swatch', 'data-colour': index % SERIES_COLOURS.length }),
              `${one.metric}${one.limit ? ` ${one.limit}` : ''} · ${one.source}${one.executor ? ` · ${one.executor.slice(0, 12)}` : ''}`,
              latest ? h('b', {}, ` ${latest.percent} %`) : null,
            );
          }),
          h('li', { class: 'muted' }, `dotted: back to NORMAL below ${relax} %`),
        ],
  );
  return h('div', { class: 'timeline' }, svg, legend);
}

// ---------------------------------------------------------------- one workspace

function drainBlock(drain) {
  if (!drain) return null;
  if (drain.waiting) {
    return h(
      'div',
      { class: 'drain' },
      h('b', {}, `${drain.leg === 'return' ? 'Return drain' : 'Drain'}: `),
      words(`waiting ${duration(drain.waiting_seconds)} for the agent to finish its atomic step (\`handoff drained\`) or the drain timeout`),
    );
  }
  return h(
    'div',
    { class: 'drain' },
    h('b', {}, `${drain.leg === 'return' ? 'Return drain' : 'Drain'}: ${drain.done} of ${drain.total} steps`),
    drain.revision > 1 ? h('span', { class: 'muted' }, ` (revision ${drain.revision})`) : null,
    h(
      'ol',
      { class: 'steps' },
      drain.steps.map((step) =>
        h(
          'li',
          { class: `step ${step.status}`, title: step.words },
          `${STEP_MARK[step.status]} ${step.step}`,
          step.seconds !== null
            ? h('span', { class: 'muted' }, step.status === 'blocked' ? ` stopped after ${duration(step.seconds)}` : ` ${duration(step.seconds)}`)
            : null,
        ),
      ),
    ),
  );
}

function facts(card) {
  const st = card.status;
  const holder = st.lease.holder;
  const rows = [
    ['pressure', st.pressure === null ? 'unknown — no credible reading' : `${st.pressure.percent} % ${st.pressure.metric} from ${st.pressure.source}`],
    [
      'lease',
      holder === null
        ? `free${st.lease.offered ? ' — on offer to a verified accept' : ''} (last token ${st.lease.last_token})`
        : `${holder.executor} holds token ${holder.token} since ${dateTime(Date.parse(holder.acquired_at))} (${age(holder.acquired_at)})`,
    ],
  ];
  if (st.lease.last_break) rows.push(['lease break', `${st.lease.last_break.reason} (${age(st.lease.last_break.at)})`]);
  if (st.cycle) rows.push(['cycle', `${st.cycle.id} — ${st.cycle.trigger.kind}: ${st.cycle.trigger.reason}`]);
  if (st.receiving) rows.push(['receiving', `cycle ${st.receiving.cycle} from ${st.receiving.home}`]);
  rows.push(['capsule', st.capsule === null ? 'none yet' : st.capsule.error ? `INVALID: ${st.capsule.error}` : `updated ${age(st.capsule.updated_at)}`]);
  if (st.paused) rows.push(['paused', `${st.paused.scope}${st.paused.reason ? `: ${st.paused.reason}` : ''}`]);
  return h(
    'dl',
    { class: 'facts' },
    rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-fact': k }, v)]),
  );
}

function readingsTable(card) {
  const st = card.status;
  if (st.readings.length === 0) return null;
  return h(
    'table',
    { class: 'readings' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['metric', 'used', 'source', 'seen', 'resets', ''].map((t) => h('th', {}, t)),
      ),
    ),
    h(
      'tbody',
      {},
      st.readings.map((r) =>
        h(
          'tr',
          { class: r.credible ? level(r.used_percent, st.thresholds) : 'stale' },
          h('td', {}, r.limit ? `${r.metric} · ${r.limit.name ?? r.limit.id}` : r.metric),
          h('td', { class: 'num' }, percentText(r.used_percent)),
          h('td', {}, r.source, r.executor ? h('span', { class: 'muted' }, ` ${r.executor.slice(0, 12)}`) : null),
          h('td', {}, ageSpan(r.observed_at)),
          h('td', {}, r.resets_at === null ? '—' : moment(r.resets_at * 1000)),
          h('td', { class: 'muted' }, r.credible ? '' : `not counted: ${r.not_credible}`),
        ),
      ),
    ),
  );
}

async function loadCycle(root, id) {
  const current = state.open.get(root);
  if (current && current.id === id) {
    state.open.delete(root);
    render();
    return;
  }
  state.open.set(root, { id, loading: true, error: null, revisions: [] });
  render();
  try {
    const response = await fetch(`/dashboard/api/cycle?${new URLSearchParams({ workspace: root, cycle: id })}`, { credentials: 'same-origin' });
    const body = await response.json();
    if (body.error) throw new Error(`${body.error.message} — ${body.error.hint}`);
    state.open.set(root, { id, loading: false, error: null, revisions: body.data.revisions });
  } catch (error) {
    state.open.set(root, { id, loading: false, error: String(error.message || error), revisions: [] });
  }
  render();
}

function cyclesBlock(card) {
  const open = state.open.get(card.root);
  const live = card.status.cycle;
  // The cycle under way before its package is written: named, as the facts name it, but nothing to open yet.
  const pending =
    live !== null && !card.cycles.includes(live.id)
      ? h('p', { class: 'muted', 'data-cycle-pending': live.id }, `${live.id} — under way; its HANDOFF.md is written when the snapshot is packaged`)
      : null;
  const list =
    card.cycles.length === 0
      ? (pending ?? h('p', { class: 'muted' }, 'no cycle recorded yet'))
      : h(
          'div',
          { class: 'cycle-list' },
          card.cycles.map((id) =>
            h(
              'button',
              { type: 'button', class: open && open.id === id ? 'cycle active' : 'cycle', 'data-cycle': id, onclick: () => loadCycle(card.root, id) },
              id,
            ),
          ),
        );
  let doc = null;
  if (open) {
    if (open.loading) doc = h('p', { class: 'muted' }, 'loading HANDOFF.md…');
    else if (open.error) doc = h('p', { class: 'error' }, open.error);
    else {
      doc = h(
        'div',
        { class: 'handoff-docs' },
        open.revisions.map((rev) => {
          const body = h('article', { class: 'handoff-md' });
          // Rendered by the daemon from an escaped source (daemon/http/dashboard/markdown.ts).
          if (rev.handoff_html !== null) body.innerHTML = rev.handoff_html;
          else body.append(h('p', { class: 'error' }, rev.handoff_problem ?? 'HANDOFF.md is missing'));
          return h(
            'details',
            { open: rev.current ? '' : null, class: 'revision' },
            h(
              'summary',
              {},
              `${rev.leg} leg, revision ${rev.revision ?? '?'}`,
              rev.current ? ' (current)' : ' (superseded)',
              h('span', { class: `integrity ${rev.integrity}` }, rev.integrity === 'ok' ? ' integrity ok' : ` integrity FAILED: ${rev.problem}`),
              h('span', { class: 'muted' }, ` ${rev.handoff_path}`),
            ),
            body,
          );
        }),
      );
    }
  }
  return h('section', { class: 'cycles' }, h('h3', {}, 'Cycles'), card.cycles.length === 0 ? null : pending, list, doc);
}

/** PREPARE's rehearsal: the way out in the CLI's words; a blocked one is an alert, as a blocked drain is. */
function wayOutLine(st) {
  if (!st.way_out) return null;
  const text = wayOutSentence(st.way_out, { nowMs: Date.now(), evacuatePercent: st.thresholds.evacuate_percent, age: formatAge });
  const blocked = st.way_out.state === 'blocked';
  return h('p', { class: blocked ? 'blocked way-out' : 'muted way-out', 'data-testid': 'way-out', ...(blocked ? { role: 'alert' } : {}) }, text);
}

function cardElement(card) {
  const st = card.status;
  const plain = card.words;
  return h(
    'article',
    { class: `card state-${st.state}`, 'data-root': card.root, 'data-state': st.state },
    h(
      'header',
      {},
      h('h2', {}, card.root),
      h('span', { class: `badge ${st.state}`, 'data-testid': 'state' }, st.state),
      h('span', { class: 'muted' }, ' since ', ageSpan(st.stage_since)),
    ),
    h('p', { class: 'headline' }, words(plain.headline)),
    plain.blocked ? h('p', { class: 'blocked', role: 'alert' }, words(plain.blocked)) : null,
    wayOutLine(st),
    h('p', { class: 'next' }, h('b', {}, 'Next: '), words(plain.next)),
    drainBlock(plain.drain),
    h('div', { class: 'columns' }, timeline(card), facts(card)),
    readingsTable(card),
    cyclesBlock(card),
  );
}

// ---------------------------------------------------------------- the page

/** What needs a person, counted, in the order of urgency; the worst pressure and where it is. */
const SUMMARY_KINDS = [
  ['stopped', (c) => urgencyRank(c.status) === 0],
  ['evacuating', (c) => urgencyRank(c.status) !== 0 && c.status.state === 'EVACUATE'],
  ['on offer', (c) => urgencyRank(c.status) !== 0 && (c.status.state === 'HANDOFF_READY' || c.status.state === 'RETURN_HANDOFF_READY')],
  ['preparing', (c) => urgencyRank(c.status) !== 0 && c.status.state === 'PREPARE'],
  ['taken over', (c) => urgencyRank(c.status) !== 0 && c.status.state === 'TAKEOVER'],
  ['paused', (c) => c.status.paused !== null],
];

function summary(cards) {
  if (cards.length === 0) return [];
  const items = [h('li', { class: 'total' }, `${cards.length} workspace${cards.length === 1 ? '' : 's'}`)];
  for (const [kind, test] of SUMMARY_KINDS) {
    const count = cards.filter(test).length;
    if (count > 0) items.push(h('li', { class: `pill ${kind.replace(' ', '-')}`, 'data-summary': kind }, `${count} ${kind}`));
  }
  if (items.length === 1) items.push(h('li', { class: 'pill calm', 'data-summary': 'calm' }, 'nothing needs you'));
  const worst = cards.filter((c) => c.status.pressure !== null).sort((a, b) => b.status.pressure.percent - a.status.pressure.percent)[0];
  if (worst)
    items.push(
      h('li', { class: 'worst', 'data-summary': 'worst' }, `worst: ${worst.status.pressure.percent} % ${worst.status.pressure.metric} in ${worst.root}`),
    );
  return [h('ul', { class: 'summary-strip' }, items)];
}

function render() {
  const main = document.getElementById('workspaces');
  const cards = [...state.cards.values()].sort((a, b) => compareUrgency(a.status, b.status));
  document.getElementById('summary').replaceChildren(...summary(cards));
  const openDetails = new Set([...main.querySelectorAll('details.revision')].filter((d) => !d.open).map((d) => d.querySelector('summary').textContent));
  main.replaceChildren(
    ...(cards.length === 0
      ? [h('p', { class: 'muted' }, words('No workspace yet: run `handoff status` in a repository, or connect an agent (`handoff install claude`).'))]
      : cards.map(cardElement)),
  );
  // Keep superseded revisions the reader folded shut folded.
  for (const d of main.querySelectorAll('details.revision')) if (openDetails.has(d.querySelector('summary').textContent)) d.open = false;
  if (state.daemon) {
    document.getElementById('daemon').textContent =
      `daemon pid ${state.daemon.pid} on 127.0.0.1:${state.daemon.port}, up since ${dateTime(Date.parse(state.daemon.started_at))}`;
  }
}

function setLive(mode, text) {
  const el = document.getElementById('live');
  el.dataset.live = mode;
  el.textContent = text;
}

function takeOverview(overview) {
  state.skewMs = Date.parse(overview.now) - Date.now();
  state.daemon = overview.daemon;
  state.cards = new Map(overview.workspaces.map((card) => [card.root, card]));
  render();
}

function connect() {
  const events = new EventSource('/dashboard/events');
  events.addEventListener('open', () => setLive('live', 'live'));
  events.addEventListener('overview', (e) => takeOverview(JSON.parse(e.data)));
  events.addEventListener('workspace', (e) => {
    const { now: at, card } = JSON.parse(e.data);
    state.skewMs = Date.parse(at) - Date.now();
    state.cards.set(card.root, card);
    render();
  });
  events.addEventListener('error', () => {
    if (events.readyState === EventSource.CLOSED) {
      // A 401 (the daemon restarted and forgot the session) or the daemon is gone: say what to do.
      setLive('closed', 'disconnected — run `handoff open` for a new link');
    } else {
      setLive('connecting', 'reconnecting…');
    }
  });
}

setInterval(() => {
  for (const el of document.querySelectorAll('.age')) el.textContent = age(el.dataset.at);
}, 5000);

connect();
