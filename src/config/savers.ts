import { z } from '#zod';
import { describeSchema, type JsonSchema } from './describe-schema.js';
import type { ConfigProblem, PathSegment } from './errors.js';
import type { Reporter, Target } from './positions.js';
import { isRecord } from './raw-data.js';
import { SAVER_OPTIONS, type SaverName, type SaverSpec } from './saver-options.js';
import { describeValue } from './schema-issues.js';
import { closestMatch } from './suggest.js';

const NAMES = Object.keys(SAVER_OPTIONS) as SaverName[];

interface EntryProblem {
  target: Target;
  path: PathSegment[];
  message: string;
}

/** Problems of every `savers:` list in the raw tier file (the top-level one and each route's), as file:line:col. */
export function saverProblems(data: unknown, report: Reporter): ConfigProblem[] {
  if (!isRecord(data)) return [];
  const lists: Array<[unknown, PathSegment[]]> = [[data.savers, ['savers']]];
  if (isRecord(data.routes)) {
    for (const [name, route] of Object.entries(data.routes)) if (isRecord(route)) lists.push([route.savers, ['routes', name, 'savers']]);
  }
  return lists.flatMap(([list, path]) => readSavers(list, path).problems.map((p) => report.at(p.target, p.path, p.message)));
}

/** The savers a `savers:` list names, with their options (defaults filled in), and what is wrong with it. */
export function readSavers(list: unknown, path: PathSegment[]): { specs: SaverSpec[]; problems: EntryProblem[] } {
  const specs: SaverSpec[] = [];
  const problems: EntryProblem[] = [];
  if (!Array.isArray(list)) return { specs, problems }; // not a list: the schema says so
  const firstIndex = new Map<string, number>();
  list.forEach((entry, index) => {
    const at = [...path, index];
    const named = nameOf(entry, at);
    if ('problem' in named) {
      problems.push(named.problem);
      return;
    }
    const { name, options, nameAt } = named;
    if (!isSaverName(name)) {
      problems.push({ target: nameAt, path: typeof entry === 'string' ? at : [...at, name], message: unknownSaverMessage(name) });
      return;
    }
    const earlier = firstIndex.get(name);
    if (earlier !== undefined) {
      problems.push({ target: 'value', path: at, message: `saver "${name}" is listed twice (also at [${earlier}]); each saver runs once` });
      return;
    }
    firstIndex.set(name, index);
    const parsed = parseOptions(name, options, typeof entry === 'string' ? at : [...at, name], typeof entry === 'string');
    if ('problems' in parsed) problems.push(...parsed.problems);
    else specs.push(parsed.spec);
  });
  return { specs, problems };
}

type Named = { name: string; options: unknown; nameAt: Target } | { problem: EntryProblem };

function nameOf(entry: unknown, at: PathSegment[]): Named {
  if (typeof entry === 'string') return { name: entry, options: undefined, nameAt: 'value' };
  if (isRecord(entry)) {
    const keys = Object.keys(entry);
    if (keys.length === 1) return { name: keys[0], options: entry[keys[0]], nameAt: 'key' };
    const got = keys.length === 0 ? 'an empty map' : `a map with keys ${keys.join(', ')}`;
    return { problem: { target: 'value', path: at, message: `a saver is a name or a map with one key, the saver's name, holding its options; got ${got}` } };
  }
  return { problem: { target: 'value', path: at, message: `expected a saver name or a one-key map { name: options }, got ${describeValue(entry, false)}` } };
}

function parseOptions(name: SaverName, options: unknown, at: PathSegment[], bare: boolean): { spec: SaverSpec } | { problems: EntryProblem[] } {
  if (options !== undefined && options !== null && !isRecord(options)) {
    return { problems: [{ target: 'value', path: at, message: `the options of saver "${name}" must be a map, got ${describeValue(options, false)}` }] };
  }
  const schema = SAVER_OPTIONS[name];
  const result = schema.safeParse(options ?? {});
  if (result.success) return { spec: { name, options: result.data } as SaverSpec };
  const shape = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
  const allowed = Object.keys(shape.properties ?? {});
  const problems = result.error.issues.flatMap((issue): EntryProblem[] => {
    const key = String(issue.path[0] ?? '');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((unknown) => ({ target: 'key', path: [...at, unknown], message: unknownOptionMessage(name, unknown, allowed) }));
    }
    const value = isRecord(options) ? options[key] : undefined;
    if (value === undefined) {
      const how = bare ? `; write it as { ${name}: { ${key}: ... } }` : '';
      return [
        { target: bare ? 'value' : 'key', path: at, message: `saver "${name}" needs the option ${key}: ${describeSchema(shape.properties?.[key])}${how}` },
      ];
    }
    return [{ target: 'value', path: [...at, key], message: `expected ${describeSchema(shape.properties?.[key])}, got ${describeValue(value, false)}` }];
  });
  return { problems };
}

function isSaverName(name: string): name is SaverName {
  return (NAMES as string[]).includes(name);
}

function unknownSaverMessage(name: string): string {
  const suggestion = closestMatch(name, NAMES);
  return `unknown saver "${name}"; ${suggestion ? `did you mean "${suggestion}"?` : `the savers are ${NAMES.join(', ')}`}`;
}

function unknownOptionMessage(saver: string, option: string, allowed: string[]): string {
  if (allowed.length === 0) return `saver "${saver}" takes no options, got "${option}"`;
  const suggestion = closestMatch(option, allowed);
  return `unknown option "${option}" of saver "${saver}"; ${suggestion ? `did you mean "${suggestion}"?` : `expected one of: ${allowed.join(', ')}`}`;
}
