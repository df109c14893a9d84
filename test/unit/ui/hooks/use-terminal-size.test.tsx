import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { useTerminalSize } from '../../../../src/ui/hooks/use-terminal-size.js';
import { frameText, type Rendered, resizeTo, until } from '../render-helpers.js';

function Size() {
  const { columns, rows } = useTerminalSize();
  return <Text>{`${columns}x${rows ?? 'none'}`}</Text>;
}

const mounted: Rendered[] = [];
afterEach(() => {
  for (const ui of mounted.splice(0)) ui.unmount();
});

describe('useTerminalSize', () => {
  it('reads the width, and again on each resize; no rows off a terminal', async () => {
    const ui = render(<Size />);
    mounted.push(ui);
    expect(frameText(ui)).toBe('100xnone'); // ink-testing-library's stdout: 100 columns, no rows
    resizeTo(ui, 57);
    await until(() => expect(frameText(ui)).toBe('57xnone'));
  });

  it('takes 80 columns when the terminal reports none (a pseudo-terminal without a size)', async () => {
    const ui = render(<Size />);
    mounted.push(ui);
    resizeTo(ui, 0);
    await until(() => expect(frameText(ui)).toBe('80xnone'));
  });

  it('stops listening for resizes once unmounted', () => {
    const ui = render(<Size />);
    const before = ui.stdout.listenerCount('resize');
    expect(before).toBeGreaterThan(0);
    ui.unmount();
    expect(ui.stdout.listenerCount('resize')).toBeLessThan(before);
  });
});
