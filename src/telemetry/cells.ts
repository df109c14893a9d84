import type { CounterConfiguration, GaugeConfiguration } from 'prom-client';
import * as prom from './prom.js';

/**
 * Labelled Prometheus series kept as plain numbers. prom-client hashes the label object on every
 * `inc()`, even on a child from `labels()`; here a series is a cell the caller caches, bumped with
 * one addition, and prom-client is handed the values only when /metrics is scraped (`collect`).
 * The scrape output is the same: series in the order they were first touched.
 */
export class SeriesCell {
  value = 0;

  constructor(readonly labels: Record<string, string>) {}

  inc(by = 1): void {
    if (!(by >= 0) || !Number.isFinite(by)) throw new TypeError(`a counter can only grow by a finite number >= 0, not ${by}`);
    this.value += by;
  }
}

export class GaugeCell {
  value = 0;

  constructor(readonly labels: Record<string, string>) {}

  inc(by = 1): void {
    this.value += by;
  }

  dec(by = 1): void {
    this.value -= by;
  }

  set(value: number): void {
    this.value = value;
  }
}

/** The cells of one labelled counter. */
export class CounterCells {
  private readonly cells: SeriesCell[] = [];
  private readonly labelNames: readonly string[];

  constructor(config: CounterConfiguration<string>) {
    const cells = this.cells;
    new prom.Counter({
      ...config,
      collect() {
        this.reset();
        for (const cell of cells) this.inc(cell.labels, cell.value);
      },
    });
    this.labelNames = config.labelNames ?? [];
  }

  /** A new series (the caller caches it: a second call with the same values makes a second cell, summed at scrape). */
  labels(...values: string[]): SeriesCell {
    const cell = new SeriesCell(labelObject(this.labelNames, values));
    this.cells.push(cell);
    return cell;
  }
}

/** The cells of one labelled gauge. */
export class GaugeCells {
  private readonly cells: GaugeCell[] = [];
  private readonly labelNames: readonly string[];

  constructor(config: GaugeConfiguration<string>) {
    const cells = this.cells;
    new prom.Gauge({
      ...config,
      collect() {
        this.reset();
        // Cells of the same series add up, as counter cells do.
        for (const cell of cells) this.inc(cell.labels, cell.value);
      },
    });
    this.labelNames = config.labelNames ?? [];
  }

  labels(...values: string[]): GaugeCell {
    const cell = new GaugeCell(labelObject(this.labelNames, values));
    this.cells.push(cell);
    return cell;
  }
}

function labelObject(names: readonly string[], values: string[]): Record<string, string> {
  if (values.length !== names.length) throw new Error(`expected ${names.length} label values (${names.join(', ')}), got ${values.length}`);
  const labels: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) labels[names[i]] = values[i];
  return labels;
}

