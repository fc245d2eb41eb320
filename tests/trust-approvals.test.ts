/**
 * The approvals file (`src/trust/`) on the real filesystems of each runtime:
 * written only whole (atomically) with mode 0600, a concurrent change never
 * lost, an unchanged set never rewritten; read back exactly; the matching
 * rules of kind, name, source and digest.
 */

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Approval, approvalState, MAX_DIGESTS_PER_KEY, withApproval, withoutApprovals } from "../src/trust/approvals.ts";
import { approvalsPath, parseApprovalsText, readApprovals, serializeApprovals } from "../src/trust/approvals-file.ts";
import { updateApprovals } from "../src/trust/approvals-write.ts";
import { interferingOnce } from "./support/racing-writer.ts";
import { spawningRuntimes } from "./support/tools.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-trust-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const live = () => new AbortController().signal;

const approval = (name: string, digest = "a".repeat(64), source = "/h/settings.jsonc"): Approval => ({ kind: "mcp", name, source, digest });

describe("approvals: matching", () => {
  it("approvalState() is approved only on an exact match, changed on another digest, else not approved", () => {
    const stored = [approval("x")];
    assert.equal(approvalState(stored, approval("x")), "approved");
    assert.equal(approvalState(stored, approval("x", "b".repeat(64))), "changed");
    assert.equal(approvalState(stored, approval("x", "a".repeat(64), "/w/.magi-code/settings.jsonc")), "not_approved");
    assert.equal(approvalState(stored, approval("y")), "not_approved");
    assert.equal(approvalState(stored, { ...approval("x"), kind: "hook" }), "not_approved");
  });

  it("withApproval() adds a digest beside those of the same kind, name and source; withoutApprovals() removes them all, only for the given sources", () => {
    const other = approval("x", "c".repeat(64), "/other/.magi-code/settings.jsonc");
    const both = withApproval([approval("x"), other], approval("x", "b".repeat(64)));
    assert.deepEqual(both, [approval("x"), approval("x", "b".repeat(64)), other]);
    assert.equal(approvalState(both, approval("x")), "approved", "approving a second digest keeps the first");
    assert.equal(approvalState(both, approval("x", "b".repeat(64))), "approved");
    assert.equal(approvalState(both, approval("x", "d".repeat(64))), "changed");
    assert.deepEqual(withApproval(both, approval("x")), both, "an approved digest is not added twice");
    assert.deepEqual(withoutApprovals(both, "mcp", "x", ["/h/settings.jsonc"]), [other]);
    assert.deepEqual(withoutApprovals(both, "hook", "x", ["/h/settings.jsonc"]), both);
  });

  it(`withApproval() keeps at most ${MAX_DIGESTS_PER_KEY} digests per kind, name and source, dropping the oldest`, () => {
    const digest = (index: number) => index.toString(16).padStart(64, "0");
    let stored: Approval[] = [approval("y")];
    for (let index = 0; index <= MAX_DIGESTS_PER_KEY; index++) stored = withApproval(stored, approval("x", digest(index)));
    const kept = stored.filter((entry) => entry.name === "x").map((entry) => entry.digest);
    assert.deepEqual(kept, Array.from({ length: MAX_DIGESTS_PER_KEY }, (_, index) => digest(index + 1)));
    assert.ok(stored.some((entry) => entry.name === "y"), "other keys are untouched");
    // Read back from the file, the order (oldest first) survives.
    assert.deepEqual(parseApprovalsText(new TextDecoder().decode(serializeApprovals(stored))), stored);
  });

  it("serializeApprovals() sorts, and parseApprovalsText() reads back exactly what it wrote", () => {
    const set = [approval("zeta"), approval("alpha", "b".repeat(64)), { ...approval("alpha"), kind: "hook" }];
    const text = new TextDecoder().decode(serializeApprovals(set));
    assert.deepEqual(parseApprovalsText(text)?.map((entry) => `${entry.kind}/${entry.name}`), ["hook/alpha", "mcp/alpha", "mcp/zeta"]);
    assert.equal(new TextDecoder().decode(serializeApprovals([])), '{\n  "v": 1,\n  "approvals": []\n}\n');
    assert.deepEqual(parseApprovalsText('{"v":1,"approvals":[]}'), []);
    for (const bad of ["", "[]", '{"v":1}', '{"v":1,"approvals":[],"v":1}', '{"v":1,"approvals":[{"kind":"MCP","name":"x","source":"/s","digest":"' + "a".repeat(64) + '"}]}']) {
      assert.equal(parseApprovalsText(bad), null, bad);
    }
  });
});

for (const [name, runtime] of spawningRuntimes()) {
  describe(`${name}: the approvals file on disk`, () => {
    const home = () => join(root, `${name}-home-${counter++}`);

    it("updateApprovals() creates MC_HOME 0700 and the file 0600, whole, with no temporary file left", async () => {
      const dir = home();
      const result = await updateApprovals(runtime, dir, (current) => withApproval(current, approval("x")));
      assert.deepEqual(result, { ok: true, approvals: [approval("x")], changed: true });
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(statSync(approvalsPath(dir)).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(dir), ["approvals.json"]);
      assert.deepEqual(parseApprovalsText(readFileSync(approvalsPath(dir), "utf8")), [approval("x")]);
      const read = await readApprovals(runtime.fs, approvalsPath(dir), live());
      assert.ok(read.ok);
      assert.deepEqual(read.approvals, [approval("x")]);
    });

    it("updateApprovals() rewrites with mode 0600 and never rewrites an unchanged set", async () => {
      const dir = home();
      await updateApprovals(runtime, dir, (current) => withApproval(current, approval("x")));
      const before = statSync(approvalsPath(dir));
      const same = await updateApprovals(runtime, dir, (current) => withApproval(current, approval("x")));
      assert.deepEqual(same, { ok: true, approvals: [approval("x")], changed: false });
      assert.equal(statSync(approvalsPath(dir)).ino, before.ino, "not replaced");
      const next = await updateApprovals(runtime, dir, (current) => withApproval(current, approval("y")));
      assert.ok(next.ok && next.changed);
      assert.notEqual(statSync(approvalsPath(dir)).ino, before.ino, "replaced by a rename, not written in place");
      assert.equal(statSync(approvalsPath(dir)).mode & 0o777, 0o600);
      const none = await updateApprovals(runtime, home(), () => []);
      assert.deepEqual(none, { ok: true, approvals: [], changed: false }, "revoking nothing creates no file");
    });

    it("updateApprovals() applies its change again when another writer replaced the file meanwhile", async () => {
      const dir = home();
      await updateApprovals(runtime, dir, (current) => withApproval(current, approval("first")));
      // Another `mcp approve` finishing between this one's read and its rename.
      const racing = interferingOnce(runtime, async () => {
        writeFileSync(join(dir, "other.tmp"), serializeApprovals([approval("first"), approval("other")]), { mode: 0o600 });
        await runtime.fs.rename(join(dir, "other.tmp"), approvalsPath(dir));
      });
      const result = await updateApprovals(racing, dir, (current) => withApproval(current, approval("mine")));
      assert.ok(result.ok && result.changed);
      assert.deepEqual(parseApprovalsText(readFileSync(approvalsPath(dir), "utf8"))?.map((entry) => entry.name), ["first", "mine", "other"]);
      assert.deepEqual(readdirSync(dir), ["approvals.json"], "the abandoned temporary file is gone");
    });

    it("updateApprovals() refuses to overwrite a file others may read, and leaves it alone", async () => {
      const dir = home();
      mkdirSync(dir);
      writeFileSync(approvalsPath(dir), serializeApprovals([approval("x")]));
      chmodSync(approvalsPath(dir), 0o644);
      assert.deepEqual(await updateApprovals(runtime, dir, (current) => withApproval(current, approval("y"))), { ok: false, reason: "invalid" });
      assert.deepEqual(parseApprovalsText(readFileSync(approvalsPath(dir), "utf8")), [approval("x")]);
      assert.deepEqual((await readApprovals(runtime.fs, approvalsPath(dir), live())), { ok: false, code: "configuration_invalid" });
    });

    it("readApprovals() reads a missing file as no approvals and an oversized one as configuration_invalid", async () => {
      const dir = home();
      mkdirSync(dir);
      assert.deepEqual(await readApprovals(runtime.fs, approvalsPath(dir), live()), { ok: true, approvals: [], bytes: null });
      writeFileSync(approvalsPath(dir), " ".repeat(1_048_577), { mode: 0o600 });
      assert.deepEqual(await readApprovals(runtime.fs, approvalsPath(dir), live()), { ok: false, code: "configuration_invalid" });
    });
  });
}
