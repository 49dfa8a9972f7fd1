export {
  startFineTuningTestServer,
  type FineTuningTestServer,
  type FineTuningTestServerOptions,
} from './fine-tuning-test-server';
export {
  validateTrainingFile,
  MIN_TRAINING_EXAMPLES,
  type TestFileObject,
  type TestFineTuningJob,
  type TestJobError,
  type TestJobEvent,
} from './fine-tuning-jobs';
