/** `agl train` fixture: trains on the JSONL task set in AGL_TASKS_FILE; the reward says whether the task has its input. */
interface Task {
  q?: string;
  _agl?: { rollout_id: string };
}

export const agent = async (task: Task): Promise<number> => (typeof task.q === 'string' && task._agl ? 1 : 0);
export const train = process.env.AGL_TASKS_FILE;
export const config = { nRunners: 1 };
