/** The abort reason a request gets when the server stops before it finished (not the client's doing). */
export class ShutdownError extends Error {
  constructor() {
    super('llm-route is shutting down');
    this.name = 'ShutdownError';
  }
}

export function isShutdown(reason: unknown): boolean {
  return reason instanceof ShutdownError;
}
