// Turns the benchmark's results into Markdown: raw numbers with ratios to direct and to the peer,
// and the issue's targets marked met / missed.

const LLM = 'llm-route';
/** The same proxy with `usage: { enabled: false }`. */
export const USAGE_OFF = 'llm-route, usage log off';
/** The reference pipes: bytes only, and the least a router must do (parse, set the model, forward). */
export const NAIVE_PIPE = 'naive pipe';
export const JSON_PIPE = 'json pipe';
const PIPES = [NAIVE_PIPE, JSON_PIPE];

export function renderReport(r) {
  const out = [];
  const e = r.env;
  out.push(`### Run`);
  out.push('');
  out.push(`- date: ${e.date}; took ${r.elapsedS.toFixed(0)} s; rounds: ${r.plan.rounds} (medians across rounds), ${r.plan.durationS} s per load run`);
  out.push(
    `- machine: ${e.nproc} CPUs (${e.cpuModel}), ${e.memoryGiB} GiB, ${e.kernel}, load average at start ${e.loadavg.join(' ')}, ulimit -n ${e.openFiles}`,
  );
  out.push(
    `- versions: node ${e.node}, llm-route ${e.llmRoute}, ${e.peer} (with @hono/node-server ${e.peerHonoNodeServer}), autocannon ${e.autocannon}, undici ${e.undici}`,
  );
  if (r.otherLoad && Object.keys(r.otherLoad).length) {
    out.push(
      `- other processes on the machine during each section (machine busy time minus the benchmark's processes, % of one core): ${Object.entries(r.otherLoad)
        .map(([k, v]) => `${k} ${Math.round(v)}`)
        .join(', ')}`,
    );
    const noisy = Object.entries(r.otherLoad)
      .filter(([, v]) => v > 15)
      .map(([k]) => k);
    if (noisy.length)
      out.push(`- **noisy run**: other work took more than 15 % of a core during ${noisy.join(', ')}; rerun on a quiet machine before trusting those sections`);
  }
  out.push(`- llm-route wrote ${r.proxyLogLines} request-log lines to its stdout (a pipe the benchmark drains)`);
  out.push('');

  if (r.upstream) {
    out.push(`### Upstream check: is the mock the bottleneck? (same ${r.upstream.bodyBytes}-byte answer, one ${r.plan.durationS} s run each)`);
    out.push('');
    out.push(
      '| connections | llm-route mock req/s | bare node:http req/s | mock ÷ bare | upstream CPU ms/req (mock / bare) | load generator CPU % (mock / bare) |',
    );
    out.push('|---|---|---|---|---|---|');
    for (const c of [10, 100]) {
      const m = r.upstream.rows.find((x) => x.label === 'mock' && x.connections === c);
      const b = r.upstream.rows.find((x) => x.label === 'bare' && x.connections === c);
      if (!m || !b) continue;
      out.push(
        `| ${c} | ${int(m.rps)} | ${int(b.rps)} | ${ratio(m.rps, b.rps)} | ${num(m.cpu_upstream, 4)} / ${num(b.cpu_upstream, 4)} | ${int(m.clientCpuPct)} / ${int(b.clientCpuPct)} |`,
      );
    }
    out.push('');
  }

  if (r.nonstream) {
    const names = Object.keys(Object.values(r.nonstream)[0]);
    const hasPeer = names.includes('peer');
    const pipes = PIPES.filter((n) => names.includes(n));
    out.push('### Non-streaming requests (autocannon, keep-alive, pipelining 1)');
    out.push('');
    // The pipes are the limit of one Node hop: llm-route ÷ pipe is how close it gets.
    out.push(
      `| load | metric | direct | ${LLM} | ${LLM} vs direct |${pipes.map((n) => ` ${n} | ${LLM} vs ${n} |`).join('')}${hasPeer ? ` peer | ${LLM} vs peer |` : ''}`,
    );
    out.push(`|---|---|---|---|---|${pipes.map(() => '---|---|').join('')}${hasPeer ? '---|---|' : ''}`);
    for (const [c, byTarget] of Object.entries(r.nonstream)) {
      const d = byTarget.direct;
      const l = byTarget[LLM];
      const p = byTarget.peer;
      for (const [key, label] of [
        ['rps', 'req/s'],
        ['p50', 'latency p50 ms'],
        ['p99', 'latency p99 ms'],
      ]) {
        const fmtv = (x) => (key === 'rps' ? int(x) : num(x, 3));
        const vs = (x) => (key === 'rps' ? ratio(l[key], x[key]) : `${ratio(l[key], x[key])} (${signed(l[key] - x[key], 3)} ms)`);
        let row = `| c${c} | ${label} | ${fmtv(d[key])} | ${fmtv(l[key])} | ${vs(d)} |`;
        for (const n of pipes) row += ` ${fmtv(byTarget[n][key])} (${ratio(byTarget[n][key], d[key])} direct) | ${vs(byTarget[n])} |`;
        if (hasPeer) row += ` ${fmtv(p[key])} | ${ratio(l[key], p[key])} |`;
        out.push(row);
      }
      const errs = names.map((n) => `${n} ${errorsOf(byTarget[n])}`).join(', ');
      if (names.some((n) => errorsOf(byTarget[n]) > 0)) out.push(`| c${c} | errors | ${errs} | | | | | | | |`);
    }
    out.push('');
    out.push(
      'Load generator CPU % (this process, one core = 100): ' +
        Object.entries(r.nonstream)
          .map(
            ([c, byTarget]) =>
              `c${c}: ` +
              Object.entries(byTarget)
                .map(([n, x]) => `${n} ${int(x.clientCpuPct)}`)
                .join(', '),
          )
          .join('; '),
    );
    out.push('');
  }

  if (r.nonstream && Object.values(r.nonstream)[0]?.[USAGE_OFF]) {
    out.push('### The usage log: on vs off (non-streaming, same run; goal: at most 5 % fewer req/s and 0.05 ms more p50)');
    out.push('');
    out.push(
      `| load | direct req/s | log on req/s (vs direct) | log off req/s (vs direct) | on ÷ off req/s | p50 ms on / off (vs direct) | p50 on − off | goal |`,
    );
    out.push('|---|---|---|---|---|---|---|---|');
    for (const [c, byTarget] of Object.entries(r.nonstream)) {
      const d = byTarget.direct;
      const on = byTarget[LLM];
      const off = byTarget[USAGE_OFF];
      const met = on.rps >= 0.95 * off.rps && on.p50 - off.p50 <= 0.05;
      out.push(
        `| c${c} | ${int(d.rps)} | ${int(on.rps)} (${ratio(on.rps, d.rps)}) | ${int(off.rps)} (${ratio(off.rps, d.rps)}) | ${ratio(on.rps, off.rps)} | ${num(on.p50, 3)} (${ratio(on.p50, d.p50)}) / ${num(off.p50, 3)} (${ratio(off.p50, d.p50)}) | ${signed(on.p50 - off.p50, 3)} ms | ${met ? 'met' : 'missed'} |`,
      );
    }
    if (r.cpu?.[USAGE_OFF])
      out.push(
        `\nProxy CPU per request (all the process's threads): log on ${num(r.cpu[LLM].cpu_proxy, 4)} ms, log off ${num(r.cpu[USAGE_OFF].cpu_proxy, 4)} ms.`,
      );
    out.push('');
  }

  if (r.cpu) {
    const names = Object.keys(r.cpu);
    out.push(
      `### CPU time per non-streaming request (${r.plan.cpuAmount} requests at c10; ${r.env.exactCpu ? "on-CPU time of the process's threads from /proc/PID/task/*/schedstat, exact" : `utime+stime from /proc/PID/stat, ${1000 / r.env.clockTicks} ms ticks`})`,
    );
    out.push('');
    out.push(`| | ${names.join(' | ')} |`);
    out.push(`|---|${names.map(() => '---').join('|')}|`);
    out.push(`| proxy process, ms/request | ${names.map((n) => (n === 'direct' ? '— (no proxy)' : num(r.cpu[n].cpu_proxy, 4))).join(' | ')} |`);
    out.push(`| upstream mock, ms/request | ${names.map((n) => num(r.cpu[n].cpu_upstream, 4)).join(' | ')} |`);
    const l = r.cpu[LLM];
    const d = r.cpu.direct;
    const p = r.cpu.peer;
    out.push(
      `| ${LLM} proxy CPU relative to | ${names.map((n) => (n === 'direct' ? `${ratio(l.cpu_proxy, d.cpu_upstream)} of the upstream's own` : n === LLM ? '' : n === 'peer' && p ? `${ratio(l.cpu_proxy, p.cpu_proxy)} of the peer's` : `${ratio(l.cpu_proxy, r.cpu[n].cpu_proxy)} of the ${n}'s`)).join(' | ')} |`,
    );
    out.push('');
  }

  if (r.stream) {
    const d = r.stream.direct;
    const l = r.stream[LLM];
    const p = r.stream.peer;
    const q = r.stream[JSON_PIPE];
    out.push(`### Streaming, ${r.plan.fastTokens} content chunks, one stream at a time (undici client; TTFB = to the first data: event with content)`);
    out.push('');
    out.push(`| metric | direct | ${LLM} | ${LLM} vs direct |${q ? ` ${JSON_PIPE} | ${LLM} vs ${JSON_PIPE} |` : ''}${p ? ` peer | ${LLM} vs peer |` : ''}`);
    out.push(`|---|---|---|---|${q ? '---|---|' : ''}${p ? '---|---|' : ''}`);
    for (const [key, label, digits] of [
      ['ttfbP50', 'TTFB p50 ms', 3],
      ['ttfbP99', 'TTFB p99 ms', 3],
      ['totalP50', 'total p50 ms', 3],
      ['totalP99', 'total p99 ms', 3],
      ['chunksPerS', 'chunks/s (p50 of per-stream chunks ÷ total time)', 0],
    ]) {
      const added = key === 'chunksPerS' ? '' : ` (${signed(l[key] - d[key], 3)} ms)`;
      out.push(
        `| ${label} | ${num(d[key], digits)} | ${num(l[key], digits)} | ${ratio(l[key], d[key])}${added} |${q ? ` ${num(q[key], digits)} | ${ratio(l[key], q[key])} |` : ''}${p ? ` ${num(p[key], digits)} | ${ratio(l[key], p[key])} |` : ''}`,
      );
    }
    out.push(
      `| streams measured (errors) | ${d.n} (${d.errors}) | ${l.n} (${l.errors}) | |${q ? ` ${q.n} (${q.errors}) | |` : ''}${p ? ` ${p.n} (${p.errors}) | |` : ''}`,
    );
    out.push('');
  }

  if (r.failover) {
    const f = r.failover;
    const direct = f['direct to tier 2'];
    const one = f['llm-route, one tier'];
    const peerOne = f['peer, one target'];
    out.push('### Failover: tier 1 refuses the connection (127.0.0.1:1), tier 2 is the fast mock (streams, sequential)');
    out.push('');
    out.push('| path | TTFB p50 ms | TTFB p99 ms | p50 minus direct to tier 2 | p50 minus same proxy, no failover | answered by (header counts) | errors |');
    out.push('|---|---|---|---|---|---|---|');
    for (const [name, x] of Object.entries(f)) {
      const base = name.startsWith('peer') ? peerOne : name.startsWith('llm-route') ? one : undefined;
      out.push(
        `| ${name} | ${num(x.ttfbP50, 3)} | ${num(x.ttfbP99, 3)} | ${name === 'direct to tier 2' ? '' : `${signed(x.ttfbP50 - direct.ttfbP50, 3)} ms`} | ${base && base !== x ? `${signed(x.ttfbP50 - base.ttfbP50, 3)} ms` : ''} | ${
          x.headerCounts && Object.keys(x.headerCounts).length
            ? Object.entries(x.headerCounts)
                .map(([k, v]) => `${k}: ${v}`)
                .join(', ')
            : ''
        } | ${x.errors} |`,
      );
    }
    out.push('');
  }

  if (r.open) {
    out.push(`### ${r.plan.openCount} concurrent open streams, slow upstream (${r.plan.slowTokens} chunks at ${r.plan.slowTokensPerS}/s)`);
    out.push('');
    out.push(
      '| path | RSS of | RSS idle MB | RSS peak MB | peak streams open at once | errors | TTFB p50 ms (vs direct) | wall s | load generator CPU % | for comparison: RSS of the long-running process after the load sections, MB |',
    );
    out.push('|---|---|---|---|---|---|---|---|---|---|');
    const openDirect = r.open.direct;
    for (const [name, x] of Object.entries(r.open)) {
      const vs = name === 'direct' || !openDirect ? '' : ` (${ratio(x.ttfbP50, openDirect.ttfbP50)})`;
      out.push(
        `| ${name} | ${x.rssOf} | ${num(x.rssIdleMb, 1)} | ${num(x.rssPeakMb, 1)} | ${x.peakOpen} / ${x.streams} | ${x.errors}${x.errors ? ` ${JSON.stringify(x.reasons)}` : ''} | ${num(x.ttfbP50, 1)}${vs} | ${num(x.wallS, 1)} | ${x.clientCpuPct === undefined ? '' : int(x.clientCpuPct)} | ${x.rssAfterLoadMb === undefined ? '' : num(x.rssAfterLoadMb, 1)} |`,
      );
    }
    out.push(
      '\nEvery path is measured through the same load generator (this process, one undici Pool; its CPU in % of one core beside each row): direct shows what the generator alone allows, and a generator far from 100 % is not what the first content waits for.',
    );
    const l = r.open[LLM];
    const p = r.open.peer;
    if (l && p) out.push(`\n${LLM} peak RSS is ${ratio(l.rssPeakMb, p.rssPeakMb)} the peer's.`);
    out.push('');
  }

  out.push(...renderTargets(r));
  return out.join('\n');
}

/**
 * The targets, each met or missed with its numbers. The ratio goals are from this one run (the
 * machine's speed changes several-fold from week to week; ratios in one run do not); the memory,
 * error and failover ones are the first overhead goals.
 */
export function renderTargets(r) {
  const rows = [];
  const add = (target, value, met, detail) =>
    rows.push(`| ${target} | ${value} | ${met === undefined ? 'not measured' : met ? 'met' : '**missed**'} | ${detail ?? ''} |`);
  const atMost = (x, goal) => (x <= goal ? '' : `${(x / goal).toFixed(2)}× the goal`);
  const ns = r.nonstream;

  const cpu = r.cpu ?? {};
  if (cpu[LLM] && cpu[JSON_PIPE]) {
    const times = cpu[LLM].cpu_proxy / cpu[JSON_PIPE].cpu_proxy;
    add(
      "CPU per non-streaming request ≤ 1.3× the json pipe's",
      `${times.toFixed(2)}× (${num(cpu[LLM].cpu_proxy, 4)} vs ${num(cpu[JSON_PIPE].cpu_proxy, 4)} ms)`,
      times <= 1.3,
      atMost(times, 1.3),
    );
  }
  const c10 = ns?.['10'];
  if (c10) {
    const l = c10[LLM].rps;
    const pipes = PIPES.filter((n) => c10[n]);
    if (pipes.length) {
      const better = pipes.reduce((a, b) => (c10[a].rps >= c10[b].rps ? a : b));
      const vs = l / c10[better].rps;
      add(
        'req/s at c10 ≥ 0.8× the better pipe',
        `${vs.toFixed(2)}× (${int(l)} vs ${better} ${int(c10[better].rps)})`,
        vs >= 0.8,
        vs >= 0.8 ? '' : `short by ${int(0.8 * c10[better].rps - l)} req/s`,
      );
    }
    if (c10.peer) {
      const vs = l / c10.peer.rps;
      add(
        'req/s at c10 ≥ 8× the peer',
        `${vs.toFixed(1)}× (${int(l)} vs ${int(c10.peer.rps)})`,
        vs >= 8,
        vs >= 8 ? '' : `needs ${int(8 * c10.peer.rps)} req/s`,
      );
    }
  }
  if (ns?.['1']) {
    const d = ns['1'].direct;
    const l = ns['1'][LLM];
    const times = l.p50 / d.p50;
    add(
      'sequential (c1) latency p50 ≤ 1.3× direct',
      `${times.toFixed(2)}× (${num(l.p50, 3)} vs ${num(d.p50, 3)} ms, ${signed(l.p50 - d.p50, 3)} ms)`,
      times <= 1.3,
      withPipeFloor(atMost(times, 1.3), l.p50, ns['1'][JSON_PIPE]?.p50, d.p50),
    );
  }
  if (r.stream?.[LLM]) {
    const times = r.stream[LLM].ttfbP50 / r.stream.direct.ttfbP50;
    add(
      'stream first content p50 ≤ 1.3× direct',
      `${times.toFixed(2)}× (${num(r.stream[LLM].ttfbP50, 3)} vs ${num(r.stream.direct.ttfbP50, 3)} ms, ${signed(r.stream[LLM].ttfbP50 - r.stream.direct.ttfbP50, 3)} ms)`,
      times <= 1.3,
      withPipeFloor(atMost(times, 1.3), r.stream[LLM].ttfbP50, r.stream[JSON_PIPE]?.ttfbP50, r.stream.direct.ttfbP50),
    );
  }
  if (r.open?.[LLM]) {
    const o = r.open[LLM];
    const d = r.open.direct;
    if (d) {
      const times = o.ttfbP50 / d.ttfbP50;
      add(
        `${o.streams} open streams' first content p50 ≤ 1.5× direct`,
        `${times.toFixed(2)}× (${num(o.ttfbP50, 1)} vs ${num(d.ttfbP50, 1)} ms)`,
        times <= 1.5,
        withPipeFloor(atMost(times, 1.5), o.ttfbP50, r.open[JSON_PIPE]?.ttfbP50, d.ttfbP50),
      );
    }
    add(
      `${o.streams} open streams < 150 MB RSS`,
      `${num(o.rssPeakMb, 1)} MB peak (idle ${num(o.rssIdleMb, 1)} MB)`,
      o.rssPeakMb < 150,
      o.rssPeakMb < 150 ? '' : `over by ${(o.rssPeakMb - 150).toFixed(1)} MB`,
    );
    add(`${o.streams} open streams, zero errors`, `${o.errors} errors, ${o.peakOpen} open at once`, o.errors === 0, o.errors ? JSON.stringify(o.reasons) : '');
  }
  const f = r.failover;
  if (f?.['llm-route, failover']) {
    const added = f['llm-route, failover'].ttfbP50 - f['direct to tier 2'].ttfbP50;
    add(
      'refused-connection failover adds < 5 ms (TTFB p50 vs direct to tier 2)',
      `${signed(added, 3)} ms (${num(f['llm-route, failover'].ttfbP50, 3)} vs ${num(f['direct to tier 2'].ttfbP50, 3)})`,
      added < 5,
      added < 5 ? '' : `over by ${(added - 5).toFixed(3)} ms`,
    );
  }
  return [
    '### Targets (ratios to the json pipe; memory, errors and failover; start-up and idle memory: bench/startup.mjs)',
    '',
    '| target | this run | status | note |',
    '|---|---|---|---|',
    ...rows,
    '',
  ];
}

/**
 * A latency goal's note with the json pipe's figure from the same run beside it: a Node hop that
 * only parses and forwards shows how much of the distance to direct any proxy pays here.
 */
function withPipeFloor(note, llm, pipe, direct) {
  if (!Number.isFinite(pipe)) return note;
  const floor = `json pipe ${(pipe / direct).toFixed(2)}× direct; ${LLM} ${(llm / pipe).toFixed(2)}× the json pipe (${signed(llm - pipe, 3)} ms)`;
  return note ? `${note}; ${floor}` : floor;
}

function errorsOf(x) {
  return (x.rounds ?? [x]).reduce((s, y) => s + (y.errors ?? 0) + (y.non2xx ?? 0) + (y.timeouts ?? 0), 0);
}

function int(x) {
  return Number.isFinite(x) ? String(Math.round(x)) : '—';
}

function num(x, digits = 2) {
  return Number.isFinite(x) ? x.toFixed(digits) : '—';
}

function signed(x, digits = 2) {
  return Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(digits)}` : '—';
}

function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '—';
}
