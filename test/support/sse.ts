// A GraphQL subscription over Server-Sent Events as a partner's client opens it
// (docs/partner-guide.md "Live booking status"): POST /graphql with `Accept: text/event-stream`,
// the stream read as it arrives and cut into messages (`id:`, `event:`, `data:` lines).

export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
  /** `data` as JSON, for `next` messages. */
  json?: any;
  /** performance.now() when the message arrived. */
  at: number;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The body when the answer is not a stream (an error before it opened). */
  text?: string;
  messages: SseMessage[];
  /** The next message not taken yet; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Waits `ms` and returns the messages that arrived meanwhile (not taken by next()). */
  quietFor(ms: number): Promise<SseMessage[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openStream(
  baseUrl: string,
  key: string | undefined,
  query: string,
  opts: { variables?: Record<string, unknown>; lastEventId?: string; headers?: Record<string, string> } = {},
): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      Accept: 'text/event-stream',
      'Content-Type': 'application/json',
      ...(key ? { Authorization: `Bearer ${key}` } : {}),
      ...(opts.lastEventId ? { 'Last-Event-ID': opts.lastEventId } : {}),
      ...(opts.headers ?? {}),
    },
    body: JSON.stringify({ query, variables: opts.variables ?? {} }),
  });
  const messages: SseMessage[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    messages,
    ended: Promise.resolve(),
    async next(timeoutMs = 5000) {
      const deadline = performance.now() + timeoutMs;
      while (messages.length <= taken) {
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no SSE message within ${timeoutMs} ms (got ${JSON.stringify(messages)})`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      return messages[taken++]!;
    },
    async quietFor(ms) {
      await new Promise((r) => setTimeout(r, ms));
      const fresh = messages.slice(taken);
      taken = messages.length;
      return fresh;
    },
    close: () => abort.abort(),
  };
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    stream.text = await res.text();
    return stream;
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let firstBytes: (() => void) | undefined;
  const opened = new Promise<void>((resolve) => (firstBytes = resolve));
  stream.ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        firstBytes?.();
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = { data: '', at: performance.now() };
          let comment = true;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            comment = false;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') message.id = value;
            else if (field === 'event') message.event = value;
            else if (field === 'data') message.data += value;
          }
          if (comment) continue;
          if (message.event === 'next') message.json = JSON.parse(message.data);
          messages.push(message);
          wake?.();
        }
      }
    } catch {
      /* aborted by close() */
    } finally {
      firstBytes?.();
    }
  })();
  // The first bytes (yoga's opening comment) come once the subscription is registered: events after this reach it.
  await opened;
  return stream;
}
