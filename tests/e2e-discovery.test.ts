/**
 * Session discovery end to end: sessions made durable through real turns of
 * real children (the Node bundle and the Deno entry over real pipes, a
 * loopback fake provider), listed by a second child of each runtime.
 */

import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-discovery-"));
after(() => rmSync(root, { recursive: true, force: true }));

const CAPABILITIES = ["session.create", "session.open", "session.list", "session.discover", "turn.start", "status", "shutdown"];

type Entry = { session_id: string; title: string | null; updated_at: string | null; eligibility: string; notices: string[] };
type Page = { revision: string; sessions: Entry[]; next_cursor: string | null; complete: boolean; notices: string[] };

function store(home: string, id: string, records: SessionRecord[], mode = 0o600): void {
  writeFileSync(join(home, "sessions", `${id}.jsonl`), records.map((record) => new TextDecoder().decode(encodeRecord(record)!)).join(""), { mode });
  chmodSync(join(home, "sessions", `${id}.jsonl`), mode);
}

/** Every page of a listing with `limit` 1. */
async function listAll(client: WireClient): Promise<{ entries: Entry[]; pages: Page[] }> {
  const pages = [await client.ok("session.list", { limit: 1 }) as unknown as Page];
  while (pages.at(-1)!.next_cursor !== null) {
    const last = pages.at(-1)!;
    pages.push(await client.ok("session.list", { revision: last.revision, cursor: last.next_cursor, limit: 1 }) as unknown as Page);
  }
  return { entries: pages.flatMap((page) => page.sessions), pages };
}

type DiscoverPage = Omit<Page, "sessions"> & { sessions: (Entry & { provisional: boolean })[]; phase: string };

/** Every page of a `session.discover` pass with `limit` 1. */
async function discoverAll(client: WireClient): Promise<DiscoverPage[]> {
  const pages = [await client.ok("session.discover", { limit: 1 }) as unknown as DiscoverPage];
  while (pages.at(-1)!.next_cursor !== null) {
    const last = pages.at(-1)!;
    pages.push(await client.ok("session.discover", { revision: last.revision, cursor: last.next_cursor, limit: 1 }) as unknown as DiscoverPage);
  }
  return pages;
}

describe("session.list across real children", () => {
  for (const first of launchers()) {
    for (const second of launchers()) {
      it(`${first.name} makes sessions durable through turns; ${second.name} lists, pages and reopens them`, async () => {
        const provider = await startFakeProvider();
        const ws = workspace(root, `${first.name}-${second.name}`, provider);
        const clients: WireClient[] = [];
        try {
          const writer = new WireClient(first, ws.cwd, ws.env);
          clients.push(writer);
          await writer.ok("initialize", { required_capabilities: CAPABILITIES });
          const ids: string[] = [];
          for (const prompt of ["First question", "Second question"]) {
            const { session_id } = await writer.ok("session.create") as { session_id: string };
            provider.enqueue(reply("openai-chat", { text: ["An answer."] }));
            const { run_id } = await writer.ok("turn.start", { session_id, prompt }) as { run_id: string };
            await writer.runEvents(run_id);
            ids.push(session_id);
          }
          const lazy = await writer.ok("session.create") as { session_id: string };
          // Another workspace's session, a legacy one, and three that are unusable.
          const at = "2026-02-01T00:00:00.000Z";
          store(ws.home, "elsewhere", [{ v: 1, type: "session", session_id: "elsewhere", at, created_at: at, cwd: root }]);
          store(ws.home, "legacy", [{ v: 1, type: "session", session_id: "legacy", at, created_at: at }, { v: 1, type: "session_title", session_id: "legacy", at, title: "Old work" }]);
          store(ws.home, "broken", [{ v: 1, type: "session", session_id: "broken", at, created_at: at, cwd: ws.cwd }], 0o600);
          writeFileSync(join(ws.home, "sessions", "broken.jsonl"), "{\"v\":1,\"oops\"\n", { flag: "a" });
          store(ws.home, "shared", [{ v: 1, type: "session", session_id: "shared", at, created_at: at, cwd: ws.cwd }], 0o666);
          symlinkSync(join(ws.home, "sessions", `${ids[0]}.jsonl`), join(ws.home, "sessions", "link.jsonl"));

          // The writer is attached to a lazy handle now: it holds no lease of either durable session.
          const reader = new WireClient(second, ws.cwd, ws.env);
          clients.push(reader);
          await reader.ok("initialize", { required_capabilities: CAPABILITIES });
          const { entries, pages } = await listAll(reader);
          assert.deepEqual(entries.map((entry) => entry.session_id), [...ids, "legacy"].sort(), "ascending ids; no other workspace, no lazy handle, nothing unusable");
          assert.ok(!entries.some((entry) => entry.session_id === lazy.session_id));
          assert.deepEqual(pages.map((page) => page.complete), pages.map((_, index) => index === pages.length - 1));
          for (const page of pages) assert.deepEqual(page.notices, ["sessions_omitted_invalid"]);
          // session.discover over the same directory: the walk, then the verify walk, each yielding the listing's entries.
          const passes = await discoverAll(reader);
          for (const [phase, provisional] of [["walk", true], ["verify", false]] as const) {
            const phased = passes.filter((page) => page.phase === phase).flatMap((page) => page.sessions);
            assert.deepEqual(phased.map(({ provisional: _, ...entry }) => entry), entries, phase);
            assert.ok(phased.every((entry) => entry.provisional === provisional), phase);
          }
          assert.deepEqual(passes.map((page) => page.complete), passes.map((_, index) => index === passes.length - 1));
          const legacy = entries.find((entry) => entry.session_id === "legacy")!;
          assert.deepEqual([legacy.eligibility, legacy.notices, legacy.title, legacy.updated_at], ["cwd_unverified", ["cwd_unverified"], "Old work", at]);
          for (const id of ids) {
            const entry = entries.find((candidate) => candidate.session_id === id)!;
            assert.equal(entry.title, null, "a prompt is never a title");
            assert.match(entry.updated_at!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
            assert.equal(entry.eligibility, "available");
          }

          // A real other child holds ids[0]: busy to the reader, available to the holder itself.
          await writer.ok("session.open", { session_id: ids[0] });
          const busy = (await reader.ok("session.list") as unknown as Page).sessions.find((entry) => entry.session_id === ids[0])!;
          assert.equal(busy.eligibility, "busy");
          const own = (await writer.ok("session.list") as unknown as Page).sessions.find((entry) => entry.session_id === ids[0])!;
          assert.equal(own.eligibility, "available");
          assert.equal((await reader.call("session.open", { session_id: ids[0] })).error?.code, "session_busy");
          await writer.shutdown();
          const reopened = await reader.ok("session.open", { session_id: ids[0] });
          assert.equal(reopened.durable, true);
          const after = (await reader.ok("session.list") as unknown as Page).sessions.find((entry) => entry.session_id === ids[0])!;
          assert.equal(after.eligibility, "available", "the reader's own attachment");
          assert.equal((await reader.shutdown()).code, 0);
        } finally {
          for (const client of clients) client.abandon();
          await provider.close();
        }
      });
    }
  }
});
