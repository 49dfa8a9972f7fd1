import { DEPARTMENTS, PROJECTS } from './company-database';

/** One Text-to-SQL task: a question and the gold query whose result is the right answer. */
export interface SqlTask {
  id: string;
  question: string;
  gold: string;
}

const DEP_JOIN = 'JOIN departments d ON e.department_id = d.id';

/** The question kinds, each a template with its gold query. */
const KINDS: { kind: string; params: readonly (string | number)[]; make: (p: string | number) => [string, string] }[] =
  [
    {
      kind: 'count',
      params: DEPARTMENTS.map(([d]) => d),
      make: (d) => [
        `How many employees work in the ${d} department?`,
        `SELECT COUNT(*) FROM employees e ${DEP_JOIN} WHERE d.name = '${d}'`,
      ],
    },
    {
      kind: 'avg',
      params: DEPARTMENTS.map(([d]) => d),
      make: (d) => [
        `What is the average salary of employees in the ${d} department?`,
        `SELECT AVG(e.salary) FROM employees e ${DEP_JOIN} WHERE d.name = '${d}'`,
      ],
    },
    {
      kind: 'top',
      params: ['Engineering:3', 'Sales:2', 'Finance:3', 'Research:2', 'Support:3', 'Marketing:2'],
      make: (p) => {
        const [d, n] = String(p).split(':');
        return [
          `Who are the ${n} highest-paid employees in the ${d} department?`,
          `SELECT e.name FROM employees e ${DEP_JOIN} WHERE d.name = '${d}' ORDER BY e.salary DESC LIMIT ${n}`,
        ];
      },
    },
    {
      kind: 'hired',
      params: [2016, 2018, 2020, 2023],
      make: (y) => [`How many employees were hired in ${y}?`, `SELECT COUNT(*) FROM employees WHERE hire_year = ${y}`],
    },
    {
      kind: 'budget',
      params: DEPARTMENTS.map(([d]) => d),
      make: (d) => [
        `What is the total budget of the projects run by the ${d} department?`,
        `SELECT SUM(p.budget) FROM projects p JOIN departments d ON p.department_id = d.id WHERE d.name = '${d}'`,
      ],
    },
    {
      kind: 'city',
      params: ['Berlin', 'Lisbon', 'Zurich', 'Oslo'],
      make: (c) => [
        `List the names of the departments located in ${c}.`,
        `SELECT name FROM departments WHERE city = '${c}'`,
      ],
    },
    {
      kind: 'hours',
      params: PROJECTS.slice(0, 8),
      make: (p) => [
        `How many hours in total are logged on the ${p} project?`,
        `SELECT SUM(a.hours) FROM assignments a JOIN projects p ON a.project_id = p.id WHERE p.name = '${p}'`,
      ],
    },
  ];

/** All 40 questions with gold queries, interleaved by kind. */
export const SQL_QUESTIONS: readonly SqlTask[] = KINDS.flatMap(({ kind, params, make }) =>
  params.map((p, i) => {
    const [question, gold] = make(p);
    return { id: `${kind}-${i}`, question, gold };
  }),
);

/** Train / val split: alternate questions of each kind, so both halves hold every kind. */
export function splitQuestions(): { train: SqlTask[]; val: SqlTask[] } {
  const train: SqlTask[] = [];
  const val: SqlTask[] = [];
  for (const task of SQL_QUESTIONS) (Number(task.id.split('-')[1]) % 2 === 0 ? train : val).push(task);
  return { train, val };
}
