/**
 * The connection's only way to stdout: the frame encoder (instance id, `seq`,
 * the output frame bound) feeding the ordered writer (pending output at most
 * 32 output frames' worth, each frame accepted by the OS within 2000 ms of
 * enqueue). Everything that answers a
 * request or emits an event goes through here, so no frame can skip
 * numbering or the bounds; breaking a bound is fatal for the connection.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { ErrorCode } from "../protocol/errors.ts";
import { FrameEncoder, type OutputValue } from "../protocol/frames.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import { OrderedWriter } from "./writer.ts";

/** Encodes and writes every output frame of one connection; also the reply port workers answer through. */
export class ProtocolOutput implements WorkerReplies {
  readonly #encoder: FrameEncoder;
  readonly #fatal: () => void;
  /** The ordered writer, for the event sink's room and the closing drain. */
  readonly writer: OrderedWriter;

  /**
   * Creates the output over `runtime`'s stdout. `fatal` runs when the
   * writer fails (overflow, deadline, broken pipe) or a frame cannot be
   * encoded: the connection must close without draining.
   */
  constructor(runtime: Runtime, fatal: () => void) {
    this.#encoder = new FrameEncoder(runtime.randomUUID(), LIMITS.output_frame_bytes);
    this.#fatal = fatal;
    this.writer = new OrderedWriter(
      runtime.stdout,
      runtime,
      // The spec's "32 frames, each at most one output frame", as 32 slots of one output frame's bytes that
      // small frames share (docs/protocol.md, "Output"); writes of at most one output frame keep a half-taken
      // write from counting more than one slot.
      {
        maxPending: LIMITS.pending_output_frames,
        slotBytes: LIMITS.output_frame_bytes,
        writeBytes: LIMITS.output_frame_bytes,
        deadlineMs: LIMITS.output_deadline_ms,
      },
      () => fatal(),
    );
  }

  /** This child's fresh `instance_id`, which also marks the session leases it holds. */
  get instanceId(): string {
    return this.#encoder.instanceId;
  }

  /** Sends a success response to `id`. */
  result(id: string, result: OutputValue): void {
    this.#send(() => this.#encoder.result(id, result));
  }

  /** Sends an error response; `id` is `null` when the request's identity is unrecoverable. */
  error(id: string | null, code: ErrorCode): void {
    this.#send(() => this.#encoder.error(id, code));
  }

  /** Sends one run event. */
  event(name: string, data: OutputValue): void {
    this.#send(() => this.#encoder.event(name, data));
  }

  #send(encode: () => Uint8Array): void {
    let bytes: Uint8Array;
    try {
      bytes = encode();
    } catch {
      // An unencodable frame is a backend bug; dropping it silently would break the contract.
      this.#fatal();
      return;
    }
    this.writer.enqueue(bytes);
  }
}
