/**
 * An endpoint's path as a codec names it: exact (`/v1/chat/completions`), or with the route in
 * it (`/v1beta/models/{model}:generateContent`: Gemini's API names the model in the path, not in
 * the body). A template's `{model}` is what lies between its head and its tail, URL-decoded,
 * without a leading `models/` (a resource name written whole); the server then routes it as
 * other protocols' `model` field.
 */
export interface PathTemplate {
  /** What comes before `{model}` (`/v1beta/models/`). */
  readonly head: string;
  /** What comes after it (`:generateContent`; '' for a model's own path). */
  readonly tail: string;
}

const PLACEHOLDER = '{model}';

/** The template a path names; null for an exact path. */
export function templateOf(path: string): PathTemplate | null {
  const at = path.indexOf(PLACEHOLDER);
  return at === -1 ? null : { head: path.slice(0, at), tail: path.slice(at + PLACEHOLDER.length) };
}

/**
 * A method call's suffix (`:embedContent`, `:batchGenerateContent`): lowerCamel letters after
 * the last colon. A model's own path ends in a name, which may hold a colon too
 * (`qwen2.5-coder:14b`), but not in one of these.
 */
const METHOD_SUFFIX = /:[a-z]+[A-Z][A-Za-z]*$/;

/** The model `path` names through `template`, or undefined when it is not the template's. */
export function modelInPath(template: PathTemplate, path: string): string | undefined {
  if (!path.startsWith(template.head) || !path.endsWith(template.tail)) return undefined;
  const raw = path.slice(template.head.length, path.length - template.tail.length);
  if (raw === '' || (template.tail === '' && METHOD_SUFFIX.test(raw))) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return undefined; // a malformed escape names no model
  }
  const model = name.startsWith('models/') ? name.slice('models/'.length) : name;
  return model === '' ? undefined : model;
}

/** Whether `path` is a method call under the template's head that no endpoint serves (`/v1/models/x:embedContent`): its protocol's still. */
export function callsUnder(template: PathTemplate, path: string): boolean {
  return template.tail.startsWith(':') && path.startsWith(template.head) && path.indexOf(':', template.head.length) > template.head.length;
}
