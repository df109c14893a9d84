#!/usr/bin/env node
// Draws one trace of the spans collector.mjs received as a waterfall: each span a row, indented
// under its parent, its bar where it ran; a failed one red, with its error.type. Text on stdout, or
// an SVG image with --svg (open it in a browser; `chromium --headless --screenshot` makes a PNG).
//   node examples/traces/waterfall.mjs [spans.jsonl] [--trace TRACE_ID] [--svg out.svg]
// Without --trace: the trace with the most spans.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ options: { trace: { type: 'string' }, svg: { type: 'string' } }, allowPositionals: true });
const spans = readFileSync(positionals[0] ?? 'spans.jsonl', 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));
/** Map.groupBy, which Node 20 lacks. */
function groupBy(items, key) {
  const groups = new Map();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
const byTrace = groupBy(spans, (span) => span.traceId);
const traceId = values.trace ?? [...byTrace.keys()].sort((a, b) => byTrace.get(b).length - byTrace.get(a).length)[0];
const trace = byTrace.get(traceId);
if (!trace) throw new Error(`no trace ${traceId} in the file`);

// Rows: depth-first from the roots (a span whose parent is not in the trace is one), children by start.
const ids = new Set(trace.map((s) => s.spanId));
const children = groupBy(trace, (s) => (ids.has(s.parentSpanId) ? s.parentSpanId : ''));
const rows = [];
const walk = (parent, depth) => {
  for (const span of (children.get(parent) ?? []).sort((a, b) => Number(BigInt(a.start) - BigInt(b.start)))) {
    rows.push({ span, depth });
    walk(span.spanId, depth + 1);
  }
};
walk('', 0);
const t0 = trace.reduce((min, s) => (BigInt(s.start) < min ? BigInt(s.start) : min), BigInt(trace[0].start));
const t1 = trace.reduce((max, s) => (BigInt(s.end) > max ? BigInt(s.end) : max), BigInt(trace[0].end));
const totalMs = Number(t1 - t0) / 1e6;
const ms = (ns) => Number(BigInt(ns) - t0) / 1e6;

/** What a row says beside its bar: the outcome, the tier and its tokens. */
function note(span) {
  const a = span.attributes;
  const parts = [];
  if (a['error.type']) parts.push(`✗ ${a['error.type']}`);
  if (a['llm_route.tier']) parts.push(`tier ${a['llm_route.tier']}`);
  if (a['gen_ai.provider.name'] && span.kind === 3) parts.push(a['gen_ai.provider.name']);
  if (a['gen_ai.usage.input_tokens'] !== undefined) parts.push(`${a['gen_ai.usage.input_tokens']} in / ${a['gen_ai.usage.output_tokens']} out`);
  if (a['llm_route.ttft_ms'] !== undefined) parts.push(`ttft ${a['llm_route.ttft_ms']} ms`);
  if (a['llm_route.hedged']) parts.push(`hedge ${a['llm_route.hedge.result']}`);
  if (a['llm_route.resumed']) parts.push(`resumed (${a['llm_route.resume.how']})`);
  if (a['llm_route.tool_text.result']) parts.push(`tool text ${a['llm_route.tool_text.format']}: ${a['llm_route.tool_text.result']}`);
  return parts.join(' · ');
}
const label = (span) => `${span.service}  ${span.name}`;
const failed = (span) => span.status === 2;

if (!values.svg) {
  const width = 48;
  console.log(`trace ${traceId}, ${totalMs.toFixed(0)} ms`);
  for (const { span, depth } of rows) {
    const from = Math.round((ms(span.start) / totalMs) * width);
    const to = Math.max(from + 1, Math.round((ms(span.end) / totalMs) * width));
    const bar = `${' '.repeat(from)}${(failed(span) ? '▒' : '█').repeat(to - from)}`.padEnd(width);
    const name = `${'  '.repeat(depth)}${label(span)}`.padEnd(46);
    console.log(`${name} |${bar}| ${(ms(span.end) - ms(span.start)).toFixed(0).padStart(5)} ms  ${note(span)}`);
  }
} else {
  const rowH = 34;
  const labelW = 360;
  const barW = 560;
  const noteW = 330;
  const top = 58;
  const width = labelW + barW + noteW + 40;
  const height = top + rows.length * rowH + 24;
  const x = (t) => labelW + 20 + (t / totalMs) * barW;
  const esc = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const color = (span) => (failed(span) ? '#d64545' : span.service === 'llm-route' ? (span.kind === 2 ? '#2f6fdb' : '#58a55c') : '#8a63d2');
  const step = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((s) => totalMs / s <= 8) ?? 10_000;
  const ticks = [];
  for (let t = 0; t <= totalMs; t += step) ticks.push(t);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="24" font-size="15" font-weight="bold">trace ${esc(traceId)}</text>`,
    `<text x="12" y="44" fill="#555">${rows.length} spans, ${totalMs.toFixed(0)} ms · purple: Claude Code · blue: llm-route's request · green: an attempt · red: one that failed · a mark: an event (llm-route's: first content)</text>`,
    ...ticks.map(
      (t) =>
        `<line x1="${x(t)}" y1="${top - 6}" x2="${x(t)}" y2="${height - 18}" stroke="#e3e3e3"/><text x="${x(t)}" y="${height - 4}" fill="#777" text-anchor="middle" font-size="11">${t} ms</text>`,
    ),
    ...rows.map(({ span, depth }, i) => {
      const y = top + i * rowH;
      const from = x(ms(span.start));
      const w = Math.max(2, x(ms(span.end)) - from);
      const d = (ms(span.end) - ms(span.start)).toFixed(0);
      const events = (span.events ?? []).map((e) => `<line x1="${x(ms(e.time))}" y1="${y + 2}" x2="${x(ms(e.time))}" y2="${y + 26}" stroke="#111" stroke-width="2"/>`);
      return [
        i % 2 ? '' : `<rect x="0" y="${y - 3}" width="${width}" height="${rowH}" fill="#f6f7f9"/>`,
        `<text x="${12 + depth * 16}" y="${y + 19}">${esc(label(span))}</text>`,
        `<rect x="${from}" y="${y + 5}" width="${w}" height="18" rx="3" fill="${color(span)}"/>`,
        ...events,
        `<text x="${labelW + barW + 36}" y="${y + 19}" fill="#333">${d} ms${note(span) ? ` · ${esc(note(span))}` : ''}</text>`,
      ].join('');
    }),
    '</svg>',
  ];
  writeFileSync(values.svg, parts.join('\n'));
  console.log(`wrote ${values.svg} (${width}×${height})`);
}
