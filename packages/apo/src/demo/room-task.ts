import { formatPromptTemplate, type NamedResources } from '@agl/core';
import { UserError } from '@agl/core/errors';
import { traceOpenAiChat } from '@agl/core/tracer';
import type { ApoOptions } from '../apo-options';

/** The starting prompt: deliberately vague. */
export const ROOM_SEED_PROMPT = 'You help people book meeting rooms. Pick a room for the request.';

/** A small search that suits 12 train and 12 val tasks (raise it on a real model and data set). */
export const ROOM_APO_SEARCH = {
  beamWidth: 2,
  branchFactor: 2,
  beamRounds: 3,
  gradientBatchSize: 3,
  valBatchSize: 6,
  seed: 2,
} as const satisfies ApoOptions;

/** A meeting room. */
export interface Room {
  id: string;
  seats: number;
  projector: boolean;
  stepFree: boolean;
}

/** One booking request; `answer` is the smallest room that meets every need (first listed on ties). */
export interface RoomTask {
  id: string;
  people: number;
  projector: boolean;
  wheelchair: boolean;
  rooms: Room[];
  answer: string;
}

/** Deterministic tasks (LCG), so every test run sees the same data. */
export function roomTasks(n: number, seed: number, prefix: string): RoomTask[] {
  let s = seed >>> 0;
  const rnd = (k: number): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s >>> 16) % k;
  };
  const tasks: RoomTask[] = [];
  while (tasks.length < n) {
    const rooms: Room[] = Array.from({ length: 6 }, (_, i) => ({
      id: `R${i + 1}`,
      seats: [2, 4, 6, 8, 12, 20][rnd(6)] as number,
      projector: rnd(2) === 0,
      stepFree: rnd(2) === 0,
    }));
    const people = 1 + rnd(10);
    const projector = rnd(3) === 0;
    const wheelchair = rnd(4) === 0;
    const fits = rooms.filter((r) => r.seats >= people && (!projector || r.projector) && (!wheelchair || r.stepFree));
    // Keep tasks with a real choice: at least two rooms fit and the largest of them is not the answer.
    if (fits.length < 2 || new Set(fits.map((r) => r.seats)).size < 2) continue;
    const answer = fits.reduce((a, b) => (b.seats < a.seats ? b : a)).id;
    tasks.push({ id: `${prefix}${tasks.length}`, people, projector, wheelchair, rooms, answer });
  }
  return tasks;
}

/** The user message the agent sends. */
export function describeRequest(task: RoomTask): string {
  const needs = [
    `a meeting for ${task.people} people`,
    task.projector ? 'needs a projector' : '',
    task.wheelchair ? 'one attendee uses a wheelchair' : '',
  ]
    .filter(Boolean)
    .join(', ');
  const rooms = task.rooms.map(
    (r) => `${r.id}: seats ${r.seats}, projector ${r.projector ? 'yes' : 'no'}, step-free ${r.stepFree ? 'yes' : 'no'}`,
  );
  return `Request: ${needs}.\nRooms:\n${rooms.join('\n')}`;
}

/** 1 for exactly the right room id, 0.3 for the right room inside extra text, else 0. */
export function gradeReply(task: RoomTask, reply: string): number {
  if (reply.trim() === task.answer) return 1;
  const ids = reply.match(/\bR\d+\b/gu) ?? [];
  return ids.length === 1 && ids[0] === task.answer ? 0.3 : 0;
}

/** The agent: one chat call with the optimised system prompt, recorded as an `openai.chat.completion` span. */
export async function roomAgent(task: RoomTask, resources: NamedResources): Promise<number> {
  const llm = resources.llm;
  const prompt = resources.system_prompt;
  if (llm?.resourceType !== 'llm' || prompt?.resourceType !== 'prompt_template')
    throw new UserError('roomAgent needs an `llm` resource and a `system_prompt` prompt_template resource.');
  const body = {
    model: llm.model,
    messages: [
      { role: 'system' as const, content: formatPromptTemplate(prompt.template, {}) },
      { role: 'user' as const, content: describeRequest(task) },
    ],
  };
  const json = await traceOpenAiChat(
    body,
    async () => {
      const res = await fetch(`${llm.endpoint}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { choices: { message: { content: string } }[] };
    },
    { tracerName: 'room-agent' },
  );
  const reply = json.choices[0]?.message.content ?? '';
  return gradeReply(task, reply);
}
