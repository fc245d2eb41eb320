/**
 * Discovery on real directories, through the Node adapter and, under Deno,
 * the Deno adapter: what the memory filesystem can only imitate (file
 * modes with type bits, FIFOs that block whoever opens them, symlinked
 * roots, canonical cwds). `session.list` and `session.discover` must agree.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import type { Runtime } from "../src/host/runtime.ts";
import { SessionDiscovery } from "../src/store/discovery/discovery.ts";
import { SessionListing } from "../src/store/discovery/listing.ts";
import { deno, scratch } from "./support/fs-adapters.ts";
import { discoverAll } from "./support/discover.ts";
import { guarded } from "./support/hang-guard.ts";
import { storedRecords, storedText } from "./support/listing.ts";

const runtimes: [string, () => Runtime][] = [["node", createNodeRuntime], ...(deno === null ? [] : [["deno", () => deno!.createDenoRuntime()] as [string, () => Runtime]])];
const never = new AbortController().signal;
let counter = 0;

/** A fresh workspace and private sessions directory on disk. */
function arrange(): { cwd: string; sessions: string; home: string } {
  const home = join(realpathSync(scratch), `disk-${counter++}`);
  const cwd = join(home, "project");
  const sessions = join(home, "sessions");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(sessions, { mode: 0o700 });
  chmodSync(sessions, 0o700);
  return { cwd, sessions, home };
}

function write(sessions: string, id: string, cwd: string | null, mode = 0o600): void {
  const path = join(sessions, `${id}.jsonl`);
  writeFileSync(path, storedText(storedRecords(id, { cwd })), { mode });
  chmodSync(path, mode);
}

async function listBoth(runtime: Runtime, sessions: string, cwd: string) {
  const context = { runtime, directory: sessions, cwd, secrets: [], attached: () => null };
  const listed = await guarded(new SessionListing(context).list({}, never), "a listing");
  const discovery = new SessionDiscovery(context);
  const walked = await guarded((async () => {
    const first = await discovery.discover({ limit: 100 }, never);
    return first.ok ? await discoverAll(discovery, 100) : { code: first.code };
  })(), "a discovery pass");
  return { listed, walked };
}

for (const [name, create] of runtimes) {
  describe(`discovery on disk through the ${name} adapter`, () => {
    it("lists the workspace's sessions, omits a FIFO (never opened), a shared file and a symlink, and excludes another workspace", async () => {
      const { cwd, sessions, home } = arrange();
      write(sessions, "here", cwd);
      write(sessions, "legacy", null);
      write(sessions, "shared", cwd, 0o664);
      write(sessions, "elsewhere", join(home, "other"));
      mkdirSync(join(home, "other"));
      symlinkSync(join(sessions, "here.jsonl"), join(sessions, "link.jsonl"));
      assert.equal(spawnSync("mkfifo", [join(sessions, "pipe.jsonl")]).status, 0);
      symlinkSync(cwd, join(home, "alias"));
      write(sessions, "aliased", join(home, "alias"));
      const before = readdirSync(sessions).sort();
      const { listed, walked } = await listBoth(create(), sessions, cwd);
      assert.ok(listed.ok, `listing: ${listed.ok ? "" : listed.code}`);
      const expected = [["aliased", "available"], ["here", "available"], ["legacy", "cwd_unverified"]];
      assert.deepEqual(listed.result.sessions.map((entry) => [entry.session_id, entry.eligibility]), expected);
      assert.deepEqual(listed.result.notices, ["sessions_omitted_invalid"]);
      assert.ok(Array.isArray(walked), JSON.stringify(walked));
      const last = walked.at(-1)!;
      assert.deepEqual(last.sessions.map((entry) => [entry.session_id, entry.eligibility]), expected);
      assert.deepEqual(readdirSync(sessions).sort(), before, "nothing was created or removed");
    });

    it("twelve tiny malformed histories, one of another workspace's, cost what they hold: the valid one is listed", async () => {
      const { cwd, sessions, home } = arrange();
      for (let n = 0; n < 12; n++) writeFileSync(join(sessions, `bad${n}.jsonl`), n === 0 ? storedText(storedRecords("bad0", { cwd: home })) + "x\n" : "x\n", { mode: 0o600 });
      write(sessions, "here", cwd);
      const { listed, walked } = await listBoth(create(), sessions, cwd);
      assert.deepEqual(listed.ok ? [listed.result.sessions.map((entry) => entry.session_id), listed.result.notices] : listed.code, [["here"], ["sessions_omitted_invalid"]]);
      assert.ok(Array.isArray(walked), JSON.stringify(walked));
      assert.deepEqual(walked.at(-1)!.sessions.map((entry) => entry.session_id), ["here"]);
    });

    for (const [unsafe, make] of [
      ["a symlink", (home: string, sessions: string) => {
        const real = join(home, "real");
        mkdirSync(real, { mode: 0o700 });
        chmodSync(real, 0o700);
        symlinkSync(real, sessions);
      }],
      ["group-writable", (_home: string, sessions: string) => {
        mkdirSync(sessions);
        chmodSync(sessions, 0o770);
      }],
    ] as const) {
      it(`a sessions root that is ${unsafe} is discovery_unavailable`, async () => {
        const home = join(realpathSync(scratch), `disk-${counter++}`);
        mkdirSync(home, { recursive: true });
        const sessions = join(home, "sessions");
        make(home, sessions);
        const { listed, walked } = await listBoth(create(), sessions, home);
        assert.deepEqual([listed.ok ? "ok" : listed.code, "code" in walked ? walked.code : "ok"], ["discovery_unavailable", "discovery_unavailable"]);
      });
    }
  });
}
