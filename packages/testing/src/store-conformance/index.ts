export { describeStoreConformance } from './describe-store-conformance';
export type { StoreFactory, StoreFactoryContext, StoreUnderTest, StoreConformanceOptions } from './types';
