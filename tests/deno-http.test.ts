// The Deno fetch adapter's body reader (runtime/deno-http.ts): one reused
// read buffer must never show through in the chunks it hands out, and
// cancel, errors and end of stream must pass through unchanged. Deno only;
// the adapter is not part of the Node build.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, it } from "node:test";
import type { HttpRequestInit, HttpResponse } from "../src/host/runtime.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const adapterPath = "../runtime/deno-http.ts";
const adapter = isDeno
  ? await import(adapterPath) as {
    compactBody(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array>;
    denoFetch(url: string, init: HttpRequestInit): Promise<HttpResponse>;
  }
  : null;

/** A byte stream that hands out `chunks` one per pull, then ends or fails. */
function byteSource(chunks: Uint8Array[], end: "close" | Error = "close", onCancel: (reason: unknown) => void = () => {}) {
  let index = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller: ReadableByteStreamController) {
      const next = chunks[index++];
      if (next !== undefined) controller.enqueue(next.slice());
      else if (end === "close") {
        controller.close();
        // A pending BYOB read settles only once its request is answered, as a network body does.
        controller.byobRequest?.respond(0);
      } else controller.error(end);
    },
    cancel: onCancel,
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunks: Uint8Array[]) => chunks.map((chunk) => new TextDecoder().decode(chunk)).join("");

describe("Deno fetch body reader", { skip: !isDeno && "Deno only" }, () => {
  it("hands out each chunk as its own copy, in order, and ends with the source", async () => {
    const source = ["data: a\n\n", "data: bb\n\n", "", "data: " + "c".repeat(70_000) + "\n\n", "data: [DONE]\n\n"].map(bytes);
    const chunks = await readAll(adapter!.compactBody(byteSource(source.filter((chunk) => chunk.length > 0))));
    assert.equal(text(chunks), source.map((chunk) => new TextDecoder().decode(chunk)).join(""));
    // Earlier chunks keep their bytes although the read buffer was reused for later ones.
    assert.equal(new TextDecoder().decode(chunks[0]), "data: a\n\n");
    assert.equal(new TextDecoder().decode(chunks[1]), "data: bb\n\n");
    const buffers = new Set(chunks.map((chunk) => chunk.buffer));
    assert.equal(buffers.size, chunks.length, "no two chunks share a buffer");
  });

  it("passes a source error on to the reader", async () => {
    const failure = new TypeError("connection reset");
    await assert.rejects(readAll(adapter!.compactBody(byteSource([bytes("data: a\n\n")], failure))), (error) => error === failure);
  });

  it("cancels the source when its reader cancels", async () => {
    const reasons: unknown[] = [];
    const wrapped = adapter!.compactBody(byteSource([bytes("data: a\n\n"), bytes("data: b\n\n")], "close", (reason) => reasons.push(reason)));
    const reader = wrapped.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: a\n\n");
    await reader.cancel("stop");
    assert.deepEqual(reasons, ["stop"]);
    assert.equal((await reader.read()).done, true);
  });

  it("returns a body that is no byte stream as it is", () => {
    const plain = new ReadableStream<Uint8Array>({ pull: (controller) => controller.close() });
    assert.equal(adapter!.compactBody(plain), plain);
  });

  it("streams a chunked response written one event per write intact", async () => {
    const events = Array.from({ length: 500 }, (_, index) => `data: {"n":${index}}\n\n`);
    const server = createServer(async (request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.flushHeaders();
      for (const event of events) {
        response.write(event);
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const response = await adapter!.denoFetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
        signal: new AbortController().signal,
        redirect: "error",
      });
      assert.equal(response.status, 200);
      assert.equal(response.ok, true);
      assert.equal(response.headers.get("content-type"), "text/event-stream");
      assert.equal(text(await readAll(response.body!)), events.join(""));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
