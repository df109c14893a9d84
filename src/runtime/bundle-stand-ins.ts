import { createRequire } from 'node:module';

/** The part of a rolldown plugin that a stand-in uses (scripts/bundle.mjs passes these to rolldown). */
export interface StandInPlugin {
  name: string;
  resolveId(source: string, importer: string | undefined): string | null;
  load(id: string): string | null;
  transform?(code: string, id: string): null;
}

/**
 * A module that undici gets in the bundle (scripts/bundle.mjs) in place of the builtin `builtin`
 * (`node:http2`, `node:assert`) for a file `importer` matches: CommonJS source `source()` built
 * at bundle time. With the tuning switched off, bin/llm-route.js runs dist/ unbundled, so with
 * no stand-in at all (src/runtime/switch.ts).
 */
function standIn(builtin: string, importer: RegExp, source: () => string, transform?: StandInPlugin['transform']): StandInPlugin {
  const id = `\0${builtin.slice('node:'.length)}-stand-in`;
  return {
    name: `${builtin.slice('node:'.length)}-stand-in`,
    resolveId: (requested, from) => (requested === builtin && from && importer.test(from) ? id : null),
    load: (requested) => (requested === id ? source() : null),
    ...(transform ? { transform } : {}),
  };
}

/**
 * undici's HTTP/2 client requires node:http2 as it loads, for two things: `constants` (header
 * names and error codes) that it reads right away, and `connect`, called only for a connection
 * that negotiated h2, which llm-route never allows (allowH2 stays off). Node 24's http2 loads tls
 * with it, ~10 MB of a bare process. The stand-in holds the constants' values (taken from this
 * Node at build time; they are HTTP/2's, not Node's) and a connect that requires the real module
 * when called.
 */
export const http2StandIn = standIn('node:http2', /node_modules\/undici\/lib\/dispatcher\/client-h2\.js$/, () => {
  const { constants } = createRequire(import.meta.url)('node:http2') as typeof import('node:http2');
  const h2Constants = Object.fromEntries(Object.entries(constants).filter(([name]) => name.startsWith('HTTP2_HEADER_') || name.startsWith('NGHTTP2_')));
  return `module.exports = { constants: ${JSON.stringify(h2Constants)}, connect: (...args) => require('node:http2').connect(...args) };\n`;
});

const UNDICI_MODULE = /node_modules\/undici\//;

/**
 * undici's modules require node:assert for their invariants and only ever call `assert(value)`;
 * the module costs ~7 ms of start-up (its AssertionError brings Node's diff and colour code). The
 * stand-in requires the real assert only when a check fails, so what is thrown is the same
 * AssertionError. The build fails if undici starts using more of it.
 */
export const assertStandIn = standIn(
  'node:assert',
  UNDICI_MODULE,
  () => "module.exports = function assert(value, message) { if (!value) require('node:assert')(value, message); };\n",
  (code, id) => {
    if (UNDICI_MODULE.test(id) && /\bassert\.\w+\s*\(/.test(code))
      throw new Error(`${id} calls a method of node:assert: the stand-in in src/runtime/bundle-stand-ins.ts has only assert()`);
    return null;
  },
);

/**
 * Files of undici that its HTTP/1 and HTTP/2 clients require only on a path llm-route never
 * takes, left out of the bundle: fetch's body code (and with it FormData, WebIDL, data: URLs,
 * ~160 KB), for a FormData request body; llhttp without SIMD (70 KB of base64), for a CPU
 * without wasm SIMD or UNDICI_NO_WASM_SIMD=1. The bundle keeps one line in their place that
 * requires the package's own file, should the path ever be taken (scripts/bundle.mjs treats
 * these package paths as external). Every file of the bundle that `serve` loads is parsed and
 * kept in memory in full, whether or not its code runs.
 */
const LEFT_IN_PACKAGE: ReadonlyArray<{ requested: string; packagePath: string }> = [
  { requested: '../web/fetch/body.js', packagePath: 'undici/lib/web/fetch/body.js' },
  { requested: '../llhttp/llhttp-wasm.js', packagePath: 'undici/lib/llhttp/llhttp-wasm.js' },
];

/** The package paths the stand-ins below require: external to the bundle. */
export const PACKAGE_FILES_OUTSIDE_BUNDLE: readonly string[] = LEFT_IN_PACKAGE.map((file) => file.packagePath);

const UNDICI_CLIENT = /node_modules\/undici\/lib\/dispatcher\/client-h[12]\.js$/;

export const leftInPackage: StandInPlugin[] = LEFT_IN_PACKAGE.map(({ requested, packagePath }) => {
  const id = `\0${packagePath}-left-in-package`;
  return {
    name: `${packagePath}-left-in-package`,
    resolveId: (source, from) => (source === requested && from && UNDICI_CLIENT.test(from) ? id : null),
    load: (loading) => (loading === id ? `module.exports = require(${JSON.stringify(packagePath)});\n` : null),
  };
});

const ZOD_IN_BUNDLE = '\0zod-in-bundle';

/**
 * `#zod` in the bundle: zod's ESM build, joined in like undici and tree-shaken, rather than its
 * CommonJS build from node_modules (src/runtime/zod.ts, what dist/ unbundled takes). Of its ~60
 * locales only English, which its schemas import themselves, is kept; the 33 files it required
 * one by one are gone, and with them ~25 ms and ~4 MB of a `serve` start-up on Node 20.
 */
export const zodInBundle: StandInPlugin = {
  name: 'zod-in-bundle',
  resolveId: (requested) => (requested === '#zod' ? ZOD_IN_BUNDLE : null),
  load: (requested) => (requested === ZOD_IN_BUNDLE ? "export { z } from 'zod';\n" : null),
};
