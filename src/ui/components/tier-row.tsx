import { Text } from 'ink';
import type { TierView } from '../dashboard-state.js';
import { cell } from '../../util/format.js';
import { gapAfter, type Column } from '../layout/table-columns.js';
import { tierCellText } from '../layout/tier-cells.js';

const HEALTH_COLORS = { healthy: 'green', degraded: 'yellow', down: 'red' } as const;

export interface TierRowProps {
  tier: TierView;
  columns: readonly Column[];
  selected: boolean;
}

/** One tier as a single, never-wrapping line of fixed-width cells. */
export function TierRow({ tier, columns, selected }: TierRowProps) {
  return (
    <Text wrap="truncate" inverse={selected}>
      {columns.map((column, i) => {
        if (column.key === 'marker')
          return (
            <Text key="marker" bold>
              {selected ? '› ' : '  '}
            </Text>
          );
        const text = cell(tierCellText(tier, column.key), column.width, column.align) + ' '.repeat(gapAfter(columns, i));
        return (
          <Text key={column.key} {...cellStyle(tier, column)}>
            {text}
          </Text>
        );
      })}
    </Text>
  );
}

interface CellStyle {
  color?: string;
  bold?: boolean;
  dimColor?: boolean;
}

function cellStyle(tier: TierView, column: Column): CellStyle {
  switch (column.key) {
    case 'tier':
      return { bold: true };
    case 'model':
      return { dimColor: true };
    case 'state':
      return { color: HEALTH_COLORS[tier.health] };
    case 'weight':
      if (tier.weight === 0) return { color: 'red' };
      return tier.weightText === String(tier.weight) ? {} : { color: 'yellow' };
    case 'errors':
      return tier.errors > 0 ? { color: 'red' } : { dimColor: true };
    case 'failovers':
      return tier.failovers > 0 ? { color: 'yellow' } : { dimColor: true };
    case 'trend':
      return { color: 'cyan' };
    default:
      return {};
  }
}
