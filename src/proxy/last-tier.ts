import type { Tier } from '../config/schema.js';
import { checkFit } from '../fit/fit-check.js';
import { UpstreamCall } from '../protocols/call.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';
import { type ClientRequest, isUnsupported } from '../protocols/core/types.js';
import type { ClientCodec } from '../protocols/core/client-codec.js';

/** What the check needs of the request (its routing request has it). */
interface Site {
  codec: ClientCodec;
  request: ClientRequest;
  prompt: PromptCount;
}

/**
 * Whether the tier at plan index `t` is the last this request will try (README "Agents on
 * local models"): the plan after weights, health and rules has no tier after it that can carry
 * the request and fits it. A tool call written as text that the client cannot run goes out as
 * written there, since no tier is left to ask. Found out only when it matters: when a form
 * starts to be held (so a count the fit check needs is ready by the time the form closes), or
 * when a call turns out unusable; never for a plain answer.
 */
export class LastTier {
  private known: boolean | undefined;
  private pending: Promise<unknown> | null = null;

  constructor(
    private readonly site: Site,
    private readonly plan: readonly Tier[],
    private readonly t: number,
  ) {
    if (t >= plan.length - 1) this.known = true;
  }

  /** Starts finding out (a fit check may have to count the prompt's tokens first). */
  prepare(): void {
    if (this.known !== undefined || this.pending) return;
    const fits = laterTierFits(this.site, this.plan, this.t + 1);
    if (typeof fits === 'boolean') this.known = !fits;
    else this.pending = fits.then((found) => (this.known = !found)).catch(() => (this.known = false));
  }

  /** The answer, or undefined while a later tier's fit is still being counted. */
  readonly isLast = (): boolean | undefined => {
    this.prepare();
    return this.known;
  };

  /** The answer once known (a whole answer can wait for it). */
  async settled(): Promise<boolean> {
    this.prepare();
    if (this.pending) await this.pending;
    return this.known ?? false;
  }
}

/** Whether a tier of the plan from index `from` on can carry the request and fits it (the fit check's verdict, without recording a skip). */
function laterTierFits(site: Site, plan: readonly Tier[], from: number): boolean | Promise<boolean> {
  const { codec, request } = site;
  for (let u = from; u < plan.length; u++) {
    const tier = plan[u];
    // Only its fit is asked: what it would make of tool text does not matter here.
    const call = UpstreamCall.prepare(tier, codec, request, null);
    if (isUnsupported(call)) continue;
    const verdict = checkFit(tier, request, call.request.body, site.prompt);
    if (verdict instanceof Promise) return verdict.then((v) => v.fits || laterTierFits(site, plan, u + 1));
    if (verdict.fits) return true;
  }
  return false;
}
