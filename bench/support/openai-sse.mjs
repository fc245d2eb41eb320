// The OpenAI chat-completions SSE the benches' loopback fake providers
// speak (the `ollama` endpoint pointed at them): one event per chunk, and
// the closing usage event with `[DONE]`, and the loopback server that
// answers each request with them.
import { createServer } from "node:http";

/** One `chat.completion.chunk` event carrying `delta`, with `finish` as its finish_reason. */
export const sseChunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The last events of every answer: a usage chunk of 10 + 10 tokens, then `[DONE]`. */
export const SSE_USAGE_DONE = `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 10 } })}\n\ndata: [DONE]\n\n`;

/**
 * A loopback HTTP server that reads each request's body whole and answers
 * it as an SSE stream: `answer(body, response, arrived)` writes the events,
 * the status and headers already sent; `arrived` is the request's
 * `performance.now()`. Resolves with the server and its `/v1` base URL.
 */
export async function sseProvider(answer) {
  const server = createServer((request, response) => {
    const arrived = performance.now();
    const parts = [];
    request.on("data", (part) => parts.push(part));
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      answer(Buffer.concat(parts), response, arrived);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, baseUrl: `http://127.0.0.1:${server.address().port}/v1` };
}
