/** Reading a Server-Sent Events response in tests (`GET /api/v1/events`). */

/** One SSE message. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** A reader of one SSE response: `until` reads on until a condition holds or time runs out. */
export interface SseReader {
  /** Every message read so far (comments and `retry:` lines left out). */
  readonly events: SseEvent[];
  /** Reads until `stop(events)` holds or `ms` pass; returns the messages read so far. */
  until(stop: (events: SseEvent[]) => boolean, ms?: number): Promise<SseEvent[]>;
  /** Stops reading and closes the stream. */
  close(): Promise<void>;
}

export function sseReader(res: Response): SseReader {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const events: SseEvent[] = [];
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  let done = false;
  const take = (chunk: string): void => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (block.startsWith(':') || block.startsWith('retry:')) continue;
      const e: SseEvent = { event: 'message', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) e.id = line.slice(4);
        else if (line.startsWith('event: ')) e.event = line.slice(7);
        else if (line.startsWith('data: ')) e.data += line.slice(6);
      }
      events.push(e);
    }
  };
  return {
    events,
    async until(stop, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!done && !stop(events) && Date.now() < deadline) {
        // a read still pending from an earlier call that timed out is awaited, not repeated
        pending ??= reader.read();
        const left = deadline - Date.now();
        const got = await Promise.race([
          pending,
          new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, left))),
        ]);
        if (got === null) break;
        pending = null;
        if (got.done) done = true;
        else take(decoder.decode(got.value, { stream: true }));
      }
      return events;
    },
    async close() {
      done = true;
      await reader.cancel().catch(() => undefined);
    },
  };
}

/** Reads SSE messages from a response until `stop` says so (10 s at most), then closes it. */
export async function readEvents(
  res: Response,
  stop: (events: SseEvent[]) => boolean,
): Promise<SseEvent[]> {
  const r = sseReader(res);
  const events = await r.until(stop);
  await r.close();
  return events;
}
