import { describe, expect, it } from 'vitest';
import { actualSpend, budgetScopes, worstCase } from '../../../../src/usage/budgets/amounts.js';
import { budgetWindow } from '../../../../src/usage/budgets/windows.js';
import { tier } from '../../../helpers/config.js';

const price = { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 1 };

describe('budget amounts', () => {
  it("scopes: the tier's route and provider", () => {
    expect(budgetScopes(tier('cloud'))).toEqual(['route:chat', 'provider:p']);
  });

  it('the worst case: prompt estimate + max tokens (default 4096), priced at the tier; 0 USD unpriced', () => {
    expect(worstCase({ price }, 1000, 500)).toEqual({ tokens: 1500, usd: (1000 * 2 + 500 * 8) / 1e6 });
    expect(worstCase({ price }, 1000)).toEqual({ tokens: 5096, usd: (1000 * 2 + 4096 * 8) / 1e6 });
    expect(worstCase({}, 1000, 10)).toEqual({ tokens: 1010, usd: 0 });
  });

  it('the actual spend: prompt + completion tokens, cost with cached tokens; nothing when no tier answered', () => {
    const spent = actualSpend({ price }, { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 600 });
    expect(spent.tokens).toBe(1100);
    expect(spent.usd).toBeCloseTo((400 * 2 + 600 * 1 + 100 * 8) / 1e6, 15);
    expect(actualSpend(null, { prompt_tokens: 5, completion_tokens: 5 })).toEqual({ tokens: 0, usd: 0 });
    expect(actualSpend({ price }, undefined)).toEqual({ tokens: 0, usd: 0 });
  });

  it('windows end at UTC midnight and on the 1st (leap years, year ends)', () => {
    expect(budgetWindow('day', Date.UTC(2024, 1, 29, 23, 59, 59))).toEqual({ start: Date.UTC(2024, 1, 29), end: Date.UTC(2024, 2, 1) });
    expect(budgetWindow('month', Date.UTC(2024, 1, 29, 12))).toEqual({ start: Date.UTC(2024, 1, 1), end: Date.UTC(2024, 2, 1) });
    expect(budgetWindow('month', Date.UTC(2025, 11, 31, 23, 59))).toEqual({ start: Date.UTC(2025, 11, 1), end: Date.UTC(2026, 0, 1) });
    expect(budgetWindow('day', Date.UTC(2025, 0, 1, 0, 0, 0))).toEqual({ start: Date.UTC(2025, 0, 1), end: Date.UTC(2025, 0, 2) });
  });
});
