/**
 * Hang guards: every wait a test makes is bounded, so a broken build fails
 * with a description of what it waited for instead of hanging the suite.
 * The bound is deliberately generous and is never a claim about speed: no
 * test asserts how long something took (timings live in `bench/`). Where a
 * test needs time to pass, it uses the runtime's `ManualClock` instead.
 *
 * @module
 */

/** How long any single wait may take before the test fails instead of hanging. */
export const HANG_GUARD_MS = 60_000;

/** Resolves with `promise`, or rejects naming `what` after `ms` (default {@link HANG_GUARD_MS}). */
export function guarded<T>(promise: Promise<T>, what: string, ms = HANG_GUARD_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Gave up waiting for ${what} after ${ms} ms (hang guard)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Polls `predicate` every `intervalMs` until it holds; rejects naming `what`
 * once {@link HANG_GUARD_MS} (or `ms`) passed without it holding.
 */
export async function eventually(predicate: () => boolean, what: string, options: { ms?: number; intervalMs?: number } = {}): Promise<void> {
  const ms = options.ms ?? HANG_GUARD_MS;
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what} after ${ms} ms (hang guard)`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 5));
  }
}
