import { Box, Text } from 'ink';
import { TREND_BARS } from '../layout/table-columns.js';

const KEYS: [string, string][] = [
  ['↑ ↓', 'select a tier'],
  ['k', 'kill switch of the selected tier: weight 0; press again to lift it'],
  ['p', 'health-check every tier now (results go to the log)'],
  ['r', 'reload the tier file (problems go to the log)'],
  ['?', 'show or hide this help (esc also hides it)'],
  ['q', 'quit: finish requests in flight, then stop'],
];

const COLUMNS: [string, string][] = [
  ['state', 'healthy · degraded (slow or failing) · down (skipped until its next trial)'],
  ['weight', '% of requests that try the tier; an override says who set it'],
  ['live', 'streams the tier is relaying now'],
  ['reqs errs', 'requests that reached the tier; its failed attempts and broken streams'],
  ['f/o', 'requests that failed over from the tier to the next'],
  ['p50 p95 p99', 'time to first token, last 60 s (at most 200 streams)'],
  ['cache', 'prompt tokens its server read from its cache, last 20 answers; – its server reports none'],
  ['ttft trend', `time to first token of its last ${TREND_BARS} streams, oldest first: a taller bar is a slower start`],
  ['ctx', 'context window in tokens the fit check uses (discovered, configured or learned); – unknown'],
];

const LINES: [string, string][] = [['pending', 'requests still waiting for a first token: not yet committed to a tier (all, and per route)']];

/** The keys, what the table's columns mean, and the header's and route lines' words. */
export function HelpOverlay() {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="cyan" paddingX={1}>
      <Text bold>keys</Text>
      {KEYS.map(([key, what]) => (
        <HelpLine key={key} name={key} what={what} />
      ))}
      <Text bold>columns</Text>
      {COLUMNS.map(([name, what]) => (
        <HelpLine key={name} name={name} what={what} />
      ))}
      <Text bold>header and routes</Text>
      {LINES.map(([name, what]) => (
        <HelpLine key={name} name={name} what={what} />
      ))}
    </Box>
  );
}

function HelpLine({ name, what }: { name: string; what: string }) {
  return (
    <Text wrap="truncate">
      <Text color="cyan">{name.padEnd(13)}</Text>
      {what}
    </Text>
  );
}
