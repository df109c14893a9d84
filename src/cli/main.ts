import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { BENCH_DEFAULTS } from '../bench-command/defaults.js';
import { addHelpFooters } from './help-texts.js';
import type { BenchOptions } from './bench.js';

/** dist/cli/statusline.js, from dist/cli/main.js and from dist/bundle/main.js alike. */
const STATUSLINE = '../cli/statusline.js';

// Each command's module is imported only when that command runs, so `--help` and `mock` stay fast.
export async function main(argv: string[]): Promise<void> {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const program = new Command('llm-route')
    .description(
      "One endpoint (OpenAI Chat Completions and Responses, Anthropic Messages, Ollama's API) in front of ordered model tiers: local first, cloud as fallback.",
    )
    .version(pkg.version)
    .showHelpAfterError()
    // A bad flag or argument exits 2, like a bad tier file, for every command (inherited):
    // exit 1 means the command's own failure (a busy port, an unhealthy tier).
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    // Lets `exec` hand every flag after its command to that command untouched.
    .enablePositionalOptions();

  program
    .command('serve')
    .description('run the proxy (live UI on a TTY, JSON-lines log otherwise)')
    .addOption(configOption())
    .option('--host <host>', 'listen address (overrides server.host)')
    .addOption(new Option('--port <port>', 'listen port (overrides server.port)').argParser(parsePort))
    .option('--no-ui', 'JSON-lines request log instead of the live UI')
    .action(async (opts) => {
      const { runServe } = await import('./serve.js');
      process.exitCode = await runServe(opts);
    });

  program
    .command('probe')
    .description("health-check every tier: reachability, model presence, a 1-token request's TTFT")
    .addOption(configOption())
    .option('--route <route>', 'only the tiers of this route')
    .option('--json', 'one JSON document on stdout instead of the table')
    .option('--timeout <ms>', "bound on each tier's check (default: the provider's health timeout_ms + the tier's TTFT budget)")
    .action(async (opts) => {
      const { runProbe } = await import('./probe.js');
      process.exitCode = await runProbe(opts);
    });

  program
    .command('explain')
    .description('the plan for a request body without sending it: which tiers would be tried, which skipped and why (context, tokens)')
    .argument('<file>', "a request body as JSON (Chat Completions, Responses, Messages, Ollama's or Gemini's)")
    .addOption(configOption())
    .option('--route <route>', "the route to plan on (default: the body's model)")
    .option('--protocol <protocol>', 'chat, responses, messages, ollama or gemini (default: guessed from the body)')
    .option('-H, --header <header...>', 'a request header the rules and local-only see, "Name: value" (repeatable)')
    .option('--json', 'one JSON document on stdout')
    .action(async (file: string, opts) => {
      const { runExplain } = await import('./explain.js');
      process.exitCode = await runExplain(file, opts);
    });

  program
    .command('exec')
    .description(
      'run a command behind a private proxy for its lifetime: OpenAI, Anthropic (Claude Code), Codex and Gemini CLI clients inside it reach llm-route with no setup',
    )
    .usage('[options] -- <command> [args...]')
    .addOption(configOption())
    .addOption(new Option('--port <port>', 'proxy port (default: any free port)').argParser(parsePort))
    .option('--log', 'JSON-lines request log and full provider output on stderr')
    .option(
      '--route <route>',
      'the route every client uses, whatever model it asks for (default: its own model name when a route matches it, else the first route)',
    )
    .option(
      '--trace',
      "join the command's own traces to llm-route's: Claude Code's traces (beta) go to llm-route's collector and its requests carry their traceparent (needs traces on: docs/traces.md)",
    )
    .argument('<command...>', 'the command to run, and its arguments')
    .passThroughOptions()
    .action(async (command: string[], opts: { config?: string; port?: number; log?: boolean; route?: string; trace?: boolean }) => {
      const { runExec } = await import('./exec.js');
      process.exitCode = await runExec(command, opts);
    });

  program
    .command('statusline')
    .description("one line for Claude Code's status line: where this session's requests went, fallbacks, recovered tool calls, cost")
    .option('--url <url>', "the llm-route to ask (default: $LLM_ROUTE_URL, which exec sets, else the tier file's server address)")
    .addOption(configOption())
    .option('--no-color', 'no ANSI colours (also with $NO_COLOR)')
    .action(async (opts: { url?: string; config?: string; color?: boolean }) => {
      // The one module bin/llm-route.js runs outside the bundle, whichever way it is reached:
      // a specifier in a variable keeps it (and what it loads on demand) out of dist/bundle/.
      const { runStatusline } = (await import(STATUSLINE)) as typeof import('./statusline.js');
      process.exitCode = await runStatusline(opts);
    });

  program
    .command('init')
    .description('write a commented tier file for this machine: local model servers found, cloud keys as ${VAR} references')
    .addOption(configOption())
    .option('-y, --yes', 'no questions (also without a TTY)')
    .option('--force', 'replace an existing file')
    .action(async (opts) => {
      const { runInit } = await import('./init.js');
      process.exitCode = await runInit(opts);
    });

  program
    .command('validate')
    .description('check the tier file; print each problem as file:line:col')
    .addOption(configOption())
    .action(async (opts) => {
      const { runValidate } = await import('./validate.js');
      process.exitCode = await runValidate(opts);
    });

  program
    .command('bench')
    .description('measure TTFT, total time and tokens/s per tier (p50/p95/p99, errors)')
    .addOption(configOption())
    .option('--route <route>', 'only the tiers of this route')
    .option('--tier <tier>', 'only tiers with this name')
    .addOption(new Option('-n, --requests <n>', 'requests per tier').argParser(positiveInteger('-n')).default(BENCH_DEFAULTS.requests))
    .addOption(
      new Option('--concurrency <c>', 'requests in flight at once, per tier').argParser(positiveInteger('--concurrency')).default(BENCH_DEFAULTS.concurrency),
    )
    .option('--prompt <text>', 'the user message of each request (a unique nonce goes first, so no prompt cache answers it)', BENCH_DEFAULTS.prompt)
    .option('--same-prompt', "send the prompt unchanged every time: measures the server's prompt-cache path")
    .addOption(new Option('--max-tokens <m>', 'max_tokens of each request').argParser(positiveInteger('--max-tokens')).default(BENCH_DEFAULTS.maxTokens))
    .option('--through <url>', 'send the requests through a running llm-route at this URL (reports per route)')
    .option('--json', 'one JSON document on stdout')
    // A bad flag exits 2, like a bad config: exit 1 means a tier failed every request.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (opts: BenchOptions) => {
      const { runBench } = await import('./bench.js');
      process.exitCode = await runBench(opts);
    });

  program
    .command('savers')
    .description("token savers: see what a route's savers do to a request")
    .command('try')
    .description("run a route's savers on a request body: each saver's diff and the tokens before and after")
    .argument('<file>', 'a request body (Chat Completions, Responses or Anthropic Messages JSON)')
    .addOption(configOption())
    .option('--route <route>', 'the route whose savers run (default: the route the body\'s "model" names)')
    .option('--json', 'one JSON document on stdout: {"route","before","after","savers":[{"saver","before","after","diff"}]}')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (file: string, opts: { config?: string; route?: string; json?: boolean }) => {
      const { runSaversTry } = await import('./savers.js');
      process.exitCode = await runSaversTry(file, opts);
    });

  program
    .command('mock')
    .description('a fault-injecting upstream (OpenAI, Ollama or Anthropic API) for demos and resilience tests')
    .addOption(
      new Option('--protocol <api>', 'the API it speaks: openai (Chat Completions), ollama (/api/chat and /v1), anthropic (Messages)').default('openai'),
    )
    .option('--host <host>', 'listen address', '127.0.0.1')
    .addOption(new Option('--port <port>', 'listen port (0 = any free port)').argParser(parsePort).default(0))
    .addOption(new Option('--ttft-ms <ms|min:max>', 'delay before the first token (uniform range with min:max)').default(0))
    .addOption(new Option('--tokens-per-s <n>', 'token rate after the first (0 = as fast as possible)').default(0))
    .addOption(new Option('--tokens <n>', 'completion length in tokens').default(20))
    .addOption(new Option('--fail-rate <p>', 'share of requests answered with --fail-status').default(0))
    .addOption(new Option('--fail-status <status>', 'status used by --fail-rate').default(503))
    .addOption(new Option('--stall-rate <p>', 'share of streams that send headers, then nothing').default(0))
    .option('--die-after <n>', 'break the socket after N content chunks')
    .option('--die-rate <p>', 'share of answers whose socket breaks (after --die-after chunks, else a random one); 1 with --die-after alone')
    .addOption(new Option('--malformed-rate <p>', 'share of chunks sent as invalid JSON').default(0))
    .option('--name <name>', 'written into every completion so a reader can tell who answered; also the one model it lists', 'mock')
    .option('--seed <n>', 'seed for the fault dice (deterministic runs)')
    .action(async (opts) => {
      const { runMock } = await import('./mock.js');
      await runMock(opts);
    });

  program
    .command('demo')
    .description('serve + simulated local/cloud tiers with faults + light traffic: failover and TTFT live, no model needed')
    .addOption(new Option('--port <port>', 'proxy port').argParser(parsePort).default(4141))
    .option('--no-ui', 'JSON-lines request log instead of the live UI')
    .action(async (opts) => {
      const { runDemo } = await import('./demo.js');
      process.exitCode = await runDemo(opts);
    });

  program
    .command('usage')
    .description('requests, failovers, TTFT p50/p95, tokens, prompt-cache hit rate and cost from the usage log')
    .addOption(configOption())
    .option('--since <when>', 'window start: 30m, 24h, 7d, 2w or an ISO date', '24h')
    .option(
      '--by <key>',
      "group by route, tier, model, provider, day, credential (client: the client's own key or login paid), protocol (chat, responses, messages, ollama, gemini) or kind (chat, embeddings)",
      'route',
    )
    .option('--run <id>', "only the requests of one llm-route process (the id exec's exit summary names)")
    .option('--json', 'one JSON document on stdout')
    .action(async (opts) => {
      const { runUsage } = await import('./usage.js');
      process.exitCode = await runUsage(opts);
    });

  const incidents = program
    .command('incidents')
    .description('rollbacks, kill switches and outages recorded; `incidents show ID` drafts a postmortem from the usage log')
    .addOption(configOption())
    .option('--json', 'one JSON document on stdout')
    .action(async (opts) => {
      const { runIncidents } = await import('./incidents.js');
      process.exitCode = await runIncidents(opts);
    });
  incidents
    .command('show <id>')
    .description('the postmortem draft of one incident: root cause, impact, preventive actions')
    .addOption(configOption())
    .option('--json', 'one JSON document on stdout')
    .action(async (id: string, opts, command: Command) => {
      const { runIncidentShow } = await import('./incidents.js');
      process.exitCode = await runIncidentShow(id, { ...command.parent?.opts(), ...opts });
    });

  addHelpFooters(program);
  await program.parseAsync(argv);
}

function configOption(): Option {
  return new Option('-c, --config <file>', 'tier file (default: $LLM_ROUTE_CONFIG, then ./llm-route.yaml)');
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError(`invalid port "${value}": expected an integer from 0 to 65535`);
  }
  return port;
}

function positiveInteger(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError(`invalid ${flag} "${value}": expected a whole number of at least 1`);
    }
    return n;
  };
}
