/**
 * One line a user can act on when a command cannot bind its port: which address, and why.
 * serve, exec, demo and mock all say it the same way.
 */
export function listenProblem(err: unknown, host: string, port: number): string {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') return `cannot listen on ${where}: the port is already in use (another llm-route?); stop it or choose another with --port`;
  if (code === 'EACCES') return `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose another with --port`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such address on this machine; check --host`;
  return `cannot listen on ${where}: ${(err as Error).message}`;
}
