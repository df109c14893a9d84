/**
 * Which tier answered each session's last turn, per route, so that the session's next turn
 * goes there again rather than wherever a weighted (canary) draw would send it: a local
 * server keeps a conversation in its KV cache, and a turn on another server reads it all
 * again. A session is what its client says (Claude Code's `x-claude-code-session-id`,
 * Codex's `session_id`, `prompt_cache_key`, `metadata.user_id`; see each client codec).
 *
 * In memory only, per instance, never in Redis or on disk: a session id is the client's, and
 * the map is a hint that may be lost (an instance restarts, a session reaches another
 * instance: one draw, then it sticks again). Bounded: at most `maxSessions` (least recently
 * used go first), and a session idle for `idleMs` is forgotten.
 */
export class SessionAffinity {
  private readonly entries = new Map<string, { tier: string; at: number }>();

  constructor(
    private readonly now: () => number,
    readonly maxSessions = 10_000,
    readonly idleMs = 60 * 60_000,
  ) {}

  /** The tier that answered the session's last turn on this route; undefined when none is remembered (or it expired). */
  tierOf(route: string, session: string): string | undefined {
    const key = keyOf(route, session);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() - entry.at > this.idleMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.tier;
  }

  /** The session's turn was answered by `tier`: it is the most recently used now. */
  remember(route: string, session: string, tier: string): void {
    const key = keyOf(route, session);
    this.entries.delete(key); // re-inserted last: a Map iterates in insertion order, oldest first
    this.entries.set(key, { tier, at: this.now() });
    if (this.entries.size > this.maxSessions) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Route names cannot contain NUL; a session id is cut to 200 characters (a client's ids are far shorter). */
function keyOf(route: string, session: string): string {
  return `${route}\u0000${session.length > 200 ? session.slice(0, 200) : session}`;
}
