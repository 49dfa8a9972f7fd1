import { adviceCollector, failedRuns, ruleEdit, ruleMerge, type TestLlmReply, type TestLlmRequest } from '@agl/testing';
import { CHECK_SYSTEM, CORRECT, REWRITE_SYSTEM } from './sql-agent';

/**
 * Advice a prompt can hold. The rule-based writer follows each one only when its key phrase is in its system prompt,
 * and the rule-based critic names one when it sees the matching mistake in a failed run, so APO can really improve
 * the write prompt offline.
 */
export const SQL_ADVICE = {
  join: 'To filter by a department or project name, JOIN the table that holds the name (departments.id = <table>.department_id, projects.id = assignments.project_id); never invent columns.',
  case: 'Copy names from the question into string literals exactly, with the same capitalisation.',
  order:
    "For 'highest' or 'top' questions, ORDER BY the value in descending order (DESC) and LIMIT to the number asked.",
  columns: 'Select only the columns the question asks for.',
} as const;
/** An edit that sounds helpful and is not: the writer then returns every column of list questions. */
export const HARMFUL_ADVICE = 'Return every column of the matching rows so no information is lost.';

function lastUser(request: TestLlmRequest): string {
  return [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
}

/**
 * A deterministic stand-in for every model the example uses, speaking the OpenAI wire protocol through
 * `startOpenAiTestServer`. It knows no answers: the writer builds SQL from the question's wording and follows only
 * the advice its system prompt holds; the reviewer flags errors and empty results; the rewriter only strips prose
 * around SQL; the critic diagnoses failed runs it is shown; the editor appends critique points (sometimes a harmful one).
 */
export function sqlRuleLlm(request: TestLlmRequest): TestLlmReply {
  const system = request.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = lastUser(request);
  if (system === CHECK_SYSTEM) return { content: check(user) };
  if (system === REWRITE_SYSTEM) return { content: rewrite(user) };
  if (user.includes('<experiment ')) return { content: critique(user) };
  if (user.includes('<prompt_a>')) return { content: ruleMerge(user) };
  if (user.includes('<critique>')) return { content: ruleEdit(user, HARMFUL_ADVICE) };
  if (user.includes('Question:')) return { content: write(system, user) };
  return { error: { status: 400, message: 'the SQL rule LLM does not know this request' } };
}

function write(system: string, user: string): string {
  const s = system.toLowerCase();
  const join = s.includes('join');
  const lit = (v: string): string =>
    s.includes('capitalisation') || s.includes('capitalization') ? v : v.toLowerCase();
  const star = s.includes('every column') && !s.includes('only the columns');
  const desc = s.includes('descending') ? ' DESC' : '';
  const q = /Question: (.*)/u.exec(user)?.[1] ?? '';
  const dep = (base: string, alias: string): string =>
    `${base} ${alias} JOIN departments d ON ${alias}.department_id = d.id WHERE d.name`;
  let m: RegExpExecArray | null;
  let sql = 'SELECT 1';
  if ((m = /How many employees work in the (\w+) department/u.exec(q)))
    sql = join
      ? `SELECT COUNT(*) FROM ${dep('employees', 'e')} = '${lit(m[1]!)}'`
      : `SELECT COUNT(*) FROM employees WHERE department = '${lit(m[1]!)}'`;
  else if ((m = /average salary of employees in the (\w+) department/u.exec(q)))
    sql = join
      ? `SELECT AVG(e.salary) FROM ${dep('employees', 'e')} = '${lit(m[1]!)}'`
      : `SELECT AVG(salary) FROM employees WHERE department = '${lit(m[1]!)}'`;
  else if ((m = /Who are the (\d+) highest-paid employees in the (\w+) department/u.exec(q)))
    sql = join
      ? `SELECT ${star ? 'e.*' : 'e.name'} FROM ${dep('employees', 'e')} = '${lit(m[2]!)}' ORDER BY e.salary${desc} LIMIT ${m[1]}`
      : `SELECT ${star ? '*' : 'name'} FROM employees WHERE department = '${lit(m[2]!)}' ORDER BY salary${desc} LIMIT ${m[1]}`;
  else if ((m = /How many employees were hired in (\d{4})/u.exec(q)))
    sql = `SELECT COUNT(*) FROM employees WHERE hire_year = ${m[1]}`;
  else if ((m = /total budget of the projects run by the (\w+) department/u.exec(q)))
    sql = join
      ? `SELECT SUM(p.budget) FROM ${dep('projects', 'p')} = '${lit(m[1]!)}'`
      : `SELECT SUM(budget) FROM projects WHERE department = '${lit(m[1]!)}'`;
  else if ((m = /departments located in (\w+)/u.exec(q)))
    sql = `SELECT ${star ? '*' : 'name'} FROM departments WHERE city = '${lit(m[1]!)}'`;
  else if ((m = /hours in total are logged on the (\w+) project/u.exec(q)))
    sql = join
      ? `SELECT SUM(a.hours) FROM assignments a JOIN projects p ON a.project_id = p.id WHERE p.name = '${lit(m[1]!)}'`
      : `SELECT SUM(hours) FROM assignments WHERE project = '${lit(m[1]!)}'`;
  return s.includes('only the sql') ? sql : `Here is the query:\n${sql}`;
}

function check(user: string): string {
  const result = /\nResult:\n([\s\S]*)$/u.exec(user)?.[1] ?? '';
  if (result.startsWith('ERROR:')) return `The query failed (${result.slice(7)}). Reply with valid SQL only.`;
  if (result.startsWith('no rows')) return 'The query returned no rows; a filter value may not match the stored data.';
  return CORRECT;
}

function rewrite(user: string): string {
  const query = /\nQuery:\n([\s\S]*?)\nResult:\n/u.exec(user)?.[1] ?? '';
  const select = /\bSELECT\b[\s\S]*$/u.exec(query);
  return select ? select[0] : query;
}

function critique(text: string): string {
  const { found, add } = adviceCollector(text);
  for (const body of failedRuns(text)) {
    const run = /Question: (.*)\nQuery:\n([\s\S]*?)\nResult:\n([\s\S]*?)(?:\n\[assistant\]|$)/u.exec(body);
    if (!run) continue;
    const [, question = '', query = '', result = ''] = run;
    if (/no such column/u.test(result)) add(SQL_ADVICE.join);
    for (const lit of query.matchAll(/'([^']+)'/gu)) {
      const value = lit[1]!;
      if (!question.includes(value) && question.toLowerCase().includes(value.toLowerCase())) add(SQL_ADVICE.case);
    }
    if (/highest|top/u.test(question) && !/\bdesc\b/iu.test(query)) add(SQL_ADVICE.order);
    if (/SELECT (\w+\.)?\*/u.test(query)) add(SQL_ADVICE.columns);
  }
  const bullets = found.slice(0, 2);
  const prefix = text.includes('- Critique:') ? 'Critique: ' : '';
  return bullets.map((b) => `- ${prefix}${b}`).join('\n');
}
