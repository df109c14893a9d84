import type { AttemptError } from './attempt-error.js';
import type { Flight } from './attempt-start.js';
import type { CommitResult } from './stream-attempt.js';

/** How a streaming flight ended: committed (its stream is the answer; the client was answered at commit), or failed. */
export type FlightEnd =
  | { committed: true; flight: Flight; result: CommitResult & { committed: true } }
  | { committed: false; error: AttemptError; elapsedMs: number };

/** A flight's own commit or failure, as its end. */
export function flightEnd(flight: Flight, result: CommitResult): FlightEnd {
  return result.committed ? { committed: true, flight, result } : { committed: false, error: result.error, elapsedMs: flight.attempt.elapsedMs };
}

/** A flight no other attempt races: to its commit or failure. */
export async function land(flight: Flight): Promise<FlightEnd> {
  return flightEnd(flight, await flight.attempt.committed);
}
