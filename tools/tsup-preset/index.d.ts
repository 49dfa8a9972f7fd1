import type { Options } from 'tsup';
export declare function aglTsupConfig(options: {
  entry: Record<string, string> | string[];
  external?: string[];
  banner?: Record<string, string>;
}): Options | Options[] | ((overrideOptions: Options) => Options | Options[]);
