export * from './schema/index';
export * from './errors/index';
export * from './store/index';
export * from './concurrency-limit';
export * from './seeded-random';
