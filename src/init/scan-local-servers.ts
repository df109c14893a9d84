/**
 * `llm-route init`'s look around: which local model servers answer on their usual ports, and
 * with which models. Each probe has a short timeout; a port that answers something else is
 * named and skipped, a closed port is silent.
 */

export type ServerKind = 'ollama' | 'lmstudio' | 'llamacpp' | 'vllm';

export interface FoundServer {
  kind: ServerKind;
  /** What to call it in the file and the output ("Ollama", "llama.cpp", "llama-swap", …). */
  label: string;
  /** The provider's base_url (with /v1 for openai-type servers). */
  baseUrl: string;
  type: 'openai' | 'ollama';
  /** Its chat models. */
  models: string[];
  /** Its embedding models (an embeddings route is offered for the first: docs/embeddings.md). */
  embeddings: string[];
}

export interface Discovery {
  found: FoundServer[];
  /** "port 8080 answers, but not as llama.cpp / llama-swap (HTTP 404): skipped" lines. */
  skipped: string[];
}

export const DEFAULT_PORTS: Record<ServerKind, number> = { ollama: 11434, lmstudio: 1234, llamacpp: 8080, vllm: 8000 };
const NAMES: Record<ServerKind, string> = { ollama: 'Ollama', lmstudio: 'LM Studio', llamacpp: 'llama.cpp / llama-swap', vllm: 'vLLM' };

export interface DiscoverOptions {
  host?: string;
  ports?: Partial<Record<ServerKind, number>>;
  /** A whole origin for a kind (from the server's own variable, e.g. OLLAMA_HOST), and which variable said it. */
  origins?: Partial<Record<ServerKind, { origin: string; from: string }>>;
  timeoutMs?: number;
}

type Answer = { status: number; body: unknown } | null;

/** GET url as JSON; null when nothing listens (or it is too slow), body undefined when not JSON. */
async function getJson(url: string, timeoutMs: number): Promise<Answer> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: undefined };
    }
  } catch {
    return null;
  }
}

/**
 * An embedding model by what a server says of it: Ollama's family (`bert`, `nomic-bert`,
 * `jina-bert-v2`, …) or capabilities, else its name (`nomic-embed-text`, `text-embedding-…`,
 * `bge-m3` names say `embed` or not at all: an OpenAI-style list says nothing else).
 */
function isEmbeddingModel(name: string, families: unknown[] = [], capabilities: unknown[] = []): boolean {
  return /embed/i.test(name) || families.some((family) => typeof family === 'string' && /bert/i.test(family)) || capabilities.includes('embedding');
}

/** A server's models, chat and embedding apart. */
function byKind(names: string[], isEmbedding: (name: string, index: number) => boolean): Pick<FoundServer, 'models' | 'embeddings'> {
  return { models: names.filter((name, i) => !isEmbedding(name, i)), embeddings: names.filter((name, i) => isEmbedding(name, i)) };
}

/** The ids of an OpenAI model list ({ data: [{ id }] }), or null when it is not one. */
function modelIds(answer: Answer): string[] | null {
  if (answer?.status !== 200) return null;
  const data = (answer.body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return null;
  return data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string' && id !== '');
}

async function probeOllama(origin: string, t: number): Promise<Answer | FoundServer> {
  const tags = await getJson(`${origin}/api/tags`, t);
  const models = (tags?.body as { models?: unknown } | undefined)?.models;
  if (tags?.status !== 200 || !Array.isArray(models)) return tags;
  const listed = models.filter(
    (m): m is { name: string; details?: { family?: unknown; families?: unknown }; capabilities?: unknown } => typeof m?.name === 'string',
  );
  const embedding = (m: (typeof listed)[number]): boolean => {
    const details = m.details ?? {};
    const families = [details.family, ...(Array.isArray(details.families) ? details.families : [])];
    return isEmbeddingModel(m.name, families, Array.isArray(m.capabilities) ? m.capabilities : []);
  };
  const names = listed.map((m) => m.name);
  return { kind: 'ollama', label: 'Ollama', baseUrl: origin, type: 'ollama', ...byKind(names, (_name, i) => embedding(listed[i])) };
}

async function probeLmStudio(origin: string, t: number): Promise<Answer | FoundServer> {
  // LM Studio's own API says which models are LLMs (type "llm"/"vlm") and which are embeddings.
  const own = await getJson(`${origin}/api/v0/models`, t);
  const rich = (own?.body as { data?: unknown } | undefined)?.data;
  if (own?.status === 200 && Array.isArray(rich)) {
    const ids = rich.map((m) => String((m as { id?: unknown }).id));
    const types = rich.map((m) => String((m as { type?: unknown }).type));
    return { kind: 'lmstudio', label: 'LM Studio', baseUrl: `${origin}/v1`, type: 'openai', ...byKind(ids, (_id, i) => types[i] === 'embeddings') };
  }
  if (own === null) return null;
  const list = await getJson(`${origin}/v1/models`, t);
  const ids = modelIds(list);
  return ids ? { kind: 'lmstudio', label: 'LM Studio', baseUrl: `${origin}/v1`, type: 'openai', ...byKind(ids, (id) => isEmbeddingModel(id)) } : (list ?? own);
}

async function probeLlamaCpp(origin: string, t: number): Promise<Answer | FoundServer> {
  const [props, list] = await Promise.all([getJson(`${origin}/props`, t), getJson(`${origin}/v1/models`, t)]);
  const ids = modelIds(list);
  if (!ids) return list ?? props;
  // llama.cpp's server has /props (one model); llama-swap lists many and proxies /props per model.
  const isLlamaCpp = props?.status === 200 && typeof props.body === 'object' && props.body !== null && 'default_generation_settings' in props.body;
  const label = isLlamaCpp ? 'llama.cpp' : 'llama-swap';
  if (!isLlamaCpp && ids.length === 0) return list;
  return { kind: 'llamacpp', label, baseUrl: `${origin}/v1`, type: 'openai', ...byKind(ids, (id) => isEmbeddingModel(id)) };
}

async function probeVllm(origin: string, t: number): Promise<Answer | FoundServer> {
  const list = await getJson(`${origin}/v1/models`, t);
  const ids = modelIds(list);
  return ids ? { kind: 'vllm', label: 'vLLM', baseUrl: `${origin}/v1`, type: 'openai', ...byKind(ids, (id) => isEmbeddingModel(id)) } : list;
}

const PROBES: Record<ServerKind, (origin: string, timeoutMs: number) => Promise<Answer | FoundServer>> = {
  ollama: probeOllama,
  lmstudio: probeLmStudio,
  llamacpp: probeLlamaCpp,
  vllm: probeVllm,
};

/** Probes every kind on its port, all at once (each within timeoutMs per request). */
export async function discoverLocalServers(opts: DiscoverOptions = {}): Promise<Discovery> {
  const host = opts.host ?? '127.0.0.1';
  const timeoutMs = opts.timeoutMs ?? 800;
  const kinds = Object.keys(DEFAULT_PORTS) as ServerKind[];
  const results = await Promise.all(
    kinds.map(async (kind) => {
      const hostPart = host.includes(':') ? `[${host}]` : host;
      const origin = opts.origins?.[kind]?.origin ?? `http://${hostPart}:${opts.ports?.[kind] ?? DEFAULT_PORTS[kind]}`;
      return { kind, origin, result: await PROBES[kind](origin, timeoutMs) };
    }),
  );
  const found: FoundServer[] = [];
  const skipped: string[] = [];
  const seenOrigins = new Set<string>();
  for (const { kind, origin, result } of results) {
    if (result && 'kind' in result) {
      // Two kinds on one port (a server listing /v1/models answers every OpenAI-style probe): the first wins.
      if (seenOrigins.has(origin)) continue;
      seenOrigins.add(origin);
      found.push(result);
    } else if (result) {
      skipped.push(
        `${portName(origin, host)} answers, but not as ${NAMES[kind]} (HTTP ${result.status}${result.body === undefined ? ', not JSON' : ''}): skipped`,
      );
    }
  }
  return { found, skipped };
}

/** "port 8080" on the host init looks at, else the whole origin (one a server's variable named). */
function portName(origin: string, host: string): string {
  const url = new URL(origin);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return url.hostname.replace(/^\[|\]$/g, '') === host && url.pathname === '/' ? `port ${port}` : origin;
}
