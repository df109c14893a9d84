// Joins tsc's dist/ into a few files in dist/bundle/, which bin/llm-route.js runs. Node's module
// loader costs about 0.7 ms per file before any code of it runs; `serve` imports ~215 files of
// llm-route and ~150 of yaml, undici and zod before it can answer, about 150 ms of its
// start-up (docs/performance.md). The tests that import dist/ modules directly keep doing so.
// Two entries: main.js, the commander program, and serve-args.js, `serve`'s own way in
// without it (src/cli/serve-args.ts).
//   node scripts/bundle.mjs           (npm run build runs it after tsc)
//
// zod comes in as its ESM build, tree-shaken to what llm-route uses, English its only locale
// (src/runtime/bundle-stand-ins.ts; unbundled, src/runtime/zod.ts takes its CommonJS build).
// Left outside the bundle, loaded from node_modules as before:
// - better-sqlite3: a native addon;
// - ioredis: required through createRequire on purpose (src/redis/redis-link.ts loads Redis only
//   when configured);
// - ink, react, execa and gpt-tokenizer: loaded on demand (the live UI, `start:` providers, token
//   counting), never on `serve --no-ui`'s way to its first answer; as they are, their own files.
//
// Node's builtins, and better-sqlite3 (CommonJS), are required, not imported (requireImports);
// undici's HTTP/2 client does not load node:http2 until it is used, nor undici node:assert until
// a check fails, and what its clients require only for a FormData body or a CPU without wasm
// SIMD stays in node_modules (src/runtime/bundle-stand-ins.ts, with the rest of the start-up tuning).
// dist/bundle/modules.json names the modules in each chunk, for tests that assert what a start-up
// loads (test/integration/server/startup-weight.test.ts).
import { rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { assertStandIn, http2StandIn, leftInPackage, PACKAGE_FILES_OUTSIDE_BUNDLE, zodInBundle } from '../dist/runtime/bundle-stand-ins.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const outDir = join(root, 'dist/bundle');
const EXTERNAL = ['better-sqlite3', 'ioredis', 'ink', 'react', 'execa', 'gpt-tokenizer'];

// Modules the bundle takes through require() where its ESM output would import them. An import of
// a builtin builds the builtin's ESM facade, which reads every export once, and a read runs the
// export's lazy getter: on Node 22 and 24, `node:http`'s WebSocket, CloseEvent and MessageEvent
// load Node's own copy of undici and with it crypto, tls, http2, zlib and worker_threads (a bare
// server on Node 24 that imports node:http instead of requiring it: 61 MB instead of 48). A
// require() reads only the names the code takes. An import of a CommonJS package runs Node's
// export lexer over its source first; better-sqlite3's default export is its module.exports.
// node:module stays an import: it gives the createRequire that the others go through.
const REQUIRED = (id) => (id.startsWith('node:') && id !== 'node:module') || id === 'better-sqlite3';
const IMPORT_LINE = /^import (.+) from "([^"]+)";$/gm;

/** `import a, { b, c as d } from "m";` → `const a = require("m"); const { b, c: d } = a;`-like lines. */
function requireLine(line, clause, id) {
  if (!REQUIRED(id)) return line;
  const named = /\{([^}]*)\}/.exec(clause);
  const whole = clause
    .replace(/\{[^}]*\}/, '')
    .replace(/,\s*$/, '')
    .replace(/^\*\s+as\s+/, '')
    .trim();
  const source = `__require_module(${JSON.stringify(id)})`;
  const lines = [];
  if (whole) lines.push(`const ${whole} = ${source};`);
  if (named) {
    const names = named[1]
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean)
      .map((n) => n.replace(/\s+as\s+/, ': '));
    lines.push(`const { ${names.join(', ')} } = ${whole || source};`);
  }
  return lines.join(' ');
}

const requireImports = {
  name: 'require-imports',
  renderChunk(code) {
    let changed = false;
    const out = code.replace(IMPORT_LINE, (line, clause, id) => {
      const next = requireLine(line, clause, id);
      changed ||= next !== line;
      return next;
    });
    if (!changed) return null;
    return `import { createRequire as __create_require } from "node:module";\nconst __require_module = __create_require(import.meta.url);\n${out}`;
  },
};

rmSync(outDir, { recursive: true, force: true });
const { output } = await build({
  cwd: root,
  input: { main: join(root, 'dist/cli/main.js'), 'serve-args': join(root, 'dist/cli/serve-args.js') },
  platform: 'node',
  external: (id) => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`)) || PACKAGE_FILES_OUTSIDE_BUNDLE.includes(id),
  logLevel: 'warn',
  // An entry may export more than its own names (the common group's modules may sit in it): no one imports the entries but bin/.
  preserveEntrySignatures: 'allow-extension',
  plugins: [zodInBundle, http2StandIn, assertStandIn, ...leftInPackage, requireImports],
  resolve: {
    // Traces' OTLP serializers (src/tracing/, loaded only when traces are on) from the package's ES
    // module build: its CommonJS main, which has no package.json `exports` to choose by, also
    // loads the metrics and logs serializers and their SDKs (127 modules instead of ~20).
    alias: { '@opentelemetry/otlp-transformer': join(root, 'node_modules/@opentelemetry/otlp-transformer/build/esm/index.js') },
  },
  output: {
    dir: outDir,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    // Modules run in the order their imports say, as they did unbundled (src/util/undici.ts does
    // its work as it is evaluated).
    strictExecutionOrder: true,
    comments: false,
    // Non-ASCII written as \u escapes: V8 keeps a module's source for as long as the module
    // lives, as Latin-1 when it can, else as UTF-16; one "…" in yaml's code doubled the 450 KB
    // of the config chunk (~1.3 MB less RSS for `serve`).
    charset: 'ascii',
    // The small helpers several commands share (src/util/) in one file rather than a file each:
    // every file `serve` loads costs its loader ~0.7 ms. Only the helpers themselves (not what they
    // import), and not util/undici.ts: undici stays where the commands that call an upstream load it.
    codeSplitting: { includeDependenciesRecursively: false, groups: [{ name: 'common', test: /\/dist\/util\/(?!undici\.js)/ }] },
  },
});

const modules = {};
for (const chunk of output) {
  if (chunk.type !== 'chunk') continue;
  modules[chunk.fileName] = chunk.moduleIds.filter((id) => !id.startsWith('\0')).map((id) => relative(root, id));
}
writeFileSync(join(outDir, 'modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
