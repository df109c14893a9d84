import type { Command } from 'commander';
import { INIT_ENV_HELP } from '../init/server-env.js';

interface Footer {
  /** What each exit code means for this command. */
  exit: string[];
  /** Example lines, each a whole command as typed. */
  examples: string[];
  /** Anything else worth a line (init's variables). */
  more?: string[];
}

/** Every command's exit codes and an example, by command path ("savers try"). */
const FOOTERS: Record<string, Footer> = {
  serve: {
    exit: [
      '0  stopped (Ctrl-C, SIGTERM or q) after draining',
      '1  cannot listen (port in use, no permission, no such address)',
      "2  bad tier file or flag; a provider's start: failed",
    ],
    examples: ['llm-route serve', 'llm-route serve -c examples/demo.yaml --port 4242 --no-ui'],
  },
  probe: {
    exit: ['0  every tier healthy', '1  some tier is not', '2  bad tier file or flag, unknown route'],
    examples: ['llm-route probe', 'llm-route probe --route chat --json'],
  },
  explain: {
    exit: [
      '0  some tier would be tried',
      '1  no tier would be tried (the last line says why)',
      '2  bad input: the file, the tier file, the route, the protocol',
    ],
    examples: ['llm-route explain request.json', 'llm-route explain long.json --route chat --json'],
  },
  exec: {
    exit: [
      "N  the command's own exit code (128+n when signal n ended it)",
      "1  llm-route could not start (port in use, a provider's start: failed)",
      '2  bad tier file or flag, unknown route',
      '126, 127  the command cannot run / was not found',
    ],
    examples: [
      'llm-route exec -- claude',
      'llm-route exec -c examples/codex.yaml -- codex exec "explain this repo"',
      'llm-route exec -- gemini -p "list the files here"',
    ],
    more: [
      'On stderr, never over the command: before it starts, a line per tier that cannot answer and where its requests go;',
      "after it exits, the run's requests per tier, fallbacks, recovered tool calls, tokens and cost (from the usage log).",
      "claude gets llm-route's status line for the run through --settings, unless you have a status line of your own.",
      "--trace: Claude Code's own traces go to llm-route's collector, its requests carry their traceparent: one trace (docs/traces.md).",
      "gemini gets, for the run only, a settings file choosing the auth type that takes llm-route's URL (docs/agents.md#gemini-cli).",
    ],
  },
  statusline: {
    exit: ["0  always: a line saying why when no llm-route answers (a failing command blanks Claude Code's status line)", '2  a bad flag'],
    examples: ['llm-route statusline --url http://127.0.0.1:4141 < status.json', 'llm-route exec -- claude   (installs it in Claude Code for that run)'],
    more: [
      'In your own ~/.claude/settings.json: "statusLine": {"type": "command", "command": "llm-route statusline"}',
      'It asks GET /admin/sessions/<session_id> with $LLM_ROUTE_ADMIN_TOKEN, $LLM_ROUTE_TOKEN or $LLM_ROUTE_API_KEY (the first set) as the Bearer token.',
    ],
  },
  init: {
    exit: ['0  written (or declined at the prompt)', '1  the file it would write does not validate (a bug)', '2  the file exists (pass --force)'],
    examples: ['llm-route init', 'OLLAMA_HOST=127.0.0.1:11500 llm-route init -c local.yaml --yes'],
    more: INIT_ENV_HELP,
  },
  validate: {
    exit: ['0  valid (a one-line summary)', '2  every problem, as file:line:col'],
    examples: ['llm-route validate', 'llm-route validate -c examples/ollama-then-openai.yaml'],
  },
  bench: {
    exit: ['0  done', '1  some tier failed every request', '2  bad tier file, flag or selection'],
    examples: ['llm-route bench --route chat -n 20 --concurrency 2', 'llm-route bench --through http://127.0.0.1:4141 --json'],
  },
  savers: {
    exit: ['0  done (see `savers try`)', "2  no such subcommand, or `savers try`'s bad input"],
    examples: ['llm-route savers try request.json'],
  },
  'savers try': {
    exit: ['0  done', '2  not a request body, bad tier file, unknown route'],
    examples: ['llm-route savers try request.json', 'llm-route savers try request.json --route code --json'],
  },
  mock: {
    exit: ['0  stopped (Ctrl-C or SIGTERM)', '1  cannot listen (port in use, …)', '2  bad option'],
    examples: [
      'llm-route mock --port 4101 --name local --ttft-ms 200:1500 --fail-rate 0.1',
      'llm-route mock --stall-rate 0.2 --seed 7',
      'llm-route mock --protocol ollama --port 11435 --name qwen2.5-coder:14b   # a type: ollama provider, base_url http://127.0.0.1:11435',
      'llm-route mock --protocol anthropic --port 4103 --fail-rate 0.2 --fail-status 529',
    ],
  },
  demo: {
    exit: ['0  stopped (Ctrl-C or q); nothing left running', '1  cannot listen (port in use: --port), or its mock tiers did not start'],
    examples: ['llm-route demo', 'llm-route demo --port 4242 --no-ui'],
  },
  usage: {
    exit: ['0  done', '2  no usable usage log, or a bad flag'],
    examples: ['llm-route usage', 'llm-route usage --since 7d --by tier --json'],
  },
  incidents: {
    exit: ['0  done', '2  no usable usage log, or a bad flag'],
    examples: ['llm-route incidents', 'llm-route incidents show 3'],
  },
  'incidents show': {
    exit: ['0  done', '2  no such incident, no usable usage log, or a bad flag'],
    examples: ['llm-route incidents show 3', 'llm-route incidents show 3 --json'],
  },
};

/** Adds each command's exit codes and examples after its --help (every command has a footer; a test holds it). */
export function addHelpFooters(program: Command): void {
  const walk = (command: Command, path: string): void => {
    const footer = FOOTERS[path];
    if (footer) command.addHelpText('after', footerText(footer));
    for (const sub of command.commands) walk(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  walk(program, '');
}

function footerText(footer: Footer): string {
  const lines = ['', 'Exit codes:', ...footer.exit.map((line) => `  ${line}`), '', 'Examples:', ...footer.examples.map((line) => `  $ ${line}`)];
  if (footer.more) lines.push('', ...footer.more);
  return lines.join('\n');
}
