export { GRPO, type GrpoOptions, type GrpoRunOptions, type GrpoRoundRecord, type GrpoBackend } from './grpo';
export { TinyGrpoBackend, toPolicySample, type TinyGrpoBackendOptions } from './tiny-grpo-backend';
