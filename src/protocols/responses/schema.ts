import { z } from '#zod';

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
