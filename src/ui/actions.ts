/** What the dashboard's keys ask the running server to do; `serve` supplies the implementation. */
export interface DashboardActions {
  /** Stop gracefully: drain requests in flight, then exit. */
  quit(): void;
  /** Kill switch of one tier: `killed` true sets its weight to 0, false lifts that override (a rollback stays). */
  setKill(route: string, tier: string, killed: boolean): void;
  /** Health-check every tier now. */
  probe(): void;
  /** Re-read the tier file. */
  reload(): void;
}
