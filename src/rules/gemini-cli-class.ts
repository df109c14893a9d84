/**
 * Gemini CLI names itself in its user-agent, `GeminiCLI/<version>/<model> (<platform>; <arch>;
 * <surface>)` or `GeminiCLI-<client>/…` (`GeminiCLI-tui/0.61.0/…` from 0.61.0's terminal UI and
 * its `-p` mode alike, seen in a loopback-only namespace), and labels no request. Its classes
 * are read off what each request is (docs/rules.md):
 *
 * - `background`: a whole answer asked with `:generateContent` that offers no function, the
 *   helpers it runs around a turn on a small model: its model-routing classifier (a JSON schema
 *   with `complexity_score`, or `model_choice` before 0.5x), the next-speaker check, loop
 *   detection, edit correction, summaries of long tool output.
 * - `main`: the turn itself (`:streamGenerateContent`), and its history compression (the
 *   `<state_snapshot>` summary it asks for with `:generateContent`): like Claude Code's
 *   compaction, it summarizes the whole history, which a small local model would not hold.
 * - `subagent`: a turn of one of its agents (codebase investigator, CLI help, …), which it ends by
 *   calling the `complete_task` function it offers only them.
 */
export function isGeminiCli(agent: string): boolean {
  return agent.startsWith('GeminiCLI/') || agent.startsWith('GeminiCLI-');
}

/** The start of the system instruction Gemini CLI's history compression sends (0.61.0's compression prompt). */
const COMPRESSION = 'distilling chat history into a structured XML <state_snapshot>';

export function geminiCliClass(body: Record<string, unknown>, stream: boolean): 'main' | 'background' | 'subagent' {
  const functions = declaredFunctions(body.tools);
  if (functions.includes('complete_task')) return 'subagent';
  if (stream || functions.length > 0) return 'main';
  return systemText(body.systemInstruction).includes(COMPRESSION) ? 'main' : 'background';
}

function declaredFunctions(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  const names: string[] = [];
  for (const tool of tools) {
    const declarations = tool !== null && typeof tool === 'object' ? (tool as { functionDeclarations?: unknown }).functionDeclarations : undefined;
    if (!Array.isArray(declarations)) continue;
    for (const declaration of declarations) {
      const name = declaration !== null && typeof declaration === 'object' ? (declaration as { name?: unknown }).name : undefined;
      if (typeof name === 'string') names.push(name);
    }
  }
  return names;
}

/** The first part's text of a system instruction (Gemini CLI sends one), its first 300 characters. */
function systemText(instruction: unknown): string {
  if (typeof instruction === 'string') return instruction.slice(0, 300);
  const parts = instruction !== null && typeof instruction === 'object' ? (instruction as { parts?: unknown }).parts : undefined;
  const first = Array.isArray(parts) ? (parts[0] as { text?: unknown } | undefined) : undefined;
  return typeof first?.text === 'string' ? first.text.slice(0, 300) : '';
}
