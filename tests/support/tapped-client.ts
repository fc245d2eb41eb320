/**
 * The client library over a real child with a tap on both pipes: the child
 * is a real entry point spawned over real pipes (see processes.ts), the
 * client is `AgentClient` itself, and between them two pass-through streams
 * record every request line the client writes and every frame it is about
 * to read, so a test can check on the wire what the library did (how many
 * requests were unanswered, whether `operation.cancel` went out). The tap
 * sees each request when the client writes it and each frame before the
 * client reads it, so its count of unanswered requests never exceeds the
 * client's own.
 *
 * @module
 */

import { Readable, Writable } from "node:stream";
import { AgentClient } from "../../src/client/mod.ts";
import { type Launcher, reap, spawnDirect } from "./processes.ts";
import type { WireFrame } from "./wire-client.ts";

/** One request line as the client wrote it. */
export interface WireRequest {
  readonly id: string;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** A real child, a client connected to it through the tap, and what the tap saw. */
export class TappedAgent {
  readonly client: AgentClient;
  /** Every request, in the order the client wrote them. */
  readonly requests: WireRequest[] = [];
  /** Every frame, in the order the child wrote them. */
  readonly frames: WireFrame[] = [];
  /** Both directions in the order the tap saw them: `> <id> <method>` for a request, `< <id>` for a response. */
  readonly log: string[] = [];
  /** The child's exit code. */
  readonly exited: Promise<number | null>;
  /** Called with each request as it is written, before the child can read it. */
  onRequest: (request: WireRequest) => void = () => {};
  /** Called with each frame before the client reads it. */
  onFrame: (frame: WireFrame) => void = () => {};
  readonly #requestLines = new JsonLines();
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #held: Uint8Array[] | null = null;
  readonly #frameLines = new JsonLines();

  /** Spawns `launcher` serving stdio in `cwd` with `env`. */
  constructor(launcher: Launcher, cwd: string, env: NodeJS.ProcessEnv) {
    const child = spawnDirect(launcher, ["serve", "--stdio"], { cwd, env, stdio: ["pipe", "pipe", "ignore"] });
    child.stdin.on("error", () => {});
    this.exited = child.exited;
    const stdout = Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>;
    const readable = stdout.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        this.#read(chunk);
        controller.enqueue(chunk);
      },
    }));
    const stdin = (Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>).getWriter();
    this.#stdin = stdin;
    // The client closing the child's stdin (close(), shutdown(), a failure) is where a child that would not
    // exit must be ended, or the client's close() waits for it, and the test file with it, forever.
    let reaping: Promise<void> | null = null;
    const closing = (closed: Promise<void>): Promise<void> => {
      reaping ??= reap(child);
      return closed;
    };
    const writable = new WritableStream<Uint8Array>({
      write: (chunk) => {
        this.#written(chunk);
        if (this.#held === null) return stdin.write(chunk);
        this.#held.push(chunk);
      },
      close: () => closing(stdin.close()),
      abort: (reason) => closing(stdin.abort(reason)),
    });
    this.client = new AgentClient({ readable, writable }, { exited: child.exited });
  }

  /**
   * Keeps what the client writes from here on (it is still recorded, and
   * the client counts it as sent) until {@link release}, which hands it all
   * to the child in one write: one read of the child's, frames it handles
   * in order before any of its asynchronous work goes on.
   */
  hold(): void {
    this.#held ??= [];
  }

  /** Writes what {@link hold} kept, at once, and stops holding. */
  async release(): Promise<void> {
    const held = this.#held ?? [];
    this.#held = null;
    if (held.length === 0) return;
    const bytes = new Uint8Array(held.reduce((total, chunk) => total + chunk.length, 0));
    held.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
    await this.#stdin.write(bytes);
  }

  /** The requests of `method`. */
  sent(method: string): WireRequest[] {
    return this.requests.filter((request) => request.method === method);
  }

  /** The response frame to request `id`, if read. */
  response(id: string): WireFrame | undefined {
    return this.frames.find((frame) => frame.type === "response" && frame.id === id);
  }

  #written(chunk: Uint8Array): void {
    for (const request of this.#requestLines.take(chunk) as WireRequest[]) {
      this.requests.push(request);
      this.log.push(`> ${request.id} ${request.method}`);
      this.onRequest(request);
    }
  }

  #read(chunk: Uint8Array): void {
    for (const frame of this.#frameLines.take(chunk) as WireFrame[]) {
      this.frames.push(frame);
      if (frame.type === "response") this.log.push(`< ${frame.id}`);
      this.onFrame(frame);
    }
  }
}

/** One direction's bytes as JSON lines: what a chunk completes, the rest kept for the next. */
class JsonLines {
  readonly #decoder = new TextDecoder();
  #held = "";

  take(chunk: Uint8Array): unknown[] {
    this.#held += this.#decoder.decode(chunk, { stream: true });
    const lines = this.#held.split("\n");
    this.#held = lines.pop()!;
    return lines.map((line) => JSON.parse(line));
  }
}
