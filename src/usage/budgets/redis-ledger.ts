import { nodeCrypto } from '../../util/node-crypto.js';
import type { Budget } from '../../config/schema.js';
import { budgetWindow } from './windows.js';
import type { BudgetAmount, BudgetLedger, BudgetStatus, Reservation } from './ledger.js';
import { LocalLedger, type PendingCharge, type WindowRef } from './local-ledger.js';
import { type RedisCall, type RedisLink, UNAVAILABLE } from '../../redis/redis-link.js';

/** A reservation held on this instance's own counters (taken while Redis was away). */
const LOCAL_PREFIX = 'l:';
/** Window counters outlive their window by a week (for a look with redis-cli), then go. */
const WINDOW_TTL_AFTER_END_MS = 7 * 86_400_000;
/** How often llm_budget_remaining is refreshed from Redis (other instances spend too): one HMGET per budget. */
const GAUGE_REFRESH_MS = 1_000;

interface Seen {
  spent: number;
  reserved: number;
}

/**
 * The budgets ledger on Redis: reserve and settle are one script call each, all or nothing
 * across the request's scopes, so instances sharing a Redis never overspend together. While
 * Redis is away, budgets are enforced on local counters (LocalLedger) that start from what
 * Redis last said; spend made meanwhile is added to Redis when it is back.
 */
export class RedisLedger implements BudgetLedger {
  private budgets: Budget[] = [];
  private scopes = new Set<string>();
  private readonly seen = new Map<string, Seen>();
  private readonly local = new LocalLedger();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly link: RedisLink,
    private readonly prefix: string,
    budgets: readonly Budget[],
    private readonly setGauge: (status: readonly BudgetStatus[]) => void,
    private readonly holdMs = 3_600_000,
    private readonly now: () => number = Date.now,
  ) {
    this.configure(budgets);
    this.timer = setInterval(() => void this.refreshGauge(), GAUGE_REFRESH_MS);
    this.timer.unref();
  }

  configure(budgets: readonly Budget[]): void {
    this.budgets = [...budgets];
    this.scopes = new Set(budgets.map((b) => b.scope));
    void this.refreshGauge();
  }

  async reserve(scopes: readonly string[], amount: BudgetAmount): Promise<Reservation> {
    if (!scopes.some((scope) => this.scopes.has(scope))) return { ok: true, id: '' };
    const now = this.now();
    const refs = this.budgets.filter((b) => scopes.includes(b.scope)).map((b) => this.windowRef(b, now));
    const id = nodeCrypto().randomUUID();
    const args: Array<string | number> = [now, now + this.holdMs, id, this.holdKey('')];
    for (const ref of refs) args.push(ref.budget.limit, amount[ref.budget.unit], ref.budget.unit, Math.max(1, ref.end - now + WINDOW_TTL_AFTER_END_MS));
    const keys = [this.holdsKey(), this.holdKey(id), ...refs.map((r) => r.key)];
    // A lost reply may hide a hold taken on Redis: it is then released there (this request holds locally).
    const reply = await this.link.run((redis) => redis.llmBudgetReserve(keys.length, ...keys, ...args), this.endCall(id, null));
    if (reply === UNAVAILABLE) return this.reserveLocally(refs, amount, now);
    if (Number(reply[0]) === 1) {
      refs.forEach((ref, i) => this.seen.set(ref.key, { spent: Number(reply[1 + i * 2]), reserved: Number(reply[2 + i * 2]) }));
      this.publishGauge(now);
      return { ok: true, id };
    }
    const ref = refs[Number(reply[1]) - 1];
    const seen = { spent: Number(reply[2]), reserved: Math.max(0, Number(reply[3])) };
    this.seen.set(ref.key, seen);
    this.publishGauge(now);
    const { scope, unit, per, limit } = ref.budget;
    return { ok: false, scope, unit, per, remaining: Math.max(0, limit - seen.spent - seen.reserved), retryAfterMs: ref.end - now };
  }

  settle(id: string, actual: BudgetAmount): Promise<void> {
    return this.end(id, actual);
  }

  release(id: string): Promise<void> {
    return this.end(id, null);
  }

  async remaining(scope: string): Promise<BudgetStatus[]> {
    if (!this.scopes.has(scope)) return [];
    await this.refreshGauge();
    return this.status(this.now()).filter((s) => s.scope === scope);
  }

  /** Rejoined: spend counted locally meanwhile is added to Redis; the shared counters are the truth again. */
  async rejoin(): Promise<void> {
    await this.flushCharges();
    this.local.forgetWindows();
    await this.refreshGauge();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async end(id: string, actual: BudgetAmount | null): Promise<void> {
    if (id === '') return;
    if (id.startsWith(LOCAL_PREFIX)) {
      this.local.end(id.slice(LOCAL_PREFIX.length), actual);
      this.publishGauge(this.now());
      await this.flushCharges();
      return;
    }
    // Away: ended once Redis answers (its spend counted then, and only then: the local
    // ledger never saw this hold, so the rejoin's charges do not include it).
    const reply = await this.link.runOrReplay(this.endCall(id, actual));
    if (reply === UNAVAILABLE) return;
    for (let i = 0; i + 2 < reply.length; i += 3) this.seen.set(reply[i], { spent: Number(reply[i + 1]), reserved: Math.max(0, Number(reply[i + 2])) });
    this.publishGauge(this.now());
  }

  /** Ends a hold on Redis: safe to make twice (a hold already ended is gone, and ending it again does nothing). */
  private endCall(id: string, actual: BudgetAmount | null): RedisCall<string[]> {
    return (redis) => redis.llmBudgetEnd(this.holdsKey(), this.holdKey(id), actual?.tokens ?? 0, actual?.usd ?? 0, id, actual ? 1 : 0);
  }

  private reserveLocally(refs: WindowRef[], amount: BudgetAmount, now: number): Reservation {
    const seen = (key: string): number => {
      const s = this.seen.get(key);
      return s ? s.spent + s.reserved : 0;
    };
    const result = this.local.reserve(refs, amount, now, seen);
    this.publishGauge(now);
    return result.ok ? { ok: true, id: LOCAL_PREFIX + result.id } : result;
  }

  /**
   * Moves the spend settled locally to Redis. Away: it stays with the local ledger. Sent but
   * its reply lost: the same batch is made again later, and its id makes sure it counts once.
   */
  private async flushCharges(): Promise<void> {
    if (!this.link.up) return;
    const charges = this.local.takeCharges();
    if (charges.length === 0) return;
    const now = this.now();
    const ttls = charges.map((c: PendingCharge) => Math.max(1, c.end - now + WINDOW_TTL_AFTER_END_MS));
    const marker = `${this.prefix}budget-charge:${nodeCrypto().randomUUID()}`;
    const charge: RedisCall<number> = (redis) =>
      redis.llmBudgetCharge(charges.length + 1, marker, ...charges.map((c) => c.key), Math.max(...ttls), ...charges.flatMap((c, i) => [c.amount, ttls[i]]));
    await this.link.run(charge, charge);
  }

  /** Reads every budget's current window (one pipelined round trip) and publishes the gauge. */
  private async refreshGauge(): Promise<void> {
    if (this.budgets.length === 0) return this.setGauge([]);
    const now = this.now();
    const refs = this.budgets.map((b) => this.windowRef(b, now));
    const rows = await this.link.run((redis) => Promise.all(refs.map((ref) => redis.hmget(ref.key, 'spent', 'reserved'))));
    if (rows !== UNAVAILABLE)
      refs.forEach((ref, i) => this.seen.set(ref.key, { spent: Number(rows[i][0] ?? 0), reserved: Math.max(0, Number(rows[i][1] ?? 0)) }));
    this.publishGauge(now);
  }

  private publishGauge(now: number): void {
    this.setGauge(this.status(now));
  }

  private status(now: number): BudgetStatus[] {
    return this.budgets.map((budget) => {
      const ref = this.windowRef(budget, now);
      const seen = this.seen.get(ref.key) ?? { spent: 0, reserved: 0 };
      const used = seen.spent + seen.reserved + this.local.usedHere(ref.key);
      return {
        scope: budget.scope,
        per: budget.per,
        unit: budget.unit,
        limit: budget.limit,
        spent: seen.spent,
        reserved: seen.reserved,
        remaining: Math.max(0, budget.limit - used),
        resetsAt: ref.end,
      };
    });
  }

  private windowRef(budget: Budget, now: number): WindowRef {
    const window = budgetWindow(budget.per, now);
    return { key: `${this.prefix}budget:${budget.unit}:${budget.per}:${window.start}:${budget.scope}`, budget, end: window.end };
  }

  private holdsKey(): string {
    return `${this.prefix}budget-holds`;
  }

  private holdKey(id: string): string {
    return `${this.prefix}budget-hold:${id}`;
  }
}
