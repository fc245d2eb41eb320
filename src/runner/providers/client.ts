/**
 * One streaming provider request: send the built request with `fetch`, and
 * turn the answer into normalized events or a diagnostic code. Nothing the
 * provider says in an error body, and nothing a network exception carries,
 * leaves this function: failures are classified from the status, and a 400
 * or 413 body is read (bounded) only to tell whether it says the request
 * does not fit the model's context (`context-overflow.ts`).
 *
 * @module
 */

import { DiagnosticCode } from "../../protocol/errors.ts";
import type { HttpResponse, Runtime } from "../../host/runtime.ts";
import type { Endpoint } from "../../config/providers.ts";
import type { BuiltRequest } from "./conversation.ts";
import type { ProviderEvent } from "./events.ts";
import { classifyHttpFailure } from "./http-status.ts";
import { decodeStream } from "./stream.ts";
import { isOverflowAnswer, OVERFLOW_BODY_BYTES } from "./context-overflow.ts";
import { readBounded } from "../../util/read-bounded.ts";

/** The `fetch` the client uses: the runtime's, so tests and embedders can route it. */
export type Fetch = Runtime["fetch"];

/** The outcome of {@link openProviderStream}. */
export type ProviderStream =
  | { readonly ok: true; readonly events: AsyncGenerator<ProviderEvent, void, undefined> }
  | {
    readonly ok: false;
    readonly code: DiagnosticCode;
    readonly status: number | null;
    /** Whether the provider said the request does not fit the model's context window. */
    readonly overflow: boolean;
  };

/**
 * Sends `request` and, on a 2xx answer with a body, returns its decoded
 * events. An aborted `signal` stops both the request and the stream.
 */
export async function openProviderStream(
  fetch: Fetch,
  endpoint: Endpoint,
  model: string,
  request: BuiltRequest,
  signal: AbortSignal,
): Promise<ProviderStream> {
  let response: HttpResponse;
  try {
    response = await fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal, redirect: "error" });
  } catch {
    return { ok: false, code: DiagnosticCode.providerUnreachable, status: null, overflow: false };
  }
  if (!response.ok || response.body === null) {
    // Providers echo keys and prompts in error messages: a body is read only to classify an
    // overflow, and nothing of it is kept.
    const classify = response.status === 400 || response.status === 413;
    const body = classify ? await readBounded(response.body, OVERFLOW_BODY_BYTES).catch(() => null) : null;
    if (!classify) await response.body?.cancel().catch(() => {});
    const code = response.ok ? DiagnosticCode.providerStreamTruncated : classifyHttpFailure(response.status).code;
    return { ok: false, code, status: response.status, overflow: !response.ok && isOverflowAnswer(response.status, body) };
  }
  return { ok: true, events: decodeStream(endpoint.api, response.body, { signal, model }) };
}
