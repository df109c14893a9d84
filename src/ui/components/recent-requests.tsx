import { Box, Text } from 'ink';
import type { RecentRequest } from '../dashboard-state.js';
import { cell, formatClock, formatCount, formatMs } from '../../util/format.js';

export interface RecentRequestsProps {
  requests: readonly RecentRequest[];
  /** Lines for requests (the title and column line come on top). */
  rows: number;
  /** Shown while there is nothing to list. */
  hint: string;
}

/** Outcomes the status code alone does not tell. */
const OUTCOME_NOTES: Partial<Record<RecentRequest['outcome'], string>> = {
  interrupted: 'cut off mid-stream',
  client_abort: 'client left',
  upstream_rejected: 'rejected the payload',
};

/** The last requests, newest first: when, which route, status, TTFT, tokens and the way it took. */
export function RecentRequests({ requests, rows, hint }: RecentRequestsProps) {
  const shown = requests.slice(0, Math.max(0, rows));
  const routeWidth = Math.min(16, Math.max(5, ...shown.map((r) => r.route.length)));
  return (
    <Box flexDirection="column">
      <Text bold>recent requests</Text>
      {requests.length === 0 ? (
        <Text dimColor wrap="truncate">
          {hint}
        </Text>
      ) : (
        <Text
          dimColor
          wrap="truncate"
        >{`${cell('time', 10)}${cell('route', routeWidth + 2)}${cell('api', 10)}${cell('status', 8)}${cell('ttft', 7, 'right')}${cell('tokens', 8, 'right')}  path`}</Text>
      )}
      {shown.map((request, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the rows have no id of their own; two can share a millisecond.
        <RecentLine key={`${request.at}-${i}`} request={request} routeWidth={routeWidth} />
      ))}
    </Box>
  );
}

function RecentLine({ request, routeWidth }: { request: RecentRequest; routeWidth: number }) {
  const note = OUTCOME_NOTES[request.outcome];
  return (
    <Text wrap="truncate">
      <Text dimColor>{cell(formatClock(request.at), 10)}</Text>
      <Text>{cell(request.route || '–', routeWidth + 2)}</Text>
      <Text dimColor>{cell(request.protocol, 10)}</Text>
      <Text color={statusColor(request)}>{cell(String(request.status), 8)}</Text>
      <Text>{cell(request.ttftMs === undefined ? '–' : formatMs(request.ttftMs), 7, 'right')}</Text>
      <Text dimColor={request.completionTokens === undefined}>
        {cell(request.completionTokens === undefined ? '–' : formatCount(request.completionTokens), 8, 'right')}
      </Text>
      <Text>
        {'  '}
        {request.path}
      </Text>
      {request.embeddings ? <Text color="blue">{`  (${request.embeddings})`}</Text> : null}
      {request.rule !== undefined ? <Text color="magenta">{`  (rule ${request.rule})`}</Text> : null}
      {request.resumed ? <Text color="cyan">{`  (${request.resumed})`}</Text> : null}
      {request.toolText ? <Text color="magenta">{`  (${request.toolText})`}</Text> : null}
      {request.hedged ? <Text color="magenta">{`  (${request.hedged})`}</Text> : null}
      {note ? <Text color="yellow">{`  (${note})`}</Text> : null}
    </Text>
  );
}

function statusColor(request: RecentRequest): string {
  if (request.outcome === 'ok') return 'green';
  if (request.outcome === 'client_abort' || request.outcome === 'interrupted') return 'yellow';
  return 'red';
}
