import { useInput, useStdin } from 'ink';
import { useRef, useState } from 'react';
import type { DashboardActions } from '../actions.js';

/** A tier the keys can act on, in table order. */
export interface SelectableTier {
  route: string;
  tier: string;
  /** Whether its kill switch is on now: `k` then lifts it, else turns it on (a rolled-back tier too). */
  killed: () => boolean;
}

export interface DashboardKeyHandlers {
  actions: DashboardActions;
  /** The tiers as listed, read when a key is pressed. */
  tiers: () => readonly SelectableTier[];
  toggleHelp: () => void;
  closeHelp: () => void;
  notify: (text: string) => void;
}

export interface DashboardKeys {
  /** Off a TTY Ink cannot put stdin in raw mode: then no key is read. */
  keysEnabled: boolean;
  /** The highlighted tier's index in `tiers()`. */
  selected: number;
}

/**
 * The dashboard's keys. The selection lives in a ref as well as in state, so keys pressed
 * faster than a repaint (key repeat, a paste) each see the one before.
 */
export function useDashboardKeys(handlers: DashboardKeyHandlers): DashboardKeys {
  const { isRawModeSupported } = useStdin();
  const selectedRef = useRef(0);
  const [selected, setSelected] = useState(0);
  useInput(
    (input, key) => {
      const { actions, notify } = handlers;
      const tiers = handlers.tiers();
      const current = Math.max(0, Math.min(selectedRef.current, tiers.length - 1));
      const select = (index: number): void => {
        selectedRef.current = index;
        setSelected(index);
      };
      if (input === 'q' || (key.ctrl && input === 'c')) {
        notify('stopping: finishing requests in flight…');
        return run(notify, () => actions.quit());
      }
      if (key.upArrow) return select(Math.max(0, current - 1));
      if (key.downArrow) return select(Math.max(0, Math.min(tiers.length - 1, current + 1)));
      if (input === '?') return handlers.toggleHelp();
      if (key.escape) return handlers.closeHelp();
      if (input === 'p') {
        notify('probing every tier…');
        return run(notify, () => actions.probe());
      }
      if (input === 'r') {
        notify('reloading the tier file…');
        return run(notify, () => actions.reload());
      }
      if (input === 'k') {
        const target = tiers[current];
        if (!target) return;
        const kill = !target.killed();
        notify(`${kill ? 'killing' : 'restoring'} ${target.route}/${target.tier}…`);
        return run(notify, () => actions.setKill(target.route, target.tier, kill));
      }
    },
    { isActive: isRawModeSupported === true },
  );
  return { keysEnabled: isRawModeSupported === true, selected };
}

/** An action that throws becomes a notice, not a crashed screen. */
function run(notify: (text: string) => void, action: () => void): void {
  try {
    action();
  } catch (error) {
    notify(`failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
