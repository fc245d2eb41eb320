/**
 * {@link Runtime.fetch} for Deno: the Web `fetch`, with the response body
 * read through one reused buffer.
 *
 * Deno's fetch body is a byte stream whose default reader allocates a fresh
 * 64 KiB buffer for every read and hands out a view of it. A provider that
 * streams one SSE event per write (the common case) sends one HTTP chunk of
 * ~150 bytes per event, and every chunk is one read: 20,000 events allocated
 * and zeroed 1.3 GB of buffers, each kept alive by its small view until the
 * GC found it. That cost ~7 µs of CPU per event and lifted peak RSS by
 * ~75 MiB (`bench/turns.mjs --per-write`). Here a BYOB reader fills one
 * buffer, which comes back with each read, and each chunk is copied out at
 * its own size.
 *
 * @module
 */

import type { HttpRequestInit, HttpResponse } from "../src/host/runtime.ts";

/** Size of the reused read buffer: what Deno's own reader allocates per read. */
const READ_BUFFER_BYTES = 65_536;

/** `body` re-read through a BYOB reader into one reused buffer; the body itself when it is no byte stream. */
export function compactBody(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    return body;
  }
  let buffer: ArrayBuffer = new ArrayBuffer(READ_BUFFER_BYTES);
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (cancelled) return;
      if (done || value === undefined) {
        controller.close();
        reader.releaseLock();
        return;
      }
      // The read transferred the buffer into `value`; take it back for the next read.
      buffer = value.buffer as ArrayBuffer;
      controller.enqueue(value.slice());
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** Sends one request with the Web `fetch`; the body is read as {@link compactBody} says. */
export async function denoFetch(url: string, init: HttpRequestInit): Promise<HttpResponse> {
  const response = await globalThis.fetch(url, init);
  if (response.body === null) return response;
  const body = compactBody(response.body);
  return { status: response.status, ok: response.ok, headers: response.headers, body };
}
