import { createServer, type Server } from 'node:http';

/**
 * Local model servers as `llm-route init` meets them: each answers GET paths with the exact
 * bodies the real one sends (trimmed to the fields that matter plus a few that do not), on
 * port 0. Anything else is a 404 in that server's own words.
 */
export interface PathServer {
  port: number;
  hits: string[];
  close(): Promise<void>;
}

type Reply = { status: number; body: string; type?: string };

export async function pathServer(
  replies: Record<string, Reply>,
  notFound: Reply = { status: 404, body: '404 page not found', type: 'text/plain' },
): Promise<PathServer> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const reply = replies[req.url ?? ''] ?? notFound;
    res.writeHead(reply.status, { 'content-type': reply.type ?? 'application/json' });
    res.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const json = (body: unknown): Reply => ({ status: 200, body: JSON.stringify(body) });

/** Ollama 0.x: GET /api/tags (an embedding model as `nomic-embed-text` is listed: family nomic-bert, F16). */
export const ollamaTags = (names: string[], embeddings: string[] = []): Record<string, Reply> => ({
  '/api/tags': json({
    models: [
      ...names.map((name) => ({
        name,
        model: name,
        modified_at: '2026-11-20T10:11:12.123456789Z',
        size: 2019393189,
        digest: 'a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72',
        details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
      })),
      ...embeddings.map((name) => ({
        name,
        model: name,
        modified_at: '2026-11-19T09:08:07.123456789Z',
        size: 274302450,
        digest: '0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f',
        details: { parent_model: '', format: 'gguf', family: 'nomic-bert', families: ['nomic-bert'], parameter_size: '137M', quantization_level: 'F16' },
      })),
    ],
  }),
});

/** LM Studio 0.3: its own /api/v0/models (with types) and the OpenAI /v1/models. */
export const lmStudioModels = (llms: string[], embeddings: string[]): Record<string, Reply> => ({
  '/api/v0/models': json({
    object: 'list',
    data: [
      ...llms.map((id) => ({
        id,
        object: 'model',
        type: 'llm',
        publisher: 'lmstudio-community',
        arch: 'qwen2',
        compatibility_type: 'gguf',
        quantization: 'Q4_K_M',
        state: 'not-loaded',
        max_context_length: 32768,
      })),
      ...embeddings.map((id) => ({
        id,
        object: 'model',
        type: 'embeddings',
        publisher: 'nomic-ai',
        arch: 'nomic-bert',
        compatibility_type: 'gguf',
        quantization: 'Q4_K_M',
        state: 'not-loaded',
        max_context_length: 2048,
      })),
    ],
  }),
  '/v1/models': json({ object: 'list', data: [...llms, ...embeddings].map((id) => ({ id, object: 'model', owned_by: 'organization_owner' })) }),
});

/** llama.cpp's llama-server: /props and a one-model /v1/models. */
export const llamaCppServer = (model: string): Record<string, Reply> => ({
  '/props': json({
    default_generation_settings: { n_ctx: 4096, params: { temperature: 0.8 } },
    total_slots: 1,
    model_path: `/models/${model}`,
    chat_template: '{{ messages }}',
    build_info: 'b6500-1e2c3f4',
  }),
  '/v1/models': json({
    object: 'list',
    data: [
      {
        id: model,
        object: 'model',
        created: 1764547200,
        owned_by: 'llamacpp',
        meta: { vocab_type: 2, n_vocab: 151936, n_ctx_train: 32768, n_embd: 896, n_params: 494032768, size: 531067904 },
      },
    ],
  }),
});

/** vLLM 0.x: GET /v1/models. */
export const vllmModels = (ids: string[]): Record<string, Reply> => ({
  '/v1/models': json({
    object: 'list',
    data: ids.map((id) => ({
      id,
      object: 'model',
      created: 1764547200,
      owned_by: 'vllm',
      root: id,
      parent: null,
      max_model_len: 32768,
      permission: [{ id: 'modelperm-1', object: 'model_permission', allow_sampling: true }],
    })),
  }),
});
