export {
  fineTuneOpenAi,
  type FineTuneOpenAiOptions,
  type FineTuneOpenAiResult,
  type FineTuningClient,
} from './fine-tune-openai';
export { OpenAiFineTuningBackend, type OpenAiFineTuningBackendOptions } from './openai-fine-tuning-backend';
export { buildFineTuningData, type FineTuningData, type FineTuningSelection } from './fine-tuning-data';
export {
  validateFineTuningRecords,
  estimateExampleTokens,
  OPENAI_FINE_TUNING_LIMITS,
  type FineTuningLimits,
  type FineTuningMethod,
} from './validate-fine-tuning-records';
export {
  findRunningJobRecord,
  updateJobRecordProgress,
  isFineTuningJobRecord,
  FINE_TUNING_JOB_KIND,
  type FineTuningFingerprint,
  type FineTuningJobRecord,
} from './job-record';
export { publishTunedModel, tunedResources, type TunedModelTarget } from './publish-tuned-model';
export {
  fineTuneTinker,
  sftDatum,
  sftDatums,
  type FineTuneTinkerOptions,
  type FineTuneTinkerResult,
} from './fine-tune-tinker';
