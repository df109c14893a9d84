import { correlationToken } from '../../util/correlation-id.js';

/** A fresh id in a protocol's style: `chatcmpl-…`, `msg_…`, `resp_…`, `call_…` (16 base64url characters after the prefix). */
export function newId(prefix: string): string {
  return `${prefix}${correlationToken(16)}`;
}
