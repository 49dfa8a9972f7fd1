/** A tool call in OpenAI's wire shape. */
export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A chat message in OpenAI's wire shape (the fields the template reads). */
export interface WireChatMessage {
  role: string;
  content?: string | null | Array<{ type?: string; text?: string }>;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** A tool definition in OpenAI's wire shape. */
export interface WireTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: { properties?: Record<string, unknown> } & Record<string, unknown>;
  };
}
