import {
  startFineTuningTestServer,
  type FineTuningTestServer,
  type FineTuningTestServerOptions,
} from './fine-tuning-test-server/index';
import { startOpenAiTestServer, type OpenAiTestServer, type OpenAiTestServerOptions } from './openai-test-server/index';

/** A fine-tuning test server and the OpenAI test server that answers as the base and the tuned models. */
export interface FineTuningServers {
  ft: FineTuningTestServer;
  llm: OpenAiTestServer;
  /** Closes both servers. */
  close(): Promise<void>;
}

/**
 * Starts the two servers a hosted fine-tuning loop talks to: `ft` (files, jobs) and `llm` (chat completions).
 *
 * @example
 * const { ft, llm, close } = await startFineTuningServers({ fineTuning: { advance: 'on-poll' } });
 */
export async function startFineTuningServers(
  options: { fineTuning?: FineTuningTestServerOptions; llm?: OpenAiTestServerOptions } = {},
): Promise<FineTuningServers> {
  const ft = await startFineTuningTestServer(options.fineTuning);
  const llm = await startOpenAiTestServer(options.llm).catch(async (error: unknown) => {
    await ft.close();
    throw error;
  });
  return {
    ft,
    llm,
    close: async () => {
      await ft.close();
      await llm.close();
    },
  };
}
