import { describe, expect, it } from 'vitest';
import { SessionAffinity } from '../../../src/state/session-affinity.js';
import { ManualClock } from '../../helpers/clock.js';

describe('SessionAffinity', () => {
  it("remembers each session's tier per route", () => {
    const sessions = new SessionAffinity(() => 0);
    sessions.remember('chat', 's1', 'local');
    sessions.remember('code', 's1', 'cloud');
    sessions.remember('chat', 's2', 'canary');
    expect([sessions.tierOf('chat', 's1'), sessions.tierOf('code', 's1'), sessions.tierOf('chat', 's2'), sessions.tierOf('chat', 's3')]).toEqual([
      'local',
      'cloud',
      'canary',
      undefined,
    ]);
    sessions.remember('chat', 's1', 'canary');
    expect(sessions.tierOf('chat', 's1')).toBe('canary');
  });

  it('forgets a session idle for longer than idleMs; a turn in time keeps it', () => {
    const clock = new ManualClock();
    const sessions = new SessionAffinity(() => clock.now(), 100, 60_000);
    sessions.remember('chat', 'busy', 'local');
    sessions.remember('chat', 'idle', 'local');
    clock.advance(40_000);
    sessions.remember('chat', 'busy', 'local');
    clock.advance(30_000);
    expect(sessions.tierOf('chat', 'busy')).toBe('local');
    expect(sessions.tierOf('chat', 'idle')).toBeUndefined();
    expect(sessions.size).toBe(1);
  });

  it('holds at most maxSessions, dropping the least recently answered first', () => {
    const sessions = new SessionAffinity(() => 0, 3);
    for (const s of ['a', 'b', 'c']) sessions.remember('chat', s, 'local');
    sessions.remember('chat', 'a', 'local'); // a answered again: b is the oldest now
    sessions.remember('chat', 'd', 'local');
    expect(sessions.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].map((s) => sessions.tierOf('chat', s))).toEqual(['local', undefined, 'local', 'local']);
    for (let i = 0; i < 1000; i++) sessions.remember('chat', `s${i}`, 'local');
    expect(sessions.size).toBe(3);
  });

  it('keys a very long session id by its first 200 characters', () => {
    const sessions = new SessionAffinity(() => 0);
    const long = 'x'.repeat(5000);
    sessions.remember('chat', long, 'local');
    expect(sessions.tierOf('chat', `${'x'.repeat(200)}y`)).toBe('local');
  });
});
