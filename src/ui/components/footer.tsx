import { Text } from 'ink';

export interface FooterProps {
  keysEnabled: boolean;
  /** Feedback on the last key pressed. */
  notice: string | null;
}

/** The keys at hand, and what the last one did. */
export function Footer({ keysEnabled, notice }: FooterProps) {
  // The keys' hint is a string expression: its runs of spaces are the layout, and a formatter collapses them in JSX text.
  return (
    <Text wrap="truncate">
      {keysEnabled ? (
        <Text dimColor>{'↑↓ select   k kill/restore   p probe   r reload   ? help   q quit'}</Text>
      ) : (
        <Text dimColor>keys off: stdin is not a terminal</Text>
      )}
      {notice ? <Text color="cyan">{`   ${notice}`}</Text> : null}
    </Text>
  );
}
