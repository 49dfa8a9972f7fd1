export { AglTraceProcessor, type AglTraceProcessorOptions } from './agl-trace-processor';
export { addAglTraceProcessor, type AddAglTraceProcessorOptions } from './install';
