#!/usr/bin/env node
// A minimal client that spawns `magi-code serve --stdio` the way an editor
// would, creates a session, then reopens a stored one and pages its whole
// history. Run from the repository after `npm run build`:
//
//   node examples/session-demo.mjs [session-id]
//
// With a session id, that stored session is opened (seed one with
// scripts/seed-session.mjs); without, only the lazy create is shown.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../dist/magi-code.cjs", import.meta.url));
const child = spawn(process.execPath, [bin, "serve", "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
const pending = new Map();
createInterface({ input: child.stdout }).on("line", (line) => {
  const frame = JSON.parse(line);
  if (frame.type === "response") pending.get(frame.id)?.(frame);
});

let next = 0;
/** Sends one request and resolves with its result, or throws its error code. */
function call(method, params = {}) {
  const id = `r${++next}`;
  child.stdin.write(`${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`);
  return new Promise((resolve, reject) => {
    pending.set(id, (frame) => (frame.error ? reject(new Error(`${method}: ${frame.error.code}`)) : resolve(frame.result)));
  });
}

try {
  const init = await call("initialize", { required_capabilities: ["session.create", "session.open", "history.page"] });
  console.log(`ready: ${init.status.provider} / ${init.status.model}`);

  const created = await call("session.create");
  console.log(`created ${created.session_id} (durable: ${created.durable}; it becomes durable with its first turn)`);

  const saved = process.argv[2];
  if (saved !== undefined) {
    const opened = await call("session.open", { session_id: saved });
    console.log(`opened ${saved} at revision ${opened.revision}${opened.notices.length ? ` (${opened.notices.join(", ")})` : ""}`);
    let cursor = null;
    const texts = new Map();
    for (;;) {
      const page = await call("history.page", { session_id: saved, revision: opened.revision, cursor });
      for (const entry of page.entries) {
        // Parts of one message arrive in order; join them before showing it.
        texts.set(entry.message_id, { kind: entry.kind, text: (texts.get(entry.message_id)?.text ?? "") + entry.text });
      }
      if (page.next_cursor === null) {
        for (const { kind, text } of texts.values()) console.log(`[${kind}] ${text.slice(0, 100).replace(/\s+/g, " ")}`);
        console.log(`${texts.size} messages, complete: ${page.complete}`);
        break;
      }
      cursor = page.next_cursor;
    }
  }
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
} finally {
  await call("shutdown").catch(() => {});
}
