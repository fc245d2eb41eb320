// The OpenAI chat-completions SSE the benches' loopback fake providers
// speak (the `ollama` endpoint pointed at them): one event per chunk, and
// the closing usage event with `[DONE]`.

/** One `chat.completion.chunk` event carrying `delta`, with `finish` as its finish_reason. */
export const sseChunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The last events of every answer: a usage chunk of 10 + 10 tokens, then `[DONE]`. */
export const SSE_USAGE_DONE = `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 10 } })}\n\ndata: [DONE]\n\n`;
