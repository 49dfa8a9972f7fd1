import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { ChatTemplateError } from './chat-template-error';
import type {
  ChatMessage,
  ParsedAssistant,
  RenderedPrompt,
  RenderOptions,
  SupervisedExample,
  ToolCallFormat,
} from './chat-types';
import { renderSupervisedExamples, type SupervisedOptions } from './supervised-render';
import type { TokenizerFiles } from './tokenizer-files';
import { parseAssistantOutput } from './tool-call-parser';

/** End-of-turn and end-of-text tokens that stop sampling when the vocabulary has them (besides `eos_token`). */
const END_TOKENS = ['<|im_end|>', '<|eot_id|>', '<|eom_id|>', '<|endoftext|>', '<|end_of_text|>', '<end_of_turn>'];

/** A special token in `tokenizer_config.json`: a string, or an AddedToken object with `content`. */
function tokenText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { content?: unknown }).content === 'string')
    return (value as { content: string }).content;
  return null;
}

/** `chat_template` as a string (some configs hold a list of named templates; `default` wins). */
function templateText(config: Record<string, unknown>, source: string): string {
  const raw = config.chat_template;
  if (typeof raw === 'string') return raw;
  if (Array.isArray(raw)) {
    const named = raw as Array<{ name?: string; template?: string }>;
    const pick = named.find((t) => t.name === 'default') ?? named[0];
    if (pick && typeof pick.template === 'string') return pick.template;
  }
  throw new ChatTemplateError(
    `Tokenizer "${source}" has no chat_template in tokenizer_config.json (a base model's config often has none). Pass --tokenizer with the instruct model's tokenizer files.`,
  );
}

function contentText(content: ChatMessage['content']): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/**
 * A model's tokenizer and chat template: renders OpenAI-style messages with the model's own Jinja template, encodes
 * them to the exact token ids a sampler gets, and parses sampled output back into an assistant message.
 *
 * @example
 * const tok = await tokenizerForModel('Qwen/Qwen3-8B');
 * const { ids } = tok.renderPrompt(messages, { tools });
 * const reply = tok.parseOutput(sampledIds).message;
 */
export class ChatTokenizer {
  /** Where the tokenizer came from (directory, package or `hf:` id). */
  readonly source: string;
  /** The template's `eos_token` (`<|im_end|>` for Qwen3 instruct, `<|eot_id|>` for Llama 3.x instruct). */
  readonly eosToken: string | null;
  /** The template's `bos_token`, if any. */
  readonly bosToken: string | null;
  /** Token texts that end a turn; sampling stops on any of them. */
  readonly stopTokens: readonly string[];
  /** Their ids, in the same order: the `stop` list a sampler gets. */
  readonly stopTokenIds: readonly number[];
  /** How the model writes tool calls, from its template. */
  readonly toolCallFormat: ToolCallFormat;
  readonly #tokenizer: Tokenizer;
  readonly #template: Template;
  readonly #templateText: string;
  readonly #argumentsAsText: boolean;

  private constructor(files: TokenizerFiles) {
    this.source = files.source;
    this.#templateText = templateText(files.tokenizerConfig, files.source);
    try {
      this.#template = new Template(this.#templateText);
    } catch (err) {
      throw new ChatTemplateError(
        `The chat template of tokenizer "${files.source}" does not parse: ${(err as Error).message}.`,
        { cause: err },
      );
    }
    this.#tokenizer = new Tokenizer(files.tokenizerJson, files.tokenizerConfig);
    this.eosToken = tokenText(files.tokenizerConfig.eos_token);
    this.bosToken = tokenText(files.tokenizerConfig.bos_token);
    const stops: string[] = [];
    for (const text of [this.eosToken, ...END_TOKENS]) {
      if (text === null || stops.includes(text)) continue;
      // Only end tokens the template itself writes (plus eos) stop a turn.
      if (text !== this.eosToken && !this.#templateText.includes(text)) continue;
      if (this.#tokenizer.token_to_id(text) !== undefined) stops.push(text);
    }
    this.stopTokens = stops;
    this.stopTokenIds = stops.map((t) => this.#tokenizer.token_to_id(t) as number);
    const t = this.#templateText;
    this.toolCallFormat = t.includes('<|call|>')
      ? 'agl-tiny'
      : t.includes('<tool_call>')
        ? 'hermes'
        : t.includes('<|python_tag|>') || (t.includes('"parameters"') && t.includes('<|start_header_id|>'))
          ? 'llama3-json'
          : t.includes('tool_calls')
            ? 'hermes'
            : 'none';
    this.#argumentsAsText = /arguments\s+is\s+string/.test(t);
  }

  /** A tokenizer from files read with `loadTokenizerFiles`. */
  static fromFiles(files: TokenizerFiles): ChatTokenizer {
    return new ChatTokenizer(files);
  }

  /** Token ids of `text`, adding no special tokens (rendered templates already hold them). */
  encode(text: string): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** Text of `ids`, special tokens kept. */
  decode(ids: readonly number[]): string {
    return this.#tokenizer.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  /** The id of one token text, if the vocabulary has it. */
  tokenId(token: string): number | undefined {
    return this.#tokenizer.token_to_id(token);
  }

  /** Whether the template renders tool definitions and tool calls at all. */
  get supportsTools(): boolean {
    return this.#templateText.includes('tools') && this.#templateText.includes('tool_calls');
  }

  /**
   * The template's text for `messages`; with `addGenerationPrompt`, ending where the assistant's reply begins.
   * Throws `ChatTemplateError` for tools (or tool calls) the template cannot show the model.
   */
  renderText(
    messages: readonly ChatMessage[],
    options: RenderOptions & { addGenerationPrompt?: boolean } = {},
  ): string {
    const usesTools =
      (options.tools?.length ?? 0) > 0 || messages.some((m) => m.role === 'tool' || (m.tool_calls?.length ?? 0) > 0);
    if (usesTools && !this.supportsTools) {
      throw new ChatTemplateError(
        `The chat template of tokenizer "${this.source}" does not render tools or tool calls, so the model would never see them. Pass --tokenizer with the instruct model's tokenizer files (a template that handles "tools" and "tool_calls").`,
      );
    }
    const context: Record<string, unknown> = {
      ...options.templateKwargs,
      messages: messages.map((m) => this.#templateMessage(m)),
      add_generation_prompt: options.addGenerationPrompt === true,
      bos_token: this.bosToken ?? '',
      eos_token: this.eosToken ?? '',
    };
    if (options.tools && options.tools.length > 0) context.tools = options.tools;
    try {
      return this.#template.render(context);
    } catch (err) {
      throw new ChatTemplateError(
        `The chat template of tokenizer "${this.source}" failed on these ${messages.length} messages: ${(err as Error).message}.`,
        { cause: err },
      );
    }
  }

  /** The prompt a sampler gets: the conversation with the generation prompt, and its token ids. */
  renderPrompt(messages: readonly ChatMessage[], options: RenderOptions = {}): RenderedPrompt {
    const text = this.renderText(messages, { ...options, addGenerationPrompt: true });
    return { text, ids: this.encode(text) };
  }

  /**
   * A whole conversation as one supervised example: the template's text of every message, weight 1 on each assistant
   * reply (its end-of-turn token included) and 0 on the rest. Throws `ChatTemplateError` when the template renders an
   * earlier turn differently once later turns follow (Qwen3 drops old reasoning); use
   * {@link renderSupervisedExamples} then, which splits such conversations.
   */
  renderSupervised(messages: readonly ChatMessage[], options: SupervisedOptions = {}): SupervisedExample {
    const examples = renderSupervisedExamples(this, messages, options);
    if (examples.length !== 1) {
      throw new ChatTemplateError(
        `The chat template of tokenizer "${this.source}" does not render this conversation's assistant turns as one sequence (${examples.length} pieces); use renderSupervisedExamples.`,
      );
    }
    return examples[0] as SupervisedExample;
  }

  /** Supervised examples of a conversation: one when the template allows, else one per assistant turn that needs it. */
  renderSupervisedExamples(messages: readonly ChatMessage[], options: SupervisedOptions = {}): SupervisedExample[] {
    return renderSupervisedExamples(this, messages, options);
  }

  /**
   * Sampled ids back to an assistant message: a trailing stop token is dropped, the rest decoded, then reasoning and
   * tool calls are parsed (see `parseAssistantOutput`). `finishReason` is `length` when no stop token ended it.
   */
  parseOutput(
    ids: readonly number[],
    options: { callId?: (index: number) => string } = {},
  ): ParsedAssistant & {
    text: string;
  } {
    const last = ids[ids.length - 1];
    const stopped = last !== undefined && this.stopTokenIds.includes(last);
    const text = this.decode(stopped ? ids.slice(0, -1) : ids);
    return { ...parseAssistantOutput(text, { format: this.toolCallFormat, stopped, ...options }), text };
  }

  /** A message as the template expects it: text content, and tool-call arguments as text or an object. */
  #templateMessage(m: ChatMessage): Record<string, unknown> {
    const out: Record<string, unknown> = { ...m, content: contentText(m.content) };
    if (m.tool_calls) {
      out.tool_calls = m.tool_calls.map((call) => {
        let args: unknown = call.function.arguments;
        if (!this.#argumentsAsText && typeof args === 'string') {
          try {
            args = JSON.parse(args);
          } catch {
            // not JSON: the template gets the text
          }
        }
        return { ...call, function: { ...call.function, arguments: args } };
      });
    }
    if (m.reasoning_content === null || m.reasoning_content === undefined) delete out.reasoning_content;
    return out;
  }
}
