import { adviceCollector, failedRuns, ruleEdit, ruleMerge } from './apo-rule-editor';
import type { TestLlmReply, TestLlmRequest } from './openai-test-server/index';

/**
 * A deterministic stand-in for three models, none of which knows the answers:
 * - `agent-model` follows the instructions it finds in the system prompt (filters, pick rule, answer format);
 * - `critic-model` reads the failed runs quoted in a critique prompt and names at most two problems it can see;
 * - `editor-model` appends critique points to the prompt; some edits are harmful ("prefer the largest room").
 */
export function roomSelectorRuleLlm(request: TestLlmRequest): TestLlmReply {
  const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  if (request.model === 'agent-model')
    return { content: agentReply(request.messages.find((m) => m.role === 'system')?.content ?? '', user) };
  if (request.model === 'critic-model') return { content: critique(user) };
  if (request.model === 'editor-model')
    return { content: /<prompt_a>/u.test(user) ? ruleMerge(user) : ruleEdit(user, HARMFUL) };
  return { error: { status: 404, message: `unknown model ${request.model}` } };
}

const ADVICE = {
  format: 'Answer with only the room id (for example R2), nothing else.',
  capacity: "Check each room's seats: it must hold everyone in the request.",
  projector: 'When a projector is needed, only consider rooms with a projector.',
  wheelchair: 'When an attendee uses a wheelchair, only consider step-free rooms.',
  smallest: 'Among the rooms that fit, pick the one with the fewest seats.',
} as const;
const HARMFUL = 'To be safe, prefer the largest room.';

interface ParsedRoom {
  id: string;
  seats: number;
  projector: boolean;
  stepFree: boolean;
}

function parseRooms(text: string): ParsedRoom[] {
  return [...text.matchAll(/(R\d+): seats (\d+), projector (yes|no), step-free (yes|no)/gu)].map((m) => ({
    id: m[1] as string,
    seats: Number(m[2]),
    projector: m[3] === 'yes',
    stepFree: m[4] === 'yes',
  }));
}

function agentReply(system: string, user: string): string {
  const s = system.toLowerCase();
  const people = Number(/for (\d+) people/u.exec(user)?.[1] ?? 0);
  let rooms = parseRooms(user);
  if (s.includes('seats')) rooms = rooms.filter((r) => r.seats >= people);
  if (s.includes('projector') && user.includes('needs a projector')) rooms = rooms.filter((r) => r.projector);
  if (s.includes('step-free') && user.includes('wheelchair')) rooms = rooms.filter((r) => r.stepFree);
  if (rooms.length === 0) return 'No room fits.';
  let pick = rooms[0] as ParsedRoom;
  if (s.includes('largest')) pick = rooms.reduce((a, b) => (b.seats > a.seats ? b : a));
  else if (s.includes('fewest seats')) pick = rooms.reduce((a, b) => (b.seats < a.seats ? b : a));
  return s.includes('only the room id') ? pick.id : `I would book ${pick.id} for this meeting.`;
}

function critique(text: string): string {
  const { found, add } = adviceCollector(text);
  for (const body of failedRuns(text)) {
    const request = /\[user\] ([\s\S]*?)(?=\n\[assistant\]|$)/u.exec(body)?.[1] ?? '';
    const reply = /\[assistant\] (.*)/u.exec(body)?.[1] ?? '';
    const chosen = parseRooms(request).find((r) => reply.includes(r.id));
    const people = Number(/for (\d+) people/u.exec(request)?.[1] ?? 0);
    if (!/^R\d+$/u.test(reply.trim())) add(ADVICE.format);
    if (chosen && chosen.seats < people) add(ADVICE.capacity);
    if (chosen && request.includes('needs a projector') && !chosen.projector) add(ADVICE.projector);
    if (chosen && request.includes('wheelchair') && !chosen.stepFree) add(ADVICE.wheelchair);
    if (chosen && chosen.seats >= people * 2 && chosen.seats > 4) add(ADVICE.smallest);
  }
  const bullets = found.slice(0, 2);
  if (bullets.length === 0) return '';
  const prefix = text.includes('- Critique:') ? 'Critique: ' : '';
  return bullets.map((b) => `- ${prefix}${b}`).join('\n');
}
