import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { startStoreServe, startSupportBotProcess, type ChildService } from './child-service';
import { supportRuleLlm } from './support-rule-llm';

/** The scripted LLM (here), `agl store serve` and the support service (child processes), wired together. */
export interface SupportStack {
  /** The store's SQLite file. */
  db: string;
  llm: OpenAiTestServer;
  /** The running store; replace it after a restart so that {@link SupportStack.close} stops the new one. */
  store: ChildService;
  bot: ChildService;
  /** Stops all three (and removes the temporary folder when the stack made one). */
  close(): Promise<void>;
}

/**
 * Starts the whole loop offline: `startOpenAiTestServer(supportRuleLlm)` with `llmLatencyMs` per reply, `agl store
 * serve` on `db` (default: a fresh temporary file) and the service as `npm start` runs it, recording into that store,
 * with `botEnv` on top (e.g. `AGL_SAMPLE_RATE`).
 */
export async function startSupportStack(
  options: { db?: string; llmLatencyMs?: number; botEnv?: NodeJS.ProcessEnv } = {},
): Promise<SupportStack> {
  const dir = options.db ? null : mkdtempSync(join(tmpdir(), 'agl-support-bot-'));
  const db = options.db ?? join(dir!, 'store.sqlite');
  const llm = await startOpenAiTestServer({ respond: supportRuleLlm, latencyMs: options.llmLatencyMs ?? 0 });
  const store = await startStoreServe({ db });
  const bot = await startSupportBotProcess({
    OPENAI_BASE_URL: llm.baseURL,
    AGL_STORE_URL: store.url,
    ...options.botEnv,
  });
  const stack: SupportStack = {
    db,
    llm,
    store,
    bot,
    close: async () => {
      await stack.bot.stop();
      await stack.store.stop();
      await stack.llm.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}
