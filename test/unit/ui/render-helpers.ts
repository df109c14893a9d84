import { EventEmitter } from 'node:events';
import type { render } from 'ink-testing-library';
import { type Mock, vi } from 'vitest';
import type { DashboardActions } from '../../../src/ui/actions.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI colour codes stripped here.
const ANSI = /\u001B\[[0-9;]*m/g;

export type Rendered = ReturnType<typeof render>;

/** The frame as a person reads it: no colour codes. */
export function frameText(rendered: Rendered): string {
  return (rendered.lastFrame() ?? '').replace(ANSI, '');
}

/** Waits (generously: the dashboard repaints on a timer) until the frame satisfies `check`. */
export async function waitForFrame(rendered: Rendered, check: (frame: string) => void): Promise<string> {
  await vi.waitFor(() => check(frameText(rendered)), { timeout: 3000, interval: 20 });
  return frameText(rendered);
}

/** The terminal is `columns` wide from now on (ink-testing-library's stdout says 100). */
export function resizeTo(rendered: Rendered, columns: number): void {
  Object.defineProperty(rendered.stdout, 'columns', { configurable: true, get: () => columns });
  rendered.stdout.emit('resize');
}

export interface FakeActions extends DashboardActions {
  quit: Mock<() => void>;
  setKill: Mock<(route: string, tier: string, killed: boolean) => void>;
  probe: Mock<() => void>;
  reload: Mock<() => void>;
}

export function fakeActions(): FakeActions {
  return {
    quit: vi.fn<() => void>(),
    setKill: vi.fn<(route: string, tier: string, killed: boolean) => void>(),
    probe: vi.fn<() => void>(),
    reload: vi.fn<() => void>(),
  };
}

/** The row of one tier in the table (the first line that starts with its name after the marker). */
export function rowOf(frame: string, tier: string): string {
  const line = frame.split('\n').find((l) => new RegExp(`^[ ›] ${tier}\\s`).test(l));
  if (!line) throw new Error(`no row for tier ${tier} in:\n${frame}`);
  return line;
}

/** vi.waitFor with the same generous bounds. */
export async function until(check: () => void): Promise<void> {
  await vi.waitFor(check, { timeout: 3000, interval: 20 });
}

export { sleep } from '../../helpers/harness.js';

/** A stdout that keeps frames, for renders that ink-testing-library cannot set up. */
export class FakeStdout extends EventEmitter {
  readonly frames: string[] = [];
  columns = 100;
  write = (frame: string): boolean => {
    this.frames.push(frame);
    return true;
  };
  lastFrame = (): string => (this.frames[this.frames.length - 1] ?? '').replace(ANSI, '');
}

/** A stdin that is not a terminal (a pipe): Ink cannot put it in raw mode. */
export class PipeStdin extends EventEmitter {
  readonly isTTY = false;
  setEncoding(): void {}
  setRawMode(): void {
    throw new Error('raw mode requested on a pipe');
  }
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read(): null {
    return null;
  }
}
