/** Types of esbuild.config.mjs, for the tests that build the plugin. */
export function build(outfile?: string): Promise<void>;
