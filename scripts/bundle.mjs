// Joins tsc's dist/ into a few files in dist/bundle/, which bin/llm-route.js runs. Node's module
// loader costs about 0.7 ms per file before any code of it runs; `serve` imports ~215 files of
// llm-route and ~120 of yaml, undici and commander before it can answer, about 150 ms of its
// start-up (issue 18, point 7). The tests that import dist/ modules directly keep doing so.
//   node scripts/bundle.mjs           (npm run build runs it after tsc)
//
// Left outside the bundle, loaded from node_modules as before:
// - better-sqlite3: a native addon;
// - zod and ioredis: required through createRequire on purpose (src/util/zod.ts drops zod's
//   locales from the module cache; src/state/redis-link.ts loads Redis only when configured);
// - ink, react, execa and gpt-tokenizer: loaded on demand (the live UI, `start:` providers, token
//   counting), never on `serve --no-ui`'s way to its first answer; as they are, their own files.
// dist/bundle/modules.json names the modules in each chunk, for tests that assert what a start-up
// loads (test/integration/startup-weight.test.ts).
import { rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = fileURLToPath(new URL('../', import.meta.url));
const outDir = join(root, 'dist/bundle');
const EXTERNAL = ['better-sqlite3', 'zod', 'ioredis', 'ink', 'react', 'execa', 'gpt-tokenizer'];

rmSync(outDir, { recursive: true, force: true });
const { output } = await build({
  cwd: root,
  // The usage thread is a worker of its own, started from the chunk that holds
  // src/usage/engine-link.ts as `new URL('./usage-thread.js', import.meta.url)`: same directory.
  input: { main: join(root, 'dist/cli/main.js'), 'usage-thread': join(root, 'dist/usage/usage-thread.js') },
  platform: 'node',
  external: (id) => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`)),
  logLevel: 'warn',
  output: {
    dir: outDir,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    // Modules run in the order their imports say, as they did unbundled (src/util/undici.ts and
    // src/util/zod.ts do their work as they are evaluated).
    strictExecutionOrder: true,
    comments: false,
  },
});

const modules = {};
for (const chunk of output) {
  if (chunk.type !== 'chunk') continue;
  modules[chunk.fileName] = chunk.moduleIds.filter((id) => !id.startsWith('\0')).map((id) => relative(root, id));
}
writeFileSync(join(outDir, 'modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
