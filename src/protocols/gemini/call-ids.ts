/**
 * Gemini's function calls and responses, paired: a call keeps the client's id; without one
 * (Gemini's API often sends none) its id is derived from its place in the conversation, the
 * same every turn, so a translated prefix stays the same bytes (docs/caching.md). A response
 * answers the call of its id, else the oldest call of its name still unanswered.
 */
export class CallPairing {
  private readonly unanswered: Array<{ id: string; name: string }> = [];
  private calls = 0;

  /** The id of the conversation's next call. */
  call(id: string | undefined, name: string): string {
    const callId = id || `call_${this.calls}`;
    this.calls++;
    this.unanswered.push({ id: callId, name });
    return callId;
  }

  /** The id of the call a response answers (its own when it names one), or undefined when nothing matches. */
  answer(id: string | undefined, name: string | undefined): string | undefined {
    const at = this.unanswered.findIndex((call) => (id ? call.id === id : call.name === name));
    const answered = at === -1 ? undefined : this.unanswered.splice(at, 1)[0];
    return id || answered?.id;
  }
}
