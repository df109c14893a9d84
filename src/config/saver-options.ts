import { z } from '#zod';

/**
 * Token savers and their options. A `savers:` entry is a name or a one-key map `{ name: options }`;
 * entries are checked by config/savers.ts (names with "did you mean", options against these).
 */
export const SAVER_OPTIONS = {
  whitespace: z.strictObject({ tool_results: z.boolean().default(false) }),
  dedupe_system: z.strictObject({}),
  minify_tool_json: z.strictObject({}),
  truncate_tool_output: z.strictObject({ max_tokens: z.number().int().min(32) }),
  trim_history: z.strictObject({ max_tokens: z.number().int().min(1), keep_last: z.number().int().min(1).default(6) }),
};
export type SaverName = keyof typeof SAVER_OPTIONS;
export type SaverSpec = { [K in SaverName]: { name: K; options: z.output<(typeof SAVER_OPTIONS)[K]> } }[SaverName];
export const SaverListSchema = z.array(z.unknown());
