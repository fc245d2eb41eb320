/**
 * Byte streams of the runtime contract: the child's own stdio and a
 * subprocess's pipes. Pull-based reads keep one bounded batch in memory.
 *
 * @module
 */

/**
 * What a standard stream is connected to. `socketpair` is an unnamed AF_UNIX
 * socket, as Node, Electron and libuv parents create for child stdio; `socket`
 * is any other socket.
 */
export type StdioKind = "fifo" | "socketpair" | "socket" | "tty" | "file" | "device" | "other";

/** A pull-based byte source: each read yields the next batch, or `null` at end of input. */
export interface ByteReader {
  /**
   * Resolves with at most {@link READ_BATCH_BYTES} bytes, or `null` at EOF.
   * The bytes stay valid until the next call, no longer: adapters may reuse
   * one buffer. Only one read may be outstanding. Rejects with a
   * {@link RuntimeError}.
   */
  read(): Promise<Uint8Array | null>;
  /** Stops reading and releases the handle; a pending read resolves `null`. */
  close(): void;
}

/** Largest batch a {@link ByteReader} yields. */
export const READ_BATCH_BYTES = 4096;

/** An asynchronous byte sink that never blocks the event loop. */
export interface ByteWriter {
  /**
   * Resolves once every byte has been handed to the operating system; rejects
   * with a {@link RuntimeError} (`broken_pipe`, `closed`, `io`) otherwise. The
   * caller issues one write at a time, unless {@link heldBytes} reports 0:
   * then the earlier writes are with the OS and the next may follow at once,
   * their bytes leaving in call order.
   */
  write(bytes: Uint8Array): Promise<void>;
  /**
   * Bytes of unsettled writes this adapter still holds because the OS has
   * not accepted them, read synchronously (as Node's `writableLength`): a
   * write the pipe took whole leaves 0 here at once, although its promise
   * settles a tick later. The held bytes are always the newest ones.
   * Absent, or `Infinity`, when the adapter cannot tell; callers then count
   * every unsettled write as held.
   */
  heldBytes?(): number;
  /**
   * Set by adapters whose every write call is costly whatever its size:
   * how long a fast stream of best-effort frames (`message.delta`) may be
   * held so that it leaves as fewer, fuller frames and writes. Absent or 0:
   * nothing is held.
   */
  readonly batchMs?: number;
}
