/**
 * The bounds of one Code Mode program: what the guest may use inside its
 * QuickJS sandbox, what may cross the pipe between the child and the host
 * process, and how long the host may run before the child kills it.
 * Documented in docs/features/code-mode.md.
 *
 * @module
 */

/** The bounds a program runs under. */
export interface SandboxLimits {
  /** The guest heap (QuickJS's allocator limit), in bytes. */
  readonly memoryBytes: number;
  /** The guest's native stack, in bytes: deep recursion throws a RangeError-like error. */
  readonly stackBytes: number;
  /**
   * Guest CPU time, in milliseconds, counted only while the guest runs (never
   * while it waits on a tool); the host interrupts the guest past it.
   */
  readonly cpuMs: number;
  /**
   * The child's own clock: how long the host process may run, in
   * milliseconds, counted from its start and paused only while the host
   * says the guest waits on a tool. Past it the child kills the host, since
   * the guest's interrupt does not fire while QuickJS's collector thrashes
   * near the memory limit.
   */
  readonly wallMs: number;
  /** Most nested tool calls one program may make. */
  readonly maxCalls: number;
  /** Most `console.log` text kept, in UTF-8 bytes; the rest is counted and dropped. */
  readonly logBytes: number;
  /** Longest returned value kept, in UTF-8 bytes (JSON text for anything but a string). */
  readonly resultBytes: number;
}

/**
 * Largest frame either side accepts, in bytes (its 4-byte length prefix
 * excluded): fixed, since the host must bound its first read before it
 * knows any limit. A tool's output (64 KiB) fits even if JSON escapes every
 * character.
 */
export const FRAME_BYTES = 1_048_576;

/** The limits of the `code` tool. */
export const SANDBOX_LIMITS: SandboxLimits = Object.freeze({
  memoryBytes: 32 * 1_048_576,
  stackBytes: 256 * 1024,
  cpuMs: 5_000,
  wallMs: 15_000,
  maxCalls: 64,
  logBytes: 16_384,
  resultBytes: 32_768,
});
