import { AglCallbackHandler } from '@agl/langchain';
import type { NamedResources } from '@agl/core';
import { formatPromptTemplate } from '@agl/core';
import type { AgentContext, RolloutFn } from '@agl/trainer';
import { HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { ChatOpenAI } from '@langchain/openai';
import Database from 'better-sqlite3';
import { describeSchema } from './company-database';
import { describeOutcome, executionMatch, runQuery } from './execution-match';
import type { SqlTask } from './sql-questions';

/** The fixed system prompt of the check step (APO tunes only the write step's prompt). */
export const CHECK_SYSTEM =
  'You are a SQL reviewer. Given a question, a SQLite query and its result, decide whether the query answers the ' +
  'question. If it does, reply exactly: THE QUERY IS CORRECT. Otherwise name the problems in one or two sentences.';
/** The fixed system prompt of the rewrite step. */
export const REWRITE_SYSTEM =
  'You are a SQL rewriter. Fix the SQLite query using the reviewer feedback. Reply with the corrected SQL query only.';
/** What the checker says when it accepts a query. */
export const CORRECT = 'THE QUERY IS CORRECT';

/** The graph's state: the question, the current query, its result and the reviewer's verdict. */
const SqlState = Annotation.Root({
  question: Annotation<string>(),
  schema: Annotation<string>(),
  query: Annotation<string>(),
  result: Annotation<string>(),
  feedback: Annotation<string>(),
  turns: Annotation<number>(),
  accepted: Annotation<boolean>(),
});
type State = typeof SqlState.State;

/** The SQL inside a model reply: a ```sql fence's body when there is one, else the whole text (no semicolon). */
export function extractSql(text: string): string {
  const fence = /```(?:sql)?\s*\n?([\s\S]*?)```/iu.exec(text);
  return (fence ? (fence[1] ?? '') : text).trim().replace(/;\s*$/u, '');
}

function replyText(message: BaseMessage): string {
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
}

/** Options of {@link buildSqlGraph}. */
export interface SqlGraphOptions {
  model: ChatOpenAI;
  /** The write step's system prompt (the optimised resource). */
  writePrompt: string;
  db: Database.Database;
  /** Check → rewrite rounds at most (default 3 queries in all). */
  maxTurns?: number;
}

/** The write → execute → check → rewrite loop as a LangGraph `StateGraph`. */
export function buildSqlGraph(o: SqlGraphOptions) {
  const maxTurns = o.maxTurns ?? 3;
  const ask = async (system: string, user: string): Promise<string> =>
    replyText(await o.model.invoke([new SystemMessage(system), new HumanMessage(user)]));
  return new StateGraph(SqlState)
    .addNode('write_query', async (s: State) => ({
      query: extractSql(await ask(o.writePrompt, `Schema:\n${s.schema}\n\nQuestion: ${s.question}`)),
      turns: 1,
    }))
    .addNode('execute_query', (s: State) => ({ result: describeOutcome(runQuery(o.db, s.query, 50)) }))
    .addNode('check_query', async (s: State) => {
      const feedback = await ask(CHECK_SYSTEM, `Question: ${s.question}\nQuery:\n${s.query}\nResult:\n${s.result}`);
      return { feedback, accepted: feedback.includes(CORRECT) };
    })
    .addNode('rewrite_query', async (s: State) => ({
      query: extractSql(
        await ask(
          REWRITE_SYSTEM,
          `Schema:\n${s.schema}\n\nQuestion: ${s.question}\nQuery:\n${s.query}\nResult:\n${s.result}\nFeedback:\n${s.feedback}`,
        ),
      ),
      turns: s.turns + 1,
    }))
    .addEdge(START, 'write_query')
    .addEdge('write_query', 'execute_query')
    .addEdge('execute_query', 'check_query')
    .addConditionalEdges('check_query', (s: State) => (s.accepted || s.turns >= maxTurns ? END : 'rewrite_query'))
    .addEdge('rewrite_query', 'execute_query')
    .compile({ name: 'sql-agent' });
}

type SqlGraph = ReturnType<typeof buildSqlGraph>;
/** Compiled graphs per database and (endpoint, model, prompt): APO evaluates each prompt on many tasks. */
const graphCache = new WeakMap<Database.Database, Map<string, SqlGraph>>();
const schemaCache = new WeakMap<Database.Database, string>();

function schemaOf(db: Database.Database): string {
  let schema = schemaCache.get(db);
  if (schema === undefined) {
    schema = describeSchema(db);
    schemaCache.set(db, schema);
  }
  return schema;
}

/** What one run of the graph produced. */
export interface SqlRun {
  query: string;
  turns: number;
  accepted: boolean;
  reward: number;
}

/** Run the graph on one task with the given resources and score the final query by execution match. */
export async function runSqlTask(options: {
  task: SqlTask;
  resources: NamedResources;
  db: Database.Database;
  maxTurns?: number;
  signal?: AbortSignal;
}): Promise<SqlRun> {
  const { llm, system_prompt: prompt } = options.resources;
  if (llm?.resourceType !== 'llm' || prompt?.resourceType !== 'prompt_template')
    throw new Error('the SQL agent needs the llm and system_prompt resources');
  const key = `${llm.endpoint}\n${llm.model}\n${llm.apiKey ?? ''}\n${prompt.template}\n${options.maxTurns ?? 3}`;
  let graph = graphCache.get(options.db)?.get(key);
  if (!graph) {
    graph = buildSqlGraph({
      model: new ChatOpenAI({
        model: llm.model,
        apiKey: llm.apiKey ?? 'unused',
        temperature: 0,
        maxRetries: 1,
        configuration: { baseURL: llm.endpoint },
      }),
      writePrompt: formatPromptTemplate(prompt.template, {}),
      db: options.db,
      maxTurns: options.maxTurns,
    });
    const perDb = graphCache.get(options.db) ?? new Map<string, SqlGraph>();
    if (perDb.size > 64) perDb.clear();
    perDb.set(key, graph);
    graphCache.set(options.db, perDb);
  }
  const out = await graph.invoke(
    { question: options.task.question, schema: schemaOf(options.db) },
    { callbacks: [new AglCallbackHandler()], recursionLimit: 20, signal: options.signal },
  );
  const reward = executionMatch(options.db, out.query, options.task.gold);
  return { query: out.query, turns: out.turns, accepted: out.accepted, reward };
}

/**
 * The rollout function the trainer runs: the LangGraph loop on the task, traced by `@agl/langchain` (every LLM call
 * becomes an `openai.chat.completion` span of the rollout); returns the execution-match reward.
 */
export function sqlAgent(options: { dbPath: string; maxTurns?: number }): RolloutFn<SqlTask> {
  let db: Database.Database | null = null;
  return async (task: SqlTask, resources: NamedResources, ctx: AgentContext) => {
    db ??= new Database(options.dbPath, { readonly: true, fileMustExist: true });
    const run = await runSqlTask({ task, resources, db, maxTurns: options.maxTurns, signal: ctx.signal });
    return run.reward;
  };
}
