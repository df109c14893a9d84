import type { TierView } from '../dashboard-state.js';
import { formatCount, formatMs } from '../../util/format.js';
import { sparkline } from '../sparkline.js';
import { TREND_BARS, type ColumnKey, type ContentWidths } from './table-columns.js';

const NONE = '–';

/** The text of one tier's cell in a column (the marker column excepted). */
export function tierCellText(tier: TierView, key: Exclude<ColumnKey, 'marker'>): string {
  switch (key) {
    case 'tier':
      return tier.name;
    case 'model':
      return providerModel(tier);
    case 'state':
      return tier.health;
    case 'weight':
      return tier.weightText;
    case 'live':
      return formatCount(tier.live);
    case 'requests':
      return formatCount(tier.requests);
    case 'errors':
      return formatCount(tier.errors);
    case 'failovers':
      return formatCount(tier.failovers);
    case 'p50':
      return tier.ttft ? formatMs(tier.ttft.p50) : NONE;
    case 'p95':
      return tier.ttft ? formatMs(tier.ttft.p95) : NONE;
    case 'p99':
      return tier.ttft ? formatMs(tier.ttft.p99) : NONE;
    case 'cache':
      return tier.cacheHitRate === null ? NONE : `${Math.round(tier.cacheHitRate * 100)}%`;
    case 'trend':
      return sparkline(tier.ttftHistory.slice(-TREND_BARS));
    case 'context':
      return tier.context === null ? NONE : formatCount(tier.context);
  }
}

/** `provider/model`, with its server's word on the model when it says: `(loaded)` or `(cold)`. */
export function providerModel(tier: TierView): string {
  const said = tier.loaded === undefined ? '' : tier.loaded ? ' (loaded)' : ' (cold)';
  return `${tier.provider}/${tier.model}${said}`;
}

/** The widest tier name, provider/model and weight text, so those columns fit their data. */
export function measureContent(tiers: readonly TierView[]): ContentWidths {
  const widths: ContentWidths = { tier: 0, model: 0, weight: 0 };
  for (const tier of tiers) {
    widths.tier = Math.max(widths.tier, tier.name.length);
    widths.model = Math.max(widths.model, providerModel(tier).length);
    widths.weight = Math.max(widths.weight, tier.weightText.length);
  }
  return widths;
}
