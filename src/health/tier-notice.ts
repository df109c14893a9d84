import type { Dispatcher } from 'undici';
import type { Config, Tier } from '../config/schema.js';
import { isPaidTier } from '../config/tier-kind.js';
import type { TierUnavailable } from '../telemetry/events.js';
import { describeFailure } from './check-failure.js';
import { checkTier } from './check-tier.js';
import { Deadline } from './deadline.js';
import { listModels } from './upstream-models.js';

/**
 * How long the start-up check may take in all. A local server that is down refuses at once; a
 * cloud API answers its model list in a few hundred ms; what has not answered by then is said
 * to be unreachable, so `serve` and `exec` start at most this much later.
 */
export const NOTICE_TIMEOUT_MS = 1_500;

type Verdict = { problem: TierUnavailable['problem']; detail: string } | null;

/**
 * The start-up notice: every tier checked once, at the same time, within `timeoutMs`, and one
 * event per tier that cannot answer, naming the tier its requests go to instead. A local tier
 * (config/tier-kind.ts) must be reachable and serve its model (a model missing from its list is asked for once with a
 * 1-token request, free on a local server: llama.cpp lists only its alias and serves any name);
 * a cloud tier must be reachable (its model list answering, whatever it lists: no paid request,
 * and Anthropic's list has no aliases).
 */
export async function tierNotice(config: Config, opts: { timeoutMs?: number; dispatcher?: Dispatcher; signal?: AbortSignal } = {}): Promise<TierUnavailable[]> {
  const timeoutMs = opts.timeoutMs ?? NOTICE_TIMEOUT_MS;
  // One check per server and model, whichever routes share it.
  const checks = new Map<string, Promise<Verdict>>();
  const verdictOf = (tier: Tier): Promise<Verdict> => {
    const local = !isPaidTier(tier);
    const key = `${tier.provider.name}\0${local ? tier.model : ''}`;
    let verdict = checks.get(key);
    if (!verdict) checks.set(key, (verdict = local ? checkLocal(tier, timeoutMs, opts) : checkCloud(tier, timeoutMs, opts)));
    return verdict;
  };
  const routes = [...config.routes.values()];
  const verdicts = await Promise.all(routes.map((route) => Promise.all(route.tiers.map(verdictOf))));
  const notices: TierUnavailable[] = [];
  routes.forEach((route, r) => {
    route.tiers.forEach((tier, t) => {
      const verdict = verdicts[r][t];
      if (!verdict) return;
      const next = route.tiers.find((_other, o) => o > t && verdicts[r][o] === null);
      notices.push({
        type: 'tier_unavailable',
        route: route.name,
        tier: tier.name,
        ...verdict,
        fallback: next ? `${route.name}/${next.name}` : null,
        paid: next ? isPaidTier(next) : null,
      });
    });
  });
  return notices;
}

/** The notice as one line for people: what is wrong with the tier, and where its requests go. */
export function tierNoticeText(notice: TierUnavailable): string {
  const what = notice.problem === 'unreachable' ? 'is unreachable' : 'lacks its model';
  const where =
    notice.fallback === null
      ? 'no tier after it answered either: its requests will fail'
      : `its requests go to ${notice.fallback}, ${notice.paid ? 'a paid tier' : 'a local tier (not paid)'}`;
  return `${notice.route}/${notice.tier} ${what} (${notice.detail}); ${where}`;
}

async function checkLocal(tier: Tier, timeoutMs: number, opts: { dispatcher?: Dispatcher; signal?: AbortSignal }): Promise<Verdict> {
  const check = await checkTier(tier, { timeoutMs, ttft: false, dispatcher: opts.dispatcher, signal: opts.signal });
  if (opts.signal?.aborted) return null; // stopped (a signal while starting): nothing to say
  if (!check.reachable) return { problem: 'unreachable', detail: check.error ?? 'no answer' };
  if (check.modelPresent === false && check.status === 'unhealthy') return { problem: 'model_missing', detail: check.error ?? `no model ${tier.model}` };
  return null;
}

async function checkCloud(tier: Tier, timeoutMs: number, opts: { dispatcher?: Dispatcher; signal?: AbortSignal }): Promise<Verdict> {
  const deadline = new Deadline(timeoutMs, opts.signal);
  try {
    await listModels(tier.provider, { signal: deadline.signal, dispatcher: opts.dispatcher });
    return null;
  } catch (error) {
    if (deadline.cancelled) return null;
    return { problem: 'unreachable', detail: describeFailure(error, deadline, tier.provider, 'listing models') };
  } finally {
    deadline.dispose();
  }
}
