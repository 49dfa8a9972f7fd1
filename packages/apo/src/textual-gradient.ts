import type { ChatClient } from './chat-client';
import {
  cleanModelPrompt,
  formatExperiments,
  loadPromptFile,
  MERGE_PROMPT,
  REFLECT_PROMPT,
  renderPromptFile,
  type Experiment,
} from './prompt-files';
import type { SeededRandom } from './seeded-random';

/** Options of {@link TextualGradient}. */
export interface TextualGradientOptions {
  client: ChatClient;
  gradientModel: string;
  applyEditModel: string;
  temperature: number;
  gradientBatchSize: number;
}

/** Critique ("textual gradient"), edit, per-task reflection and merge calls to the critique / edit models. */
export class TextualGradient {
  readonly #o: TextualGradientOptions;

  constructor(options: TextualGradientOptions) {
    this.#o = options;
  }

  /** The model's answer to one user message, at the configured temperature. */
  #ask(model: string, text: string): Promise<string> {
    return this.#o.client.complete({
      model,
      messages: [{ role: 'user', content: text }],
      temperature: this.#o.temperature,
    });
  }

  /** A critique of `template` from a sample of `experiments`, with the critique template `promptFile`. */
  async critique(o: {
    template: string;
    experiments: readonly Experiment[];
    promptFile: string;
    random: SeededRandom;
  }): Promise<string> {
    const sample = o.random.sample(o.experiments, this.#o.gradientBatchSize);
    const text = renderPromptFile(loadPromptFile(o.promptFile).text, {
      prompt_template: o.template,
      experiments: formatExperiments(sample),
    });
    return (await this.#ask(this.#o.gradientModel, text)).trim();
  }

  /** The edited template, or null when there is no critique or the model returned nothing. */
  async applyEdit(o: { template: string; critique: string; promptFile: string }): Promise<string | null> {
    if (o.critique.trim() === '') return null;
    const text = renderPromptFile(loadPromptFile(o.promptFile).text, {
      prompt_template: o.template,
      critique: o.critique,
    });
    const edited = cleanModelPrompt(await this.#ask(this.#o.applyEditModel, text));
    return edited === '' ? null : edited;
  }

  /** One reflection per failed experiment (GEPA-style), in order. */
  async reflect(o: { template: string; failures: readonly Experiment[] }): Promise<string[]> {
    const file = loadPromptFile(REFLECT_PROMPT).text;
    return Promise.all(
      o.failures.map(async (failure) => {
        const text = renderPromptFile(file, { prompt_template: o.template, experiments: formatExperiments([failure]) });
        return (await this.#ask(this.#o.gradientModel, text)).trim();
      }),
    );
  }

  /** A merge of two complementary templates, or null on an empty answer. */
  async merge(o: { a: string; b: string }): Promise<string | null> {
    const text = renderPromptFile(loadPromptFile(MERGE_PROMPT).text, { prompt_a: o.a, prompt_b: o.b });
    const merged = cleanModelPrompt(await this.#ask(this.#o.applyEditModel, text));
    return merged === '' ? null : merged;
  }
}
