import { Agent, request } from 'node:http';
import fc from 'fast-check';

/** What a generated request is known to be: schema-valid (must be accepted), invalid (must be refused), or either. */
export type Expectation = 'accept' | 'reject' | 'any';

/** One generated HTTP request. The path is sent byte for byte (no `..` normalisation, unlike fetch). */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  expect: Expectation;
  /** The generator that made it, for failure messages. */
  kind: string;
}

/** The answer to a {@link FuzzRequest}. */
export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body when it was JSON, else undefined. */
  json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/** Escapes what Node's HTTP client refuses in a request path (spaces, controls, non-ASCII); keeps `/`, `.` and `%`. */
export function rawPath(path: string): string {
  return path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
}

/** Sends `req` to `baseUrl` over a keep-alive connection and reads the whole answer. */
export function send(baseUrl: string, req: FuzzRequest): Promise<FuzzResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const body =
      req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : Buffer.from(req.body);
    const headers: Record<string, string | number> = { ...req.headers };
    if (body !== undefined) headers['content-length'] = body.length;
    const outgoing = request(
      { agent, host: url.hostname, port: url.port, method: req.method, path: rawPath(req.path), headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (String(res.headers['content-type'] ?? '').includes('json')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Closes the keep-alive sockets. */
export function closeFuzzAgent(): void {
  agent.destroy();
}

/**
 * Problems with one answer against the rules every server must keep: no 5xx unless `allow5xx` says it is labelled as
 * someone else's; refusals are 4xx with a JSON `detail` (protobuf for OTLP protobuf requests) unless the answer is a
 * backend's own, `passedThrough`; known-valid input is accepted, known-invalid input refused.
 */
export function problemsOf(
  req: FuzzRequest,
  res: FuzzResponse,
  allow5xx: (res: FuzzResponse) => boolean = () => false,
  passedThrough = false,
): string[] {
  const problems: string[] = [];
  const sentBody = typeof req.body === 'string' ? ` body ${req.body.slice(0, 300)}` : '';
  const where = `${req.kind}: ${req.method} ${req.path.slice(0, 120)}${sentBody} → ${res.status} ${res.text.slice(0, 160)}`;
  if (res.status >= 500 && !allow5xx(res)) problems.push(`5xx from our code — ${where}`);
  if (res.status >= 400 && res.status < 500 && req.method !== 'HEAD' && !passedThrough) {
    const protobuf = String(res.headers['content-type'] ?? '').includes('protobuf');
    const detail = (res.json as { detail?: unknown } | undefined)?.detail;
    if (protobuf ? res.text.length === 0 : typeof detail !== 'string' || detail.length === 0)
      problems.push(`4xx without a JSON detail — ${where}`);
  }
  if (req.expect === 'accept' && (res.status < 200 || res.status >= 300))
    problems.push(`valid input refused — ${where}`);
  if (req.expect === 'reject' && (res.status < 400 || res.status >= 500))
    problems.push(`invalid input not refused with a 4xx — ${where}`);
  return problems;
}

/**
 * `fc.assert` with a short failure: the problems found and the seed/path to replay, not the (possibly megabytes
 * long) counterexample.
 */
export async function checkProperty<T>(
  property: fc.IAsyncPropertyWithHooks<T>,
  params: fc.Parameters<T>,
): Promise<void> {
  const result = await fc.check(property, params);
  if (!result.failed) return;
  const message = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
  throw new Error(
    `${message.slice(0, 4000)}\n(replay: seed ${result.seed}, path "${result.counterexamplePath ?? ''}", after ${result.numRuns} runs)`,
  );
}

/** Requests per property run: each run sends one batch. */
export const FUZZ_BATCH = 8;
/** The fast-check seed; `AGL_FUZZ_SEED` replays another. */
export const FUZZ_SEED = Number(process.env.AGL_FUZZ_SEED ?? 20_261_202);

/** Options of {@link fuzzBatches}. */
export interface FuzzBatchOptions {
  /** The server under test. */
  baseUrl: string;
  request: fc.Arbitrary<FuzzRequest>;
  numRuns: number;
  seed: number;
  /** The problems with one answer (usually {@link problemsOf} plus the server's own rules); none when it is right. */
  check: (req: FuzzRequest, res: FuzzResponse) => string[];
  /** When given, the milliseconds spent per request kind are added up here. */
  timing?: Map<string, number>;
}

/**
 * {@link checkProperty} over `numRuns` batches of {@link FUZZ_BATCH} requests drawn from `request`: each batch is sent
 * at once, and a batch with any problem fails the property with all of them, ending the run. Resolves with the number
 * of requests sent.
 */
export async function fuzzBatches(options: FuzzBatchOptions): Promise<number> {
  const { timing } = options;
  let sent = 0;
  const sendTimed = async (req: FuzzRequest): Promise<FuzzResponse> => {
    const started = performance.now();
    const answer = await send(options.baseUrl, req);
    timing?.set(req.kind, (timing.get(req.kind) ?? 0) + performance.now() - started);
    return answer;
  };
  const run = async (reqs: FuzzRequest[]): Promise<void> => {
    const answers = await Promise.all(reqs.map(sendTimed));
    sent += reqs.length;
    const problems = reqs.flatMap((req, i) => options.check(req, answers[i]!));
    if (problems.length > 0) throw new Error(problems.join('\n'));
  };
  await checkProperty(
    fc.asyncProperty(fc.array(options.request, { minLength: FUZZ_BATCH, maxLength: FUZZ_BATCH }), run),
    { numRuns: options.numRuns, seed: options.seed, endOnFailure: true },
  );
  return sent;
}
