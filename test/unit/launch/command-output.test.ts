import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeExit, LoadingReport, OutputTail, relayOutput } from '../../../src/launch/command-output.js';
import type { GroupProcess } from '../../../src/launch/process-group.js';

afterEach(() => {
  vi.useRealTimers();
});

describe("a start command's output", () => {
  it('is relayed line by line from both streams; a progress bar redrawn with \\r shows only what it ends on', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const lines: Array<[string, string]> = [];
    const tail = relayOutput({ pid: 1, stdout, stderr, exited: new Promise(() => undefined) } as unknown as GroupProcess, (stream, line) =>
      lines.push([stream, line]),
    );
    stdout.write('loading model\n');
    stderr.write('progress 10%\rprogress 55%\rprogress 100%\r\n');
    stdout.end('listening on 8080\n');
    stderr.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      ['stdout', 'loading model'],
      ['stderr', 'progress 100%'],
      ['stdout', 'listening on 8080'],
    ]);
    expect(tail.describe()).toBe('; last output:\n  [stdout] loading model\n  [stderr] progress 100%\n  [stdout] listening on 8080');
  });

  it('a character split between two chunks, a last line without \\n, and a bar that only redraws (its line kept bounded)', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const lines: string[] = [];
    relayOutput({ pid: 1, stdout, stderr, exited: new Promise(() => undefined) } as unknown as GroupProcess, (_stream, line) => lines.push(line));
    const word = Buffer.from('modèle prêt\n');
    stdout.write(word.subarray(0, 4));
    stdout.write(word.subarray(4));
    for (let i = 0; i <= 100; i++) stderr.write(`downloading ${String(i).padStart(3)}% ${'#'.repeat(100)}\r`);
    stderr.end();
    stdout.end('no newline at the end');
    await new Promise((resolve) => setImmediate(resolve));
    expect([...lines].sort()).toEqual([`downloading 100% ${'#'.repeat(100)}`, 'modèle prêt', 'no newline at the end']);
  });

  it('keeps its last ten lines for the error, each cut to 300 characters', () => {
    const tail = new OutputTail();
    expect(tail.describe()).toBe('');
    for (let i = 1; i <= 12; i++) tail.push('stderr', `line ${i}`);
    tail.push('stdout', 'x'.repeat(400));
    const said = tail.describe().split('\n').slice(1);
    expect(said).toHaveLength(10);
    expect(said[0]).toBe('  [stderr] line 4');
    expect(said.at(-1)).toBe(`  [stdout] ${'x'.repeat(300)}…`);
  });

  it('says how the command ended', () => {
    expect(describeExit({ code: 3, signal: null })).toBe('exited with code 3');
    expect(describeExit({ code: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(describeExit({ code: null, signal: null })).toBe('could not be run');
  });
});

describe('a server that says it is loading', () => {
  it('gets a status line when it starts, then one every 5 s with the wait, and none once ready', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const said: string[] = [];
    const report = new LoadingReport((stream, line) => said.push(`${stream}: ${line}`));
    const loading = { state: 'loading', detail: 'Loading model' } as const;
    report.saw(loading);
    vi.advanceTimersByTime(4_000);
    report.saw(loading);
    vi.advanceTimersByTime(1_500);
    report.saw(loading);
    vi.advanceTimersByTime(500);
    report.saw({ state: 'ready', via: 'GET /health' });
    vi.advanceTimersByTime(10_000);
    report.saw({ state: 'ready', via: 'GET /health' });
    expect(said).toEqual([
      'status: answering, still loading (HTTP 503: Loading model); waiting',
      'status: still loading (HTTP 503: Loading model): waited 5.5 s so far',
    ]);
    expect(report.totalMs()).toBe(6_000);
  });
});
