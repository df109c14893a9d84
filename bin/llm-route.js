#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI (imported once the compile cache is on, so
// that its modules are compiled through it).
import { enableCompileCache } from '../dist/cli/compile-cache.js';

enableCompileCache();
const { main } = await import('../dist/cli/main.js');
main(process.argv).catch((err) => {
  process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
  process.exitCode = 1;
});
