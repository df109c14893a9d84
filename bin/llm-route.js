#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI, joined into a few files of dist/bundle/
// (scripts/bundle.mjs), imported once the compile cache is on so that they compile through it.
import { enableCompileCache } from '../dist/cli/compile-cache.js';

enableCompileCache();
const { main } = await import('../dist/bundle/main.js');
main(process.argv).catch((err) => {
  process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
  process.exitCode = 1;
});
