import type { FoundServer } from './scan-local-servers.js';

/** A YAML double-quoted scalar (JSON's string syntax is valid YAML). */
const q = (s: string): string => JSON.stringify(s);

/**
 * The `embed` route `init` offers when a local server has an embedding model
 * (docs/embeddings.md): the first one found, on every server that has a model of that name (the
 * same vector space); the others as comments, each a space of its own. Its aliases are the
 * model's own names, so an editor set to the model's name reaches it too. No lines when none was found.
 */
export function embeddingsRouteLines(found: readonly FoundServer[], providerNames: ReadonlyMap<FoundServer, string>): string[] {
  const first = found.flatMap((server) => server.embeddings)[0];
  if (first === undefined) return [];
  const names = first.endsWith(':latest') ? [first, first.slice(0, -':latest'.length)] : [first];
  const lines = [
    '  embed:                    # embeddings, for editors that index code and documents (docs/embeddings.md)',
    '    kind: embeddings',
    `    aliases: [${names.map(q).join(', ')}]`,
    '    tiers:',
  ];
  const others: string[] = [];
  for (const server of found) {
    const provider = providerNames.get(server) ?? server.kind;
    for (const model of server.embeddings) {
      if (model === first) lines.push(`      - { name: ${provider}-embed, provider: ${provider}, model: ${q(model)} }`);
      else others.push(`      #   ${provider}: ${q(model)}`);
    }
  }
  if (others.length > 0)
    lines.push('      # other embedding models found: each is a vector space of its own (a route of its own, never a fallback):', ...others);
  return lines;
}
