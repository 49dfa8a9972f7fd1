import { compileRedactPatterns, redactPatternsFromEnv, type RedactPattern } from './redact-patterns';
import { normalizeForScan, originalRange } from './normalize-for-scan';
import { BUILTIN_DETECTORS, BUILTIN_HINT, type SecretDetector } from './secret-detectors';

/** What replaces a secret. */
export const REDACTED = '[REDACTED]';

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /** More patterns (regular expressions; a named group `secret` limits the mask to it). */
  patterns?: readonly RedactPattern[];
  /** Read `AGL_REDACT_PATTERNS` from this environment too (e.g. `process.env`). Default: not read. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Replace the built-in detectors (default {@link BUILTIN_DETECTORS}). */
  detectors?: readonly SecretDetector[];
}

/** How many secrets a redactor masked, in all and per detector id. */
export interface RedactionCounts {
  total: number;
  byDetector: Record<string, number>;
}

interface Compiled {
  id: string;
  pattern: RegExp;
  validate: ((candidate: string) => boolean) | undefined;
  builtin: boolean;
}

interface Found {
  start: number;
  end: number;
  id: string;
}

/** Keys whose string value is a secret whatever it looks like (`password`, `x-api-key`, `authorization`, ...). */
const SECRET_KEY =
  /^[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|token|access[_-]?key|private[_-]?key|authorization|credentials?)$/i;

/** Characters on each side of the seam between two adjacent messages scanned joined (longer keys are cut anyway). */
const SEAM = 1024;

/** `gen_ai.prompt.3.content` → prefix `gen_ai.prompt`, index 3: adjacent messages are scanned joined too. */
const MESSAGE_CONTENT = /^(.+)\.(\d+)\.content$/u;

function compile(detector: SecretDetector, builtin: boolean): Compiled {
  const flags = [...new Set(`${detector.pattern.flags.replace(/[gyd]/gu, '')}gd`)].join('');
  return { id: detector.id, pattern: new RegExp(detector.pattern.source, flags), validate: detector.validate, builtin };
}

/**
 * The redaction engine every AGL path uses (client export, OTLP ingest, datasets, exports, fine-tuning uploads): it
 * finds secrets with the built-in detectors and the user's patterns in text normalised first (zero-width characters
 * removed, lookalike letters folded), and masks them with `[REDACTED]` in the original text, keeping key names and
 * `Bearer ` prefixes. It counts what it masked ({@link Redactor.counts}). Stateless apart from the counts.
 */
export class Redactor {
  readonly #detectors: Compiled[];
  readonly #hasUser: boolean;
  #counts: RedactionCounts = { total: 0, byDetector: {} };

  constructor(options: RedactorOptions = {}) {
    const user = [...(options.patterns ?? []), ...(options.env ? redactPatternsFromEnv(options.env) : [])];
    this.#detectors = [
      ...(options.detectors ?? BUILTIN_DETECTORS).map((d) => compile(d, true)),
      ...compileRedactPatterns(user, 'redact.patterns').map((d) => compile(d, false)),
    ];
    this.#hasUser = user.length > 0;
  }

  /** Secrets masked so far (a copy). */
  counts(): RedactionCounts {
    return { total: this.#counts.total, byDetector: { ...this.#counts.byDetector } };
  }

  /** `text` with every secret masked (the same string when there is none). */
  text(text: string): string {
    const found = this.#find(text);
    return found.length === 0 ? text : this.#mask(text, found);
  }

  /**
   * Each text with its secrets masked; adjacent texts (the messages of one conversation) are also scanned joined, so a
   * key split across two of them is masked in both.
   */
  texts(texts: readonly string[]): string[] {
    const ranges: Found[][] = texts.map((t) => this.#find(t));
    for (let i = 0; i + 1 < texts.length; i += 1) {
      // Only the seam is scanned again: the end of one message joined to the start of the next.
      const a = texts[i]!.slice(-SEAM);
      const b = texts[i + 1]!.slice(0, SEAM);
      if (a === '' || b === '') continue;
      const offset = texts[i]!.length - a.length;
      for (const found of this.#find(a + b)) {
        if (found.start >= a.length || found.end <= a.length) continue;
        ranges[i]!.push({ start: offset + found.start, end: offset + a.length, id: found.id });
        ranges[i + 1]!.push({ start: 0, end: found.end - a.length, id: found.id });
      }
    }
    return texts.map((t, i) => this.#mask(t, ranges[i]!));
  }

  /**
   * A JSON value with every string scanned, the whole value of a secret-named key (`password`, `api_key`, `token`,
   * `authorization`, ...) masked, and the `content` strings of an array of messages scanned as one conversation.
   * Returns the same object when nothing changed.
   */
  json<T>(value: T): T {
    return this.#json(value) as T;
  }

  /**
   * Span attributes (flattened OTel values): strings scanned, secret-named keys masked, and
   * `<prefix>.<i>.content` messages (`gen_ai.prompt.*`, `gen_ai.completion.*`) scanned as one conversation.
   * Returns the same object when nothing changed.
   */
  attributes<A extends Record<string, unknown>>(attributes: A): A {
    let out: Record<string, unknown> | null = null;
    const set = (key: string, value: unknown): void => {
      if (value === attributes[key]) return;
      out ??= { ...attributes };
      out[key] = value;
    };
    const conversations = new Map<string, Array<[number, string]>>();
    for (const key in attributes) {
      const value = attributes[key];
      const message = typeof value === 'string' ? MESSAGE_CONTENT.exec(key) : null;
      if (message) {
        const list = conversations.get(message[1]!) ?? [];
        list.push([Number(message[2]), key]);
        conversations.set(message[1]!, list);
      } else if (typeof value === 'string' && SECRET_KEY.test(key)) {
        set(key, this.#maskWhole(value));
      } else {
        set(key, this.#json(value));
      }
    }
    for (const list of conversations.values()) {
      list.sort((x, y) => x[0] - y[0]);
      const masked = this.texts(list.map(([, key]) => attributes[key] as string));
      list.forEach(([, key], i) => set(key, masked[i]));
    }
    return (out ?? attributes) as A;
  }

  /**
   * A span (any shape with `attributes`, `events[].attributes`, `links[].attributes`, `resource.attributes`,
   * `status.description`) with its secrets masked; the same object when nothing changed.
   */
  span<S extends object>(span: S): S {
    const s = span as Record<string, unknown>;
    let out: Record<string, unknown> | null = null;
    const set = (key: string, value: unknown): void => {
      if (value === s[key]) return;
      out ??= { ...s };
      out[key] = value;
    };
    if (isObject(s.attributes)) set('attributes', this.attributes(s.attributes));
    for (const list of ['events', 'links'] as const) {
      const items = s[list];
      if (!Array.isArray(items)) continue;
      const next = items.map((item: unknown) =>
        isObject(item) && isObject(item.attributes)
          ? replaceField(item, 'attributes', this.attributes(item.attributes))
          : item,
      );
      if (next.some((item, i) => item !== items[i])) set(list, next);
    }
    if (isObject(s.resource) && isObject(s.resource.attributes)) {
      set('resource', replaceField(s.resource, 'attributes', this.attributes(s.resource.attributes)));
    }
    if (isObject(s.status) && typeof s.status.description === 'string') {
      set('status', replaceField(s.status, 'description', this.text(s.status.description)));
    }
    return (out ?? span) as S;
  }

  #json(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) {
      const contents = value.every((v) => isObject(v) && typeof v.content === 'string');
      if (contents && value.length > 1) {
        const masked = this.texts(value.map((v: Record<string, unknown>) => v.content as string));
        const next = value.map((v: Record<string, unknown>, i) => {
          const rest = this.#json({ ...v, content: '' }) as Record<string, unknown>;
          return masked[i] === v.content && sameExceptContent(rest, v) ? v : { ...rest, content: masked[i] };
        });
        return next.some((v, i) => v !== value[i]) ? next : value;
      }
      const next = value.map((v) => this.#json(v));
      return next.some((v, i) => v !== value[i]) ? next : value;
    }
    if (!isObject(value)) return value;
    let out: Record<string, unknown> | null = null;
    for (const key of Object.keys(value)) {
      const item = value[key];
      const next = typeof item === 'string' && SECRET_KEY.test(key) ? this.#maskWhole(item) : this.#json(item);
      if (next === item) continue;
      out ??= { ...value };
      out[key] = next;
    }
    return out ?? value;
  }

  #maskWhole(value: string): string {
    if (value === '' || value === REDACTED) return value;
    this.#count('secret-key-name');
    return REDACTED;
  }

  /** Secrets in `text`, in original coordinates, unmerged. */
  #find(text: string): Found[] {
    if (text.length < 4) return [];
    const scan = normalizeForScan(text);
    const hinted = BUILTIN_HINT.test(scan.text);
    if (!hinted && !this.#hasUser) return [];
    const found: Found[] = [];
    for (const detector of this.#detectors) {
      if (detector.builtin && !hinted) continue;
      const pattern = detector.pattern;
      pattern.lastIndex = 0;
      for (let match = pattern.exec(scan.text); match; match = pattern.exec(scan.text)) {
        if (match[0] === '') {
          pattern.lastIndex += 1;
          continue;
        }
        const [start, end] = match.indices?.groups?.secret ?? match.indices![0]!;
        if (end <= start) continue;
        const candidate = scan.text.slice(start, end);
        if (candidate === REDACTED || (detector.validate && !detector.validate(candidate))) continue;
        const [from, to] = originalRange(scan, start, end);
        found.push({ start: from, end: to, id: detector.id });
      }
    }
    return found;
  }

  /** `text` with `ranges` (merged where they overlap) replaced by the mask; each merged range counted once. */
  #mask(text: string, ranges: Found[]): string {
    if (ranges.length === 0) return text;
    ranges.sort((a, b) => a.start - b.start || b.end - a.end);
    const merged: Found[] = [];
    for (const range of ranges) {
      const last = merged[merged.length - 1];
      if (last && range.start <= last.end) last.end = Math.max(last.end, range.end);
      else merged.push({ ...range });
    }
    let out = '';
    let at = 0;
    for (const range of merged) {
      out += text.slice(at, range.start) + REDACTED;
      at = range.end;
      this.#count(range.id);
    }
    return out + text.slice(at);
  }

  #count(id: string): void {
    this.#counts.total += 1;
    this.#counts.byDetector[id] = (this.#counts.byDetector[id] ?? 0) + 1;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function replaceField<T extends Record<string, unknown>>(item: T, key: string, value: unknown): T {
  return value === item[key] ? item : { ...item, [key]: value };
}

function sameExceptContent(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  for (const key of Object.keys(b)) if (key !== 'content' && a[key] !== b[key]) return false;
  return true;
}

/** A {@link Redactor}: the built-in detectors plus `options.patterns` (and `AGL_REDACT_PATTERNS` of `options.env`). */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  return new Redactor(options);
}

/** One-line summary of counts: `3 secrets masked (jwt 2, aws-access-key-id 1)`, or `no secrets found`. */
export function describeRedactions(counts: RedactionCounts): string {
  if (counts.total === 0) return 'no secrets found';
  const parts = Object.entries(counts.byDetector)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([id, n]) => `${id} ${n}`);
  return `${counts.total} secret${counts.total === 1 ? '' : 's'} masked (${parts.join(', ')})`;
}
