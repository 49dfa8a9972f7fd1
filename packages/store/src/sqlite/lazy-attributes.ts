import type { Attributes } from '@agl/core/schema';

const TEXT = Symbol('agl.attributesJson');
const VALUE = Symbol('agl.attributes');

interface LazyHolder {
  [TEXT]: string;
  [VALUE]: Attributes | undefined;
}

// One getter and one setter for every span, so V8 shares the objects' hidden class.
function getAttributes(this: LazyHolder): Attributes {
  let value = this[VALUE];
  if (value === undefined) {
    value = JSON.parse(this[TEXT]) as Attributes;
    this[VALUE] = value;
  }
  return value;
}

function setAttributes(this: LazyHolder, value: Attributes): void {
  this[VALUE] = value;
}

/**
 * Gives a span read from the store its `attributes` from their stored JSON text, parsed on first access. Reading spans
 * back is the SQLite store's hottest read (a trainer or a check often looks at a few attributes of each span), and
 * `JSON.parse` of a large attribute map with never-seen keys costs several times the rest of the span. The property is
 * an enumerable own accessor, so `JSON.stringify`, spreading, `structuredClone` and equality checks see a plain
 * `attributes` object; assigning to it replaces the value, and the parsed object is kept, so edits to it stick.
 */
export function withLazyAttributes<T extends object>(span: T, attributesJson: string): T & { attributes: Attributes } {
  Object.defineProperty(span, TEXT, { value: attributesJson, writable: true });
  Object.defineProperty(span, VALUE, { value: undefined, writable: true });
  Object.defineProperty(span, 'attributes', {
    get: getAttributes,
    set: setAttributes,
    enumerable: true,
    configurable: true,
  });
  return span as T & { attributes: Attributes };
}
