import type { TelemetryEvent } from './events.js';

export type TelemetryListener = (event: TelemetryEvent) => void;

/** A synchronous fan-out of telemetry events; a failing subscriber never breaks a request. */
export class TelemetryBus {
  private listeners: TelemetryListener[] = [];

  subscribe(listener: TelemetryListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  emit(event: TelemetryEvent): void {
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i](event);
      } catch (err) {
        process.emitWarning(`telemetry subscriber failed: ${(err as Error).message}`);
      }
    }
  }
}
