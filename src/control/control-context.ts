import type { Config } from '../config/schema.js';
import type { HealthBoard } from '../health/health-board.js';
import type { StateBackend } from '../state/types.js';
import type { WeightControl } from './weights.js';

export type ReloadResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** What the admin API and alert handling need from the running server. */
export interface ControlContext {
  /** The config new requests use. */
  readonly config: Config;
  health: HealthBoard;
  weights: WeightControl;
  /** Where limits, budgets, idempotency records and overrides live (for /admin/routes). */
  state: StateBackend;
  /** Re-reads the tier file; a valid one applies to new requests, an invalid one changes nothing. */
  reload(): ReloadResult;
  /** Runs the active health checks of every tier now (the UI's `p`, and admin). */
  checkNow(): Promise<void>;
}
