/**
 * The provider idle timeout that `fetch` lacks. A provider that accepts the
 * connection and then goes silent, before its headers or mid-stream, would
 * otherwise hold a run until the user cancels. Node's adapter
 * (`node-http.ts`) sets it as the socket timeout; this wraps a Web `fetch`
 * (Deno's) with the same bound, so every runtime gives up after the same
 * silence.
 *
 * @module
 */

import type { Disposable, HttpRequestInit, HttpResponse } from "../src/host/runtime.ts";

/** Longest silence on a provider connection, before and while the answer streams, on every runtime. */
export const PROVIDER_IDLE_TIMEOUT_MS = 300_000;

/** A `fetch` in the shape of {@link Runtime.fetch}. */
export type Fetch = (url: string, init: HttpRequestInit) => Promise<HttpResponse>;

/** The timers the idle bound runs on (a runtime, or a manual clock in tests). */
export interface IdleClock {
  setTimer(ms: number, callback: () => void): Disposable;
  monotonicNow(): number;
}

/**
 * Wraps `fetch` so a request fails once `idleMs` pass with nothing
 * received: no headers yet, or no body bytes since the last ones. One timer
 * per request, re-armed only when it fires early, so a fast stream costs a
 * clock read per chunk and no timer churn.
 */
export function withIdleTimeout(fetch: Fetch, clock: IdleClock, idleMs = PROVIDER_IDLE_TIMEOUT_MS): Fetch {
  return async (url, init) => {
    const abort = new AbortController();
    const forward = () => abort.abort(init.signal.reason);
    if (init.signal.aborted) forward();
    else init.signal.addEventListener("abort", forward, { once: true });
    let last = clock.monotonicNow();
    let timer: Disposable | null = null;
    const arm = (ms: number) => {
      timer = clock.setTimer(ms, () => {
        const quiet = clock.monotonicNow() - last;
        if (quiet < idleMs) return arm(idleMs - quiet);
        timer = null;
        abort.abort(new Error(`No data from the provider for ${idleMs} ms`));
      });
    };
    const stop = () => {
      timer?.dispose();
      timer = null;
      init.signal.removeEventListener("abort", forward);
    };
    arm(idleMs);
    let response: HttpResponse;
    try {
      response = await fetch(url, { ...init, signal: abort.signal });
    } catch (error) {
      stop();
      throw error;
    }
    last = clock.monotonicNow();
    const source = response.body;
    if (source === null) {
      stop();
      return response;
    }
    const reader = source.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          stop();
          throw error;
        }
        last = clock.monotonicNow();
        if (chunk.done) {
          stop();
          controller.close();
        } else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        stop();
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
    return { status: response.status, ok: response.ok, headers: response.headers, body };
  };
}
