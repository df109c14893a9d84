import { isAlias, isMap, isNode, isScalar, isSeq, type Document, type LineCounter } from 'yaml';
import { formatPath, type ConfigProblem, type PathSegment } from './errors.js';

/** `value`: the node at a path; `key`: the key naming it; `parent`: the map that should hold it. */
export type Target = 'value' | 'key' | 'parent';

/** Turns a YAML path (or a source offset) into a problem with file:line:col. */
export class Reporter {
  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lineCounter: LineCounter,
  ) {}

  at(target: Target, path: readonly PathSegment[], message: string): ConfigProblem {
    return this.atOffset(locate(this.doc, path, target), path, message);
  }

  atOffset(offset: number, path: readonly PathSegment[], message: string): ConfigProblem {
    const { line, col } = this.lineCounter.linePos(offset);
    return { file: this.file, line: Math.max(line, 1), col: Math.max(col, 1), path: formatPath(path), message };
  }
}

/** Source offset of the deepest node along path that exists. */
function locate(doc: Document, path: readonly PathSegment[], target: Target): number {
  const steps = target === 'parent' ? path.slice(0, -1) : path;
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (const [index, segment] of steps.entries()) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => keyText(item.key) === String(segment));
      if (!pair) return offset;
      if (target === 'key' && index === steps.length - 1) return rangeStart(pair.key) ?? offset;
      node = pair.value;
      offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      offset = rangeStart(node) ?? offset;
    } else {
      return offset;
    }
  }
  return offset;
}

export function rangeStart(node: unknown): number | undefined {
  return isNode(node) ? node.range?.[0] : undefined;
}

export function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

/** Orders problems as they appear in the file. */
export function byPosition(a: ConfigProblem, b: ConfigProblem): number {
  return a.line - b.line || a.col - b.col;
}
