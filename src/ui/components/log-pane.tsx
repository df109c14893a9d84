import { Box, Text } from 'ink';
import type { LogLevel, LogLine } from '../dashboard-state.js';
import { formatClock } from '../../util/format.js';

const LEVEL_COLORS: Record<LogLevel, string | undefined> = { info: undefined, good: 'green', warn: 'yellow', bad: 'red' };

export interface LogPaneProps {
  /** Oldest first; the last `rows` are shown. */
  lines: readonly LogLine[];
  rows: number;
}

/** Notable moments: reloads, state changes, weight changes, rollbacks, probes, provider output. */
export function LogPane({ lines, rows }: LogPaneProps) {
  const shown = rows > 0 ? lines.slice(-rows) : [];
  return (
    <Box flexDirection="column">
      <Text bold>log</Text>
      {shown.length === 0 ? <Text dimColor>nothing notable yet</Text> : null}
      {shown.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no id of their own; two can share a millisecond.
        <Text key={`${line.at}-${i}`} wrap="truncate">
          <Text dimColor>
            {formatClock(line.at)}
            {'  '}
          </Text>
          <Text color={LEVEL_COLORS[line.level]}>{line.text}</Text>
        </Text>
      ))}
    </Box>
  );
}
