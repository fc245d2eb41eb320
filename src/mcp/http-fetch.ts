/**
 * The `fetch` the SDK's Streamable HTTP transport is given: the runtime's
 * own HTTP client ({@link Runtime.fetch}), so MCP traffic takes the same
 * path as provider traffic on every runtime. Redirects are failures, as for
 * providers. What a server sends is bounded: a JSON body at
 * {@link MAX_MESSAGE_BYTES}, a server-sent event stream at that many bytes
 * per event; past the bound the body fails, which fails the request.
 *
 * @module
 */

import type { HttpRequestInit, HttpResponse, Runtime } from "../host/runtime.ts";
import { MAX_MESSAGE_BYTES } from "./limits.ts";
import type { FetchLike } from "./sdk.ts";

const LF = 0x0a;
const CR = 0x0d;

/** The request headers as a plain record with lower-case names. */
function headerRecord(headers: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers === undefined || headers === null) return record;
  const entries: Iterable<[string, string]> = typeof (headers as Headers).forEach === "function" && !Array.isArray(headers)
    ? collect(headers as Headers)
    : Array.isArray(headers)
    ? (headers as [string, string][])
    : Object.entries(headers as Record<string, string>);
  for (const [name, value] of entries) record[name.toLowerCase()] = value;
  return record;
}

function collect(headers: Headers): [string, string][] {
  const entries: [string, string][] = [];
  headers.forEach((value, name) => entries.push([name, value]));
  return entries;
}

/**
 * `source` failing once more than `maxBytes` arrive in one piece: the whole
 * body, or (for a server-sent event stream, `perEvent`) one event, counted
 * from the last blank line.
 */
export function boundedBody(source: ReadableStream<Uint8Array>, maxBytes: number, perEvent: boolean, oversized: () => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let count = 0;
  let last = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done) return controller.close();
      const bytes = chunk.value;
      if (!perEvent) count += bytes.length;
      else {
        for (let index = 0; index < bytes.length; index++) {
          const byte = bytes[index]!;
          if (byte === CR) continue;
          if (byte === LF && last === LF) count = 0;
          else count++;
          last = byte;
        }
      }
      if (count > maxBytes) {
        void reader.cancel().catch(() => {});
        oversized();
        return controller.error(new Error(`The server sent more than ${maxBytes} bytes in one message`));
      }
      controller.enqueue(bytes);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

async function readText(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (body === null) return "";
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let text = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
  return text + decoder.decode();
}

/** The parts of a Web `Response` the SDK's transport reads, over the runtime's answer. */
function responseOf(response: HttpResponse, hooks: HttpHooks): Response {
  const eventStream = (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
  const body = response.body === null ? null : boundedBody(response.body, MAX_MESSAGE_BYTES, eventStream, hooks.oversized);
  const like = {
    ok: response.ok,
    status: response.status,
    statusText: "",
    headers: response.headers,
    body,
    text: () => readText(body),
    json: async () => JSON.parse(await readText(body)) as unknown,
  };
  return like as unknown as Response;
}

/** What the connection learns from its HTTP traffic. */
export interface HttpHooks {
  /** Every response's status (a 401 means a login is needed). */
  status(status: number): void;
  /** A body went over the size bound and failed. */
  oversized(): void;
}

/** A {@link FetchLike} over `runtime.fetch`, reporting to `hooks`. */
export function runtimeFetchLike(runtime: Runtime, hooks: HttpHooks): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "POST" && method !== "DELETE") throw new TypeError(`Unsupported method ${method}`);
    // OAuth token and registration requests (the SDK's auth module) send form bodies.
    const body = init?.body instanceof URLSearchParams ? init.body.toString() : init?.body;
    if (body !== undefined && body !== null && typeof body !== "string") throw new TypeError("Only text bodies are sent");
    const request: HttpRequestInit = {
      method,
      headers: headerRecord(init?.headers),
      ...(typeof body === "string" ? { body } : {}),
      signal: init?.signal ?? new AbortController().signal,
      redirect: "error",
    };
    const response = await runtime.fetch(String(url), request);
    hooks.status(response.status);
    return responseOf(response, hooks);
  };
}
