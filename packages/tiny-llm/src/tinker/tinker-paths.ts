import { badField } from './tinker-wire';

/** A parsed `tinker://<model_id>/<weights|sampler_weights>/<name>` path. */
export interface TinkerPath {
  modelId: string;
  kind: 'weights' | 'sampler_weights';
  name: string;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Parses a tinker:// checkpoint path (400 naming `field` when it is not one). */
export function parseTinkerPath(path: string, field = 'path'): TinkerPath {
  const m = /^tinker:\/\/(.+)\/(weights|sampler_weights)\/([^/]+)$/.exec(path);
  if (!m)
    throw badField(
      field,
      `"${path}" is not a tinker:// checkpoint path; expected tinker://<model_id>/weights/<name> or …/sampler_weights/<name>.`,
    );
  return { modelId: m[1]!, kind: m[2] as TinkerPath['kind'], name: m[3]! };
}

/** 400 naming `field` unless `name` is a usable checkpoint name. */
export function checkName(name: string, field: string): void {
  if (!NAME_RE.test(name))
    throw badField(
      field,
      `"${name}" is not a usable checkpoint name; use 1-64 letters, digits, ".", "_" or "-" (e.g. "000040").`,
    );
}

/** A model id as a directory name (ids hold ':'). */
export function encodeId(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
