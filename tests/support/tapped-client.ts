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
import { type Launcher, spawnDirect } from "./processes.ts";
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
  #out = "";
  #in = "";
  readonly #outDecoder = new TextDecoder();
  readonly #inDecoder = new TextDecoder();

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
    const writable = new WritableStream<Uint8Array>({
      write: (chunk) => {
        this.#written(chunk);
        return stdin.write(chunk);
      },
      close: () => stdin.close(),
      abort: (reason) => stdin.abort(reason),
    });
    this.client = new AgentClient({ readable, writable }, { exited: child.exited });
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
    this.#in += this.#inDecoder.decode(chunk, { stream: true });
    for (let lf = this.#in.indexOf("\n"); lf !== -1; lf = this.#in.indexOf("\n")) {
      const request = JSON.parse(this.#in.slice(0, lf)) as WireRequest;
      this.#in = this.#in.slice(lf + 1);
      this.requests.push(request);
      this.log.push(`> ${request.id} ${request.method}`);
      this.onRequest(request);
    }
  }

  #read(chunk: Uint8Array): void {
    this.#out += this.#outDecoder.decode(chunk, { stream: true });
    for (let lf = this.#out.indexOf("\n"); lf !== -1; lf = this.#out.indexOf("\n")) {
      const frame = JSON.parse(this.#out.slice(0, lf)) as WireFrame;
      this.#out = this.#out.slice(lf + 1);
      this.frames.push(frame);
      if (frame.type === "response") this.log.push(`< ${frame.id}`);
      this.onFrame(frame);
    }
  }
}
