// npm run build: compiles to dist/ and links the built workspace packages there.
import { build } from './lib.mjs';

build();
