/**
 * The connection's input side: read stdin in batches, split it into frames
 * under the input frame bound, hand each complete frame on, and turn EOF,
 * an oversize frame or a read error into the matching close.
 *
 * Reading never waits for output: the spec keeps it enabled "when output
 * stalls", so a `turn.cancel` or `shutdown` is read even while the client
 * does not read. Bounding in-flight requests is the client's part; one that
 * leaves more than 32 frames unwritten overflows the writer (exit 1).
 *
 * @module
 */

import type { ByteReader } from "../host/streams.ts";
import { ErrorCode as Codes } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { ConnectionClose } from "./closing.ts";
import { LineFramer } from "./line-reader.ts";
import type { ProtocolOutput } from "./output.ts";

/**
 * Handles one complete frame (a view valid only during the call); returns
 * `true` when the frame closes the connection as a protocol error.
 */
export type FrameHandler = (bytes: Uint8Array) => boolean;

/** Reads `stdin` until EOF or until `closing` closes the connection; resolves when reading has stopped. */
export async function readLoop(
  stdin: ByteReader,
  output: ProtocolOutput,
  closing: ConnectionClose,
  handle: FrameHandler,
): Promise<void> {
  const framer = new LineFramer(LIMITS.input_frame_bytes);
  const writer = output.writer;
  while (!closing.closing) {
    let chunk: Uint8Array | null;
    try {
      chunk = await stdin.read();
    } catch {
      closing.close("transport");
      return;
    }
    if (closing.closing) return;
    if (chunk === null) {
      if (framer.hasPartial) output.error(null, Codes.incompleteFrame);
      closing.close("eof");
      return;
    }
    framer.feed(chunk);
    // Answers to one read batch leave in one write call.
    writer.cork();
    for (let event = framer.next(); event !== null && !closing.closing; event = framer.next()) {
      if (event.kind === "too_large") {
        output.error(null, Codes.frameTooLarge);
        writer.uncork();
        closing.close("protocol");
        return;
      }
      if (handle(event.bytes)) closing.close("protocol");
    }
    writer.uncork();
  }
}
