/**
 * Light background traffic for the demo: one streaming request at a time at a steady pace,
 * each read to the end, as an app would. Stops when told to; never outlives the demo.
 */
export function startTraffic(baseUrl: string, everyMs: number, prompts: readonly string[]): () => Promise<void> {
  const abort = new AbortController();
  let n = 0;
  const loop = (async () => {
    while (!abort.signal.aborted) {
      const started = Date.now();
      try {
        const res = await fetch(`${baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: prompts[n++ % prompts.length] }] }),
          signal: abort.signal,
        });
        await res.arrayBuffer();
      } catch {
        // failures show up in the proxy's own log; the loop goes on
      }
      const wait = Math.max(50, everyMs - (Date.now() - started));
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
    }
  })();
  return async () => {
    abort.abort();
    await loop;
  };
}
