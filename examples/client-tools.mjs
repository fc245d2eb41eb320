#!/usr/bin/env node
// Lending the agent a tool of your own (`client.tools`): an editor would
// answer "which files are open" from its own state; this example answers
// from the file names given on the command line. The agent calls the tool
// like any other (the model sees `client__open_editors`), under the user's
// `client_tools.open_editors` policy (default: ask, so approvals are
// allowed here), and the handler's answer is the tool's result.
// Run from the repository after `npm run build`:
//
//   node examples/client-tools.mjs "Which files are open?" src/cli.ts README.md
import { spawnAgent } from "../dist/runtime/node-client.js";

const [prompt = "Which files are open in my editor?", ...open] = process.argv.slice(2);
const agent = spawnAgent({
  clientTools: [{
    name: "open_editors",
    description: "The files open in the user's editor, one path a line.",
    input_schema: { type: "object", properties: {}, additionalProperties: false },
    handler: () => open.join("\n") || "(no file is open)",
  }],
});
await agent.initialize(["session.create", "turn.start", "approval.answer"]);
const { session_id } = await agent.request("session.create", {});
const run = await agent.startTurn(session_id, prompt, { onApproval: (approval) => void approval.answer(true) });
const finished = await run.finished;
process.stdout.write(`${run.text()}\n`);
process.exitCode = (await agent.shutdown()) === 0 && finished.outcome === "completed" ? 0 : 1;
