import { z } from '#zod';
import { isRecord } from '../../util/is-record.js';
import { isArrayOfTagged, isFilledString, isOptionalBoolean } from '../core/plain-body.js';

const Block = z.looseObject({ type: z.string('each content block needs a "type"') }, 'each content block must be an object');

/**
 * What llm-route checks of an Anthropic Messages body: enough to route, relay and translate
 * it. Everything else (cache_control, metadata, thinking, betas' fields) passes through.
 * max_tokens is optional here: a tier that needs one gets the tier's `max_tokens`.
 */
export const MessagesBodySchema = z.looseObject({
  model: z.string('"model" is required: the name of a route').min(1, '"model" is required: the name of a route'),
  messages: z.array(
    z.looseObject(
      {
        // user and assistant; Claude Code also sends "system" turns mid-conversation.
        role: z.string('each message needs a "role"'),
        content: z.union([z.string(), z.array(Block)], 'each message needs "content": a string or an array of content blocks'),
      },
      'each message must be an object',
    ),
    '"messages" is required and must be an array',
  ),
  system: z.union([z.string(), z.array(Block)], '"system" must be a string or an array of text blocks').optional(),
  // One message per fault: a -1 is a number, and the client should read why it is refused.
  max_tokens: z.number('"max_tokens" must be a number').int('"max_tokens" must be an integer').min(1, '"max_tokens" must be at least 1').optional(),
  stream: z.boolean('"stream" must be a boolean').optional(),
});

/** /v1/messages/count_tokens: the same body without max_tokens or stream. */
export const CountTokensBodySchema = MessagesBodySchema.omit({ max_tokens: true, stream: true });

/** True only for a body MessagesBodySchema accepts (checkedBody's fast path; zod judges the rest). */
export function isPlainMessagesBody(body: unknown): body is z.infer<typeof MessagesBodySchema> {
  if (!isRecord(body) || !isFilledString(body.model) || !isOptionalBoolean(body.stream)) return false;
  const maxTokens = body.max_tokens;
  if (maxTokens !== undefined && !(Number.isSafeInteger(maxTokens) && (maxTokens as number) >= 1)) return false;
  if (body.system !== undefined && !isTextOrBlocks(body.system)) return false;
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isRecord(message) || typeof message.role !== 'string' || !isTextOrBlocks(message.content)) return false;
  }
  return true;
}

/** z.union([z.string(), z.array(Block)]). */
function isTextOrBlocks(value: unknown): boolean {
  return typeof value === 'string' || isArrayOfTagged(value, 'type');
}
