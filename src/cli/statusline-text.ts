/**
 * The one line `llm-route statusline` prints: where the session's last request went, how its
 * requests split between local and cloud tiers, fallbacks, recovered tool calls, cost. Pure (no
 * I/O), and imported by the status line's light start-up path: it must import nothing.
 */

/** What `GET /admin/sessions/<id>` answers, as far as the line reads it (control/session-board.ts has the whole shape). */
export interface SessionAnswer {
  requests: number;
  last: { route: string; tier: string | null; kind: 'local' | 'cloud' | null; model: string | null; outcome: string } | null;
  local_requests: number;
  cloud_requests: number;
  failed_requests: number;
  fallbacks: number;
  tool_calls_recovered: number;
  cost_usd: number;
  today: { cost_usd: number } | null;
}

/** ANSI SGR codes, as Claude Code's status line shows them; none with NO_COLOR or --no-color. */
const SGR = { dim: '2', bold: '1', green: '32', yellow: '33', red: '31', cyan: '36' } as const;
type Style = keyof typeof SGR;

export function paint(color: boolean): (style: Style, text: string) => string {
  return color ? (style, text) => `\u001b[${SGR[style]}m${text}\u001b[0m` : (_style, text) => text;
}

const NAME = 'llm-route';

/** The line for a session summary. */
export function statuslineText(answer: SessionAnswer, color: boolean): string {
  const p = paint(color);
  const parts: string[] = [];
  const last = answer.last;
  const today = answer.today ? `today ${usd(answer.today.cost_usd)}` : null;
  if (answer.requests === 0 || last === null) {
    parts.push(p('dim', 'no requests yet'));
    if (today) parts.push(today);
  } else {
    parts.push(lastRequest(last, p));
    const failed = answer.failed_requests > 0 ? p('red', ` / ${answer.failed_requests} failed`) : '';
    parts.push(`${answer.local_requests} local / ${answer.cloud_requests} cloud${failed}`);
    parts.push(answer.fallbacks > 0 ? p('yellow', plural(answer.fallbacks, 'fallback')) : p('dim', '0 fallbacks'));
    if (answer.tool_calls_recovered > 0) parts.push(p('cyan', `${plural(answer.tool_calls_recovered, 'tool call')} recovered`));
    // The session's cost, then today's: when Claude Code cuts a narrow line, today's goes first.
    parts.push(`${usd(answer.cost_usd)}${today ? ` (${today})` : ''}`);
  }
  return `${p('bold', NAME)} ${parts.join(p('dim', ' · '))}`;
}

/** When no llm-route answers: short, and nothing that looks like an error of Claude Code's own. */
export function notRunningText(color: boolean, why?: string): string {
  return paint(color)('dim', why ? `${NAME}: ${why}` : `${NAME} not running`);
}

function lastRequest(last: NonNullable<SessionAnswer['last']>, p: ReturnType<typeof paint>): string {
  if (last.tier === null) return p('red', `✗ ${last.route}: no tier answered (${last.outcome})`);
  const kind = last.kind ?? 'gone';
  // The tier's name when it says more than its kind (`cloud` on a cloud tier says nothing twice).
  const where = last.tier === kind ? kind : `${kind} ${last.tier}`;
  const text = `▸ ${where}${last.model ? ` ${last.model}` : ''}`;
  return p(last.kind === 'local' ? 'green' : 'yellow', text);
}

/** `1 fallback`, `12,300 requests`. */
export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

/** `$0.0123` under a dollar (a turn costs cents), `$4.21` from there. */
export function usd(value: number): string {
  return value < 1 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}
