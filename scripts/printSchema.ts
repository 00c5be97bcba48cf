// Prints the SDL built from the Pothos schema (sorted). Used by scripts/codegen.mjs.
import { printSdl } from '../api/src/graphql/index.js';

process.stdout.write(printSdl());
