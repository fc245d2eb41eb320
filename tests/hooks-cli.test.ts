/**
 * `magi-code hooks list | approve | revoke` through the real entry points
 * (the Node bundle and the Deno entry) with `MC_HOME` in a temporary
 * directory: ids stable across runs, global hooks needing no approval,
 * approving needing `--yes` without a terminal, the approval bound to the
 * project file in the same approvals file as MCP servers (kind `hook`), a
 * changed hook no longer approved, and `config check` noting what does not
 * run without failing.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Launcher, launchers, runCommand } from "./support/processes.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-hooks-cli-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

function setup(global: unknown, project: unknown) {
  const home = join(root, `home-${counter}`);
  const cwd = join(root, `cwd-${counter++}`);
  mkdirSync(home, { recursive: true });
  mkdirSync(join(cwd, ".magi-code"), { recursive: true });
  writeFileSync(join(home, "settings.jsonc"), JSON.stringify(global));
  writeFileSync(join(cwd, ".magi-code", "settings.jsonc"), JSON.stringify(project));
  const env: NodeJS.ProcessEnv = { ...process.env, MC_HOME: home };
  return { home, cwd, env, global: join(home, "settings.jsonc"), project: join(cwd, ".magi-code", "settings.jsonc"), approvals: join(home, "approvals.json") };
}

type Workspace = ReturnType<typeof setup>;

const run = (launcher: Launcher, ws: Workspace, args: readonly string[]) => runCommand(launcher, ws, args);

const format = { matcher: "edit_file", command: "sh", args: ["-c", "cat >/dev/null"] };
const veto = { command: "sh", args: ["-c", "exit 0"] };

for (const launcher of launchers()) {
  describe(`${launcher.name}: magi-code hooks`, () => {
    // Events are listed in their order (PreToolUse first), each event's global hooks before the project's.
    it("list, approve <id> --yes, revoke <id>: ids stay the same, global hooks need no approval, a changed hook is unapproved", async () => {
      const ws = setup({ hooks: { PostToolUse: [format] } }, { hooks: { PreToolUse: [veto] } });
      const listed = await run(launcher, ws, ["hooks", "list"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.lines.length, 2);
      const [project, global] = listed.lines.map((line) => /^([0-9a-f]{12}): /.exec(line)?.[1]);
      assert.ok(global !== undefined && project !== undefined, listed.stdout);
      assert.match(listed.lines[1]!, /: PostToolUse "edit_file" \["sh","-c","cat >\/dev\/null"\], global, runs \(/);
      assert.match(listed.lines[0]!, new RegExp(`PreToolUse \\["sh","-c","exit 0"\\], project, not approved, does not run: run 'magi-code hooks approve ${project}'`));
      assert.deepEqual((await run(launcher, ws, ["hooks", "list"])).lines, listed.lines, "ids are stable across runs");

      const refused = await run(launcher, ws, ["hooks", "approve", project!]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /stdin is not a terminal/);
      const globalApprove = await run(launcher, ws, ["hooks", "approve", global!, "--yes"]);
      assert.equal(globalApprove.code, 1);
      assert.match(globalApprove.stderr, /global hook: it runs without approval/);

      const approved = await run(launcher, ws, ["hooks", "approve", project!, "--yes"]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, /command +"\/.*\/sh"/);
      assert.equal(statSync(ws.approvals).mode & 0o777, 0o600);
      const stored = JSON.parse(readFileSync(ws.approvals, "utf8")) as { approvals: { kind: string; name: string; source: string }[] };
      assert.deepEqual(stored.approvals.map(({ kind, name, source }) => [kind, name, source]), [["hook", project, ws.project]]);
      assert.match((await run(launcher, ws, ["hooks", "list"])).lines[0]!, /project, approved, runs/);

      writeFileSync(ws.project, JSON.stringify({ hooks: { PreToolUse: [{ ...veto, args: ["-c", "exit 1"] }] } }));
      const changed = await run(launcher, ws, ["hooks", "list"]);
      assert.match(changed.lines[0]!, /project, not approved, does not run/);
      const checked = await run(launcher, ws, ["config", "check"]);
      assert.equal(checked.code, 0, checked.stderr);
      assert.match(checked.stdout, new RegExp(`${ws.project}: \\$\\.hooks\\.PreToolUse\\[0\\]: hook [0-9a-f]{12}: project, not approved, does not run`));

      assert.equal((await run(launcher, ws, ["hooks", "approve", "--all", "--yes"])).code, 0);
      assert.match((await run(launcher, ws, ["hooks", "list"])).lines[0]!, /project, approved, runs/);
      const revoked = await run(launcher, ws, ["hooks", "revoke", project!]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await run(launcher, ws, ["hooks", "revoke", project!])).code, 1, "nothing left to revoke under the old id");
      assert.equal((await run(launcher, ws, ["hooks", "approve"])).code, 2);
    });
  });
}
