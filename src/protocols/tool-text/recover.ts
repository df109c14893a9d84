import { isRecord } from '../../util/is-record.js';
import { LLAMA_END_TAGS, MISTRAL_ARGS, MISTRAL_OPEN, PYTHON_TAG, TOOL_CALL_OPEN, type ToolTextFormat } from './forms.js';
import { readLenient } from './lenient-json.js';
import { checkArguments } from './schema-check.js';

/** A piece of a recovered answer, in order: text the model wrote around its calls, or a call (arguments as JSON text). */
export type Segment = { type: 'text'; text: string } | { type: 'call'; name: string; arguments: string };

export type CallsFound =
  /** Every call names a tool of the request and its arguments hold to the tool's schema. */
  | { kind: 'calls'; format: ToolTextFormat; segments: Segment[]; calls: number; repaired: boolean }
  /** A call the client cannot run: an unknown tool, arguments unreadable or invalid after repair. */
  | { kind: 'invalid'; format: ToolTextFormat; message: string; repaired: boolean }
  /** Not a call at all (a JSON answer that names no tool): plain text. */
  | { kind: 'not_a_call' };

/** A request's tools: name → JSON Schema of the arguments. */
export type ToolSchemas = ReadonlyMap<string, Record<string, unknown>>;

interface Candidate {
  name: unknown;
  args: unknown;
}

/** What the text of one form says: the calls in it, the text around them, and whether any needed a repair. */
interface Read {
  candidates: Candidate[];
  texts: Array<string | number>;
  repaired: boolean;
}

/**
 * Reads the tool calls in an answer's text written in `format`, leniently, and checks them
 * against the request's tools. `text` may hold several forms (Hermes writes one
 * `<tool_call>` per call) and text around them; a form left open at the end is read as if closed.
 */
export function recoverCalls(text: string, format: ToolTextFormat, tools: ToolSchemas): CallsFound {
  const read = readForm(text, format, tools);
  if (read === null) return { kind: 'not_a_call' };
  if (typeof read === 'string') return { kind: 'invalid', format, message: read, repaired: false };
  const segments: Segment[] = [];
  let calls = 0;
  let repaired = read.repaired;
  for (const piece of read.texts) {
    if (typeof piece === 'string') {
      if (piece.trim() !== '') segments.push({ type: 'text', text: piece });
      continue;
    }
    const checked = checkCall(read.candidates[piece], tools);
    if (typeof checked === 'string') return { kind: 'invalid', format, message: checked, repaired };
    repaired ||= checked.repaired;
    segments.push({ type: 'call', name: checked.name, arguments: checked.arguments });
    calls++;
  }
  if (calls === 0) return format === 'json' ? { kind: 'not_a_call' } : { kind: 'invalid', format, message: 'no tool call in the form', repaired };
  return { kind: 'calls', format, segments, calls, repaired };
}

/** The calls a form holds; a string says why it does not read; null: the text is no call (the `json` form only). */
function readForm(text: string, format: ToolTextFormat, tools: ToolSchemas): Read | string | null {
  switch (format) {
    case 'hermes':
    case 'qwen3_xml':
      return readTagged(text, format, tools);
    case 'mistral_args':
      return readMistralArgs(text);
    case 'mistral':
      return readJsonCalls(text.slice(text.indexOf(MISTRAL_OPEN) + MISTRAL_OPEN.length), false);
    case 'python_tag': {
      let body = text.slice(text.indexOf(PYTHON_TAG) + PYTHON_TAG.length);
      for (const tag of LLAMA_END_TAGS) body = body.split(tag).join('');
      return readJsonCalls(body, false);
    }
    case 'json':
      return readJsonCalls(text, true);
  }
}

const TAGGED = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/** `<tool_call>…</tool_call>` forms in a row, each with a JSON call (Hermes) or Qwen3-Coder's XML inside. */
function readTagged(text: string, format: ToolTextFormat, tools: ToolSchemas): Read | string {
  const read: Read = { candidates: [], texts: [], repaired: false };
  let last = 0;
  for (const match of text.matchAll(TAGGED)) {
    read.texts.push(text.slice(last, match.index));
    last = match.index + match[0].length;
    if (!match[0].endsWith('</tool_call>')) read.repaired = true; // left open at the end of the answer
    const body = match[1].trim();
    if (format === 'qwen3_xml' || body.startsWith('<function=')) {
      const call = readQwenXml(body, tools);
      if (typeof call === 'string') return call;
      read.texts.push(read.candidates.push(call) - 1);
      continue;
    }
    const parsed = readLenient(body);
    if (parsed === null) return `the ${TOOL_CALL_OPEN} form does not read as JSON`;
    read.repaired ||= parsed.repaired;
    for (const candidate of candidatesOf(parsed.value)) read.texts.push(read.candidates.push(candidate) - 1);
  }
  read.texts.push(text.slice(last));
  return read;
}

const FUNCTION = /<function=([^>\n]+)>([\s\S]*?)(?:<\/function>|$)/;
const PARAMETER = /<parameter=([^>\n]+)>\n?([\s\S]*?)\n?(?:<\/parameter>|(?=<parameter=)|$)/g;

/**
 * Qwen3-Coder's `<function=NAME><parameter=P>V</parameter></function>`: each value is text,
 * read as JSON where the tool's schema wants something other than a string (as Qwen's own
 * parser, qwen3coder_tool_parser.py, converts by the schema's type).
 */
function readQwenXml(body: string, tools: ToolSchemas): Candidate | string {
  const fn = FUNCTION.exec(body);
  if (!fn) return 'a <tool_call> without <function=NAME>';
  const name = fn[1].trim();
  const properties = propertiesOf(tools.get(name));
  const args: Record<string, unknown> = {};
  for (const param of fn[2].matchAll(PARAMETER)) {
    const key = param[1].trim();
    const value = param[2];
    const type = properties[key]?.type;
    if (type === 'string' || type === undefined) args[key] = value;
    else args[key] = readLenient(value.trim())?.value ?? value;
  }
  return { name, args };
}

function propertiesOf(schema: Record<string, unknown> | undefined): Record<string, { type?: unknown }> {
  const properties = schema?.properties;
  return isRecord(properties) ? (properties as Record<string, { type?: unknown }>) : {};
}

/** Mistral v11: `[TOOL_CALLS]NAME[ARGS]{…}`, once per call. */
function readMistralArgs(text: string): Read | string {
  const read: Read = { candidates: [], texts: [], repaired: false };
  const pieces = text.split(MISTRAL_OPEN);
  read.texts.push(pieces[0]);
  for (const piece of pieces.slice(1)) {
    const at = piece.indexOf(MISTRAL_ARGS);
    if (at < 0) return `a ${MISTRAL_OPEN} without ${MISTRAL_ARGS}`;
    const parsed = readLenient(piece.slice(at + MISTRAL_ARGS.length).trim());
    if (parsed === null) return `the arguments after ${MISTRAL_ARGS} do not read as JSON`;
    read.repaired ||= parsed.repaired;
    read.texts.push(read.candidates.push({ name: piece.slice(0, at).trim(), args: parsed.value }) - 1);
  }
  return read;
}

/** One JSON call or a list of them. For the whole-answer `json` form, text that is not call-shaped is no call (null). */
function readJsonCalls(body: string, wholeAnswer: boolean): Read | string | null {
  const parsed = readLenient(body.trim());
  const candidates = parsed ? candidatesOf(parsed.value) : [];
  if (wholeAnswer && (candidates.length === 0 || !candidates.every(isCallShaped))) return null;
  if (parsed === null) return 'the call does not read as JSON';
  return { candidates, texts: candidates.map((_, i) => i), repaired: parsed.repaired };
}

function candidatesOf(value: unknown): Candidate[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) =>
    isRecord(item) ? { name: item.name, args: 'arguments' in item ? item.arguments : item.parameters } : { name: undefined, args: undefined },
  );
}

function isCallShaped(candidate: Candidate): boolean {
  return typeof candidate.name === 'string' && candidate.args !== undefined;
}

/** A candidate as a call the client can run: a tool the request offers, arguments that hold to its schema. */
function checkCall(candidate: Candidate, tools: ToolSchemas): { name: string; arguments: string; repaired: boolean } | string {
  const name = candidate.name;
  if (typeof name !== 'string' || name === '') return 'a call without a tool name';
  const schema = tools.get(name);
  if (!schema) return `a call of tool "${name.slice(0, 100)}", which the request does not offer`;
  let args: unknown = candidate.args ?? {};
  let repaired = false;
  if (typeof args === 'string') {
    // Arguments given as a JSON string (OpenAI's own shape), as models copy it.
    const parsed = args.trim() === '' ? { value: {}, repaired: false } : readLenient(args);
    if (parsed === null) return `the arguments of "${name}" do not read as JSON`;
    args = parsed.value;
    repaired = parsed.repaired;
  }
  if (!isRecord(args)) return `the arguments of "${name}" are not an object`;
  const before = JSON.stringify(args);
  const problem = checkArguments(schema, args);
  if (problem) return `the arguments of "${name}" do not hold to its schema: ${problem}`;
  // A scalar coerced to the schema's type ("5" → 5) is a repair too.
  const after = JSON.stringify(args);
  return { name, arguments: after, repaired: repaired || after !== before };
}
