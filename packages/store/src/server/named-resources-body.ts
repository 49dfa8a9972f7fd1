import { NamedResources, Resource, type NamedResourcesInput } from '@agl/core/schema';
import { ValidationError } from '@agl/core/errors';
import { isForbiddenKey } from '@agl/core/guards';
import { bodyObject } from './request-schemas';
import { parseWireAt } from './route-context';
import { forbiddenResourceName } from '../engine/input';

/**
 * A NamedResources body (wire spelling) as `POST /v1/agl/resources` and `agl resources publish` take it: each value is
 * validated as a resource; error paths keep the resource name verbatim; a name such as `__proto__` is a 422 that names
 * it. With `requireOne`, an empty object is a 422 too (`agl resources publish`: it would publish an empty version; the
 * REST route takes `{}` as AGL 0.3 does).
 */
export function parseNamedResourcesBody(raw: unknown, options: { requireOne?: boolean } = {}): NamedResourcesInput {
  const body = bodyObject(raw, 'resources', false);
  const names = Object.keys(body);
  if (names.length === 0 && options.requireOne === true) {
    throw new ValidationError(
      'Invalid resources: (body): no resources; send at least one, e.g. {"main_prompt": {"resource_type": "prompt_template", "template": "..."}}.',
      [{ path: '', message: 'no resources' }],
      { status: 422 },
    );
  }
  const out: NamedResourcesInput = {};
  for (const name of names) {
    if (isForbiddenKey(name)) throw forbiddenResourceName(name);
    out[name] = parseWireAt(Resource, 'resource', body[name], name, 'resources');
  }
  const check = NamedResources.safeParse(out);
  if (!check.success) throw new ValidationError(`Invalid resources: ${check.error.message}`, [], { status: 422 });
  return out;
}
