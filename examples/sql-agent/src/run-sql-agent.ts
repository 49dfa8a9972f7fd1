import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { optimizePrompt, type ApoResult, type OptimizePromptSetup } from '@agl/apo';
import { buildCompanyDatabase } from './company-database';
import { sqlAgent } from './sql-agent';
import { splitQuestions } from './sql-questions';

/** The starting write prompt: deliberately thin. */
export const SEED_PROMPT = 'You write SQLite queries that answer questions about a company database.';

/** Options of {@link runSqlAgentApo}: the endpoint and models, and where the database and the store go. */
export interface SqlAgentApoOptions extends Omit<OptimizePromptSetup, 'store'> {
  /** Where `company.sqlite` and `store.sqlite` go (created when missing). */
  workDir: string;
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
  const result = await optimizePrompt({
    ...o,
    store: storePath,
    apo: { beamWidth: 2, branchFactor: 2, beamRounds: 3, gradientBatchSize: 4, valBatchSize: 10, seed: 1, ...o.apo },
    agent: sqlAgent({ dbPath }),
    ...splitQuestions(),
    seedPrompt: SEED_PROMPT,
  });
  return { ...result, dbPath, storePath };
}
