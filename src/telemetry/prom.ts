import type * as Prom from 'prom-client';
import counter from 'prom-client/lib/counter.js';
import gauge from 'prom-client/lib/gauge.js';
import histogram from 'prom-client/lib/histogram.js';
import registry from 'prom-client/lib/registry.js';

/**
 * The metric classes llm-route uses, imported from prom-client's own files: its index also
 * loads the default metrics, the push gateway and cluster aggregation (~30 ms, ~10 MB of a
 * `serve` start-up) that llm-route never uses. Same classes as `import ... from 'prom-client'`.
 */
export const Counter = counter as typeof Prom.Counter;
export const Gauge = gauge as typeof Prom.Gauge;
export const Histogram = histogram as typeof Prom.Histogram;
export const Registry = registry as typeof Prom.Registry;
