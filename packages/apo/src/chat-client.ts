import { ConcurrencyLimit } from '@agl/core';
import { BudgetExceededError, ConnectionError, HttpError, UserError } from '@agl/core/errors';

/** One chat message sent to the critique / edit model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Token and cost accounting of a {@link ChatClient}. */
export interface ChatUsage {
  calls: number;
  retries: number;
  promptTokens: number;
  completionTokens: number;
  /** USD, from {@link ChatClientOptions.pricing}; 0 without pricing. */
  costUsd: number;
}

/** Options of {@link ChatClient}. */
export interface ChatClientOptions {
  /** OpenAI-compatible base URL including `/v1`, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  apiKey?: string;
  /** Concurrent requests at most (default 4). */
  maxConcurrency?: number;
  /** Retries on 429, 5xx and connection errors (default 4). */
  maxRetries?: number;
  /** First backoff in ms, doubled per retry; a `retry-after` header wins (default 500). */
  retryBaseDelayMs?: number;
  /** Per-request timeout in ms (default 120 000). */
  timeoutMs?: number;
  /** Refuse new calls once prompt + completion tokens reach this. */
  maxTotalTokens?: number;
  /** Refuse new calls once the cost reaches this (needs `pricing`). */
  maxCostUsd?: number;
  /** USD per million tokens. */
  pricing?: { inputPerMillion: number; outputPerMillion: number };
  /** Injectable delay (tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** Options of one completion. */
export interface CompleteOptions {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  /** Sent as `response_format`, e.g. `{ type: 'json_schema', json_schema: { name, strict: true, schema } }`. */
  responseFormat?: Record<string, unknown>;
}

const RETRYABLE = (status: number): boolean => status === 429 || status >= 500;

/**
 * A minimal OpenAI-compatible Chat Completions client (any base URL: OpenAI, vLLM, llama.cpp, the AGL gateway) with a
 * concurrency limit, retries with backoff on 429/5xx/connection errors, and a token/cost budget.
 */
export class ChatClient {
  readonly #o: Required<Omit<ChatClientOptions, 'apiKey' | 'maxTotalTokens' | 'maxCostUsd' | 'pricing'>> &
    ChatClientOptions;
  readonly #usage: ChatUsage = { calls: 0, retries: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 };
  readonly #slots: ConcurrencyLimit;

  constructor(options: ChatClientOptions) {
    if (!options?.baseURL)
      throw new UserError('ChatClient needs a baseURL, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1.');
    const maxConcurrency = options.maxConcurrency ?? 4;
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1)
      throw new UserError(`ChatClient maxConcurrency must be an integer ≥ 1; got ${String(options.maxConcurrency)}.`);
    this.#o = {
      maxConcurrency,
      maxRetries: 4,
      retryBaseDelayMs: 500,
      timeoutMs: 120_000,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ...options,
      baseURL: options.baseURL.replace(/\/+$/u, ''),
    };
    this.#slots = new ConcurrencyLimit(maxConcurrency);
  }

  /** A copy of the usage so far. */
  get usage(): ChatUsage {
    return { ...this.#usage };
  }

  /** Throws {@link BudgetExceededError} when a budget is spent. */
  checkBudget(): void {
    const tokens = this.#usage.promptTokens + this.#usage.completionTokens;
    if (this.#o.maxTotalTokens !== undefined && tokens >= this.#o.maxTotalTokens) {
      throw new BudgetExceededError(
        'tokens',
        tokens,
        this.#o.maxTotalTokens,
        `LLM token budget spent: ${tokens} of maxTotalTokens=${this.#o.maxTotalTokens}. Raise maxTotalTokens to continue.`,
      );
    }
    if (this.#o.maxCostUsd !== undefined && this.#usage.costUsd >= this.#o.maxCostUsd) {
      throw new BudgetExceededError(
        'cost',
        this.#usage.costUsd,
        this.#o.maxCostUsd,
        `LLM cost budget spent: $${this.#usage.costUsd.toFixed(4)} of maxCostUsd=${this.#o.maxCostUsd}. Raise maxCostUsd to continue.`,
      );
    }
  }

  /** The first choice's text. */
  async complete(options: CompleteOptions): Promise<string> {
    this.checkBudget();
    await this.#slots.acquire();
    try {
      return await this.#withRetries(options);
    } finally {
      this.#slots.release();
    }
  }

  async #withRetries(options: CompleteOptions): Promise<string> {
    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      const url = `${this.#o.baseURL}/chat/completions`;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.#o.apiKey ? { authorization: `Bearer ${this.#o.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: options.model,
            messages: options.messages,
            temperature: options.temperature,
            max_tokens: options.maxTokens,
            response_format: options.responseFormat,
          }),
          signal: AbortSignal.timeout(this.#o.timeoutMs),
        });
      } catch (err) {
        if (attempt < this.#o.maxRetries) {
          await this.#backoff(attempt, null);
          continue;
        }
        throw new ConnectionError(
          url,
          `Chat completion request to ${url} failed after ${attempt + 1} tries: ${String(err)}. Check baseURL and that the server runs.`,
          { cause: err },
        );
      }
      if (!response.ok) {
        const text = await response.text();
        if (RETRYABLE(response.status) && attempt < this.#o.maxRetries) {
          await this.#backoff(attempt, response.headers.get('retry-after'));
          continue;
        }
        throw new HttpError(
          response.status,
          `Chat completion at ${url} (model ${options.model}) answered HTTP ${response.status}: ${text.slice(0, 500)}`,
        );
      }
      const body = (await response.json()) as {
        choices?: { message?: { content?: string | null } }[];
        usage?: { prompt_tokens?: number; completion_tokens?: number };
      };
      this.#account(body.usage);
      return body.choices?.[0]?.message?.content ?? '';
    }
  }

  #account(usage: { prompt_tokens?: number; completion_tokens?: number } | undefined): void {
    const p = usage?.prompt_tokens ?? 0;
    const c = usage?.completion_tokens ?? 0;
    this.#usage.calls += 1;
    this.#usage.promptTokens += p;
    this.#usage.completionTokens += c;
    if (this.#o.pricing)
      this.#usage.costUsd += (p * this.#o.pricing.inputPerMillion + c * this.#o.pricing.outputPerMillion) / 1e6;
  }

  async #backoff(attempt: number, retryAfter: string | null): Promise<void> {
    this.#usage.retries += 1;
    const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
    await this.#o.sleep(Number.isFinite(seconds) ? seconds * 1000 : this.#o.retryBaseDelayMs * 2 ** attempt);
  }
}
