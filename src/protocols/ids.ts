import { randomBytes } from 'node:crypto';

/** A fresh id in a protocol's style: `chatcmpl-…`, `msg_…`, `resp_…`, `call_…`. */
export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('base64url')}`;
}
