/**
 * The few abort-aware async helpers the core needs, written against the
 * runtime's timers so tests can drive them with a fake clock.
 *
 * @module
 */

import type { Disposable } from "../host/runtime.ts";

/** A promise together with the functions that settle it. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A timer source, as the runtime provides one. */
export type SetTimer = (ms: number, callback: () => void) => Disposable;

/**
 * Waits for `promise` at most `ms` milliseconds. Resolves `true` if it settled
 * in time (whether fulfilled or rejected), `false` on timeout; never rejects.
 */
export function settlesWithin(promise: Promise<unknown>, ms: number, setTimer: SetTimer): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimer(ms, () => resolve(false));
    const done = () => {
      timer.dispose();
      resolve(true);
    };
    promise.then(done, done);
  });
}
