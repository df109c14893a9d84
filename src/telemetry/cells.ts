import type { CounterConfiguration, GaugeConfiguration } from 'prom-client';
import * as prom from './prom.js';

/**
 * Labelled Prometheus series kept as plain numbers. prom-client hashes the label object on every
 * `inc()`, even on a child from `labels()`; here a series is a cell the caller caches, bumped with
 * one addition, and prom-client is handed what each cell gained since the last scrape
 * (`collect`), so increments made on the prom-client metric itself (usage-metrics.ts adds
 * llm_tokens_total{kind="cached"} through the registry) stay counted.
 */
abstract class Cell {
  value = 0;
  /** What prom-client has been given so far, and whether the series exists there yet. */
  reported = 0;
  known = false;

  constructor(readonly labels: Record<string, string>) {}
}

export class CounterCell extends Cell {
  inc(by = 1): void {
    if (!(by >= 0) || !Number.isFinite(by)) throw new TypeError(`a counter can only grow by a finite number >= 0, not ${by}`);
    this.value += by;
  }
}

export class GaugeCell extends Cell {
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

/** The cells of one labelled metric; `collector` is the prom-client metric's `collect`. */
class Cells<C extends Cell> {
  private readonly cells: C[] = [];
  protected readonly collector = collectorOf(this.cells);

  constructor(
    private readonly labelNames: readonly string[],
    private readonly NewCell: new (labels: Record<string, string>) => C,
  ) {}

  /** A new series (the caller caches it: a second call with the same values makes a second cell, summed at scrape). */
  labels(...values: string[]): C {
    const cell = new this.NewCell(labelObject(this.labelNames, values));
    this.cells.push(cell);
    return cell;
  }
}

/** The cells of one labelled counter. */
export class CounterCells extends Cells<CounterCell> {
  constructor(config: CounterConfiguration<string>) {
    super(config.labelNames ?? [], CounterCell);
    new prom.Counter({ ...config, collect: this.collector });
  }
}

/** The cells of one labelled gauge. */
export class GaugeCells extends Cells<GaugeCell> {
  constructor(config: GaugeConfiguration<string>) {
    super(config.labelNames ?? [], GaugeCell);
    new prom.Gauge({ ...config, collect: this.collector });
  }
}

type ScrapedMetric = { inc(labels: Record<string, string>, value: number): void };

function collectorOf(cells: Cell[]): (this: ScrapedMetric) => void {
  return function collect(this: ScrapedMetric) {
    handOver(this, cells);
  };
}

/** Gives prom-client each cell's change since the last scrape; a new cell's series is made even at 0. */
function handOver(metric: ScrapedMetric, cells: Cell[]): void {
  for (const cell of cells) {
    const change = cell.value - cell.reported;
    if (change !== 0 || !cell.known) metric.inc(cell.labels, change);
    cell.reported = cell.value;
    cell.known = true;
  }
}

function labelObject(names: readonly string[], values: string[]): Record<string, string> {
  if (values.length !== names.length) throw new Error(`expected ${names.length} label values (${names.join(', ')}), got ${values.length}`);
  const labels: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) labels[names[i]] = values[i];
  return labels;
}
