import { MockOptionsError, parseMockOptions, type MockOptions } from '../mock/options.js';
import { type MockServer, startMock } from '../mock/server.js';
import { listenProblem } from '../util/listen-problem.js';

/** `llm-route mock`: prints one line with the URL (tests and the demo parse it), runs until SIGINT/SIGTERM. */
export async function runMock(raw: Record<string, unknown>): Promise<void> {
  let options: MockOptions;
  try {
    options = parseMockOptions(raw);
  } catch (err) {
    if (!(err instanceof MockOptionsError)) throw err;
    for (const problem of err.problems) process.stderr.write(`llm-route mock: ${problem}\n`);
    process.exitCode = 2;
    return;
  }

  let mock: MockServer;
  try {
    mock = await startMock(options);
  } catch (err) {
    process.stderr.write(`llm-route mock: ${listenProblem(err, options.host, options.port)}\n`);
    process.exitCode = 1;
    return;
  }
  // The URL ends the line (the demo and tests read it): the base_url of a provider of this type.
  const api = options.protocol === 'openai' ? '' : ` (${options.protocol})`;
  process.stdout.write(`llm-route mock ${options.name}${api} listening on ${mock.url}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      // A second signal while closing gets the default behaviour: exit at once.
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await mock.close();
  process.exitCode = 0;
}
