import type { Env } from './env.js';
import type { ConfigProblem, PathSegment } from './errors.js';
import { FROM_CLIENT } from './provider-schema.js';
import { isRecord } from './raw-data.js';

// `redis`: a URL may carry a password (redis://:PASS@host).
const SECRET_KEYS = new Set(['api_key', 'auth_token', 'admin_token', 'headers', 'redis']);
const SECRET_VARIABLE = /KEY|TOKEN|SECRET|PASS|CRED|AUTH/i;

/** True for values under a secret-holding key, whose value no message may quote. */
export function isSecretPath(path: readonly PathSegment[]): boolean {
  return path.some((segment) => typeof segment === 'string' && SECRET_KEYS.has(segment));
}

/** Strings that must never reach a message: secret-keyed values and secret-looking variables' values. */
export function secretValues(data: unknown, env: Env, variables: ReadonlySet<string>): string[] {
  const secrets: string[] = [];
  const collect = (value: unknown, path: PathSegment[]): void => {
    // `api_key: from_client` names no secret: messages may say it.
    if (typeof value === 'string' && isSecretPath(path) && !(value === FROM_CLIENT && path.at(-1) === 'api_key')) secrets.push(value);
    else if (Array.isArray(value)) value.forEach((item: unknown, index: number) => collect(item, [...path, index]));
    else if (isRecord(value)) for (const [key, item] of Object.entries(value)) collect(item, [...path, key]);
  };
  collect(data, []);
  for (const name of variables) {
    const value = env[name];
    if (value && SECRET_VARIABLE.test(name)) secrets.push(value);
  }
  // Very short strings would blank out ordinary words; no real secret is that short.
  // Longest first, so a secret containing another is hidden whole rather than in part.
  return secrets.filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}

/** `text` with every secret replaced by ***. */
export function hideSecrets(text: string, secrets: readonly string[]): string {
  return secrets.reduce((hidden, secret) => hidden.replaceAll(secret, '***'), text);
}

/** The problem with every secret in its message replaced by ***. */
export function redact(problem: ConfigProblem, secrets: readonly string[]): ConfigProblem {
  return { ...problem, message: hideSecrets(problem.message, secrets) };
}
