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

/**
 * Where the first form of `text` closes (the index just past it), or -1 while it is open.
 * Tagged forms close at `</tool_call>`, a fence at its closing ```; the others (Mistral's,
 * Llama's, bare JSON) run to the end of the answer, and close only when the stream ends.
 * `searched`: how much of `text` an earlier call saw open, so a long call is scanned once.
 */
export function firstCloseOf(format: ToolTextFormat, text: string, searched = 0): number {
  if (format === 'hermes' || format === 'qwen3_xml') {
    const at = text.indexOf(TOOL_CALL_CLOSE, Math.max(0, searched - TOOL_CALL_CLOSE.length));
    return at < 0 ? -1 : at + TOOL_CALL_CLOSE.length;
  }
  if (format === 'json') {
    const open = text.indexOf(FENCE);
    if (open < 0 || text.slice(0, open).trim() !== '') return -1;
    const at = text.indexOf(FENCE, Math.max(open + FENCE.length, searched - FENCE.length));
    return at < 0 ? -1 : at + FENCE.length;
  }
  return -1;
}
