// Writes rollouts and spans to AGL_STORE_URL as fast as it can (4 requests in flight) until the server goes away.
// Prints one JSON line per batch before sending it ({"t":"sent"}) and one when the server acknowledged it
// ({"t":"ack"}), so the test knows exactly which writes were acknowledged. Plain JS: starts in milliseconds.
const url = process.env.AGL_STORE_URL;
let seed = Number(process.env.AGL_SEED ?? '1') >>> 0;
const random = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const int = (min, max) => min + Math.floor(random() * (max - min + 1));
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const attempts = [];
let batchNo = 0;
let failed = false;

async function post(path, body) {
  const response = await fetch(`${url}/v1/agl${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await response.json();
  return { status: response.status, json };
}

function span(rolloutId, attemptId, spanId, sequenceId) {
  return {
    rollout_id: rolloutId, attempt_id: attemptId, sequence_id: sequenceId, trace_id: `trace-${spanId}`, span_id: spanId,
    parent_id: null, name: 'crash-test', status: { status_code: 'OK', description: null },
    attributes: { payload: 'x'.repeat(int(0, 2000)) }, events: [], links: [], start_time: 1_700_000_001, end_time: 1_700_000_002,
    context: null, parent: null, resource: { attributes: {}, schema_url: '' },
  };
}

async function oneBatch() {
  const batch = `${process.env.AGL_BATCH_PREFIX ?? ''}b${++batchNo}`;
  const kind = attempts.length === 0 || random() < 0.15 ? 'start' : random() < 0.4 ? 'enqueue' : 'spans';
  if (kind === 'start') {
    print({ t: 'sent', batch, kind, size: 1 });
    const { status, json } = await post('/rollouts', { input: { batch }, metadata: { batch } });
    print({ t: 'ack', batch, kind, status, ids: [json.rollout_id] });
    if (status === 201) attempts.push([json.rollout_id, json.attempt.attempt_id]);
  } else if (kind === 'enqueue') {
    const size = int(1, 30);
    print({ t: 'sent', batch, kind, size });
    const rollouts = Array.from({ length: size }, (_, i) => ({ input: { batch, i }, metadata: { batch } }));
    const { status, json } = await post('/queues/rollouts/enqueue', { rollouts });
    print({ t: 'ack', batch, kind, status, ids: Array.isArray(json) ? json.map((r) => r.rollout_id) : [] });
  } else {
    const size = int(1, 60);
    const [rolloutId, attemptId] = attempts[int(0, attempts.length - 1)];
    const ids = Array.from({ length: size }, (_, i) => `${batch}-${i}`);
    print({ t: 'sent', batch, kind, size, rolloutId, ids });
    const spans = ids.map((id, i) => span(rolloutId, attemptId, id, i + 1));
    const { status } = await post('/spans/batch', { spans });
    print({ t: 'ack', batch, kind, status, ids });
  }
}

async function lane() {
  while (!failed) {
    try {
      await oneBatch();
    } catch (error) {
      failed = true;
      print({ t: 'error', message: String(error?.cause?.code ?? error) });
    }
  }
}

await oneBatch(); // a started rollout first, so span batches have an attempt to belong to
await Promise.all([lane(), lane(), lane(), lane()]);
