// What the soak checks on every answer: the text of one upstream only, in order (never two
// upstreams spliced, nothing made up), a stream ending with its protocol's terminator or its
// error event (never neither, never a clean end after an error), every failure a clean error in
// the client's protocol.

/** The words `llm-route mock` streams, one per content chunk (src/mock/server.ts); checked against a live mock at start. */
const MOCK_WORDS =
  'hello from a simulated upstream: this answer streams one word per chunk so you can watch time to first token and failover happen live.'.split(' ');

/** The content chunks of a mock's completion: its name first, then the words. */
export function mockTokens(name, count) {
  return Array.from({ length: count }, (_, i) => (i === 0 ? `[${name}]` : ` ${MOCK_WORDS[(i - 1) % MOCK_WORDS.length]}`));
}

/**
 * Matches `text` against the completion `tokens` in order, tokens allowed missing (a malformed
 * chunk is dropped from a stream). Returns how many tokens the text holds, or null when it is not
 * an in-order selection of them (spliced, repeated or made up).
 */
export function matchedTokens(text, tokens) {
  let pos = 0;
  let next = 0;
  let matched = 0;
  while (pos < text.length) {
    let found = -1;
    for (let j = next; j < tokens.length; j++) {
      const end = pos + tokens[j].length;
      if (text.startsWith(tokens[j], pos) && (end === text.length || text[end] === ' ')) {
        found = j;
        break;
      }
    }
    if (found === -1) return null;
    matched++;
    pos += tokens[found].length;
    next = found + 1;
  }
  return matched;
}

/** The events of an SSE body: `{ event, data }` with data JSON-parsed when it is JSON. */
export function sseEvents(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    let event = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    const raw = data.join('\n');
    let parsed = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // "[DONE]" and friends stay text
    }
    events.push({ event, data: parsed });
  }
  return events;
}

/** Per protocol: the text of a stream's events, whether it ended with its terminator, or with its error event. */
const STREAMS = {
  chat: {
    text: (e) => e.data?.choices?.[0]?.delta?.content ?? '',
    terminator: (e) => e.data === '[DONE]',
    error: (e) => e.data?.error?.code === 'stream_interrupted',
  },
  responses: {
    text: (e) => (e.data?.type === 'response.output_text.delta' ? e.data.delta : ''),
    terminator: (e) => e.data?.type === 'response.completed',
    error: (e) => e.event === 'error' && e.data?.code === 'stream_interrupted',
  },
  messages: {
    text: (e) => (e.data?.type === 'content_block_delta' && e.data.delta?.type === 'text_delta' ? e.data.delta.text : ''),
    terminator: (e) => e.data?.type === 'message_stop',
    error: (e) => e.event === 'error' && e.data?.type === 'error' && e.data.error?.type === 'api_error',
  },
};

/** Per protocol: the text of a whole answer. */
const WHOLE = {
  chat: (b) => b?.choices?.[0]?.message?.content,
  responses: (b) =>
    b?.output
      ?.filter((o) => o.type === 'message')
      .flatMap((o) => o.content)
      .filter((c) => c.type === 'output_text')
      .map((c) => c.text)
      .join(''),
  messages: (b) =>
    b?.content
      ?.filter((c) => c.type === 'text')
      .map((c) => c.text)
      .join(''),
};

/** An error llm-route made, in the client's protocol's shape; a problem text when it is not one. */
export function errorShapeProblem(protocol, body) {
  const error = body?.error;
  if (typeof error !== 'object' || error === null) return 'no error object';
  if (typeof error.message !== 'string' || error.message === '') return 'no error.message';
  if (protocol === 'messages') return body.type === 'error' && /_error$/.test(error.type ?? '') ? null : 'not an Anthropic error';
  return typeof error.type === 'string' && 'code' in error && !('type' in body) ? null : 'not an OpenAI error';
}

/**
 * Reads one answer. `kind`: complete (a whole answer, or a stream with its terminator),
 * interrupted (a stream ended by its error event), error (an error status). `problems` lists
 * every broken invariant.
 */
export function readAnswer({ protocol, stream, status, headers, body }, completions) {
  const problems = [];
  const tier = headers['x-llm-route-tier'];
  if (status !== 200) {
    let parsed;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { kind: 'error', tier, problems: [`HTTP ${status} with a body that is not JSON`] };
    }
    const shape = errorShapeProblem(protocol, parsed);
    if (shape) problems.push(`HTTP ${status}: ${shape}`);
    if (!headers['x-request-id']) problems.push(`HTTP ${status} without x-request-id`);
    return { kind: 'error', tier, problems };
  }
  const tokens = completions[tier];
  if (!tokens) return { kind: 'complete', tier, problems: [`HTTP 200 from an unknown tier "${tier}"`] };
  let text;
  let kind = 'complete';
  if (stream) {
    const rules = STREAMS[protocol];
    const events = sseEvents(body);
    text = events.map(rules.text).join('');
    const ends = events.filter((e) => rules.terminator(e) || rules.error(e));
    const last = events.at(-1);
    if (ends.length !== 1)
      problems.push(`stream with ${ends.length} terminators/error events (${ends.map((e) => e.event ?? JSON.stringify(e.data).slice(0, 40)).join(', ')})`);
    else if (ends[0] !== last) problems.push('events after the terminator or the error event');
    if (last && rules.error(last)) kind = 'interrupted';
    else if (!last || !rules.terminator(last)) problems.push('stream ended with neither its terminator nor its error event');
  } else {
    try {
      text = WHOLE[protocol](JSON.parse(body));
    } catch {
      problems.push('HTTP 200 whole answer that is not JSON');
    }
    if (typeof text !== 'string') problems.push('HTTP 200 whole answer without text');
  }
  const matched = typeof text === 'string' ? matchedTokens(text, tokens) : null;
  if (typeof text === 'string' && matched === null) problems.push(`text is not ${tier}'s alone, in order: ${JSON.stringify(text.slice(0, 120))}`);
  for (const other of Object.keys(completions)) {
    if (other !== tier && typeof text === 'string' && text.includes(`[${other}]`)) problems.push(`text of ${other} in an answer from ${tier}`);
  }
  // A complete answer lacks only the tokens dropped as malformed (checked against the request log's chunk_errors).
  return { kind, tier, problems, dropped: kind === 'complete' && matched !== null ? tokens.length - matched : null };
}
