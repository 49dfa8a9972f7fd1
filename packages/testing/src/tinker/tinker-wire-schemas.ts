/**
 * The request bodies of the Tinker API as SDK 0.25.0's request models define them (`tinker/types/*_request.py`,
 * pydantic with `extra="forbid"`), checked field by field. A violation is answered as FastAPI does: HTTP 422 with
 * `{"detail": [{"loc": ["body", …], "msg", "type"}]}`.
 */

/** One field's rule. */
type Rule =
  | 'string'
  | 'int'
  | 'number'
  | 'bool'
  | 'object'
  | 'string[]'
  | 'int[]'
  | 'stop'
  | { literal: string }
  | { schema: Schema }
  | { arrayOf: Schema };

interface Field {
  rule: Rule;
  required?: boolean;
  nullable?: boolean;
}

/** A request model: its fields (anything else is refused). */
export type Schema = Record<string, Field>;

const req = (rule: Rule): Field => ({ rule, required: true });
const opt = (rule: Rule): Field => ({ rule, nullable: true });

const CHUNK: Schema = { tokens: req('int[]'), type: opt({ literal: 'encoded_text' }) };
const MODEL_INPUT: Schema = { chunks: req({ arrayOf: CHUNK }) };
const TENSOR: Schema = {
  data: req('object'),
  dtype: req('string'),
  shape: opt('int[]'),
  sparse_crow_indices: opt('int[]'),
  sparse_col_indices: opt('int[]'),
};
const DATUM: Schema = { model_input: req({ schema: MODEL_INPUT }), loss_fn_inputs: opt('object') };
const FWD_INPUT: Schema = { data: req({ arrayOf: DATUM }), loss_fn: req('string'), loss_fn_config: opt('object') };

/** The request models by route. */
export const TINKER_REQUEST_SCHEMAS: Record<string, Schema> = {
  '/api/v1/client/config': { sdk_version: req('string') },
  '/api/v1/client/dynamic_config': { sdk_version: req('string') },
  '/api/v1/create_session': {
    tags: req('string[]'),
    user_metadata: { rule: 'object', required: true, nullable: true },
    sdk_version: req('string'),
    project_id: opt('string'),
    type: opt({ literal: 'create_session' }),
  },
  '/api/v1/session_heartbeat': { session_id: req('string'), type: opt({ literal: 'session_heartbeat' }) },
  '/api/v1/create_model': {
    session_id: req('string'),
    model_seq_id: req('int'),
    base_model: req('string'),
    user_metadata: opt('object'),
    lora_config: opt({
      schema: {
        rank: req('int'),
        seed: opt('int'),
        train_unembed: opt('bool'),
        train_mlp: opt('bool'),
        train_attn: opt('bool'),
      },
    }),
    type: opt({ literal: 'create_model' }),
  },
  '/api/v1/get_info': { model_id: req('string'), type: opt({ literal: 'get_info' }) },
  '/api/v1/forward_backward': {
    forward_backward_input: req({ schema: FWD_INPUT }),
    model_id: req('string'),
    seq_id: opt('int'),
  },
  '/api/v1/forward': { forward_input: req({ schema: FWD_INPUT }), model_id: req('string'), seq_id: opt('int') },
  '/api/v1/optim_step': {
    adam_params: req({
      schema: {
        learning_rate: opt('number'),
        beta1: opt('number'),
        beta2: opt('number'),
        eps: opt('number'),
        weight_decay: opt('number'),
        grad_clip_norm: opt('number'),
      },
    }),
    model_id: req('string'),
    seq_id: opt('int'),
    type: opt({ literal: 'optim_step' }),
  },
  '/api/v1/save_weights': {
    model_id: req('string'),
    path: opt('string'),
    seq_id: opt('int'),
    ttl_seconds: opt('int'),
    overwrite: opt('bool'),
    type: opt({ literal: 'save_weights' }),
  },
  '/api/v1/save_weights_for_sampler': {
    model_id: req('string'),
    path: opt('string'),
    sampling_session_seq_id: opt('int'),
    seq_id: opt('int'),
    ttl_seconds: opt('int'),
    type: opt({ literal: 'save_weights_for_sampler' }),
  },
  '/api/v1/load_weights': {
    model_id: opt('string'),
    seq_id: opt('int'),
    session_id: opt('string'),
    model_seq_id: opt('int'),
    base_model: opt('string'),
    user_metadata: opt('object'),
    path: req('string'),
    optimizer: req('bool'),
    weights_access_token: opt('string'),
    type: opt({ literal: 'load_weights' }),
  },
  '/api/v1/unload_model': { model_id: req('string'), type: opt({ literal: 'unload_model' }) },
  '/api/v1/create_sampling_session': {
    session_id: req('string'),
    sampling_session_seq_id: req('int'),
    base_model: opt('string'),
    model_path: opt('string'),
    type: opt({ literal: 'create_sampling_session' }),
  },
  '/api/v1/asample': {
    num_samples: opt('int'),
    prompt: req({ schema: MODEL_INPUT }),
    sampling_params: req({
      schema: {
        max_tokens: opt('int'),
        seed: opt('int'),
        stop: opt('stop'),
        temperature: opt('number'),
        top_k: opt('int'),
        top_p: opt('number'),
      },
    }),
    base_model: opt('string'),
    model_path: opt('string'),
    sampling_session_id: opt('string'),
    seq_id: opt('int'),
    prompt_logprobs: opt('bool'),
    topk_prompt_logprobs: opt('int'),
    type: opt({ literal: 'sample' }),
  },
  '/api/v1/retrieve_future': { request_id: req('string'), allow_metadata_only: opt('bool') },
  '/api/v1/weights_info': { tinker_path: req('string') },
};

/** A FastAPI validation issue. */
export interface WireIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

function checkRule(value: unknown, rule: Rule, loc: (string | number)[], issues: WireIssue[]): void {
  const bad = (msg: string, type: string) => issues.push({ loc, msg, type });
  if (typeof rule === 'object') {
    if ('literal' in rule) {
      if (value !== rule.literal) bad(`Input should be '${rule.literal}'`, 'literal_error');
    } else if ('schema' in rule) {
      checkSchema(value, rule.schema, loc, issues);
    } else if (!Array.isArray(value)) {
      bad('Input should be a valid list', 'list_type');
    } else {
      value.forEach((item, i) => checkSchema(item, rule.arrayOf, [...loc, i], issues));
    }
    return;
  }
  const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
  switch (rule) {
    case 'string':
      if (typeof value !== 'string') bad('Input should be a valid string', 'string_type');
      break;
    case 'int':
      if (!isInt(value)) bad('Input should be a valid integer', 'int_type');
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) bad('Input should be a valid number', 'float_type');
      break;
    case 'bool':
      if (typeof value !== 'boolean') bad('Input should be a valid boolean', 'bool_type');
      break;
    case 'object':
      if (typeof value !== 'object' || value === null) bad('Input should be a valid dictionary', 'dict_type');
      break;
    case 'string[]':
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
        bad('Input should be a valid list of strings', 'list_type');
      }
      break;
    case 'int[]':
      if (!Array.isArray(value) || value.some((v) => !isInt(v)))
        bad('Input should be a valid list of integers', 'list_type');
      break;
    case 'stop':
      if (
        typeof value !== 'string' &&
        !(Array.isArray(value) && (value.every((v) => typeof v === 'string') || value.every(isInt)))
      ) {
        bad('Input should be a string, a list of strings or a list of token ids', 'union_type');
      }
      break;
  }
}

/** Checks `body` against a schema; returns every issue, FastAPI-style. */
export function checkSchema(
  body: unknown,
  schema: Schema,
  loc: (string | number)[] = ['body'],
  issues: WireIssue[] = [],
) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    issues.push({ loc, msg: 'Input should be a valid dictionary or object', type: 'model_type' });
    return issues;
  }
  const record = body as Record<string, unknown>;
  for (const [name, field] of Object.entries(schema)) {
    const value = record[name];
    if (value === undefined) {
      if (field.required) issues.push({ loc: [...loc, name], msg: 'Field required', type: 'missing' });
      continue;
    }
    if (value === null && field.nullable) continue;
    checkRule(value, field.rule, [...loc, name], issues);
  }
  for (const name of Object.keys(record)) {
    if (!(name in schema))
      issues.push({ loc: [...loc, name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  }
  return issues;
}

/** TENSOR's schema (loss inputs are a map of these). */
export const TENSOR_SCHEMA = TENSOR;
