import { Box, Text } from 'ink';
import type { RouteView } from '../dashboard-state.js';
import { cell } from '../../util/format.js';
import { chooseColumns, gapAfter, type Column } from '../layout/table-columns.js';
import { measureContent } from '../layout/tier-cells.js';
import { TierRow } from './tier-row.js';

export interface RouteTableProps {
  routes: readonly RouteView[];
  width: number;
  /** Index of the highlighted tier, counting every route's tiers in order. */
  selected: number;
}

/** Every route's tiers in their configured order, one line each; columns drop as the terminal narrows. */
export function RouteTable({ routes, width, selected }: RouteTableProps) {
  const columns = chooseColumns(width, measureContent(routes.flatMap((r) => r.tiers)));
  let index = 0;
  return (
    <Box flexDirection="column">
      <Text dimColor wrap="truncate">
        {titleLine(columns)}
      </Text>
      {routes.map((route) => (
        <Box key={route.name} flexDirection="column">
          <Text wrap="truncate">
            <Text bold>{route.name}</Text>
            {route.pending > 0 ? <Text dimColor>{`  ${route.pending} pending`}</Text> : null}
          </Text>
          {route.tiers.map((tier) => {
            const isSelected = index++ === selected;
            return <TierRow key={tier.name} tier={tier} columns={columns} selected={isSelected} />;
          })}
        </Box>
      ))}
    </Box>
  );
}

function titleLine(columns: readonly Column[]): string {
  return columns.map((c, i) => cell(c.title, c.width, c.align) + ' '.repeat(gapAfter(columns, i))).join('');
}
