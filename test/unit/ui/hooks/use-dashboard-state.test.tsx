import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { TelemetryBus, type TelemetryListener } from '../../../../src/telemetry/bus.js';
import { useDashboardState } from '../../../../src/ui/hooks/use-dashboard-state.js';
import { testConfig } from '../fixtures.js';
import { frameText, until } from '../render-helpers.js';

/** A bus that counts its subscribers. */
class CountingBus extends TelemetryBus {
  subscribers = 0;
  override subscribe(listener: TelemetryListener): () => void {
    this.subscribers++;
    const unsubscribe = super.subscribe(listener);
    return () => {
      this.subscribers--;
      unsubscribe();
    };
  }
}

const config = testConfig();

function Pending({ bus }: { bus: TelemetryBus }) {
  const state = useDashboardState(bus);
  return <Text>{`pending ${state.snapshot(config, Date.now()).pending}`}</Text>;
}

describe('useDashboardState', () => {
  it("applies the bus's events and repaints on its timer; unmounted, it leaves the bus", async () => {
    const bus = new CountingBus();
    const ui = render(<Pending bus={bus} />);
    expect(frameText(ui)).toBe('pending 0');
    expect(bus.subscribers).toBe(1);
    bus.emit({ type: 'request_start', id: 'a', route: 'chat', stream: true, protocol: 'chat' });
    bus.emit({ type: 'request_start', id: 'b', route: 'chat', stream: true, protocol: 'chat' });
    await until(() => expect(frameText(ui)).toBe('pending 2'));
    ui.unmount();
    expect(bus.subscribers).toBe(0);
  });
});
