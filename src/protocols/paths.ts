const joined = new Map<string, string>();

/** `{base_url's path}{suffix}`, e.g. `/v1` + `/chat/completions`; cached (it is on the request path). */
export function upstreamPath(baseUrl: string, suffix: string): string {
  const key = `${baseUrl}\u0000${suffix}`;
  let path = joined.get(key);
  if (path === undefined) {
    path = `${new URL(baseUrl).pathname.replace(/\/+$/, '')}${suffix}`;
    joined.set(key, path);
  }
  return path;
}
