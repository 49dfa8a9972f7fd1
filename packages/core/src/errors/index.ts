export { AglError, hasErrorName, type AglErrorOptions } from './agl-error';
export { NotFoundError } from './not-found-error';
export { ValidationError, type ValidationIssue } from './validation-error';
export { InvalidTransitionError } from './invalid-transition-error';
export { StoreClosedError } from './store-closed-error';
export { UserError } from './user-error';
export { HttpError } from './http-error';
