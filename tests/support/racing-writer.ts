/**
 * Another writer finishing in the middle of a write: for the owner-only
 * files in `MC_HOME` (approvals, MCP tokens) that must never lose a
 * concurrent change.
 *
 * @module
 */

import type { Runtime } from "../../src/host/runtime.ts";

/**
 * `runtime`, except that its first `createExclusive` (a writer's temporary
 * file, made after the writer read the file) runs `interfere` first: another
 * writer replacing the file between this one's read and its rename.
 */
export function interferingOnce(runtime: Runtime, interfere: () => Promise<void>): Runtime {
  let interfered = false;
  return {
    ...runtime,
    fs: {
      ...runtime.fs,
      createExclusive: async (path, bytes, mode) => {
        if (!interfered) {
          interfered = true;
          await interfere();
        }
        await runtime.fs.createExclusive(path, bytes, mode);
      },
    },
  };
}
