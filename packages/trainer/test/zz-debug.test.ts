import { startOpenAiTestServer } from '@agl/testing';
import { MemoryStore } from '@agl/store';
import { it } from 'vitest';
import { Baseline, Trainer } from '../src/index';
import { arithmeticAgent, arithmeticTasks } from './arithmetic-agent';

it('debug', async () => {
  const llm = await startOpenAiTestServer();
  const store = new MemoryStore({});
  const baseline = new Baseline({ maxQueueLength: 32 });
  await new Trainer({ algorithm: baseline, store, nRunners: 4, pollIntervalSeconds: 0.05,
    initialResources: { llm: { resourceType: 'llm', endpoint: llm.baseURL, model: 'test-model' } } }).fit(arithmeticAgent as never, { train: arithmeticTasks(200) });
  const bad = baseline.trajectories.filter((t) => t.transitions[0]!.reward !== 0.5);
  console.log('mismatches', bad.length);
  for (const t of bad.slice(0, 3)) {
    const spans = (await store.querySpans({ rolloutId: t.rolloutId, attemptId: 'latest' })).items;
    console.log(JSON.stringify(spans.map((s) => [s.sequenceId, s.name, s.startTime, s.endTime])));
  }
  await llm.close();
}, 120000);
