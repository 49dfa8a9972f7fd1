// Issue 55 item 2 end to end: 30 planted secrets of 15 kinds in prompts, tool-call arguments, tool descriptions,
// rollout input and metadata, through `observe` (a real `agl store serve` on a SQLite file, over HTTP), OTLP ingest
// (`--redact-otlp`), `agl dataset build`, every `agl export` and the OpenAI fine-tuning upload (the fine-tuning test
// server). None may be found in clear in the SQLite file, any output file or the uploaded training file.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { configureObserve, flushObserve, observe, shutdownObserve } from '@agl/client';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { StoreClient } from '@agl/store/client';
import {
  plantedSecrets,
  splitAcrossMessages,
  startAglStoreServe,
  startFineTuningServers,
  type AglStoreServe,
  type FineTuningServers,
  type PlantedSecret,
} from '@agl/testing';
import { cli } from './__fixtures__/run-cli';

const TOKEN = 'e2e-store-token';
const OBSERVED = plantedSecrets(0);
const OTLP = plantedSecrets(1);
/** Written over the plain REST routes (which store what they get, as AGL 0.3 does): only the exports must mask them. */
const REST = plantedSecrets(2);
const SPLIT = splitAcrossMessages(0);

let dir: string;
let db: string;
let serve: AglStoreServe;
let servers: FineTuningServers;

function needles(list: readonly PlantedSecret[]): string[] {
  return list.flatMap((s) => s.needles);
}

/** One chat call with `prompt` as the user message, `argumentsText` inside a tool call, `description` on the tool. */
function chatAttributes(o: { prompts: string[]; argumentsText: string; description: string; answer: string }) {
  const attributes: Record<string, string> = {
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.prompt.0.role': 'system',
    'gen_ai.prompt.0.content': 'You are the ops assistant.',
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.content': o.answer,
    'gen_ai.completion.0.finish_reason': 'tool_calls',
    'gen_ai.completion.0.tool_calls.0.id': 'call_1',
    'gen_ai.completion.0.tool_calls.0.name': 'lookup',
    'gen_ai.completion.0.tool_calls.0.arguments': JSON.stringify({ query: o.argumentsText }),
    'gen_ai.request.functions.0.name': 'lookup',
    'gen_ai.request.functions.0.description': o.description,
    'gen_ai.request.functions.0.parameters': JSON.stringify({
      type: 'object',
      properties: { query: { type: 'string' } },
    }),
  };
  o.prompts.forEach((content, i) => {
    attributes[`gen_ai.prompt.${i + 1}.role`] = 'user';
    attributes[`gen_ai.prompt.${i + 1}.content`] = content;
  });
  return attributes;
}

/** Spreads 30 secrets over 12 rollouts: user prompt, tool arguments, tool description, input, metadata. */
function plan(secrets: readonly PlantedSecret[], rollouts: number) {
  return Array.from({ length: rollouts }, (_, r) => {
    const mine = secrets.filter((_, k) => k % rollouts === r);
    const at = (slot: number) => mine.filter((_, j) => (r + j) % 5 === slot).map((s) => s.text);
    return {
      prompts: [`question ${r}: ${at(0).join(' ; ')}`],
      argumentsText: `look up ${at(1).join(' ; ')}`,
      description: `Looks things up. ${at(2).join(' ; ')}`,
      input: { question: `q${r}`, notes: at(3) },
      metadata: { task_id: `task-${r}`, context: at(4).join(' ; ') },
      answer: `answer ${r}`,
    };
  });
}

function otlpBody(rolloutId: string, attemptId: string, attributes: Record<string, string>, n: number): string {
  const now = BigInt(Date.now()) * 1_000_000n;
  const all = { ...attributes, 'agentlightning.rollout_id': rolloutId, 'agentlightning.attempt_id': attemptId };
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'python-agent' } }] },
        scopeSpans: [
          {
            scope: { name: 'opentelemetry.instrumentation.openai' },
            spans: [
              {
                traceId: `${'a'.repeat(30)}${String(n).padStart(2, '0')}`,
                spanId: `${'b'.repeat(14)}${String(n).padStart(2, '0')}`,
                name: SPAN_CHAT_COMPLETION,
                kind: 3,
                startTimeUnixNano: String(now),
                endTimeUnixNano: String(now + 1_000_000n),
                attributes: Object.entries(all).map(([key, value]) => ({ key, value: { stringValue: value } })),
                status: { code: 1 },
              },
            ],
          },
        ],
      },
    ],
  });
}

/** Every file under `root`, recursively. */
function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function leaks(text: string, list: readonly string[]): string[] {
  return list.filter((needle) => text.includes(needle));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-redaction-e2e-'));
  db = join(dir, 'store.sqlite');
  servers = await startFineTuningServers({ fineTuning: { apiKey: 'sk-ft', advance: 'on-poll' } });
  serve = await startAglStoreServe(['--db', db, '--redact-otlp', '--no-dashboard'], TOKEN);
  vi.stubEnv('OPENAI_API_KEY', 'sk-ft');
  vi.stubEnv('OPENAI_BASE_URL', servers.ft.baseURL);
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await shutdownObserve(1_000);
  await serve?.stop();
  await servers?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('planted secrets never reach a store, a dataset, an export or an upload in clear', () => {
  it('observe, OTLP ingest, dataset build, every export and the fine-tuning upload', async () => {
    const all = [...needles(OBSERVED), ...needles(OTLP), ...needles(REST), ...SPLIT.needles];
    expect(new Set(all).size).toBe(all.length);
    expect(new Set(OBSERVED.map((s) => s.kind)).size).toBe(15);
    // No needle of the redacted flows hides inside a REST text (those are stored in clear on purpose).
    const restText = REST.map((s) => s.text).join('\n');
    expect(leaks(restText, [...needles(OBSERVED), ...needles(OTLP), ...SPLIT.needles])).toEqual([]);

    // 1. observe → the store server over HTTP.
    configureObserve({ store: serve.url, token: TOKEN, exitFlushTimeoutMs: 0, logger: { warn: () => {} } });
    for (const [r, call] of plan(OBSERVED, 12).entries()) {
      const prompts = r === 0 ? [SPLIT.first, SPLIT.second, ...call.prompts] : call.prompts;
      await observe({ input: call.input, metadata: call.metadata, agentName: 'ops' }, async () => {
        getAglTracer()
          .getTracer('e2e')
          .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
            span.setAttributes(chatAttributes({ ...call, prompts }));
            span.end();
          });
      });
    }
    expect(await flushObserve(20_000)).toBe(true);

    // 2. OTLP/JSON from a "Python exporter" into rollouts a client started; 3. plain REST writes (no redaction).
    const client = new StoreClient({ url: serve.url, token: TOKEN });
    // Two clean REST calls too: the only ones whose token ids survive (a call holding a secret loses them), for verl.
    const clean = [0, 1].map((r) => ({
      prompts: [`clean question ${r}`],
      argumentsText: 'nothing secret',
      description: 'Looks things up.',
      input: { question: `clean-${r}`, notes: [] as string[] },
      metadata: { task_id: `clean-${r}`, context: '' },
      answer: `clean answer ${r}`,
    }));
    const origin = { otlp: plan(OTLP, 6), rest: [...plan(REST, 6), ...clean] };
    let n = 0;
    for (const [source, calls] of Object.entries(origin)) {
      for (const call of calls) {
        n += 1;
        const started = await client.startRollout({
          input: source === 'rest' ? call.input : { question: call.input.question },
          metadata: source === 'rest' ? call.metadata : { task_id: call.metadata.task_id },
        });
        const { rolloutId } = started;
        const { attemptId } = started.attempt;
        const attributes = chatAttributes(call);
        if (source === 'otlp') {
          const response = await fetch(`${serve.url}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
            body: otlpBody(rolloutId, attemptId, attributes, n),
          });
          expect(response.status).toBe(200);
          expect(JSON.stringify(await response.json())).not.toMatch(/rejected/u);
        } else {
          const now = Date.now() / 1000;
          await client.addSpan({
            rolloutId,
            attemptId,
            sequenceId: 1,
            traceId: `t-${n}`,
            spanId: `s-${n}`,
            parentId: null,
            name: SPAN_CHAT_COMPLETION,
            attributes: { ...attributes, prompt_token_ids: [1, 2, 3, 4 + n], response_token_ids: [5, 6, 7] },
            startTime: now,
            endTime: now + 0.5,
          });
        }
        await client.updateAttempt(rolloutId, attemptId, { status: 'succeeded' });
      }
    }
    await client.close?.();

    // 4. Every command that writes or uploads training data, on by default, with its count in the summary.
    const store = ['--store-url', serve.url, '--token', TOKEN];
    const out = join(dir, 'out');
    const runs = [
      await cli(
        'dataset',
        'build',
        ...store,
        '--source',
        'any',
        '--out',
        join(out, 'tasks.jsonl'),
        '--val-fraction',
        '0.3',
      ),
      await cli('export', 'transitions', ...store, '--out', join(out, 'transitions.jsonl')),
      await cli('export', 'sft', ...store, '--out', join(out, 'sft.jsonl')),
      await cli('export', 'dpo', ...store, '--out', join(out, 'dpo.jsonl')),
      await cli('export', 'verl', ...store, '--out', join(out, 'verl')),
      await cli('finetune', '--base-model', 'gpt-4o-mini', '--method', 'sft', ...store),
    ];
    for (const run of runs) {
      expect(run.code, run.err).toBe(0);
      expect(run.out).toMatch(/redaction: (\d+ secrets? masked|no secrets found)/u);
    }
    // The REST-written secrets reached the store in clear, so every reader had something to mask.
    for (const run of runs.slice(0, 3)) expect(run.out).toMatch(/redaction: \d+ secrets? masked/u);
    expect(runs[5]!.out).toMatch(/redaction: \d+ secrets? masked/u);
    // --no-redact writes what the store holds (the REST-written secrets in clear) and says so.
    const unredacted = join(dir, 'unredacted.jsonl');
    const optOut = await cli('export', 'sft', ...store, '--no-redact', '--out', unredacted);
    expect(optOut.out).toMatch(/redaction: off \(--no-redact\)/u);
    expect(leaks(readFileSync(unredacted, 'utf8'), needles(REST)).length).toBeGreaterThan(0);
    expect(servers.ft.files.size).toBe(1);
    const uploads = [...servers.ft.files.values()].map((f) => f.text);
    expect(uploads[0]).toContain('[REDACTED]');

    // 5. Scan everything: the SQLite file (stopped, so the WAL is merged), each output file, the upload body.
    await serve.stop();
    const storeFiles = readdirSync(dir)
      .filter((name) => name.startsWith('store.sqlite'))
      .map((name) => readFileSync(join(dir, name)).toString('latin1'));
    expect(storeFiles.join('').length).toBeGreaterThan(0);
    for (const bytes of storeFiles) {
      expect(leaks(bytes, [...needles(OBSERVED), ...needles(OTLP), ...SPLIT.needles])).toEqual([]);
    }
    // The control: the REST path stores what it gets, so the scan can see a secret in clear.
    expect(leaks(storeFiles.join(''), needles(REST)).length).toBeGreaterThan(0);
    const outputs = filesUnder(out);
    expect(outputs.length).toBeGreaterThanOrEqual(7);
    for (const file of outputs) {
      const text = readFileSync(file).toString('latin1');
      expect({ file, leaks: leaks(text, all) }).toEqual({ file, leaks: [] });
    }
    for (const text of uploads) expect(leaks(text, all)).toEqual([]);
    const sft = readFileSync(join(out, 'sft.jsonl'), 'utf8');
    expect(sft.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(20);
  }, 240_000);
});
