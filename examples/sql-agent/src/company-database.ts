import Database from 'better-sqlite3';

/** The schema the agent sees (DDL, as `sqlite_master` stores it). */
export const SCHEMA_SQL = `CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, department_id INTEGER NOT NULL REFERENCES departments(id), salary INTEGER NOT NULL, hire_year INTEGER NOT NULL);
CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL, department_id INTEGER NOT NULL REFERENCES departments(id), budget INTEGER NOT NULL);
CREATE TABLE assignments (employee_id INTEGER NOT NULL REFERENCES employees(id), project_id INTEGER NOT NULL REFERENCES projects(id), hours INTEGER NOT NULL, PRIMARY KEY (employee_id, project_id));`;

/** Departments and their cities (fixed, so the question set can name them). */
export const DEPARTMENTS = [
  ['Engineering', 'Berlin'],
  ['Sales', 'Lisbon'],
  ['Marketing', 'Lisbon'],
  ['Finance', 'Zurich'],
  ['Support', 'Berlin'],
  ['Research', 'Oslo'],
] as const;

/** Project names, in id order. */
export const PROJECTS = [
  'Atlas',
  'Beacon',
  'Cobalt',
  'Delta',
  'Ember',
  'Falcon',
  'Granite',
  'Harbor',
  'Iris',
  'Juniper',
  'Kestrel',
  'Lumen',
  'Meridian',
  'Nimbus',
  'Onyx',
  'Polaris',
  'Quartz',
  'Raven',
  'Sierra',
  'Tundra',
] as const;

const FIRST = [
  'Ada',
  'Bruno',
  'Chen',
  'Dana',
  'Emil',
  'Farah',
  'Goran',
  'Hana',
  'Ivo',
  'Jonas',
  'Kira',
  'Luis',
  'Mara',
  'Nils',
  'Olga',
  'Pavel',
];
const LAST = [
  'Berg',
  'Costa',
  'Dahl',
  'Engel',
  'Fischer',
  'Gomez',
  'Holm',
  'Ito',
  'Jansen',
  'Kovac',
  'Lund',
  'Moreau',
  'Novak',
  'Ortiz',
  'Petrov',
];

/** Row counts of the generated database. */
export const ROW_COUNTS = {
  departments: DEPARTMENTS.length,
  employees: 180,
  projects: PROJECTS.length,
  assignments: 300,
} as const;

/** A small deterministic PRNG (LCG), so every build holds the same rows. */
function lcg(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s >>> 8) % n;
  };
}

/**
 * Build the company database at `path` (a file, or `:memory:`): 6 departments, 180 employees, 20 projects and 300
 * assignments, generated from a fixed seed. Salaries are unique, so "top N" questions have one right answer.
 */
export function buildCompanyDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = DELETE');
  db.exec(SCHEMA_SQL);
  const rnd = lcg(20261202);
  const insert = db.transaction(() => {
    const dep = db.prepare('INSERT INTO departments (id, name, city) VALUES (?, ?, ?)');
    DEPARTMENTS.forEach(([name, city], i) => dep.run(i + 1, name, city));
    const emp = db.prepare('INSERT INTO employees (id, name, department_id, salary, hire_year) VALUES (?, ?, ?, ?, ?)');
    const salaries = new Set<number>();
    for (let id = 1; id <= ROW_COUNTS.employees; id += 1) {
      let salary = 42_000 + rnd(90) * 1_000 + rnd(1_000);
      while (salaries.has(salary)) salary += 7;
      salaries.add(salary);
      const name = `${FIRST[rnd(FIRST.length)]} ${LAST[rnd(LAST.length)]} ${id}`;
      emp.run(id, name, 1 + rnd(DEPARTMENTS.length), salary, 2015 + rnd(10));
    }
    const proj = db.prepare('INSERT INTO projects (id, name, department_id, budget) VALUES (?, ?, ?, ?)');
    PROJECTS.forEach((name, i) => proj.run(i + 1, name, 1 + (i % DEPARTMENTS.length), 50_000 + rnd(200) * 1_000));
    const asg = db.prepare('INSERT OR IGNORE INTO assignments (employee_id, project_id, hours) VALUES (?, ?, ?)');
    let n = 0;
    while (n < ROW_COUNTS.assignments)
      n += asg.run(1 + rnd(ROW_COUNTS.employees), 1 + rnd(PROJECTS.length), 5 + rnd(120)).changes;
  });
  insert();
  return db;
}

/** The schema plus three sample rows per table, as the agent's prompt shows it. */
export function describeSchema(db: Database.Database): string {
  const parts: string[] = [];
  for (const { name, sql } of db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
    .all() as { name: string; sql: string }[]) {
    const rows = db.prepare(`SELECT * FROM ${name} LIMIT 3`).all() as Record<string, unknown>[];
    const sample = rows
      .map((r) =>
        Object.values(r)
          .map((v) => JSON.stringify(v))
          .join(' | '),
      )
      .join('\n');
    parts.push(`${sql};\n/* 3 rows from ${name}:\n${sample}\n*/`);
  }
  return parts.join('\n\n');
}
