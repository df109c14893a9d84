import { Box, Text } from 'ink';
import { formatCount, formatDuration, formatMs, formatRate } from '../../util/format.js';
import type { UsageTodayView } from '../model/usage-today.js';
import type { HeldCallView } from '../dashboard-view.js';
import { formatUsd } from '../../usage/text-table.js';

export interface HeaderProps {
  listen: string;
  tierFile: string;
  uptimeMs: number;
  requestsPerSecond: number;
  activeStreams: number;
  pending: number;
  /** Client-seen TTFT (arrival to commit) p50 over the last 60 s. */
  clientTtftP50: number | null;
  today: UsageTodayView;
  usageWarning: string | null;
  stateWarning?: string | null;
  /** Tool calls written as text held now: one line while there are any. */
  heldCalls?: HeldCallView[];
}

/** `holding a tool call written as text: chat/local 12.3k chars, 41s (quiet 2.0s)`: a long hold is visibly alive, or visibly stalled. */
export function heldCallsLine(calls: readonly HeldCallView[]): string {
  const each = calls.map((call) => {
    const quiet = call.quietMs >= 1000 ? ` (quiet ${formatMs(call.quietMs)})` : '';
    return `${call.route}/${call.tier} ${formatCount(call.chars)} chars, ${formatDuration(call.heldMs)}${quiet}`;
  });
  return `holding ${calls.length === 1 ? 'a tool call' : `${calls.length} tool calls`} written as text: ${each.join('; ')}`;
}

/**
 * Where the proxy listens and how busy it is (the tier file last, as it can be long); then
 * today's cost and tokens, the usage log's (every tier file that writes to it, not this one
 * alone: docs/usage.md, "The dashboard"); then, while the usage log is unusable, a warning.
 */
export function Header(props: HeaderProps) {
  const streams = `${props.activeStreams} active stream${props.activeStreams === 1 ? '' : 's'}`;
  const { today } = props;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold color="cyan">
          llm-route
        </Text>
        {'  '}
        <Text bold>{props.listen}</Text>
        {'   '}
        <Text>{formatRate(props.requestsPerSecond)} req/s</Text>
        {'   '}
        <Text>{streams}</Text>
        {props.pending > 0 ? <Text dimColor>{`   ${props.pending} pending`}</Text> : null}
        {props.clientTtftP50 !== null ? <Text>{`   client TTFT p50 ${formatMs(props.clientTtftP50)}`}</Text> : null}
        {'   '}
        <Text dimColor>up {formatDuration(props.uptimeMs)}</Text>
        {'   '}
        <Text dimColor>tiers {props.tierFile}</Text>
      </Text>
      <Text wrap="truncate">
        <Text dimColor>today in the usage log </Text>
        <Text bold>{formatUsd(today.costUsd)}</Text>
        <Text>{`   ${formatCount(today.promptTokens)} in / ${formatCount(today.completionTokens)} out tokens`}</Text>
        {today.cachedTokens > 0 ? <Text dimColor>{` (${formatCount(today.cachedTokens)} cached)`}</Text> : null}
        {today.saverTokensSaved > 0 ? <Text color="green">{`   savers saved ${formatCount(today.saverTokensSaved)} tokens`}</Text> : null}
      </Text>
      {props.heldCalls?.length ? (
        <Text color="yellow" wrap="truncate">
          {heldCallsLine(props.heldCalls)}
        </Text>
      ) : null}
      {props.usageWarning ? (
        <Text color="red" wrap="truncate">
          {props.usageWarning}
        </Text>
      ) : null}
      {props.stateWarning ? (
        <Text color="red" wrap="truncate">
          {props.stateWarning}
        </Text>
      ) : null}
    </Box>
  );
}
