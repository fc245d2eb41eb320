import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { denoBinary, nodeBinary, repoRoot } from "./support/processes.ts";

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-storage-faults-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("the fs adapters under a real short write", () => {
  const commands = {
    node: [nodeBinary(), join(root, "dist", "tests", "support", "short-write.js")],
    deno: [denoBinary(), "run", "--allow-all", "--quiet", join(root, "tests", "support", "short-write.ts")],
  } as const;
  for (const [name, command] of Object.entries(commands)) {
    it(`${name}: append() and createExclusive() reject a write the kernel cut short, never report it written`, () => {
      const dir = mkdtempSync(join(scratch, `${name}-`));
      // `ulimit -f 2` caps files at 2,048 bytes: a 3,000-byte write stores 2,048 and returns that
      // count; the next write is refused (EFBIG, SIGXFSZ ignored so the process lives to see it).
      const shell = `trap '' XFSZ; ulimit -f 2; exec "$@"`;
      const ran = spawnSync("bash", ["-c", shell, "short-write", ...command, dir, "3000"], { encoding: "utf8" });
      assert.equal(ran.status, 0, ran.stderr);
      assert.deepEqual(ran.stdout.trim().split("\n"), ["append rejected 2048", "create rejected 2048"]);
    });
  }
});
