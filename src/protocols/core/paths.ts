/** Joined paths by suffix, then base URL: both strings come from the config and the code, so no key is built per request. */
const joined = new Map<string, Map<string, string>>();

/** `{base_url's path}{suffix}`, e.g. `/v1` + `/chat/completions`; cached (it is on the request path). */
export function upstreamPath(baseUrl: string, suffix: string): string {
  let bySuffix = joined.get(suffix);
  if (bySuffix === undefined) {
    bySuffix = new Map();
    joined.set(suffix, bySuffix);
  }
  let path = bySuffix.get(baseUrl);
  if (path === undefined) {
    path = `${new URL(baseUrl).pathname.replace(/\/+$/, '')}${suffix}`;
    bySuffix.set(baseUrl, path);
  }
  return path;
}
