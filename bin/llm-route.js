#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI.
import { main } from '../dist/cli/main.js';

main(process.argv).catch((err) => {
  process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
  process.exitCode = 1;
});
