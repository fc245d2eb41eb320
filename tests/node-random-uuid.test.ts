/**
 * The Node adapter's `randomUUID()` reads 16 bytes of `/dev/urandom` rather
 * than evaluate `node:crypto` at start-up (runtime/node-crypto.ts). Its ids
 * name instances and approvals and carry the OAuth `state`, so they must be
 * version 4 UUIDs that never repeat, and no call may leave a descriptor
 * open, whatever sits at that path. Run in a Node child (the adapter is
 * Node's), under both test runtimes.
 */

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, it } from "node:test";
import { guarded } from "./support/hang-guard.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";

const CALLS = 1000;
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Calls randomUUID() CALLS times; prints the ids and how many descriptors the calls left open. The
 * count starts after a first call, which may load node:crypto (and whatever it keeps open).
 */
const script = (adapter: string) => `
import { readdirSync } from "node:fs";
import { randomUUID } from ${JSON.stringify(adapter)};
const open = () => readdirSync("/proc/self/fd").length;
const ids = [randomUUID()];
const before = open();
for (let call = 1; call < ${CALLS}; call++) ids.push(randomUUID());
// Counted before process.stdout, whose first use opens a descriptor of its own.
const leaked = open() - before;
process.stdout.write(JSON.stringify({ ids, leaked }));
`;

/** Runs the script with `prefix` before node (an `unshare` wrapper, or nothing). */
async function run(command: string, args: readonly string[]): Promise<{ ids: string[]; leaked: number }> {
  const adapter = pathToFileURL(join(repoRoot(), "dist", "runtime", "node-crypto.js")).href;
  const child = spawn(command, [...args, "--input-type=module", "-e", script(adapter)], { stdio: ["ignore", "pipe", "pipe"] });
  const [stdout, stderr] = await guarded(Promise.all([collect(child.stdout), collect(child.stderr)]), "the Node child");
  assert.ok(stdout !== "", `it printed nothing; stderr:\n${stderr}`);
  return JSON.parse(stdout) as { ids: string[]; leaked: number };
}

function assertFresh({ ids, leaked }: { ids: string[]; leaked: number }): void {
  for (const id of ids) assert.match(id, V4);
  assert.equal(new Set(ids).size, CALLS, "an id repeated");
  assert.equal(leaked, 0, "descriptors left open");
}

const scratch = mkdtempSync(join(tmpdir(), "magi-uuid-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

// A user namespace of its own lets an unprivileged test mount over /dev/urandom in the child only.
const canUnshare = process.platform === "linux" && spawnSync("unshare", ["-rm", "true"]).status === 0;

describe("Node runtime randomUUID", () => {
  it(`randomUUID() gives ${CALLS} distinct version 4 UUIDs and leaves no descriptor open`, async () => {
    assertFresh(await run(nodeBinary(), []));
  });

  it("randomUUID() does not repeat when /dev/urandom is a regular file, and leaves no descriptor open", { skip: !canUnshare && "needs unshare -rm (Linux user namespaces)" }, async () => {
    const planted = join(scratch, "urandom");
    writeFileSync(planted, new Uint8Array(64).fill(7));
    const mount = `mount --bind "$1" /dev/urandom && shift && exec "$@"`;
    assertFresh(await run("unshare", ["-rm", "sh", "-c", mount, "sh", planted, nodeBinary()]));
  });
});
