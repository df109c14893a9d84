/** What llm-route serves, as clients that list models see it: the routes (and aliases that are plain names). */
export interface ModelCatalog {
  /** When the server started (a model's "modified" time). */
  readonly startedAt: number;
  readonly models: readonly CatalogModel[];
}

export interface CatalogModel {
  readonly name: string;
  /** The largest window known among the tiers that may answer; undefined when none is known. */
  readonly context: number | undefined;
  /** The most tokens an answer may have when every tier caps it (its `max_tokens`): the largest cap; undefined otherwise. */
  readonly output: number | undefined;
  /** Some tier can carry tools (none is known not to: tool calls written as text are recovered). */
  readonly tools: boolean;
  /** Some tier takes images. */
  readonly vision: boolean;
  /** Some tier reasons. */
  readonly thinking: boolean;
  /** Its first tier has its model in memory now (or needs no loading). */
  readonly loaded: boolean;
  /** An embeddings route (kind: embeddings): it embeds, and does nothing else. */
  readonly embedding?: boolean;
}

/** The content types of a client's stream: server-sent events, or one JSON object a line (Ollama). */
export const SSE_TYPE = 'text/event-stream; charset=utf-8';
export const NDJSON_TYPE = 'application/x-ndjson';
