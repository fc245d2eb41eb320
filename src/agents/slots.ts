/**
 * The bound on a step's task calls running at once: a waiting room served
 * first come first served, which a cancelled run leaves at once.
 *
 * @module
 */

import { RunStop } from "../runner/run-output.ts";

/** Waiting room for a bounded number of holders, served first come first served. */
export class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  /** Creates `count` slots. */
  constructor(count: number) {
    this.#free = count;
  }

  /** Resolves with the release of a slot once one is free; rejects with a cancellation {@link RunStop} when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<() => void> {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#free++;
    };
    if (signal.aborted) return Promise.reject(new RunStop("cancelled", null));
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        signal.removeEventListener("abort", cancelled);
        resolve(release);
      };
      const cancelled = () => {
        const index = this.#waiting.indexOf(granted);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(new RunStop("cancelled", null));
      };
      signal.addEventListener("abort", cancelled, { once: true });
      this.#waiting.push(granted);
    });
  }
}
