import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { z as Zod } from 'zod';
import { tuningOff } from './switch.js';

/**
 * zod for llm-route's schemas (imported as `#zod`: package.json maps the types to zod's own and
 * the code to this file), in dist/ as tsc writes it; the bundle takes zod's ESM build instead,
 * tree-shaken to English (src/runtime/bundle-stand-ins.ts). zod's every entry point loads all of
 * its ~60 locales (its core index re-exports them) though only English, which its schemas import
 * on their own, is ever used: ~60 modules and ~15–25 ms of a start-up. Its CommonJS build lets
 * the locale index be placed in the module cache as an empty module before zod asks for it. Same
 * zod, same English messages; `z.locales` is empty (all of them with the tuning switched off,
 * src/runtime/switch.ts).
 */
const require = createRequire(import.meta.url);
const localeIndex = join(dirname(require.resolve('zod/package.json')), 'v4/locales/index.cjs');
if (!tuningOff('zod') && !require.cache[localeIndex]) {
  const Module = require('node:module') as new (id: string) => NodeJS.Module;
  const empty = new Module(localeIndex);
  empty.filename = localeIndex;
  empty.loaded = true;
  require.cache[localeIndex] = empty;
}

export const z = (require('zod') as { z: typeof Zod }).z;
