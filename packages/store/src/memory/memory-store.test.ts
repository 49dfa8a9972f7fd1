import { describeStoreConformance } from '@agl/testing';
import { MemoryStore } from '../index';

describeStoreConformance('MemoryStore', ({ clock, scanDebounceSeconds }) => ({
  store: new MemoryStore({ clock, scanDebounceSeconds }),
}));
