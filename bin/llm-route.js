#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI, joined into a few files of dist/bundle/
// (scripts/bundle.mjs), which src/runtime/start.ts imports once the compile cache is on.
// `statusline` is the exception: Claude Code runs it on every update of its screen, so it
// starts without the CLI (src/cli/statusline.ts); its help and mistakes go through the CLI.
if (process.argv[2] === 'statusline') {
  const { parseStatuslineArgs, runStatusline } = await import('../dist/cli/statusline.js');
  const opts = parseStatuslineArgs(process.argv.slice(3));
  if (opts) {
    process.exitCode = await runStatusline(opts);
  } else {
    await runCli();
  }
} else {
  await runCli();
}

async function runCli() {
  const { loadCli } = await import('../dist/runtime/start.js');
  const { main } = await loadCli();
  main(process.argv).catch((err) => {
    process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
    process.exitCode = 1;
  });
}
