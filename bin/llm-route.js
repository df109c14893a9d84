#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI, joined into a few files of dist/bundle/
// (scripts/bundle.mjs), which src/runtime/start.ts imports once the compile cache is on.
import { loadCli } from '../dist/runtime/start.js';

const { main } = await loadCli();
main(process.argv).catch((err) => {
  process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
  process.exitCode = 1;
});
