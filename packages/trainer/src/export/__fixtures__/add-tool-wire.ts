// The OpenAI wire form (snake_case) of the seeded tool loop's middle turns: the assistant's `add` call (2 + 3) and the
// tool's answer, as exports write them.

/** The assistant turn that calls `add` with `{"a":2,"b":3}` (no text content). */
export const ADD_TOOL_CALL_WIRE = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
} as const;

/** The tool turn answering that call with `5`. */
export const ADD_TOOL_RESULT_WIRE = { role: 'tool', content: '5', tool_call_id: 'call_1' } as const;

/** The whole loop as written: system and user messages, the `add` call, its result, and the answer `5`. */
export function addToolLoopWire(system: string, user: string): unknown[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
    ADD_TOOL_CALL_WIRE,
    ADD_TOOL_RESULT_WIRE,
    { role: 'assistant', content: '5' },
  ];
}
