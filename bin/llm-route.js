#!/usr/bin/env node
// Thin shim: everything lives in the compiled CLI, joined into a few files of dist/bundle/
// (scripts/bundle.mjs), which src/runtime/start.ts imports once the compile cache is on.
// Two commands start without the whole CLI, their help and mistakes going through it:
// `statusline`, which Claude Code runs on every update of its screen (src/cli/statusline.ts),
// and `serve`, whose start-up to its first answer is kept short (src/cli/serve-args.ts).
if (process.argv[2] === 'statusline') {
  const { parseStatuslineArgs, runStatusline } = await import('../dist/cli/statusline.js');
  const opts = parseStatuslineArgs(process.argv.slice(3));
  if (opts) {
    process.exitCode = await runStatusline(opts);
  } else {
    await runCli();
  }
} else if (process.argv[2] === 'serve') {
  const { loadServe } = await import('../dist/runtime/start.js');
  const { serveFromArgs } = await loadServe();
  try {
    const code = await serveFromArgs(process.argv.slice(3));
    if (code === null) await runCli();
    else process.exitCode = code;
  } catch (err) {
    fail(err);
  }
} else {
  await runCli();
}

function fail(err) {
  process.stderr.write(`llm-route: ${err?.message ?? err}\n`);
  process.exitCode = 1;
}

async function runCli() {
  const { loadCli } = await import('../dist/runtime/start.js');
  const { main } = await loadCli();
  main(process.argv).catch(fail);
}
