/** One tool call of an assistant message, in OpenAI's chat-completions shape. */
export interface ChatToolCall {
  /** The call's id (`call_…`); tool results answer it with `tool_call_id`. */
  id: string;
  type: 'function';
  function: {
    name: string;
    /** The arguments as JSON text, exactly as the model wrote them where the parser could keep them. */
    arguments: string;
  };
}

/** One OpenAI-style chat message (system, user, assistant with tool calls, or a tool result). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  /** Text; OpenAI content-part arrays are joined to their text parts before rendering. */
  content?: string | null | Array<{ type: string; text?: string }>;
  /** Assistant tool calls. */
  tool_calls?: ChatToolCall[];
  /** The call a tool message answers. */
  tool_call_id?: string;
  /** Tool or participant name. */
  name?: string;
  /** The model's thinking, kept apart from `content` (Qwen3's `<think>` block; vLLM's field name). */
  reasoning_content?: string | null;
}

/** A tool definition, as OpenAI's `tools` list carries it. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** Options of rendering a conversation with a chat template. */
export interface RenderOptions {
  /** Tool definitions the template lists for the model. */
  tools?: readonly ChatTool[] | null;
  /** Extra template variables (`enable_thinking: false` for Qwen3, `date_string` for Llama 3.1). */
  templateKwargs?: Record<string, unknown>;
}

/** A rendered prompt: the template's text and its token ids (`ids` is what a sampler gets). */
export interface RenderedPrompt {
  text: string;
  ids: number[];
}

/** One message's place in a rendered conversation: token positions `[start, end)` in `tokens`. */
export interface MessageSpan {
  /** Index of the message in the conversation. */
  message: number;
  role: string;
  start: number;
  end: number;
}

/**
 * A conversation rendered for supervised training: the token ids, one weight per token (1 on the assistant tokens
 * trained on, the end-of-turn token included; 0 on everything else), and where each assistant message lies.
 */
export interface SupervisedExample {
  tokens: number[];
  weights: number[];
  /** The rendered text that `tokens` encode. */
  text: string;
  /** The trained assistant spans, in order. */
  spans: MessageSpan[];
}

/** How a model writes tool calls, which decides how its output is parsed back. */
export type ToolCallFormat = 'hermes' | 'llama3-json' | 'agl-tiny' | 'none';

/** A model's output turned back into an OpenAI assistant message. */
export interface ParsedAssistant {
  message: ChatMessage & { role: 'assistant'; content: string | null };
  /** `tool_calls` when the output held calls, else `stop` (or `length` when it ended without a stop token). */
  finishReason: 'stop' | 'tool_calls' | 'length';
}
