import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

interface AjvInstance {
  compile(schema: object): ValidateFunction;
  errorsText(errors: ValidateFunction['errors']): string;
}
type AjvClass = new (options: Record<string, unknown>) => AjvInstance;

const require = createRequire(import.meta.url);
let ajv: AjvInstance | undefined;
/** Compiled validators by the schema's JSON: a tool's schema is compiled once per distinct schema, not per call. */
const compiled = new Map<string, ValidateFunction | null>();
const MAX_SCHEMAS = 512;
/** The same, by the schema object (one request's tools are checked without serialising their schemas again). */
const byObject = new WeakMap<object, ValidateFunction | null>();

/**
 * Checks a recovered call's arguments against its tool's JSON Schema (`ajv`, loaded on first
 * use): required fields, types, enums. `coerceTypes` turns a scalar into the schema's type
 * where that type is one ("5" → 5 for an integer); `args` is changed in place. A schema ajv
 * cannot compile (the client's own mistake, an unknown dialect) checks nothing: the tier is
 * not blamed for it.
 */
export function checkArguments(schema: Record<string, unknown>, args: Record<string, unknown>): string | null {
  const validate = validatorFor(schema);
  if (!validate || validate(args)) return null;
  return (ajv as AjvInstance).errorsText(validate.errors);
}

let warming = false;

/**
 * Loads ajv soon, off the current request (the first request with tools asks for it): loading
 * and a first compile take 50–100 ms once per process, which a held call would otherwise wait for.
 */
export function warmSchemaChecks(): void {
  if (ajv || warming) return;
  warming = true;
  // A first compile runs ajv's code generation cold (~30 ms); a throwaway schema takes that here.
  setImmediate(() =>
    loadedAjv().compile({ type: 'object', properties: { a: { type: 'string', enum: ['x'] }, b: { type: 'integer' } }, required: ['a'] }),
  ).unref();
}

function loadedAjv(): AjvInstance {
  if (!ajv) {
    // The class first, then `new`: tsc drops the parentheses of `new (require(…)).default(…)`.
    const Ajv = (require('ajv') as { default: AjvClass }).default;
    ajv = new Ajv({ coerceTypes: true, strict: false, allErrors: false, validateSchema: false });
  }
  return ajv;
}

function validatorFor(schema: Record<string, unknown>): ValidateFunction | null {
  let validate = byObject.get(schema);
  if (validate === undefined) byObject.set(schema, (validate = compiledFor(schema)));
  return validate;
}

function compiledFor(schema: Record<string, unknown>): ValidateFunction | null {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known !== undefined) return known;
  if (compiled.size >= MAX_SCHEMAS) compiled.clear();
  let validate: ValidateFunction | null;
  try {
    // `$schema` names a dialect (draft-07, 2020-12): the keywords tools use are the same in each.
    const { $schema: _dialect, ...rest } = schema;
    validate = loadedAjv().compile(rest);
  } catch {
    validate = null;
  }
  compiled.set(key, validate);
  return validate;
}
