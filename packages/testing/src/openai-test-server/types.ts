import type { IncomingHttpHeaders } from 'node:http';

/** Which wire API a request came through. */
export type TestLlmApi = 'chat' | 'completion' | 'responses' | 'anthropic';

/** A message normalised from any of the four wire formats. */
export interface TestLlmMessage {
  role: string;
  content: string;
  toolCallId?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** `name` of a legacy `function` result message (or any named message). */
  name?: string;
}

/** A tool the caller offered, normalised. */
export interface TestLlmTool {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** What the scripted `respond` function sees. */
export interface TestLlmRequest {
  api: TestLlmApi;
  model: string;
  messages: TestLlmMessage[];
  tools: TestLlmTool[];
  stream: boolean;
  /** The raw JSON body as received. */
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  path: string;
}

/** A tool call the fake model makes. `arguments` may be an object; it is JSON-encoded on the wire. */
export interface TestLlmToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

/** What the scripted `respond` function returns. */
export interface TestLlmReply {
  content?: string;
  toolCalls?: TestLlmToolCall[];
  /**
   * Defaults to `tool_calls` when tool calls are present (`function_call` when the request offered legacy `functions`),
   * else `stop`.
   */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'function_call';
  /** Extra milliseconds before the response starts (per request). */
  latencyMs?: number;
  /** Answer with an HTTP error instead. */
  error?: { status: number; message: string; type?: string };
}

/** Options of {@link startOpenAiTestServer}. */
export interface OpenAiTestServerOptions {
  /** Scripts the model. Default: {@link defaultRespond} (arithmetic answers, else an echo). */
  respond?: (request: TestLlmRequest) => TestLlmReply | Promise<TestLlmReply>;
  /** Port to bind on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** Delay between streamed chunks in milliseconds (default 0). */
  chunkDelayMs?: number;
  /** Delay before every response in milliseconds (default 0). */
  latencyMs?: number;
  /**
   * How long an idle keep-alive connection stays open, ms (default 1,000, so tests end quickly). undici's `fetch` (the
   * `openai` client's) reuses a connection only when the server announces more than 1 s, so a server that stands in
   * for a hosted API in a benchmark sets more (hosted APIs keep connections for a minute or more).
   */
  keepAliveTimeoutMs?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or `x-api-key: <apiKey>`. */
  apiKey?: string;
  /** Model ids `GET /v1/models` lists (default `['test-model']`). */
  models?: string[];
  /**
   * Keep every request in `requests` (default true). A benchmark that sends hundreds of thousands of calls turns it
   * off, so the server's heap (and its garbage collector's pauses) stays the same size all run long.
   */
  keepRequests?: boolean;
}

/** One request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A running test server. */
export interface OpenAiTestServer {
  /** Base URL without `/v1`, e.g. `http://127.0.0.1:54321`. */
  url: string;
  /** OpenAI-style base URL: `${url}/v1`. */
  baseURL: string;
  /** The requests received so far, in order (always empty with `keepRequests: false`). */
  requests: RecordedRequest[];
  close(): Promise<void>;
}
