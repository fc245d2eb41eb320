/**
 * From an HTTP response body to normalized provider events: SSE parsing,
 * the per-API decoder, cancellation and failure handling in one loop.
 *
 * Cancellation contract: after `signal` aborts, no further event is yielded
 * and the body is cancelled, so the HTTP stream really closes. The signal is
 * checked between events, not only between network reads, because one read
 * can carry hundreds of events. A consumer that stops iterating early also
 * cancels the body (via the generator's `finally`).
 *
 * @module
 */

import type { ProviderApi } from "../../config/settings.ts";
import { AnthropicDecoder } from "./decode-anthropic.ts";
import { ChatDecoder } from "./decode-chat.ts";
import { ResponsesDecoder } from "./decode-responses.ts";
import { type ProviderEvent, type StreamDecoder, StreamErrorCode, streamError } from "./events.ts";
import { MAX_EVENT_CHARS, SseParser } from "./sse.ts";

/** Options for {@link decodeStream}. */
export interface DecodeOptions {
  /** Stops the stream: no event after abort, and the body is cancelled. */
  readonly signal?: AbortSignal;
  /** The requested model id; Anthropic's thinking classification depends on it. */
  readonly model?: string;
  /** Bound on one SSE event, in UTF-16 code units. */
  readonly maxEventChars?: number;
}

/** The decoder for one API dialect. */
export function decoderFor(api: ProviderApi, model: string | null = null): StreamDecoder {
  switch (api) {
    case "anthropic-messages":
      return new AnthropicDecoder(model);
    case "openai-responses":
      return new ResponsesDecoder();
    case "openai-chat":
      return new ChatDecoder();
  }
}

/**
 * Decodes a streaming response body. Never throws for stream failures: they
 * end the iteration with an `error` event (`malformed` and `event_too_large`
 * stop reading; `connection_lost` when the read itself fails). Abort ends the
 * iteration silently; the caller knows it aborted.
 */
export function decodeStream(
  api: ProviderApi,
  body: ReadableStream<Uint8Array>,
  options: DecodeOptions = {},
): AsyncGenerator<ProviderEvent, void, undefined> {
  return decodeBody(decoderFor(api, options.model ?? null), body, options);
}

/**
 * {@link decodeStream} through a decoder the caller made and can still ask,
 * e.g. what it {@link StreamDecoder.held | holds}; `options.model` is unused.
 */
export async function* decodeBody(
  decoder: StreamDecoder,
  body: ReadableStream<Uint8Array>,
  options: DecodeOptions = {},
): AsyncGenerator<ProviderEvent, void, undefined> {
  const { signal } = options;
  const parser = new SseParser(options.maxEventChars ?? MAX_EVENT_CHARS);
  const reader = body.getReader();
  // Cancelling the reader also settles a read() that is waiting on the network.
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  let drained = false;
  try {
    if (signal?.aborted) return;
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch {
        // The cause may quote the URL or socket details; only the code leaves.
        if (!signal?.aborted) yield streamError(StreamErrorCode.connectionLost);
        return;
      }
      if (signal?.aborted) return;
      if (chunk.done) break;
      for (const sse of parser.push(chunk.value)) {
        for (const event of decoder.onEvent(sse)) {
          if (signal?.aborted) return;
          yield event;
          if (event.type === "error" && event.code === StreamErrorCode.malformed) return;
        }
      }
      if (parser.failure !== null) {
        yield streamError(parser.failure);
        return;
      }
    }
    drained = true;
    const { events } = parser.finish();
    for (const sse of events) {
      for (const event of decoder.onEvent(sse)) {
        if (signal?.aborted) return;
        yield event;
        if (event.type === "error" && event.code === StreamErrorCode.malformed) return;
      }
    }
    for (const event of decoder.end()) {
      if (signal?.aborted) return;
      yield event;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!drained) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
