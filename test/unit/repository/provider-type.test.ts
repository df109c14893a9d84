import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

// What a room asks of a provider comes from its type's profile (docs/architecture.md, "a
// provider's profile"): only the tier file's own checks (src/config/) and the profiles
// themselves read a provider's `type`.

/** A comparison of a type with a provider type's name, a switch on a provider's type, a table indexed by it. */
const TYPE_SWITCH =
  /\.type\s*[!=]==?\s*'(openai|anthropic|ollama|gemini)'|'(openai|anthropic|ollama|gemini)'\s*[!=]==?\s*[\w.?]+\.type\b|switch\s*\([\w.?]*provider\??\.type\)|\[[\w.?]*provider\??\.type\]/;

function typeSwitches(file: string, text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
    .filter(({ line }) => !/^\s*(\/\/|\*|\/\*)/.test(line) && TYPE_SWITCH.test(line))
    .map(({ at, line }) => `${at}: ${line.trim()}`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );
}

/** Files that may decide by a provider's type: the tier file's checks, the profiles and their registry, init's list of cloud keys. */
function mayDecide(file: string): boolean {
  return file.startsWith('src/config/') || /\/profiles?\.ts$/.test(file) || file === 'src/init/tier-file.ts';
}

describe("a provider's type is read only by config/ and the provider profiles", () => {
  it('no other file of src/ switches on it', () => {
    const src = join(repoRoot, 'src');
    const found = sourceFiles(src).flatMap((path) => {
      const file = relative(repoRoot, path);
      return mayDecide(file) ? [] : typeSwitches(file, readFileSync(path, 'utf8'));
    });
    expect(found).toEqual([]);
  });

  it('finds the switches it is there to find', () => {
    expect(typeSwitches('x.ts', "if (tier.provider.type === 'anthropic') return;")).toHaveLength(1);
    expect(typeSwitches('x.ts', "const ollama = provider.type !== 'ollama';")).toHaveLength(1);
    expect(typeSwitches('x.ts', "return 'ollama' === p.type;")).toHaveLength(1);
    expect(typeSwitches('x.ts', 'switch (tier.provider.type) {')).toHaveLength(1);
    expect(typeSwitches('x.ts', 'return NATIVE[provider.type];')).toHaveLength(1);
    expect(typeSwitches('x.ts', 'const message = `this provider is type ${provider.type}`;')).toEqual([]);
    expect(typeSwitches('x.ts', "if (part.type === 'text') return;")).toEqual([]);
    expect(typeSwitches('x.ts', "// provider.type === 'ollama' named in a comment")).toEqual([]);
  });
});
