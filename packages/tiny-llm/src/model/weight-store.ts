import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError, UserError } from '@agl/core/errors';
import { paramShapes, validateConfig } from './tiny-config';
import type { TinyWeights } from './tiny-weights';

const MAGIC = 'AGLTINY1';
const EXT = '.agltiny';
const VERSION_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

interface FileHeader {
  version: string;
  config: TinyWeights['config'];
  tokenizer: TinyWeights['tokenizer'];
  params: Array<{ name: string; shape: number[]; offset: number; length: number }>;
  meta: Record<string, unknown>;
}

/** Throws a UserError unless `version` is a usable version name. */
export function checkVersion(version: string): void {
  if (!VERSION_RE.test(version)) {
    throw new UserError(
      `Weights version "${version}" is not valid; use 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. "v3").`,
    );
  }
}

/** Serialises weights to one self-describing binary file body. */
export function encodeWeights(weights: TinyWeights, version: string, meta: Record<string, unknown> = {}): Buffer {
  validateConfig(weights.config);
  let offset = 0;
  const params = paramShapes(weights.config).map((p) => {
    const data = weights.params[p.name];
    const length = p.shape.reduce((a, b) => a * b, 1);
    if (!data || data.length !== length) {
      throw new UserError(
        `Parameter "${p.name}" has ${data?.length ?? 0} values; its shape [${p.shape}] needs ${length}.`,
      );
    }
    const entry = { name: p.name, shape: p.shape, offset, length };
    offset += length;
    return entry;
  });
  const header: FileHeader = { version, config: weights.config, tokenizer: weights.tokenizer, params, meta };
  const headerBuf = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (4 - ((12 + headerBuf.length) % 4)) % 4;
  const out = Buffer.alloc(12 + headerBuf.length + pad + offset * 4);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(headerBuf.length + pad, 8);
  headerBuf.copy(out, 12);
  out.fill(0x20, 12 + headerBuf.length, 12 + headerBuf.length + pad);
  const dataStart = 12 + headerBuf.length + pad;
  for (const p of params) {
    const src = weights.params[p.name]!;
    Buffer.from(src.buffer, src.byteOffset, src.byteLength).copy(out, dataStart + p.offset * 4);
  }
  return out;
}

/** Parses a weights file body written by {@link encodeWeights}. */
export function decodeWeights(
  buf: Buffer,
  source = 'weights file',
): { weights: TinyWeights; version: string; meta: Record<string, unknown> } {
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) {
    throw new UserError(`${source} is not an AGL tiny-llm weights file (bad magic); write it with WeightStore.save().`);
  }
  const headerLen = buf.readUInt32LE(8);
  const header = JSON.parse(buf.toString('utf8', 12, 12 + headerLen)) as FileHeader;
  const dataStart = 12 + headerLen;
  const params: Record<string, Float32Array> = {};
  for (const p of header.params) {
    const arr = new Float32Array(p.length);
    Buffer.from(arr.buffer).set(buf.subarray(dataStart + p.offset * 4, dataStart + (p.offset + p.length) * 4));
    params[p.name] = arr;
  }
  return {
    weights: { config: header.config, tokenizer: header.tokenizer, params },
    version: header.version,
    meta: header.meta,
  };
}

/**
 * A directory of versioned weight files (`<dir>/<version>.agltiny`). Saving is atomic (write, then rename), so a
 * reader never sees a half-written version, and every older version stays loadable.
 */
export class WeightStore {
  readonly dir: string;

  constructor(options: { dir: string }) {
    this.dir = options.dir;
  }

  /** The file path of a version. */
  pathOf(version: string): string {
    checkVersion(version);
    return join(this.dir, `${version}${EXT}`);
  }

  /** Writes `weights` as `version`. Refuses to overwrite an existing version unless `overwrite`. */
  async save(options: {
    weights: TinyWeights;
    version: string;
    meta?: Record<string, unknown>;
    overwrite?: boolean;
  }): Promise<string> {
    const path = this.pathOf(options.version);
    await mkdir(this.dir, { recursive: true });
    if (!options.overwrite && (await this.list()).includes(options.version)) {
      throw new UserError(
        `Weights version "${options.version}" already exists in ${this.dir}; pick a new version name (versions are immutable).`,
      );
    }
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, encodeWeights(options.weights, options.version, options.meta));
    await rename(tmp, path);
    return path;
  }

  /** Reads one version. */
  async load(version: string): Promise<{ weights: TinyWeights; version: string; meta: Record<string, unknown> }> {
    const path = this.pathOf(version);
    let buf: Buffer;
    try {
      buf = await readFile(path);
    } catch {
      const known = await this.list();
      throw new NotFoundError(
        'weights',
        version,
        `Weights version "${version}" not found in ${this.dir}; known versions: ${known.length ? known.join(', ') : '(none)'}.`,
      );
    }
    return decodeWeights(buf, path);
  }

  /** Every saved version, in natural order (v2 before v10). */
  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith(EXT))
      .map((n) => n.slice(0, -EXT.length))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  }

  /** The last version in natural order, or undefined when the directory has none. */
  async latest(): Promise<string | undefined> {
    return (await this.list()).at(-1);
  }
}
