import { z } from '#zod';
import { isRecord } from '../../util/is-record.js';
import { isArrayOfObjects, isFilledString, isNullishString, isOptionalBoolean } from '../core/plain-body.js';

/**
 * What llm-route checks of a Responses body: enough to route, relay and translate it; every
 * other field passes through. `input` is a string or a list of items.
 */
export const ResponsesBodySchema = z.looseObject({
  model: z.string('"model" is required: the name of a route').min(1, '"model" is required: the name of a route'),
  input: z.union([z.string(), z.array(z.looseObject({}, 'each input item must be an object'))], '"input" is required: a string or an array of input items'),
  instructions: z.string('"instructions" must be a string').nullish(),
  stream: z.boolean('"stream" must be a boolean').optional(),
});

/** True only for a body ResponsesBodySchema accepts (checkedBody's fast path; zod judges the rest). */
export function isPlainResponsesBody(body: unknown): body is z.infer<typeof ResponsesBodySchema> {
  return (
    isRecord(body) &&
    isFilledString(body.model) &&
    (typeof body.input === 'string' || isArrayOfObjects(body.input)) &&
    isNullishString(body.instructions) &&
    isOptionalBoolean(body.stream)
  );
}
