import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The first source file whose compiled .js in dist/ is missing or older than it (or than tsconfig.json); null when dist/ is current. */
export function staleSource(root = repoRoot): string | null {
  const src = join(root, 'src');
  const options = statSync(join(root, 'tsconfig.json')).mtimeMs;
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || entry.name.endsWith('.d.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const out = join(root, 'dist', relative(src, file).replace(/\.tsx?$/, '.js'));
    if (!existsSync(out) || statSync(out).mtimeMs < Math.max(statSync(file).mtimeMs, options)) return relative(root, file);
  }
  return null;
}

/** Whether dist/bundle/ (what bin/llm-route.js runs, scripts/bundle.mjs) is missing or older than a file of dist/ or the script. */
export function staleBundle(root = repoRoot): boolean {
  const manifest = join(root, 'dist/bundle/modules.json');
  if (!existsSync(manifest)) return true;
  const built = statSync(manifest).mtimeMs;
  if (statSync(join(root, 'scripts/bundle.mjs')).mtimeMs > built) return true;
  const dist = join(root, 'dist');
  return readdirSync(dist, { recursive: true, withFileTypes: true }).some(
    (entry) =>
      entry.isFile() &&
      entry.name.endsWith('.js') &&
      !entry.parentPath.startsWith(join(dist, 'bundle')) &&
      statSync(join(entry.parentPath, entry.name)).mtimeMs > built,
  );
}

/**
 * Compiles src/ into dist/ (tsconfig.json) unless it is current, then joins dist/ into
 * dist/bundle/ unless that is current. tsc emits despite type errors (npm test type-checks on
 * its own): those are only shown; a dist/ still stale is an error.
 */
export function ensureBuilt(root = repoRoot): void {
  const stale = staleSource(root);
  if (stale !== null) {
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], {
      cwd: root,
      encoding: 'utf8',
    });
    const output = `${tsc.stdout}\n${tsc.stderr}`.trim();
    if (staleSource(root) !== null) throw new Error(`dist/ is out of date (${stale}) and tsc did not bring it up to date:\n${output}`);
    if (tsc.status !== 0) process.stderr.write(`dist/ rebuilt from src/ with type errors:\n${output}\n`);
  }
  if (!staleBundle(root)) return;
  const bundle = spawnSync(process.execPath, [join(root, 'scripts/bundle.mjs')], { cwd: root, encoding: 'utf8' });
  if (bundle.status !== 0) throw new Error(`scripts/bundle.mjs failed:\n${`${bundle.stdout}\n${bundle.stderr}`.trim()}`);
}
