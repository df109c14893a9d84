#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI.
import module from 'node:module';

// Node 22.1+ keeps the compiled code of every module on disk (in the OS temp dir), so a start
// after the first skips compiling ~300 modules; a no-op on Node 20. Before the CLI is imported.
module.enableCompileCache?.();
const { main } = await import('../dist/cli/main.js');

main(process.argv).catch((err) => {
  process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
  process.exitCode = 1;
});
