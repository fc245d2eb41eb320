/**
 * The MCP OAuth tokens file (`src/mcp/oauth-tokens.ts`) on the real
 * filesystems of each runtime, changed through the same owner-only update
 * as the approvals file (`src/trust/owner-file-update.ts`): written whole
 * with mode 0600, never rewritten when a change leaves it as it is, and a
 * concurrent change never lost.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { mcpTokensPath, readMcpTokens, type StoredOAuth, updateMcpTokens } from "../src/mcp/oauth-tokens.ts";
import { interferingOnce } from "./support/racing-writer.ts";
import { spawningRuntimes } from "./support/tools.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-tokens-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

const login = (access: string): StoredOAuth => ({
  url: "https://mcp.example/mcp",
  client: { client_id: "client-1" },
  tokens: { access_token: access, token_type: "Bearer", refresh_token: `refresh-${access}` },
});

/** The server names stored in `home`'s tokens file. */
const names = (home: string) => Object.keys(JSON.parse(readFileSync(mcpTokensPath(home), "utf8")).servers);

for (const [name, runtime] of spawningRuntimes()) {
  describe(`${name}: the MCP tokens file on disk`, () => {
    const home = () => join(root, `${name}-home-${counter++}`);

    it("updateMcpTokens() writes the file 0600 and never rewrites it when the change leaves it as it is", async () => {
      const dir = home();
      assert.deepEqual(await updateMcpTokens(runtime, dir, "remote", () => login("access-1")), { ok: true, existed: false });
      assert.equal(statSync(mcpTokensPath(dir)).mode & 0o777, 0o600);
      const before = statSync(mcpTokensPath(dir));
      assert.deepEqual(await updateMcpTokens(runtime, dir, "remote", () => login("access-1")), { ok: true, existed: true });
      assert.equal(statSync(mcpTokensPath(dir)).ino, before.ino, "the same login stored again does not replace the file");
      assert.deepEqual(await updateMcpTokens(runtime, dir, "other", () => null), { ok: true, existed: false });
      assert.equal(statSync(mcpTokensPath(dir)).ino, before.ino, "removing an entry that is not there does not replace the file");
      assert.deepEqual(await updateMcpTokens(runtime, dir, "remote", () => login("access-2")), { ok: true, existed: true });
      assert.notEqual(statSync(mcpTokensPath(dir)).ino, before.ino, "a changed login replaces the file by a rename");
      assert.equal(statSync(mcpTokensPath(dir)).mode & 0o777, 0o600);
      const read = await readMcpTokens(runtime, dir);
      assert.ok(read.ok);
      assert.equal(read.servers.remote?.tokens?.access_token, "access-2");
      assert.deepEqual(readdirSync(dir), ["mcp-tokens.json"]);
    });

    it("updateMcpTokens() applies its change again when another writer replaced the file meanwhile", async () => {
      const dir = home();
      await updateMcpTokens(runtime, dir, "first", () => login("access-first"));
      // Another child storing its refreshed tokens between this one's read and its rename.
      const racing = interferingOnce(runtime, async () => {
        const servers = { first: login("access-first"), other: login("access-other") };
        writeFileSync(join(dir, "other.tmp"), `${JSON.stringify({ v: 1, servers })}\n`, { mode: 0o600 });
        await runtime.fs.rename(join(dir, "other.tmp"), mcpTokensPath(dir));
      });
      assert.deepEqual(await updateMcpTokens(racing, dir, "mine", () => login("access-mine")), { ok: true, existed: false });
      assert.deepEqual(names(dir), ["first", "other", "mine"]);
      assert.deepEqual(readdirSync(dir), ["mcp-tokens.json"], "the abandoned temporary file is gone");
    });

    it("updateMcpTokens() keeps every change when one child stores several servers' refreshed tokens at once", async () => {
      const dir = home();
      await updateMcpTokens(runtime, dir, "first", () => login("access-first"));
      // Startup connects every server concurrently, so servers whose logins expired together refresh together.
      const servers = Array.from({ length: 6 }, (_, index) => `server-${index}`);
      const outcomes = await Promise.all(servers.map((server) => updateMcpTokens(runtime, dir, server, () => login(`access-${server}`))));
      for (const outcome of outcomes) assert.deepEqual(outcome, { ok: true, existed: false });
      assert.deepEqual(names(dir).sort(), ["first", ...servers].sort());
      assert.deepEqual(readdirSync(dir), ["mcp-tokens.json"]);
    });
  });
}
