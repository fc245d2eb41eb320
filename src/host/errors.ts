/**
 * Failures and releasable resources as the runtime contract states them:
 * adapters normalise platform errors into {@link RuntimeError} codes so the
 * core never inspects `errno` strings.
 *
 * @module
 */

/** Something that can be released once; releasing twice is harmless. */
export interface Disposable {
  dispose(): void;
}

/**
 * Normalised failure codes raised by runtime adapters. The core maps these to
 * wire codes at its edge; they never reach the wire themselves.
 */
export const RuntimeErrorCode = {
  notFound: "not_found",
  exists: "exists",
  permission: "permission",
  notDirectory: "not_directory",
  isDirectory: "is_directory",
  notFile: "not_file",
  symlink: "symlink",
  tooLarge: "too_large",
  brokenPipe: "broken_pipe",
  closed: "closed",
  io: "io",
} as const;

/** One of {@link RuntimeErrorCode}'s values. */
export type RuntimeErrorCode = typeof RuntimeErrorCode[keyof typeof RuntimeErrorCode];

/** A platform failure, reduced to a code. The message never carries a path. */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;

  /** Creates an error with `code`; `detail` is a fixed, path-free phrase. */
  constructor(code: RuntimeErrorCode, detail = "") {
    super(detail === "" ? `Runtime operation failed with ${code}` : `${detail} failed with ${code}`);
    this.name = "RuntimeError";
    this.code = code;
  }
}

/** Returns whether `error` is a {@link RuntimeError} carrying `code`. */
export function isRuntimeError(error: unknown, code?: RuntimeErrorCode): error is RuntimeError {
  return error instanceof RuntimeError && (code === undefined || error.code === code);
}
