import { Box, Text } from 'ink';
import { formatDuration, formatRate } from '../format.js';

export interface HeaderProps {
  listen: string;
  tierFile: string;
  uptimeMs: number;
  requestsPerSecond: number;
  activeStreams: number;
  pending: number;
}

/** One line: where the proxy listens and how busy it is; the tier file last, as it can be long. */
export function Header(props: HeaderProps) {
  const streams = `${props.activeStreams} active stream${props.activeStreams === 1 ? '' : 's'}`;
  return (
    <Box>
      <Text wrap="truncate">
        <Text bold color="cyan">llm-route</Text>
        {'  '}
        <Text bold>{props.listen}</Text>
        {'   '}
        <Text>{formatRate(props.requestsPerSecond)} req/s</Text>
        {'   '}
        <Text>{streams}</Text>
        {props.pending > 0 ? <Text dimColor>{`   ${props.pending} pending`}</Text> : null}
        {'   '}
        <Text dimColor>up {formatDuration(props.uptimeMs)}</Text>
        {'   '}
        <Text dimColor>tiers {props.tierFile}</Text>
      </Text>
    </Box>
  );
}
