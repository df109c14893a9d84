import type { ToolTextReport } from '../protocols/tool-text/scope.js';
import type { Usage } from '../protocols/core/usage.js';
import type { AnswerFacts } from '../protocols/core/neutral.js';
import type { AttemptOutcome, AttemptReason, ClientProtocol, RequestOutcome } from '../protocols/core/names.js';
import type { LoadAsk } from '../protocols/core/client-codec.js';

// One request's life as events: start, each upstream attempt, failover, commit, end.

/** What one token saver did to a request, measured with the tokenizer on the message contents. */
export interface SaverMeasure {
  saver: string;
  /** Tokens before and after this saver ran (equal when it saved nothing, failed, or was not applied). */
  before: number;
  after: number;
  /** The saver threw or overran its time budget: it was skipped for this request. */
  failed?: boolean;
}

/** One upstream try, as the request log and the 502 body list it. */
export interface AttemptRecord {
  tier: string;
  attempt: number;
  outcome: AttemptOutcome;
  status?: number;
  ms: number;
  message?: string;
}

/** A request whose `model` names no route and matched only a route's catch-all alias `*`. */
export interface CaughtByCatchAll {
  type: 'catch_all_alias';
  route: string;
  /** The client's model name, cut to 100 characters. */
  model: string;
}

/**
 * A request to a path llm-route does not serve (a client speaking an API it does not answer):
 * answered 404 in the shape of the protocol the path belongs to, and said in the log and the UI.
 */
export interface UnknownEndpoint {
  type: 'unknown_endpoint';
  method: string;
  /** The path without its query (which may carry a key), cut to 200 characters. */
  path: string;
  /** The client's user-agent, cut to 200 characters; undefined when it sent none. */
  userAgent: string | undefined;
  /** The protocol whose error shape the 404 took. */
  protocol: ClientProtocol;
}

/**
 * A request that asked only that its model be loaded or unloaded (Ollama's empty prompt): no
 * request for an answer, so it has no request_start or request_end, no usage row and no
 * attempt a tier's health counts; the log gives it a line of its own (docs/protocols.md, "A preload").
 */
export interface ModelLoaded {
  type: 'model_load';
  id: string;
  route: string;
  asked: LoadAsk;
  /** The tier sent it (or warmed for it); null when none was asked. */
  tier: string | null;
  /** `tier`: the tier's own answer went to the client; `llm-route`: llm-route answered it itself. */
  answeredBy: 'tier' | 'llm-route';
  /** The tier asked did what was asked (true when none was asked); else `error` says why (never a key). */
  ok: boolean;
  error?: string;
  durationMs: number;
}

export interface RequestStarted {
  type: 'request_start';
  id: string;
  route: string;
  stream: boolean;
  protocol: ClientProtocol;
}

/**
 * Whose fault a failed attempt was: `provider` (socket-level: counts against every tier of the
 * provider), `tier` (model-level: 404, context length, TTFT), `payload` (the request's own
 * fault; says nothing about health); null when nobody is at fault: success, the route's
 * deadline cutting the attempt short, or an input the tier cannot take.
 */
export type Blame = 'provider' | 'tier' | 'payload' | null;

export interface AttemptFinished {
  type: 'attempt_end';
  id: string;
  route: string;
  tier: string;
  provider: string;
  record: AttemptRecord;
  /** A streaming attempt: for `ok`, record.ms is the tier's own time to first token. */
  stream: boolean;
  blame: Blame;
  /** The model the tier was asked for. */
  model: string;
  /** Milliseconds from the request's arrival to the attempt's start, and to this record (its end; a stream's commit). */
  startMs: number;
  endMs: number;
}

export interface FailedOver {
  type: 'failover';
  id: string;
  route: string;
  fromTier: string;
  reason: AttemptReason;
}

export interface StreamCommitted {
  type: 'commit';
  id: string;
  route: string;
  tier: string;
  ttftMs: number;
}

/**
 * A tool call written as text being held (docs/tool-text.md): sent when its hold
 * begins, then at most once a second while it grows, and with `chars: 0` when it ends; the
 * dashboard shows it, so a long hold is visibly alive. Never one per chunk.
 */
export interface ToolTextHeld {
  type: 'tool_text_hold';
  id: string;
  route: string;
  tier: string;
  /** Characters of the form held so far; 0: the hold ended. */
  chars: number;
  /** Since the hold began. */
  ms: number;
}

export interface ChunkDropped {
  type: 'chunk_error';
  route: string;
  tier: string;
}

export interface RequestFinished {
  type: 'request_end';
  id: string;
  route: string;
  /** The tier that answered; null when none did. */
  tier: string | null;
  status: number;
  outcome: RequestOutcome;
  stream: boolean;
  /** True when a stream was committed (it was counted as active). */
  committed: boolean;
  attempts: AttemptRecord[];
  ttftMs?: number;
  durationMs: number;
  /** Epoch ms at the request's arrival. */
  startedAt: number;
  /** The protocol the client spoke (the route may be empty for requests rejected before routing). */
  protocol: ClientProtocol;
  /** The answering tier's provider and model; null when no tier answered. */
  provider: string | null;
  model: string | null;
  /** As the upstream reported it; absent when it reported none. */
  usage?: Usage;
  /**
   * Present only when a tier answered but reported no usage (or, for a stream cut before its
   * finish, usage that does not count the answer): the text to count with a tokenizer off the
   * request path (the prompt's message contents and the text the client received). `prompt`:
   * the upstream's own prompt figures, when it reported them before the stream ended.
   */
  estimate?: { promptText: string; completionText: string; prompt?: { tokens: number; cached: number } };
  /** Token savers that ran on the request, in order. */
  savers?: SaverMeasure[];
  /** The rule of `rules:` that chose the route: its `name:`, else its 0-based index (docs/rules.md). */
  rule?: string | number;
  /** Session affinity decided a weighted draw: the session stayed on the tier that answered its last turn. */
  affinity?: true;
  chunkErrors: number;
  error?: string;
  /** A committed stream that broke and was resumed (or tried to be) on a resume route. */
  resumed?: ResumedStream;
  /** Two attempts raced for the first token (a route with hedge_ms). */
  hedged?: HedgedStream;
  /** The hedge's loser's tokens, when its upstream reported any before it was stopped (a paid tier may bill them). */
  loserUsage?: { tier: string; provider: string; model: string; usage: Usage };
  /** The tier read fewer than 70% of the prompt tokens counted before sending: it cut the prompt silently (docs/fit.md). */
  promptTruncated?: { sent: number; read: number };
  /** Tool calls the model wrote as text, one report per attempt that held one (docs/tool-text.md); the last is the request's. */
  toolText?: ToolTextReport[];
  /** 'client': the tier that answered was sent the client's own credential (api_key: from_client): the client's account pays. */
  credential?: 'client';
  /** The agent session the client named (Claude Code's session id): the key of the server's per-session summary, nothing else. */
  session?: string;
  /** The client's request: its path as sent (with its query string, if any) and its W3C trace context headers (unchecked: traces validate them). */
  http?: { path: string | undefined; traceparent: string | undefined; tracestate: string | undefined };
  /** The client's max_tokens (max_completion_tokens, max_output_tokens), when it set one. */
  maxTokens?: number;
  /** Why the answer ended, as the stream's finish said (neutral names: stop, length, tool_calls, content_filter). */
  finishReason?: string;
  /** The upstream's own name for the model that answered, as its stream's first event that names one said. */
  responseModel?: string;
  /**
   * A whole answer's model and finish, worked out when asked: a relayed answer is decoded only
   * then (traces ask, as they make their spans off the request path).
   */
  answerFacts?: () => AnswerFacts;
  /** An embeddings request (docs/embeddings.md): its inputs; once answered, its vectors' width and how many inputs were cut to the tier's window. */
  embeddings?: EmbeddingsDone;
}

export interface EmbeddingsDone {
  inputs: number;
  width?: number;
  /** Inputs cut to fit the answering tier's window (the client allowed it: Ollama's truncate). */
  cut?: number;
}

/** A hedged first token: when the second attempt started (ms from the request's arrival), which tier won, which lost. */
export interface HedgedStream {
  at_ms: number;
  winner: string;
  loser: string;
  /** Whether the attempt that was hedged won, or its hedge (the metric's label; not on the log line). */
  result: 'first_won' | 'second_won';
}

/** A mid-stream resume: from which tier to which, by which means, why, after how much text, and how it went. */
export interface ResumedStream {
  from: string;
  to: string;
  how: 'replay' | 'continue';
  /** What ended the first stream: silence past its own pace (`stall_learned`), past idle_ms (`idle`), or a break. */
  why: 'stall_learned' | 'idle' | 'break';
  at_chars: number;
  result: 'ok' | 'diverged' | 'failed';
}
