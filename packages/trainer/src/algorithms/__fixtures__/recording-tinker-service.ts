import {
  modelInputTokens,
  ServiceClient,
  type ModelInput,
  type SampleResponse,
  type SamplingClient,
  type SamplingTarget,
} from '@agl/tinker';

/** One `asample` a sampling client made: where it sampled from, the prompt ids and what came back. */
export interface Sampled {
  target: SamplingTarget;
  prompt: number[];
  response: SampleResponse;
}

/** A real {@link ServiceClient} whose sampling clients record every `sample` call into `sampled`. */
export function recordingTinkerService(url: string, apiKey: string, sampled: Sampled[]): ServiceClient {
  const service = new ServiceClient({ baseUrl: url, apiKey, heartbeatIntervalMs: 60_000 });
  const create = service.createSamplingClient.bind(service);
  service.createSamplingClient = async (target) => {
    const client: SamplingClient = await create(target);
    const sample = client.sample.bind(client);
    client.sample = async (prompt, options) => {
      const response = await sample(prompt, options);
      const ids = Array.isArray(prompt) ? [...(prompt as number[])] : modelInputTokens(prompt as ModelInput);
      sampled.push({ target, prompt: ids, response });
      return response;
    };
    return client;
  };
  return service;
}
