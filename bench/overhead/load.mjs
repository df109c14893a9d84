// Non-streaming load with autocannon. autocannon's own latency histogram has 1 ms resolution, too
// coarse for sub-millisecond overheads, so each response's exact time (its 'response' event,
// process.hrtime based) is kept here and the percentiles are computed from those.
import autocannon from 'autocannon';
import { cpuMs } from './procfs.mjs';
import { percentile } from './stats.mjs';

/**
 * One autocannon run against `target` ({ url, headers, body }) with `connections` concurrent
 * connections for `durationS` seconds, or for `amount` requests when given; `rate`: at most that
 * many requests a second in all (autocannon's overallRate), else as fast as answers come.
 * `cpuPids` ({ label: pid }): their CPU time is read before and after, and reported per 2xx response.
 */
export function runLoad(target, { connections, durationS, amount, rate, cpuPids = {} }) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    let non2xx = 0;
    const clientBefore = process.cpuUsage();
    const cpuBefore = Object.fromEntries(Object.entries(cpuPids).map(([k, pid]) => [k, cpuMs(pid)]));
    const opts = {
      url: `${target.url}/chat/completions`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: target.body,
      connections,
      pipelining: 1,
      timeout: 10,
    };
    if (rate) opts.overallRate = rate;
    if (amount) opts.amount = amount;
    else opts.duration = durationS;
    const instance = autocannon(opts, (err, result) => {
      if (err) return reject(err);
      const seconds = (result.finish - result.start) / 1000;
      const client = process.cpuUsage(clientBefore);
      const cpu = {};
      for (const [k, pid] of Object.entries(cpuPids)) cpu[k] = (cpuMs(pid) - cpuBefore[k]) / Math.max(1, latencies.length);
      resolve({
        ok: latencies.length,
        seconds,
        rps: latencies.length / seconds,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        errors: result.errors,
        timeouts: result.timeouts,
        non2xx,
        cpuMsPerRequest: cpu,
        // This (client) process's CPU use over the run: near 100 means the load generator saturates a core.
        clientCpuPct: ((client.user + client.system) / 1000 / (seconds * 1000)) * 100,
      });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      else non2xx++;
    });
  });
}
