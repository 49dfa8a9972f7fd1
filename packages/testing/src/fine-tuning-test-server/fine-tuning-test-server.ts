import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isRecord } from '@agl/core/guards';
import { sendJson } from '../openai-test-server/http-io';
import {
  validateTrainingFile,
  type TestFileObject,
  type TestFineTuningJob,
  type TestJobError,
  type TestJobEvent,
} from './fine-tuning-jobs';

/** Options of {@link startFineTuningTestServer}. */
export interface FineTuningTestServerOptions {
  /** Bearer key the server requires (`Authorization: Bearer …` or Azure's `api-key`); absent: any. */
  apiKey?: string;
  /** Organization named in `fine_tuned_model` (default `agl-test`). */
  organization?: string;
  /** Seconds since the epoch for `created_at` etc. (default: a counter from 1,700,000,000, one tick per call). */
  now?: () => number;
  /**
   * `'manual'` (default): jobs move only on {@link FineTuningTestServer.step}. `'on-poll'`: every
   * `GET /v1/fine_tuning/jobs/{id}` moves that job one state first, so a client that polls drives it to the end.
   */
  advance?: 'manual' | 'on-poll';
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
  /**
   * Refuse every job create with this status and message, as OpenAI does for an organisation without fine-tuning
   * access (self-serve fine-tuning takes no new jobs from 2027-01-06).
   */
  refuseJobs?: { status: number; message: string; code?: string };
}

/** A running fine-tuning test server. */
export interface FineTuningTestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `url + '/v1'`: pass as `baseURL` to the `openai` client. */
  baseURL: string;
  /** Uploaded files by id, with their text. */
  readonly files: ReadonlyMap<string, { object: TestFileObject; text: string }>;
  /** Jobs by id (live objects). */
  readonly jobs: ReadonlyMap<string, TestFineTuningJob>;
  /** Every request, in order: method and path. */
  readonly requests: Array<{ method: string; path: string }>;
  /** Moves every unfinished job (or only `jobId`) one state on; returns the jobs that moved. */
  step(jobId?: string): TestFineTuningJob[];
  /** Runs every unfinished job (or only `jobId`) to a terminal state. */
  finishAll(jobId?: string): void;
  /** The next job that reaches `running` fails with this error instead of succeeding. */
  failNextJob(error: { code?: string; message: string }): void;
  close(): Promise<void>;
}

const NEXT: Record<string, TestFineTuningJob['status'] | undefined> = {
  validating_files: 'queued',
  queued: 'running',
  running: 'succeeded',
};

function apiError(res: ServerResponse, status: number, message: string, param: string | null = null): void {
  const code = status === 401 ? 'invalid_api_key' : null;
  sendJson(res, status, { error: { message, type: 'invalid_request_error', param, code } });
}

/** Reads a query string number, clamped to 1..100. */
function limitOf(query: URLSearchParams, fallback: number): number {
  const n = Number(query.get('limit') ?? fallback);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 100) : fallback;
}

/** A page of newest-first items after the `after` id, as the OpenAI cursor pages spell it. */
function page<T extends { id: string }>(newestFirst: T[], query: URLSearchParams, fallback: number) {
  const after = query.get('after');
  const start = after === null ? 0 : newestFirst.findIndex((x) => x.id === after) + 1;
  const limit = limitOf(query, fallback);
  const data = newestFirst.slice(start, start + limit);
  return { object: 'list', data, has_more: start + limit < newestFirst.length };
}

/**
 * Start a fake OpenAI files + fine-tuning API on real HTTP (127.0.0.1, port 0): `POST /v1/files` (multipart, purpose
 * `fine-tune`), `GET /v1/files/{id}`, `GET /v1/files/{id}/content`, `POST /v1/fine_tuning/jobs`, `GET
 * /v1/fine_tuning/jobs[/{id}[/events]]`, `POST /v1/fine_tuning/jobs/{id}/cancel`. Jobs move `validating_files` →
 * `queued` → `running` → `succeeded` | `failed` | `cancelled` only when the test steps them (or, with
 * `advance: 'on-poll'`, when a client polls the job), so tests never sleep. The training file is validated like the
 * provider does when the job leaves `validating_files`.
 *
 * @example
 * const ft = await startFineTuningTestServer();
 * const client = new OpenAI({ baseURL: ft.baseURL, apiKey: 'x' });
 */
export async function startFineTuningTestServer(
  options: FineTuningTestServerOptions = {},
): Promise<FineTuningTestServer> {
  let tick = 1_700_000_000;
  const now = options.now ?? (() => (tick += 1));
  const organization = options.organization ?? 'agl-test';
  const files = new Map<string, { object: TestFileObject; text: string }>();
  const jobs = new Map<string, TestFineTuningJob>();
  const events = new Map<string, TestJobEvent[]>();
  const requests: Array<{ method: string; path: string }> = [];
  const pendingFailures: TestJobError[] = [];
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}${(counter += 1).toString(36).padStart(6, '0')}`;

  function addEvent(jobId: string, message: string, extra: Partial<TestJobEvent> = {}): void {
    const event: TestJobEvent = {
      id: nextId('ftevent-'),
      object: 'fine_tuning.job.event',
      created_at: now(),
      level: 'info',
      message,
      type: 'message',
      data: null,
      ...extra,
    };
    events.get(jobId)?.push(event);
  }

  function finish(job: TestFineTuningJob, status: 'succeeded' | 'failed' | 'cancelled', error?: TestJobError) {
    job.status = status;
    job.finished_at = now();
    job.estimated_finish = null;
    if (error) {
      job.error = error;
      addEvent(job.id, error.message, { level: 'error' });
    }
  }

  function step(jobId?: string): TestFineTuningJob[] {
    const moved: TestFineTuningJob[] = [];
    for (const job of jobs.values()) {
      if (jobId !== undefined && job.id !== jobId) continue;
      const next = NEXT[job.status];
      if (next === undefined) continue;
      moved.push(job);
      if (job.status === 'validating_files') {
        const file = files.get(job.training_file);
        const error = validateTrainingFile(file?.text ?? '', job.method.type);
        if (error) {
          finish(job, 'failed', error);
          continue;
        }
        job.status = 'queued';
        addEvent(job.id, 'Files validated, moving job to queued state');
      } else if (job.status === 'queued') {
        job.status = 'running';
        addEvent(job.id, 'Fine-tuning job started');
        const lines = (files.get(job.training_file)?.text ?? '').split('\n').filter((l) => l.trim() !== '').length;
        addEvent(job.id, `Step 1/${lines}: training loss=0.50`, {
          type: 'metrics',
          data: { step: 1, total_steps: lines, train_loss: 0.5 },
        });
      } else {
        const failure = pendingFailures.shift();
        if (failure) {
          finish(job, 'failed', failure);
          continue;
        }
        job.fine_tuned_model = `ft:${job.model}:${organization}:${job.user_provided_suffix ?? ''}:${job.id.slice(6)}`;
        job.trained_tokens = files.get(job.training_file)?.text.length ?? 0;
        addEvent(job.id, `New fine-tuned model created: ${job.fine_tuned_model}`);
        finish(job, 'succeeded');
        addEvent(job.id, 'The job has successfully completed');
      }
    }
    return moved;
  }

  async function upload(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const contentType = req.headers['content-type'] ?? '';
    if (!contentType.startsWith('multipart/form-data'))
      return apiError(res, 400, `POST /v1/files needs a multipart/form-data body; got "${contentType}".`);
    const form = await new Request('http://127.0.0.1/', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: new Uint8Array(body),
    }).formData();
    const purpose = form.get('purpose');
    const file = form.get('file');
    if (purpose !== 'fine-tune')
      return apiError(res, 400, `Unsupported purpose ${JSON.stringify(purpose)}; use "fine-tune".`, 'purpose');
    if (file === null || typeof file === 'string')
      return apiError(res, 400, 'The multipart body has no "file" part; send the JSONL file as "file".', 'file');
    const text = await file.text();
    const object: TestFileObject = {
      id: nextId('file-'),
      object: 'file',
      bytes: Buffer.byteLength(text),
      created_at: now(),
      filename: file.name,
      purpose,
      status: 'processed',
      status_details: null,
    };
    files.set(object.id, { object, text });
    sendJson(res, 200, object);
  }

  function createJob(res: ServerResponse, body: unknown): void {
    if (options.refuseJobs) {
      const { status, message, code } = options.refuseJobs;
      return sendJson(res, status, {
        error: { message, type: 'invalid_request_error', param: null, code: code ?? null },
      });
    }
    if (!isRecord(body)) return apiError(res, 400, 'The request body must be a JSON object.');
    if (typeof body.model !== 'string' || body.model === '')
      return apiError(res, 400, 'Missing required parameter: "model".', 'model');
    if (typeof body.training_file !== 'string' || !files.has(body.training_file))
      return apiError(
        res,
        400,
        `training_file ${JSON.stringify(body.training_file)} does not exist; upload it first.`,
        'training_file',
      );
    if (body.validation_file != null && (typeof body.validation_file !== 'string' || !files.has(body.validation_file)))
      return apiError(
        res,
        400,
        `validation_file ${JSON.stringify(body.validation_file)} does not exist.`,
        'validation_file',
      );
    const method = isRecord(body.method) ? body.method : { type: 'supervised' };
    if (method.type !== 'supervised' && method.type !== 'dpo')
      return apiError(
        res,
        400,
        `method.type ${JSON.stringify(method.type)} is not supported; use "supervised" or "dpo".`,
        'method.type',
      );
    const methodHyper = isRecord(method[method.type])
      ? (method[method.type] as Record<string, unknown>).hyperparameters
      : undefined;
    const hyperparameters = {
      n_epochs: 'auto',
      batch_size: 'auto',
      learning_rate_multiplier: 'auto',
      ...(isRecord(body.hyperparameters) ? body.hyperparameters : {}),
      ...(isRecord(methodHyper) ? methodHyper : {}),
    };
    const job: TestFineTuningJob = {
      id: nextId('ftjob-'),
      object: 'fine_tuning.job',
      created_at: now(),
      error: null,
      fine_tuned_model: null,
      finished_at: null,
      hyperparameters,
      model: body.model,
      organization_id: `org-${organization}`,
      result_files: [],
      seed: typeof body.seed === 'number' ? body.seed : 42,
      status: 'validating_files',
      trained_tokens: null,
      training_file: body.training_file,
      validation_file: typeof body.validation_file === 'string' ? body.validation_file : null,
      estimated_finish: null,
      integrations: null,
      metadata: isRecord(body.metadata) ? (body.metadata as Record<string, string>) : null,
      method: method as TestFineTuningJob['method'],
      user_provided_suffix: typeof body.suffix === 'string' ? body.suffix : null,
    };
    jobs.set(job.id, job);
    events.set(job.id, []);
    addEvent(job.id, `Validating training file: ${job.training_file}`);
    sendJson(res, 200, job);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    requests.push({ method, path: url.pathname });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const key = options.apiKey;
    if (key !== undefined && req.headers.authorization !== `Bearer ${key}` && req.headers['api-key'] !== key)
      return apiError(res, 401, 'Incorrect API key provided.');
    if (parts[0] !== 'v1') return apiError(res, 404, `No route ${method} ${url.pathname}.`);
    const [, resource, sub, id, action] = parts;
    if (resource === 'files') {
      if (method === 'POST' && sub === undefined) return upload(req, res, body);
      const file = sub === undefined ? undefined : files.get(sub);
      if (method === 'GET' && sub !== undefined && !file)
        return apiError(res, 404, `No such File object: ${sub}`, 'id');
      if (method === 'GET' && file && id === undefined) return sendJson(res, 200, file.object);
      if (method === 'GET' && file && id === 'content') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return void res.end(file.text);
      }
    }
    if (resource === 'fine_tuning' && sub === 'jobs') {
      if (id === undefined && method === 'POST') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString('utf8') || '{}');
        } catch {
          return apiError(res, 400, 'The request body is not valid JSON.');
        }
        return createJob(res, parsed);
      }
      if (id === undefined && method === 'GET')
        return sendJson(res, 200, page([...jobs.values()].reverse(), url.searchParams, 20));
      const job = id === undefined ? undefined : jobs.get(id);
      if (!job) return apiError(res, 404, `No such fine-tuning job: ${id ?? ''}`, 'fine_tuning_job_id');
      if (method === 'GET' && action === undefined) {
        if (options.advance === 'on-poll') step(job.id);
        return sendJson(res, 200, job);
      }
      if (method === 'GET' && action === 'events')
        return sendJson(res, 200, page([...(events.get(job.id) ?? [])].reverse(), url.searchParams, 20));
      if (method === 'POST' && action === 'cancel') {
        if (NEXT[job.status] === undefined)
          return apiError(res, 400, `Job ${job.id} is already ${job.status} and cannot be cancelled.`);
        finish(job, 'cancelled');
        addEvent(job.id, 'Fine-tuning job cancelled');
        return sendJson(res, 200, job);
      }
    }
    apiError(res, 404, `No route ${method} ${url.pathname} on the fine-tuning test server.`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { message: String(err), type: 'server_error', param: null, code: null } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    baseURL: `${base}/v1`,
    files,
    jobs,
    requests,
    step,
    finishAll(jobId) {
      while (step(jobId).length > 0);
    },
    failNextJob(error) {
      pendingFailures.push({ code: error.code ?? 'training_failed', message: error.message, param: null });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
