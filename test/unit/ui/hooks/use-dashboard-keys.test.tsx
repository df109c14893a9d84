import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type SelectableTier, useDashboardKeys } from '../../../../src/ui/hooks/use-dashboard-keys.js';
import { fakeActions, frameText, type Rendered, until } from '../render-helpers.js';

const DOWN = '\u001B[B';
const UP = '\u001B[A';

function setup(tiers: SelectableTier[]) {
  const actions = fakeActions();
  const notices: string[] = [];
  const help = { toggle: vi.fn(), close: vi.fn() };
  function Keys() {
    const { selected, keysEnabled } = useDashboardKeys({
      actions,
      tiers: () => tiers,
      toggleHelp: help.toggle,
      closeHelp: help.close,
      notify: (text) => notices.push(text),
    });
    return <Text>{`selected ${selected} keys ${keysEnabled ? 'on' : 'off'}`}</Text>;
  }
  const ui = render(<Keys />);
  mounted.push(ui);
  return { ui, actions, notices, help };
}

const mounted: Rendered[] = [];
afterEach(() => {
  for (const ui of mounted.splice(0)) ui.unmount();
});

const tier = (route: string, name: string, killed = false): SelectableTier => ({ route, tier: name, killed: () => killed });

describe('useDashboardKeys', () => {
  it('moves the selection with the arrows, within the list, each key seeing the one before', async () => {
    const { ui } = setup([tier('chat', 'local'), tier('chat', 'cloud'), tier('embed', 'main')]);
    expect(frameText(ui)).toBe('selected 0 keys on');
    ui.stdin.write(UP); // already first: stays
    ui.stdin.write(DOWN);
    ui.stdin.write(DOWN);
    ui.stdin.write(DOWN); // already last: stays
    await until(() => expect(frameText(ui)).toBe('selected 2 keys on'));
    ui.stdin.write(UP);
    await until(() => expect(frameText(ui)).toBe('selected 1 keys on'));
  });

  it('k kills the selected tier, or lifts a kill switch that is on, saying which', async () => {
    const { ui, actions, notices } = setup([tier('chat', 'local'), tier('chat', 'cloud', true)]);
    ui.stdin.write('k');
    await until(() => expect(actions.setKill).toHaveBeenCalledWith('chat', 'local', true));
    ui.stdin.write(DOWN);
    ui.stdin.write('k');
    await until(() => expect(actions.setKill).toHaveBeenLastCalledWith('chat', 'cloud', false));
    expect(notices).toEqual(['killing chat/local…', 'restoring chat/cloud…']);
  });

  it('p probes, r reloads, q quits, ? and Esc work the help; a failing action becomes a notice', async () => {
    const { ui, actions, notices, help } = setup([tier('chat', 'local')]);
    actions.reload.mockImplementation(() => {
      throw new Error('tier file has 2 problems');
    });
    for (const key of ['p', 'r', '?', '\u001B']) ui.stdin.write(key);
    await until(() => expect(help.close).toHaveBeenCalledOnce());
    ui.stdin.write('q'); // after the lone Esc is read: an Esc just before it would make it Alt+q
    await until(() => expect(actions.quit).toHaveBeenCalledOnce());
    expect(actions.probe).toHaveBeenCalledOnce();
    expect(help.toggle).toHaveBeenCalledOnce();
    expect(help.close).toHaveBeenCalledOnce();
    expect(notices).toEqual(['probing every tier…', 'reloading the tier file…', 'failed: tier file has 2 problems', 'stopping: finishing requests in flight…']);
  });

  it('does nothing for k when there is no tier to act on', async () => {
    const { ui, actions, notices } = setup([]);
    ui.stdin.write('k');
    ui.stdin.write('p');
    await until(() => expect(actions.probe).toHaveBeenCalledOnce());
    expect(actions.setKill).not.toHaveBeenCalled();
    expect(notices).toEqual(['probing every tier…']);
  });
});
