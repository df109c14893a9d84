/**
 * The forms in which local models write a tool call as text, and how a held answer's text is
 * told to open one, or to have closed it. Each marker is the model family's own:
 * - `hermes`: Qwen2.5 / Hermes chat templates, `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`;
 * - `qwen3_xml`: Qwen3-Coder's template, `<tool_call>\n<function=NAME>\n<parameter=P>\nV\n</parameter>\n</function>\n</tool_call>`;
 * - `mistral`: Mistral's templates (v3–v7 tokenizers), `[TOOL_CALLS] [{"name": …, "arguments": …}]`;
 * - `mistral_args`: Mistral's v11 tokenizer (Magistral, Devstral), `[TOOL_CALLS]NAME[ARGS]{…}`;
 * - `python_tag`: Llama 3.x, `<|python_tag|>{"name": …, "parameters": …}` (then `<|eom_id|>`);
 * - `json`: a whole answer that is one JSON call (or a list of them), bare or in a ```json fence.
 */
export type ToolTextFormat = 'hermes' | 'qwen3_xml' | 'mistral' | 'mistral_args' | 'python_tag' | 'json';

export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';
export const MISTRAL_OPEN = '[TOOL_CALLS]';
export const MISTRAL_ARGS = '[ARGS]';
export const PYTHON_TAG = '<|python_tag|>';
export const LLAMA_END_TAGS = ['<|eom_id|>', '<|eot_id|>'];
const FENCE = '```';

const TAG_OPENERS = [TOOL_CALL_OPEN, MISTRAL_OPEN, PYTHON_TAG];

/** Whether an answer's text can open a form at all: the cheap test every plain answer pays (its first non-space character). */
export function mayOpen(char: string): boolean {
  return char === '<' || char === '[' || char === '{' || char === '`';
}

/**
 * What the start of an answer's text (leading whitespace removed) says: it opens a form
 * (`open`), it may still (`maybe`: a prefix of an opener), or it is a plain answer (`no`).
 */
export function openingOf(lead: string): 'open' | 'maybe' | 'no' {
  if (lead === '') return 'maybe';
  if (!mayOpen(lead[0])) return 'no';
  if (lead[0] === '{') return 'open';
  for (const tag of TAG_OPENERS) {
    if (lead.startsWith(tag)) return 'open';
    if (tag.startsWith(lead)) return 'maybe';
  }
  if (lead[0] === '[') {
    // A bare JSON list of calls: `[` then `{` (whitespace between allowed).
    const next = lead.slice(1).trimStart();
    if (next === '') return 'maybe';
    return next[0] === '{' ? 'open' : 'no';
  }
  if (lead[0] === '`') return fenceOpening(lead);
  return 'no';
}

/** A ```json (or bare ```) fence whose first content is a JSON object or list opens the `json` form. */
function fenceOpening(lead: string): 'open' | 'maybe' | 'no' {
  if (lead.length < FENCE.length) return FENCE.startsWith(lead) ? 'maybe' : 'no';
  if (!lead.startsWith(FENCE)) return 'no';
  const newline = lead.indexOf('\n');
  if (newline < 0) return 'json'.startsWith(lead.slice(3).trim().toLowerCase()) ? 'maybe' : 'no';
  const language = lead.slice(3, newline).trim().toLowerCase();
  if (language !== '' && language !== 'json') return 'no';
  const body = lead.slice(newline + 1).trimStart();
  if (body === '') return 'maybe';
  return body[0] === '{' || body[0] === '[' ? 'open' : 'no';
}

/** The form an opened answer is in; null while its first marker's content has not begun (`<tool_call>` then JSON or `<function=`). */
export function formatOf(lead: string): ToolTextFormat | null {
  if (lead.startsWith(TOOL_CALL_OPEN)) {
    const body = lead.slice(TOOL_CALL_OPEN.length).trimStart();
    if (body === '') return null;
    return body.startsWith('<function=') || body.startsWith('<') ? 'qwen3_xml' : 'hermes';
  }
  if (lead.startsWith(MISTRAL_OPEN)) {
    const body = lead.slice(MISTRAL_OPEN.length).trimStart();
    if (body === '') return null;
    return body[0] === '[' || body[0] === '{' ? 'mistral' : 'mistral_args';
  }
  if (lead.startsWith(PYTHON_TAG)) return 'python_tag';
  return 'json';
}

/** The longest tagged opener: a piece of text longer than this that holds none cannot be the start of one. */
const LONGEST_TAG = Math.max(...TAG_OPENERS.map((tag) => tag.length));

/**
 * Whether a piece of an already delivered answer may hold (part of) a tagged opener: a form
 * after text starts with `<tool_call>`, `[TOOL_CALLS]` or `<|python_tag|>` (the `json` form is
 * a whole answer, and text before it makes it none). The cheap test each later text delta pays.
 */
export function mayHoldOpener(text: string): boolean {
  return text.indexOf('<') >= 0 || text.indexOf('[') >= 0;
}

/** Where the first tagged opener in `text` begins; -1 when there is none. */
export function tagOpenerAt(text: string): number {
  let first = -1;
  for (const tag of TAG_OPENERS) {
    const at = text.indexOf(tag);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}

/** Where a tail of `text` that could still grow into a tagged opener (`…<tool_`) begins; -1 when none can. */
export function openerTailAt(text: string): number {
  for (let at = Math.max(0, text.length - LONGEST_TAG + 1); at < text.length; at++) {
    const char = text[at];
    if (char !== '<' && char !== '[') continue;
    const tail = text.slice(at);
    for (const tag of TAG_OPENERS) if (tag.startsWith(tail)) return at;
  }
  return -1;
}

/**
 * Where a held form closes, read a piece at a time: tagged forms at `</tool_call>`, a fenced
 * `json` form at its closing ```; the others (Mistral's, Llama's, bare JSON) run to the end of
 * the answer and close only when it ends. Each piece is searched once, with the few characters
 * before it where a marker may have begun, so a long call is never searched again (nor its
 * text joined into one string while it grows).
 */
export class FormClose {
  private readonly marker: string | null;
  /** Characters of the form read so far. */
  private read = 0;
  /** The last characters read, where a marker cut between two pieces began. */
  private tail = '';
  /** Where the search starts: past a fence's opening. */
  private from = 0;

  /** `lead`: the form's text so far, from its opener on. */
  constructor(format: ToolTextFormat, lead: string) {
    if (format === 'hermes' || format === 'qwen3_xml') this.marker = TOOL_CALL_CLOSE;
    else if (format === 'json' && lead.trimStart().startsWith(FENCE)) {
      this.marker = FENCE;
      this.from = lead.indexOf(FENCE) + FENCE.length;
    } else this.marker = null;
  }

  /** Reads the form's next piece: the index in the whole form just past its close, or -1 while it is open. */
  push(piece: string): number {
    const marker = this.marker;
    if (marker === null) return -1;
    const base = this.read - this.tail.length;
    const window = this.tail + piece;
    this.read += piece.length;
    const at = window.indexOf(marker, Math.max(0, this.from - base));
    this.tail = window.length < marker.length ? window : window.slice(window.length - marker.length + 1);
    return at < 0 ? -1 : base + at + marker.length;
  }
}
