/** OTLP/HTTP trace ingest: decoding (protobuf and JSON) and conversion to AGL spans. */
export {
  decodeTraceRequestProtobuf,
  decodeTraceRequestJson,
  encodeTraceResponse,
  decodeTraceResponse,
  encodeRpcStatus,
  decodeRpcStatus,
  type PlainTraceRequest,
} from './otlp-proto';
export { convertTraceRequest, type ConversionResult, type ConvertedSpan, type UnownedSpan } from './otlp-to-spans';
export { convertTraceRequestProtobuf } from './otlp-proto-reader';
export { ingestOtlpSpans, type OtlpIngestResult } from './ingest-otlp';
