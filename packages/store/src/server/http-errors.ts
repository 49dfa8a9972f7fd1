import {
  AglError,
  ConflictError,
  HttpError,
  InvalidTransitionError,
  NotFoundError,
  StoreClosedError,
  UserError,
  ValidationError,
  type ValidationIssue,
} from '@agl/core/errors';

/**
 * The JSON body of every error answer (DESIGN.md Contract 5). `detail` names the snake_case wire field and the fix;
 * `error_type` is the stable name of the error. Extra keys let {@link StoreClient} rebuild the typed error.
 */
export interface ErrorBody {
  detail: string;
  error_type: string;
  issues?: ValidationIssue[];
  entity?: string;
  id?: string;
  from?: string;
  to?: string;
  field?: string;
}

/** Stable `error_type` values for failures that are not thrown by the store. */
export const HTTP_ERROR_TYPES = {
  auth: 'AGL_AuthenticationError',
  hostNotAllowed: 'AGL_HostNotAllowedError',
  badJson: 'AGL_ValidationError',
  tooLarge: 'AGL_PayloadTooLargeError',
  mediaType: 'AGL_UnsupportedMediaTypeError',
  routeNotFound: 'AGL_RouteNotFoundError',
  notImplemented: 'AGL_NotImplementedError',
  timeout: 'AGL_TimeoutError',
  internal: 'AGL_InternalError',
  closing: 'AGL_ServerClosingError',
} as const;

/** An error answer: a status and its body. */
export interface ErrorReply {
  status: number;
  body: ErrorBody;
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
}

function fastifyError(error: unknown): FastifyLikeError | null {
  if (typeof error !== 'object' || error === null) return null;
  const e = error as FastifyLikeError;
  return typeof e.code === 'string' && e.code.startsWith('FST_') ? e : null;
}

/**
 * The one place where errors become HTTP statuses: AglError subclasses and fastify's own request errors map to 4xx;
 * everything else is a real fault (500).
 */
export function toErrorReply(error: unknown, options: { bodyLimit: number }): ErrorReply {
  if (ValidationError.isInstance(error)) {
    return { status: error.status, body: { detail: error.message, error_type: error.name, issues: error.issues } };
  }
  if (NotFoundError.isInstance(error)) {
    return { status: 404, body: { detail: error.message, error_type: error.name, entity: error.entity, id: error.id } };
  }
  if (InvalidTransitionError.isInstance(error)) {
    return {
      status: 409,
      body: { detail: error.message, error_type: error.name, entity: error.entity, from: error.from, to: error.to },
    };
  }
  if (ConflictError.isInstance(error)) {
    return { status: 409, body: { detail: error.message, error_type: error.name, field: error.field } };
  }
  if (StoreClosedError.isInstance(error)) {
    return { status: 503, body: { detail: error.message, error_type: error.name } };
  }
  if (UserError.isInstance(error)) {
    return { status: 400, body: { detail: error.message, error_type: error.name } };
  }
  if (HttpError.isInstance(error)) {
    return { status: error.status, body: { detail: error.detail, error_type: error.errorType ?? error.name } };
  }
  const fst = fastifyError(error);
  if (fst !== null) {
    switch (fst.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return {
          status: 413,
          body: {
            detail:
              `Request body is larger than this route's limit of ${options.bodyLimit} bytes. ` +
              'Send fewer items per request (split the batch); the span, OTLP and enqueue routes take up to --body-limit.',
            error_type: HTTP_ERROR_TYPES.tooLarge,
          },
        };
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return {
          status: 415,
          body: {
            detail: `${fst.message}. Send the body as JSON with the header 'Content-Type: application/json'.`,
            error_type: HTTP_ERROR_TYPES.mediaType,
          },
        };
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return { status: 400, body: { detail: `${fst.message}.`, error_type: HTTP_ERROR_TYPES.badJson } };
      default:
        if (typeof fst.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500) {
          return {
            status: fst.statusCode,
            body: { detail: fst.message ?? fst.code ?? 'Bad request', error_type: fst.code ?? 'FST_ERROR' },
          };
        }
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  const name = AglError.isInstance(error) ? error.name : HTTP_ERROR_TYPES.internal;
  return {
    status: 500,
    body: {
      detail: `Internal server error: ${message}. This is a server fault; see the server log.`,
      error_type: name,
    },
  };
}

/** A 400/422 {@link ValidationError} for one field, in wire spelling. */
export function fieldError(path: string, message: string, status: 400 | 422 = 422): ValidationError {
  return new ValidationError(`${path}: ${message}`, [{ path, message }], { status });
}
