/** GRPO itself lives in `@agl/trainer` beside the other algorithms; re-exported here so existing imports keep working. */
export { GRPO, type GrpoOptions, type GrpoRunOptions, type GrpoRoundRecord, type GrpoBackend } from '@agl/trainer';
