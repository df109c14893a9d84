/** One thing wrong with the tier file, with where it is. line/col are 1-based; 0 when unknown. */
export interface ConfigProblem {
  file: string;
  line: number;
  col: number;
  /** YAML path such as routes.chat.tiers[0].timeouts.ttft_ms; '' when not about one key. */
  path: string;
  message: string;
}

export type PathSegment = string | number;

/** Every problem found in one pass, so the user can fix them all at once. */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];

  constructor(problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }

  /** One line per problem: `file:line:col: message (at path)`. */
  format(): string {
    return this.message;
  }
}

export function formatProblem(problem: ConfigProblem): string {
  const where = [problem.file, problem.line > 0 ? problem.line : '', problem.line > 0 ? problem.col : ''].filter((part) => part !== '').join(':');
  const at = problem.path ? ` (at ${problem.path})` : '';
  return `${where ? `${where}: ` : ''}${problem.message}${at}`;
}

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/** ['routes', 'chat', 'tiers', 0, 'model'] → routes.chat.tiers[0].model; odd keys are quoted: routes["qwen2.5"]. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}
