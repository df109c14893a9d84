import type { Counter, Registry } from 'prom-client';
import * as prom from './prom.js';
import type { TelemetryEvent } from './events.js';

type Child = ReturnType<Counter['labels']>;

/**
 * `llm_saver_tokens_saved_total{route,saver}` and `llm_saver_failures_total{route,saver}`, fed
 * from request_end's saver measures. A saver that saved nothing still adds 0, so its series
 * exists. Returns the bus subscriber.
 */
export function saverMetrics(registry: Registry): (event: TelemetryEvent) => void {
  const saved = new prom.Counter({
    name: 'llm_saver_tokens_saved_total',
    help: 'Tokens token savers took out of requests, measured with the tokenizer before and after each saver.',
    labelNames: ['route', 'saver'],
    registers: [registry],
  });
  const failures = new prom.Counter({
    name: 'llm_saver_failures_total',
    help: 'Token savers skipped for a request because they threw or overran their time budget.',
    labelNames: ['route', 'saver'],
    registers: [registry],
  });
  const savedChildren = new Map<string, Map<string, Child>>();
  const failureChildren = new Map<string, Map<string, Child>>();
  return (event) => {
    if (event.type !== 'request_end' || !event.savers || event.route === '') return;
    for (const measure of event.savers) {
      child(savedChildren, saved, event.route, measure.saver).inc(Math.max(0, measure.before - measure.after));
      if (measure.failed) child(failureChildren, failures, event.route, measure.saver).inc();
    }
  };
}

// Label children cached per route and saver: no label strings built per event.
function child(cache: Map<string, Map<string, Child>>, counter: Counter, route: string, saver: string): Child {
  let bySaver = cache.get(route);
  if (!bySaver) cache.set(route, (bySaver = new Map()));
  let labelled = bySaver.get(saver);
  if (!labelled) bySaver.set(saver, (labelled = counter.labels(route, saver)));
  return labelled;
}
