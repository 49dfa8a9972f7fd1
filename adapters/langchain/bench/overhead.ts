// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/langchain`.
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { MemoryStore } from '@agl/store';
import { runOverheadBench } from '@agl/testing';
import { AglCallbackHandler } from '../src/index';

// The in-process fake model.
const model = new FakeListChatModel({ responses: ['It is sunny.'] });
const messages = [new SystemMessage('You are a weather agent.'), new HumanMessage('Weather in Paris?')];
const handler = new AglCallbackHandler();

await runOverheadBench({
  adapter: '@agl/langchain',
  store: new MemoryStore(),
  callFor: (traced) => {
    const callbacks = traced ? [handler] : [];
    return () => model.invoke(messages, { callbacks });
  },
});
