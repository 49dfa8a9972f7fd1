import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { APO, type ApoEvent, type ApoOptions, type ApoResult } from '@agl/apo';
import { Trainer } from '@agl/trainer';
import { buildCompanyDatabase } from './company-database';
import { sqlAgent } from './sql-agent';
import { splitQuestions } from './sql-questions';

/** The starting write prompt: deliberately thin. */
export const SEED_PROMPT = 'You write SQLite queries that answer questions about a company database.';

/** Options of {@link runSqlAgentApo}. */
export interface SqlAgentApoOptions {
  /** OpenAI-compatible base URL with `/v1`: the agent, critique and edit models all live there. */
  baseURL: string;
  apiKey?: string;
  agentModel: string;
  gradientModel: string;
  applyEditModel: string;
  /** Where `company.sqlite` and `store.sqlite` go (created when missing). */
  workDir: string;
  nRunners?: number;
  /** APO options that override the example's small defaults. */
  apo?: Partial<ApoOptions>;
  onEvent?: (event: ApoEvent) => void;
}

/** What {@link runSqlAgentApo} returns: APO's result plus where the database and the store are. */
export interface SqlAgentApoResult extends ApoResult {
  dbPath: string;
  storePath: string;
}

/**
 * Build the company database (once), then optimise the SQL agent's write prompt with APO: the seed is scored on the
 * val questions, each round critiques failed train runs, edits the prompt and keeps the best by val execution match.
 * Every rollout, span and reward lands in the embedded SQLite store `<workDir>/store.sqlite`.
 */
export async function runSqlAgentApo(o: SqlAgentApoOptions): Promise<SqlAgentApoResult> {
  const workDir = resolve(o.workDir);
  await mkdir(workDir, { recursive: true });
  const dbPath = join(workDir, 'company.sqlite');
  if (!existsSync(dbPath)) buildCompanyDatabase(dbPath).close();
  const storePath = join(workDir, 'store.sqlite');
  const apo = new APO({
    llm: { baseURL: o.baseURL, apiKey: o.apiKey, maxConcurrency: 4 },
    gradientModel: o.gradientModel,
    applyEditModel: o.applyEditModel,
    beamWidth: 2,
    branchFactor: 2,
    beamRounds: 3,
    gradientBatchSize: 4,
    valBatchSize: 10,
    seed: 1,
    onEvent: o.onEvent,
    ...o.apo,
  });
  const { train, val } = splitQuestions();
  await new Trainer({
    algorithm: apo,
    store: storePath,
    nRunners: o.nRunners ?? 4,
    initialResources: {
      llm: { resourceType: 'llm', endpoint: o.baseURL, model: o.agentModel, apiKey: o.apiKey ?? null },
      system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT },
    },
  }).fit(sqlAgent({ dbPath }) as never, { train, val });
  if (!apo.result) throw new Error('APO finished without a result');
  return { ...apo.result, dbPath, storePath };
}
