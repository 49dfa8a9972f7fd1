import { AglError } from '@agl/core/errors';

/** A chat template or tokenizer that cannot render, load or parse what it was given. */
export class ChatTemplateError extends AglError {
  static override readonly errorName = 'AGL_ChatTemplateError';
}
