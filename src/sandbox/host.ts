/**
 * The sandbox host process: what `magi-code sandbox-host` (a hidden
 * subcommand of our own command line, so the Node single executable can
 * host it too) runs. It reads one start frame from stdin, runs the program
 * in its {@link Guest}, writes each tool call as a frame and waits for its
 * result, and writes one done frame; then it exits. It never reads a file
 * or the environment on the guest's behalf, and anything it does not
 * understand ends it with exit code 2 (the child sees the pipe close
 * without a done frame and fails the call).
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { encodeFrame, FrameReader } from "./frames.ts";
import { Guest } from "./guest.ts";
import { FRAME_BYTES } from "./limits.ts";
import { type HostMessage, resultMessage, startMessage } from "./messages.ts";

/** The hidden subcommand that runs {@link sandboxHost}. */
export const SANDBOX_HOST_COMMAND = "sandbox-host";

/** Exit code of a host whose peer broke the protocol or went away. */
const PROTOCOL_EXIT = 2;

/** Runs one program over stdin/stdout frames; resolves with the exit code. */
export async function sandboxHost(runtime: Runtime): Promise<number> {
  const reader = new FrameReader(FRAME_BYTES);
  const queued: Record<string, unknown>[] = [];
  const next = async (): Promise<Record<string, unknown> | null> => {
    while (queued.length === 0) {
      const chunk = await runtime.stdin.read();
      if (chunk === null) return null;
      const pushed = reader.push(chunk);
      if (!pushed.ok) return null;
      queued.push(...pushed.frames);
    }
    return queued.shift()!;
  };
  const send = async (message: HostMessage): Promise<boolean> => {
    const frame = encodeFrame(message as unknown as Record<string, unknown>, FRAME_BYTES);
    if (frame === null) return false;
    await runtime.stdout.write(frame);
    return true;
  };

  const first = await next();
  const start = first === null ? null : startMessage(first);
  if (start === null) return PROTOCOL_EXIT;
  const guest = await Guest.create(start.limits, () => runtime.monotonicNow());
  let done = guest.start(start.source, start.tools);
  let results = 0;
  for (;;) {
    for (const call of guest.takeCalls()) {
      // Arguments too large for a frame: the call fails inside the guest, as any refused call does.
      if (!await send(call)) {
        guest.settle({ type: "result", id: call.id, ok: false, output: "The arguments are too large to send." });
        done = guest.run();
      }
    }
    if (done !== null) {
      await send(done);
      return 0;
    }
    await send({ type: "wait", results });
    const message = await next();
    const result = message === null ? null : resultMessage(message);
    if (result === null || !guest.settle(result)) return PROTOCOL_EXIT;
    results += 1;
    done = guest.run();
  }
}
