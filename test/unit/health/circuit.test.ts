import { describe, expect, it } from 'vitest';
import { Circuit } from '../../../src/health/circuit.js';

const settings = { failures: 3, cooldown_ms: 1000, max_cooldown_ms: 8000, slow_ttft_ms: 8000 };

describe('Circuit', () => {
  it('opens after `failures` failures in a row, not before', () => {
    const c = new Circuit(settings);
    expect(c.recordFailure(0)).toBe(false);
    expect(c.recordFailure(0)).toBe(false);
    expect(c.claim(0, 100)).toBe(true);
    expect(c.recordFailure(0)).toBe(true);
    expect(c.isOpen).toBe(true);
    expect(c.claim(500, 100)).toBe(false);
  });

  it('a success in between resets the count', () => {
    const c = new Circuit(settings);
    c.recordFailure(0);
    c.recordFailure(0);
    c.recordSuccess();
    c.recordFailure(0);
    expect(c.isOpen).toBe(false);
  });

  it('after the cooldown lets exactly one trial through; its success closes the circuit', () => {
    const c = new Circuit(settings);
    for (let i = 0; i < 3; i++) c.recordFailure(0);
    expect(c.retryAt).toBe(1000);
    expect(c.claim(1000, 5000)).toBe(true);
    expect(c.claim(1001, 5000)).toBe(false); // the trial is out
    expect(c.recordSuccess()).toBe(true);
    expect(c.isOpen).toBe(false);
    expect(c.claim(1002, 5000)).toBe(true);
  });

  it('a failed trial re-opens with a cooldown that doubles, capped at max_cooldown_ms', () => {
    const c = new Circuit(settings);
    for (let i = 0; i < 3; i++) c.recordFailure(0);
    let now = 0;
    const cooldowns: number[] = [];
    for (let trip = 0; trip < 6; trip++) {
      now = c.retryAt;
      expect(c.claim(now, 100)).toBe(true);
      c.recordFailure(now);
      cooldowns.push(c.retryAt - now);
    }
    expect(cooldowns).toEqual([2000, 4000, 8000, 8000, 8000, 8000]);
  });

  it('ignores failures of requests that started before the trip (stragglers)', () => {
    const c = new Circuit(settings);
    for (let i = 0; i < 3; i++) c.recordFailure(0);
    expect(c.recordFailure(10)).toBe(false);
    expect(c.retryAt).toBe(1000);
  });

  it('isAvailable looks without claiming: only claim takes the trial', () => {
    const c = new Circuit(settings);
    for (let i = 0; i < 3; i++) c.recordFailure(0);
    expect(c.isAvailable(999)).toBe(false);
    expect(c.isAvailable(1000)).toBe(true);
    expect(c.isAvailable(1000)).toBe(true);
    expect(c.claim(1000, 5000)).toBe(true);
    expect(c.isAvailable(1001)).toBe(false);
  });

  it('a trial claim lapses, so a lost trial cannot wedge the tier', () => {
    const c = new Circuit(settings);
    for (let i = 0; i < 3; i++) c.recordFailure(0);
    expect(c.claim(1000, 500)).toBe(true);
    expect(c.claim(1400, 500)).toBe(false);
    expect(c.claim(1500, 500)).toBe(true);
  });
});
