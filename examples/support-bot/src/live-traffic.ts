import type { ObserveStats } from '@agl/client';
import { TraceToTransitions } from '@agl/core/transitions';
import type { Rollout, Span, Transition } from '@agl/core/schema';
import { StoreClient } from '@agl/store/client';
import { ORDERS } from './orders';

/** One customer message with a marker no other request carries, and the reply the scripted LLM must give. */
export interface MarkedChat {
  marker: string;
  message: string;
  expectedReply: string;
}

/** `count` chats about the shop's orders, each carrying its own marker `<run>-<i>`. */
export function markedChats(run: string, count: number): MarkedChat[] {
  return Array.from({ length: count }, (_, i) => {
    const order = ORDERS[i % ORDERS.length]!;
    const marker = `${run}-${i}`;
    const expectedReply = order.eta
      ? `Order ${order.id} is ${order.status}, arriving ${order.eta}.`
      : `Order ${order.id} is ${order.status}.`;
    return { marker, message: `Where is my order ${order.id}? (ticket ${marker})`, expectedReply };
  });
}

/** What the service answered to one chat. */
export interface ChatAnswer {
  status: number;
  reply: string | null;
  rolloutId: string | null;
}

/** Sends the chats to `POST /chat`, at most `concurrency` at a time (all at once by default). */
export async function sendChats(url: string, chats: MarkedChat[], concurrency = chats.length): Promise<ChatAnswer[]> {
  const answers: ChatAnswer[] = new Array<ChatAnswer>(chats.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chats.length) {
      const i = next++;
      const res = await fetch(`${url}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: chats[i]!.message }),
      });
      const body = (await res.json()) as { reply?: string };
      answers[i] = { status: res.status, reply: body.reply ?? null, rolloutId: res.headers.get('x-agl-rollout-id') };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chats.length) }, worker));
  return answers;
}

/** A stored rollout with its spans and the transitions core's `TraceToTransitions` makes of them. */
export interface StoredRollout {
  rollout: Rollout;
  spans: Span[];
  transitions: Transition[];
}

/** Every rollout of the store with its spans (read over HTTP, as any tool would). */
export async function readStore(storeUrl: string): Promise<StoredRollout[]> {
  const client = new StoreClient({ url: storeUrl, retryDelays: [] });
  const adapter = new TraceToTransitions();
  try {
    const rollouts: Rollout[] = [];
    for (;;) {
      const page = await client.queryRollouts({ limit: 500, offset: rollouts.length });
      rollouts.push(...page.items);
      if (page.items.length === 0 || rollouts.length >= page.total) break;
    }
    return await Promise.all(
      rollouts.map(async (rollout) => {
        const spans = (await client.querySpans({ rolloutId: rollout.rolloutId, attemptId: 'latest' })).items;
        return { rollout, spans, transitions: adapter.transitions(spans) };
      }),
    );
  } finally {
    await client.close();
  }
}

/** The markers of `run` that appear anywhere in a rollout's spans. */
export function markersIn(spans: Span[], run: string): Set<string> {
  const found = new Set<string>();
  for (const match of JSON.stringify(spans).matchAll(new RegExp(`${run}-\\d+`, 'gu'))) found.add(match[0]);
  return found;
}

/** The service's recorder counters (`GET /stats`, i.e. `observeStats()`). */
export async function serviceStats(url: string): Promise<ObserveStats> {
  return (await (await fetch(`${url}/stats`)).json()) as ObserveStats;
}
