/**
 * The names the wires and everything above them share: the protocols a client speaks, and how
 * an upstream attempt or a whole request ended. Names only: telemetry, usage and the proxy
 * read them from here, below all of them.
 */

/** The protocol a client spoke to llm-route: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Ollama's API. */
export type ClientProtocol = 'chat' | 'responses' | 'messages' | 'ollama' | 'gemini';

/** The APIs a client's own credential can be for: the provider types that take one (api_key: from_client). */
export type CredentialApi = 'anthropic' | 'openai' | 'gemini';

/**
 * Why one upstream attempt gave no answer (`AttemptError.reason`): the name the request log,
 * the usage database, the metrics and a 502's `attempts` list give it.
 */
export type AttemptReason =
  // the connection
  | 'connection_refused'
  | 'connect_timeout'
  | 'unreachable'
  | 'connection_reset'
  | 'transport_error'
  // the clock
  | 'ttft_timeout'
  | 'total_timeout'
  | 'idle_timeout'
  // a committed stream on a resume route silent far longer than its own pace (src/proxy/silence-guard.ts)
  | 'stall_timeout'
  | 'deadline'
  // a non-2xx answer, as the wire codec classified it
  | 'rate_limited'
  | 'server_error'
  | 'timeout_or_conflict'
  | 'auth'
  // a 401/403 from a provider sent the client's own credential (api_key: from_client): the credential's fault, not the tier's
  | 'credential_rejected'
  | 'model_not_found'
  | 'client_error'
  | 'context_length'
  | 'content_policy'
  | 'bad_request'
  // a 2xx answer that is not one
  | 'bad_response'
  | 'empty_stream'
  | 'upstream_error'
  | 'broken_stream'
  | 'answer_too_large'
  // a tool call written as text that the client cannot run (src/protocols/tool-text/)
  | 'bad_tool_call'
  // a mid-stream resume whose replay is not the answer the client has
  | 'replay_diverged'
  // an embeddings answer whose vectors are not of its space's width (docs/embeddings.md): never delivered
  | 'dimension_mismatch'
  // a hedged first token: the other of two racing attempts committed first (not a failure of this tier)
  | 'hedge_lost'
  // not the tier's doing: a request it cannot carry, the client leaving, the server stopping
  | 'unsupported'
  | 'client_abort'
  | 'shutdown';

/**
 * How one attempt ended: `ok`, a reason it failed, or why the tier was skipped: `budget` (its
 * budget was spent), `too_long`, `no_client_credential` (it takes the client's own credential
 * and the request carried none for it).
 */
export type AttemptOutcome = 'ok' | AttemptReason | 'budget' | 'too_long' | 'no_client_credential';

export type RequestOutcome =
  | 'ok' // answered (stream finished cleanly, or a whole response)
  | 'interrupted' // committed stream ended by an upstream stall or break
  | 'upstream_rejected' // the payload's fault; the upstream's error was passed on
  | 'failed' // every tier failed
  | 'timeout' // every tier timed out, or the route's deadline passed
  | 'client_abort' // the client went away first
  | 'overloaded' // refused for load: server.max_streams streams were open
  | 'bad_request' // rejected by llm-route before routing
  | 'replayed'; // the answer stored under its Idempotency-Key (no tier was asked)
