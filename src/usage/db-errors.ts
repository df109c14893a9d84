/** SQLite result codes and system errors, by what they mean to someone reading the log. */
const KINDS: Array<[RegExp, string]> = [
  [/^SQLITE_(BUSY|LOCKED)/, 'locked by another process'],
  [/^SQLITE_(CORRUPT|NOTADB)/, 'corrupt (not a usable SQLite database)'],
  [/^SQLITE_FULL/, 'full'],
  [/^(SQLITE_(CANTOPEN|READONLY|PERM|AUTH)|EACCES|EPERM|EROFS|ENOTDIR|EISDIR|ENOENT|EEXIST)/, 'not writable'],
  [/^(SQLITE_IOERR|EIO|ENOSPC)/, 'failing to read or write'],
];

/** "corrupt (not a usable SQLite database): file is not a database (SQLITE_NOTADB)". */
export function describeDbError(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  const message = err instanceof Error ? err.message : String(err);
  const kind = KINDS.find(([pattern]) => pattern.test(code))?.[1];
  return `${kind ?? 'unusable'}: ${message}${code ? ` (${code})` : ''}`;
}
