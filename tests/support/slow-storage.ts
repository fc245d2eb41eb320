/**
 * Slow storage measured without real time: a memory filesystem whose every
 * open of a history takes a fixed span of a manual clock, and a driver that
 * fires the clock's due zero-delay timers (a scan's pauses) while the work
 * runs, without moving time. For the cooperative deadlines of discovery.
 *
 * @module
 */

import type { ManualClock } from "../../runtime/memory.ts";
import { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import type { ReadHandle } from "../../src/host/runtime.ts";

/** Every open of a file takes `ms` of the manual clock. */
export class SlowStorage extends MemoryFileSystem {
  constructor(readonly clock: ManualClock, readonly ms: number) {
    super({ now: () => clock.wallNow() });
  }
  override openRead(path: string): Promise<ReadHandle> {
    this.clock.advance(this.ms);
    return super.openRead(path);
  }
}

/** Runs `work` while firing the clock's due zero-delay timers, without moving time. */
export async function driven<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let done = false;
  void work.finally(() => (done = true));
  while (!done) {
    clock.advance(0);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return await work;
}
