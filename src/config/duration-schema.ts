import { z } from '#zod';

/** A whole number of milliseconds (or seconds), at least `min`: the unit of every timeout and wait in the tier file. */
export const ms = (min = 1) => z.number().int().min(min);
