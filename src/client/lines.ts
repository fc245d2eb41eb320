/**
 * Splits a byte stream into LF-terminated frames, the client half of the
 * wire's framing: split on byte LF before UTF-8 decoding (so a read that cuts
 * a multibyte character changes nothing), at most one partial frame held and
 * every frame bounded, so a server that never sends LF cannot grow memory.
 * Written against `ReadableStream<Uint8Array>` so it runs on Node, Deno and
 * in an Electron renderer or VS Code extension host alike.
 *
 * @module
 */

/** Why {@link readFrames} stopped early: a frame over the bound, or bytes after the last LF at EOF. */
export type FramingProblem = "frame_too_long" | "partial_frame_at_eof";

/**
 * Calls `onFrame` with each frame (LF removed) as it completes, until it
 * returns false; resolves at EOF (or when the caller cancels `reader`) with
 * null, or with the first problem. The caller owns `reader`: cancelling it
 * is how reading is stopped from outside.
 */
export async function readFrames(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  onFrame: (frame: Uint8Array) => boolean,
): Promise<FramingProblem | null> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return heldBytes === 0 ? null : "partial_frame_at_eof";
      let start = 0;
      for (let lf = value.indexOf(0x0a); lf !== -1; lf = value.indexOf(0x0a, start)) {
        const piece = value.subarray(start, lf);
        if (heldBytes + piece.length > maxBytes) return "frame_too_long";
        const frame = heldBytes === 0 ? piece : concat([...held, piece], heldBytes + piece.length);
        held = [];
        heldBytes = 0;
        start = lf + 1;
        if (!onFrame(frame)) return null;
      }
      const rest = value.subarray(start);
      if (heldBytes + rest.length > maxBytes) return "frame_too_long";
      if (rest.length > 0) {
        // Copied: some streams reuse their chunk buffers after read() resolves again.
        held.push(rest.slice());
        heldBytes += rest.length;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
