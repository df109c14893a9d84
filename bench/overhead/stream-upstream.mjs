// A bare streaming upstream in three wires, each answer written at once (as the fast mock does):
// Chat Completions SSE at /v1/chat/completions, Ollama's NDJSON at /api/chat, Gemini's SSE at
// /v1beta/models/{model}:streamGenerateContent. TOKENS content events, then each wire's finish
// and usage; GET /v1beta/models/{model} gives a model entry (discovery). Prints `listening on URL`.
// Usage: node stream-upstream.mjs TOKENS
import { createServer } from 'node:http';

const TOKENS = Number(process.argv[2] ?? 100);
const words = Array.from({ length: TOKENS }, (_, i) => (i === 0 ? 'Hello' : ` w${i}`));

const chat = (() => {
  const base = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":';
  let out = `data: ${base}{"role":"assistant","content":""},"finish_reason":null}]}\n\n`;
  for (const word of words) out += `data: ${base}{"content":${JSON.stringify(word)}},"finish_reason":null}]}\n\n`;
  out += `data: ${base}{},"finish_reason":"stop"}]}\n\n`;
  out += `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":${TOKENS},"total_tokens":${9 + TOKENS}}}\n\n`;
  return Buffer.from(`${out}data: [DONE]\n\n`);
})();

const ollama = (() => {
  let out = '';
  for (const word of words)
    out += `{"model":"m","created_at":"2026-12-01T10:00:00.000000Z","message":{"role":"assistant","content":${JSON.stringify(word)}},"done":false}\n`;
  out += `{"model":"m","created_at":"2026-12-01T10:00:00.000000Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"load_duration":1,"prompt_eval_count":9,"prompt_eval_duration":1,"eval_count":${TOKENS},"eval_duration":1}\n`;
  return Buffer.from(out);
})();

const gemini = (() => {
  const tail = (n, finish) =>
    `],"role": "model"}${finish ? ',"finishReason": "STOP"' : ''},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": ${n},"totalTokenCount": ${9 + n},"promptTokensDetails": [{"modality": "TEXT","tokenCount": 9}]},"modelVersion": "m","responseId": "Zr1baKjJMZ3Gz7IPmc_F-Qg"}\r\n\r\n`;
  let out = '';
  words.forEach((word, i) => {
    out += `data: {"candidates": [{"content": {"parts": [{"text": ${JSON.stringify(word)}}${tail(i + 1, i === TOKENS - 1)}`;
  });
  return Buffer.from(out);
})();

const modelEntry = Buffer.from(
  JSON.stringify({ name: 'models/m', version: '001', displayName: 'm', inputTokenLimit: 1048576, outputTokenLimit: 65536, thinking: false }, null, 2),
);

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1beta/models/m') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      return void res.end(modelEntry);
    }
    if (req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"not found"}}');
    }
    if (path === '/v1/chat/completions') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(chat);
    }
    if (path === '/api/chat') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      return void res.end(ollama);
    }
    if (path.endsWith(':streamGenerateContent')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(gemini);
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found"}}');
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`stream upstream listening on http://127.0.0.1:${server.address().port}\n`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
