/**
 * {@link Runtime.fetch} for Node over `node:http` and `node:https`. Node 20's
 * global `fetch` is undici, loaded on first use: about 50 ms and 19 MiB
 * before a first turn's request can leave, for features a streaming POST to
 * a provider does not need. Keep-alive comes from Node's global agents (on by
 * default since Node 19); TLS trusts Node's CA store and
 * `NODE_EXTRA_CA_CERTS`, as `fetch` does.
 *
 * @module
 */

import type { IncomingMessage } from "node:http";
import type { HttpRequestInit, HttpResponse } from "../src/host/runtime.ts";
// The bound Deno's fetch gets too (idle-fetch.ts), so both runtimes give up after the same silence.
import { PROVIDER_IDLE_TIMEOUT_MS as IDLE_TIMEOUT_MS } from "./idle-fetch.ts";

// Loaded on first use, so a child that never runs a turn (or only talks
// plain http to a local server) never loads TLS.
const http = () => import("node:http");
const https = () => import("node:https");
const stream = () => import("node:stream");

function headerOf(message: IncomingMessage, name: string): string | null {
  const value = message.headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/** Sends one request; resolves with the status, headers and a Web stream of the body. */
export async function nodeFetch(url: string, init: HttpRequestInit): Promise<HttpResponse> {
  const target = new URL(url);
  if (target.protocol !== "https:" && target.protocol !== "http:") throw new TypeError(`Unsupported URL scheme ${target.protocol}`);
  const send = target.protocol === "https:" ? (await https()).request : (await http()).request;
  const { Readable } = await stream();
  return await new Promise((resolve, reject) => {
    const body = init.body === undefined ? null : Buffer.from(init.body, "utf8");
    const request = send(target, {
      method: init.method,
      headers: body === null ? { ...init.headers } : { ...init.headers, "content-length": String(body.length) },
      signal: init.signal,
    }, (response) => {
      const status = response.statusCode ?? 0;
      if (init.redirect === "error" && status >= 300 && status < 400) {
        response.destroy();
        reject(new TypeError(`Redirected with status ${status}`));
        return;
      }
      resolve({
        status,
        ok: status >= 200 && status < 300,
        headers: { get: (name) => headerOf(response, name) },
        body: Readable.toWeb(response) as ReadableStream<Uint8Array>,
      });
    });
    // A provider that accepts the connection and then goes silent would otherwise hold the run
    // until the user cancels; undici's fetch gives up after 300 s of silence too.
    request.setTimeout(IDLE_TIMEOUT_MS, () => request.destroy(new Error(`No data from the provider for ${IDLE_TIMEOUT_MS} ms`)));
    request.on("error", reject);
    if (body === null) request.end();
    else request.end(body);
  });
}
