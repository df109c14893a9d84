/** Cloud providers `init` recognises by their API key's environment variable. */
export interface CloudProvider {
  name: string;
  /** The variable its key is read from (the first of its variables that is set, once found). */
  envVar: string;
  /** Other variables the same key is known by (Google's SDKs read GOOGLE_API_KEY as well as GEMINI_API_KEY). */
  otherEnvVars?: readonly string[];
  type: 'openai' | 'anthropic' | 'gemini';
  baseUrl: string;
  /** A sensible default model; the user may change it. */
  model: string;
  /** USD per 1M tokens, as published at the time of writing (the user should check). */
  price?: { input_per_mtok: number; output_per_mtok: number };
}

export const CLOUD_PROVIDERS: CloudProvider[] = [
  {
    name: 'anthropic',
    envVar: 'ANTHROPIC_API_KEY',
    type: 'anthropic',
    baseUrl: 'https://api.anthropic.com',
    model: 'claude-sonnet-4-5',
    price: { input_per_mtok: 3, output_per_mtok: 15 },
  },
  {
    name: 'openai',
    envVar: 'OPENAI_API_KEY',
    type: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    model: 'gpt-4o-mini',
    price: { input_per_mtok: 0.15, output_per_mtok: 0.6 },
  },
  { name: 'openrouter', envVar: 'OPENROUTER_API_KEY', type: 'openai', baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4o-mini' },
  {
    name: 'gemini',
    envVar: 'GEMINI_API_KEY',
    otherEnvVars: ['GOOGLE_API_KEY'],
    type: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    model: 'gemini-2.5-flash',
    price: { input_per_mtok: 0.3, output_per_mtok: 2.5 },
  },
  { name: 'groq', envVar: 'GROQ_API_KEY', type: 'openai', baseUrl: 'https://api.groq.com/openai/v1', model: 'llama-3.3-70b-versatile' },
  { name: 'mistral', envVar: 'MISTRAL_API_KEY', type: 'openai', baseUrl: 'https://api.mistral.ai/v1', model: 'mistral-small-latest' },
  { name: 'deepseek', envVar: 'DEEPSEEK_API_KEY', type: 'openai', baseUrl: 'https://api.deepseek.com/v1', model: 'deepseek-chat' },
];

/** The cloud providers whose key variable is set (non-empty), each with the variable found. Only names are looked at, never kept values. */
export function cloudProvidersInEnv(env: NodeJS.ProcessEnv = process.env): CloudProvider[] {
  return CLOUD_PROVIDERS.flatMap((p) => {
    const envVar = [p.envVar, ...(p.otherEnvVars ?? [])].find((name) => (env[name] ?? '').trim() !== '');
    return envVar === undefined ? [] : [{ ...p, envVar }];
  });
}
