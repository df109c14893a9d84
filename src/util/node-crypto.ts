import type * as NodeCrypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let loaded: typeof NodeCrypto | undefined;

/**
 * node:crypto, required the first time something hashes or needs an unguessable id. Requiring
 * it loads ~25 of Node's own modules (its every algorithm's bindings): ~12 ms on Node 24, 6 on
 * Node 20, which `serve` would otherwise spend before it listens.
 */
export function nodeCrypto(): typeof NodeCrypto {
  return (loaded ??= require('node:crypto') as typeof NodeCrypto);
}
