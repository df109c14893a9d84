import { z } from '#zod';

// docs/rules.md: top-level `rules:`, first match wins; each names a route.

/** `prompt_tokens: ">= 60000"`: an operator and a whole number of tokens. */
const COMPARISON = /^\s*(>=|<=|>|<|==|=)\s*(\d+)\s*$/;

export type ComparisonOperator = '>=' | '<=' | '>' | '<' | '==';

export interface Comparison {
  op: ComparisonOperator;
  value: number;
}

/** The comparison a `prompt_tokens` string says; undefined when it says none. */
export function parseComparison(text: string): Comparison | undefined {
  const match = COMPARISON.exec(text);
  if (!match) return undefined;
  return { op: (match[1] === '=' ? '==' : match[1]) as ComparisonOperator, value: Number(match[2]) };
}

export const RuleWhenSchema = z.strictObject({
  /** A glob on the model name the client asked for (`claude-haiku-*`). */
  model: z.string().min(1).optional(),
  protocol: z.enum(['chat', 'responses', 'messages', 'ollama', 'gemini']).optional(),
  client: z.enum(['claude-code', 'codex', 'gemini-cli', 'ollama', 'other']).optional(),
  class: z.enum(['main', 'background', 'subagent']).optional(),
  thinking: z.boolean().optional(),
  images: z.boolean().optional(),
  tools: z.boolean().optional(),
  prompt_tokens: z
    .string()
    .refine((text) => parseComparison(text) !== undefined, 'expected a comparison such as ">= 60000" (>=, <=, >, <, ==)')
    .optional(),
  /** Request headers that must be present with exactly these values (names case-insensitive). */
  header: z.record(z.string().min(1), z.string()).optional(),
});

export const RuleSchema = z.strictObject({
  /** Said in the request log's `rule` and by `explain` instead of the rule's index. */
  name: z.string().min(1).optional(),
  when: RuleWhenSchema,
  route: z.string().min(1),
});

export type RuleWhen = z.infer<typeof RuleWhenSchema>;
