import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export interface TerminalSize {
  columns: number;
  /** Undefined when the output is not a terminal (e.g. in tests). */
  rows: number | undefined;
}

/** The terminal's size, re-read when it is resized. */
export function useTerminalSize(): TerminalSize {
  const { stdout } = useStdout();
  const [, setResizes] = useState(0);
  useEffect(() => {
    const onResize = (): void => setResizes((n) => n + 1);
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return { columns: stdout.columns || 80, rows: stdout.rows || undefined };
}
