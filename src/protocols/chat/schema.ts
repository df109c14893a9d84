import { z } from '#zod';
import { isRecord } from '../../util/is-record.js';
import { isArrayOfTagged, isFilledString, isOptionalBoolean } from '../core/plain-body.js';

/**
 * What llm-route checks of a Chat Completions body: enough to route it and relay it. Every
 * other field passes through untouched (looseObject), so what a newer SDK sends still works.
 */
export const ChatBodySchema = z.looseObject({
  model: z.string('"model" is required: the name of a route').min(1, '"model" is required: the name of a route'),
  messages: z.array(
    z.looseObject({ role: z.string('each message needs a "role"') }, 'each message must be an object'),
    '"messages" is required and must be an array',
  ),
  stream: z.boolean('"stream" must be a boolean').optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
});

/** True only for a body ChatBodySchema accepts (checkedBody's fast path; zod judges the rest). */
export function isPlainChatBody(body: unknown): body is z.infer<typeof ChatBodySchema> {
  if (!isRecord(body) || !isFilledString(body.model) || !isArrayOfTagged(body.messages, 'role') || !isOptionalBoolean(body.stream)) return false;
  const options = body.stream_options;
  return options === undefined || options === null || (isRecord(options) && isOptionalBoolean(options.include_usage));
}
