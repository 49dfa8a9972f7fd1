import { parquetWriteBuffer, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { VERL_COLUMNS, type VerlRow } from './verl-rows';

type Kind =
  | { kind: 'string'; nullable: boolean }
  | { kind: 'double' }
  | { kind: 'list'; element: 'INT64' | 'INT32' | 'DOUBLE'; nullable: boolean };

const KINDS: Record<(typeof VERL_COLUMNS)[number], Kind> = {
  data_id: { kind: 'string', nullable: false },
  uid: { kind: 'string', nullable: false },
  rollout_id: { kind: 'string', nullable: false },
  attempt_id: { kind: 'string', nullable: false },
  mode: { kind: 'string', nullable: true },
  agent_name: { kind: 'string', nullable: true },
  turn_indices: { kind: 'list', element: 'INT32', nullable: false },
  prompts: { kind: 'list', element: 'INT64', nullable: false },
  responses: { kind: 'list', element: 'INT64', nullable: false },
  response_mask: { kind: 'list', element: 'INT32', nullable: false },
  input_ids: { kind: 'list', element: 'INT64', nullable: false },
  attention_mask: { kind: 'list', element: 'INT32', nullable: false },
  position_ids: { kind: 'list', element: 'INT64', nullable: false },
  token_level_scores: { kind: 'list', element: 'DOUBLE', nullable: false },
  advantages: { kind: 'list', element: 'DOUBLE', nullable: false },
  rollout_log_probs: { kind: 'list', element: 'DOUBLE', nullable: true },
  reward: { kind: 'double' },
  advantage: { kind: 'double' },
};

function schemaOf(name: string, kind: Kind): SchemaElement[] {
  if (kind.kind === 'string') {
    return [
      { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: kind.nullable ? 'OPTIONAL' : 'REQUIRED' },
    ];
  }
  if (kind.kind === 'double') return [{ name, type: 'DOUBLE', repetition_type: 'REQUIRED' }];
  return [
    { name, repetition_type: kind.nullable ? 'OPTIONAL' : 'REQUIRED', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', type: kind.element, repetition_type: 'REQUIRED' },
  ];
}

/**
 * Encodes verl rows as one Parquet file (hyparquet-writer, Snappy), columns in {@link VERL_COLUMNS} order: strings as
 * UTF8, token ids as `list<int64>`, masks as `list<int32>`, scores/advantages/logprobs as `list<double>` (standard
 * 3-level LIST, as pyarrow writes and reads it), reward and advantage as `double`.
 */
export function verlRowsToParquet(rows: readonly VerlRow[]): ArrayBuffer {
  const schema: SchemaElement[] = [{ name: 'root', num_children: VERL_COLUMNS.length }];
  const columnData: ColumnSource[] = [];
  for (const name of VERL_COLUMNS) {
    const kind = KINDS[name];
    schema.push(...schemaOf(name, kind));
    const int64 = kind.kind === 'list' && kind.element === 'INT64';
    columnData.push({
      name,
      data: rows.map((row) => {
        const value = row[name];
        return int64 && Array.isArray(value) ? value.map((v: number) => BigInt(v)) : value;
      }),
    });
  }
  // Column statistics (min/max) say nothing useful about token lists; skip them.
  return parquetWriteBuffer({ columnData, schema, statistics: false, createdBy: 'agl export verl' });
}
