import type { z } from 'zod';

/** One line for the first problem zod found in a request body: where, and what was expected. */
export function zodProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the request body is not valid';
  const where = issue.path.length === 0 ? 'the request body' : `"${issue.path.map(String).join('.')}"`;
  return `${where}: ${issue.message}`;
}
