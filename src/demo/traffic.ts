/** One request of the demo's traffic: sent, and read to the end, as an app would. */
export type SendRequest = (prompt: string, signal: AbortSignal) => Promise<unknown>;

/** At most this many of its requests in flight: a proxy that holds every answer does not pile them up. */
export const MAX_IN_FLIGHT = 16;

/**
 * Light background traffic for the demo: a streaming request every `everyMs`, whatever the
 * ones before it are doing (a slow answer does not slow the pace, as the README promises: "a
 * request every 0.7 s"). Stops when told to, aborting what is still in flight; never outlives
 * the demo.
 */
export function startTraffic(baseUrl: string, everyMs: number, prompts: readonly string[], send: SendRequest = streamChat(baseUrl)): () => Promise<void> {
  const abort = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  const tick = (): void => {
    if (abort.signal.aborted || inFlight.size >= MAX_IN_FLIGHT) return;
    const request: Promise<void> = send(prompts[n++ % prompts.length], abort.signal).then(
      () => undefined,
      // failures show up in the proxy's own log; the traffic goes on
      () => undefined,
    );
    inFlight.add(request);
    void request.then(() => inFlight.delete(request));
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    abort.abort();
    await Promise.all(inFlight);
  };
}

function streamChat(baseUrl: string): SendRequest {
  return async (prompt, signal) => {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: prompt }] }),
      signal,
    });
    await res.arrayBuffer();
  };
}
