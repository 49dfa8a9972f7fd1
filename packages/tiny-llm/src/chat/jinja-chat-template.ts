/**
 * The embedded policy's chat template as Jinja, the portable form a Tinker client renders with `@huggingface/jinja`
 * (it is served in `tokenizer_config.json` → `chat_template`). It writes exactly what {@link renderChat} encodes:
 * `<|bos|>[<|tools|>name(param, …)\n…<|end|>]`, then `<|role|>content<|end|>` per message (system and developer as
 * `<|system|>`, tool and function as `<|tool|>`), an assistant's tool calls after its content as
 * `<|call|>name{json args}<|/call|>`, and `<|assistant|>` as the generation prompt. Tool-call arguments is string:
 * they are written as sent (`{}` when blank), never re-serialised.
 */
export const TINY_CHAT_TEMPLATE = [
  '{#- agl-tiny chat template. Tool-call arguments is string: written as sent. -#}',
  '{{- bos_token -}}',
  '{%- if tools -%}<|tools|>',
  '{%- for tool in tools -%}',
  "{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}",
  '{{- tool.function.name -}}(',
  '{%- if tool.function.parameters and tool.function.parameters.properties -%}',
  "{{- tool.function.parameters.properties.keys() | join(', ') -}}",
  '{%- endif -%})',
  '{%- endfor -%}<|end|>',
  '{%- endif -%}',
  '{%- for message in messages -%}',
  "{%- if message.role == 'system' or message.role == 'developer' -%}<|system|>{{ message.content }}<|end|>",
  "{%- elif message.role == 'user' -%}<|user|>{{ message.content }}<|end|>",
  "{%- elif message.role == 'tool' or message.role == 'function' -%}<|tool|>{{ message.content }}<|end|>",
  "{%- elif message.role == 'assistant' -%}<|assistant|>{{ message.content }}",
  '{%- for call in message.tool_calls or [] -%}<|call|>{{ call.function.name }}',
  "{%- if (call.function.arguments | trim) == '' -%}{}{%- else -%}{{ call.function.arguments }}{%- endif -%}",
  '<|/call|>',
  '{%- endfor -%}<|end|>',
  '{%- else -%}',
  "{{- raise_exception('messages[' ~ loop.index0 ~ '].role \"' ~ message.role ~ '\" is not supported; use system, developer, user, assistant or tool.') -}}",
  '{%- endif -%}',
  '{%- endfor -%}',
  '{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}',
].join('\n');
